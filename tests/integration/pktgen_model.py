# SPDX-License-Identifier: BSD-3-Clause
"""The frames Pktgen-DPDK 23.06.1 sends for a .pkt script of
pktgen-scripts/, by Pktgen's own rules, so that the tests send ewykd what
Pktgen would, and a script that leaves an address at Pktgen's default or
misses the sizes or ports its header promises fails. Each rule names
where it lives in Pktgen's source (github.com/pktgen/Pktgen-DPDK, app/):

- Defaults of a port's packets (pktgen-cmds.c pktgen_port_defaults(),
  pktgen.h DEFAULT_*): 192.168.<pid>.1 to 192.168.<pid+1>.1, TCP from
  port 1234 to 5678, 64-byte frames, flags ACK, seq 0x12378, ack 0x12390;
  the destination MAC is the next port's (none with a lone port:
  00:00:00:00:00:00), the source MAC the port's own.
- Defaults of the range (pktgen-range.c pktgen_range_setup(), at start-up,
  from the packet of then): the destination address steps by 1 through
  192.168.<pid+1>.1-254, the source stays at 192.168.<pid>.1, both TCP
  ports step by 1 through 0-65535, the size stays at 64, the MACs at
  the packet's.
- Sizes count the FCS and are kept without it, 64 to 1518
  (pktgen-cmds.c range_set_pkt_size()). The IP total length is the frame
  less its Ethernet header (pktgen-tcp.c pktgen_tcp_hdr_ctor(), 20-byte
  TCP header, window 8192): the smallest frame carries 6 bytes of TCP data
  or 18 of UDP. The data is the ABC fill pattern at the frame's own
  offsets (pktgen.c pktgen_fill_pattern()).
- Range stepping (pktgen-range.c pktgen_range_ctor()), before each frame
  is built: a field whose inc is 0 takes its start value; any other steps
  from the range packet's current value, not from start: value + inc,
  the minimum once past the maximum, the maximum when below the minimum
  (ports in 32 bits since Pktgen-DPDK#184, April 2023: the minimum, not a
  16-bit wrap). Port steps are capped at 64 (pktgen-cmds.c
  range_set_src_port(), range_set_dst_port()). "start" of a MAC also sets
  the range packet's own (range_set_dest_mac()); of an address or port it
  does not, so a stepping field starts from the range packet's default.
- Range frames are built once, one per mbuf of the queue's "Range TX" pool
  (pktgen.c pktgen_setup_packets() walks the pool with
  rte_mempool_obj_iter(), pktgen_setup_cb() steps the range for each), a
  pool of MAX_MBUFS_PER_PORT(rxd, txd) = (1024 + 2048) * 8 = 24 576 mbufs
  without a cache (pktgen-port-cfg.c pktgen_config_ports(),
  pktgen-constants.h): those frames leave over and over, in that order; a
  range longer than the pool never reaches its end.

Only the commands the scripts use are known; any other is an error, so a
script cannot drift from what the model checks.
"""
import ipaddress
import socket
import struct

from floods import TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN, tcp_frame, udp_frame

FCS = 4
MIN_FRAME, MAX_FRAME = 64, 1518          # with the FCS
RANGE_POOL = (1024 + 2048) * 8           # frames of the Range TX pool
PORT_INC_MAX = 64
WINDOW = 8192                            # DEFAULT_WND_SIZE
PATTERN = b"abcdefghijklmnopqrstuvwxyz012345"
FLAGS = {"fin": TCP_FIN, "syn": TCP_SYN, "rst": TCP_RST, "psh": TCP_PSH, "ack": TCP_ACK,
         "urg": 0x20, "all": 0x3f}
NO_MAC = 0                               # no next port: zeros


def ip4(text):
    return int(ipaddress.IPv4Address(text.split("/")[0]))


def mac48(text):
    return int(text.replace(":", ""), 16)


def size_without_fcs(size):
    """range_set_pkt_size(): clamped to Ethernet's sizes, kept without FCS."""
    return min(max(size, MIN_FRAME), MAX_FRAME) - FCS


