# SPDX-License-Identifier: BSD-3-Clause
"""HTTPS against real peers: curl (HTTP/1.1 and HTTP/2), h2load, nghttp,
openssl s_client (ALPN, SNI, ECDSA and RSA, resumption in TLS 1.2 and 1.3,
versions forced, a cipher and TLS 1.1 refused, OCSP stapling,
renegotiation refused) and Python's ssl, on certificates a test CA signs
at test time. ewykd serves three pairs: ECDSA for ewyk.test (the default,
with an OCSP response), RSA for the same names, ECDSA for other.test."""
import os
import re
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, APP_IP6, Appliance
from tls_certs import CA

HOST = "ewyk.test"
PYTHON = "/usr/bin/python3"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    ec_cert, ec_key, ec_x509 = ca.issue("ec")
    rsa_cert, rsa_key, _ = ca.issue("rsa", kind="rsa")
    other_cert, other_key, _ = ca.issue("other", names=("other.test",), ip=None)
    ocsp = ca.ocsp_response(ec_x509, os.path.join(str(d), "ec.ocsp"))
    return {"dir": str(d), "ca": ca, "ca_path": ca.path,
            "ec": (ec_cert, ec_key), "rsa": (rsa_cert, rsa_key),
            "other": (other_cert, other_key), "ocsp": ocsp}


def tls_args(pki):
    return ["--tls-cert", pki["ec"][0], "--tls-key", pki["ec"][1],
            "--tls-ocsp", pki["ocsp"],
            "--tls-cert", pki["rsa"][0], "--tls-key", pki["rsa"][1],
            "--tls-cert", pki["other"][0], "--tls-key", pki["other"][1],
            "--tls-handshake-timeout-ms", "1500"]


@pytest.fixture(scope="module")
def app(www, pki):
    yield from serve_module(Appliance(www=www["dir"], args=tls_args(pki), ip6=True))


def curl(a, pki, *args, path="/hello.txt"):
    return a.ns(["curl", "-sS", "--max-time", "10", "--cacert", pki["ca_path"],
                 "--resolve", f"{HOST}:443:{APP_IP}", *args,
                 f"https://{HOST}{path}"], check=False, timeout=30)


def s_client(a, *args, stdin="", timeout=20):
    """openssl s_client to the TLS port; its stdout and stderr together."""
    r = a.ns(["openssl", "s_client", "-connect", f"{APP_IP}:443", *args],
             check=False, timeout=timeout, input=stdin)
    return r.returncode, r.stdout + r.stderr


def tls(a):
    return a.telemetry("/ewyk/tls")


def test_curl_http1_over_tls(app, pki):
    r = curl(app, pki, "--http1.1", "-w", "%{http_version} %{ssl_verify_result}")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "hello from ewyk\n1.1 0", r.stdout


def test_curl_http2_over_tls(app, pki, www):
    before = tls(app)["alpn_h2_conns"]
    r = curl(app, pki, "--http2", "-o", "/dev/null", "-w", "%{http_version} %{size_download}",
             path="/big.bin")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"2 {www['big_size']}", r.stdout
    assert tls(app)["alpn_h2_conns"] > before


