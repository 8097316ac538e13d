# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/2's stream states (RFC 9113 5.1, 5.1.1, 5.3.1, 6.1, 6.4, 6.9, 6.10,
8.1.1, 8.3) against a running ewykd over its TCP: frames written by hand
from a socket (h2_frames.py), each violation answered by the stream or
connection error the RFC names, and the appliance serving on. Also the
Date field of HTTP/2 answers, and the header list limit that
--max-header-bytes sets."""
import json
import os
import re
import time
from email.utils import parsedate_to_datetime

from ewyk_harness import APP_IP, PYTHON, ROOT, Appliance

DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, \
    CONTINUATION = 0x0, 0x1, 0x2, 0x3, 0x4, 0x6, 0x7, 0x8, 0x9
END_STREAM, END_HEADERS = 0x1, 0x4
PROTOCOL_ERROR, FLOW_CONTROL_ERROR, STREAM_CLOSED, CANCEL, COMPRESSION_ERROR = \
    0x1, 0x3, 0x5, 0x8, 0x9


def frame(ftype, flags, stream, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + \
        stream.to_bytes(4, "big") + payload


def literal(name, value):
    """A literal field without indexing, a new name, no Huffman (RFC 7541
    6.2.2): touches no dynamic table."""
    name, value = name.encode(), value.encode()
    assert len(name) < 127 and len(value) < 127
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def request(path, method="GET", *fields):
    """:method, :scheme http, :path, :authority, then fields."""
    block = {"GET": b"\x82", "POST": b"\x83"}.get(method) or \
        b"\x02" + bytes([len(method)]) + method.encode()
    p, a = path.encode(), APP_IP.encode()
    block += b"\x86" + b"\x04" + bytes([len(p)]) + p + b"\x01" + bytes([len(a)]) + a
    for name, value in fields:
        block += literal(name, value)
    return block


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(SETTINGS, 0, 0)


def u32(v):
    return v.to_bytes(4, "big")


def converse(appliance, steps):
    """Runs the steps (bytes, or (bytes, until (type, stream), wait)) on
    one connection, the preface first; returns (frames, closed)."""
    js = [{"send": PREFACE.hex(), "until": [SETTINGS, 0], "wait": 3}]
    for st in steps:
        if isinstance(st, bytes):
            st = (st, None, 0.3)
        data, until, wait = st
        js.append({"send": data.hex(), "until": list(until) if until else None,
                   "wait": wait})
    r = appliance.ns([PYTHON, os.path.join(ROOT, "tests", "integration", "h2_frames.py"),
                      APP_IP, "80"], input=json.dumps(js), timeout=60)
    out = json.loads(r.stdout)
    return out[:-1], out[-1] == "closed"


def goaway(frames):
    codes = [int(p[8:16], 16) for _, t, _, _, p, _ in frames if t == GOAWAY]
    return codes[0] if codes else None


def reset(frames, sid):
    codes = [int(p[:8], 16) for _, t, _, s, p, _ in frames if t == RST_STREAM and s == sid]
    return codes[0] if codes else None


def status(frames, sid):
    for _, t, _, s, _, headers in frames:
        if t == HEADERS and s == sid:
            return int(dict(headers)[":status"])
    return None


def body(frames, sid):
    return b"".join(bytes.fromhex(p) for _, t, _, s, p, _ in frames
                    if t == DATA and s == sid)


def served_next(frames, sid):
    """The request on stream sid, sent after the violation, was answered
    and the connection goes on."""
    assert status(frames, sid) == 200, frames[-3:]
    assert body(frames, sid) == b"hello from ewyk\n"
    assert goaway(frames) is None


def get(sid, path="/hello.txt"):
    return (frame(HEADERS, END_STREAM | END_HEADERS, sid, request(path)),
            (DATA, sid), 3)


def still_serving(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


# 5.1: half-closed (remote): /delay holds the stream open on our side for
# three seconds, longer than any of these conversations needs.

def test_data_on_half_closed_stream_is_a_stream_error(appliance):
    frames, closed = converse(appliance, [
        frame(HEADERS, END_STREAM | END_HEADERS, 1, request("/delay?ms=3000")),
        (frame(DATA, END_STREAM, 1, b"abc"), (RST_STREAM, 1), 3),
        get(3)])
    assert reset(frames, 1) == STREAM_CLOSED, frames
    assert status(frames, 1) is None
    served_next(frames, 3)
    assert not closed


def test_headers_on_half_closed_stream_is_a_stream_error(appliance):
    frames, _ = converse(appliance, [
        frame(HEADERS, END_STREAM | END_HEADERS, 1, request("/delay?ms=3000")),
        (frame(HEADERS, END_STREAM | END_HEADERS, 1, literal("x-trailer", "1")),
         (RST_STREAM, 1), 3),
        get(3)])
    assert reset(frames, 1) == STREAM_CLOSED, frames
    served_next(frames, 3)


# 5.1: closed.

def test_data_on_closed_stream_is_a_connection_error(appliance):
    frames, closed = converse(appliance, [
        get(1),
        (frame(DATA, END_STREAM, 1, b"abc"), (GOAWAY, 0), 3)])
    assert status(frames, 1) == 200
    assert goaway(frames) == STREAM_CLOSED, frames
    assert closed
    still_serving(appliance)


def test_headers_on_closed_stream_is_a_connection_error(appliance):
    frames, closed = converse(appliance, [
        get(1),
        (frame(HEADERS, END_STREAM | END_HEADERS, 1, request("/hello.txt")),
         (GOAWAY, 0), 3)])
    assert goaway(frames) == STREAM_CLOSED, frames
    assert closed


def test_data_after_the_client_reset_its_upload(appliance):
    """The client resets an upload, then DATA it had in flight comes, more
    than the connection's window: a stream error STREAM_CLOSED, once; the
    bytes count against the connection's window, which opens again; the
    next request is served, nothing hangs."""
    flood = b"".join(frame(DATA, 0, 1, bytes(16384)) for _ in range(80))
    frames, closed = converse(appliance, [
        frame(HEADERS, END_HEADERS, 1, request("/upload", "POST")),
        frame(DATA, 0, 1, bytes(16384)),
        frame(RST_STREAM, 0, 1, u32(CANCEL)),
        (flood, None, 1),
        get(3)])
    assert reset(frames, 1) == STREAM_CLOSED, frames[-5:]
    assert len([f for f in frames if f[1] == RST_STREAM]) == 1
    given = sum(int(p, 16) for _, t, _, s, p, _ in frames if t == WINDOW_UPDATE and s == 0)
    assert given >= (1 << 20) - 65535 + (1 << 20), given
    served_next(frames, 3)
    assert not closed


# 5.1.1: a new stream's id must be above every one used.

def test_stream_id_below_one_opened_is_a_connection_error(appliance):
    frames, closed = converse(appliance, [
        get(5),
        (frame(HEADERS, END_STREAM | END_HEADERS, 3, request("/hello.txt")),
         (GOAWAY, 0), 3)])
    assert status(frames, 5) == 200
    assert status(frames, 3) is None
    assert goaway(frames) == PROTOCOL_ERROR, frames
    assert closed
    still_serving(appliance)


# 5.3.1, 6.3: PRIORITY.

def test_priority_on_stream_zero_is_a_connection_error(appliance):
    frames, closed = converse(appliance, [
        (frame(PRIORITY, 0, 0, u32(1) + b"\x10"), (GOAWAY, 0), 3)])
    assert goaway(frames) == PROTOCOL_ERROR and closed, frames


def test_stream_depending_on_itself_is_a_stream_error(appliance):
    frames, _ = converse(appliance, [
        frame(HEADERS, END_STREAM | END_HEADERS, 1, request("/delay?ms=3000")),
        (frame(PRIORITY, 0, 1, u32(1) + b"\x10"), (RST_STREAM, 1), 3),
        get(3)])
    assert reset(frames, 1) == PROTOCOL_ERROR, frames
    served_next(frames, 3)


# 5.1, 6.4, 6.9: frames on idle streams.

def test_window_update_and_rst_stream_on_idle_streams(appliance):
    for bad in (frame(WINDOW_UPDATE, 0, 3, u32(100)), frame(RST_STREAM, 0, 3, u32(CANCEL)),
                frame(DATA, 0, 3, b"abc")):
        frames, closed = converse(appliance, [get(1), (bad, (GOAWAY, 0), 3)])
        assert goaway(frames) == PROTOCOL_ERROR and closed, (bad.hex(), frames)
    still_serving(appliance)


# 4.3, 6.10: header blocks.

def test_header_block_rules(appliance):
    block = request("/hello.txt")
    # split in three: served
    frames, _ = converse(appliance, [
        frame(HEADERS, END_STREAM, 1, block[:3]),
        frame(CONTINUATION, 0, 1, block[3:9]),
        (frame(CONTINUATION, END_HEADERS, 1, block[9:]), (DATA, 1), 3)])
    assert status(frames, 1) == 200 and body(frames, 1) == b"hello from ewyk\n"
    # a PING inside a block
    frames, closed = converse(appliance, [
        frame(HEADERS, END_STREAM, 1, block[:3]),
        (frame(PING, 0, 0, bytes(8)), (GOAWAY, 0), 3)])
    assert goaway(frames) == PROTOCOL_ERROR and closed, frames
    # a CONTINUATION on another stream
    frames, closed = converse(appliance, [
        frame(HEADERS, END_STREAM, 1, block[:3]),
        (frame(CONTINUATION, END_HEADERS, 3, block[3:]), (GOAWAY, 0), 3)])
    assert goaway(frames) == PROTOCOL_ERROR and closed, frames
    # a table size update after a field
    frames, closed = converse(appliance, [
        (frame(HEADERS, END_STREAM | END_HEADERS, 1, block[:2] + b"\x20" + block[2:]),
         (GOAWAY, 0), 3)])
    assert goaway(frames) == COMPRESSION_ERROR and closed, frames


# 6.5, 6.9: settings and windows.

def test_settings_and_window_errors(appliance):
    def setting(ident, value):
        return frame(SETTINGS, 0, 0, ident.to_bytes(2, "big") + u32(value))
    for bad, code in [(setting(0x2, 2), PROTOCOL_ERROR),
                      (setting(0x4, 1 << 31), FLOW_CONTROL_ERROR),
                      (setting(0x5, 16383), PROTOCOL_ERROR),
                      (setting(0x5, 1 << 24), PROTOCOL_ERROR),
                      (frame(WINDOW_UPDATE, 0, 0, u32(0x7fffffff)), FLOW_CONTROL_ERROR)]:
        frames, closed = converse(appliance, [(bad, (GOAWAY, 0), 3)])
        assert goaway(frames) == code and closed, (bad.hex(), frames)
    frames, _ = converse(appliance, [
        frame(HEADERS, END_STREAM | END_HEADERS, 1, request("/delay?ms=3000")),
        (frame(WINDOW_UPDATE, 0, 1, u32(0x7fffffff)), (RST_STREAM, 1), 3),
        get(3)])
    assert reset(frames, 1) == FLOW_CONTROL_ERROR, frames
    served_next(frames, 3)


# 8.1.1, 8.3: malformed requests are stream errors.

def test_malformed_requests_are_stream_errors(appliance):
    cases = [
        ("content-length short of the DATA",
         [frame(HEADERS, END_HEADERS, 1, request("/hello.txt", "GET", ("content-length", "10"))),
          frame(DATA, END_STREAM, 1, b"abc")]),
        ("no :path", [frame(HEADERS, END_STREAM | END_HEADERS, 1, b"\x82\x86")]),
        ("an upper-case name",
         [frame(HEADERS, END_STREAM | END_HEADERS, 1, request("/hello.txt", "GET", ("X-Up", "1")))]),
        ("connection",
         [frame(HEADERS, END_STREAM | END_HEADERS, 1,
                request("/hello.txt", "GET", ("connection", "close")))]),
        ("a pseudo-header after a field",
         [frame(HEADERS, END_STREAM | END_HEADERS, 1,
                b"\x82\x86" + literal("x-a", "1") + b"\x04\x0a/hello.txt")]),
    ]
    for what, steps in cases:
        steps[-1] = (steps[-1], (RST_STREAM, 1), 3)
        frames, _ = converse(appliance, steps + [get(3)])
        assert reset(frames, 1) == PROTOCOL_ERROR, (what, frames)
        assert status(frames, 1) is None, what
        served_next(frames, 3)


# RFC 9110 6.6.1: Date, on HTTP/2 as on HTTP/1.1.

def test_h2_answers_carry_date(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge", "-D", "-",
                      "-o", "/dev/null", appliance.url("/hello.txt")])
    m = re.search(r"(?mi)^date: (.*?)\r?$", r.stdout)
    assert m, r.stdout
    assert re.fullmatch(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT", m.group(1))
    assert abs(parsedate_to_datetime(m.group(1)).timestamp() - time.time()) < 5
    r = appliance.ns(["nghttp", "-v", appliance.url("/nope")])
    assert re.search(r"date: \w{3}, \d\d \w{3} \d{4}", r.stdout), r.stdout
    frames, _ = converse(appliance, [get(1, "/nope")])
    assert status(frames, 1) == 404
    assert "date" in dict(next(h for _, t, _, s, _, h in frames if t == HEADERS))


# RFC 9113 8.2.3, 10.5.1: the header list limit is --max-header-bytes.

def test_header_list_limit_follows_max_header_bytes(www):
    with Appliance(www=www["dir"], args=["--max-header-bytes", "4096"]) as a:
        frames, _ = converse(a, [])
        settings = next(bytes.fromhex(p) for _, t, fl, _, p, _ in frames
                        if t == SETTINGS and not fl & 1)
        values = {int.from_bytes(settings[i:i + 2], "big"):
                  int.from_bytes(settings[i + 2:i + 6], "big")
                  for i in range(0, len(settings), 6)}
        assert values[0x6] == 4096, values
        h2 = ["curl", "-sS", "-m", "10", "--http2-prior-knowledge", "-o", "/dev/null",
              "-w", "%{http_code}"]
        r = a.ns(h2 + ["-H", "X-Big: " + "a" * 3000, a.url("/hello.txt")])
        assert r.stdout == "200", r.stdout
        r = a.ns(h2 + ["-H", "X-Big: " + "a" * 5000, a.url("/hello.txt")], check=False)
        assert r.stdout == "431", (r.stdout, r.stderr)
        r = a.ns(h2 + [a.url("/hello.txt")])
        assert r.stdout == "200"
