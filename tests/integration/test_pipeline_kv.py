# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/1.1 pipelining with handlers that finish out of order (answers
keep request order, the read-ahead is bounded), and /kv/KEY: GET, PUT and
DELETE on the in-memory store shared by both shards, never torn under
concurrent writers and readers."""
import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance


@pytest.fixture(scope="module")
def app(www):
    yield from serve_module(Appliance(www=www["dir"], lcores="0@0,1@1,2@1",
                                      args=["--shards", "2"]))


def pipeline(app, requests, timeout=20):
    """Sends the requests in one write on one connection; returns the
    answers as (status, headers, body) in arrival order, and the time."""
    out = app.ns_python(f"""
import socket, time, json
reqs = {requests!r}
c = socket.create_connection(("{APP_IP}", 80), timeout={timeout})
t0 = time.time()
c.sendall("".join(reqs).encode())
buf, answers = b"", []
while len(answers) < len(reqs):
    while b"\\r\\n\\r\\n" not in buf:
        d = c.recv(65536)
        if not d:
            raise SystemExit("closed after %d answers" % len(answers))
        buf += d
    head, buf = buf.split(b"\\r\\n\\r\\n", 1)
    lines = head.decode().split("\\r\\n")
    hdrs = {{k.lower(): v for k, v in (l.split(": ", 1) for l in lines[1:])}}
    n = int(hdrs.get("content-length", 0))
    if reqs[len(answers)].startswith("HEAD"):
        n = 0
    while len(buf) < n:
        buf += c.recv(65536)
    answers.append((int(lines[0].split()[1]), hdrs, buf[:n].decode()))
    buf = buf[n:]
