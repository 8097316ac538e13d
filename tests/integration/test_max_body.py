# SPDX-License-Identifier: BSD-3-Clause
"""Plain handlers (not body-stream routes) are given request bodies whole
up to --max-body (1 MiB by default), over HTTP/1.1 with a Content-Length
or chunked and over HTTP/2 (python3-h2: curl 7.88's HTTP/2 uploads are
unreliable). Past it: 413 at once on a Content-Length, before the body is
read, and as a chunked or HTTP/2 body crosses it; HTTP/1.1 then closes
the connection, HTTP/2 ends the stream and the connection goes on. The
bodies are gathered in a bounded set of buffers per shard
(--body-buffers): past them 503; a body that stops coming is cut (408)
and its buffer comes back, over both protocols; a body skipped after its
answer that stops coming ends the connection.

The handler is the example plugin's POST /hello/inspect, which answers the
length and the FNV-1a 64 of the body it was given."""
import os
import re
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, ROOT, Appliance, fnv1a64

HELLO = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")
MAX = 1 << 20
TIMEOUT_MS = 1500


@pytest.fixture(scope="module")
def app(www):
    yield from serve_module(Appliance(
        www=www["dir"], demo=False,
        args=["--plugin", HELLO, "--body-buffers", "2",
              "--header-timeout-ms", str(TIMEOUT_MS)]))


@pytest.fixture(scope="module")
def bodies(tmp_path_factory):
    d = tmp_path_factory.mktemp("bodies")
    out = {}
    for n in (4097, 65536, MAX, MAX + 1):
        p = d / f"b{n}"
        p.write_bytes(os.urandom(n))
        out[n] = p
    return out


# Raw HTTP/1.1 on the client side: a connection, and all it answers until
# the server closes.
RAW = f"""
import os, socket, sys, time
def connect(timeout=10):
    return socket.create_connection(("{APP_IP}", 80), timeout=timeout)
def until_close(c):
    got = b""
    while True:
        d = c.recv(65536)
        if not d:
            return got
        got += d
"""


def inspected(text):
    m = re.search(r"body (\d+)\nbody fnv1a64 ([0-9a-f]{16})", text)
    assert m, text
    return int(m.group(1)), int(m.group(2), 16)


def curl_post(a, path, src, *extra):
    r = a.ns(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "--data-binary",
              f"@{src}", "-H", "Content-Type: application/octet-stream", *extra,
              a.url(path)], check=False, timeout=60)
    body, _, code = r.stdout.rpartition("\n")
    return int(code or 0), body


def busy(a):
    return a.telemetry("/ewyk/http")["body_buffers_busy"]


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_http1_bodies_up_to_max_body_reach_the_handler(app, bodies, framing):
    extra = ["-H", "Transfer-Encoding: chunked"] if framing == "chunked" else []
    for n in (4097, 65536, MAX):
        data = bodies[n].read_bytes()
        code, text = curl_post(app, "/hello/inspect", bodies[n], *extra)
        assert code == 200, (n, code, text)
        assert inspected(text) == (n, fnv1a64(data)), n
    assert busy(app) == 0


def test_http1_past_max_body_is_refused_before_the_body(app):
    """1 MiB announced: taken, the server waits for it. One byte more:
    413 at once, nothing of the body sent, and the connection closed."""
    out = app.ns_python(RAW + f"""
def head(n):
    return (f"POST /hello/inspect HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: {{n}}\\r\\n\\r\\n").encode()
c = connect(5)
c.sendall(head({MAX}))
c.settimeout(1.0)
try:
    print("early answer:", c.recv(100))
except socket.timeout:
    print("waits for the body")
c.close()
c = connect(5)
t0 = time.monotonic()
c.sendall(head({MAX + 1}))
got = until_close(c)
print("took %.2f" % (time.monotonic() - t0))
print(got.decode())
""")
    assert "waits for the body" in out, out
    assert "HTTP/1.1 413 Content Too Large" in out and "Connection: close" in out, out
    assert float(re.search(r"took ([\d.]+)", out).group(1)) < 2, out


def test_http1_chunked_body_crossing_max_body_is_refused_as_it_crosses(app):
    before = app.telemetry("/ewyk/http")["bodies_too_large_count"]
    out = app.ns_python(RAW + f"""
c = connect()
c.sendall(b"POST /hello/inspect HTTP/1.1\\r\\nHost: x\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n")
chunk = b"a" * 65536
for i in range({MAX} // 65536):
    c.sendall(b"10000\\r\\n" + chunk + b"\\r\\n")
c.settimeout(1.0)
try:
    print("answer at max:", c.recv(100))
except socket.timeout:
    print("still reading at max")
c.settimeout(10)
c.sendall(b"1\\r\\nb\\r\\n")     # the byte past it; no last chunk follows
got = until_close(c)
print(got.decode())
""")
    assert "still reading at max" in out, out
    assert "HTTP/1.1 413 Content Too Large" in out and "Connection: close" in out, out
    assert app.telemetry("/ewyk/http")["bodies_too_large_count"] == before + 1
    assert busy(app) == 0


