#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of fuzz_net_input (tests/fuzz/corpus/) and the
hand-made reproducers of the bugs it found (tests/fuzz/regressions/).

Input format (see fuzz_net_input.c): two configuration bytes, then records
of ctl (1 byte), length (2 bytes, big endian) and the frame. The generated
files are committed; run this again after changing the format:

    /usr/bin/python3 tests/fuzz/gen_corpus.py
"""
import logging
import os
import struct
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import ARP, ICMP, IP, TCP, Ether, raw  # noqa: E402
from scapy.layers.inet6 import (  # noqa: E402
    HBHOptUnknown, ICMPv6EchoRequest, ICMPv6MLQuery, ICMPv6ND_NA, ICMPv6ND_NS,
    ICMPv6ND_RA, ICMPv6ND_RS, ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr,
    ICMPv6PacketTooBig, IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, PadN)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
REGRESSIONS = os.path.join(HERE, "regressions")

APP_MAC = "02:00:00:00:00:02"   # the fuzz target's interface
CLI_MAC = "02:00:00:00:00:01"
APP_IP = "198.18.0.2"
CLI_IP = "198.18.0.1"
APP_IP6 = "2001:2::2"
CLI_IP6 = "2001:2::1"
APP_LL = "fe80::ff:fe00:2"          # from APP_MAC (modified EUI-64)
CLI_LL = "fe80::1"

# configuration byte
CFG_64K, CFG_4K, CFG_512, CFG_64 = 0, 1, 2, 3
CFG_TX_MULTISEG = 0x04
CFG_TX_PARTIAL = 0x08
CFG_CONNS_16 = 0x30
CFG_SMALL_POOL = 0x40
CFG_SMALL_SNDBUF = 0x80
# second configuration byte
CFG1_NO_SYNCOOKIES = 0x01
CFG1_BACKLOG_1 = 0x02
CFG1_ACTIVE_OPEN = 0x04
CFG1_KEEPALIVE = 0x08
CFG1_IDLE_TIMEOUT = 0x10
CFG1_TX_OFFLOAD = 0x20
CFG1_MBUF_RESERVE = 0x40
CFG1_TIGHT = 0x80

# ctl byte
RAW, FIX, GOOD, BAD = 0, 1, 2, 3
REL_ACK = 0x04
TWICE = 0x08
OPEN6 = 0x80
CLK = {0: 0, 1: 1, 10: 2, 50: 3, 200: 4, 1000: 5, 3000: 6, 10000: 7}


def ctl(cksum=FIX, rel_ack=False, twice=False, clock_ms=0):
    return cksum | (REL_ACK if rel_ack else 0) | (TWICE if twice else 0) | CLK[clock_ms] << 4


def rec(frame, c=None):
    b = raw(frame) if not isinstance(frame, bytes) else frame
    return bytes([ctl() if c is None else c]) + struct.pack(">H", len(b)) + b


def eth():
    return Ether(dst=APP_MAC, src=CLI_MAC)


def seg(sport, flags, seq, ack=0, data=b"", **kw):
    """A TCP segment from the client; ack is relative to the stack's ISS."""
    kw.setdefault("window", 65535)
    p = eth() / IP(src=CLI_IP, dst=APP_IP) / TCP(sport=sport, dport=80, flags=flags,
                                                 seq=seq, ack=ack, **kw)
    return p / data if data else p


def seg6(sport, flags, seq, ack=0, data=b"", ext=None, **kw):
    """The same over IPv6, with extension headers ext (a scapy chain)."""
    kw.setdefault("window", 65535)
    ip = IPv6(src=CLI_IP6, dst=APP_IP6)
    if ext is not None:
        ip = ip / ext
    p = eth() / ip / TCP(sport=sport, dport=80, flags=flags, seq=seq, ack=ack, **kw)
    return p / data if data else p


def icmp6(msg, src=CLI_IP6, dst=APP_IP6, hlim=64, mac=APP_MAC):
    return Ether(dst=mac, src=CLI_MAC) / IPv6(src=src, dst=dst, hlim=hlim) / msg


