# SPDX-License-Identifier: BSD-3-Clause
"""UDP against the Linux stack through net_tap, both families: nothing is
bound by default, so a datagram to ewykd gets ICMP's Port Unreachable,
which Linux turns into ECONNREFUSED on a connected socket; a flood of them
is answered within the shard's budget (100 a second, drawn up to 1.5
times) and the rest counted over it; ewykd keeps serving."""
import json

import pytest

from conftest import counters, delta, serve_module, tap_dropped
from ewyk_harness import APP_IP, APP_IP6, PYTHON, Appliance

ICMP_BUDGET = 150	# Port Unreachables a second at most

# A connected socket's datagram to a closed port: what the next recv says.
KNOCK = """
import json, socket, sys
af = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(af, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], 9999))
s.send(b"anyone there?")
try:
    s.recv(100)
    print(json.dumps("answered"))
except ConnectionRefusedError:
    print(json.dumps("refused"))
except socket.timeout:
    print(json.dumps("silence"))
"""

# N datagrams to closed ports as fast as they go; the seconds it took.
FLOOD = """
import json, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t0 = time.monotonic()
for i in range(int(sys.argv[2])):
    try:
        s.sendto(b"x" * 32, (sys.argv[1], 10000 + i % 20000))
    except OSError:
        pass	# an ICMP error reported on the socket
print(json.dumps(time.monotonic() - t0))
"""


@pytest.fixture(scope="module")
def app(www):
    yield from serve_module(Appliance(www=www["dir"], ip6=True))


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_a_closed_port_refuses_a_connected_socket(app, family):
    before = counters(app)
    ip = APP_IP if family == "ipv4" else APP_IP6
    r = app.ns([PYTHON, "-c", KNOCK, ip])
    d = delta(before, counters(app))
    assert json.loads(r.stdout) == "refused", (r.stdout, r.stderr)
    assert d["drop_udp_no_port"] == 1, d
    if family == "ipv4":
        assert d["icmp_unreachable_out_pkts"] == 1, d
    else:
        assert d["icmp6_errors_out_pkts"] == 1, d


def test_port_unreachables_keep_to_the_budget(app):
    n = 3000
    app.ns([PYTHON, "-c", KNOCK, APP_IP])	# the client knows ewykd's MAC
    before, lost = counters(app), tap_dropped(app)
    r = app.ns([PYTHON, "-c", FLOOD, APP_IP, str(n)], timeout=60)
    seconds = json.loads(r.stdout)
    app.wait_idle(app.idle_baseline()["mbufs_in_use_mbufs"], timeout=15)
    d = delta(before, counters(app))
    lost = tap_dropped(app) - lost	# the tap's queue was full
    answered, over = d["icmp_unreachable_out_pkts"], d["icmp_errors_limited_pkts"]
    print(f"\n  {n} datagrams to closed ports in {seconds:.2f} s: {answered} "
          f"Port Unreachables, {over} over the budget, {d['drop_udp_no_port']} counted, "
          f"{lost} lost in the tap")
    # What the tap's queue took reached ewykd: each was answered or counted.
    assert d["drop_udp_no_port"] >= n - lost, (lost, d)
    assert answered + over == d["drop_udp_no_port"], d
    assert 0 < answered <= ICMP_BUDGET * (seconds + 2), (answered, seconds)
    # And it still serves.
    assert app.ns(["curl", "-sS", "-m", "5", app.url("/hello.txt")]).stdout == \
        "hello from ewyk\n"