def test_http1_connection_goes_on_after_a_large_body(app, bodies):
    data = bodies[MAX].read_bytes()
    out = app.ns_python(RAW + f"""
data = open("{bodies[MAX]}", "rb").read()
c = connect()
c.sendall(b"POST /hello/inspect HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(data)
          + data + b"GET /hello?name=again HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
got = until_close(c)
print(got.decode())
""")
    assert out.count("HTTP/1.1 200 OK") == 2, out
    assert inspected(out) == (MAX, fnv1a64(data))
    assert out.rstrip().endswith("hello, again"), out


def test_http2_bodies_up_to_max_body_reach_the_handler(app, bodies, tmp_path):
    for n in (4097, 65536, MAX):
        out = tmp_path / f"out{n}"
        r = app.h2_upload("/hello/inspect", bodies[n], out=out)
        assert r.returncode == 0 and r.stdout.strip() == "200", (n, r.stdout, r.stderr)
        assert inspected(out.read_text()) == (n, fnv1a64(bodies[n].read_bytes())), n
    assert busy(app) == 0


H2_CLIENT = """
import socket, sys
import h2.config, h2.connection, h2.events
s = socket.create_connection(("{ip}", 80), timeout=10)
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
s.sendall(c.data_to_send())
events = {{}}

def pump(sid, until):
    while not until():
        d = s.recv(65536)
        if not d:
            sys.exit("connection closed")
        for ev in c.receive_data(d):
            if isinstance(ev, h2.events.ConnectionTerminated):
                sys.exit(f"GOAWAY {{ev.error_code!r}}")
            k = getattr(ev, "stream_id", None)
            events.setdefault(k, []).append(ev)
            if isinstance(ev, h2.events.DataReceived):
                c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        s.sendall(c.data_to_send())

def status(sid):
    for ev in events.get(sid, []):
        if isinstance(ev, h2.events.ResponseReceived):
            return dict(ev.headers)[b":status"].decode()

def ended(sid):
    return any(isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset))
               for ev in events.get(sid, []))

def body(sid):
    return b"".join(ev.data for ev in events.get(sid, [])
                    if isinstance(ev, h2.events.DataReceived))

def post(headers, data, end=True):
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, [(":method", "POST"), (":path", "/hello/inspect"),
                         (":scheme", "http"), (":authority", "x")] + headers,
                   end_stream=not data and end)
    off = 0
    while off < len(data):
        n = min(c.local_flow_control_window(sid), c.max_outbound_frame_size, len(data) - off)
        if n <= 0:
            s.sendall(c.data_to_send())
            pump(sid, lambda: c.local_flow_control_window(sid) > 0 or ended(sid))
            if ended(sid):
                break
            continue
        c.send_data(sid, data[off:off + n], end_stream=end and off + n == len(data))
        off += n
    s.sendall(c.data_to_send())
    return sid
"""


def test_http2_past_max_body_is_refused_and_the_connection_goes_on(app, bodies):
    data = bodies[65536]
    out = app.ns_python(H2_CLIENT.format(ip=APP_IP) + f"""
# Said too large: 413 before any DATA goes.
a = post([("content-length", "{MAX + 1}")], b"", end=False)
pump(a, lambda: ended(a) or status(a))
print("announced", status(a))
# No content-length, DATA crossing max_body: 413 as it crosses.
b = post([], b"x" * ({MAX} + 16384), end=False)
pump(b, lambda: status(b) is not None)
print("crossing", status(b))
if not ended(b):
    c.end_stream(b)
    s.sendall(c.data_to_send())
# The connection goes on: a body under the limit is served whole.
d = post([("content-length", "65536")], open("{data}", "rb").read())
pump(d, lambda: ended(d))
print("after", status(d))
print(body(d).decode())
""")
    assert "announced 413" in out and "crossing 413" in out, out
    assert "after 200" in out, out
    assert inspected(out) == (65536, fnv1a64(data.read_bytes()))
    assert busy(app) == 0


