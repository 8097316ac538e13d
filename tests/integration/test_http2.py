# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/2 with prior knowledge (h2c) over ewyk's TCP: curl, nghttp and
h2load against the static files; protocol violations (a bad preface, bad
frames and settings, window overflow, rapid-reset and CONTINUATION floods)
get the protocol's answer, and the appliance keeps serving."""
import hashlib
import os
import re
import signal
import time

import pytest

from ewyk_harness import APP_IP, PYTHON, Appliance


def test_curl_prior_knowledge_headers_and_body(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge", "-i",
                      appliance.url("/hello.txt")])
    assert r.stdout.startswith("HTTP/2 200")
    assert re.search(r"(?m)^content-length: 16\r?$", r.stdout)
    assert re.search(r'(?m)^etag: "[0-9a-f]{16}"', r.stdout)
    assert r.stdout.endswith("hello from ewyk\n")


def test_1mb_byte_exact_over_h2(appliance, www, tmp_path):
    out = tmp_path / "big.bin"
    r = appliance.ns(["curl", "-sS", "-m", "30", "--http2-prior-knowledge", "-o", str(out),
                      "-w", "%{http_code} %{http_version}", appliance.url("/big.bin")])
    assert r.stdout == "200 2"
    assert hashlib.sha256(out.read_bytes()).hexdigest() == www["big_sha256"]


def test_echo_body_over_h2_is_byte_exact(appliance, tmp_path):
    body = tmp_path / "up.bin"
    body.write_bytes(bytes(range(256)) * 1000)        # 256 KB, past the windows
    out = tmp_path / "back.bin"
    r = appliance.h2_upload("/echo", body, out=out)
    assert r.returncode == 0 and r.stdout.strip() == "200", r.stderr
    assert out.read_bytes() == body.read_bytes()
    # /echo streams (a fiber reads and writes as the windows allow): no
    # bound on the body, 3 MB come back whole.
    body.write_bytes(os.urandom(3 << 20))
    r = appliance.h2_upload("/echo", body, out=out)
    assert r.returncode == 0 and r.stdout.strip() == "200", r.stderr
    assert out.read_bytes() == body.read_bytes()


def test_conditional_and_range_over_h2(appliance, www, tmp_path):
    h2 = ["curl", "-sS", "-m", "10", "--http2-prior-knowledge"]
    r = appliance.ns(h2 + ["-D", "-", "-o", "/dev/null", appliance.url("/hello.txt")])
    etag = re.search(r'(?mi)^etag: (".*")', r.stdout).group(1)
    r = appliance.ns(h2 + ["-D", "-", "-H", f"If-None-Match: {etag}", appliance.url("/hello.txt")])
    assert r.stdout.startswith("HTTP/2 304") and r.stdout.endswith("\n\n"), r.stdout
    out = tmp_path / "part"
    r = appliance.ns(h2 + ["-D", "-", "-r", "1000-1999", "-o", str(out),
                           appliance.url("/big.bin")])
    assert r.stdout.startswith("HTTP/2 206"), r.stdout
    assert "content-range: bytes 1000-1999/1048576" in r.stdout
    with open(f"{www['dir']}/big.bin", "rb") as f:
        assert out.read_bytes() == f.read()[1000:2000]
    r = appliance.ns(h2 + ["-D", "-", "-r", "2000000-", "-o", "/dev/null",
                           appliance.url("/big.bin")])
    assert r.stdout.startswith("HTTP/2 416") and "bytes */1048576" in r.stdout


def test_stream_counters(appliance):
    before = appliance.telemetry("/ewyk/http")
    appliance.ns(["nghttp", "-n", *[appliance.url(f"/hello.txt?{i}") for i in range(7)]])
    after = appliance.telemetry("/ewyk/http")
    assert after["http2_streams_count"] - before["http2_streams_count"] == 7
    assert after["http2_open_streams"] == 0


def test_nghttp_many_streams_one_connection(appliance):
    # nghttp fetches a URI once: the queries make twenty distinct ones.
    paths = [f"{p}?i={i}" for i in range(5) for p in ["/index.html", "/hello.txt",
                                                      "/nope", "/sub/"]]
    r = appliance.ns(["nghttp", "-n", "-s", *[appliance.url(p) for p in paths]])
    codes = re.findall(r"^\s*\d+\s+\S+\s+\S+\s+\S+\s+(\d{3})\s", r.stdout, re.M)
    assert sorted(codes) == sorted(["200"] * 15 + ["404"] * 5), r.stdout


