# SPDX-License-Identifier: BSD-3-Clause
"""Slowloris and idle keep-alive connections: a request head that trickles
in gets 408 and the connection closes; an idle keep-alive connection is
closed; both counted; and other clients are served meanwhile."""
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance


@pytest.fixture(scope="module")
def ewyk(www):
    yield from serve_module(Appliance(www=www["dir"], args=[
        "--header-timeout-ms", "1000", "--keepalive-timeout-ms", "1500"]))


def test_slowloris_gets_408_and_others_are_served(ewyk):
    before = ewyk.telemetry("/ewyk/http")
    slow = ewyk.ns_popen_python(f"""
import socket, time
s = socket.create_connection(("{APP_IP}", 80), timeout=10)
s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n")
t0 = time.monotonic()
got = b""
s.settimeout(0.1)
for i in range(40):                  # one header byte every 100 ms
    try:
        s.sendall(b"X")
        got = s.recv(4096)           # the answer ends the trickle
        break
    except socket.timeout:
        continue
    except OSError:
        break
print(round(time.monotonic() - t0, 1), got.split(b"\\r\\n")[0].decode())
""")
    time.sleep(0.3)
    r = ewyk.ns(["curl", "-sS", "-m", "5", ewyk.url("/hello.txt")])
    assert r.stdout == "hello from ewyk\n"
    out, _ = slow.communicate(timeout=20)
    took, status = out.split(" ", 1)
    assert status.strip() == "HTTP/1.1 408 Request Timeout", out
    assert float(took) < 3.0, out
    after = ewyk.telemetry("/ewyk/http")
    assert after["head_timeouts_count"] - before["head_timeouts_count"] == 1


def test_idle_keepalive_connection_is_closed(ewyk):
    before = ewyk.telemetry("/ewyk/http")["idle_closes_count"]
    out = ewyk.ns_python(f"""
import socket, time
s = socket.create_connection(("{APP_IP}", 80), timeout=5)
s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
got = b""
while not got.endswith(b"hello from ewyk\\n"):
    got += s.recv(4096)
t0 = time.monotonic()
s.settimeout(5)
rest = s.recv(4096)                 # b"" once the server closes
print(len(rest), round(time.monotonic() - t0, 1))
""")
    n, waited = out.split()
    assert n == "0" and 1.4 <= float(waited) < 3.0, out
    assert ewyk.telemetry("/ewyk/http")["idle_closes_count"] - before == 1


def test_busy_connection_is_not_cut(ewyk):
    # Requests every 500 ms on one connection, for 3 s: never idle long
    # enough to be closed.
    out = ewyk.ns_python(f"""
import http.client, time
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=5)
ok = 0
for _ in range(6):
    c.request("GET", "/hello.txt")
    r = c.getresponse()
    ok += r.read() == b"hello from ewyk\\n"
    time.sleep(0.5)
print(ok)
""")
    assert out.strip() == "6"
