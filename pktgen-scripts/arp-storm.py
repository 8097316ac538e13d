#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the ARP storm of arp-storm.pkt as a pcap for Pktgen's pcap mode
(`-s 0:FILE`): Pktgen 23.06 builds no ARP request of its own (`set 0 type
arp` makes replies, with the sender address written over the sender MAC).

Requests from 198.18.0.3-254 (each with a MAC of its own), half for
ewykd's address and half for other addresses of the subnet, in a
reproducible order. tests/integration/test_floods.py::test_arp_storm sends
this very file into ewykd.

Usage: arp-storm.py [--count N] [--ewykd 198.18.0.2] OUT.pcap
"""
import argparse
import random
import socket
import struct
import sys


def arp_request(sha, spa, tpa):
    return (b"\xff" * 6 + sha + struct.pack("!H", 0x0806) +
            struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, sha, spa, b"\0" * 6, tpa) +
            b"\0" * 18)		# padded to 60 bytes, as a NIC would


def storm(count, ewykd, seed=826):
    rnd = random.Random(seed)
    net = ewykd.rsplit(".", 1)[0]
    for i in range(count):
        host = rnd.randint(3, 254)
        sha = bytes.fromhex("0200000000%02x" % host)[:5] + bytes([i % 256])
        target = ewykd if i % 2 else f"{net}.{rnd.randint(3, 254)}"
        yield arp_request(sha, socket.inet_aton(f"{net}.{host}"), socket.inet_aton(target))


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for n, frame in enumerate(frames):
            f.write(struct.pack("<IIII", n // 1000000, n % 1000000, len(frame), len(frame)))
            f.write(frame)


def read_pcap(path):
    """The frames of a pcap written by write_pcap (for the tests)."""
    with open(path, "rb") as f:
        data = f.read()
    frames, at = [], 24
    while at < len(data):
        incl = struct.unpack("<I", data[at + 8:at + 12])[0]
        frames.append(data[at + 16:at + 16 + incl])
        at += 16 + incl
    return frames


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=100000)
    p.add_argument("--ewykd", default="198.18.0.2", help="ewykd's address")
    p.add_argument("out")
    a = p.parse_args()
    if not 1 <= a.count <= 10000000:
        sys.exit("arp-storm.py: --count: 1 to 10000000")
    try:
        socket.inet_aton(a.ewykd)
    except OSError:
        sys.exit(f"arp-storm.py: --ewykd {a.ewykd}: not an IPv4 address")
    write_pcap(a.out, storm(a.count, a.ewykd))


if __name__ == "__main__":
    main()
