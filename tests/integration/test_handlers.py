# SPDX-License-Identifier: BSD-3-Clause
"""The handler API end to end: the example plugin answering in every way
the API offers (copied, borrowed, streamed, deferred) over HTTP/1.1, h2c
and the h2c upgrade; plugin errors at start-up; per-route telemetry."""
import hashlib
import os
import shutil
import re
import subprocess
import tempfile

import pytest

from conftest import serve_module
from ewyk_harness import EWYKD, ROOT, Appliance

PLUGIN = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")
PROTOCOLS = {
    "h1": ["--http1.1"],
    "h2c": ["--http2-prior-knowledge"],
    "upgrade": ["--http2"],
}


@pytest.fixture(scope="module")
def app(www):
    # One shard and no spare lcore: an EITHER handler runs inline under
    # the non-blocking flag (PIC), so /hello/slow always defers.
    state = tempfile.mkdtemp(prefix="ewyk-state-")
    try:
        yield from serve_module(Appliance(www=www["dir"], lcores="0-1", args=[
            "--shards", "1", "--reserved", "0", "--state-dir", state,
            "--plugin", PLUGIN + ":Hi"]))
    finally:
        shutil.rmtree(state, ignore_errors=True)


def curl(app, proto, path, *extra):
    r = app.ns(["curl", "-sS", "-m", "20", "-D", "/dev/stderr", *PROTOCOLS[proto],
                *extra, app.url(path)], check=False)
    assert r.returncode == 0, r.stderr
    return r


@pytest.mark.parametrize("proto", sorted(PROTOCOLS))
def test_copied_body_and_header(app, proto):
    r = curl(app, proto, "/hello?name=ewyk")
    assert r.stdout == "Hi, ewyk\n"
    assert "x-plugin: hello" in r.stderr.lower()
    assert ("HTTP/2 200" if proto != "h1" else "HTTP/1.1 200") in r.stderr


@pytest.mark.parametrize("proto", sorted(PROTOCOLS))
def test_borrowed_body_is_whole_and_given_back(app, proto, tmp_path):
    out = tmp_path / "big"
    app.ns(["curl", "-sS", "-m", "20", *PROTOCOLS[proto], "-o", str(out),
            app.url("/hello/big?kb=2048")])
    want = bytes((ord("a") + i % 26) for i in range(2048 * 1024))
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(want).hexdigest()
    lent, returned = stats(app)
    assert lent == returned and lent > 0


def stats(app):
    words = curl(app, "h1", "/hello/stats").stdout.split()
    return int(words[1]), int(words[3])


@pytest.mark.parametrize("proto", sorted(PROTOCOLS))
def test_streamed_body_of_unknown_length(app, proto):
    n = 150000
    r = curl(app, proto, f"/hello/count?n={n}")
    assert r.stdout == "".join(f"{i}\n" for i in range(1, n + 1))
    if proto == "h1":
        assert "transfer-encoding: chunked" in r.stderr.lower()
    lent, returned = stats(app)
    assert lent == returned


def test_client_leaving_mid_stream_returns_the_source(app):
    # The client reads a little of a long stream and goes away: the
    # source's done() still runs, once.
    app.ns_python("""
import socket
c = socket.create_connection(("198.18.0.2", 80))
c.sendall(b"GET /hello/count?n=5000000 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
c.recv(1000)
c.close()
""")
    for _ in range(50):
        lent, returned = stats(app)
        if lent == returned:
            break
        subprocess.run(["sleep", "0.1"])
    assert lent == returned


def test_either_handler_defers_itself_to_the_pool(app):
    before = app.telemetry("/ewyk/strategy")["shard_0"]["deferred_reqs"]
    for proto in ("h1", "h2c"):
        assert curl(app, proto, "/hello/slow?ms=30").stdout == "slept 30 ms\n"
    after = app.telemetry("/ewyk/strategy")["shard_0"]["deferred_reqs"]
    assert after - before == 2


