# SPDX-License-Identifier: BSD-3-Clause
"""IPv6 floods, from a packet socket on the kernel side of the tap
(floods6.py's frames, floods.py's Wire), into a dual-stack ewykd on
net_tap, while curl -6 fetches a page in a loop:

- SYNs from spoofed IPv6 sources (2001:2::/64, random hosts and ports):
  SYN cookies engage over IPv6's four-tuple, every fetch succeeds;
- neighbour solicitations for ewykd's address from spoofed sources:
  answered within --nd-reply-limit, the rest counted, the neighbour cache
  held to its size; solicitations for other addresses answered by nothing;
- router advertisements: all dropped and counted (a host with configured
  addresses takes none), no frame in answer.

Every flood is bounded in frames and seconds; the reply limit is lowered
to 100 a second so that a flood from Python exceeds it. No Pktgen script
sends these yet (pktgen-scripts/ is IPv4's): the frames are the ones such
scripts would send.
"""
import json
import os
import textwrap

import pytest

from conftest import counters, delta, rsts_again, serve_hostile, survived
from ewyk_harness import APP_IP6, HOST_IP6, IFACE, Appliance

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT = 100
BUDGET = LIMIT * 3 // 2		# the most a second's budget can be (rate_limit.h)
CACHE = 64 * 4			# ARP_CACHE_SETS x ARP_CACHE_WAYS


# Half-open connections before SYN cookies: a quarter of the default, so
# that the flood's SYNs overflow it even when a busy host lets the tap's
# queue drop most of them (once, 30,000 sent and no cookie at 1,024).
SYN_BACKLOG = 256


@pytest.fixture(scope="module")
def app(www):
    yield from serve_hostile(Appliance(www=www["dir"], ip6=True, args=[
        "--nd-reply-limit", str(LIMIT), "--syn-backlog", str(SYN_BACKLOG)]))


@pytest.fixture
def idle_after(app):
    yield
    survived(app)


