# SPDX-License-Identifier: BSD-3-Clause
"""WebSockets through a route (websocket = on, DESIGN.md "Sites, routes
and upstreams"): an HTTP/1.1 client's opening handshake (RFC 6455 4.1) is
passed on to the route's upstream with its Upgrade and Connection, the
upstream's 101 comes back, and from then on the two byte streams are
spliced on the shard until one side closes. The application is a
python3-websockets echo server in the client's namespace; the clients are
python3-websockets (ws:// and wss://, IPv4 and IPv6) and a raw socket.
A route without websocket = on passes the request on as a plain GET,
which the application refuses."""
import os
import subprocess

import pytest

from ewyk_harness import APP_IP, APP_IP6, HOST_IP, PYTHON, Appliance, check_config
from tls_certs import CA

WS_PORT = 8099

# The application: echoes every message; /close-first closes after one
# message; /subprotocol takes "chat" when offered.
ECHO_APP = f"""
import asyncio, websockets

async def handler(ws, path):
    if path.endswith("/silent"):
        await ws.wait_closed()
        return
    if path.endswith("/close-first"):
        msg = await ws.recv()
        await ws.send(msg)
        await ws.close(code=4001, reason="enough")
        return
    async for msg in ws:
        await ws.send(msg)

async def main():
    async with websockets.serve(handler, None, {WS_PORT}, max_size=None,
                                subprotocols=["chat"], ping_interval=None):
        print("ready", flush=True)
        await asyncio.Future()

asyncio.run(main())
"""

# A client: MODE over URL, printing one line of findings.
CLIENT = """
import asyncio, hashlib, os, ssl, sys, time, websockets

url, mode = sys.argv[1], sys.argv[2]
ctx = None
if url.startswith("wss:"):
    ctx = ssl.create_default_context(cafile=sys.argv[3])

async def main():
    async with websockets.connect(url, ssl=ctx, max_size=None, subprotocols=["chat"],
                                  ping_interval=None, open_timeout=10,
                                  close_timeout=5) as ws:
        if mode == "echo":
            out = []
            for m in ("hello", b"\\x00\\x01binary\\xff", "x" * 70000):
                await ws.send(m)
                got = await ws.recv()
                out.append(got == m)
            big = os.urandom(3 << 20)
            await ws.send(big)
            got = await ws.recv()
            out.append(hashlib.sha256(got).digest() == hashlib.sha256(big).digest())
            print("echo", all(out), ws.subprotocol, flush=True)
        elif mode == "server-closes":
            await ws.send("one")
            got = await ws.recv()
            t0 = time.monotonic()
            try:
                await ws.recv()
            except websockets.ConnectionClosed as e:
                # the TCP close after the close frames: at once, not
                # after close_timeout
                await ws.wait_closed()
                print("closed", got, e.rcvd.code, e.rcvd.reason,
                      time.monotonic() - t0 < 2.5, flush=True)
        elif mode == "idle":
            t0 = time.monotonic()
            try:
                await asyncio.wait_for(ws.recv(), 20)
            except websockets.ConnectionClosed:
                print("closed-after", round(time.monotonic() - t0), flush=True)

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("ws"))
    ca = CA(d)
    cert, key, _ = ca.issue("ws", names=("ws.example.test",), ip=APP_IP)
    conf = os.path.join(d, "ewykd.conf")
    with open(conf, "w") as f:
        f.write(f"""[ewykd]
upstream-timeout-ms = 3000

[site s]
host = ws.example.test
root = {d}

[upstream app]
server = {HOST_IP}:{WS_PORT}

[route ws]
prefix = /ws
upstream = app
websocket = on

