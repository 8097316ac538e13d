#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""h2_upload.py URL FILE [--method M] [--out OUT] [--timeout S]

An HTTP/2 upload (prior knowledge, cleartext) with python3-h2: the body
goes as the windows allow, the answer is read as it comes (the server may
answer while the body still goes, as /echo does). Prints the status;
writes the answer's body to OUT. Exit status 1 when the stream is reset,
the connection ends early, or the peer breaks the protocol.

curl 7.88.1 (Debian 12) sometimes sends one DATA frame too many on an
HTTP/2 upload, past the Content-Length it announced: the server must
then reset the stream (RFC 9113 8.1.1), and a test would fail for the
client's fault. The tests upload over HTTP/2 with this instead.
"""
import argparse
import socket
import sys
import urllib.parse

import h2.config
import h2.connection
import h2.events


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("file")
    p.add_argument("--method", default="POST")
    p.add_argument("--out")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--timeout", type=float, default=30)
    a = p.parse_args()
    u = urllib.parse.urlsplit(a.url)
    port = u.port or 80
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    with open(a.file, "rb") as f:
        data = f.read()
    s = socket.create_connection((u.hostname, port), timeout=a.timeout)
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    c.initiate_connection()
    sid = c.get_next_available_stream_id()
    headers = [(":method", a.method), (":path", path), (":scheme", "http"),
               (":authority", u.netloc), ("content-length", str(len(data)))]
    headers += [tuple(h.split(": ", 1)) for h in a.header]
    c.send_headers(sid, headers, end_stream=not data)
    off, status, body, done = 0, None, bytearray(), False
    while not done:
        while off < len(data):
            n = min(c.local_flow_control_window(sid), c.max_outbound_frame_size,
                    len(data) - off)
            if n <= 0:
                break
            c.send_data(sid, data[off:off + n], end_stream=off + n == len(data))
            off += n
        s.sendall(c.data_to_send())
        chunk = s.recv(1 << 16)
        if not chunk:
            sys.exit(f"h2_upload: connection closed, status {status}, {len(body)} bytes")
        for ev in c.receive_data(chunk):
            if isinstance(ev, h2.events.ResponseReceived):
                status = dict(ev.headers).get(b":status", b"?").decode()
            elif isinstance(ev, h2.events.DataReceived):
                body += ev.data
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                done = True
            elif isinstance(ev, h2.events.StreamReset) and ev.stream_id == sid:
                sys.exit(f"h2_upload: stream reset, error {ev.error_code!r}, status "
                         f"{status}, {len(body)} bytes")
            elif isinstance(ev, h2.events.ConnectionTerminated):
                sys.exit(f"h2_upload: GOAWAY {ev.error_code!r}")
        s.sendall(c.data_to_send())
    if a.out:
        with open(a.out, "wb") as f:
            f.write(body)
    print(status)


if __name__ == "__main__":
    main()
