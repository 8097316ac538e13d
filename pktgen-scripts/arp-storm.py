#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the ARP storm of arp-storm.pkt as a pcap for Pktgen's pcap mode
(`-s 0:FILE`): Pktgen 23.06 builds no ARP request of its own (`set 0 type
arp` makes replies, with the sender address written over the sender MAC).

Requests from 198.18.0.3-254 (ewykd's address left out), half for ewykd's
address and half for other addresses of the subnet, in a reproducible
order. Each sender has a MAC of its own, 02:00:00:00:01:<host>, the same
in every request it sends: never ewykd's nor the generator's, so that a
learning bridge or switch never moves ewykd's MAC to the generator's port.
tests/integration/test_floods.py::test_arp_storm sends this very file into
ewykd.

Usage: arp-storm.py [--count N] [--ewykd 198.18.0.2] [--ewykd-mac MAC]
                    [--generator-mac MAC] OUT.pcap
"""
import argparse
import random
import socket
import struct


def arp_request(sha, spa, tpa):
    return (b"\xff" * 6 + sha + struct.pack("!H", 0x0806) +
            struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, sha, spa, b"\0" * 6, tpa) +
            b"\0" * 18)		# padded to 60 bytes, as a NIC would


def sender_mac(host):
    """The MAC of the sender at host (the last byte of its address)."""
    return bytes([0x02, 0, 0, 0, 0x01, host])


def storm(count, ewykd, seed=826):
    rnd = random.Random(seed)
    net, own = ewykd.rsplit(".", 1)
    hosts = [h for h in range(3, 255) if h != int(own)]
    for i in range(count):
        host = rnd.choice(hosts)
        target = ewykd if i % 2 else f"{net}.{rnd.choice(hosts)}"
        yield arp_request(sender_mac(host), socket.inet_aton(f"{net}.{host}"),
                          socket.inet_aton(target))


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
    p.add_argument("--ewykd-mac", default="02:00:00:00:00:02", help="ewykd's MAC")
    p.add_argument("--generator-mac", default="02:00:00:00:00:01",
                   help="the MAC of Pktgen's port")
    p.add_argument("out")
    a = p.parse_args()
    if not 1 <= a.count <= 10000000:
        p.error("--count: 1 to 10000000")
    try:
        socket.inet_aton(a.ewykd)
    except OSError:
        p.error(f"--ewykd {a.ewykd}: not an IPv4 address")
    for opt, text in (("--ewykd-mac", a.ewykd_mac), ("--generator-mac", a.generator_mac)):
        try:
            mac = bytes.fromhex(text.replace(":", ""))
        except ValueError:
            mac = b""
        if len(mac) != 6:
            p.error(f"{opt} {text}: not a MAC address")
        if mac[:5] == sender_mac(0)[:5]:
            p.error(f"{opt} {text}: a sender would have it "
                    "(senders are 02:00:00:00:01:<host>)")
    write_pcap(a.out, storm(a.count, a.ewykd))


if __name__ == "__main__":
    main()
