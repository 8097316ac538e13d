#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seeds of fuzz_quic (tests/fuzz/quic/corpus): the first two datagrams of
a real client (gtlsclient, Debian's ngtcp2-client) to a UDP socket on
loopback (an Initial with its ClientHello, and its retransmission), and
hand-made ones: a version not spoken, a short header for no connection.
Each in the target's record format. Run from the project's root:
    tests/fuzz/gen_quic_corpus.py tests/fuzz/quic/corpus"""
import socket, subprocess, sys, os
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.settimeout(5)
p = subprocess.Popen(["gtlsclient", "-q", "--timeout=2s", "127.0.0.1", str(port), f"https://127.0.0.1:{port}/"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
got = []
try:
    while len(got) < 2:
        d, _ = s.recvfrom(4096)
        got.append(d)
finally:
    p.kill(); p.wait()
print([len(g) for g in got])
def rec(ctl, b): return bytes([ctl, len(b) >> 8, len(b) & 0xff]) + b
out = sys.argv[1]
open(os.path.join(out, "initial"), "wb").write(rec(0, got[0]))
open(os.path.join(out, "initial-twice-later"), "wb").write(rec(8, got[0]) + rec(16, got[1]))
open(os.path.join(out, "initial-then-migrate"), "wb").write(rec(0, got[0]) + rec(1, got[0]))
unk = bytes([0xc0]) + (0x1a2a3a4a).to_bytes(4, "big") + bytes([8]) + bytes(range(8)) + bytes([8]) + bytes(range(8))
open(os.path.join(out, "unknown-version"), "wb").write(rec(0, unk + bytes(1200 - len(unk))))
short = bytes([0x40]) + os.urandom(16) + os.urandom(30)
open(os.path.join(out, "short-header"), "wb").write(rec(0, short))
