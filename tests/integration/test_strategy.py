# SPDX-License-Identifier: BSD-3-Clause
"""Eat What You Kill in ewykd: mode counters, forced modes, the blocking
path under load, the watchdog's hand-off of a stuck shard and the 503 of a
full blocking pool. One shard, one spare reserved lcore (the lcores share
CPU 1 with the shard's)."""
import subprocess
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance

LCORES = "0@0,1@1,2@1"


@pytest.fixture(scope="module")
def ewyk(www):
    yield from serve_module(Appliance(www=www["dir"], lcores=LCORES,
                                      args=["--shards", "1", "--reserved", "1"]))


def strategy(a):
    return a.telemetry("/ewyk/strategy")["shard_0"]


def consumed(s):
    return s["pc_tasks"] + s["pic_tasks"] + s["pec_tasks"] + s["epc_tasks"]


def get_many(a, path, n):
    """n GETs on one keep-alive connection; returns the bodies."""
    out = a.ns_python(f"""
import http.client
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
for _ in range({n}):
    c.request("GET", "{path}")
    r = c.getresponse()
    print(r.status, r.read().decode().strip())
""")
    return [line for line in out.splitlines() if line]


def test_mode_counters_match_what_was_driven(ewyk):
    before = strategy(ewyk)
    spins = get_many(ewyk, "/spin?us=100", 30)
    delays = get_many(ewyk, "/delay?ms=1", 20)
    eithers = get_many(ewyk, "/either?ms=1", 20)
    after = strategy(ewyk)
    assert all(line.startswith("200 spun") for line in spins)
    assert all(line.startswith("200 delayed") for line in delays)
    assert len(eithers) == 20
    d = {k: after[k] - before[k] for k in ["pc_tasks", "pic_tasks", "pec_tasks", "epc_tasks",
                                           "spin_reqs", "delay_reqs", "either_reqs"]}
    assert d["spin_reqs"] == 30 and d["delay_reqs"] == 20 and d["either_reqs"] == 20
    assert consumed(after) - consumed(before) == 70
    # NON_BLOCKING is always produce-consume; BLOCKING never runs inline
    # unless production was handed over first.
    assert d["pc_tasks"] == 30
    assert d["pec_tasks"] + d["epc_tasks"] + d["pic_tasks"] == 40
    # each answer names the mode that consumed it
    modes = [line.rsplit("(", 1)[1].rstrip(")") for line in spins + delays]
    assert modes[:30] == ["pc"] * 30
    assert set(modes[30:]) <= {"epc", "pec"}


@pytest.mark.parametrize("mode", ["pec", "epc", "pc"])
def test_forced_mode_is_used(ewyk, mode):
    try:
        assert ewyk.telemetry(f"/ewyk/strategy,{mode}")["shard_0"]["mode"] == mode
        before = strategy(ewyk)
        lines = get_many(ewyk, "/delay?ms=1", 10)
        after = strategy(ewyk)
        assert after[f"{mode}_tasks"] - before[f"{mode}_tasks"] == 10
        assert all(line.endswith(f"({mode})") for line in lines), lines
    finally:
        ewyk.telemetry("/ewyk/strategy,adaptive")


def test_bad_parameters_and_methods(ewyk):
    for path, code in [("/delay?ms=x", "400"), ("/delay", "400"), ("/spin?us=99999999", "400")]:
        r = ewyk.ns(["curl", "-sS", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                     ewyk.url(path)])
        assert r.stdout == code, path
    r = ewyk.ns(["curl", "-sS", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                 "-d", "x", ewyk.url("/delay?ms=1")])
    assert r.stdout == "405"


def latencies(a, path, n):
    out = a.ns_python(f"""
import http.client, time
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
ok = 0
lat = []
for _ in range({n}):
    t0 = time.monotonic()
    c.request("GET", "{path}")
    r = c.getresponse()
    r.read()
    lat.append(time.monotonic() - t0)
    ok += r.status == 200
lat.sort()
print(ok, lat[len(lat) // 2], lat[int(len(lat) * 0.99) - 1], lat[-1])
""")
    ok, p50, p99, pmax = out.split()
    return int(ok), float(p50), float(p99), float(pmax)


def static_beside(a, load_path, n_load, conns):
    """Static GET latencies measured while h2load drives load_path; returns
    (ok, p50, p99, max) and h2load's output."""
    load = subprocess.Popen(["ip", "netns", "exec", a.name, "h2load", "--h1", "-n", str(n_load),
                             "-c", str(conns), a.url(load_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        time.sleep(0.1)
        lat = latencies(a, "/hello.txt", 200)
    finally:
        out, _ = load.communicate(timeout=120)
    return lat, out


def test_static_files_served_while_blocking_path_is_saturated(ewyk):
    (ok, p50, p99, pmax), out = static_beside(ewyk, "/delay?ms=50", 600, 40)
    print(f"\n  static under /delay load: p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms, "
          f"max {pmax * 1e3:.2f} ms")
    assert ok == 200
    assert p99 < 0.025, f"p99 {p99 * 1e3:.1f} ms"
    assert "600 succeeded" in out, out


def test_stuck_owner_is_relieved_by_the_watchdog(ewyk):
    before = strategy(ewyk)
    (ok, p50, p99, pmax), out = static_beside(ewyk, "/spin?us=20000", 30, 2)
    after = strategy(ewyk)
    print(f"\n  static beside 20 ms inline spins: p50 {p50 * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms; "
          f"steals {after['steals_count'] - before['steals_count']}")
    assert "30 succeeded" in out, out
    assert ok == 200
    assert after["steals_count"] > before["steals_count"]


def test_full_blocking_pool_answers_503(www):
    args = ["--shards", "1", "--reserved", "1", "--strategy", "pec",
            "--blocking-threads", "1", "--blocking-queue", "1"]
    with Appliance(www=www["dir"], lcores=LCORES, args=args) as a:
        r = a.ns(["h2load", "--h1", "-n", "20", "-c", "10", a.url("/delay?ms=200")], timeout=60)
        assert "5xx" in r.stdout
        codes = r.stdout.split("status codes:")[1].split("\n")[0]
        n5xx = int(codes.strip().split(",")[3].strip().split()[0])
        assert n5xx > 0, r.stdout
        s = a.telemetry("/ewyk/strategy")["shard_0"]
        assert s["rejected_tasks"] == n5xx
        hdr = a.ns_python(f"""
import socket, threading
def hold():
    c = socket.create_connection(("{APP_IP}", 80))
    c.sendall(b"GET /delay?ms=3000 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    c.recv(100)
ts = [threading.Thread(target=hold) for _ in range(3)]
[t.start() for t in ts]
# Probe until the holders fill the pool (a loaded machine may take a
# while to send them); a 503 must come before they finish.
import time
for _ in range(25):
    time.sleep(0.1)
    c = socket.create_connection(("{APP_IP}", 80), timeout=5)
    c.sendall(b"GET /delay?ms=1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    got = c.recv(4096).decode()
    if got.startswith("HTTP/1.1 503"):
        break
print(got)
[t.join() for t in ts]
""")
        assert hdr.startswith("HTTP/1.1 503")
        assert "Retry-After: 1" in hdr


def test_sigterm_with_reserved_lcores_and_blocked_handlers_exits_0(www):
    # Spinning and parked reserved lcores, pool threads asleep in handlers:
    # none of it may hold the stop up.
    with Appliance(www=www["dir"], lcores=LCORES, args=["--shards", "1", "--reserved", "1"]) as a:
        status, took = a.stop_under_load("/delay?ms=100")
        assert status == 0, a.read_log()
        assert took < 2.0, f"took {took:.2f}s"
