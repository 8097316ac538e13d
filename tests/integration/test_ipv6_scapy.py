# SPDX-License-Identifier: BSD-3-Clause
"""Hostile and odd IPv6, crafted with scapy on the kernel side of the tap
(rawtcp.RawTcp for TCP, plain frames otherwise), against a dual-stack
appliance:

- neighbour discovery spoofed for addresses not ewykd's: no answer, and
  nothing learned (solicitations for another target, advertisements
  nobody asked for);
- extension header chains: within the bound the connection is served, one
  past it, a routing header of type 0, fragments (a TCP SYN in an atomic
  fragment, a ping the kernel fragments) are dropped and counted; an
  unknown option whose type asks for it, and UDP, get a rate-limited
  Parameter Problem;
- tiny and oversized frames: a cut IPv6 header, a payload length beyond
  the frame or of a jumbogram, a frame beyond the MTU;
- Packet Too Big: for a connection that does not exist, or quoting a
  sequence number outside the window, counted and nothing changes; for a
  live download, quoting a segment in flight, the MSS falls to 1220 and
  the rest of the answer comes in smaller segments, byte-exact.

Floods (SYNs from spoofed IPv6 sources, NS and RA floods) are
test_floods6.py's. After each test ewykd is alive and idle.
"""
import hashlib
import itertools
import json
import os
import shutil
import tempfile
import textwrap

import pytest

from conftest import counters, delta, serve_hostile, survived
from ewyk_harness import APP_IP6, HOST_IP6, IFACE, Appliance
from rawtcp import kernel_rst_filter

HERE = os.path.dirname(os.path.abspath(__file__))
HELLO = b"hello from ewyk\n"
BIG = 1 << 20
RAW_PORTS = (21000, 21999)
_ports = itertools.count(RAW_PORTS[0])
# The kernel would reset the raw clients' connections, which it does not
# know: its RSTs from those ports are dropped.
RST_FILTER = kernel_rst_filter("ewyk_scapy6", RAW_PORTS, IFACE)


@pytest.fixture(scope="module")
def files():
    d = tempfile.mkdtemp(prefix="ewyk-scapy6-www-")
    with open(os.path.join(d, "hello.txt"), "wb") as f:
        f.write(HELLO)
    big = os.urandom(BIG)
    with open(os.path.join(d, "big.bin"), "wb") as f:
        f.write(big)
    yield {"dir": d, "big_sha256": hashlib.sha256(big).hexdigest()}
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def app(files):
    yield from serve_hostile(Appliance(www=files["dir"], ip6=True),
                             lambda a: a.ns(["nft", "-f", "-"], input=RST_FILTER))


@pytest.fixture
def idle_after(app):
    yield
    survived(app)


