# SPDX-License-Identifier: BSD-3-Clause
"""ewykd on two ports at once: net_tap (port 0) and net_memif (port 1), each
with an address of its own (the harness's second_port, see its text).

- Over the wire: curl on each port, /ewyk/ports names both, and the counters
  of a 1 MB download rise on the port it went by only; the same peer address
  and port may reach both ports at once (a connection is known by its port).
- The proxy's active open: an upstream on port 1's link is fetched for a
  client of port 0; the upstream's leg (ARP, handshake, the 1 MB answer)
  goes by port 1, the client's by port 0.
- The flood: dpdk-testpmd in txonly mode runs pktgen-scripts/testpmd/
  udp-flood.cmd as a memif client of port 1 for FLOOD_S seconds at full
  speed, while CURLS curls are served on port 0: every frame testpmd got
  into the ring (but the ring's last when it leaves) is counted on port 1
  and dropped as udp_no_port (UDP to a port not bound), none on port 0,
  each answered with ICMP's Port Unreachable within the shard's budget or
  counted over it, and the mbufs come back to their idle level.
"""
import hashlib
import os
import re
import subprocess
import time

import pytest

from conftest import serve_module
from ewyk_harness import (APP_IP, APP_IP2, HOST_IP, HOST_IP2, IFACE, PYTHON, ROOT,
                          TESTPMD, Appliance, eal_memory_args, stop_process)

FLOOD_CMD = f"{ROOT}/pktgen-scripts/testpmd/udp-flood.cmd"
FLOOD_S = 3
CURLS = 20
ONE_MB = 1 << 20
QUIET_BYTES = 4096	# what the idle port may send meanwhile (ARP, a ping)
ICMP_BUDGET = 150	# Port Unreachables a second at most (100, drawn up to 1.5x)
MEMIF_RING = 1024	# slots of a memif ring (rsize=10, the default)
FAR_PORT = 8097		# the upstream on port 1's link


def ports(a):
    return a.telemetry("/ewyk/ports")


def curl(a, on_second, *args):
    """curl from the client side of port 0 or port 1: (status, stdout)."""
    run = a.ns2 if on_second else a.ns
    ip = APP_IP2 if on_second else APP_IP
    r = run(["curl", "-sS", "-m", "30", "-w", "%{http_code}", *args[:-1],
             f"http://{ip}{args[-1]}"], check=False)
    return r.stdout[-3:], r


@pytest.fixture(scope="module")
def two_ports(www):
    yield from serve_module(Appliance(www=www["dir"], second_port="wire", args=[
        "--upstream", f"far={HOST_IP2}:{FAR_PORT}"]))


def test_ports_telemetry_names_both(two_ports):
    p = ports(two_ports)
    assert set(p) == {"port_0", "port_1"}, p.keys()
    assert (p["port_0"]["port_name"], p["port_0"]["ip"]) == ("net_tap0", f"{APP_IP}/25")
    assert (p["port_1"]["port_name"], p["port_1"]["ip"]) == ("net_memif1", f"{APP_IP2}/25")
    for key in ("port_0", "port_1"):
        assert p[key]["link"] == "up", p[key]
        assert p[key]["link_speed_mbps"] > 0
        # The ethdev's own xstats, as DPDK names them.
        assert "rx_good_packets" in p[key]["xstats"], p[key]["xstats"]
    assert p["port_0"]["mac"] != p["port_1"]["mac"]
    # One port a reply, by ethdev id; one not served has nothing to say.
    assert list(two_ports.telemetry("/ewyk/ports,1")) == ["port_1"]
    assert two_ports.telemetry("/ewyk/ports,3") == {}
    assert two_ports.telemetry("/ewyk/ports,one") is None
    info = two_ports.telemetry("/ewyk/info")
    assert (info["ports"], info["port_name"]) == (2, "net_tap0")
    assert "198.18.0.130/25 on net_memif1" in two_ports.read_log()