print(json.dumps([answers, time.time() - t0]))
""")
    import json
    answers, elapsed = json.loads(out)
    return answers, elapsed


def get(path, method="GET"):
    return f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n"


def test_answers_keep_request_order_when_handlers_finish_out_of_order(app):
    reqs = [get("/delay?ms=400"), get("/spin?us=10"), get("/delay?ms=300"),
            get("/delay?ms=10"), get("/hello.txt"), get("/kv/none"),
            get("/delay?ms=20", "HEAD"), get("/either?ms=5")]
    answers, elapsed = pipeline(app, reqs)
    assert [a[0] for a in answers] == [200, 200, 200, 200, 200, 404, 200, 200]
    assert answers[0][2].startswith("delayed 400 ms")
    assert answers[1][2].startswith("spun 10 us")
    assert answers[2][2].startswith("delayed 300 ms")
    assert answers[3][2].startswith("delayed 10 ms")
    assert answers[4][2] == "hello from ewyk\n"
    assert answers[5][2] == "no such key\n"
    assert answers[6][2] == "" and int(answers[6][1]["content-length"]) > 0
    assert answers[7][2].startswith("delayed 5 ms") or \
        answers[7][2].startswith("not delayed")
    # The three delays ran side by side: one after another they take
    # 710 ms at least.
    assert elapsed < 0.7, elapsed


def test_deep_pipeline_is_bounded_and_complete(app):
    before = app.telemetry("/ewyk/http")["pipeline_full_count"]
    reqs = [get(f"/delay?ms={50 - i}") for i in range(40)]
    answers, _ = pipeline(app, reqs)
    assert [a[2].split()[1] for a in answers] == [str(50 - i) for i in range(40)]
    # more than HTTP1_PIPELINE (16) were owed: reading stopped meanwhile
    assert app.telemetry("/ewyk/http")["pipeline_full_count"] > before


def test_h2load_pipelined_to_a_blocking_route(app):
    # 16 connections, 8 requests in flight on each, to a handler that the
    # blocking pool runs: answers come back whole and in order, or h2load
    # would count them as errors.
    before = app.telemetry("/ewyk/http")["route_delay"]["requests_reqs"]
    r = app.ns(["h2load", "--h1", "-n", "1600", "-c", "16", "-m", "8",
                app.url("/delay?ms=2")], timeout=120)
    assert "1600 succeeded" in r.stdout and "1600 2xx" in r.stdout, r.stdout
    after = app.telemetry("/ewyk/http")["route_delay"]["requests_reqs"]
    assert after - before == 1600


def test_bad_request_behind_owed_answers_comes_last_and_closes(app):
    out = app.exchange(b"GET /delay?ms=200 HTTP/1.1\r\nHost: x\r\n\r\n"
                       b"GET /spin?us=1 HTTP/1.1\r\nHost: x\r\n\r\n"
                       b"GET /bad path HTTP/1.1\r\n\r\n")
    statuses = [l.split()[1] for l in out.splitlines() if l.startswith("HTTP/1.1 ")]
    assert statuses == ["200", "200", "400"], out
    assert out.index("delayed 200 ms") < out.index("spun 1 us")


def kv(app, method, key, body=None, proto="--http1.1"):
    args = ["curl", "-sS", "-m", "10", proto, "-X", method, "-D", "/dev/stderr"]
    if body is not None:
        args += ["--data-binary", body]
    r = app.ns(args + [app.url("/kv/" + key)], check=True)
    status = int(r.stderr.split()[1])
    return status, r.stdout, r.stderr


@pytest.mark.parametrize("proto", ["--http1.1", "--http2-prior-knowledge"])
def test_kv_get_put_delete(app, proto):
    key = "k" + proto.strip("-")[:5].replace(".", "")
    assert kv(app, "GET", key, proto=proto)[0] == 404
    st, body, hdr = kv(app, "PUT", key, "first", proto)
    assert st == 200 and body.startswith("version ")
    assert kv(app, "GET", key, proto=proto)[:2] == (200, "first")
    assert kv(app, "PUT", key, "second", proto)[0] == 200
    assert kv(app, "GET", key, proto=proto)[:2] == (200, "second")
    assert kv(app, "DELETE", key, proto=proto)[0] == 200
    assert kv(app, "GET", key, proto=proto)[0] == 404
    assert kv(app, "DELETE", key, proto=proto)[0] == 404


def test_kv_bad_requests(app):
    assert kv(app, "PUT", "bad%20key", "x")[0] == 400
    assert kv(app, "PUT", "k" * 65, "x")[0] == 400
    # Past the store's 4 KiB a value: the handler, given the body whole
    # (up to --max-body), refuses it.
    st, text, _ = kv(app, "PUT", "big", "x" * 5000)
    assert st == 413 and "at most 4096 bytes" in text, text
    st, _, hdr = kv(app, "POST", "k", "x")
    assert st == 405 and "Allow: GET, HEAD, PUT, DELETE" in hdr
    assert kv(app, "PUT", "ok", "1")[0] == 200     # still serving


def test_kv_never_torn_under_concurrent_writers_and_readers(app):
    # Writers put values made of one 8-byte token repeated (lengths vary
    # from 8 bytes to 4 KiB) and delete now and then; readers on other
    # connections (RSS spreads them over both shards) check that every
    # value they get is one token repeated: never a mix of two writes.
    # A count of operations, not a time: a busy host makes it slower, not
    # weaker.
    out = app.ns_python(f"""
import http.client, random, threading, time
KEYS = ["hot%d" % i for i in range(4)]
stop = time.time() + 40
errors, reads, writes = [], [0], [0]

def writer(w):
    c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
    n = 0
    while time.time() < stop and n < 400:
        n += 1
        k = random.choice(KEYS)
        if n % 17 == 0:
            c.request("DELETE", "/kv/" + k)
        else:
            tok = "%02d%06d" % (w, n % 1000000)
            c.request("PUT", "/kv/" + k, body=tok * random.randint(1, 512))
        r = c.getresponse(); r.read()
        if r.status not in (200, 404):
            errors.append("write %d" % r.status)
        writes[0] += 1

def reader():
    c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
    n = 0
    while time.time() < stop and n < 600:
        n += 1
        c.request("GET", "/kv/" + random.choice(KEYS))
        r = c.getresponse(); v = r.read().decode()
        reads[0] += 1
        if r.status == 404:
            continue
        if r.status != 200 or len(v) % 8 or v != v[:8] * (len(v) // 8):
            errors.append("torn %d %r" % (r.status, v[:40]))

ts = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
ts += [threading.Thread(target=reader) for _ in range(5)]
[t.start() for t in ts]
[t.join() for t in ts]
print(len(errors), reads[0], writes[0], errors[:3])
""", timeout=60)
    nerr, reads, writes, _ = out.split(" ", 3)
    assert int(nerr) == 0, out
    assert int(reads) == 5 * 600 and int(writes) == 3 * 400, out
