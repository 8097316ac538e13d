#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""h2_frames.py HOST PORT < STEPS

An HTTP/2 client (prior knowledge, cleartext) that sends what it is told,
frame by frame, right or wrong, and reports what the server wrote. STEPS
is a JSON list; each step is {"send": HEX, "until": [TYPE, STREAM] or
null, "wait": SECONDS}: its bytes are sent, then the answer is read until
a frame of that type on that stream came (or the connection closed, or
the wait ran out). After the last step it reads until the server closes
or is quiet for a second. The connection preface is the caller's.

Prints a JSON list of the frames read, each [STEP, TYPE, FLAGS, STREAM,
PAYLOAD_HEX, HEADERS]: HEADERS is the decoded header list of a HEADERS
frame (python3-hpack, every block in order), else null; and a last
element "closed" or "open".
"""
import json
import socket
import sys
import time

import hpack


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    steps = json.load(sys.stdin)
    s = socket.create_connection((host, port), timeout=5)
    dec = hpack.Decoder()
    buf = b""
    frames = []
    closed = False

    def read(step, until, wait):
        nonlocal buf, closed
        end = time.monotonic() + wait
        while not closed:
            left = end - time.monotonic()
            if left <= 0:
                return
            s.settimeout(left)
            try:
                got = s.recv(65536)
            except socket.timeout:
                return
            except OSError:
                got = b""
            if not got:
                closed = True
                return
            buf += got
            hit = False
            while len(buf) >= 9:
                n = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + n:
                    break
                ftype, flags = buf[3], buf[4]
                sid = int.from_bytes(buf[5:9], "big") & 0x7fffffff
                payload = buf[9:9 + n]
                buf = buf[9 + n:]
                headers = None
                if ftype == 0x1:
                    headers = [[k, v] for k, v in dec.decode(payload, raw=False)]
                frames.append([step, ftype, flags, sid, payload.hex(), headers])
                if until is not None and [ftype, sid] == until:
                    hit = True
            if hit:
                return

    for i, st in enumerate(steps):
        if closed:
            break
        try:
            s.sendall(bytes.fromhex(st["send"]))
        except OSError:
            closed = True        # closed on us mid-step: what came is read
        read(i, st.get("until"), st.get("wait", 3))
    if not closed:
        read(len(steps), None, 1)
    print(json.dumps(frames + ["closed" if closed else "open"]))


if __name__ == "__main__":
    main()