def test_https_over_ipv6(app, pki):
    """The TLS listener takes either family: HTTP/2 over TLS to 2001:2::2."""
    r = app.ns(["curl", "-sS", "--max-time", "10", "--cacert", pki["ca_path"],
                "--resolve", f"{HOST}:443:[{APP_IP6}]", "--http2", "-w",
                " %{http_version} %{remote_ip}", f"https://{HOST}/hello.txt"],
               check=False, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"hello from ewyk\n 2 {APP_IP6}", r.stdout


def test_curl_verifies_the_chain_and_name(app, pki):
    """The CA's chain verifies for ewyk.test; another name is refused by
    curl (the server's certificate does not carry it)."""
    r = app.ns(["curl", "-sS", "--max-time", "10", "--cacert", pki["ca_path"],
                "--resolve", f"wrong.test:443:{APP_IP}", "https://wrong.test/hello.txt"],
               check=False, timeout=30)
    assert r.returncode != 0 and "wrong.test" in r.stderr, r.stderr


def test_h2load_over_tls(app):
    r = app.ns(["h2load", "-n", "2000", "-c", "8", "-m", "10",
                f"https://{APP_IP}/hello.txt"], timeout=120)
    assert re.search(r"status codes: 2000 2xx", r.stdout), r.stdout
    assert "Application protocol: h2" in r.stdout, r.stdout
    assert re.search(r"TLS Protocol: TLSv1\.3", r.stdout), r.stdout


def test_h2load_http1_over_tls(app):
    r = app.ns(["h2load", "--h1", "-n", "1000", "-c", "4",
                f"https://{APP_IP}/hello.txt"], timeout=120)
    assert re.search(r"status codes: 1000 2xx", r.stdout), r.stdout
    assert "Application protocol: http/1.1" in r.stdout, r.stdout


def test_nghttp_over_tls(app):
    r = app.ns(["nghttp", "-nv", f"https://{APP_IP}/hello.txt"], check=False, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ":status: 200" in r.stdout and "The negotiated protocol: h2" in r.stdout, r.stdout


@pytest.mark.parametrize("alpn,want", [("h2", "h2"), ("http/1.1", "http/1.1"),
                                       ("h2,http/1.1", "h2")])
def test_alpn(app, alpn, want):
    rc, out = s_client(app, "-alpn", alpn, "-servername", HOST)
    assert f"ALPN protocol: {want}" in out, out


def test_no_alpn_speaks_http1_and_still_sees_the_h2_preface(app, pki):
    """Without ALPN the connection is HTTP/1.1, and HTTP/2 with prior
    knowledge still works: the preface is recognised as over TCP."""
    code = f"""
import socket, ssl
ctx = ssl.create_default_context(cafile={pki['ca_path']!r})
s = ctx.wrap_socket(socket.create_connection(("{APP_IP}", 443), timeout=10),
                    server_hostname="{HOST}")
assert s.selected_alpn_protocol() is None
s.sendall(b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n" + bytes.fromhex("000000040000000000"))
d = s.recv(9)
print(d[3])   # the server's first frame: SETTINGS (4)
"""
    assert app.ns_python(code).strip() == "4"


def test_sni_picks_the_certificate(app):
    rc, out = s_client(app, "-servername", "other.test")
    assert re.search(r"subject=CN ?= ?other\.test", out), out
    rc, out = s_client(app, "-servername", HOST)
    assert re.search(r"subject=CN ?= ?ewyk\.test", out), out
    rc, out = s_client(app)		# no SNI: the default, the first pair
    assert re.search(r"subject=CN ?= ?ewyk\.test", out), out


def test_ecdsa_and_rsa_certificates_at_once(app):
    """The same name over ECDSA and RSA: a client that signs only with RSA
    gets the RSA certificate, others the ECDSA one."""
    rc, out = s_client(app, "-servername", HOST, "-tls1_2", "-cipher",
                       "ECDHE-RSA-AES128-GCM-SHA256")
    assert "Server public key is 2048 bit" in out, out
    assert "ECDHE-RSA-AES128-GCM-SHA256" in out, out
    rc, out = s_client(app, "-servername", HOST, "-tls1_3", "-sigalgs",
                       "rsa_pss_rsae_sha256")
    assert "Server public key is 2048 bit" in out and "TLSv1.3" in out, out
    rc, out = s_client(app, "-servername", HOST)
    assert "Server public key is 256 bit" in out, out


@pytest.mark.parametrize("version,name", [("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")])
def test_versions_forced(app, version, name):
    rc, out = s_client(app, version, "-servername", HOST)
    assert re.search(rf"Protocol *: {name}", out), out
    assert "Cipher is (NONE)" not in out, out


@pytest.mark.parametrize("version", ["-tls1_3", "-tls1_2"])
def test_resumption_by_ticket(app, tmp_path, version):
    sess = str(tmp_path / "sess.pem")
    before = tls(app)["handshakes_resumed_count"]
    # TLS 1.3's ticket comes after the handshake: stay a moment to get it.
    rc, out = s_client(app, version, "-servername", HOST, "-sess_out", sess,
                       stdin="", timeout=20)
    assert os.path.getsize(sess) > 0, out
    rc, out = s_client(app, version, "-servername", HOST, "-sess_in", sess)
    assert "Reused, TLSv1." in out, out
    assert tls(app)["handshakes_resumed_count"] == before + 1


def test_cbc_cipher_refused(app):
    before = tls(app)["handshakes_failed_by_reason"]["no_common_cipher"]
    rc, out = s_client(app, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA256:AES128-SHA")
    assert rc != 0 and "Cipher is (NONE)" in out, out
    assert tls(app)["handshakes_failed_by_reason"]["no_common_cipher"] == before + 1


@pytest.mark.parametrize("version", ["-tls1_1", "-tls1"])
def test_old_protocols_refused(app, version):
    before = tls(app)["handshakes_failed_count"]
    rc, out = s_client(app, version, "-cipher", "DEFAULT@SECLEVEL=0")
    assert rc != 0 and "Cipher is (NONE)" in out, out
    assert tls(app)["handshakes_failed_count"] == before + 1


def test_ocsp_stapled(app):
    rc, out = s_client(app, "-servername", HOST, "-status")
    assert "OCSP Response Status: successful" in out, out
    assert "Cert Status: good" in out, out
    certs = tls(app)["certs"]
    assert [certs[i]["ocsp_stapled"] for i in "012"] == [1, 0, 0], certs


def test_python_ssl_and_close_notify(app, pki):
    """Python's ssl verifies the chain, agrees on http/1.1, and the server
    ends with close_notify: after Connection: close, recv() gets a clean
    end, not SSLEOFError."""
    before = tls(app)["close_notify_sent_count"]
    out = app.ns_python(f"""
import socket, ssl
ctx = ssl.create_default_context(cafile={pki['ca_path']!r})
ctx.set_alpn_protocols(["http/1.1"])
s = ctx.wrap_socket(socket.create_connection(("{APP_IP}", 443), timeout=10),
                    server_hostname="{HOST}")
s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: {HOST}\\r\\nConnection: close\\r\\n\\r\\n")
data = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    data += d
print(s.version(), s.selected_alpn_protocol(), s.cipher()[0])
print(data.split(b"\\r\\n")[0].decode(), data.endswith(b"hello from ewyk\\n"))
""")
    lines = out.splitlines()
    assert lines[0] == "TLSv1.3 http/1.1 TLS_AES_128_GCM_SHA256", out
    assert lines[1] == "HTTP/1.1 200 OK True", out
    assert tls(app)["close_notify_sent_count"] > before


def test_body_behind_a_head_split_across_records(app, pki):
    """A PUT whose head ends inside a full 16 KB record that carries the
    body's start: HTTP takes the record in part, and has room again once
    it has moved the body on. The rest of the record is offered at once
    (nothing the server writes would wake it): the whole body is gathered
    and the handler answers (/kv/ refuses a value of 40 KB, 413) well
    within the request timeout, and the connection serves on."""
    out = app.ns_python(f"""
import socket, ssl, time
ctx = ssl.create_default_context(cafile={pki['ca_path']!r})
ctx.set_alpn_protocols(["http/1.1"])
s = ctx.wrap_socket(socket.create_connection(("{APP_IP}", 443), timeout=8),
                    server_hostname="{HOST}")
body = bytes(40000)
head = ("PUT /kv/split-head HTTP/1.1\\r\\nHost: {HOST}\\r\\n"
        "Content-Length: %d\\r\\n\\r\\n" % len(body)).encode()
stream = head + body
t0 = time.time()
s.sendall(stream[:20])            # one record each: 20 bytes, then 16 KB
s.sendall(stream[20:20 + 16384])
s.sendall(stream[20 + 16384:])
got = b""
while not got.endswith(b"bytes\\n"):
    got += s.recv(65536)
print(got.split(b"\\r\\n")[0].decode(), round(time.time() - t0, 3))
print(got.split(b"\\r\\n\\r\\n", 1)[1].decode().strip())
s.sendall(("GET /hello.txt HTTP/1.1\\r\\nHost: {HOST}\\r\\n"
           "Connection: close\\r\\n\\r\\n").encode())
got = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(got.split(b"\\r\\n")[0].decode(), got.endswith(b"hello from ewyk\\n"))
""", timeout=30)
    lines = out.splitlines()
    status, took = lines[0].rsplit(" ", 1)
    assert status == "HTTP/1.1 413 Content Too Large", out
    assert float(took) < 3, out
    assert lines[1] == "a value is at most 4096 bytes", out
    assert lines[2] == "HTTP/1.1 200 OK True", out


def test_renegotiation_refused(app):
    """A TLS 1.2 client asking to renegotiate ('R' to s_client) gets an
    alert and the connection ends; it is counted."""
    before = tls(app)["renegotiations_refused_count"]
    rc, out = s_client(app, "-tls1_2", "-servername", HOST, stdin="R\n", timeout=20)
    assert "RENEGOTIATING" in out, out
    deadline = time.time() + 5
    while tls(app)["renegotiations_refused_count"] == before and time.time() < deadline:
        time.sleep(0.2)
    assert tls(app)["renegotiations_refused_count"] == before + 1


def test_counters(app):
    t = tls(app)
    assert t["tls13_conns"] > 0 and t["tls12_conns"] > 0, t
    assert t["alpn_http11_conns"] > 0 and t["alpn_none_conns"] > 0, t
    assert t["cipher_conns"]["aes_128_gcm"] > 0, t
    assert t["handshakes_full_count"] > 0, t
    assert 0 < t["cert_expires_in_s"] <= 30 * 86400, t
    certs = [t["certs"][i] for i in "012"]
    assert [c["key_type"] for c in certs] == ["ECDSA", "RSA", "ECDSA"], t
    assert [c["name"] for c in certs] == ["ewyk.test", "ewyk.test", "other.test"], t
