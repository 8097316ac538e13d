# SPDX-License-Identifier: BSD-3-Clause
"""No libc allocation on the request path in steady state, HTTP/2
included: ewykd runs with an allocation counter preloaded
(tests/alloc/malloc_count.c); after a warm-up, 100 000 requests over
HTTP/2 and HTTP/1.1 keep-alive must not make its lcores call the
allocator once. Over TLS too: GnuTLS takes its record buffers from malloc,
which ewykd's own malloc serves from lib/tls's per-thread caches; what
misses them goes on to the C library through the counter (docs/tls.md)."""
import os
import re
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, ROOT, Appliance
from tls_certs import CA

COUNTER = os.path.join(ROOT, "build", "tests", "libewyk_malloc_count.so")
HELLO = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")

# The warm-up must reach the peak the measured window reaches: with a test
# beside it, the window's peak of streams and buffers at once can pass the
# warm-up's, and the growth it makes is counted as an allocation.
pytestmark = pytest.mark.alone


@pytest.fixture(scope="module")
def counted(www):
    if not os.path.exists(COUNTER):
        pytest.fail(f"{COUNTER} is not built")
    # Body buffers for every stream h2load -c 4 -m 8 has in flight.
    yield from serve_module(Appliance(www=www["dir"], args=["--shards", "1",
                                                             "--plugin", HELLO,
                                                             "--body-buffers", "40"],
                                      env={"LD_PRELOAD": COUNTER}))


def lcore_allocs(a):
    """Allocator calls by the EAL's worker lcores (the shard's among them)."""
    per_thread = a.telemetry("/ewyk_test/allocs")
    workers = {k: v for k, v in per_thread.items() if k.startswith("rte_worker")}
    assert workers, per_thread
    return sum(workers.values()), per_thread


def worker_sites(a):
    """The call stacks of the worker lcores' allocations since armed."""
    return {k: v for k, v in a.telemetry("/ewyk_test/alloc_sites").items()
            if k.startswith("rte_worker")}


def load(a, n, h1, path="/hello.txt", data=None):
    args = ["h2load", "-n", str(n), "-c", "4", "-m", "8"]
    if h1:
        args.insert(1, "--h1")
    if data is not None:
        args += ["-d", str(data)]
    r = a.ns(args + [a.url(path)], timeout=120)
    assert re.search(rf"status codes: {n} 2xx", r.stdout), r.stdout


def test_no_allocation_per_request_after_warm_up(counted):
    for h1 in (False, True):
        load(counted, 20000, h1)		# warm-up: pools and classes fill
    before, threads0 = lcore_allocs(counted)
    counted.telemetry("/ewyk_test/allocs_arm")
    grows0 = counted.telemetry("/ewyk/http")["h2_mem_grows_count"]
    for h1 in (False, True):
        load(counted, 50000, h1)
    after, threads1 = lcore_allocs(counted)
    http = counted.telemetry("/ewyk/http")
    assert http["requests_reqs"] >= 140000
    # On failure: the lcores' allocations and where each came from.
    assert after - before == 0, (threads0, threads1, worker_sites(counted))
    assert http["h2_mem_grows_count"] == grows0


def test_no_allocation_per_large_body_after_warm_up(counted, tmp_path):
    """Bodies past 4 KiB given whole to a plain handler are gathered in
    the shard's body buffers, made at start: no allocation for them
    either, HTTP/1.1 or HTTP/2 (h2load -d posts the file each time)."""
    body = tmp_path / "body.bin"
    body.write_bytes(os.urandom(64 * 1024))
    for h1 in (False, True):
        load(counted, 2000, h1, "/hello/inspect", body)	# warm-up
    before, threads0 = lcore_allocs(counted)
    counted.telemetry("/ewyk_test/allocs_arm")
    http0 = counted.telemetry("/ewyk/http")
    for h1 in (False, True):
        load(counted, 5000, h1, "/hello/inspect", body)
    after, threads1 = lcore_allocs(counted)
    http = counted.telemetry("/ewyk/http")
    assert http["body_buffers_taken_count"] - http0["body_buffers_taken_count"] == 10000, http
    assert http["body_buffers_busy"] == 0
    # A HEADERS frame split between two TCP segments is gathered in a
    # 16 KiB block of the shard's HTTP/2 pool, as are bodies that arrive
    # before their handler takes them; how many are held at once is the
    # peers' timing, so the window may set a new peak the warm-up did not
    # (seen once in a CI run: one block). Every lcore allocation must be
    # such a growth of the pool, and a handful at most in 10 000 requests:
    # nothing per request or per body.
    grows = http["h2_mem_grows_count"] - http0["h2_mem_grows_count"]
    assert after - before == grows, (threads0, threads1, worker_sites(counted))
    assert grows <= 4, (grows, worker_sites(counted))


