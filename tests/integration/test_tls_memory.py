# SPDX-License-Identifier: BSD-3-Clause
"""What an idle TLS connection holds: ewykd's resident memory grows by
what 400 connections keep once each has done its handshake and one
request. Cleartext first, which touches the TCP and HTTP slots the TLS
connections then reuse; so the growth over TLS is TLS's own: the GnuTLS
session, and lib/tls's slot (GnuTLS frees its record buffers once a record
is through, and the handshake's staging goes back to its pool). The
figures are printed; the test holds TLS's to a budget."""
import re

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance
from tls_certs import CA

CONNS = 400
BUDGET = 24 * 1024	# bytes per idle TLS connection, beyond cleartext's

OPEN = """
import socket, ssl, sys, time
tls = sys.argv[1] == "tls"
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ctx.set_alpn_protocols(["http/1.1"])
socks = []
for i in range({n}):
    s = socket.create_connection(("{ip}", 443 if tls else 80), timeout=10)
    if tls:
        s = ctx.wrap_socket(s)
    s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
    got = b""
    while not got.endswith(b"hello from ewyk\\n"):
        got += s.recv(4096)
    socks.append(s)
print("open", flush=True)
sys.stdin.readline()
"""


@pytest.fixture(scope="module")
def app(www, tmp_path_factory):
    cert, key, _ = CA(tmp_path_factory.mktemp("pki")).issue("ec")
    yield from serve_module(Appliance(www=www["dir"], args=[
        "--shards", "1", "--tls-cert", cert, "--tls-key", key,
        "--keepalive-timeout-ms", "0"]))


def rss_kb(a):
    with open(f"/proc/{a.proc.pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1))


def held_by(a, kind):
    import subprocess
    before = rss_kb(a)
    p = subprocess.Popen(["ip", "netns", "exec", a.client, "/usr/bin/python3", "-c",
                          OPEN.format(n=CONNS, ip=APP_IP), kind],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "open"
        held = rss_kb(a) - before
        open_conns = a.stats()["open_conns"]
    finally:
        p.communicate("done\n", timeout=60)
    assert open_conns >= CONNS, open_conns
    return held * 1024 / CONNS


def test_idle_tls_connection_memory(app):
    clear = held_by(app, "clear")
    tls = held_by(app, "tls")
    print(f"\n  per idle connection: cleartext {clear:.0f} B (TCP, HTTP), "
          f"TLS's own {tls:.0f} B more")
    assert tls < BUDGET, (clear, tls)