def scapy_session(app, body, timeout=60):
    """Runs body on the tap's kernel side with scapy and rawtcp imported:
    s a packet socket on the tap, send(pkt) writes a scapy packet whole (an
    Ethernet header from our MAC to ewykd's is added), replies(seconds,
    keep) the ICMPv6/TCP frames from ewykd meanwhile; body fills a dict
    named result."""
    code = f"""
import json, select, socket, sys, time
sys.path.insert(0, {HERE!r})
import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import Ether, Raw, raw, get_if_hwaddr
from scapy.layers.inet import TCP, UDP
from scapy.layers.inet6 import *
from rawtcp import RawTcp, http_responses, seq_add
APP, HOST, APP_MAC = {APP_IP6!r}, {HOST_IP6!r}, {app.mac!r}
MY_MAC = get_if_hwaddr({IFACE!r})
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(({IFACE!r}, 0))
result = {{}}

def send(p, dst=None):
    s.send(raw(Ether(src=MY_MAC, dst=dst or APP_MAC) / p))

def replies(seconds, keep=lambda p: True):
    got, end = [], time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return got
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        f, addr = s.recvfrom(65535)
        if addr[2] == 4 or f[6:12] != bytes.fromhex(APP_MAC.replace(":", "")):
            continue
        p = Ether(f)
        if IPv6 in p and keep(p):
            got.append(p)

try:
{textwrap.indent(textwrap.dedent(body), "    ")}
finally:
    s.close()
print(json.dumps(result, default=str))
"""
    out = app.ns_python(code, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def nd_entries(app):
    return app.telemetry("/ewyk/ports,0")["port_0"]["nd_entries"]


def test_spoofed_neighbour_discovery_teaches_nothing(app, idle_after):
    # The host is a neighbour already: its solicitations are answered.
    app.ns(["ping", "-6", "-c", "1", "-W", "1", APP_IP6])
    entries = nd_entries(app)
    assert entries >= 1
    before = counters(app)
    r = scapy_session(app, """
        other = "2001:2::5:0:2"      # in ewykd's solicited-node group
        send(IPv6(src="2001:2::77", dst="ff02::1:ff00:2", hlim=255) /
             ICMPv6ND_NS(tgt=other) / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:77"),
             dst="33:33:ff:00:00:02")
        # Advertisements nobody asked for: of the host, and of a stranger.
        for tgt in (HOST, "2001:2::66"):
            send(IPv6(src=tgt, dst="ff02::1", hlim=255) /
                 ICMPv6ND_NA(tgt=tgt, R=0, S=0, O=1) /
                 ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:77"), dst="33:33:00:00:00:01")
        result["answers"] = len(replies(1.0, lambda p: ICMPv6ND_NA in p and
                                        p[ICMPv6ND_NA].tgt == other))
    """)
    d = delta(before, counters(app))
    assert r["answers"] == 0
    assert d["nd_other_targets_pkts"] == 1
    assert d["nd_na_in_pkts"] >= 2
    assert nd_entries(app) == entries		# neither sender nor stranger
    # The real host is still served (its SYNs carry its real MAC).
    out = app.ns(["curl", "-6", "-sS", "-m", "5", app.url6("/hello.txt")]).stdout
    assert out == HELLO.decode()


def raw_get(ext, sport):
    """A RawTcp client over IPv6 with extension headers ext (scapy source
    text) that GETs /hello.txt: result['state'] and ['answers']."""
    return f"""
        c = RawTcp({IFACE!r}, HOST, APP, APP_MAC, {sport}, ext={ext})
        result["state"] = c.connect(timeout=1.5)
        if result["state"] == "established":
            c.deliver(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
            c.read_response()
            result["answers"] = [[st, b.decode()] for st, b in http_responses(c.data)[0]]
            c.abort()
        c.close()
    """


def test_extension_header_chain_within_the_bound_is_served(app, idle_after):
    before = counters(app)
    chain = ("IPv6ExtHdrHopByHop(options=[PadN(optdata=b'\\\\0' * 4)]) / "
             "IPv6ExtHdrDestOpt(options=[PadN(optdata=b'\\\\0' * 4)]) / "
             "IPv6ExtHdrRouting(type=4, segleft=0) / IPv6ExtHdrDestOpt()")
    r = scapy_session(app, raw_get(chain, next(_ports)))
    assert r["state"] == "established"
    assert r["answers"] == [["HTTP/1.1 200 OK", HELLO.decode()]]
    d = delta(before, counters(app))
    assert d["ip6_passive_opens_count"] == 1


@pytest.mark.parametrize("ext, reason", [
    ("IPv6ExtHdrDestOpt() / " * 8 + "IPv6ExtHdrDestOpt()", "ip6_ext_chain"),
    ("IPv6ExtHdrRouting(type=0, segleft=1, addresses=[APP])", "ip6_routing_0"),
    ("IPv6ExtHdrFragment(offset=0, m=0, id=7)", "ip6_fragment"),
    ("IPv6ExtHdrFragment(offset=0, m=1, id=8)", "ip6_fragment"),
], ids=["nine-headers", "routing-type-0", "atomic-fragment", "first-fragment"])
def test_refused_extension_headers_are_counted(app, idle_after, ext, reason):
    before = counters(app)
    r = scapy_session(app, raw_get(ext, next(_ports)))
    d = delta(before, counters(app))
    assert r["state"] == "silent"
    assert d[f"drop_{reason}"] >= 1, d
    assert d["passive_opens_count"] == 0


def test_unknown_option_and_an_unknown_next_header_get_parameter_problems(app, idle_after):
    before = counters(app)
    r = scapy_session(app, """
        opt = IPv6ExtHdrDestOpt(options=[HBHOptUnknown(otype=0x87, optdata=b"ab")])
        send(IPv6(src=HOST, dst=APP) / opt / TCP(sport=21999, dport=80, flags="S"))
        send(IPv6(src=HOST, dst=APP, nh=132) / b"sctp, say")
        pp = replies(1.0, lambda p: ICMPv6ParamProblem in p)
        result["pp"] = sorted([p[ICMPv6ParamProblem].code, p[ICMPv6ParamProblem].ptr]
                              for p in pp)
    """)
    d = delta(before, counters(app))
    # Code 2 at the option (40 + 2), code 1 at the fixed header's next header.
    assert r["pp"] == [[1, 6], [2, 42]]
    assert d["icmp6_errors_out_pkts"] == 2
    assert d["drop_ip6_option"] == 1 and d["drop_ip6_next_header"] == 1


def test_udp_to_a_closed_port_gets_port_unreachable(app, idle_after):
    """UDP is an upper layer ewykd knows: to a port not bound, ICMPv6's
    Destination Unreachable, code 4 (port), quoting the datagram; with a
    checksum of 0 (forbidden over IPv6), nothing."""
    before = counters(app)
    r = scapy_session(app, """
        send(IPv6(src=HOST, dst=APP) / UDP(sport=5000, dport=5001) / b"junk")
        send(IPv6(src=HOST, dst=APP) / UDP(sport=5000, dport=5002, chksum=0) / b"junk")
        du = replies(1.0, lambda p: ICMPv6DestUnreach in p)
        result["du"] = [[p[ICMPv6DestUnreach].code, p[UDPerror].dport] for p in du]
    """)
    d = delta(before, counters(app))
    assert r["du"] == [[4, 5001]]
    assert d["drop_udp_no_port"] == 1 and d["drop_udp_cksum"] == 1
    assert d["icmp6_errors_out_pkts"] == 1


def test_fragmented_ping_is_dropped(app, idle_after):
    before = counters(app)
    r = app.ns(["ping", "-6", "-c", "2", "-i", "0.2", "-W", "1", "-s", "3000", APP_IP6],
               check=False)
    d = delta(before, counters(app))
    assert r.returncode != 0
    assert d["drop_ip6_fragment"] >= 4		# 2 pings of 3 fragments each
    assert d["icmp6_echo_pkts"] == 0


def test_tiny_and_oversized_frames(app, idle_after):
    before = counters(app)
    scapy_session(app, """
        full = raw(IPv6(src=HOST, dst=APP) / TCP(sport=21998, dport=80, flags="S"))
        s.send(raw(Ether(src=MY_MAC, dst=APP_MAC, type=0x86dd)) + full[:30])
        longer = bytearray(full)
        longer[4:6] = (1000).to_bytes(2, "big")        # beyond the frame
        s.send(raw(Ether(src=MY_MAC, dst=APP_MAC, type=0x86dd)) + bytes(longer))
        longer[4:6] = b"\\0\\0"                          # a jumbogram's
        s.send(raw(Ether(src=MY_MAC, dst=APP_MAC, type=0x86dd)) + bytes(longer))
        s.send(raw(Ether(src=MY_MAC, dst=APP_MAC, type=0x86dd)))   # nothing at all
    """)
    # Beyond the MTU: the kernel side takes a larger one for a moment.
    errors = app.telemetry("/ewyk/ports,0")["port_0"]["eth_rx_errors_pkts"]
    app.ip("link", "set", IFACE, "mtu", "4000")
    try:
        scapy_session(app, """
            send(IPv6(src=HOST, dst=APP) / UDP(sport=1, dport=2) / (b"x" * 3000))
            time.sleep(0.3)
        """)
    finally:
        app.ip("link", "set", IFACE, "mtu", "1500")
    d = delta(before, counters(app))
    assert d["drop_ip6_short"] == 2
    assert d["drop_ip6_payload_len"] == 2
    # The frame beyond the MTU never became a packet: net_tap refuses it
    # (its UDP would have had a Parameter Problem).
    assert app.telemetry("/ewyk/ports,0")["port_0"]["eth_rx_errors_pkts"] == errors + 1
    assert d["icmp6_errors_out_pkts"] == 0 and d["drop_ip6_next_header"] == 0
    assert d["passive_opens_count"] == 0


def ptb_body(seq_expr, sport, mtu=1280):
    """A Packet Too Big from a router on the path quoting ewykd's segment
    APP:80 -> HOST:sport with sequence number seq_expr."""
    return f"""
        quoted = raw(IPv6(src=APP, dst=HOST) / TCP(sport=80, dport={sport}, seq={seq_expr},
                                                  flags="A"))
        send(IPv6(src="2001:2::fe", dst=APP) / ICMPv6PacketTooBig(mtu={mtu}) / quoted)
    """


def test_packet_too_big_without_a_connection_changes_nothing(app, idle_after):
    before = counters(app)
    scapy_session(app, ptb_body(12345, 21997).rstrip() + "\n        time.sleep(0.2)\n")
    d = delta(before, counters(app))
    assert d["icmp6_ptb_in_pkts"] == 1
    assert d["drop_icmp6_ptb_no_conn"] == 1
    assert d["pmtu_lowered_count"] == 0
    assert d["segs_out_count"] == 0 and d["icmp6_errors_out_pkts"] == 0


def test_packet_too_big_lowers_the_mss_of_a_live_download(app, files, idle_after):
    before = counters(app)
    sport = next(_ports)
    r = scapy_session(app, f"""
        c = RawTcp({IFACE!r}, HOST, APP, APP_MAC, {sport})
        result["state"] = c.connect()
        c.send("PA", data=b"GET /big.bin HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
        c.snd_nxt = seq_add(c.snd_nxt, 34)
        c.pump(5, until=lambda: len(c.segs) >= 60)
        # Outside the window first: nothing changes.
        {ptb_body("seq_add(c.rcv_nxt, 1 << 30)", sport).strip()}
        c.pump(0.3, until=lambda: len(c.segs) >= 100)
        cut = len(c.segs)
        {ptb_body("c.rcv_nxt", sport).strip()}
        c.pump(20, until=lambda: len(c.data) >= {BIG} + 100 and
               http_responses(c.data)[0])
        got = http_responses(c.data)[0]
        import hashlib
        result["sha"] = hashlib.sha256(got[0][1]).hexdigest() if got else None
        sizes = [g["len"] for g in c.segs if g["len"]]
        result["before"] = max(g["len"] for g in c.segs[:cut])
        result["tail"] = max(sizes[-100:])
        c.abort()
        c.close()
    """)
    d = delta(before, counters(app))
    assert r["state"] == "established"
    assert r["sha"] == files["big_sha256"], "the answer differs"
    assert r["before"] == 1400			# rawtcp's MSS
    assert r["tail"] == 1280 - 60
    assert d["drop_icmp6_ptb_seq"] == 1
    assert d["pmtu_lowered_count"] == 1
