# SPDX-License-Identifier: BSD-3-Clause
"""Slowloris and idle keep-alive connections: a request head that trickles
in gets 408 and the connection closes; an idle keep-alive connection is
closed, over HTTP/1.1 and (GOAWAY) HTTP/2; both counted; and other clients
are served meanwhile."""
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


H2_IDLE = """
import socket, time
import h2.config, h2.connection, h2.events
s = socket.create_connection(("{ip}", 80), timeout=6)
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
s.sendall(c.data_to_send())

def get():
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, [(":method", "GET"), (":path", "/hello.txt"),
                         (":scheme", "http"), (":authority", "x")], end_stream=True)
    s.sendall(c.data_to_send())
    got = b""
    while True:
        for ev in c.receive_data(s.recv(65536)):
            if isinstance(ev, h2.events.DataReceived):
                got += ev.data
                c.acknowledge_received_data(ev.flow_controlled_length, sid)
            if isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                s.sendall(c.data_to_send())
                return got
        s.sendall(c.data_to_send())
"""


def test_idle_http2_connection_is_closed_with_goaway(ewyk):
    """An HTTP/2 connection with no stream open for --keepalive-timeout-ms
    gets GOAWAY (NO_ERROR, the last stream it served) and is closed."""
    before = ewyk.telemetry("/ewyk/http")["idle_closes_count"]
    out = ewyk.ns_python(H2_IDLE.format(ip=APP_IP) + """
print(get() == b"hello from ewyk\\n")
t0 = time.monotonic()
goaway = None
while True:
    d = s.recv(65536)
    if not d:
        break
    for ev in c.receive_data(d):
        if isinstance(ev, h2.events.ConnectionTerminated):
            goaway = (int(ev.error_code), ev.last_stream_id)
print(goaway, round(time.monotonic() - t0, 1))
""")
    first, second = out.splitlines()
    assert first == "True", out
    goaway, waited = second.rsplit(" ", 1)
    assert goaway == "(0, 1)" and 1.4 <= float(waited) < 3.0, out
    assert ewyk.telemetry("/ewyk/http")["idle_closes_count"] - before == 1


def test_busy_http2_connection_is_not_cut(ewyk):
    # A request every 500 ms on one HTTP/2 connection, for 3 s.
    out = ewyk.ns_python(H2_IDLE.format(ip=APP_IP) + """
ok = 0
for _ in range(6):
    ok += get() == b"hello from ewyk\\n"
    time.sleep(0.5)
print(ok)
""")
    assert out.strip() == "6"