def in_namespace(app, body, timeout=120):
    """body on the tap's kernel side with floods' and floods6' names, w a
    Wire on the tap, the addresses as bytes; body fills a dict result."""
    code = f"""
import json, random, sys, time
sys.path.insert(0, {HERE!r})
from floods import *
from floods6 import *
APP, HOST = ip6({APP_IP6!r}), ip6({HOST_IP6!r})
APP_MAC = mac({app.mac!r})
URL = "http://[{APP_IP6}]/hello.txt"
rnd = random.Random(4861)
w = Wire({IFACE!r})
result = {{}}
try:
{textwrap.indent(textwrap.dedent(body), "    ")}
finally:
    w.close()
print(json.dumps(result))
"""
    out = app.ns_python(code, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def tap_dropped(app):
    """Frames the kernel dropped on its side of the tap (queue full)."""
    return int(app.ns(["cat", f"/sys/class/net/{IFACE}/statistics/tx_dropped"]).stdout)


def assert_served(fetches):
    failed = [f for f in fetches if f[0] != "200"]
    assert len(fetches) >= 5
    assert not failed, f"{len(failed)} of {len(fetches)} fetches failed: {failed[:5]}"


def spoofed_host(rnd):
    """2001:2::x:y with x, y at random: never ewykd or the host."""
    return "2001:2::%x:%x" % (rnd.randint(1, 0xffff), rnd.randint(3, 0xffff))


SYNS = 30000


# The flood's 4-tuples and ISNs (in_namespace's rnd, freshly seeded, and
# the set sorted, whose order a string's hash would change from process to
# process: the same in every call), and its exact RSTs (seq = ISN + 1), as fast as the
# tap takes them.
SPOOFED_SYNS = f"""
nobody = mac("02:00:00:00:00:99")
conns = set()
while len(conns) < {SYNS}:
    conns.add(("2001:2::%x:%x" % (rnd.randint(1, 0xffff), rnd.randint(3, 0xffff)),
               rnd.randint(1024, 65535)))
conns = [(ip6(h), p, rnd.getrandbits(32)) for h, p in sorted(conns)]
"""
SPOOFED_RSTS = """
w.flood([tcp6_frame(APP_MAC, nobody, s, APP, p, 80, q + 1, 0, TCP_RST)
         for s, p, q in conns], 30)
"""


def test_syn_flood_from_spoofed_ipv6_sources(app, idle_after):
    before, lost = counters(app), tap_dropped(app)
    r = in_namespace(app, SPOOFED_SYNS + """
syns = [tcp6_frame(APP_MAC, nobody, s, APP, p, 80, q, 0, TCP_SYN)
        for s, p, q in conns]
fetch = Fetcher(URL)
result["sent"], result["seconds"] = w.flood(syns, 30)
time.sleep(2)
result["fetches"] = fetch.stop()
""" + SPOOFED_RSTS)
    again = rsts_again(app, lambda: in_namespace(app, SPOOFED_SYNS + SPOOFED_RSTS))
    d = delta(before, counters(app))
    print(f"\n  {r['sent']} SYNs over IPv6 in {r['seconds']:.2f}s: "
          f"{d['ip6_passive_opens_count']} connections opened, "
          f"{d['syncookies_sent_count']} cookies; {len(r['fetches'])} fetches, slowest "
          f"{max(f[1] for f in r['fetches'])}s; RSTs sent again {again} times")
    assert r["sent"] >= SYNS * 0.9
    assert_served(r["fetches"])
    assert d["syncookies_sent_count"] > 0, d
    # Every SYN that the tap did not drop reached ewykd as IPv6.
    assert d["rx_ip6_pkts"] >= r["sent"] - (tap_dropped(app) - lost)


NS = 20000


def test_ns_flood_is_answered_within_the_limit(app, idle_after):
    before, lost = counters(app), tap_dropped(app)
    r = in_namespace(app, f"""
        frames = []
        for i in range({NS}):
            src = ip6("2001:2::%x:%x" % (rnd.randint(1, 0xffff), rnd.randint(3, 0xffff)))
            lladdr = bytes([2, 0, 0, rnd.getrandbits(8), rnd.getrandbits(8), rnd.getrandbits(8)])
            # every other one for another address in ewykd's group
            target = APP if i % 2 == 0 else ip6("2001:2::5:0:2")
            frames.append(ns_frame(lladdr, src, target, lladdr))
        fetch = Fetcher(URL)
        t0 = time.monotonic()
        result["sent"], result["seconds"] = w.flood(frames, 30)
        answers = w.read(1.0, lambda f, incoming: incoming and parse6(f)[0] == 136)
        result["answers_after"] = len(answers)
        result["fetches"] = fetch.stop()
    """)
    d = delta(before, counters(app))
    arrived = r["sent"] - (tap_dropped(app) - lost)
    seconds = r["seconds"] + 1
    answered = d["nd_na_out_pkts"]
    print(f"\n  {r['sent']} NS in {r['seconds']:.2f}s: {answered} answered, "
          f"{d['nd_replies_limited_pkts']} over the limit, {d['nd_other_targets_pkts']} "
          f"for other addresses")
    assert r["sent"] >= NS * 0.9
    assert_served(r["fetches"])
    # Every solicitation that reached ewykd was read (the host's own too),
    # about half of them for another address.
    assert arrived <= d["nd_ns_in_pkts"] <= r["sent"] + 20
    ours = d["nd_ns_in_pkts"] - d["nd_other_targets_pkts"]
    assert abs(ours - d["nd_other_targets_pkts"]) < arrived // 5
    # Bounded answers: the budget of each second, the rest counted.
    assert answered <= BUDGET * (int(seconds) + 2), (answered, seconds)
    assert d["nd_replies_limited_pkts"] >= ours - answered - 10
    port = app.telemetry("/ewyk/ports,0")["port_0"]
    assert port["nd_entries"] <= CACHE


RAS = 20000


def test_ra_flood_changes_nothing(app, idle_after):
    before, lost = counters(app), tap_dropped(app)
    r = in_namespace(app, f"""
        frames = [ra_frame(mac("02:00:00:00:00:%02x" % (i % 256)),
                           ip6("fe80::%x" % (i + 1))) for i in range({RAS})]
        fetch = Fetcher(URL)
        result["sent"], result["seconds"] = w.flood(frames, 30)
        result["fetches"] = fetch.stop()
    """)
    d = delta(before, counters(app))
    assert r["sent"] >= RAS * 0.9
    assert_served(r["fetches"])
    # Every one that reached ewykd (the tap's drops count the kernel's own
    # frames too: a bound, not an equality).
    assert r["sent"] - (tap_dropped(app) - lost) <= d["drop_nd_router"] <= r["sent"]
    assert d["nd_na_out_pkts"] == 0 and d["icmp6_errors_out_pkts"] == 0