@pytest.mark.parametrize("port", [0, 1])
def test_download_counts_on_its_port_only(two_ports, www, tmp_path, port):
    """A 1 MB download by port N: byte-exact, and N's counters (the stack's,
    the ethdev's, its xstats) carry it while the other port stays quiet."""
    here, other = f"port_{port}", f"port_{1 - port}"
    before = ports(two_ports)
    out = tmp_path / "big.bin"
    status, r = curl(two_ports, port == 1, "-o", str(out), "/big.bin")
    assert status == "200", r.stderr
    assert hashlib.sha256(out.read_bytes()).hexdigest() == www["big_sha256"]
    after = ports(two_ports)

    def grew(key, field):
        return after[key][field] - before[key][field]

    for field in ("tx_bytes", "eth_tx_bytes"):
        assert grew(here, field) >= ONE_MB, (field, before[here], after[here])
        assert grew(other, field) < QUIET_BYTES, (field, before[other], after[other])
    assert grew(here, "rx_pkts") > 0
    assert (after[here]["xstats"]["tx_good_bytes"] -
            before[here]["xstats"]["tx_good_bytes"]) >= ONE_MB
    assert (after[other]["xstats"]["tx_good_bytes"] -
            before[other]["xstats"]["tx_good_bytes"]) < QUIET_BYTES


