# SPDX-License-Identifier: BSD-3-Clause
"""Packet loss on the kernel side of the tap, and timed curl transfers.

Loss is an nftables table inside the appliance's namespace: a random share
of the packets the kernel receives from the appliance (prerouting, iif
ewyk0) and/or of those it sends to it (postrouting, oif ewyk0) is dropped.
ARP is not IP and is never dropped, so loss never hides the appliance.
"""
import hashlib
import os
import time

from ewyk_harness import IFACE

LOSS_TABLE = "ewyk_loss"


def set_loss(appliance, direction, percent):
    """direction: 'in' (to the kernel), 'out' (from the kernel) or 'both'."""
    clear_loss(appliance)
    if percent == 0:
        return
    rules = []
    if direction in ("in", "both"):
        rules.append("chain rx { type filter hook prerouting priority -300; policy accept; "
                     f'iifname "{IFACE}" numgen random mod 100 < {percent} counter drop; }}')
    if direction in ("out", "both"):
        rules.append("chain tx { type filter hook postrouting priority 300; policy accept; "
                     f'oifname "{IFACE}" numgen random mod 100 < {percent} counter drop; }}')
    script = f"table inet {LOSS_TABLE} {{\n" + "\n".join(rules) + "\n}\n"
    appliance.ns(["nft", "-f", "-"], input=script)


def clear_loss(appliance):
    appliance.ns(["nft", "delete", "table", "inet", LOSS_TABLE], check=False)


def loss_drops(appliance):
    """Packets the loss rules dropped so far (0 without a table)."""
    r = appliance.ns(["nft", "list", "table", "inet", LOSS_TABLE], check=False)
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