def ipv6_corpus():
    """IPv6: TCP with and without extension headers, neighbour discovery
    (ours, spoofed, DAD), router messages, echo, MLD, Packet Too Big."""
    c = ctl(rel_ack=True)
    req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    recs = [rec(seg6(41000, "S", 1000, options=[("MSS", 1440), ("SAckOK", b""),
                                                ("Timestamp", (1, 0)), ("WScale", 7)]), ctl()),
            rec(seg6(41000, "A", 1001, 1, options=[("Timestamp", (2, 0))]), c),
            rec(seg6(41000, "PA", 1001, 1, req, options=[("Timestamp", (3, 0))]), c),
            rec(seg6(41000, "FA", 1001 + len(req), 1 + len(req) % 97 + 1,
                     options=[("Timestamp", (4, 0))]), ctl(rel_ack=True, clock_ms=10))]
    write("ipv6_tcp_conversation", 0, recs)

    # Extension headers: within the bound and served, and every refusal.
    dopt = IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)])
    recs = [rec(seg6(41001, "S", 1000, ext=IPv6ExtHdrHopByHop() / dopt), ctl()),
            rec(seg6(41001, "A", 1001, 1, ext=IPv6ExtHdrRouting(type=4, segleft=0)), c),
            rec(seg6(41002, "S", 1000, ext=IPv6ExtHdrRouting(type=0, segleft=1,
                                                              addresses=[CLI_IP6])), ctl()),
            rec(seg6(41003, "S", 1000, ext=IPv6ExtHdrRouting(type=4, segleft=1)), ctl()),
            rec(seg6(41004, "S", 1000, ext=IPv6ExtHdrFragment(m=1)), ctl()),
            rec(seg6(41005, "S", 1000, ext=dopt / IPv6ExtHdrHopByHop()), ctl()),
            rec(seg6(41006, "S", 1000, ext=IPv6ExtHdrDestOpt(
                options=[HBHOptUnknown(otype=0x87, optdata=b"ab")])), ctl()),
            rec(seg6(41007, "S", 1000, ext=IPv6ExtHdrDestOpt(
                options=[HBHOptUnknown(otype=0x47, optdata=b"ab")])), ctl())]
    chain = IPv6ExtHdrDestOpt()
    for _ in range(8):
        chain = chain / IPv6ExtHdrDestOpt()
    recs.append(rec(seg6(41008, "S", 1000, ext=chain), ctl()))
    udp = raw(eth() / IPv6(src=CLI_IP6, dst=APP_IP6, nh=17) / (b"\x00" * 16))
    recs.append(rec(udp, ctl()))
    write("ipv6_ext_headers", CFG_CONNS_16, recs)

    sol = "ff02::1:ff00:2"
    sol_mac = "33:33:ff:00:00:02"
    recs = [rec(icmp6(ICMPv6ND_NS(tgt=APP_IP6) / ICMPv6NDOptSrcLLAddr(lladdr=CLI_MAC),
                      dst=sol, hlim=255, mac=sol_mac)),
            rec(icmp6(ICMPv6ND_NS(tgt=APP_LL) / ICMPv6NDOptSrcLLAddr(lladdr=CLI_MAC),
                      src=CLI_LL, dst=APP_LL, hlim=255)),
            # another target, in our solicited-node group: no answer
            rec(icmp6(ICMPv6ND_NS(tgt="2001:2::5:0:2") / ICMPv6NDOptSrcLLAddr(lladdr=CLI_MAC),
                      dst=sol, hlim=255, mac=sol_mac)),
            rec(icmp6(ICMPv6ND_NS(tgt=APP_IP6), hlim=64)),
            rec(icmp6(ICMPv6ND_NA(tgt="2001:2::77", R=0, S=0, O=1) /
                      ICMPv6NDOptDstLLAddr(lladdr=CLI_MAC), dst="ff02::1", hlim=255,
                      mac="33:33:00:00:00:01")),
            rec(icmp6(ICMPv6ND_RA(), src=CLI_LL, dst="ff02::1", hlim=255,
                      mac="33:33:00:00:00:01")),
            rec(icmp6(ICMPv6ND_RS(), src=CLI_LL, dst="ff02::1", hlim=255,
                      mac="33:33:00:00:00:01")),
            rec(icmp6(ICMPv6EchoRequest(id=1, seq=1, data=b"p" * 56)), ctl(clock_ms=1000)),
            rec(icmp6(ICMPv6EchoRequest(id=1, seq=2), dst="ff02::1",
                      mac="33:33:00:00:00:01")),
            rec(icmp6(ICMPv6MLQuery(), src=CLI_LL, dst="ff02::1", hlim=1,
                      mac="33:33:00:00:00:01")),
            rec(icmp6(ICMPv6ND_NS(tgt=APP_IP6), src="::", dst=sol, hlim=255, mac=sol_mac))]
    write("ipv6_nd", 0, recs)

    # A large answer, then Packet Too Big: of a segment in the window (its
    # sequence number relative to our ISS), of one far out of it, of a
    # connection that does not exist.
    sport = 41010
    recs = [rec(seg6(sport, "S", 5000, options=[("MSS", 1440)]), ctl()),
            rec(seg6(sport, "A", 5001, 1), c),
            rec(seg6(sport, "PA", 5001, 1, b"W"), ctl(rel_ack=True, clock_ms=1))]

    def ptb(mtu, seq, port=sport):
        quoted = IPv6(src=APP_IP6, dst=CLI_IP6) / TCP(sport=80, dport=port, seq=seq,
                                                       flags="A")
        return icmp6(ICMPv6PacketTooBig(mtu=mtu) / raw(quoted)[:48 + 20],
                     src="2001:2::fe")
    recs += [rec(ptb(1280, 1 + 1000), c), rec(ptb(1300, 1 + 900000), c),
             rec(ptb(1280, 1, port=9), c),
             rec(seg6(sport, "A", 5002, 1 + 3000), ctl(rel_ack=True, clock_ms=10))]
    write("ipv6_ptb", CFG_TX_MULTISEG | CFG_CONNS_16, recs)

    # An active open over IPv6 (ctl bit 7), answered with every option.
    def from_server6(flags, seq, ack=0, data=b"", **kw):
        kw.setdefault("window", 65535)
        p = eth() / IPv6(src=CLI_IP6, dst=APP_IP6) / TCP(
            sport=8080, dport=50001, flags=flags, seq=seq, ack=ack, **kw)
        return p / data if data else p
    opts = [("MSS", 1400), ("SAckOK", b""), ("Timestamp", (100, 0)), ("WScale", 7)]
    recs = [rec(from_server6("SA", 70000, 1, options=opts), ctl(rel_ack=True) | OPEN6),
            rec(from_server6("PA", 70001, 1, b"hello", options=[("Timestamp", (101, 0))]),
                ctl(rel_ack=True, clock_ms=50))]
    write("ipv6_active_open", CFG_TX_MULTISEG, recs, CFG1_TX_OFFLOAD)

    # SYN cookies over IPv6: a backlog of one.
    recs = [rec(seg6(41020, "S", 1000, options=[("MSS", 1440)]), ctl()),
            rec(seg6(41021, "S", 2000, options=[("MSS", 1440)]), ctl()),
            rec(seg6(41021, "A", 2001, 1), c),
            rec(seg6(41021, "PA", 2001, 1, req), c)]
    write("ipv6_syncookie", CFG_CONNS_16, recs, CFG1_BACKLOG_1)


