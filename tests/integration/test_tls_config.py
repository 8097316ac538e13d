# SPDX-License-Identifier: BSD-3-Clause
"""TLS configuration: certificates reloaded without a restart (SIGHUP and
/ewyk/tls_reload) while open connections go on with the old ones, a bad
reload refused with the old certificates kept, and the start-up errors
(exit status 2, one line that never holds a key)."""
import os
import shutil
import signal
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, HOST_IP, Appliance
from test_startup_errors import NO_DAC, start
from tls_certs import CA, write_key

HOST = "ewyk.test"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    return {"dir": str(d), "ca": ca}


@pytest.fixture(scope="module")
def served(pki):
    """The files ewykd is given, which the tests replace."""
    d = pki["dir"]
    cert, key, _ = pki["ca"].issue("first")
    live_cert, live_key = os.path.join(d, "live.pem"), os.path.join(d, "live.key")
    shutil.copy(cert, live_cert)
    shutil.copy(key, live_key)
    os.chmod(live_key, 0o600)
    return live_cert, live_key


@pytest.fixture(scope="module")
def app(www, served):
    cert, key = served
    yield from serve_module(Appliance(www=www["dir"], args=[
        "--tls-cert", cert, "--tls-key", key]))


def replace(served, cert, key):
    shutil.copy(cert, served[0])
    shutil.copy(key, served[1])
    os.chmod(served[1], 0o600)


# A client that opens one connection, asks twice with a pause between
# (the test reloads meanwhile), and says which certificate each answer
# came with; then a second connection opened after the pause.
KEEP = """
import hashlib, socket, ssl, sys, time
ctx = ssl.create_default_context(cafile=sys.argv[1])
def conn():
    return ctx.wrap_socket(socket.create_connection(("{ip}", 443), timeout=10),
                           server_hostname="{host}")
def get(s):
    s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n")
    data = b""
    while not data.endswith(b"hello from ewyk\\n"):
        d = s.recv(65536)
        assert d, data
        data += d
    return hashlib.sha256(s.getpeercert(binary_form=True)).hexdigest()[:16]
old = conn()
print(get(old), flush=True)
sys.stdin.readline()            # the test has reloaded
print(get(old), get(conn()), flush=True)
"""