def test_the_counter_sees_allocations(counted, tmp_path):
    """The counter is live: a worker lcore that allocates is seen. The
    first HTTP/2 /echo of a 200 KB body needs a block of a size class no
    request used before: one counted growth of the shard's memory."""
    body = tmp_path / "body.bin"
    body.write_bytes(os.urandom(200 * 1024))
    before, _ = lcore_allocs(counted)
    counted.telemetry("/ewyk_test/allocs_arm")
    grows = counted.telemetry("/ewyk/http")["h2_mem_grows_count"]
    r = counted.h2_upload("/echo", body, out=tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == body.read_bytes(), r.stderr
    after, threads = lcore_allocs(counted)
    assert after > before, threads
    assert counted.telemetry("/ewyk/http")["h2_mem_grows_count"] > grows
    # And it says where: the shard's memory growing, for HTTP/2's DATA.
    stacks = [st for v in worker_sites(counted).values() for st in v]
    print("\n  " + "\n  ".join(stacks))
    assert any("http_mem_alloc" in st and "h2_data" in st for st in stacks), stacks


@pytest.fixture(scope="module")
def counted_tls(www, tmp_path_factory):
    if not os.path.exists(COUNTER):
        pytest.fail(f"{COUNTER} is not built")
    cert, key, _ = CA(tmp_path_factory.mktemp("pki")).issue("ec")
    yield from serve_module(Appliance(
        www=www["dir"], args=["--shards", "1", "--tls-cert", cert, "--tls-key", key],
        env={"LD_PRELOAD": COUNTER}))


def steady_window(a, h1, warm_s=2, window_s=2):
    """Requests and the lcores' allocations over a window of an h2load
    run over TLS that began before it: its connections' handshakes are
    over by then, only requests on established connections remain."""
    args = ["h2load", "-D", str(warm_s + window_s + 1), "-c", "4", "-m", "8"]
    if h1:
        args.insert(1, "--h1")
    load = a.ns_popen(args + [f"https://{APP_IP}/hello.txt"])
    try:
        time.sleep(warm_s)
        allocs0, _ = lcore_allocs(a)
        t0 = a.telemetry("/ewyk/tls")
        reqs0 = a.telemetry("/ewyk/http")["requests_reqs"]
        a.telemetry("/ewyk_test/allocs_arm")
        time.sleep(window_s)
        allocs1, threads = lcore_allocs(a)
        t1 = a.telemetry("/ewyk/tls")
        reqs1 = a.telemetry("/ewyk/http")["requests_reqs"]
    finally:
        out, _ = load.communicate(timeout=60)
    assert re.search(r"status codes: \d+ 2xx, 0 3xx, 0 4xx, 0 5xx", out), out
    return reqs1 - reqs0, allocs1 - allocs0, threads, t0, t1


def test_no_allocation_per_request_over_tls(counted_tls):
    for h1 in (False, True):
        steady_window(counted_tls, h1, warm_s=2, window_s=1)	# warm-up
    for h1 in (False, True):
        reqs, allocs, threads, t0, t1 = steady_window(counted_tls, h1)
        assert reqs > 1000, reqs
        # On failure: the lcores' allocations and where each came from.
        assert allocs == 0, (h1, reqs, threads, worker_sites(counted_tls))
        # The record buffers came from the caches (one at least per record
        # each way), which did not grow.
        records = (t1["records_in_count"] - t0["records_in_count"] +
                   t1["records_out_count"] - t0["records_out_count"])
        assert records > 0, (t0, t1)
        assert t1["mem_cache_hits_count"] - t0["mem_cache_hits_count"] >= records, (t0, t1)
        assert t1["mem_cache_grows_count"] == t0["mem_cache_grows_count"], (t0, t1)
        assert t1["handshakes_full_count"] == t0["handshakes_full_count"], (t0, t1)