def conversation(sport, rel=True, clock_ms=0, extra=()):
    """SYN, ACK, a request, FIN; ack numbers relative to the ISS."""
    c = ctl(rel_ack=rel, clock_ms=clock_ms)
    req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    out = [rec(seg(sport, "S", 1000, options=[("MSS", 1460)]), ctl()),
           rec(seg(sport, "A", 1001, 1), c),
           rec(seg(sport, "PA", 1001, 1, req), c)]
    out += [rec(f, c) for f in extra]
    answered = 1 + len(req) % 97 + 1   # the toy application's answer size
    fin_seq = 1001 + len(req) + sum(len(f[TCP].payload) for f in extra)
    out.append(rec(seg(sport, "FA", fin_seq, answered), c))
    out.append(rec(seg(sport, "A", fin_seq + 1, answered + 1), c))   # our FIN
    return out


def write(name, cfg, records, cfg1=0, where=OUT):
    with open(os.path.join(where, name), "wb") as f:
        f.write(bytes([cfg, cfg1]) + b"".join(records))


def regressions():
    """One input per bug found, minimal and readable."""
    req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    c = ctl(rel_ack=True)
    # Data carrying an ACK of data never sent was delivered to the
    # application (RFC 9293 3.10.7.4: send an ACK, drop the segment).
    write("ack_of_unsent_data_delivers", 0,
          [rec(seg(41000, "S", 1000), ctl()),
           rec(seg(41000, "A", 1001, 1), c),
           rec(seg(41000, "PA", 1001, 1 + 100000, req), c)], where=REGRESSIONS)
    # The same with an ACK older than SND.UNA - MAX.SND.WND (RFC 5961 5.2),
    # which the stack answered with a challenge ACK yet took the data of.
    write("too_old_ack_delivers", 0,
          [rec(seg(41001, "S", 1000), ctl()),
           rec(seg(41001, "A", 1001, 1), c),
           rec(seg(41001, "PA", 1001, (1 - 100000) & 0xffffffff, req), c)],
          where=REGRESSIONS)


