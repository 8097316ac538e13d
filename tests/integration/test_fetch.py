# SPDX-License-Identifier: BSD-3-Clause
"""ewyk_fetch(), the handler API's blocking fetch, through the example
plugin's fiber route /hello/fetch/NAME/PATH: it fetches /PATH from upstream
NAME, reads the whole body with ewyk_fetch_read() and answers the
upstream's status, the byte count and the FNV-1a 64 of the body, or 502
and the errno's name when the fetch fails.

The upstreams (nginx, one that never answers, one that stalls after its
head, a refused port) come from upstream_servers.py. --upstream-conns 8:
the shard has 8 fetch handles, fewer than the requests of the concurrency
test, which wait in turn for one.
"""
import os
import time

import pytest

from ewyk_harness import Appliance, fnv1a64
from upstream_servers import MB, upstream_args, upstreams_serving

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
PLUGIN = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")
HANDLES = 8
ANSWER_TIMEOUT_MS = 3000


@pytest.fixture(scope="module")
def env():
    a = Appliance(args=upstream_args("ng", "slow", "refused", "stalls", "bighead") + [
        "--upstream-conns", str(HANDLES),
        "--upstream-timeout-ms", str(ANSWER_TIMEOUT_MS),
        "--plugin", PLUGIN], client_ns=True)
    try:
        a.start()
        with upstreams_serving(a, {"small.txt": 1000, "f64k.bin": 65536,
                                   "f1M.bin": MB}) as (prefix, _):
            yield {"a": a, "www": os.path.join(prefix, "www")}
    finally:
        a.close()


def summary(env, name, status=200):
    with open(os.path.join(env["www"], name), "rb") as f:
        data = f.read()
    return f"status {status}\nbytes {len(data)}\nfnv1a64 {fnv1a64(data):016x}\n"


def curl(a, path, *args, proto="h1", max_time=20):
    """(http code, body) of a GET."""
    r = a.ns(["curl", "-sS", "--max-time", str(max_time), "-w", "\n%{http_code}",
              "--http2-prior-knowledge" if proto == "h2" else "--http1.1", *args,
              a.url(path)], check=False, timeout=max_time + 10)
    body, _, code = r.stdout.rpartition("\n")
    return code, body


def telemetry(a):
    t = a.telemetry("/ewyk/upstreams", "/ewyk/strategy")
    return t["/ewyk/upstreams"], t["/ewyk/strategy"]["shard_0"]


def wait_settled(a, what, timeout=5):
    """Telemetry once what(upstreams, strategy) holds; fails after timeout."""
    deadline = time.time() + timeout
    while True:
        up, st = telemetry(a)
        if what(up, st):
            return up, st
        assert time.time() < deadline, (up, st)
        time.sleep(0.1)


def grown(after, before, section, key):
    """How much a telemetry counter grew."""
    return after[section][key] - before[section][key]


def idle(up, st):
    return up["fetch_handles"]["in_use"] == 0 and st["fibers_in_use_count"] == 0 and \
        st["fibers_waiting_count"] == 0


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_1mb_byte_count_and_checksum(env, proto):
    a = env["a"]
    up0, st0 = telemetry(a)
    code, body = curl(a, "/hello/fetch/ng/f1M.bin", proto=proto)
    assert (code, body) == ("200", summary(env, "f1M.bin"))
    up, st = wait_settled(a, idle)
    assert grown(up, up0, "upstream_ng", "requests_reqs") == 1
    assert grown(up, up0, "upstream_ng", "answers_reqs") == 1
    assert grown(up, up0, "upstream_ng", "cut_reqs") == 0
    assert grown(up, up0, "fetch_handles", "started_reqs") == 1
    assert st["fiber_parks_count"] - st0["fiber_parks_count"] > 3	# head, reads, close
    # Read to its end: the connection went back to the keep-alive pool.
    assert up["upstream_ng"]["idle_conns"] >= 1


def test_put_sends_the_request_body(env, tmp_path):
    """The request's method and body go to the upstream: nginx stores it."""
    a = env["a"]
    data = os.urandom(3000)
    src = tmp_path / "put.bin"
    src.write_bytes(data)
    code, body = curl(a, "/hello/fetch/ng/dav/put.bin", "-T", str(src))
    assert code == "201" and body.startswith("status 201\n"), (code, body)
    with open(os.path.join(env["www"], "dav", "put.bin"), "rb") as f:
        assert f.read() == data


def test_upstream_404_passes_through(env):
    code, body = curl(env["a"], "/hello/fetch/ng/nosuch.txt")
    assert code == "404"
    assert body.startswith("status 404\nbytes "), body


