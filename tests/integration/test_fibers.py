# SPDX-License-Identifier: BSD-3-Clause
"""Fiber handlers on the shard: /delay parks its fiber on the shard's
timers, so thousands wait on one lcore without a thread each; the stacks
go back to the pool; a client that leaves cancels its parked fiber; a
fiber that computes without parking loses the shard to the watchdog; no
fiber free falls back to the blocking pool; a durable PUT parks until the
journal has it."""
import re
import tempfile
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance
from test_http2 import PREFACE, frame, frames, hpack_get

ONE_WORKER = "0@0,1@1"          # the main lcore and the shard's: no reserved lcore
WITH_SPARE = "0@0,1@1,2@1"      # and a spare reserved lcore for the watchdog


def strategy(a):
    return a.telemetry("/ewyk/strategy")["shard_0"]


def delta(after, before, *keys):
    return {k: after[k] - before[k] for k in keys}


def h2load(a, path, n, c, m, timeout=60):
    r = a.ns(["h2load", "-n", str(n), "-c", str(c), "-m", str(m), a.url(path)],
             timeout=timeout)
    took = re.search(r"finished in ([\d.]+)(ms|s),", r.stdout)
    secs = float(took.group(1)) / (1000 if took.group(2) == "ms" else 1)
    return r.stdout, secs


def settle(a, key="fibers_in_use_count", want=0, timeout=5):
    deadline = time.monotonic() + timeout
    while True:
        s = strategy(a)
        if s[key] == want or time.monotonic() > deadline:
            return s
        time.sleep(0.05)


@pytest.fixture(scope="module")
def ewyk(www):
    yield from serve_module(Appliance(www=www["dir"], lcores=ONE_WORKER,
                                      args=["--shards", "1", "--blocking-threads", "1"]))


def test_2000_concurrent_delays_on_one_shard_take_about_one_delay(ewyk):
    """2,000 requests of /delay?ms=200 at once (20 HTTP/2 connections, 100
    streams each) on one shard, no reserved lcore, one blocking thread: on
    fibers they all wait side by side. The blocking pool's one thread would
    take 2,000 x 200 ms."""
    before = strategy(ewyk)
    out, secs = h2load(ewyk, "/delay?ms=200", 2000, 20, 100)
    after = settle(ewyk)
    print(f"\n  2000 x /delay?ms=200 on fibers: {secs * 1000:.0f} ms")
    assert "2000 succeeded" in out and "2000 2xx" in out, out
    assert secs < 1.5, out
    d = delta(after, before, "fiber_tasks", "pec_tasks", "epc_tasks", "pc_tasks",
              "fibers_started_count", "fibers_finished_count", "fiber_parks_count",
              "fiber_timeouts_count", "fiber_fallback_tasks")
    # A start and a resume each; no thread served any of them.
    assert d["fiber_tasks"] == 4000 and d["pec_tasks"] == d["epc_tasks"] == 0, d
    assert d["fibers_started_count"] == d["fibers_finished_count"] == 2000, d
    assert d["fiber_parks_count"] == d["fiber_timeouts_count"] == 2000, d
    assert d["fiber_fallback_tasks"] == 0
    assert after["fibers_peak_count"] >= 1000, after
    assert after["fibers_in_use_count"] == 0 and after["fibers_waiting_count"] == 0


def test_stacks_are_recycled(ewyk):
    """20,000 requests, 40 at a time: the stacks in use go back to 0 and no
    more are made than were ever in use at once (the million through the
    strategy is tests/unit/test_fiber_strategy.c)."""
    before = strategy(ewyk)
    out, _ = h2load(ewyk, "/delay?ms=0", 20000, 4, 10, timeout=120)
    after = settle(ewyk)
    assert "20000 succeeded" in out, out
    d = delta(after, before, "fibers_started_count", "fibers_finished_count")
    assert d["fibers_started_count"] == d["fibers_finished_count"] == 20000, d
    assert after["fibers_in_use_count"] == 0
    assert after["fiber_stacks_count"] <= after["fibers_peak_count"]
    # 40 in flight: the stacks made before (2,000 after the test above)
    # were enough; alone, 40 at most are made.
    assert after["fiber_stacks_count"] <= max(before["fiber_stacks_count"], 40), after


