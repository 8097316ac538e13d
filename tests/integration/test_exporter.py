# SPDX-License-Identifier: BSD-3-Clause
"""ewyk-exporter against a running ewykd under load (cleartext and TLS):
/metrics passes promtool, its counters move with the traffic, a restart of
ewykd is survived (ewyk_up 0, then 1, the exporter's process never goes
away), and the dashboard, loaded in headless Chromium while traffic runs,
shows live numbers in every panel. The appliance runs both families:
IPv6's counters (by family, neighbour discovery, TCP over IPv6) are
exported and move.

The exporter runs in the host's namespace on 127.0.0.1 (the telemetry
socket is a unix socket on the host's file system); the traffic stays in
the appliance's namespace, bounded in count and time."""
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from browser import Browser
from conftest import serve_module
from exporter_client import EXPORTER, Exporter
from ewyk_harness import APP_IP, Appliance
from tls_certs import CA

LCORES = "0@0,1@1,2@1"	# one shard, one reserved lcore


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def total(samples, name, **labels):
    """Sum of a metric over the labels not given."""
    return sum(v for (n, ls), v in samples.items() if n == name and
               all(dict(ls).get(k) == w for k, w in labels.items()))


@pytest.fixture(scope="module")
def ewyk(www, tmp_path_factory):
    state = tempfile.mkdtemp(prefix="ewyk-exporter-state-")
    cert, key, _ = CA(tmp_path_factory.mktemp("pki")).issue("ec", days=20)
    try:
        yield from serve_module(Appliance(www=www["dir"], lcores=LCORES, ip6=True, args=[
            "--shards", "1", "--reserved", "1", "--state-dir", state,
            "--tls-cert", cert, "--tls-key", key]))
    finally:
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="module")
def exporter(ewyk):
    e = Exporter(ewyk.prefix)
    yield e
    e.stop()