def test_h2load_streams_all_succeed(appliance):
    before = appliance.telemetry("/ewyk/http")
    r = appliance.ns(["h2load", "-n", "5000", "-c", "4", "-m", "16",
                      appliance.url("/hello.txt")], timeout=120)
    assert "5000 succeeded" in r.stdout and "5000 2xx" in r.stdout, r.stdout
    after = appliance.telemetry("/ewyk/http")
    assert after["http2_reqs"] - before["http2_reqs"] == 5000
    assert after["http2_conns"] - before["http2_conns"] == 4
    assert after["http1_reqs"] == before["http1_reqs"]


def raw(appliance, payload_hex):
    """Sends bytes (hex, through stdin: they may be large) on a fresh
    connection; returns what came back, in hex."""
    r = appliance.ns([PYTHON, "-c", f"""
import socket, sys
data = bytes.fromhex(sys.stdin.read().strip())
s = socket.create_connection(("{APP_IP}", 80), timeout=3)
try:
    s.sendall(data)
except OSError:
    pass                             # closed on us mid-flood: fine
got = b""
try:
    while True:
        c = s.recv(65536)
        if not c:
            break
        got += c
except OSError:
    pass
print(got.hex())
"""], input=payload_hex, timeout=60)
    return r.stdout.strip()


def frames(hexdata):
    """(type, stream, payload) of each HTTP/2 frame in a hex string."""
    b = bytes.fromhex(hexdata)
    out = []
    while len(b) >= 9:
        n = int.from_bytes(b[:3], "big")
        out.append((b[3], int.from_bytes(b[5:9], "big") & 0x7fffffff, b[9:9 + n]))
        b = b[9 + n:]
    return out


def test_broken_frame_after_preface_gets_goaway(appliance):
    preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".hex()
    # a SETTINGS frame whose length is not a multiple of 6: FRAME_SIZE_ERROR
    bad_settings = "000005" "04" "00" "00000000" "0000000000"
    got = frames(raw(appliance, preface + bad_settings))
    goaway = [p for t, _, p in got if t == 0x7]
    assert goaway, got
    # RFC 9113 6.5: a SETTINGS length not a multiple of 6 is FRAME_SIZE_ERROR
    assert [int.from_bytes(g[4:8], "big") for g in goaway] == [0x6], got
    # and the appliance keeps serving
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