def test_refused_and_unknown_upstream_are_named_errors(env):
    a = env["a"]
    up0, _ = telemetry(a)
    assert curl(a, "/hello/fetch/refused/x") == ("502", "fetch ECONNREFUSED\n")
    assert curl(a, "/hello/fetch/nosuch/x") == ("502", "fetch ENOENT\n")
    up, _ = wait_settled(a, idle)
    assert grown(up, up0, "upstream_refused", "error_connect_refused_reqs") == 1


def test_answer_fields_over_8k_are_emsgsize(env):
    """An answer whose fields do not fit the handle (20 KB): the fetch
    fails with -EMSGSIZE and is cut, and the next one is served."""
    a = env["a"]
    up0, _ = telemetry(a)
    assert curl(a, "/hello/fetch/bighead/x") == ("502", "fetch EMSGSIZE\n")
    up, _ = wait_settled(a, idle)
    assert grown(up, up0, "upstream_bighead", "answers_reqs") == 1
    assert grown(up, up0, "upstream_bighead", "cut_reqs") == 1
    assert curl(a, "/hello/fetch/ng/small.txt") == ("200", summary(env, "small.txt"))


def test_timeout_of_the_fetch(env):
    """timeout_ms bounds the wait for the head, well before the upstream's
    own answer timeout; the fetch is cut."""
    a = env["a"]
    up0, _ = telemetry(a)
    t0 = time.monotonic()
    assert curl(a, "/hello/fetch/slow/x?timeout_ms=300") == ("502", "fetch ETIMEDOUT\n")
    assert time.monotonic() - t0 < ANSWER_TIMEOUT_MS / 1000
    up, _ = wait_settled(a, lambda up, st: idle(up, st) and
                         up["upstream_slow"]["open_conns"] == 0)
    assert grown(up, up0, "upstream_slow", "cut_reqs") == 1
    # Let go by the wait's end, not by the handler's return.
    assert grown(up, up0, "fetch_handles", "left_open_reqs") == 0


def test_read_timeout_cuts_the_fetch_at_once(env):
    """A read that times out lets the upstream go at once: while the
    handler still holds the handle (it lingers 1.5 s before its close),
    the connection is already reset."""
    a = env["a"]
    up0, _ = telemetry(a)
    p = a.ns_popen(["curl", "-sS", "--max-time", "20", "-w", "\n%{http_code}",
                    a.url("/hello/fetch/stalls/x?timeout_ms=300&linger_ms=1500")])
    try:
        up, st = wait_settled(a, lambda up, st: up["upstream_stalls"]["cut_reqs"] >
                              up0["upstream_stalls"]["cut_reqs"] and
                              up["upstream_stalls"]["open_conns"] == 0)
        assert p.poll() is None, "answered before the fetch was let go"
        assert up["fetch_handles"]["in_use"] == 1	# not yet closed
        out, _ = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert out == "read ETIMEDOUT\n\n502", out


@pytest.mark.parametrize("upstream", ["slow", "stalls"])
def test_client_leaving_cancels_the_fetch(env, upstream):
    """A client that gives up while the fiber waits for the head (slow) or
    for body bytes (stalls): the fiber gets -ECANCELED, the fetch is let
    go (its connection reset) and its handle freed, well before the
    upstream's answer timeout; the next request is served."""
    a = env["a"]
    up0, st0 = telemetry(a)
    t0 = time.monotonic()
    r = a.ns(["curl", "-sS", "--max-time", "0.5", a.url(f"/hello/fetch/{upstream}/x")],
             check=False)
    assert r.returncode == 28, r	# curl's timeout: no answer came
    up, st = wait_settled(a, lambda up, st: idle(up, st) and
                          st["fibers_cancelled_count"] > st0["fibers_cancelled_count"] and
                          up[f"upstream_{upstream}"]["open_conns"] == 0)
    assert time.monotonic() - t0 < ANSWER_TIMEOUT_MS / 1000
    assert st["fibers_cancelled_count"] - st0["fibers_cancelled_count"] == 1
    # Let go by the wait's end: the handler closed (or never had) the handle.
    assert grown(up, up0, "fetch_handles", "left_open_reqs") == 0
    name = f"upstream_{upstream}"
    assert grown(up, up0, name, "cut_reqs") == 1
    assert grown(up, up0, name, "answers_reqs") == \
        (1 if upstream == "stalls" else 0)
    assert curl(a, "/hello/fetch/ng/small.txt") == ("200", summary(env, "small.txt"))