[route plain]
prefix = /plain
upstream = app
""")
    a = Appliance(args=["--config", conf, "--tls-cert", cert, "--tls-key", key,
                        "--tls-port", "443"], demo=False, ip6=True)
    app = None
    try:
        a.start()
        app = a.ns_popen_python(ECHO_APP)
        assert app.stdout.readline().split() == ["ready"]
        yield {"a": a, "ca": ca.path, "conf": conf}
    finally:
        if app is not None:
            app.kill()
            app.wait()
        a.close()


def client(ws, url, mode):
    r = ws["a"].ns([PYTHON, "-c", CLIENT, url, mode, ws["ca"]], check=False,
                   timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split()


@pytest.mark.parametrize("base", ["ws://{ip4}", "wss://{ip4}", "ws://[{ip6}]"],
                         ids=["ws", "wss", "ws6"])
def test_messages_echo_both_ways(ws, base):
    """Text, binary, a 70 KB and a 3 MB message go to the application and
    come back whole; the subprotocol it chose reaches the client."""
    url = base.format(ip4=APP_IP, ip6=APP_IP6) + "/ws/echo"
    assert client(ws, url, "echo") == ["echo", "True", "chat"]


def test_application_closes_first(ws):
    """The application's close frame (code and reason) reaches the client,
    and its TCP close ends the client's connection: the client's close
    handshake completes within its close_timeout."""
    url = f"ws://{APP_IP}/ws/close-first"
    assert client(ws, url, "server-closes") == ["closed", "one", "4001", "enough",
                                                "True"]
    st = ws["a"].stats()["requests_by_status_reqs"]
    assert st["101"] >= 1, st


def test_silent_tunnel_ends_after_the_upstreams_timeout(ws):
    """A tunnel whose application says nothing is timed as an answer body
    is: upstream-timeout-ms (3 s here) closes it."""
    url = f"ws://{APP_IP}/ws/silent"
    word, secs = client(ws, url, "idle")
    assert word == "closed-after" and 2 <= int(secs) <= 6, secs


def test_route_without_websocket_passes_a_plain_get(ws):
    """websocket = off (the default): the handshake goes on without its
    Upgrade, and the application's refusal comes back."""
    url = f"ws://{APP_IP}/plain/echo"
    r = ws["a"].ns([PYTHON, "-c", CLIENT, url, "echo", ws["ca"]], check=False,
                   timeout=60)
    assert r.returncode != 0
    assert "InvalidStatusCode" in r.stderr or "status code" in r.stderr, r.stderr[-1500:]


def test_raw_handshake_and_client_close(ws):
    """A raw client: the 101's fields (Upgrade, Connection, the accept key
    the application computed), a masked frame echoed, then the client's
    FIN; the appliance keeps serving."""
    out = ws["a"].ns_python(f"""
import base64, hashlib, os, socket
key = base64.b64encode(os.urandom(16)).decode()
s = socket.create_connection(("{APP_IP}", 80), timeout=5)
s.sendall(("GET /ws/raw HTTP/1.1\\r\\nHost: ws.example.test\\r\\nUpgrade: websocket\\r\\n"
           "Connection: keep-alive, Upgrade\\r\\nSec-WebSocket-Key: " + key +
           "\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n").encode())
data = b""
while b"\\r\\n\\r\\n" not in data:
    data += s.recv(4096)
head, rest = data.split(b"\\r\\n\\r\\n", 1)
lines = head.decode().split("\\r\\n")
fields = {{l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}}
want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
mask = os.urandom(4)
payload = b"ping over raw"
s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
while len(rest) < 2 + len(payload):
    rest += s.recv(4096)
s.shutdown(socket.SHUT_WR)
print(lines[0].split()[1], fields.get("upgrade"), fields.get("connection"),
      fields.get("sec-websocket-accept") == want, rest[2:2 + len(payload)] == payload,
      "transfer-encoding" in fields or "content-length" in fields)
""")
    assert out.split() == ["101", "websocket", "Upgrade", "True", "True", "False"], out
    r = ws["a"].ns(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-m", "10",
                    "-H", "Host: ws.example.test", f"http://{APP_IP}/nothing-here"],
                   check=False)
    assert r.stdout == "404"


def test_check_config_prints_the_route_as_read(ws):
    """--check-config prints websocket = on with its route; on a route
    that is not an upstream's it is refused (test_sites.py)."""
    rc, out, err = check_config(ws["a"].name, "--config", ws["conf"])
    assert rc == 0, err
    assert "[route ws]\nprefix = /ws\nupstream = app\nwebsocket = on\n" in out, out