def test_proxy_opens_by_the_upstreams_port(two_ports, www, tmp_path):
    """/proxy/far/ asked on port 0, its upstream on port 1's link: the
    active open resolves and connects by port 1 (the only way to the
    upstream's /25), the 1 MB answer comes in by port 1 and leaves by
    port 0, byte-exact."""
    a = two_ports
    server = subprocess.Popen(["ip", "netns", "exec", a.client2, PYTHON, "-m",
                               "http.server", "--bind", HOST_IP2, "--directory",
                               www["dir"], str(FAR_PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        url = f"http://{HOST_IP2}:{FAR_PORT}/hello.txt"
        deadline = time.time() + 10
        while a.ns2(["curl", "-sf", "-m", "1", "-o", os.devnull, url],
                    check=False).returncode != 0:
            assert time.time() < deadline and server.poll() is None, "no upstream"
            time.sleep(0.2)
        before = ports(a)
        out = tmp_path / "far.bin"
        status, r = curl(a, False, "-o", str(out), "/proxy/far/big.bin")
        assert status == "200", r.stderr
        assert hashlib.sha256(out.read_bytes()).hexdigest() == www["big_sha256"]
        after = ports(a)
    finally:
        stop_process(server)

    def grew(key, field):
        return after[key][field] - before[key][field]

    assert grew("port_1", "rx_bytes") >= ONE_MB, (before["port_1"], after["port_1"])
    assert grew("port_0", "tx_bytes") >= ONE_MB, (before["port_0"], after["port_0"])
    assert grew("port_0", "rx_bytes") < ONE_MB // 4
    assert grew("port_1", "tx_bytes") < ONE_MB // 4
    far = a.telemetry("/ewyk/upstreams")["upstream_far"]
    assert far["port_id"] == 1 and far["answers_reqs"] >= 1, far


def test_same_peer_on_both_ports_at_once(two_ports):
    """198.18.0.1:40000 connects to both ports while the first connection
    is open: two connections, not one seen twice (the second's SYN would
    meet the first's connection, and get no answer on its own port, within
    the 2 s its connect may take)."""
    a = two_ports
    a.ns2(["ip", "addr", "add", f"{HOST_IP}/32", "dev", IFACE])
    try:
        hold = f"""
import socket, time
c = socket.socket()
c.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
c.bind(("{HOST_IP}", 40000))
c.settimeout(2)
c.connect(("{{ip}}", 80))
c.settimeout(10)
time.sleep({{wait}})
c.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
d = b""
while b"hello from ewyk" not in d:
    d += c.recv(4096)
print(d.split(b"\\r\\n")[0].decode())
"""
        first = a.ns_popen(["python3", "-c", hold.format(ip=APP_IP, wait=4)])
        time.sleep(0.5)
        second = a.ns2(["python3", "-c", hold.format(ip=APP_IP2, wait=0)],
                       check=False, timeout=30)
        out, _ = first.communicate(timeout=30)
        assert second.stdout.strip() == "HTTP/1.1 200 OK", second.stderr
        assert out.strip() == "HTTP/1.1 200 OK"
    finally:
        a.ns2(["ip", "addr", "del", f"{HOST_IP}/32", "dev", IFACE], check=False)


class WithSpareDevice(Appliance):
    """ewykd given a second device (net_null) but one --ip."""

    def second_vdev(self):
        return ["--vdev", "net_null0"]


def test_port_without_ip_is_left_unused(www):
    with WithSpareDevice(www=www["dir"]) as a:
        assert "ewykd: port 1 (net_null0) unused: no --ip for it" in a.read_log()
        p = ports(a)
        assert list(p) == ["port_0"] and p["port_0"]["ip"] == f"{APP_IP}/24", p
        assert a.telemetry("/ewyk/info")["ports"] == 1
        status, r = curl(a, False, "-o", "/dev/null", "/hello.txt")
        assert status == "200", r.stderr


@pytest.fixture(scope="module")
def flood_target(www):
    yield from serve_module(Appliance(www=www["dir"], second_port="peer"))


def flood_cmd(a, mac):
    """The command udp-flood.cmd documents, as a memif client of port 1."""
    return ["ip", "netns", "exec", a.client2, TESTPMD, "--lcores", "0@0,1@0", "--no-pci",
            "--file-prefix", a.prefix + "m", "--log-level", "*:warning",
            *eal_memory_args(128), "--vdev", a.memif_peer_vdev(), "--",
            f"--cmdline-file={FLOOD_CMD}", f"--eth-peer=0,{mac}",
            f"--tx-ip={HOST_IP2},{APP_IP2}", "--tx-udp=9,9", "--no-lsc-interrupt",
            "--total-num-mbufs", "8192", "--stats-period", "1"]


def tx_packets(log):
    """testpmd's accumulated TX-packets, printed when it stops."""
    m = re.search(r"Accumulated forward statistics.*?TX-packets:\s+(\d+)", log, re.S)
    assert m, log[-3000:]
    return int(m.group(1))


def test_udp_flood_on_port_1_while_port_0_serves(flood_target):
    a = flood_target
    idle = a.stats()["mbufs_in_use_mbufs"]
    before, stats0 = ports(a), a.stats()
    flood = subprocess.Popen(flood_cmd(a, before["port_1"]["mac"]), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                             start_new_session=True)
    try:
        t0 = time.monotonic()
        while ports(a)["port_1"]["rx_pkts"] == before["port_1"]["rx_pkts"]:
            assert flood.poll() is None and time.monotonic() - t0 < 20, \
                "the flood never reached port 1"
            time.sleep(0.2)
        codes = [curl(a, False, "-o", "/dev/null", "/hello.txt")[0] for _ in range(CURLS)]
        during = ports(a)
        # Keep it going FLOOD_S seconds in all, then stop it by its pid.
        time.sleep(max(0.0, FLOOD_S - (time.monotonic() - t0)))
        assert flood.poll() is None, "testpmd ended before it was stopped"
    finally:
        stop_process(flood, timeout=10)
    log = flood.stdout.read()
    sent = tx_packets(log)
    after, stats1 = ports(a), a.stats()
    assert codes == ["200"] * CURLS, codes

    def grew(key, field):
        return after[key][field] - before[key][field]

    def dropped(key, reason, snap):
        return snap[key]["drop_by_reason_pkts"].get(reason, 0) - \
            before[key]["drop_by_reason_pkts"].get(reason, 0)

    assert sent > 10000, log[-2000:]
    # Every frame testpmd got into the ring was received, but those still
    # in the ring when it left (memif drops them), and every one received
    # was dropped as UDP to a port not bound, on port 1 only.
    got = grew("port_1", "rx_pkts")
    assert sent - MEMIF_RING <= got <= sent, (sent, got)
    assert dropped("port_1", "udp_no_port", after) == got
    # Each was owed a Port Unreachable: sent within the budget, or counted
    # over it (the flood's source is one host).
    answered = stats1["icmp_unreachable_out_pkts"] - stats0["icmp_unreachable_out_pkts"]
    over = stats1["icmp_errors_limited_pkts"] - stats0["icmp_errors_limited_pkts"]
    elapsed = time.monotonic() - t0
    assert 0 < answered <= ICMP_BUDGET * (elapsed + 1), (answered, elapsed)
    assert answered + over == got, (answered, over, got)
    # testpmd in txonly mode reads nothing: once its ring is full, the
    # answers are dropped at ewykd's transmit (tx_full), counted too.
    unsent = dropped("port_1", "tx_full", after)
    assert unsent <= answered, (unsent, answered)
    assert grew("port_1", "drop_pkts") == got + unsent
    assert grew("port_1", "tx_pkts") + unsent <= answered
    assert dropped("port_0", "udp_no_port", after) == 0
    assert grew("port_0", "tx_bytes") > 0
    # While it ran the device counted it too (memif forgets its counters
    # when its client leaves).
    assert during["port_1"]["eth_rx_pkts"] > 0
    assert during["port_1"]["xstats"]["rx_good_packets"] > 0
    a.wait_idle(idle, timeout=15)
