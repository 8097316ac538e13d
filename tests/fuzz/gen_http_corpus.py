#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpora of fuzz_http1 (tests/fuzz/http1/corpus/) and
fuzz_h2 (tests/fuzz/h2/corpus/), and their dictionaries.

Input format (see fuzz_http.h): records of an op byte and an argument byte;
ops 0..3 carry bytes the peer sends. The generated files are committed; run
this again after changing the format:

    /usr/bin/python3 tests/fuzz/gen_http_corpus.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CONN1 = 0x08    # op bit: the second connection


def send(data, conn=0):
    """The peer sends data: records of at most 1023 bytes."""
    out = b""
    while True:
        part, data = data[:1023], data[1023:]
        n = len(part)
        out += bytes([(n >> 8) << 4 | conn, n & 0xFF]) + part
        if not data:
            return out


def clock(ms):
    return bytes([4, min(ms // 50, 255)])


def space(n, conn=0):
    """n == 0: the send queue is full; else frees n bytes (32-byte units)."""
    return bytes([5 | conn, 0 if n == 0 else min(max(n // 32, 1), 255)])


def run(i=0):
    return bytes([6, i])


def peer_close(conn=0):
    return bytes([7 | conn, 0])


def peer_reset(conn=0):
    return bytes([7 | conn, 1])


def second_conn():
    return bytes([7, 2])


def drain():
    return bytes([7, 3])


def write(kind, name, data):
    d = os.path.join(HERE, kind, "corpus")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def get(path, extra=b"", method=b"GET"):
    return method + b" " + path + b" HTTP/1.1\r\nHost: h\r\n" + extra + b"\r\n"


def http1():
    w = lambda n, d: write("http1", n, d)   # noqa: E731
    w("static", send(get(b"/a.txt")) + send(get(b"/", method=b"HEAD")) +
      send(get(b"/a.txt", b"Range: bytes=2-5\r\n")) +
      send(get(b"/a.txt", b'If-None-Match: "x"\r\n')) +
      send(get(b"/nothing")))
    w("pipeline_reverse", send(get(b"/q/1") + get(b"/q/2") + get(b"/a.txt") +
                               get(b"/q/3")) + run(2) + run(1) + run(0))
    w("pipeline_head", send(get(b"/q/1", method=b"HEAD") +
                            get(b"/a.txt", method=b"HEAD") + get(b"/q/2")) +
      run(1) + run(0))
    body = b"hello world"
    w("echo_length", send(b"POST /echo HTTP/1.1\r\nHost: h\r\n"
                          b"Content-Length: 11\r\n\r\nhel") + run() +
      send(body[3:]) + send(get(b"/a.txt")))
    w("echo_chunked", send(b"POST /echo HTTP/1.1\r\nHost: h\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
      + run() + send(b"6;ext=1\r\n world\r\n0\r\n\r\n") + send(get(b"/q/x")))
    w("echo_continue", send(b"POST /echo HTTP/1.1\r\nHost: h\r\n"
                            b"Content-Length: 5\r\nExpect: 100-continue\r\n\r\n")
      + run() + send(b"abcde"))
    w("bad_chunk_overflow", send(b"POST /echo HTTP/1.1\r\nHost: h\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n") + run() +
      send(b"FFFFFFFFFFFFFFFFFF\r\nab\r\n"))
    w("bad_chunk_later", send(b"POST /echo HTTP/1.1\r\nHost: h\r\n"
                              b"Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n") +
      run() + send(b"zz\r\n"))
    w("chunked_to_q", send(b"POST /q/x HTTP/1.1\r\nHost: h\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
    w("body_gathered", send(b"PUT /q/put HTTP/1.1\r\nHost: h\r\n"
                            b"Content-Length: 4\r\n\r\nab") + send(b"cd") +
      run() + send(get(b"/q/next")) + run())
    w("body_discarded", send(b"POST /nothing HTTP/1.1\r\nHost: h\r\n"
                             b"Content-Length: 5\r\n\r\nabcde" + get(b"/a.txt")) +
      send(b"DELETE /a.txt HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nxyz"))
    w("body_too_big", send(b"POST /nothing HTTP/1.1\r\nHost: h\r\n"
                           b"Content-Length: 999999\r\n\r\nabc"))
    w("malformed", send(b"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n"))
    w("malformed_after_pipeline", send(get(b"/q/1") + b"G@T / HTTP/1.1\r\n\r\n")
      + run())
    w("http10_stream", send(b"GET /stream/x HTTP/1.0\r\n\r\n") + space(0) +
      run() + space(4096) + space(8000))
    w("stream_space", space(0) + send(get(b"/stream/a") + get(b"/big.bin")) +
      run() + space(2000) + clock(100) + space(8000))
    w("header_timeout", send(b"GET /a.txt HTTP/1.1\r\nHo") + clock(2500))
    w("keepalive_timeout", send(get(b"/a.txt")) + clock(6000))
    w("h2c_upgrade", send(b"GET /q/u HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, "
                          b"HTTP2-Settings\r\nUpgrade: h2c\r\n"
                          b"HTTP2-Settings: AAMAAABk\r\n\r\n") + run())
    w("preface", send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0)))
    w("drain", send(get(b"/q/1") + get(b"/q/2")) + drain() + run() + run())
    w("peer_close_pipeline", send(get(b"/q/1") + get(b"/a.txt")) +
      peer_close() + run())
    w("peer_reset_queued", send(get(b"/q/1") + get(b"/q/2")) + run(1) +
      peer_reset() + run())
    w("two_conns", send(get(b"/q/a")) + second_conn() +
      send(get(b"/q/b"), CONN1) + run(1) + run(0) +
      send(get(b"/a.txt", b"Connection: close\r\n"), CONN1))


# HTTP/2 ----------------------------------------------------------------------

def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream) + payload


def lit(name, value):
    """HPACK literal without indexing, new name, no Huffman."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def lit_indexed(name, value):
    """HPACK literal with incremental indexing (into the dynamic table)."""
    return b"\x40" + bytes([len(name)]) + name + bytes([len(value)]) + value


def req(method, path, extra=b""):
    # :scheme http (static 6), :authority literal
    return lit(b":method", method) + b"\x86" + lit(b":path", path) + \
        lit(b":authority", b"h") + extra


SETTINGS = frame(4, 0, 0, struct.pack(">HI", 3, 100) + struct.pack(">HI", 4, 65535))
ACK = frame(4, 1, 0)
END_STREAM, END_HEADERS, PADDED, PRIORITY = 0x1, 0x4, 0x8, 0x20


def h2():
    w = lambda n, d: write("h2", n, d)   # noqa: E731
    get1 = frame(1, END_STREAM | END_HEADERS, 1, req(b"GET", b"/q/1"))
    w("get", send(SETTINGS + ACK + get1) + run())
    w("get_static_indexed", send(SETTINGS + frame(1, END_STREAM | END_HEADERS, 1,
                                                  b"\x82\x86\x84" + lit(b":authority", b"h")) +
                                 frame(1, END_STREAM | END_HEADERS, 3,
                                       b"\x82\x86" + lit(b":path", b"/a.txt") +
                                       lit(b":authority", b"h"))))
    w("dynamic_table", send(SETTINGS + frame(1, END_STREAM | END_HEADERS, 1,
                                             req(b"GET", b"/q/a", lit_indexed(b"x-a", b"1"))) +
                            frame(1, END_STREAM | END_HEADERS, 3,
                                  req(b"GET", b"/q/b", b"\xbe"))) + run(1) + run(0))
    w("echo_data", send(SETTINGS + frame(1, END_HEADERS, 1, req(b"POST", b"/echo")) +
                        frame(0, 0, 1, b"hello ") + frame(0, END_STREAM, 1, b"world")) + run())
    w("data_padded_window", send(SETTINGS + frame(1, END_HEADERS | PADDED, 1,
                                                  b"\x02" + req(b"PUT", b"/q/p") + b"\0\0") +
                                 frame(0, PADDED | END_STREAM, 1, b"\x03abc\0\0\0") +
                                 frame(8, 0, 0, struct.pack(">I", 100000)) +
                                 frame(8, 0, 1, struct.pack(">I", 1000))) + run())
    w("continuation", send(SETTINGS + frame(1, END_STREAM, 1, req(b"GET", b"/q/c")[:10]) +
                           frame(9, 0, 1, req(b"GET", b"/q/c")[10:20]) +
                           frame(9, END_HEADERS, 1, req(b"GET", b"/q/c")[20:])) + run())
    w("priority_rst", send(SETTINGS + frame(1, END_STREAM | END_HEADERS | PRIORITY, 1,
                                            struct.pack(">IB", 0, 15) + req(b"GET", b"/q/r")) +
                           frame(2, 0, 3, struct.pack(">IB", 1, 7)) +
                           frame(3, 0, 1, struct.pack(">I", 8))) + run())
    w("ping_goaway", send(SETTINGS + frame(6, 0, 0, b"12345678") + get1 +
                          frame(7, 0, 0, struct.pack(">II", 1, 0))) + run())
    w("content_length_mismatch", send(SETTINGS + frame(1, END_HEADERS, 1,
                                                       req(b"POST", b"/q/l",
                                                           lit(b"content-length", b"10"))) +
                                      frame(0, END_STREAM, 1, b"abc")) + run())
    w("malformed_frame", send(SETTINGS + frame(4, 0, 0, b"\0\0\0") + get1))
    w("bad_hpack", send(SETTINGS + frame(1, END_STREAM | END_HEADERS, 1, b"\xff\xff\xff\xff")))
    w("stream_small_window", send(frame(4, 0, 0, struct.pack(">HI", 4, 100)) +
                                  frame(1, END_STREAM | END_HEADERS, 1,
                                        req(b"GET", b"/stream/s"))) + run() +
      send(frame(8, 0, 1, struct.pack(">I", 5000)) + frame(8, 0, 0, struct.pack(">I", 5000))) +
      space(0) + space(3000))
    many = b"".join(frame(1, END_STREAM | END_HEADERS, 2 * i + 1,
                          req(b"GET", b"/q/%d" % i)) for i in range(8))
    w("many_streams", send(SETTINGS + many) + run(3) + run(5) + run(0) + peer_close() + run())
    w("drain_streams", send(SETTINGS + many[:200]) + drain() + run() + clock(200) + run())
    w("reset_queued", send(SETTINGS + get1) + peer_reset() + run())
    # A body-stream route: dispatched with its head, its body read as it
    # comes (/sink/read...), reset amid it, or answered before its end.
    w("sink_read", send(SETTINGS + frame(1, END_HEADERS, 1, req(b"PUT", b"/sink/read")) +
                        frame(0, 0, 1, b"x" * 1000)) + run() +
      send(frame(0, END_STREAM, 1, b"y" * 500)))
    w("sink_reset", send(SETTINGS + frame(1, END_HEADERS, 1,
                                          req(b"POST", b"/sink/r",
                                              lit(b"content-length", b"9000"))) +
                         frame(0, 0, 1, b"z" * 4000) + frame(3, 0, 1, struct.pack(">I", 8))) +
      run())
    w("sink_early", send(SETTINGS + frame(1, END_HEADERS, 1, req(b"POST", b"/sink/e")) +
                         frame(0, 0, 1, b"e" * 3000)) + run() +
      send(frame(0, 0, 1, b"f" * 3000) + frame(0, END_STREAM, 1, b"g")))


DICT_H1 = [b"HTTP/1.1", b"HTTP/1.0", b"GET", b"HEAD", b"POST", b"PUT", b"DELETE",
           b"OPTIONS", b"\r\n", b"\r\n\r\n", b"Host: h", b"Content-Length: ",
           b"Transfer-Encoding: chunked", b"Connection: close",
           b"Connection: keep-alive", b"Expect: 100-continue", b"Upgrade: h2c",
           b"HTTP2-Settings: AAMAAABk", b"Range: bytes=", b"If-None-Match: ",
           b"If-Modified-Since: ", b"/q/", b"/echo", b"/stream/", b"/a.txt",
           b"/big.bin", b"0\r\n\r\n", b"FFFFFFFFFFFFFFFFFF", b";ext=1",
           b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
           # the static files' preconditions, codings, targets
           b"If-Match: ", b"If-Unmodified-Since: ", b"If-Range: ",
           b"Accept-Encoding: ", b"gzip", b"br", b";q=0", b"W/\"", b"\"", b"*",
           b"Sun, 13 Sep 2020 12:26:41 GMT", b"http://h", b"/enc.txt", b"/sub"]
DICT_H2 = [frame(4, 0, 0), ACK, frame(8, 0, 0, b"\0\0\x10\0"), frame(6, 0, 0, b"12345678"),
           b"\x82", b"\x84", b"\x86", lit(b":path", b"/q/1"), lit(b":path", b"/echo"),
           lit(b":path", b"/stream/"), lit(b":path", b"/sink/read"), lit(b":method", b"POST"), lit(b":authority", b"h"),
           lit(b"content-length", b"3"), lit(b":path", b"/enc.txt"),
           lit(b"accept-encoding", b"br;q=0.5, gzip"), lit(b"if-none-match", b"*"),
           lit(b"if-range", b"W/\"x\""), lit(b":method", b"OPTIONS"), lit(b":path", b"*")]


def write_dict(name, words):
    with open(os.path.join(HERE, name), "w") as f:
        for i, word in enumerate(words):
            f.write('w%d="%s"\n' % (i, "".join("\\x%02x" % b for b in word)))


def main():
    http1()
    h2()
    write_dict("http1.dict", DICT_H1)
    write_dict("h2.dict", DICT_H2)


if __name__ == "__main__":
    main()
