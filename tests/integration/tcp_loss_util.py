# SPDX-License-Identifier: BSD-3-Clause
"""Packet loss between the appliance and its client, and timed curl
transfers.

The client sits in a namespace of its own (Appliance(client_ns=True)),
bridged to the tap; an nftables bridge table in the appliance's namespace
drops a random share of the IPv4 frames (or of the IPv6 TCP segments)
forwarded from the appliance (iif ewyk0: 'in', towards the client's
kernel) and/or to it (oif ewyk0: 'out'). Forwarded frames are really lost:
neither side learns of it but by TCP. ARP and neighbour discovery are never
dropped, so loss never hides the appliance.
"""
import hashlib
import os
import shutil
import tempfile
import time

from ewyk_harness import IFACE, Appliance

LOSS_TABLE = "ewyk_loss"


def set_loss(appliance, direction, percent, family=4):
    """direction: 'in' (to the kernel), 'out' (from the kernel) or 'both';
    family 4 (IPv4 frames) or 6 (IPv6 TCP segments)."""
    clear_loss(appliance)
    if percent == 0:
        return
    assert appliance.client != appliance.name, "loss needs Appliance(client_ns=True)"
    what = "ether type ip" if family == 4 else "ether type ip6 ip6 nexthdr tcp"
    rules = []
    if direction in ("in", "both"):
        rules.append(f'iifname "{IFACE}" {what} numgen random mod 100 < {percent} '
                     "counter drop")
    if direction in ("out", "both"):
        rules.append(f'oifname "{IFACE}" {what} numgen random mod 100 < {percent} '
                     "counter drop")
    script = (f"table bridge {LOSS_TABLE} {{\n chain lossy {{ type filter hook forward "
              "priority 0; policy accept;\n  " + "\n  ".join(rules) + "\n }\n}\n")
    appliance.in_appliance_ns(["nft", "-f", "-"], input=script)


def clear_loss(appliance):
    appliance.in_appliance_ns(["nft", "delete", "table", "bridge", LOSS_TABLE], check=False)


def loss_drops(appliance):
    """Packets the loss rules dropped so far (0 without a table)."""
    r = appliance.in_appliance_ns(["nft", "list", "table", "bridge", LOSS_TABLE], check=False)
    total = 0
    for line in r.stdout.splitlines():
        if "counter packets" in line:
            total += int(line.split("counter packets")[1].split()[0])
    return total


def make_file(directory, name, size):
    """Random content of the given size; returns its sha256."""
    h = hashlib.sha256()
    with open(os.path.join(directory, name), "wb") as f:
        left = size
        while left > 0:
            chunk = os.urandom(min(left, 1 << 20))
            h.update(chunk)
            f.write(chunk)
            left -= len(chunk)
    return h.hexdigest()


def lossy_appliance(www_dir, args=()):
    """A fixture body: an appliance of both families whose client is
    bridged to it, so that loss can be set, with its idle mbuf count taken
    once traffic has been seen (ARP, ND, ping); args: ewykd's options."""
    a = Appliance(www=www_dir, args=args, client_ns=True, ip6=True)
    try:
        a.start()
        a.idle_mbufs = a.idle_baseline()["mbufs_in_use_mbufs"]
        yield a
    finally:
        a.close()      # the namespaces go, and the nft tables with them


def case_id(case):
    """Test id of a (direction, percent, size name) case."""
    direction, pct, size = case
    return f"{size}-noloss" if pct == 0 else f"{size}-{direction}-{pct}pct"


def random_files(prefix, sizes, name_fmt):
    """A fixture body: a temporary folder of random files, one per size,
    named name_fmt.format(size name), with their sha256; removed after."""
    d = tempfile.mkdtemp(prefix=prefix)
    try:
        yield {"dir": d, "sha256": {name: make_file(d, name_fmt.format(name), size)
                                    for name, size in sizes.items()}}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def curl_timeout(size, loss_percent):
    """Seconds allowed for one transfer: fixed costs (handshake retries
    under loss) plus the size at a floor rate that loss lowers. Generous on
    purpose: the bound is there to turn a stall into a failure, not to
    measure speed."""
    floor_mb_s = 8.0 if loss_percent == 0 else 4.0 / (1 + loss_percent / 2)
    return int(10 + 2 * loss_percent + size / (floor_mb_s * (1 << 20)))


def timed_curl(appliance, args, label, size, loss_percent, moved=None):
    """Runs curl in the namespace with a -m bound from the bytes that cross
    the link (moved, by default the size downloaded); prints the duration
    and the throughput; returns (http_code, bytes downloaded, seconds, the
    CompletedProcess)."""
    limit = curl_timeout(size if moved is None else moved, loss_percent)
    t0 = time.monotonic()
    r = appliance.ns(["curl", "-sS", "-m", str(limit), "-w", "%{http_code} %{size_download}",
                      *args], check=False, timeout=limit + 30)
    dt = time.monotonic() - t0
    fields = r.stdout.split()
    code = fields[-2] if len(fields) >= 2 else "000"
    got = int(fields[-1]) if len(fields) >= 2 else 0
    rate = got / dt / (1 << 20) if dt > 0 else 0.0
    print(f"\n  {label}: {got} of {size} bytes in {dt:.2f}s ({rate:.2f} MB/s), "
          f"HTTP {code}, limit {limit}s, curl exit {r.returncode} {r.stderr.strip()}")
    return code, got, dt, r


def assert_whole(appliance, result, dropped, size, path, sha256):
    """A transfer of timed_curl() (its result) came whole and right, and
    the appliance's mbufs went back to idle."""
    code, got, dt, r = result
    print(f"  nft dropped {dropped} packets")
    assert r.returncode == 0, f"curl failed: {r.stderr.strip()} after {dt:.1f}s"
    assert code == "200"
    assert got == size
    assert sha256_file(path) == sha256, "the body differs"
    appliance.wait_idle(appliance.idle_mbufs, timeout=15)