def test_answers_keep_request_order_and_waits_overlap(ewyk):
    """Pipelined HTTP/1.1: the fibers finish shortest first, the answers go
    out in request order; over HTTP/2 each stream's answer comes when its
    own wait ends."""
    reqs = b"".join(f"GET /delay?ms={ms} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
                    for ms in (300, 200, 100))
    t0 = time.monotonic()
    out = ewyk.exchange(reqs + b"GET /hello.txt HTTP/1.1\r\nHost: x\r\n"
                        b"Connection: close\r\n\r\n")
    took = time.monotonic() - t0
    assert [int(x) for x in re.findall(r"delayed (\d+) ms \(fiber\)", out)] == [300, 200, 100]
    assert out.index("delayed 100 ms") < out.index("hello from ewyk")
    # One connection's requests are served one after another (the next is
    # read once the answer is owed): about 600 ms, not 300.
    assert took < 2.0
    streams = PREFACE + b"".join(frame(0x1, 0x5, sid, hpack_get(f"/delay?ms={ms}"))
                                 for sid, ms in ((1, 400), (3, 200), (5, 50)))
    got = ewyk.ns_python(f"""
import socket, time
s = socket.create_connection(("{APP_IP}", 80), timeout=5)
s.sendall(bytes.fromhex("{streams.hex()}"))
got = b""
t0 = time.monotonic()
while got.count(b"delayed") < 3 and time.monotonic() - t0 < 5:
    got += s.recv(65536)
print(got.hex())
""")
    data = [(sid, p) for t, sid, p in frames(got.strip()) if t == 0x0 and p]
    assert [sid for sid, _ in data] == [5, 3, 1], data


def leave_while_parked(a, n_h1, n_h2):
    """n_h1 HTTP/1.1 clients and n_h2 HTTP/2 streams ask for a 5 s delay,
    then leave after 0.3 s (close; RST_STREAM). Returns what the clients
    that shut down only their sending side read afterwards."""
    rst = frame(0x3, 0, 1, (8).to_bytes(4, "big"))       # CANCEL
    h2 = PREFACE + frame(0x1, 0x5, 1, hpack_get("/delay?ms=5000"))
    return a.ns_python(f"""
import socket, time
h1 = [socket.create_connection(("{APP_IP}", 80), timeout=5) for _ in range({n_h1})]
h2 = [socket.create_connection(("{APP_IP}", 80), timeout=5) for _ in range({n_h2})]
for s in h1:
    s.sendall(b"GET /delay?ms=5000 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
for s in h2:
    s.sendall(bytes.fromhex("{h2.hex()}"))
time.sleep(0.3)
for s in h2:
    s.sendall(bytes.fromhex("{rst.hex()}"))
for s in h1:
    s.shutdown(socket.SHUT_WR)
got = []
for s in h1:
    try:
        got.append(s.recv(4096))
    except ConnectionResetError:
        got.append(b"reset")
print(got)
""", timeout=20)


def test_client_leaving_cancels_its_parked_fiber(ewyk):
    """A client that leaves while its fiber is parked: the wait ends at once
    (not after 5 s), the stack goes back to the pool, no answer is written
    (the HTTP/1.1 connection is reset, the HTTP/2 stream was), counted."""
    before = strategy(ewyk)
    t0 = time.monotonic()
    got = leave_while_parked(ewyk, 5, 5)
    took = time.monotonic() - t0
    after = settle(ewyk)
    assert took < 2.5, f"{took:.2f}s: the handlers ran their whole 5 s"
    assert "delayed" not in got and got.count("reset") + got.count("b''") == 5, got
    d = delta(after, before, "fibers_cancelled_count", "stale_answers_count",
              "fibers_started_count", "fibers_finished_count")
    assert d["fibers_cancelled_count"] == 10, d
    assert d["stale_answers_count"] == 10, d
    assert d["fibers_started_count"] == d["fibers_finished_count"] == 10, d
    assert after["fibers_in_use_count"] == 0 and after["fibers_waiting_count"] == 0
    # The shard is well: the next request is served.
    r = ewyk.ns(["curl", "-sS", "-m", "5", ewyk.url("/delay?ms=1")])
    assert r.stdout == "delayed 1 ms (fiber)\n"


def test_forced_modes_run_the_fiber_handler_on_threads(ewyk):
    """The same handler under a forced mode: ewyk_sleep() blocks the thread."""
    try:
        for mode in ("pec", "pc"):
            ewyk.telemetry(f"/ewyk/strategy,{mode}")
            r = ewyk.ns(["curl", "-sS", "-m", "5", ewyk.url("/delay?ms=1")])
            assert r.stdout == f"delayed 1 ms ({mode})\n"
    finally:
        ewyk.telemetry("/ewyk/strategy,adaptive")