def test_bad_preface_is_an_http1_error(appliance):
    got = bytes.fromhex(raw(appliance, b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n".hex()))
    # not the preface: an HTTP/1.1 request, and a bad one
    assert got.startswith(b"HTTP/1.1 400 Bad Request\r\n"), got
    r = appliance.ns(["curl", "-sS", "-m", "5", appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


def test_upgrade_from_http1(appliance, www, tmp_path):
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2", "-i", appliance.url("/hello.txt")])
    assert r.stdout.startswith("HTTP/1.1 101 Switching Protocols")
    assert "\nHTTP/2 200" in r.stdout
    assert r.stdout.endswith("hello from ewyk\n")
    out = tmp_path / "big.bin"
    r = appliance.ns(["curl", "-sS", "-m", "30", "--http2", "-o", str(out),
                      "-w", "%{http_code} %{http_version}", appliance.url("/big.bin")])
    assert r.stdout == "200 2"
    assert hashlib.sha256(out.read_bytes()).hexdigest() == www["big_sha256"]
    r = appliance.ns(["nghttp", "-u", "-n", "-s", appliance.url("/index.html"),
                      appliance.url("/nope")])
    assert re.search(r"^\s*1\s.*\s200\s", r.stdout, re.M), r.stdout   # stream 1: the upgrade
    assert re.search(r"\s404\s+\d+\s+/nope", r.stdout), r.stdout


def hpack_get(path):
    """A request header block from HPACK's static table: :method GET,
    :scheme http, :path (literal, not indexed), :authority x."""
    p = path.encode()
    return b"\x82\x86" + b"\x04" + bytes([len(p)]) + p + b"\x01\x01x"


def frame(ftype, flags, stream, payload):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + \
        stream.to_bytes(4, "big") + payload


def test_rapid_reset_flood_ends_with_enhance_your_calm(appliance):
    before = appliance.telemetry("/ewyk/http")["http2_reset_floods_count"]
    flood = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(0x4, 0, 0, b"")
    for i in range(1000):
        sid = 2 * i + 1
        flood += frame(0x1, 0x4 | 0x1, sid, hpack_get("/hello.txt"))   # HEADERS
        flood += frame(0x3, 0, sid, (8).to_bytes(4, "big"))            # RST_STREAM CANCEL
    got = frames(raw(appliance, flood.hex()))
    goaway = [p for t, _, p in got if t == 0x7]
    assert goaway and int.from_bytes(goaway[-1][4:8], "big") == 0xb, got[-3:]
    after = appliance.telemetry("/ewyk/http")
    assert after["http2_reset_floods_count"] - before == 1
    # the budget is 200 a second: at least that many were counted
    assert after["http2_resets_in_count"] >= 201
    # a well-behaved client is served meanwhile
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


def test_continuation_flood_is_refused(appliance):
    # HEADERS without END_HEADERS, then CONTINUATION frames without end:
    # the server must not buffer them forever.
    flood = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(0x4, 0, 0, b"")
    flood += frame(0x1, 0x1, 1, hpack_get("/hello.txt"))
    junk = b"\x40\x05x-pad\x03abc" * 40      # literal headers, new names
    for _ in range(4000):
        flood += frame(0x9, 0, 1, junk)
    got = frames(raw(appliance, flood.hex()))
    goaway = [p for t, _, p in got if t == 0x7]
    assert goaway, got[-3:]
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


H2_ERRORS = ["no_error", "protocol_error", "internal_error", "flow_control_error",
             "settings_timeout", "stream_closed", "frame_size_error", "refused_stream",
             "cancel", "compression_error", "connect_error", "enhance_your_calm",
             "inadequate_security", "http_1_1_required"]

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(0x4, 0, 0, b"")


def setting(ident, value):
    return ident.to_bytes(2, "big") + value.to_bytes(4, "big")


# Each violation and its error, the one RFC 9113 gives it: a connection
# error (one GOAWAY with the code) or, where the RFC says a stream error,
# one RST_STREAM with the code on that stream, and no GOAWAY.
GOAWAY, RST_STREAM = 0x7, 0x3
VIOLATIONS = {
    "data_on_idle_stream": (frame(0x0, 0x1, 1, b"x"), 0x1),
    # Read in one piece with its first HEADERS, the second finds stream 1
    # half closed (remote), its answer not yet sent: a stream error (5.1).
    # On a stream both sides ended it is a connection error
    # (test_h2_states.py has both).
    "headers_on_half_closed_stream": (
        frame(0x1, 0x5, 1, hpack_get("/hello.txt")) + frame(0x4, 0x1, 0, b"")
        + frame(0x1, 0x5, 1, hpack_get("/hello.txt")), (RST_STREAM, 1, 0x5)),
    "frame_larger_than_max_frame_size": (
        frame(0x1, 0x4, 1, b"\x83\x86" + b"\x04\x01/" + b"\x01\x01x")
        + frame(0x0, 0x1, 1, b"x" * 20000), 0x6),
    "settings_enable_push_2": (frame(0x4, 0, 0, setting(0x2, 2)), 0x1),
    "settings_initial_window_too_big": (frame(0x4, 0, 0, setting(0x4, 1 << 31)), 0x3),
    "settings_max_frame_size_too_small": (frame(0x4, 0, 0, setting(0x5, 100)), 0x1),
    "connection_window_overflow": (
        frame(0x8, 0, 0, (0x7fffffff).to_bytes(4, "big")), 0x3),
    "window_update_of_zero": (frame(0x8, 0, 0, (0).to_bytes(4, "big")), 0x1),
}


@pytest.mark.parametrize("case", sorted(VIOLATIONS))
def test_protocol_violation_gets_its_error(appliance, case):
    payload, want = VIOLATIONS[case]
    kind, sid, code = want if isinstance(want, tuple) else (GOAWAY, 0, want)
    before = appliance.telemetry("/ewyk/http")
    got = frames(raw(appliance, (PREFACE + payload).hex()))
    goaways = [int.from_bytes(p[4:8], "big") for t, _, p in got if t == GOAWAY]
    resets = [(s, int.from_bytes(p[:4], "big")) for t, s, p in got if t == RST_STREAM]
    if kind == GOAWAY:
        assert goaways == [code] and resets == [], (case, got[-4:])
    else:
        assert goaways == [] and resets == [(sid, code)], (case, got[-4:])
    # /ewyk/http counts what was sent, by its kind and code: that frame
    after = appliance.telemetry("/ewyk/http")
    sent = {(k, n): after[k][n] - before[k][n]
            for k in ("http2_goaways_out_by_error", "http2_resets_out_by_error")
            for n in after[k] if after[k][n] != before[k][n]}
    key = "http2_goaways_out_by_error" if kind == GOAWAY else "http2_resets_out_by_error"
    assert sent == {(key, H2_ERRORS[code]): 1}, (case, sent)
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


def test_settings_are_advertised(appliance):
    got = frames(raw(appliance, PREFACE.hex()))
    settings = [p for t, _, p in got if t == 0x4 and p]
    assert settings, got
    values = {int.from_bytes(settings[0][i:i + 2], "big"):
              int.from_bytes(settings[0][i + 2:i + 6], "big")
              for i in range(0, len(settings[0]), 6)}
    # MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, MAX_HEADER_LIST_SIZE,
    # NO_RFC7540_PRIORITIES (RFC 9218), ENABLE_CONNECT_PROTOCOL (RFC 8441)
    assert values == {0x3: 100, 0x4: 256 * 1024, 0x6: 16384, 0x9: 1, 0x8: 1}, values


def test_streams_past_the_limit_are_refused(appliance):
    # 101 requests left open (no END_STREAM), the limit acknowledged: the
    # one past 100 is refused (RFC 9113 5.1.2: a stream error), with
    # REFUSED_STREAM, which tells the client it may retry it; none of the
    # first 100 is reset, and the connection goes on (no GOAWAY).
    flood = PREFACE + frame(0x4, 0x1, 0, b"")
    for i in range(101):
        flood += frame(0x1, 0x4, 2 * i + 1, hpack_get("/hello.txt"))
    got = frames(raw(appliance, flood.hex()))
    resets = [(sid, int.from_bytes(p[:4], "big")) for t, sid, p in got if t == 0x3]
    goaway = [p for t, _, p in got if t == 0x7]
    assert resets == [(201, 0x7)], got[-3:]
    assert goaway == [], got[-3:]
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


def test_header_list_past_the_limit_is_431(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "10", "--http2-prior-knowledge", "-o", "/dev/null",
                      "-w", "%{http_code}", "-H", "X-Big: " + "a" * 17000,
                      appliance.url("/hello.txt")], check=False)
    assert r.stdout == "431", (r.stdout, r.stderr)
    r = appliance.ns(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                      appliance.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"


def test_drain_finishes_streams_in_flight_and_refuses_new_ones(www):
    """SIGTERM with a handler's stream in flight: GOAWAY names it as the
    last stream, its answer still comes, a stream opened after the GOAWAY
    gets nothing, and ewykd exits 0."""
    with Appliance(www=www["dir"], lcores="0@0,1@1,2@1",
                   args=["--shards", "1", "--reserved", "1", "--drain-ms", "3000"]) as a:
        first = PREFACE + frame(0x4, 0x1, 0, b"") + \
            frame(0x1, 0x5, 1, hpack_get("/delay?ms=800"))
        later = frame(0x1, 0x5, 3, hpack_get("/hello.txt"))
        # The later stream goes once the GOAWAY came (no fixed sleeps: a
        # client's start-up takes its time on a busy host).
        client = a.ns_popen_python(f"""
import socket
s = socket.create_connection(("{APP_IP}", 80), timeout=5)
s.sendall(bytes.fromhex("{first.hex()}"))
got = b""
sent_later = False
while True:
    c = s.recv(65536)
    if not c:
        break
    got += c
    off = 0
    while not sent_later and off + 9 <= len(got):
        if got[off + 3] == 0x7:
            s.sendall(bytes.fromhex("{later.hex()}"))
            sent_later = True
        off += 9 + int.from_bytes(got[off:off + 3], "big")
print(got.hex())
""")
        deadline = time.monotonic() + 10
        while a.telemetry("/ewyk/strategy")["shard_0"]["fibers_started_count"] == 0:
            assert time.monotonic() < deadline, "the slow stream never came"
            time.sleep(0.02)
        a.proc.send_signal(signal.SIGTERM)
        out, _ = client.communicate(timeout=10)
        got = frames(out.strip())
        goaway = [p for t, _, p in got if t == 0x7]
        assert goaway and int.from_bytes(goaway[0][:4], "big") == 1, got
        assert int.from_bytes(goaway[0][4:8], "big") == 0x0
        assert b"delayed 800 ms" in b"".join(p for t, sid, p in got if t == 0x0 and sid == 1)
        assert not [sid for t, sid, _ in got if sid == 3], got
        status, _ = a.stop()
        assert status == 0, a.read_log()