def test_fiber_handler_of_a_plugin_waits_on_a_fiber(app):
    """A plugin's FIBER handler, in blocking style: 30 naps of 300 ms at
    once finish together on the shard's fibers, no thread taken."""
    before = app.telemetry("/ewyk/strategy")["shard_0"]
    assert curl(app, "h1", "/hello/nap?ms=5").stdout == "napped 5 ms on a fiber\n"
    r = app.ns(["h2load", "-n", "30", "-c", "1", "-m", "30", app.url("/hello/nap?ms=300")])
    assert "30 succeeded" in r.stdout, r.stdout
    assert re.search(r"finished in \d+(\.\d+)?ms,", r.stdout), r.stdout   # not seconds
    after = app.telemetry("/ewyk/strategy")["shard_0"]
    assert after["fiber_parks_count"] - before["fiber_parks_count"] == 31
    assert after["pec_tasks"] == before["pec_tasks"]


def test_plugin_keeps_notes_in_the_journaled_store(app):
    """The store from a plugin (ewyk_state_*): a durable PUT parks its
    fiber until the journal has the version, and /v1/state/ sees the same
    key; bad keys and missing ones get their 4xx."""
    before = app.telemetry("/ewyk/strategy")["shard_0"]
    r = curl(app, "h1", "/hello/note/plug-1?durable=1", "-X", "PUT",
             "--data-binary", "kept by a plugin")
    m = re.fullmatch(r"version (\d+) on disk on a fiber\n", r.stdout)
    assert m, r.stdout
    after = app.telemetry("/ewyk/strategy")["shard_0"]
    assert after["fiber_parks_count"] > before["fiber_parks_count"]
    assert curl(app, "h2c", "/hello/note/plug-1").stdout == "kept by a plugin"
    r = curl(app, "h1", "/v1/state/plug-1")
    assert r.stdout == "kept by a plugin"
    assert f'etag: "{m.group(1)}"' in r.stderr.lower()
    for path, method, code in (("/hello/note/bad%20key", "PUT", "400"),
                               ("/hello/note/" + "k" * 65, "PUT", "400"),
                               ("/hello/note/never-put", "GET", "404")):
        r = curl(app, "h1", path, "-X", method, "-o", "/dev/null", "-w",
                 "%{http_code}")
        assert r.stdout == code, (path, r.stdout)


