# SPDX-License-Identifier: BSD-3-Clause
"""A minimal TCP client over a packet socket, for segments the kernel would
never send: forged RSTs and SYNs, out-of-window data, overlapping and
duplicate pieces, malformed options. Runs as root inside the appliance's
namespace (import it from a script given to Appliance.ns_python).

The kernel sees the appliance's answers too and would reset connections it
does not know: the caller drops the kernel's outgoing RSTs for the client's
ports with an nft rule (see test_tcp_scapy.py).

Addresses of either family: an IPv6 client's segments may carry extension
headers (ext, a scapy chain put between IPv6 and TCP).
"""
import random
import re
import select
import socket
import time

import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import IP, TCP, Ether, Raw, get_if_hwaddr, raw  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
MSS = 1400


def kernel_rst_filter(table, ports, iface):
    """An nft script that drops the kernel's RSTs from the raw clients'
    ports (ports: (low, high)) out of iface: the kernel would reset their
    connections, which it does not know. Both families."""
    return f"""table inet {table} {{
    chain tx {{
        type filter hook postrouting priority 0; policy accept;
        oifname "{iface}" tcp sport {ports[0]}-{ports[1]} tcp flags & rst == rst drop
    }}
}}
"""


def seq_add(a, n):
    return (a + n) & 0xffffffff


def seq_diff(a, b):
    """a - b in sequence space, as a signed number."""
    d = (a - b) & 0xffffffff
    return d - (1 << 32) if d >= 1 << 31 else d


