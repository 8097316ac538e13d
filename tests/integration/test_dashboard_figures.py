# SPDX-License-Identifier: BSD-3-Clause
"""Every figure of the dashboard, and every sample of the exporter's
/metrics checked here, agrees with the telemetry it comes from, under load.

Three figures did not: under h2c load on a main and a shard lcore the
dashboard read "reserved: 1 lcores" while its lcore table listed no
reserved lcore (it showed the pool, which holds the shard owner too); the
shard lcore's tasks/s read 5.7 while the mode mix read pc at 69,577/s
(static files, answered inside the poll, were not counted on the lcore);
and the static route's latency bars were invisible (kept in whole
microseconds: 0).

The dashboard's figures are model.js's (dashboard.js only draws them):
node runs it here on two readings of the exporter's /api/snapshot. The
checks:

- from the same reading, each /metrics sample equals the telemetry value
  it is made of (the reading is shared by /api/snapshot and /metrics
  within --min-interval: its duration, exported, proves it is the same);
- against ewykd's telemetry read before and after the scrape through the
  stock dpdk-telemetry.py, each counter of /metrics lies between the two;
- the dashboard's figures: its rates are the counters' deltas over the
  readings' interval; the lcores' tasks/s add up to the mode mix's pc, pic,
  epc and fiber (pec runs on the blocking pool) exactly when the load has
  stopped, and within what the readings' own durations allow while it
  runs; the reserved count is the lcores listed as reserved; every route
  with requests shows its latency, the static route's above 0.

Two appliances: the issue's own (a main and a shard lcore, h2c on static
files), and one with a reserved lcore beside the shard's, on routes of
every execution type (PC, PIC, PEC, EPC, fibers), with a TLS port beside
(its handshakes, one refused). The load is h2load in the appliance's
namespace, bounded in count and time."""
import json
import os
import re
import subprocess
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import serve_module
from ewyk_harness import APP_IP, ROOT, Appliance
from exporter_client import Exporter
from tls_certs import CA

MODEL = os.path.join(ROOT, "app", "exporter", "dashboard", "model.js")
INDEX = os.path.join(ROOT, "app", "exporter", "dashboard", "index.html")
OPERATIONS = os.path.join(ROOT, "docs", "operations.md")
MIN_INTERVAL = 0.25		# the exporter's default: scrapes closer share a reading
N = 20000			# requests of the bounded load

CASES = {
    # The issue's: a main lcore and a shard lcore, no reserved one.
    "h2c-static": {"lcores": "0-1", "args": ["--shards", "1"],
                   "paths": ["/", "/hello.txt"], "tls": False},
    # A spare reserved lcore (sharing the shard's CPU) and every mode.
    "every-mode": {"lcores": "0@0,1@1,2@1", "args": ["--shards", "1", "--reserved", "1"],
                   "paths": ["/", "/either?ms=1", "/blocking-delay?ms=1", "/delay?ms=1",
                             "/spin?us=20"], "tls": True},
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, www, tmp_path_factory):
    c = CASES[request.param]
    args = list(c["args"])
    if c["tls"]:
        cert, key, _ = CA(tmp_path_factory.mktemp("pki")).issue("ec", days=20)
        args += ["--tls-cert", cert, "--tls-key", key]
    a = Appliance(www=www["dir"], lcores=c["lcores"], args=args)
    a.paths = c["paths"]		# what the load asks for
    a.tls = c["tls"]
    yield from serve_module(a)


@pytest.fixture(scope="module")
def exporter(case):
    e = Exporter(case.prefix)
    yield e
    e.stop()


# -- readings ------------------------------------------------------------

