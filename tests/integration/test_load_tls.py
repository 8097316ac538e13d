# SPDX-License-Identifier: BSD-3-Clause
"""ewyk-load over HTTPS against real servers: ewykd with a certificate a
test CA signed, over net_memif (ewyk-load the memif client of ewykd's
second port), and nginx on the kernel's TCP and OpenSSL behind a veth
pair, over net_af_xdp. ALPN picks h2 or HTTP/1.1 (--h1 offers only that);
the counts and checked answers agree with what the server says it served
(ewykd's /ewyk/http and /ewyk/tls with its handshake counters, nginx's
access log); --new-conn makes a full handshake per request; a handshake
the server refuses is counted as tls_handshake, and the run still ends."""
import hashlib
import os
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP2, Appliance
from test_load import (assert_bodies_checked_by_digest, http_counts,  # noqa: F401
                       json_path, load_cmd, nginx, run_load, run_load_af_xdp)
from tls_certs import CA

HELLO_SHA = hashlib.sha256(b"hello from ewyk\n").hexdigest()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    cert, key, _ = ca.issue("ec", ip=APP_IP2)
    return {"dir": str(d), "cert": cert, "key": key}


@pytest.fixture(scope="module")
def served(www, pki):
    yield from serve_module(Appliance(www=www["dir"], second_port="peer", args=(
        "--tls-cert", pki["cert"], "--tls-key", pki["key"])))


def tls_counts(a):
    t = a.telemetry("/ewyk/tls")
    return {k: t[k] for k in ("handshakes_full_count", "handshakes_resumed_count",
                              "handshakes_failed_count", "alpn_h2_conns",
                              "alpn_http11_conns", "alpn_none_conns")}


def delta(after, before):
    return {k: after[k] - before[k] for k in after}


@pytest.mark.parametrize("proto,alpn", [(["--h1", "-m", "4"], "http/1.1"),
                                        (["-m", "16"], "h2")], ids=["http1", "h2"])
def test_counts_agree_with_ewykd(served, json_path, proto, alpn):  # noqa: F811
    """4 connections, 2000 requests in turn to a file that is there and one
    that is not: every answer checked, ewykd's counts the same, four full
    handshakes on both sides, ALPN's choice the one offered first."""
    a = served
    n = 2000
    urls = os.path.join(os.path.dirname(json_path), os.path.basename(json_path) + ".urls")
    with open(urls, "w") as f:
        f.write(f"https://{APP_IP2}/hello.txt\nhttps://{APP_IP2}/missing\n")
    try:
        reqs0, st0 = http_counts(a)
        t0 = tls_counts(a)
        out, text = run_load(load_cmd(a, [*proto, "-n", str(n), "-c", "4", "-i", urls],
                                      json_path), json_path)
        reqs1, st1 = http_counts(a)
        t1 = tls_counts(a)
    finally:
        os.unlink(urls)
    assert f"requests: {n} total, {n} started, {n} done, {n // 2} succeeded, " \
        f"{n // 2} failed, 0 errored, 0 timeout" in text, text
    assert f"status codes: {n // 2} 2xx, 0 3xx, {n // 2} 4xx, 0 5xx" in text, text
    assert f"Application protocol: {alpn}\n" in text and "TLS Protocol: TLS1.3\n" in text, text
    assert "TLS handshakes: 4 full, 0 resumed, 0 failed" in text, text
    assert out["protocol"] == alpn and out["errors"]["status"] == n // 2, out
    assert out["errors"]["tls_handshake"] == 0, out["errors"]
    tls = out["tls"]
    assert tls["handshakes_full"] == 4 and tls["tls13"] == 4, tls
    key = "alpn_h2" if alpn == "h2" else "alpn_http11"
    assert tls[key] == 4, tls
    # ewykd served exactly that, over four TLS connections.
    assert reqs1 - reqs0 == n
    assert st1["200"] - st0["200"] == n // 2 and st1["404"] - st0["404"] == n // 2
    want = {"handshakes_full_count": 4, "handshakes_resumed_count": 0,
            "handshakes_failed_count": 0, "alpn_h2_conns": 4 if alpn == "h2" else 0,
            "alpn_http11_conns": 4 if alpn == "http/1.1" else 0, "alpn_none_conns": 0}
    assert delta(t1, t0) == want, delta(t1, t0)


@pytest.mark.parametrize("proto", [["--h1", "-m", "4"], ["-m", "16"]], ids=["http1", "h2"])
def test_bodies_checked_by_digest(served, www, json_path, proto):  # noqa: F811
    """A file larger than a record (many records, many segments): its
    length and digest checked on every answer; another digest fails all."""
    a = served
    assert_bodies_checked_by_digest(a, www, json_path, proto, f"https://{APP_IP2}/big.bin",
                                    expect=("--expect-status", "200"))


@pytest.mark.parametrize("proto", [["--h1"], []], ids=["http1", "h2"])
def test_new_connection_a_handshake_per_request(served, json_path, proto):  # noqa: F811
    """--new-conn: 200 requests, 200 TCP connections, 200 full handshakes
    on each side, none resumed."""
    a = served
    n = 200
    conns0, t0 = a.stats()["total_conns"], tls_counts(a)
    out, text = run_load(load_cmd(a, [*proto, "--new-conn", "-n", str(n), "-c", "4",
                                      "--expect-status", "200", "--expect-sha256", HELLO_SHA,
                                      f"https://{APP_IP2}/hello.txt"], json_path),
                         json_path)
    conns1, t1 = a.stats()["total_conns"], tls_counts(a)
    assert out["requests"]["succeeded"] == n, text
    assert out["connections"]["established"] == n, out["connections"]
    assert out["tls"]["handshakes_full"] == n and out["tls"]["handshakes_resumed"] == 0
    d = delta(t1, t0)
    assert d["handshakes_full_count"] == n and d["handshakes_resumed_count"] == 0, d
    assert d["handshakes_failed_count"] == 0, d
    assert conns1 - conns0 == n


