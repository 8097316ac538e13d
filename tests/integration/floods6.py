# SPDX-License-Identifier: BSD-3-Clause
"""IPv6 frames for floods, built by hand (struct, not scapy: a flood needs
tens of thousands a second), beside floods.py's IPv4 ones and written
with its Wire. Runs as root inside the appliance's namespace; only
addresses of 2001:2::/64 (and link-local ones) are ever used.
"""
import socket
import struct

from floods import csum, ether

ETH_IPV6 = 0x86dd
ICMP6 = 58


def ip6(text):
    return socket.inet_pton(socket.AF_INET6, text)


def ipv6(src, dst, nh, payload, hlim=64):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nh, hlim, src, dst) + payload


def l4_checksummed6(src, dst, nh, seg, at):
    """seg with its checksum (at offset at) over the IPv6 pseudo-header."""
    c = csum(src + dst + struct.pack("!I3xB", len(seg), nh) + seg)
    return seg[:at] + struct.pack("!H", c) + seg[at + 2:]


def tcp6_frame(dst_mac, src_mac, src, dst, sport, dport, seq, ack, flags, win=65535):
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                      5 << 4, flags, win, 0, 0)
    return ether(dst_mac, src_mac, ETH_IPV6,
                 ipv6(src, dst, 6, l4_checksummed6(src, dst, 6, seg, 16)))


def icmp6_frame(dst_mac, src_mac, src, dst, msg, hlim=255):
    return ether(dst_mac, src_mac, ETH_IPV6,
                 ipv6(src, dst, ICMP6, l4_checksummed6(src, dst, ICMP6, msg, 2), hlim))


def solicited_node(addr):
    """ff02::1:ffXX:XXXX of an address, and its MAC (RFC 2464 7)."""
    g = ip6("ff02::1:ff00:0")[:13] + addr[13:]
    return g, b"\x33\x33" + g[12:]


def ns_frame(src_mac, src, target, lladdr):
    """A neighbour solicitation for target to its solicited-node group,
    with a source link-layer address option."""
    group, group_mac = solicited_node(target)
    msg = struct.pack("!BBHI16sBB6s", 135, 0, 0, 0, target, 1, 1, lladdr)
    return icmp6_frame(group_mac, src_mac, src, group, msg)


def ra_frame(src_mac, src):
    """A router advertisement to all nodes: hop limit 64, a lifetime of
    1800 s, no option."""
    msg = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0, 1800, 0, 0)
    return icmp6_frame(b"\x33\x33\0\0\0\x01", src_mac, src, ip6("ff02::1"), msg)


def parse6(frame):
    """(ICMPv6 type, next header) of an IPv6 frame without extension
    headers, else (None, None)."""
    if len(frame) < 55 or frame[12:14] != b"\x86\xdd":
        return None, None
    return (frame[54] if frame[20] == ICMP6 else None), frame[20]
