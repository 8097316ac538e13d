# SPDX-License-Identifier: BSD-3-Clause
"""Frames of the floods in pktgen-scripts/, built by hand (struct, not
scapy: a flood needs tens of thousands a second) and written to a packet
socket on the kernel side of the appliance's tap. Runs as root inside the
appliance's namespace (import it from a script given to
Appliance.ns_python); only addresses of 198.18.0.0/24 are ever used.
"""
import socket
import struct
import time

ETH_P_ALL = 0x0003
ETH_IPV4, ETH_ARP = 0x0800, 0x0806
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def mac(text):
    return bytes.fromhex(text.replace(":", ""))


def ip(text):
    return socket.inet_aton(text)


def ether(dst, src, etype, payload):
    return dst + src + struct.pack("!H", etype) + payload


def ipv4(src, dst, proto, payload, ident=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0, 64, proto, 0,
                    src, dst)
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def l4_checksummed(src, dst, proto, seg, at):
    """seg with its checksum (at offset at) over the IPv4 pseudo-header."""
    c = csum(src + dst + struct.pack("!BBH", 0, proto, len(seg)) + seg)
    return seg[:at] + struct.pack("!H", c) + seg[at + 2:]


def tcp_frame(dst_mac, src_mac, src, dst, sport, dport, seq, ack, flags, win=65535,
              data=b""):
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                      5 << 4, flags, win, 0, 0) + data
    return ether(dst_mac, src_mac, ETH_IPV4,
                 ipv4(src, dst, 6, l4_checksummed(src, dst, 6, seg, 16)))


def udp_frame(dst_mac, src_mac, src, dst, sport, dport, data):
    seg = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    return ether(dst_mac, src_mac, ETH_IPV4,
                 ipv4(src, dst, 17, l4_checksummed(src, dst, 17, seg, 6)))


def udp_frame_of_size(dst_mac, src_mac, src, dst, size):
    """A UDP frame of size bytes on the wire without FCS (14 + 20 + 8 at
    least: 42)."""
    return udp_frame(dst_mac, src_mac, src, dst, 9, 9, b"\0" * (size - 42))


def arp_frame(src_mac, spa, tpa, op=1, dst_mac=b"\xff" * 6, tha=b"\0" * 6):
    body = struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, op, src_mac, spa, tha, tpa)
    return ether(dst_mac, src_mac, ETH_ARP, body)


def parse(frame):
    """(ethertype, fields) of an IPv4/TCP or ARP frame, else (type, None)."""
    etype = struct.unpack("!H", frame[12:14])[0]
    if etype == ETH_ARP and len(frame) >= 42:
        op, sha, spa, tha, tpa = struct.unpack("!6xH6s4s6s4s", frame[14:42])
        return etype, {"op": op, "sha": sha, "spa": socket.inet_ntoa(spa),
                       "tpa": socket.inet_ntoa(tpa)}
    if etype == ETH_IPV4 and len(frame) >= 54 and frame[23] == 6:
        ihl = (frame[14] & 0x0f) * 4
        tot = struct.unpack("!H", frame[16:18])[0]
        t = 14 + ihl
        sport, dport, seq, ack, off, flags, win = struct.unpack("!HHIIBBH", frame[t:t + 16])
        return etype, {"src": socket.inet_ntoa(frame[26:30]),
                       "dst": socket.inet_ntoa(frame[30:34]), "sport": sport,
                       "dport": dport, "seq": seq, "ack": ack, "flags": flags, "win": win,
                       "len": tot - ihl - (off >> 4) * 4}
    return etype, None


class Wire:
    """A packet socket on iface: sends frames, and reads what passes."""

    def __init__(self, iface):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind((iface, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
        self.mac = self.sock.getsockname()[4]

    def flood(self, frames, seconds):
        """Writes the frames as fast as the tap takes them, for at most
        seconds; returns (frames written, seconds taken)."""
        sent = 0
        t0 = time.monotonic()
        for f in frames:
            while True:
                try:
                    self.sock.send(f)
                    sent += 1
                    break
                except OSError:        # the tap's queue is full: a flood
                    time.sleep(0.0005)
                    if time.monotonic() - t0 > seconds:
                        break
            if time.monotonic() - t0 > seconds:
                break
        return sent, time.monotonic() - t0

    def read(self, seconds, keep):
        """Frames that pass within seconds (both ways) for which keep(frame,
        incoming) is true."""
        got = []
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return got
            self.sock.settimeout(left)
            try:
                frame, addr = self.sock.recvfrom(65536)
            except socket.timeout:
                return got
            if keep(frame, addr[2] != socket.PACKET_OUTGOING):
                got.append(frame)

    def drain(self):
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(65536)
        except BlockingIOError:
            pass
        finally:
            self.sock.setblocking(True)

    def close(self):
        self.sock.close()


class Fetcher:
    """curl of url in a loop while a flood runs: until stop() and at least
    `least` fetches, at most `seconds` (and 500 fetches). Each fetch is
    (HTTP status, seconds, curl's error)."""

    def __init__(self, url, least=5, seconds=60):
        import threading
        self.url, self.least, self.seconds = url, least, seconds
        self.results = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop)
        self._thread.start()

    def _loop(self):
        import subprocess
        deadline = time.monotonic() + self.seconds
        while ((not self._stop.is_set() or len(self.results) < self.least)
               and time.monotonic() < deadline and len(self.results) < 500):
            t0 = time.monotonic()
            r = subprocess.run(["curl", "-sS", "-m", "5", "-o", "/dev/null", "-w",
                                "%{http_code}", self.url], capture_output=True, text=True)
            self.results.append((r.stdout, round(time.monotonic() - t0, 3),
                                 r.stderr.strip()))

    def stop(self):
        self._stop.set()
        self._thread.join(self.seconds + 10)
        return self.results