def main():
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(REGRESSIONS, exist_ok=True)
    regressions()
    arp = Ether(dst="ff:ff:ff:ff:ff:ff", src=CLI_MAC) / ARP(
        op=1, hwsrc=CLI_MAC, psrc=CLI_IP, pdst=APP_IP)
    write("arp_request", 0, [rec(arp)])

    ping = eth() / IP(src=CLI_IP, dst=APP_IP) / ICMP(type=8, id=1, seq=1) / (b"p" * 56)
    write("icmp_echo", 0, [rec(ping, ctl(RAW))])

    syn = seg(40000, "S", 1000, options=[("MSS", 1460), ("SAckOK", b""),
                                         ("Timestamp", (1, 0)), ("NOP", None),
                                         ("WScale", 7)])
    write("tcp_syn", 0, [rec(syn, ctl(RAW))])

    # The full exchange: handshake, a request, the answer acknowledged, FIN.
    write("tcp_syn_ack_data_fin", 0, conversation(40001, clock_ms=10))

    # A large answer ('W'), acknowledged in steps, with a zero window in
    # between, on a device that takes chains.
    sport, req = 40002, b"W"
    recs = [rec(seg(sport, "S", 5000, options=[("MSS", 1000)]), ctl()),
            rec(seg(sport, "A", 5001, 1), ctl(rel_ack=True)),
            rec(seg(sport, "PA", 5001, 1, req), ctl(rel_ack=True, clock_ms=1))]
    acked = 1
    for step in range(6):
        acked += 4000
        win = 0 if step == 2 else 65535
        recs.append(rec(seg(sport, "A", 5002, acked, window=win),
                        ctl(rel_ack=True, clock_ms=200 if win == 0 else 1)))
    recs.append(rec(seg(sport, "R", 5002), ctl()))
    write("tcp_big_answer_zero_window", CFG_TX_MULTISEG | CFG_CONNS_16, recs)

    # Out of order, duplicate and overlapping data, an in-window RST, a
    # SYN on the connection, then an exact RST.
    sport = 40003
    recs = [rec(seg(sport, "S", 7000), ctl()),
            rec(seg(sport, "A", 7001, 1), ctl(rel_ack=True)),
            rec(seg(sport, "PA", 7011, 1, b"B" * 10), ctl(rel_ack=True)),
            rec(seg(sport, "PA", 7001, 1, b"x" * 10), ctl(rel_ack=True, twice=True)),
            rec(seg(sport, "PA", 7005, 1, b"y" * 20), ctl(rel_ack=True)),
            rec(seg(sport, "R", 7100), ctl()),
            rec(seg(sport, "S", 9000), ctl(clock_ms=50)),
            rec(seg(sport, "R", 7025), ctl())]
    write("tcp_ooo_dup_rst", CFG_4K, recs)

    # Two connections, the application closing one and aborting the other,
    # then a retransmission timeout run (the peer goes silent).
    recs = conversation(40004, extra=[seg(40004, "PA", 1028, 1 + 28, b"C")])
    recs += [rec(seg(40005, "S", 3000), ctl()),
             rec(seg(40005, "A", 3001, 1), ctl(rel_ack=True)),
             rec(seg(40005, "PA", 3001, 1, b"A"), ctl(rel_ack=True, clock_ms=10000))]
    write("tcp_close_abort", CFG_SMALL_SNDBUF | CFG_TX_PARTIAL, recs)

    # A SYN with bad options: zero-length, truncated, window scale 200.
    bad = raw(seg(40006, "S", 1, options=[("MSS", 1460)]))
    opts_at = 14 + 20 + 20
    variants = [b"\x03\x00\x00\x00", b"\x02\x08\x05\xb4", b"\x03\x03\xc8\x00"]
    recs = []
    for i, o in enumerate(variants):
        f = bytearray(bad[:opts_at] + o.ljust(4, b"\x00"))
        f[14 + 20 + 12] = (24 // 4) << 4
        f[14 + 20 + 1] = 40006 + i & 0xff       # distinct source ports
        recs.append(rec(bytes(f)))
    write("tcp_bad_options", CFG_64, recs)

    # We close first ('C'): FIN-WAIT-1, -2, TIME-WAIT; then a new SYN with
    # a higher sequence number recycles the TIME-WAIT connection.
    sport, c = 40010, ctl(rel_ack=True)
    recs = [rec(seg(sport, "S", 1000), ctl()),
            rec(seg(sport, "A", 1001, 1), c),
            rec(seg(sport, "PA", 1001, 1, b"C"), c),
            rec(seg(sport, "A", 1002, 2), c),
            rec(seg(sport, "FA", 1002, 2), ctl(rel_ack=True, clock_ms=10)),
            rec(seg(sport, "S", 90000), ctl()),
            rec(seg(sport, "A", 90001, 1), c)]
    write("tcp_time_wait_recycle", CFG_CONNS_16, recs)

    # The application refuses connections from port 7: RST after the
    # handshake.
    write("tcp_refused", 0, [rec(seg(7, "S", 1000), ctl()),
                             rec(seg(7, "A", 1001, 1), ctl(rel_ack=True))])

    # SYN cookies: a backlog of one, so the second SYN is answered with a
    # cookie, and its ACK (relative to the cookie) opens the connection.
    c = ctl(rel_ack=True)
    recs = [rec(seg(40020, "S", 1000, options=[("MSS", 1460)]), ctl()),
            rec(seg(40021, "S", 2000, options=[("MSS", 1460)]), ctl()),
            rec(seg(40021, "A", 2001, 1), c),
            rec(seg(40021, "PA", 2001, 1, b"GET / HTTP/1.1\r\n\r\n"), c),
            rec(seg(40021, "A", 2001, 1 + 1), c),   # a bad cookie ACK elsewhere
            rec(seg(40022, "A", 3001, 77), c)]
    write("tcp_syncookie", CFG_CONNS_16, recs, CFG1_BACKLOG_1)

    # An active open to 198.18.0.1:8080 answered by a SYN-ACK with every
    # option, then data both ways, with checksum offload on TX.
    def from_server(flags, seq, ack=0, data=b"", **kw):
        kw.setdefault("window", 65535)
        p = eth() / IP(src=CLI_IP, dst=APP_IP) / TCP(sport=8080, dport=50000, flags=flags,
                                                     seq=seq, ack=ack, **kw)
        return p / data if data else p
    opts = [("MSS", 1400), ("SAckOK", b""), ("Timestamp", (100, 0)), ("WScale", 7)]
    recs = [rec(from_server("SA", 70000, 1, options=opts), ctl(rel_ack=True)),
            rec(from_server("PA", 70001, 1, b"hello", options=[("Timestamp", (101, 0))]),
                ctl(rel_ack=True, clock_ms=50)),
            rec(from_server("FA", 70006, 1 + 6, options=[("Timestamp", (102, 0))]),
                ctl(rel_ack=True, clock_ms=50))]
    write("tcp_active_open", CFG_TX_MULTISEG, recs, CFG1_ACTIVE_OPEN | CFG1_TX_OFFLOAD)

    # SACK, timestamps and window scale negotiated; out-of-order data fills
    # the queue; a large answer is acknowledged with duplicate ACKs and SACK
    # blocks (edges relative to the ISS), which starts SACK recovery.
    sport = 40030
    o = [("MSS", 1000), ("SAckOK", b""), ("Timestamp", (1000, 0)), ("NOP", None),
         ("WScale", 2)]
    recs = [rec(seg(sport, "S", 1000, options=o), ctl()),
            rec(seg(sport, "A", 1001, 1, options=[("Timestamp", (1001, 0))]), c),
            rec(seg(sport, "PA", 1021, 1, b"b" * 20, options=[("Timestamp", (1002, 0))]), c),
            rec(seg(sport, "PA", 1061, 1, b"d" * 20, options=[("Timestamp", (1003, 0))]), c),
            rec(seg(sport, "PA", 1041, 1, b"c" * 20, options=[("Timestamp", (1004, 0))]), c),
            rec(seg(sport, "PA", 1001, 1, b"W" * 20, options=[("Timestamp", (1005, 0))]),
                ctl(rel_ack=True, clock_ms=1))]
    una = 1
    for k in range(4):      # three duplicates with growing SACK blocks, then more
        recs.append(rec(seg(sport, "A", 1081, una, options=[
            ("Timestamp", (1006 + k, 0)), ("NOP", None), ("NOP", None),
            ("SAck", (una + 1000, una + 2000 + 1000 * k))]), ctl(rel_ack=True, clock_ms=1)))
    recs.append(rec(seg(sport, "A", 1081, una + 6000, options=[("Timestamp", (1020, 0))]),
                    ctl(rel_ack=True, clock_ms=10)))
    write("tcp_sack_ooo_recovery", CFG_TX_MULTISEG | CFG_CONNS_16, recs)

    # Keepalive and idle timeout on an established connection that goes
    # quiet; one TIME-WAIT slot and no delayed ACK.
    recs = [rec(seg(40040, "S", 1000), ctl()),
            rec(seg(40040, "A", 1001, 1), ctl(rel_ack=True, clock_ms=3000)),
            rec(seg(40040, "A", 1001, 1), ctl(rel_ack=True, clock_ms=10000)),
            rec(seg(40040, "A", 1001, 1), ctl(rel_ack=True, clock_ms=10000))]
    write("tcp_keepalive_idle", 0, recs, CFG1_KEEPALIVE | CFG1_IDLE_TIMEOUT | CFG1_TIGHT)

    # The receive buffer (64 bytes of room, TCP's buffer beside it): data
    # past the room held and acknowledged, a segment after a hole, the
    # hole filled, a FIN behind held data; round trips for its autotuning
    # and a quiet second for its shrinking.
    sport, c = 40010, ctl(rel_ack=True, clock_ms=10)
    recs = [rec(seg(sport, "S", 2000, options=[("MSS", 1000), ("WScale", 7)]), ctl()),
            rec(seg(sport, "A", 2001, 1), c),
            rec(seg(sport, "PA", 2001, 1, b"x" * 1000), c),
            rec(seg(sport, "PA", 3001, 1, b"y" * 1000), c),
            rec(seg(sport, "PA", 5001, 1, b"z" * 1000), c),
            rec(seg(sport, "PA", 4001, 1, b"w" * 1000), ctl(rel_ack=True, clock_ms=50)),
            rec(seg(sport, "PA", 6001, 1, b"v" * 1000), ctl(rel_ack=True, clock_ms=3000)),
            rec(seg(sport, "FA", 7001, 1), c)]
    write("tcp_rcvbuf_held", CFG_64, recs)
    ipv6_corpus()
    return 0


if __name__ == "__main__":
    sys.exit(main())