class RawTcp:
    def __init__(self, iface, src_ip, dst_ip, dst_mac, sport, dport=80, isn=None, ext=None):
        self.v6 = ":" in dst_ip
        self.ext = ext
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind((iface, 0))
        self.mac = get_if_hwaddr(iface)
        self.dst_mac = dst_mac
        self.src_ip, self.dst_ip = src_ip, dst_ip
        self.sport, self.dport = sport, dport
        self.isn = random.getrandbits(32) if isn is None else isn
        self.snd_nxt = self.isn
        self.snd_una = self.isn          # highest ACK the appliance sent
        self.iss = None                  # the appliance's initial sequence number
        self.rcv_nxt = None
        self.data = bytearray()          # the appliance's in-order bytes
        self.segs = []                   # every segment from the appliance
        self.fin = False
        self.rst = False
        self.synack = None

    def close(self):
        self.sock.close()

    # -- sending ------------------------------------------------------------
    def frame(self, flags, seq=None, ack=None, data=b"", window=65535, options=None,
              raw_opts=None):
        seq = self.snd_nxt if seq is None else seq
        ack = (self.rcv_nxt or 0) if ack is None else ack
        if raw_opts is not None:
            # Options scapy would refuse to build: bytes under the data offset.
            opts = raw_opts + b"\x00" * (-len(raw_opts) % 4)
            tcp = TCP(sport=self.sport, dport=self.dport, flags=flags, seq=seq, ack=ack,
                      window=window, dataofs=5 + len(opts) // 4) / Raw(opts + data)
        else:
            tcp = TCP(sport=self.sport, dport=self.dport, flags=flags, seq=seq, ack=ack,
                      window=window, options=options or [])
            if data:
                tcp = tcp / Raw(data)
        if self.v6:
            ip = IPv6(src=self.src_ip, dst=self.dst_ip)
            if self.ext is not None:
                ip = ip / self.ext.copy()
        else:
            ip = IP(src=self.src_ip, dst=self.dst_ip)
        return raw(Ether(src=self.mac, dst=self.dst_mac) / ip / tcp)

    def send(self, flags, **kw):
        self.sock.send(self.frame(flags, **kw))

    def ack(self):
        self.send("A")

    # -- receiving ----------------------------------------------------------
    def pump(self, timeout, until=None):
        """Reads the appliance's segments for this connection for up to
        timeout seconds (less once until() holds), ACKing data and FIN."""
        deadline = time.monotonic() + timeout
        while True:
            if until is not None and until():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return until() if until is not None else False
            r, _, _ = select.select([self.sock], [], [], min(left, 0.05))
            if not r:
                continue
            frame, addr = self.sock.recvfrom(65535)
            etype = b"\x86\xdd" if self.v6 else b"\x08\x00"
            if addr[2] == PACKET_OUTGOING or len(frame) < 54 or frame[12:14] != etype:
                continue
            p = Ether(frame)
            L3 = IPv6 if self.v6 else IP
            if L3 not in p or TCP not in p or p[L3].src != self.dst_ip or \
                    p[L3].dst != self.src_ip or p[TCP].sport != self.dport or \
                    p[TCP].dport != self.sport:
                continue
            ip, t = p[L3], p[TCP]
            if self.v6:		# the appliance sends no extension header
                start, end = 54 + t.dataofs * 4, 54 + ip.plen
            else:
                start, end = 14 + ip.ihl * 4 + t.dataofs * 4, 14 + ip.len
            self.on_segment(t, frame[start:end])

    def on_segment(self, t, payload):
        flags = str(t.flags)
        self.segs.append({"flags": flags, "seq": t.seq, "ack": t.ack, "len": len(payload),
                          "win": t.window, "options": list(t.options), "t": time.monotonic()})
        if "R" in flags:
            self.rst = True
            return
        if "S" in flags and "A" in flags:
            self.synack = self.segs[-1]
            if self.iss is None:
                self.iss = t.seq
                self.rcv_nxt = seq_add(t.seq, 1)
        if "A" in flags and seq_diff(t.ack, self.snd_una) > 0:
            self.snd_una = t.ack
        if self.rcv_nxt is None:
            return
        owe_ack = False
        if payload:
            off = seq_diff(self.rcv_nxt, t.seq)      # bytes already held
            if 0 <= off < len(payload):
                self.data += payload[off:]
                self.rcv_nxt = seq_add(self.rcv_nxt, len(payload) - off)
            owe_ack = True
        if "F" in flags and seq_add(t.seq, len(payload)) == self.rcv_nxt and not self.fin:
            self.fin = True
            self.rcv_nxt = seq_add(self.rcv_nxt, 1)
            owe_ack = True
        if owe_ack:
            self.ack()

    def acks_since(self, index):
        """Pure ACKs (no data, no SYN/FIN/RST) received after segs[index:]."""
        return [s for s in self.segs[index:]
                if s["flags"] == "A" and s["len"] == 0]

    # -- a conversation -----------------------------------------------------
    def connect(self, options=None, raw_opts=None, timeout=3.0):
        """Sends a SYN; on a SYN-ACK completes the handshake. Returns
        'established', 'reset' or 'silent'."""
        if options is None and raw_opts is None:
            options = [("MSS", MSS)]
        self.send("S", seq=self.isn, ack=0, options=options, raw_opts=raw_opts)
        self.snd_nxt = seq_add(self.isn, 1)
        self.snd_una = self.snd_nxt
        self.pump(timeout, until=lambda: self.iss is not None or self.rst)
        if self.iss is None:
            return "reset" if self.rst else "silent"
        self.ack()
        return "established"

    def deliver(self, data, pieces=None, twice=False, timeout=5.0):
        """Sends data as the given (start, end) pieces, then retransmits
        from the appliance's ACK until all of it is acknowledged (an
        appliance without an out-of-order queue drops what lies past a
        hole). Returns True once everything is acknowledged."""
        base = self.snd_nxt
        for start, end in pieces or [(0, len(data))]:
            for _ in range(2 if twice else 1):
                self.send("PA", seq=seq_add(base, start), data=data[start:end])
        self.snd_nxt = seq_add(base, len(data))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pump(0.3, until=lambda: self.snd_una == self.snd_nxt):
                return True
            off = seq_diff(self.snd_una, base)
            if self.rst or not 0 <= off < len(data):
                return False
            self.send("PA", seq=self.snd_una, data=data[off:off + MSS])
        return False

    def read_response(self, timeout=5.0):
        """Waits for one complete HTTP response in the received bytes."""
        self.pump(timeout, until=lambda: http_complete(self.data) or self.fin or self.rst)
        return bytes(self.data)

    def linger(self, seconds):
        """Keeps ACKing whatever comes for a while (extra answers show up)."""
        self.pump(seconds)

    def finish(self, timeout=3.0):
        """Our FIN, the appliance's FIN; True on a clean close."""
        self.send("FA")
        self.snd_nxt = seq_add(self.snd_nxt, 1)
        return self.pump(timeout, until=lambda: self.fin and self.snd_una == self.snd_nxt)

    def abort(self):
        self.send("R", seq=self.snd_nxt, ack=0)


def http_complete(data):
    head, sep, body = bytes(data).partition(b"\r\n\r\n")
    if not sep:
        return False
    m = re.search(rb"(?mi)^content-length:\s*(\d+)\s*$", head)
    return m is not None and len(body) >= int(m.group(1))


def http_responses(data):
    """Splits a byte stream into (status line, body) responses framed by
    Content-Length; returns (responses, leftover bytes)."""
    out, rest = [], bytes(data)
    while rest:
        head, sep, body = rest.partition(b"\r\n\r\n")
        if not sep:
            break
        m = re.search(rb"(?mi)^content-length:\s*(\d+)\s*$", head)
        n = int(m.group(1)) if m else 0
        if len(body) < n:
            break
        out.append((head.split(b"\r\n")[0].decode(errors="replace"), body[:n]))
        rest = body[n:]
    return out, rest