def test_body_buffers_are_bounded(app, bodies, tmp_path):
    """--body-buffers 2: two bodies stalled half way hold both; a third is
    refused (503) at once; once they finish, their buffers are back."""
    go = tmp_path / "go"
    holders = app.ns_popen_python(RAW + f"""
cs = []
for i in range(2):
    c = connect(20)
    c.sendall(b"POST /hello/inspect HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100000\\r\\n"
              b"Connection: close\\r\\n\\r\\n" + b"h" * 50000)
    cs.append(c)
print("holding", flush=True)
while not os.path.exists("{go}"):
    time.sleep(0.05)
for c in cs:
    c.sendall(b"h" * 50000)
for c in cs:
    got = until_close(c)
    print(got.split(b"\\r\\n")[0].decode(), flush=True)
""")
    try:
        assert holders.stdout.readline().strip() == "holding"
        time.sleep(0.2)
        code, text = curl_post(app, "/hello/inspect", bodies[65536])
        go.write_text("")
        assert code == 503, (code, text)
        rest = holders.communicate(timeout=30)[0]
    finally:
        if holders.poll() is None:
            holders.kill()
    assert rest.split() == ["HTTP/1.1", "200", "OK"] * 2, rest
    assert app.telemetry("/ewyk/http")["body_buffers_short_count"] >= 1
    assert busy(app) == 0
    code, _ = curl_post(app, "/hello/inspect", bodies[65536])
    assert code == 200


def stalled_until_close(app, request):
    """Sends the start of a request (an expression of bytes) and reads
    until the server closes: what came, after checking that the close came
    about --header-timeout-ms later, and counted one body timeout."""
    before = app.telemetry("/ewyk/http")["body_timeouts_count"]
    out = app.ns_python(RAW + f"""
c = connect(15)
c.sendall({request})
t0 = time.monotonic()
got = until_close(c)
print("after %.1f" % (time.monotonic() - t0))
print(got.decode())
""")
    took = float(re.search(r"after ([\d.]+)", out).group(1))
    assert TIMEOUT_MS / 1000 - 0.2 <= took < 10, out
    assert app.telemetry("/ewyk/http")["body_timeouts_count"] == before + 1
    return out


def test_a_body_that_stops_coming_is_cut_and_its_buffer_freed(app):
    out = stalled_until_close(app, 'b"POST /hello/inspect HTTP/1.1\\r\\nHost: x\\r\\n'
                              'Content-Length: 100000\\r\\n\\r\\n" + b"s" * 10000')
    assert "HTTP/1.1 408" in out, out
    assert busy(app) == 0


def test_http2_bodies_that_stop_coming_are_cut_and_the_connection_goes_on(app, bodies):
    """Two HTTP/2 streams stall half way, one in a body buffer (50,000 of
    100,000 bytes), one small (100 of 200 bytes, in the shard's memory):
    each is answered 408 after --header-timeout-ms without DATA, its
    buffer comes back, and the connection serves a whole body after."""
    before = app.telemetry("/ewyk/http")["body_timeouts_count"]
    data = bodies[65536]
    out = app.ns_python(H2_CLIENT.format(ip=APP_IP) + f"""
import time
t0 = time.monotonic()
a = post([("content-length", "100000")], b"a" * 50000, end=False)
b = post([("content-length", "200")], b"b" * 100, end=False)
pump(a, lambda: status(a) and status(b))
print("after %.1f" % (time.monotonic() - t0), status(a), status(b))
d = post([("content-length", "65536")], open("{data}", "rb").read())
pump(d, lambda: ended(d))
print("then", status(d))
print(body(d).decode())
""")
    took = float(re.search(r"after ([\d.]+)", out).group(1))
    assert "408 408" in out and "then 200" in out, out
    assert TIMEOUT_MS / 1000 - 0.2 <= took < 10, out
    assert inspected(out) == (65536, fnv1a64(data.read_bytes()))
    assert app.telemetry("/ewyk/http")["body_timeouts_count"] == before + 2
    assert busy(app) == 0


def test_a_skipped_body_that_stops_coming_ends_the_connection(app):
    """A request answered without its body (405: static files take no
    POST) whose body then stops coming: the connection waits for it (to
    keep the next request's bytes apart) no longer than
    --header-timeout-ms, then closes."""
    out = stalled_until_close(app, 'b"POST /nowhere HTTP/1.1\\r\\nHost: x\\r\\n'
                              'Content-Length: 100\\r\\n\\r\\nabc"')
    assert "HTTP/1.1 405" in out, out
    # The server closed first: its side is gone once the client's FIN is in.
    deadline = time.time() + 5
    while app.telemetry("/ewyk/stats")["open_conns"] and time.time() < deadline:
        time.sleep(0.1)
    assert app.telemetry("/ewyk/stats")["open_conns"] == 0
