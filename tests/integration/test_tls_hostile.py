# SPDX-License-Identifier: BSD-3-Clause
"""Bad input on the TLS port: garbage instead of a ClientHello, a record
longer than TLS allows, a ClientHello larger than ewykd takes, a
truncated ClientHello (the client leaves; the client stalls until the
handshake timeout), and a flood of ClientHellos. Each is answered and
counted by reason, and ewykd goes on serving HTTPS meanwhile."""
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance
from tls_certs import CA

TIMEOUT_MS = 1000

# Python's ssl writes a real ClientHello into memory: HELLO is the code that
# makes one, as bytes, in the client namespace.
HELLO = """
import ssl
def client_hello():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    o = ctx.wrap_bio(inc, out, server_hostname="ewyk.test")
    try:
        o.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()
"""


@pytest.fixture(scope="module")
def app(www, tmp_path_factory):
    ca = CA(tmp_path_factory.mktemp("pki"))
    cert, key, _ = ca.issue("ec")
    a = Appliance(www=www["dir"], args=[
        "--tls-cert", cert, "--tls-key", key,
        "--tls-handshake-timeout-ms", str(TIMEOUT_MS)])
    yield from serve_module(a)


def failed(a):
    return a.telemetry("/ewyk/tls")["handshakes_failed_by_reason"]


def wait_failed(a, reason, want, timeout=5):
    deadline = time.time() + timeout
    while True:
        got = failed(a)[reason]
        if got >= want or time.time() > deadline:
            return got
        time.sleep(0.1)


def send_and_read(a, payload_expr, close_after=False, wait=5):
    """Sends bytes (a Python expression, HELLO in scope) on a connection to
    443 and reads until the server ends it: prints the bytes it got back
    and how it ended (eof, reset or timeout)."""
    return a.ns_python(HELLO + f"""
import socket
s = socket.create_connection(("{APP_IP}", 443), timeout={wait})
s.sendall({payload_expr})
if {close_after}:
    s.shutdown(socket.SHUT_WR)
got, how = b"", "timeout"
try:
    while True:
        d = s.recv(65536)
        if not d:
            how = "eof"
            break
        got += d
except ConnectionResetError:
    how = "reset"
except socket.timeout:
    pass
print(got.hex() or "-", how)
""", timeout=wait + 20).split()


def test_garbage_instead_of_a_client_hello(app):
    before = sum(failed(app).values())
    got, how = send_and_read(app, 'b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"')
    # An alert record (type 21), then the end: no hanging connection.
    assert got.startswith("15") and how in ("eof", "reset"), (got, how)
    assert sum(failed(app).values()) == before + 1


def test_record_longer_than_tls_allows(app):
    before = failed(app)["bad_record"]
    # A handshake record that says 18 KB (0x4800): beyond 2^14 + 256.
    got, how = send_and_read(app, 'bytes.fromhex("1603014800") + bytes(64)')
    assert how in ("eof", "reset"), (got, how)
    assert wait_failed(app, "bad_record", before + 1) == before + 1


def test_oversized_client_hello(app):
    """A ClientHello of 20 000 bytes in records of 16 KB: beyond what the
    handshake takes (16 KB), refused as too large."""
    before = failed(app)["too_large"]
    expr = ('bytes.fromhex("1603014000") + bytes.fromhex("01004e20") + bytes(16380) + '
            'bytes.fromhex("1603010e24") + bytes(3620)')
    got, how = send_and_read(app, expr)
    assert how in ("eof", "reset"), (got, how)
    assert wait_failed(app, "too_large", before + 1) == before + 1


def test_truncated_client_hello_then_close(app):
    before = failed(app)["peer_closed"]
    got, how = send_and_read(app, "client_hello()[:60]", close_after=True)
    assert how in ("eof", "reset"), (got, how)
    assert wait_failed(app, "peer_closed", before + 1) == before + 1


def test_stalled_handshake_times_out(app):
    """Half a ClientHello and then nothing: the handshake timeout resets
    the connection, counted."""
    before = failed(app)["timeout"]
    t0 = time.time()
    got, how = send_and_read(app, "client_hello()[:60]", wait=10)
    took = time.time() - t0
    assert how == "reset", (got, how)
    assert TIMEOUT_MS / 1000 * 0.9 < took < TIMEOUT_MS / 1000 + 5, took
    assert wait_failed(app, "timeout", before + 1) == before + 1


def test_client_hello_flood_is_bounded(app):
    """600 connections send a ClientHello each and never go on, while
    curl fetches over HTTPS: every fetch succeeds, what waited for a
    staging slot is counted, and the flood's handshakes all time out."""
    t0 = app.telemetry("/ewyk/tls")
    flood = app.ns_popen_python(HELLO + f"""
import socket, time
hello = client_hello()
socks = []
for i in range(600):
    try:
        s = socket.create_connection(("{APP_IP}", 443), timeout=5)
        s.sendall(hello)
        socks.append(s)
    except OSError:
        pass
print(len(socks), flush=True)
time.sleep({TIMEOUT_MS / 1000 + 3})
""")
    try:
        ok = 0
        deadline = time.time() + 4
        while time.time() < deadline:
            r = app.ns(["curl", "-sSk", "--max-time", "5", "-o", "/dev/null", "-w",
                        "%{http_code}", f"https://{APP_IP}/hello.txt"], check=False,
                       timeout=20)
            assert r.stdout == "200", (r.stdout, r.stderr,
                                       app.telemetry("/ewyk/tls"))
            ok += 1
        opened = int(flood.stdout.readline())
    finally:
        flood.wait(timeout=60)
    assert ok >= 3 and opened > 500, (ok, opened)
    t1 = app.telemetry("/ewyk/tls")
    # The handshakes the flood began never finished: each timed out.
    deadline = time.time() + 10
    while t1["handshaking_conns"] > 0 and time.time() < deadline:
        time.sleep(0.5)
        t1 = app.telemetry("/ewyk/tls")
    assert t1["handshaking_conns"] == 0, t1
    print("queued for a staging:", t1["hs_staging_waits_count"] -
          t0["hs_staging_waits_count"], "fetches:", ok)
    assert t1["handshakes_failed_by_reason"]["timeout"] - \
        t0["handshakes_failed_by_reason"]["timeout"] >= opened * 0.9, (t0, t1)