def test_fetch_left_open_is_closed_by_the_return(env):
    """A handler that returns without ewyk_fetch_close(): its fetch is
    closed when the task ends, cut (not read to its end), its handle back."""
    a = env["a"]
    up0, _ = telemetry(a)
    assert curl(a, "/hello/fetch/ng/f1M.bin?leave=1") == ("200", "left open\n")
    up, _ = wait_settled(a, idle)
    assert grown(up, up0, "fetch_handles", "left_open_reqs") == 1
    assert grown(up, up0, "upstream_ng", "cut_reqs") == 1


def test_200_concurrent_over_h2_share_8_handles(env):
    """200 fetches at once (two HTTP/2 connections of 100 streams) with 8
    handles: the fibers queue for a handle, each in turn; every answer is
    whole and right."""
    a = env["a"]
    up0, _ = telemetry(a)
    want = summary(env, "f64k.bin")
    procs = [a.ns_popen(["nghttp", "-m", "100", "-t", "60",
                         a.url("/hello/fetch/ng/f64k.bin")]) for _ in range(2)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=90)
            assert p.returncode == 0, err
            outs.append(out.decode() if isinstance(out, bytes) else out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for out in outs:
        assert out == want * 100, out[:500]
    up, _ = wait_settled(a, idle)
    assert grown(up, up0, "fetch_handles", "started_reqs") == 200
    assert grown(up, up0, "fetch_handles", "queued_reqs") > 0
    assert up["fetch_handles"]["peak"] == HANDLES == up["fetch_handles"]["size"]
    assert up["upstream_ng"]["open_conns"] <= HANDLES


def test_queued_fetches_behind_failing_ones(env):
    """Handles freed by failures (refused connections, inside TCP's
    upcalls) go to the queued fetches, which all start and finish: 40
    fetches at once on one HTTP/2 connection through 8 handles, every
    other one refused."""
    a = env["a"]
    up0, _ = telemetry(a)
    urls = [a.url(("/hello/fetch/refused/x" if i % 2 else "/hello/fetch/ng/small.txt") +
                  f"?i={i}") for i in range(40)]	# nghttp fetches a URI once
    r = a.ns(["nghttp", "-t", "30", *urls], check=False, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(summary(env, "small.txt")) == 20, r.stdout
    assert r.stdout.count("fetch ECONNREFUSED\n") == 20, r.stdout
    up, _ = wait_settled(a, idle)
    assert grown(up, up0, "fetch_handles", "queued_reqs") > 0
    assert grown(up, up0, "upstream_refused", "error_connect_refused_reqs") == 20


def test_proxy_requests_hold_handles_and_others_queue(env):
    """The proxy's requests are fetches like any handler's: while they hold
    every handle of the shard, another fetch queues for one (counted) and
    its timeout_ms bounds the wait; once they are gone it is served. The
    proxy's requests took the connections idle in ng's pool (reset to make
    room)."""
    a = env["a"]
    assert curl(a, "/hello/fetch/ng/small.txt") == ("200", summary(env, "small.txt"))
    up0, _ = telemetry(a)
    idle_ng = up0["upstream_ng"]["idle_conns"]
    assert idle_ng >= 1
    holders = [a.ns_popen(["curl", "-s", "-o", "/dev/null", "--max-time", "2",
                           a.url("/proxy/slow/x")]) for _ in range(HANDLES)]
    try:
        wait_settled(a, lambda up, st: up["upstream_slow"]["open_conns"] == HANDLES and
                     up["fetch_handles"]["in_use"] == HANDLES)
        assert curl(a, "/hello/fetch/ng/small.txt?timeout_ms=300") == \
            ("502", "fetch ETIMEDOUT\n")
        up, _ = telemetry(a)
        assert grown(up, up0, "fetch_handles", "queued_reqs") == 1
        assert grown(up, up0, "upstream_ng", "evicted_conns") == idle_ng
    finally:
        for p in holders:
            p.wait(10)
    wait_settled(a, lambda up, st: idle(up, st) and up["upstream_slow"]["open_conns"] == 0)
    assert curl(a, "/hello/fetch/ng/small.txt") == ("200", summary(env, "small.txt"))


def test_off_a_fiber_blocks_a_thread_or_is_eperm(env):
    """Under a forced mode the fiber handler runs like a blocking one: on
    the blocking pool its fetch blocks the thread until the owner has the
    answer; inline on the shard's own lcore (pc) nothing may wait."""
    a = env["a"]
    a.telemetry("/ewyk/strategy,pec")
    try:
        assert curl(a, "/hello/fetch/ng/small.txt") == ("200", summary(env, "small.txt"))
        a.telemetry("/ewyk/strategy,pc")
        assert curl(a, "/hello/fetch/ng/small.txt") == ("502", "fetch EPERM\n")
    finally:
        a.telemetry("/ewyk/strategy,adaptive")
    assert curl(a, "/hello/fetch/ng/small.txt") == ("200", summary(env, "small.txt"))