class Range:
    """One field of the range: start, min, max, inc (range_info_t)."""

    def __init__(self, start, lo, hi, inc):
        self.start, self.min, self.max, self.inc = start, lo, hi, inc

    def step(self, current, bits=32):
        """pktgen_range_ctor(): the field's next value from current."""
        if self.inc == 0:
            return self.start
        v = (current + self.inc) & ((1 << bits) - 1)
        if v < self.min:
            v = self.max
        elif v > self.max:
            v = self.min
        return v


class Port:
    """A Pktgen port: its single packet, its range, its mode and count."""

    def __init__(self, mac, pid=0):
        own = mac48(mac) if isinstance(mac, str) else int.from_bytes(mac, "big")
        self.single = {"dst_mac": NO_MAC, "src_mac": own,
                       "src_ip": ip4(f"192.168.{pid}.1"), "dst_ip": ip4(f"192.168.{pid + 1}.1"),
                       "sport": 1234, "dport": 5678, "proto": "tcp", "size": MIN_FRAME - FCS,
                       "flags": TCP_ACK, "seq": 0x12378, "ack": 0x12390}
        s = self.single
        self.range = {
            "dst_ip": Range(s["dst_ip"], s["dst_ip"], ip4(f"192.168.{pid + 1}.254"), 1),
            "src_ip": Range(s["src_ip"], s["src_ip"], ip4(f"192.168.{pid}.254"), 0),
            "dport": Range(s["dport"], 0, 65535, 1),
            "sport": Range(s["sport"], 0, 65535, 1),
            "size": Range(s["size"], MIN_FRAME - FCS, MAX_FRAME - FCS, 0),
            "dst_mac": Range(s["dst_mac"], 0, 0, 0),
            "src_mac": Range(s["src_mac"], 0, 0, 0),
            "seq": Range(s["seq"], 0, 0xffffffff // 8, 0),
            "ack": Range(s["ack"], 0, 0xffffffff // 8, 0),
        }
        # The range packet's own values, where stepping starts.
        self.range_pkt = {k: s[k] for k in ("dst_mac", "src_mac", "src_ip", "dst_ip", "sport",
                                            "dport", "size", "seq", "ack", "proto", "flags")}
        self.mode = "single"
        self._pool = None
        self.count = 0                   # 0: forever
        self.rate = 100
        self.burst = 32

    # -- commands -------------------------------------------------------------
    def run(self, path, extra=()):
        """Applies a .pkt file's commands, then extra ones (as flood.lua's
        SET applies them after the file)."""
        with open(path) as f:
            lines = [(f"{path}:{n}", line) for n, line in enumerate(f, 1)]
        lines += [(f"extra {i}", cmd) for i, cmd in enumerate(extra)]
        for where, line in lines:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            try:
                self.command(words)
            except (KeyError, ValueError, IndexError) as e:
                raise ValueError(f"{where}: {line.strip()!r}: the model does not know it "
                                 f"({e})") from None
        return self

    def command(self, w):
        if self._pool is not None:
            raise ValueError("a command after the frames were built")
        if w[0] in ("start", "stop", "str", "stp") and w[1:] == ["0"]:
            return
        if w[0] in ("enable", "disable") and w[1] == "0" and len(w) == 3:
            mode = {"range": "range", "pcap": "pcap"}[w[2]]
            self.mode = mode if w[0] == "enable" else "single"
            return
        if w[1] != "0":
            raise ValueError("port 0 only")
        if w[0] == "set":
            self.set(w[2:])
        elif w[0] == "range":
            self.set_range(w[2:])
        else:
            raise KeyError(w[0])

    def set(self, w):
        s = self.single
        key, rest = w[0], w[1:]
        if key == "type" and rest == ["ipv4"]:
            return
        if key == "proto" and rest[0] in ("tcp", "udp"):
            s["proto"] = rest[0]
        elif key in ("src", "dst") and rest[0] == "mac":
            s[f"{key}_mac"] = mac48(rest[1])
        elif key in ("src", "dst") and rest[0] == "ip":
            s[f"{key}_ip"] = ip4(rest[1])
        elif key in ("sport", "dport"):
            s[key] = int(rest[0])
        elif key == "size":
            s["size"] = size_without_fcs(int(rest[0]))
        elif key in ("count", "burst"):
            setattr(self, key, int(rest[0]))
        elif key == "rate":
            self.rate = float(rest[0])
        elif key == "tcp" and rest[0] == "flag":
            self._flag(s, rest[1], rest[2])
        elif key == "tcp" and rest[0] in ("seq", "ack"):
            s[rest[0]] = int(rest[1]) & 0xffffffff
        else:
            raise KeyError(key)

    def set_range(self, w):
        r = self.range
        if w[0] == "proto" and w[1] in ("tcp", "udp"):
            self.range_pkt["proto"] = w[1]          # range_set_proto()
            return
        if w[0] == "tcp" and w[1] == "flag":
            self._flag(self.range_pkt, w[2], w[3])  # range_set_tcp_flag_set()
            return
        if w[0] == "size":
            what, value = w[1], int(w[2])
            field = r["size"]
            value = min(value, MAX_FRAME) if what == "inc" else size_without_fcs(value)
        elif w[0] in ("src", "dst") and w[1] in ("mac", "ip", "port"):
            what = w[2]
            name = {"mac": f"{w[0]}_mac", "ip": f"{w[0]}_ip", "port": f"{w[0][0]}port"}[w[1]]
            field = r[name]
            value = (mac48(w[3]) if w[1] == "mac" else
                     ip4(w[3]) if w[1] == "ip" else int(w[3]))
            if w[1] == "port" and what == "inc":
                value = min(value, PORT_INC_MAX)
            if w[1] == "mac" and what == "start":
                self.range_pkt[name] = value
        else:
            raise KeyError(" ".join(w[:2]))
        setattr(field, {"start": "start", "min": "min", "max": "max", "inc": "inc"}[what],
                value)

    @staticmethod
    def _flag(pkt, how, which):
        bit = {"set": FLAGS[which], "clr": 0}[how]
        pkt["flags"] = pkt["flags"] | bit if bit else pkt["flags"] & ~FLAGS[which]

    # -- frames ---------------------------------------------------------------
    def packets(self, n):
        """The first n packets of a start, as dicts of their fields."""
        if self.mode == "pcap":
            raise ValueError("pcap mode: the frames are the pcap's")
        if self.mode == "single":
            return [dict(self.single)] * n
        pool = self.range_pool()
        return [pool[i % len(pool)] for i in range(n)]

    def range_pool(self):
        """The range pool as the first start builds it; steps the range
        packet as Pktgen does (a second start would go on from there)."""
        if self._pool is None:
            cur = self.range_pkt
            widths = {"dst_mac": 64, "src_mac": 64}
            self._pool = []
            for _ in range(RANGE_POOL):
                for name, field in self.range.items():
                    cur[name] = field.step(cur[name], widths.get(name, 32))
                self._pool.append(dict(cur))
        return self._pool

    def frames(self, n):
        """The first n frames sent, without FCS."""
        return [frame(p) for p in self.packets(n)]


def frame(p):
    """A packet's frame as pktgen_packet_ctor() builds it: headers over the
    fill pattern."""
    dst, src = p["dst_mac"].to_bytes(6, "big"), p["src_mac"].to_bytes(6, "big")
    sip, dip = struct.pack("!I", p["src_ip"]), struct.pack("!I", p["dst_ip"])
    data_at = 14 + 20 + (20 if p["proto"] == "tcp" else 8)
    data = bytes(PATTERN[i & 31] for i in range(data_at, p["size"]))
    if p["proto"] == "tcp":
        return tcp_frame(dst, src, sip, dip, p["sport"], p["dport"], p["seq"], p["ack"],
                         p["flags"], win=WINDOW, data=data)
    return udp_frame(dst, src, sip, dip, p["sport"], p["dport"], data)


def describe(p):
    """A packet's addresses, for messages."""
    def m(v):
        return ":".join(f"{b:02x}" for b in v.to_bytes(6, "big"))
    return (f"{m(p['src_mac'])} {socket.inet_ntoa(struct.pack('!I', p['src_ip']))}:"
            f"{p['sport']} > {m(p['dst_mac'])} "
            f"{socket.inet_ntoa(struct.pack('!I', p['dst_ip']))}:{p['dport']} "
            f"{p['proto']} {p['size'] + FCS} bytes")


def load(path, generator_mac, extra=()):
    """The port after a script (and extra commands) ran."""
    return Port(generator_mac).run(path, extra)