def fresh(exporter):
    """/api/snapshot and /metrics of one new reading of the exporter."""
    # The two scrapes share a reading when they come within MIN_INTERVAL
    # of each other; on a loaded host they may not: then both again.
    for _ in range(5):
        time.sleep(MIN_INTERVAL + 0.05)
        snap = json.loads(exporter.get("/api/snapshot")[1])
        text = exporter.metrics()
        samples = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                samples[(s.name, frozenset(s.labels.items()))] = s.value
        # /metrics reports the duration of the reading it used.
        if samples[("ewyk_exporter_scrape_duration_seconds", frozenset())] == \
                snap["duration"]:
            return snap, samples
    raise AssertionError("/metrics and /api/snapshot never came from one reading")


def telemetry(a):
    cmds = ("/ewyk/http", "/ewyk/stats", "/ewyk/tcp", "/ewyk/shards", "/ewyk/strategy",
            "/ewyk/reserved", "/ewyk/lcores", "/ewyk/tls")
    return a.telemetry(*cmds)


def figures(prev, snap, tmp_path):
    """model.js's figures for two readings, as the page computes them."""
    path = tmp_path / "readings.json"
    path.write_text(json.dumps([prev, snap]))
    r = subprocess.run(["node", "-e", "const m = require(process.argv[1]);"
                        "const [a, b] = JSON.parse(require('fs').readFileSync("
                        "process.argv[2]));"
                        "process.stdout.write(JSON.stringify(m.figures(a, b)));",
                        MODEL, str(path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def closed(a, timeout=20):
    """Waits for the load's connections to be closed: then no counter
    checked here moves."""
    deadline = time.time() + timeout
    while a.stats()["open_conns"] != 0:
        assert time.time() < deadline, "connections still open after the load"
        time.sleep(0.2)


def load(a, paths, n=None, seconds=None):
    """h2c through every path: n requests, or for a time (both bounded)."""
    uris = [a.url(p) for p in paths]
    limit = ["-n", str(n)] if n else ["-D", str(seconds)]
    return ["h2load", *limit, "-c", "4", "-m", "16", *uris]


def tls_load(a, n=None, seconds=None):
    """h2 over TLS: a full handshake per connection."""
    limit = ["-n", str(n)] if n else ["-D", str(seconds)]
    return ["h2load", *limit, "-c", "4", "-m", "4", f"https://{APP_IP}/hello.txt"]


def tls_refused(a):
    """One handshake refused: TLS 1.1."""
    a.ns(["openssl", "s_client", "-connect", f"{APP_IP}:443", "-tls1_1", "-cipher",
          "DEFAULT@SECLEVEL=0"], check=False, input="", timeout=30)


# -- what /metrics is made of --------------------------------------------

def lcores_of(r):
    return {k.split("_", 1)[1]: v for k, v in r["/ewyk/lcores"].items()
            if isinstance(v, dict)}


def counters(r):
    """{(metric, labels): value} for the counters checked, from telemetry
    replies (ewykd's or the exporter's reading: the same shape)."""
    h, st = r["/ewyk/http"], r["/ewyk/strategy"]
    out = {
        ("ewyk_http_requests_total", (("protocol", "http1"),)): h["http1_reqs"],
        ("ewyk_http_requests_total", (("protocol", "http2"),)): h["http2_reqs"],
        ("ewyk_http_responses_total", (("status", "200"),)): h["by_status_reqs"]["200"],
        ("ewyk_http_body_out_bytes_total", ()): h["body_out_bytes"],
        ("ewyk_http_accepted_connections_total", ()): h["accepted_conns"],
        ("ewyk_http2_streams_total", ()): h["http2_streams_count"],
        ("ewyk_tcp_closed_connections_total", ()): r["/ewyk/stats"]["closed_conns"],
        ("ewyk_net_rx_packets_total", ()): r["/ewyk/stats"]["rx_pkts"],
        ("ewyk_tcp_passive_opens_total", ()): r["/ewyk/tcp"]["passive_opens_count"],
        ("ewyk_blocking_executed_tasks_total", ()):
            r["/ewyk/reserved"]["blocking_executed_tasks"],
        ("ewyk_reserved_claims_total", (("result", "won"),)):
            r["/ewyk/reserved"]["claims_won_count"],
    }
    for key, v in h.items():
        if key.startswith(("route_", "site_")) and isinstance(v, dict):
            lab = (("match", v["match"]), ("route", v["path"]), ("site", v["site"]))
            out[("ewyk_http_route_requests_total", lab)] = v["requests_reqs"]
    for shard, sd in st.items():
        sid = shard.split("_", 1)[1]
        out[("ewyk_shard_requests_total", (("shard", sid),))] = \
            r["/ewyk/shards"][shard]["requests_reqs"]
        for m in ("pc", "pic", "pec", "epc", "fiber"):
            out[("ewyk_strategy_tasks_total", (("mode", m), ("shard", sid)))] = \
                sd[f"{m}_tasks"]
    t = r.get("/ewyk/tls") or {}
    if t.get("enabled"):
        for kind in ("full", "resumed"):
            out[("ewyk_tls_handshakes_total", (("kind", kind),))] = \
                t[f"handshakes_{kind}_count"]
        for reason, v in t["handshakes_failed_by_reason"].items():
            out[("ewyk_tls_handshake_failures_total", (("reason", reason),))] = v
        out[("ewyk_tls_accepted_connections_total", ())] = t["accepted_conns"]
    for lc, ld in lcores_of(r).items():
        out[("ewyk_lcore_inline_tasks_total", (("lcore", lc),))] = ld["inline_tasks"]
        for state in ("producing", "consuming", "idle"):
            out[("ewyk_lcore_seconds_total", (("lcore", lc), ("state", state)))] = \
                ld[f"{state}_us"] / 1e6
    return out


def gauges(r):
    """Gauges: equal to their reading's value."""
    res = r["/ewyk/reserved"]
    out = {("ewyk_reserved_lcores", ()): res["size_lcores"],
           ("ewyk_reserved_configured_lcores", ()): res["spare_lcores"],
           ("ewyk_reserved_spinning_lcores", ()): res["spinning_lcores"],
           ("ewyk_reserved_parked_lcores", ()): res["parked_lcores"]}
    for v in r["/ewyk/http"].values():
        if isinstance(v, dict) and "p50_ns" in v:
            lab = (("match", v["match"]), ("route", v["path"]), ("site", v["site"]))
            for q in ("p50", "p90", "p99", "max"):
                out[(f"ewyk_http_route_latency_{q}_seconds", lab)] = v[f"{q}_ns"] / 1e9
    t = r.get("/ewyk/tls") or {}
    if t.get("enabled"):
        out[("ewyk_tls_open_connections", ())] = t["open_conns"]
        out[("ewyk_tls_cert_expires_in_seconds", ())] = t["cert_expires_in_s"]
    for lc, ld in lcores_of(r).items():
        out[("ewyk_lcore_role", (("lcore", lc), ("role", ld["role"])))] = 1
        out[("ewyk_lcore_owned_shard", (("lcore", lc),))] = ld["owns_shard"]
    return out


def metric(samples, name, labels):
    key = (name, frozenset(labels))
    assert key in samples, f"{name}{dict(labels)} not in /metrics"
    return samples[key]


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_metrics_are_the_reading(snap, samples):
    """Each sample is the value of the reading it was made from."""
    r = snap["replies"]
    for (name, labels), v in {**counters(r), **gauges(r)}.items():
        got = metric(samples, name, labels)
        assert close(got, v), f"{name}{dict(labels)}: /metrics {got}, its reading {v}"


def check_metrics_between(before, samples, after):
    """Each counter lies between ewykd's telemetry read before the scrape
    and after it."""
    lo, hi = counters(before), counters(after)
    for key, v in lo.items():
        got = metric(samples, *key)
        assert v <= got + 1e-9 and got <= hi[key] + 1e-9, \
            f"{key[0]}{dict(key[1])}: telemetry {v} then {hi[key]}, /metrics {got}"


def check_figures(f, prev, snap, samples0, samples1):
    """The dashboard's figures against the readings they come from."""
    dt = snap["time"] - prev["time"]
    assert f["up"] and close(f["dt"], dt)

    def per_s(name, **labels):
        pick = lambda s: sum(v for (n, ls), v in s.items() if n == name and
                             all(dict(ls).get(k) == w for k, w in labels.items()))
        return (pick(samples1) - pick(samples0)) / dt

    # Rates: the counters' deltas over the interval, as Prometheus's rate().
    for m in ("pc", "pic", "pec", "epc", "fiber"):
        assert close(f["modes"][m], per_s("ewyk_strategy_tasks_total", mode=m)), m
    assert close(f["requests"]["http2"], per_s("ewyk_http_requests_total",
                                               protocol="http2"))
    assert close(f["header"]["rps"], per_s("ewyk_http_requests_total"))
    rows = {str(row["id"]): row for row in f["lcores"]["rows"]}
    lc = lcores_of(snap["replies"])
    assert set(rows) == set(lc)
    for i, row in rows.items():
        assert row["role"] == lc[i]["role"]
        assert close(row["tasks_per_s"], per_s("ewyk_lcore_inline_tasks_total", lcore=i))
    assert close(f["lcores"]["tasks_per_s"], per_s("ewyk_lcore_inline_tasks_total"))
    # The reserved count is the lcores listed as reserved; the pool is every
    # worker lcore.
    listed = sum(1 for row in rows.values() if row["role"] == "reserved")
    assert f["lcores"]["reserved"] == listed, \
        f"reserved: {f['lcores']['reserved']} lcores, the table lists {listed}"
    assert listed == metric(samples1, "ewyk_reserved_configured_lcores", ())
    assert f["lcores"]["pool"] == f["lcores"]["workers"] == \
        metric(samples1, "ewyk_reserved_lcores", ()) == \
        sum(1 for row in rows.values() if row["role"] != "main")
    # Latency: every route with requests, the static files' above 0.
    routes = {r["path"]: r for r in f["latency"]["routes"]}
    http = snap["replies"]["/ewyk/http"]
    with_requests = {v["path"] for v in http.values()
                     if isinstance(v, dict) and v.get("requests_reqs", 0) > 0}
    assert set(routes) == with_requests
    for path, r in routes.items():
        lab = [l for (n, l) in samples1 if n == "ewyk_http_route_latency_p50_seconds"
               and dict(l)["route"] == path][0]
        for q in ("p50", "p99"):
            assert close(r[f"{q}_us"] / 1e6,
                         metric(samples1, f"ewyk_http_route_latency_{q}_seconds", lab)), \
                (path, q)
    assert routes["/"]["p50_us"] > 0, f"the static route reads {routes['/']['p50_us']} us"
    assert 0 < routes["/"]["p50_us"] <= routes["/"]["p99_us"] <= routes["/"]["max_us"]
    assert close(f["latency"]["worst_p99_us"], max(r["p99_us"] for r in routes.values()))
    # TLS, where a port serves it.
    tls = f["tls"]
    assert (tls is not None) == bool((snap["replies"].get("/ewyk/tls") or {}).get("enabled"))
    if tls is not None:
        assert close(tls["full_per_s"], per_s("ewyk_tls_handshakes_total", kind="full"))
        assert close(tls["resumed_per_s"], per_s("ewyk_tls_handshakes_total",
                                                 kind="resumed"))
        assert close(tls["failed_per_s"], per_s("ewyk_tls_handshake_failures_total"))
        assert tls["open"] == metric(samples1, "ewyk_tls_open_connections", ())
        assert close(tls["expiry_days"] * 86400,
                     metric(samples1, "ewyk_tls_cert_expires_in_seconds", ()))
    return rows


def ended(p):
    """A load's exit status and output, once it ended (killed past 30 s)."""
    try:
        out = p.communicate(timeout=30)[0]
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0]
    return p.returncode, out


# -- the tests -------------------------------------------------------------

def test_figures_agree_once_the_load_stopped(case, exporter, tmp_path):
    """Counts stand still: everything agrees exactly."""
    a = case
    prev, samples0 = fresh(exporter)
    a.ns(load(a, a.paths, n=N), timeout=120)
    if a.tls:
        a.ns(tls_load(a, n=400), timeout=60)
        tls_refused(a)
    closed(a)
    before = telemetry(a)
    snap, samples1 = fresh(exporter)
    after = telemetry(a)
    check_metrics_are_the_reading(snap, samples1)
    check_metrics_between(before, samples1, after)
    f = figures(prev, snap, tmp_path)
    check_figures(f, prev, snap, samples0, samples1)
    if a.tls:		# 4 connections, 4 handshakes; TLS 1.1 refused
        assert round(f["tls"]["full_per_s"] * f["dt"]) == 4, f["tls"]
        assert round(f["tls"]["failed_per_s"] * f["dt"]) == 1, f["tls"]
    # The tasks the lcores ran are the mode mix's, but for PEC's.
    ran = f["modes"]["on_lcores"]
    every = sum(f["modes"][m] for m in ("pc", "pic", "pec", "epc", "fiber"))
    assert round(every * f["dt"]) >= N, f"{every} tasks/s over {f['dt']} s for {N} requests"
    assert close(f["lcores"]["tasks_per_s"], ran), \
        f"lcores: {f['lcores']['tasks_per_s']} tasks/s, mode mix on lcores {ran}/s"
    for key, v in counters(before).items():
        if key[0] in ("ewyk_http_requests_total", "ewyk_strategy_tasks_total",
                      "ewyk_lcore_inline_tasks_total", "ewyk_http_route_requests_total"):
            assert v == counters(after)[key], f"{key} moved at rest"


def test_figures_agree_under_load(case, exporter, tmp_path):
    """While h2load runs: rates from the same readings, counters between
    the telemetry read around the scrape, the lcores' tasks/s and the mode
    mix within what a reading's own duration lets move."""
    a = case
    h2 = a.ns_popen(load(a, a.paths, seconds=6))
    h2s = a.ns_popen(tls_load(a, seconds=6)) if a.tls else None
    try:
        time.sleep(1.5)
        prev, samples0 = fresh(exporter)
        time.sleep(1.0)
        before = telemetry(a)
        snap, samples1 = fresh(exporter)
        after = telemetry(a)
    finally:
        outs = [ended(p) for p in (h2, h2s) if p is not None]
    assert all(rc == 0 for rc, _ in outs), outs
    check_metrics_are_the_reading(snap, samples1)
    check_metrics_between(before, samples1, after)
    f = figures(prev, snap, tmp_path)
    check_figures(f, prev, snap, samples0, samples1)
    ran, lc = f["modes"]["on_lcores"], f["lcores"]["tasks_per_s"]
    assert ran > 1000, f"{ran} tasks/s: the load did not run"
    # A reading sends its commands one after another: between /ewyk/strategy
    # and /ewyk/lcores at most its duration passes at each end, and each
    # lcore may be inside one task counted by one and not yet the other.
    skew = 2 * max(ran, lc) * (prev["duration"] + snap["duration"]) / f["dt"] + \
        2 * len(f["lcores"]["rows"]) / f["dt"]
    assert abs(lc - ran) <= skew, \
        f"lcores {lc:.1f} tasks/s, mode mix on lcores {ran:.1f}/s (allowed {skew:.1f})"


def test_dashboard_help_is_the_docs():
    """Each panel's help text is word for word in docs/operations.md."""
    html = open(INDEX).read()
    helps = [" ".join(h.split()) for h in
             re.findall(r'<p class="help">(.*?)</p>', html, re.S)]
    assert len(helps) == html.count('<section class="panel')
    docs = " ".join(re.sub(r"[`*]", "", open(OPERATIONS).read()).split())
    for h in helps:
        assert h in docs, f"not in docs/operations.md: {h}"