@pytest.mark.parametrize("proto", sorted(PROTOCOLS))
def test_fiber_handler_streams_both_ways(app, proto, tmp_path):
    """/hello/shout reads its body as it arrives and writes it back in
    capitals as it goes: 2 MB, far beyond what a gathered body may be,
    come back whole."""
    words = b"ewyk streams a body both ways on a fiber\n"
    data = words * (2_000_000 // len(words))
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    before = app.telemetry("/ewyk/strategy")["shard_0"]
    out = tmp_path / "out.txt"
    if proto == "h2c":
        r = app.h2_upload("/hello/shout", src, out=out)
    else:
        r = app.ns(["curl", "-sS", "-m", "30", *PROTOCOLS[proto], "--data-binary",
                    f"@{src}", "-o", str(out), app.url("/hello/shout")], check=False)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == data.upper()
    after = app.telemetry("/ewyk/strategy")["shard_0"]
    assert after["fibers_started_count"] - before["fibers_started_count"] == 1
    # It parked for its reads and its writes, many times.
    assert after["fiber_parks_count"] - before["fiber_parks_count"] > 100


@pytest.mark.parametrize("proto", ["h1", "h2c"])
def test_request_accessors(app, proto):
    r = curl(app, proto, "/hello/inspect/more?a=1&b", "-X", "POST",
             "-H", "X-Test: yes", "--data-binary", "x" * 1000)
    lines = r.stdout.splitlines()
    assert "method POST" in lines and "path /hello/inspect/more" in lines
    assert "rest /more" in lines and "query a=1&b" in lines
    assert "body 1000" in lines and "x-test yes" in lines
    assert f"version {1 if proto == 'h1' else 2}" in lines
    assert any(x.lower() == "header x-test" for x in lines)


def test_route_rules(app, tmp_path):
    # a method the route does not take: 405 naming those it does
    r = curl(app, "h1", "/hello", "-X", "POST", "--data-binary", "x")
    assert "HTTP/1.1 405" in r.stderr and "Allow: GET, HEAD" in r.stderr
    r = curl(app, "h2c", "/hello", "-X", "DELETE")
    assert "HTTP/2 405" in r.stderr and "allow: GET, HEAD" in r.stderr
    # a body past what a request holds itself (4 KiB) is still given
    # whole, up to --max-body (test_max_body.py: 413 past it)
    r = curl(app, "h1", "/hello/inspect", "-X", "POST", "--data-binary", "x" * 5000)
    assert "HTTP/1.1 200" in r.stderr and "\nbody 5000\n" in r.stdout, r.stdout
    big = tmp_path / "5000"
    big.write_bytes(b"x" * 5000)
    out = tmp_path / "out"
    r = app.h2_upload("/hello/inspect", big, out=out)
    assert r.stdout.strip() == "200" and "\nbody 5000\n" in out.read_text(), r
    # HEAD of a route: its head, no body
    r = curl(app, "h1", "/hello", "-I")
    assert "HTTP/1.1 200" in r.stderr and r.stdout.startswith("HTTP/1.1 200")


def test_route_telemetry_counts_and_latency(app):
    before = app.telemetry("/ewyk/http")["route_hello_slow"]["requests_reqs"]
    for _ in range(5):
        curl(app, "h1", "/hello/slow?ms=40")
    h = app.telemetry("/ewyk/http")
    route = h["route_hello_slow"]
    assert route["path"] == "/hello/slow"
    assert route["requests_reqs"] - before == 5
    # 40 ms of sleep: the percentiles cannot be below it
    assert 40000000 <= route["p50_ns"] <= route["p99_ns"] <= route["max_ns"]
    assert h["by_method_reqs"]["GET"] > 0


def start_fails(args):
    prefix = f"ewyk-plugin-{os.getpid()}"
    try:
        r = subprocess.run([EWYKD, "--no-huge", "--no-shconf", "-m", "128", "--no-pci",
                            "-l", "0", f"--file-prefix={prefix}",
                            "--", *args], capture_output=True, text=True, timeout=30)
    finally:
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
    return r.returncode, r.stderr


@pytest.mark.parametrize("spec, message", [
    ("/nonexistent/plugin.so", "/nonexistent/plugin.so"),
    ("/usr/lib/x86_64-linux-gnu/libnghttp2.so.14", "no ewyk_plugin_init()"),
    (PLUGIN + ":" + "x" * 80, "refused: Invalid argument"),
])
def test_bad_plugin_stops_start_up(spec, message):
    rc, err = start_fails(["--plugin", spec])
    assert rc == 2, err
    assert message in err


def test_stream_through_a_small_flow_control_window(app):
    # A 2 KiB stream window: nghttp2 often offers the source only a few
    # bytes; it waits for the WINDOW_UPDATE instead of ending the body.
    n = 20000
    r = app.ns(["nghttp", "-w", "11", "-W", "11", app.url(f"/hello/count?n={n}")],
               timeout=60)
    assert r.stdout == "".join(f"{i}\n" for i in range(1, n + 1))


def test_stream_to_an_http10_client_ends_with_the_connection(app):
    # HTTP/1.0 has no chunked coding: a body of unknown length goes
    # unframed and the connection's close ends it.
    out = app.exchange(b"GET /hello/count?n=3000 HTTP/1.0\r\n"
                       b"Connection: keep-alive\r\n\r\n")
    head, body = out.split("\n\n", 1)     # the namespace output has \n lines
    assert head.startswith("HTTP/1.1 200"), head
    assert "transfer-encoding" not in head.lower() and "content-length" not in head.lower()
    assert "Connection: close" in head
    assert body == "".join(f"{i}\n" for i in range(1, 3001))