def traffic(a, n=400):
    """Bounded traffic of every kind the dashboard shows: HTTP/2 and
    HTTP/1.1 through the routes of every execution type, 404s, and PUTs to
    the durable store (a few keys: conflation)."""
    uris = [a.url(p) for p in ("/", "/hello.txt", "/nope", "/spin?us=50",
                               "/either?ms=1", "/delay?ms=1")]
    a.ns(["h2load", "-n", str(n), "-c", "4", "-m", "4", *uris], timeout=60)
    a.ns(["h2load", "--h1", "-n", str(n), "-c", "4", *uris], timeout=60)
    a.ns(["h2load", "--h1", "-n", str(n // 4), "-c", "2", a.url6("/hello.txt")],
         timeout=60)
    # TLS: a handshake per client, one of them refused (TLS 1.1)
    a.ns(["h2load", "-n", str(n), "-c", "4", f"https://{APP_IP}/hello.txt"], timeout=60)
    a.ns(["openssl", "s_client", "-connect", f"{APP_IP}:443", "-tls1_1", "-cipher",
          "DEFAULT@SECLEVEL=0"], check=False, input="", timeout=30)
    a.ns_python(f"""
import http.client
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
for i in range({n // 4}):
    c.request("PUT", "/v1/state/k%d?durable=%d" % (i % 3, i % 2), body=b"v%d" % i)
    c.getresponse().read()
""", timeout=60)


def test_help():
    r = subprocess.run([EXPORTER, "--help"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0
    for opt in ("--file-prefix", "--listen", "--socket", "127.0.0.1:9110"):
        assert opt in r.stdout


def test_metrics_pass_promtool_and_cover_every_command(ewyk, exporter):
    traffic(ewyk, 200)
    text = exporter.metrics()
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    # Every key of every /ewyk/* reply is mapped to a named, typed metric:
    # none falls back to an untyped one.
    assert not re.findall(r"(?m)^# TYPE \S+ untyped", text)
    s = exporter.samples()
    assert value(s, "ewyk_up") == 1
    for name in ("ewyk_appliance_info", "ewyk_net_rx_packets_total",
                 "ewyk_net_dropped_packets_total", "ewyk_tcp_passive_opens_total",
                 "ewyk_http_requests_total", "ewyk_http_responses_total",
                 "ewyk_http_route_latency_p99_seconds", "ewyk_shard_polls_total",
                 "ewyk_strategy_tasks_total", "ewyk_strategy_steals_total",
                 "ewyk_strategy_mode", "ewyk_reserved_lcores", "ewyk_blocking_threads",
                 "ewyk_lcore_seconds_total", "ewyk_lcore_role", "ewyk_store_offers_total",
                 "ewyk_mbufs_in_use", "ewyk_ethdev_rx_packets_total",
                 "ewyk_ethdev_xstats_total", "ewyk_port_info", "ewyk_port_link_up",
                 "ewyk_port_tx_bytes_total", "ewyk_net_family_packets_total",
                 "ewyk_net_nd_advertisements_out_packets_total",
                 "ewyk_tcp_ip6_passive_opens_total", "ewyk_tcp_open_ipv6_connections",
                 "ewyk_port_ip6_duplicate", "ewyk_tls_handshakes_total",
                 "ewyk_tls_handshake_failures_total", "ewyk_tls_connections_total",
                 "ewyk_tls_alpn_total", "ewyk_tls_ciphers_total",
                 "ewyk_tls_cert_expiry_timestamp_seconds", "ewyk_tls_open_connections",
                 "ewyk_tls_info"):
        assert any(n == name for n, _ in s), f"{name} missing"
    info = [dict(ls) for n, ls in s if n == "ewyk_port_info"]
    assert info[0]["ip6"] == "2001:2::2/64" and info[0]["ip6_link_local"].startswith("fe80::")
    assert value(s, "ewyk_port_ip6_duplicate", port="0", address="global") == 0
    assert value(s, "ewyk_http_responses_total", status="404") > 0
    assert value(s, "ewyk_port_link_up", port="0") == 1
    assert value(s, "ewyk_mbufs_pool_size") > value(s, "ewyk_mbufs_in_use") > 0
    expiry = s.get(("ewyk_tls_cert_expiry_timestamp_seconds", frozenset(
        {"cert": "0", "name": "ewyk.test", "key_type": "ECDSA"}.items())))
    assert 19 * 86400 < expiry - time.time() <= 20 * 86400, expiry


def test_openmetrics_when_asked(exporter):
    ctype, text = exporter.get("/metrics", accept="application/openmetrics-text; "
                                                   "version=1.0.0")
    assert ctype.startswith("application/openmetrics-text")
    assert text.endswith("# EOF\n")
    ctype, text = exporter.get("/metrics")
    assert ctype.startswith("text/plain") and "# EOF" not in text


def test_counters_move_with_traffic(ewyk, exporter):
    before = exporter.samples()
    traffic(ewyk, 400)
    time.sleep(0.3)		# past --min-interval: a fresh reading
    after = exporter.samples()

    def grew(name, by=1, **labels):
        b, a = total(before, name, **labels), total(after, name, **labels)
        assert a - b >= by, f"{name}{labels}: {b} -> {a}"

    grew("ewyk_http_requests_total", 400, protocol="http2")
    grew("ewyk_http_requests_total", 400, protocol="http1")
    grew("ewyk_http_responses_total", 100, status="404")
    grew("ewyk_http_route_requests_total", 100, route="/delay")
    grew("ewyk_net_rx_packets_total", 800)
    grew("ewyk_ethdev_rx_packets_total", 800)
    grew("ewyk_port_rx_packets_total", 800, port="0")
    grew("ewyk_tcp_passive_opens_total", 8)
    grew("ewyk_tcp_ip6_passive_opens_total", 2)
    grew("ewyk_net_family_packets_total", 100, direction="rx", family="ipv6")
    grew("ewyk_net_family_packets_total", 100, direction="tx", family="ipv6")
    grew("ewyk_net_family_packets_total", 800, direction="rx", family="ipv4")
    grew("ewyk_strategy_tasks_total", 300)
    grew("ewyk_lcore_seconds_total", 1e-6, state="producing")
    grew("ewyk_store_offers_total", 100)
    grew("ewyk_store_fsyncs_total")
    grew("ewyk_tls_handshakes_total", 4, kind="full")
    grew("ewyk_tls_connections_total", 4, version="1.3")
    grew("ewyk_tls_alpn_total", 4, protocol="h2")
    grew("ewyk_tls_ciphers_total", 4, cipher="aes_128_gcm")
    grew("ewyk_tls_handshake_failures_total", 1)


PANELS = ("p-lcores", "p-modes", "p-requests", "p-latency", "p-drops", "p-family",
          "p-conns", "p-mbufs", "p-conflate", "p-tls")


def test_dashboard_live_in_chromium(ewyk, exporter, tmp_path):
    _, page = exporter.get("/")
    # Nothing from elsewhere: every script and style is the exporter's own.
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "Chart" in exporter.get("/static/chart.umd.js")[1][:2000]
    # Traffic for the whole time the browser looks (bounded in time and count).
    load = ewyk.ns_popen_python(f"""
import http.client, time
end = time.time() + 12
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
i = 0
while time.time() < end and i < 200000:
    path = ("/", "/either?ms=1", "/nope", "/spin?us=20", "/delay?ms=2")[i % 5]
    if i % 7 == 0:
        c.request("PUT", "/v1/state/k%d" % (i % 3), body=b"v")
    else:
        c.request("GET", path)
    c.getresponse().read()
    i += 1
print(i)
""")
    h2 = ewyk.ns_popen(["h2load", "-D", "10", "-c", "2", "-m", "2",
                        ewyk.url("/hello.txt"), ewyk.url("/either?ms=1")])
    h2v6 = ewyk.ns_popen(["h2load", "-D", "10", "-c", "1", ewyk.url6("/hello.txt")])
    # New TLS connections all along: a handshake each, for the TLS panel.
    hs = ewyk.ns_popen(["sh", "-c", f"for i in $(seq 40); do h2load -n 4 -c 4 "
                              f"https://{APP_IP}/hello.txt >/dev/null; sleep 0.2; done"])
    try:
        png = tmp_path / "dashboard.png"
        with Browser() as b:
            b.navigate(exporter.base + "/")
            # The page refreshes every second: wait until every panel has
            # been updated twice (a loaded host may take longer than 2 s).
            deadline = time.time() + 20
            time.sleep(3)
            dom = b.dom()
            while time.time() < deadline and min(
                    [int(n) for n in re.findall(r'data-updates="(\d+)"', dom)] or [0]) < 2:
                time.sleep(1)
                dom = b.dom()
            b.screenshot(png)
        assert png.stat().st_size > 20000
    finally:
        # The browser has seen what it needed: the loads (bounded anyway)
        # end now rather than at their own end, seconds later.
        for p in (h2, h2v6, load, hs):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    save = os.environ.get("EWYK_DASHBOARD_PNG")
    if save:
        shutil.copy(png, save)
    assert 'class="badge up"' in dom, dom[:2000]
    for panel in PANELS:
        m = re.search(rf'<section[^>]*id="{panel}"[^>]*data-updates="(\d+)"(.*?)</section>',
                      dom, re.S)
        assert m, f"{panel} not in the page"
        assert int(m.group(1)) >= 2, f"{panel} updated {m.group(1)} times"
        nums = re.findall(r'class="num"[^>]*>([^<]*)<', m.group(2))
        assert nums and all(re.fullmatch(r"[0-9][0-9,.]*( %)?", n) for n in nums), \
            f"{panel} shows {nums}"
    lcores = re.search(r'id="p-lcores".*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    assert lcores.count("<tr>") == 3 and "shard_owner" in lcores and "reserved" in lcores
    # Live: requests flowed while the page looked.
    rps = re.search(r'id="rps">([^<]*)<', dom).group(1)
    assert float(rps.replace(",", "")) > 0


def test_restart_of_ewykd_is_survived(www):
    first = Appliance(www=www["dir"])
    second = Appliance(www=www["dir"])
    second.prefix = first.prefix		# the same appliance, restarted
    exporter = None
    try:
        first.start()
        exporter = Exporter(first.prefix)
        assert value(exporter.samples(), "ewyk_up") == 1
        first.close()
        time.sleep(0.3)
        s = exporter.samples()
        assert value(s, "ewyk_up") == 0
        assert value(s, "ewyk_exporter_telemetry_errors_total") >= 1
        second.start()
        deadline = time.time() + 10
        while value(s := exporter.samples(), "ewyk_up") != 1 and time.time() < deadline:
            time.sleep(0.3)
        assert value(s, "ewyk_up") == 1
        assert value(s, "ewyk_exporter_reconnects_total") >= 1
        second.ns(["curl", "-sS", "-m", "5", "-o", "/dev/null", second.url("/")])
        time.sleep(0.3)
        assert value(exporter.samples(), "ewyk_http_requests_total", protocol="http1") >= 1
        assert exporter.proc.poll() is None
    finally:
        if exporter is not None:
            exporter.stop()
        first.close()
        second.close()