def test_refused_handshake_counted(served, json_path):  # noqa: F811
    """ewykd offers TLS 1.3 and 1.2 with AEAD suites only: a client that
    will only speak TLS 1.2 with CBC (--tls-priority) gets a handshake
    failure alert; each attempt is counted as tls_handshake, a request is
    given up for it, and the run ends."""
    a = served
    t0 = tls_counts(a)
    out, text = run_load(load_cmd(a, [
        "--h1", "-n", "6", "-c", "2", "--tls-priority",
        "NONE:+VERS-TLS1.2:+AES-128-CBC:+SHA1:+ECDHE-ECDSA:+GROUP-ALL:+SIGN-ALL:"
        "+COMP-NULL:+CTYPE-X509", f"https://{APP_IP2}/hello.txt"], json_path), json_path)
    t1 = tls_counts(a)
    assert out["requests"]["errored"] == 6 and out["requests"]["done"] == 0, out
    assert out["errors"]["tls_handshake"] == 6 and out["errors"]["connect"] == 0, out
    assert out["connections"]["established"] == 0, out
    assert out["tls"]["failed"]["alert_received"] == 6, out["tls"]
    assert delta(t1, t0)["handshakes_failed_count"] == 6, delta(t1, t0)
    assert "TLS handshakes: 0 full, 0 resumed, 6 failed" in text, text


# -- nginx (the kernel's TCP, OpenSSL) over net_af_xdp ------------------------

def tls_log(nginx, before, n):  # noqa: F811
    """nginx's log lines of port 443 past the first before: connection
    serial, TLS version, session reused ("r" or "."), protocol, status,
    server name ("-": none);
    nginx writes a line after its answer, so give it a moment."""
    for _ in range(30):
        with open(nginx["tls_log"]) as f:
            got = [line.split() for line in f.readlines()[before:]]
        if len(got) >= n:
            return got
        time.sleep(0.1)
    return got


def tls_log_len(nginx):  # noqa: F811
    try:
        with open(nginx["tls_log"]) as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("proto,alpn,server_proto", [
    (["--h1", "-m", "4"], "http/1.1", "HTTP/1.1"), (["-m", "10"], "h2", "HTTP/2.0")],
    ids=["http1", "h2"])
def test_counts_agree_with_nginx_over_af_xdp(nginx, json_path, proto, alpn,  # noqa: F811
                                             server_proto):
    """1000 checked requests on 4 connections to nginx's TLS port: nginx
    logged each, over TLS 1.3, in the protocol ALPN chose, on 4
    connections, none resumed."""
    before = tls_log_len(nginx)
    n = 1000
    out, text = run_load_af_xdp(nginx, json_path, [
        *proto, "-n", str(n), "-c", "4", "--expect-status", "200",
        "--expect-sha256", HELLO_SHA, "https://198.18.0.2/hello.txt"])
    assert out["requests"]["succeeded"] == n, text
    assert out["protocol"] == alpn and out["tls"]["handshakes_full"] == 4, out
    got = tls_log(nginx, before, n)
    assert len(got) == n, (len(got), got[:3])
    assert {tuple(g[1:]) for g in got} == {("TLSv1.3", ".", server_proto, "200", "-")}, \
        {tuple(g[1:]) for g in got}
    assert len({g[0] for g in got}) == 4


def test_new_connection_a_handshake_per_request_nginx(nginx, json_path):  # noqa: F811
    """--new-conn to nginx: 100 requests, each on a connection of its own
    with a full handshake (nginx saw 100 connections, none resumed), each
    naming the server --sni says."""
    before = tls_log_len(nginx)
    n = 100
    out, text = run_load_af_xdp(nginx, json_path, [
        "--h1", "--new-conn", "-n", str(n), "-c", "4", "--expect-sha256", HELLO_SHA,
        "--sni", "ewyk.test", "https://198.18.0.2/hello.txt"])
    assert out["requests"]["succeeded"] == n, text
    assert out["tls"]["handshakes_full"] == n and out["connections"]["established"] == n
    got = tls_log(nginx, before, n)
    assert len(got) == n and len({g[0] for g in got}) == n, got[:3]
    assert {(g[2], g[5]) for g in got} == {(".", "ewyk.test")}, got[:3]


def test_handshakes_cut_by_the_end_are_no_errors(served, json_path):  # noqa: F811
    """-D with --new-conn: when the time is up, connections are still in
    their handshakes; like requests in flight, they are left out of the
    counts (not errors), and every request counted was answered."""
    out, text = run_load(load_cmd(served, ["--h1", "--new-conn", "-c", "8", "-D", "1",
                                           "--expect-sha256", HELLO_SHA,
                                           f"https://{APP_IP2}/hello.txt"], json_path),
                         json_path)
    r = out["requests"]
    assert r["succeeded"] > 0 and r["errored"] == 0 and r["failed"] == 0, text
    assert out["errors"]["tls_handshake"] == 0 and out["errors"]["connect"] == 0, text