def keep_client(app, pki):
    import subprocess
    code = KEEP.format(ip=APP_IP, host=HOST)
    return subprocess.Popen(["ip", "netns", "exec", app.client, "/usr/bin/python3", "-c",
                             code, pki["ca"].path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def fingerprint(path):
    import hashlib
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    cert = x509.load_pem_x509_certificate(open(path, "rb").read())
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()[:16]


def reload_via(app, how):
    if how == "sighup":
        gen = app.telemetry("/ewyk/tls")["generation"]
        app.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 5
        while app.telemetry("/ewyk/tls")["generation"] == gen and time.time() < deadline:
            time.sleep(0.1)
        return {"result": "reloaded" if app.telemetry("/ewyk/tls")["generation"] != gen
                else "not reloaded"}
    return app.telemetry("/ewyk/tls_reload")


@pytest.mark.parametrize("how", ["sighup", "telemetry"])
def test_reload_keeps_open_connections(app, pki, served, how):
    before = fingerprint(served[0])
    client = keep_client(app, pki)
    try:
        first = client.stdout.readline().split()
        assert first == [before], first
        new_cert, new_key, _ = pki["ca"].issue(f"next-{how}")
        replace(served, new_cert, new_key)
        r = reload_via(app, how)
        assert r["result"] == "reloaded", r
        client.stdin.write("go\n")
        client.stdin.flush()
        old_again, fresh = client.stdout.readline().split()
    finally:
        client.wait(timeout=30)
    assert old_again == before		# the open connection goes on
    assert fresh == fingerprint(new_cert) != before
    assert app.telemetry("/ewyk/tls")["reloads_count"] >= 1


def test_bad_reload_keeps_the_old_certificates(app, pki, served):
    keep = fingerprint(served[0])
    saved_key = open(served[1], "rb").read()
    write_key(served[1])			# a key of no certificate
    try:
        t0 = app.telemetry("/ewyk/tls")
        r = app.telemetry("/ewyk/tls_reload")
        assert r["result"] == "refused", r
        assert "does not match" in r["message"] and served[1] in r["message"], r
        assert "PRIVATE" not in r["message"]
        t1 = app.telemetry("/ewyk/tls")
        assert t1["generation"] == t0["generation"]
        assert t1["reload_failures_count"] == t0["reload_failures_count"] + 1
        r = app.ns(["openssl", "s_client", "-connect", f"{APP_IP}:443", "-servername",
                    HOST], check=False, input="", timeout=20)
        assert r.returncode == 0, r.stderr
    finally:
        with open(served[1], "wb") as f:
            f.write(saved_key)
    assert fingerprint(served[0]) == keep


def test_one_sighup_reloads_tree_and_certificates_and_https_is_logged(pki, tmp_path):
    """SIGHUP reloads the static tree and the certificates both; an HTTPS
    exchange is in the access log under the client's address."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "a.txt").write_text("one\n")
    cert, key, _ = pki["ca"].issue("both-first")
    live = (str(tmp_path / "live.pem"), str(tmp_path / "live.key"))
    replace(live, cert, key)
    log = tmp_path / "access.log"
    with Appliance(www=str(www), demo=False, args=["--tls-cert", live[0], "--tls-key",
                                                   live[1], "--access-log", str(log)]) as a:
        def get(path):
            return a.ns(["curl", "-sS", "--http1.1", "--max-time", "10", "--cacert",
                         pki["ca"].path,
                         "--resolve", f"{HOST}:443:{APP_IP}", f"https://{HOST}{path}"],
                        check=False, timeout=30).stdout
        assert get("/a.txt") == "one\n"
        (www / "a.txt").write_text("two\n")
        new_cert, new_key, _ = pki["ca"].issue("both-next")
        replace(live, new_cert, new_key)
        r = reload_via(a, "sighup")
        assert r["result"] == "reloaded", r
        deadline = time.time() + 5
        while a.telemetry("/ewyk/info")["www"]["reloads_count"] < 1:
            assert time.time() < deadline, "the tree was not reloaded"
            time.sleep(0.05)
        assert get("/a.txt") == "two\n"
        r = a.ns(["openssl", "s_client", "-connect", f"{APP_IP}:443", "-servername", HOST],
                 check=False, input="", timeout=20)
        seen = tmp_path / "seen.pem"
        seen.write_text(r.stdout[r.stdout.index("-----BEGIN CERTIFICATE"):])
        assert fingerprint(str(seen)) == fingerprint(new_cert) != fingerprint(cert)
        deadline = time.time() + 10
        while len(log.read_text().splitlines()) < 2:
            assert time.time() < deadline, log.read_text()
            time.sleep(0.05)
        lines = log.read_text().splitlines()
        assert all(l.startswith(HOST_IP + " - - [") and '"GET /a.txt HTTP/1.1" 200 4' in l
                   for l in lines), lines
        assert a.read_log().count("reload asked") == 1


# Start-up errors -------------------------------------------------------------

@pytest.fixture(scope="module")
def files(pki):
    ca = pki["ca"]
    d = pki["dir"]
    good_cert, good_key, _ = ca.issue("good")
    expired_cert, expired_key, _ = ca.issue("expired", days=-1, not_before_days=-30)
    future_cert, future_key, _ = ca.issue("future", days=60, not_before_days=10)
    group_key = os.path.join(d, "group.key")
    shutil.copy(good_key, group_key)
    os.chmod(group_key, 0o640)
    unreadable_key = os.path.join(d, "unreadable.key")
    shutil.copy(good_key, unreadable_key)
    os.chmod(unreadable_key, 0)
    other_key = write_key(os.path.join(d, "other.key"))
    garbage = os.path.join(d, "garbage.pem")
    with open(garbage, "w") as f:
        f.write("not a certificate\n")
    www = os.path.join(d, "www")
    os.makedirs(www, exist_ok=True)
    with open(os.path.join(www, "index.html"), "w") as f:
        f.write("ewyk\n")
    return {"cert": good_cert, "key": good_key, "expired": (expired_cert, expired_key),
            "future": (future_cert, future_key), "group_key": group_key,
            "unreadable_key": unreadable_key, "other_key": other_key,
            "garbage": garbage, "www": www, "key_text": open(good_key).read()}


def fails(files, args, needle, wrap=()):
    rc, out, err, _ = start(["--www", files["www"], *args], wrap=wrap)
    assert rc == 2, (rc, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ewykd: "), err
    assert needle in lines[0], err
    # A key's content is never said.
    key_body = files["key_text"].splitlines()[1]
    assert key_body not in err + out and "PRIVATE KEY" not in err + out
    return lines[0]


def test_missing_certificate(files):
    fails(files, ["--tls-cert", "/nonexistent.pem", "--tls-key", files["key"]],
          "/nonexistent.pem: No such file")


def test_unreadable_key(files):
    fails(files, ["--tls-cert", files["cert"], "--tls-key", files["unreadable_key"]],
          "Permission denied", wrap=NO_DAC)


def test_key_readable_by_group(files):
    fails(files, ["--tls-cert", files["cert"], "--tls-key", files["group_key"]],
          "readable by its owner only")


def test_mismatched_key(files):
    fails(files, ["--tls-cert", files["cert"], "--tls-key", files["other_key"]],
          "does not match")


def test_expired_certificate(files):
    fails(files, ["--tls-cert", files["expired"][0], "--tls-key", files["expired"][1]],
          "expired on")


def test_certificate_not_yet_valid(files):
    fails(files, ["--tls-cert", files["future"][0], "--tls-key", files["future"][1]],
          "not valid before")


def test_not_a_certificate(files):
    fails(files, ["--tls-cert", files["garbage"], "--tls-key", files["key"]],
          "no PEM certificate")


def test_pairs(files):
    fails(files, ["--tls-cert", files["cert"]], "come in pairs")


def test_tls_port_is_not_the_cleartext_one(files):
    fails(files, ["--tls-cert", files["cert"], "--tls-key", files["key"],
                  "--tls-port", "80"], "--listen-port too")


@pytest.mark.parametrize("priority,needle", [
    ("NORMAL:+NOSUCH", "--tls-priority"),
    ("NORMAL:+VERS-TLS1.1", "older than TLS 1.2"),
])
def test_bad_priority(files, priority, needle):
    fails(files, ["--tls-cert", files["cert"], "--tls-key", files["key"],
                  "--tls-priority", priority], needle)