def test_no_fiber_free_falls_back_to_the_blocking_pool(www):
    """--fibers 2: the third request at once runs on the blocking pool,
    counted; --fibers 0: every one does."""
    with Appliance(www=www["dir"], lcores=ONE_WORKER,
                   args=["--shards", "1", "--fibers", "2"]) as a:
        out, _ = h2load(a, "/delay?ms=300", 8, 8, 1)
        s = settle(a)
        assert "8 succeeded" in out, out
        # 8 at once, 300 ms each: 2 on the fibers, the 6 others on the pool
        assert s["fibers_started_count"] == 2 and s["fiber_fallback_tasks"] == 6, s
        assert s["pec_tasks"] == s["fiber_fallback_tasks"], s
        assert s["fiber_stacks_count"] <= 2 and s["fibers_peak_count"] <= 2, s
    with Appliance(www=www["dir"], lcores=ONE_WORKER,
                   args=["--shards", "1", "--fibers", "0"]) as a:
        r = a.ns(["curl", "-sS", "-m", "5", a.url("/delay?ms=1")])
        assert r.stdout == "delayed 1 ms (pec)\n"
        # The streamed-body calls wait on the pool thread as they would on a
        # fiber: the thread blocks until the shard's owner has done the work.
        r = a.ns(["curl", "-sS", "-m", "5", "-o", "/dev/null", "-w",
                  "%{http_code} %{size_download}", a.url("/bytes?n=10")])
        assert r.stdout == "200 10", r.stdout
        r = a.ns(["curl", "-sS", "-m", "5", "-w", " %{http_code}", "-X", "POST",
                  "--data-binary", "x" * 5000, a.url("/upload")])
        assert r.stdout.startswith("bytes 5000 fnv1a64 ") and r.stdout.endswith(" 200"), \
            r.stdout
        # Inline on the shard's own lcore nothing may wait: they refuse, and
        # the handlers answer 503; the unread body does not hang the client.
        a.telemetry("/ewyk/strategy,pc")
        for args in (["/bytes?n=10"], ["-X", "POST", "--data-binary", "x" * 5000,
                                       "/upload"]):
            r = a.ns(["curl", "-sS", "-m", "5", "-w", " %{http_code}",
                      *args[:-1], a.url(args[-1])])
            assert r.stdout == "no fiber free\n 503", r.stdout
        assert strategy(a)["fiber_tasks"] == 0


def test_fiber_computing_too_long_is_relieved_by_the_watchdog(www):
    """A fiber that computes 1 s before it parks holds its lcore: the
    watchdog hands the shard to the spare lcore, static files go on being
    served meanwhile (a request that waited for the computation would take
    most of its second; one that did not, milliseconds, even on a loaded
    host), and the fiber, parked on the lcore that lost the shard, is
    resumed by the new owner and answers."""
    with Appliance(www=www["dir"], lcores=WITH_SPARE,
                   args=["--shards", "1", "--reserved", "1", "--stuck-ms", "10"]) as a:
        before = strategy(a)
        slow = a.ns_popen(["curl", "-sS", "-m", "10", "-w", " %{time_total}",
                           a.url("/delay?ms=50&spin_us=1000000")])
        time.sleep(0.05)
        out = a.ns_python(f"""
import http.client, time
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
worst = 0
for _ in range(20):
    t0 = time.monotonic()
    c.request("GET", "/hello.txt")
    r = c.getresponse()
    assert r.read() == b"hello from ewyk\\n"
    worst = max(worst, time.monotonic() - t0)
print(worst)
""")
        body, _ = slow.communicate(timeout=20)
        after = settle(a)
    assert body.startswith("delayed 50 ms (fiber)"), body
    assert float(body.split()[-1]) >= 1.05
    assert after["steals_count"] > before["steals_count"], after
    # Static answers did not wait for the 1 s computation.
    assert float(out) < 0.5, out
    assert after["fibers_in_use_count"] == 0 and after["fibers_finished_count"] == 1


def test_durable_put_parks_its_fiber_until_the_journal_has_it(www):
    """/v1/state PUT ?durable=1 on a fiber: 40 at once, none deferred to
    the pool, each answered once on disk. A PUT whose version the sink has
    not synced yet parks its fiber, and is woken by the sync (no timeout,
    no cancel); one the sink was quicker than answers at once."""
    with tempfile.TemporaryDirectory(prefix="ewyk-state-") as d, \
            Appliance(www=www["dir"], lcores=ONE_WORKER,
                      args=["--shards", "1", "--state-dir", d,
                            "--blocking-threads", "1"]) as a:
        before = strategy(a)
        out = a.ns_python(f"""
import http.client, threading
res = []
def put(i):
    c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
    c.request("PUT", f"/v1/state/k{{i % 8}}?durable=1", body=f"v{{i}}")
    r = c.getresponse()
    res.append((r.status, r.read().decode()))
ts = [threading.Thread(target=put, args=(i,)) for i in range(40)]
[t.start() for t in ts]
[t.join() for t in ts]
print(sum(1 for s, b in res if s == 200 and b.endswith("on disk\\n")))
""")
        after = settle(a)
    assert out.strip() == "40", out
    d = delta(after, before, "fiber_tasks", "pec_tasks", "deferred_reqs", "fiber_parks_count",
              "fiber_wakes_count", "fiber_timeouts_count", "fibers_cancelled_count",
              "fibers_finished_count")
    assert d["deferred_reqs"] == 0 and d["pec_tasks"] == 0, d
    assert d["fibers_finished_count"] == 40, d
    assert 1 <= d["fiber_parks_count"] <= 40, d
    assert d["fiber_wakes_count"] == d["fiber_parks_count"], d
    assert d["fiber_timeouts_count"] == 0 and d["fibers_cancelled_count"] == 0, d
    assert after["fibers_in_use_count"] == 0
    print(f"\n  40 durable PUTs: {d['fiber_parks_count']} parked")
