# SPDX-License-Identifier: BSD-3-Clause
"""WebSockets through a route (websocket = on, DESIGN.md "Sites, routes
and upstreams"): an HTTP/1.1 client's opening handshake (RFC 6455 4.1) is
passed on to the route's upstream with its Upgrade and Connection, the
upstream's 101 comes back, and from then on the two byte streams are
spliced on the shard until one side closes. Over HTTP/2 the same is
RFC 8441's extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL, :protocol
websocket, answered 200, the stream's DATA the tunnel), passed on to the
upstream as HTTP/1.1's upgrade, with a Sec-WebSocket-Key of ewykd's. The application is a
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


# An HTTP/2 client of RFC 8441: SETTINGS read, an extended CONNECT, a
# masked text frame in DATA, its echo, then a close frame both ways.
H2_CLIENT = """
import os, socket, ssl, struct, sys
import h2.connection, h2.config, h2.events, h2.settings

host, scheme, path, cafile = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
s = socket.create_connection((host, 443 if scheme == "https" else 80), timeout=10)
if scheme == "https":
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["h2"])
    s = ctx.wrap_socket(s, server_hostname="ws.example.test")
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
s.sendall(c.data_to_send())
enabled = None
while enabled is None:
    for e in c.receive_data(s.recv(65536)):
        if isinstance(e, h2.events.RemoteSettingsChanged):
            v = e.changed_settings.get(h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL)
            enabled = v.new_value if v is not None else 0
    s.sendall(c.data_to_send())

def frame(opcode, payload):
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    n = len(payload)
    hdr = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                     bytes([0x80 | 126]) + struct.pack("!H", n))
    return hdr + mask + body

sid = c.get_next_available_stream_id()
c.send_headers(sid, [(":method", "CONNECT"), (":protocol", "websocket"),
                     (":scheme", scheme), (":path", path),
                     (":authority", "ws.example.test"),
                     ("sec-websocket-version", "13")])
msg = b"over h2 " + os.urandom(3000).hex().encode()
status, got, ended = None, b"", False
sent_close = False
c.send_data(sid, frame(1, msg))
s.sendall(c.data_to_send())
while not ended:
    data = s.recv(65536)
    if not data:
        break
    for e in c.receive_data(data):
        if isinstance(e, h2.events.ResponseReceived):
            status = dict(e.headers)[b":status"].decode()
            accept = b"sec-websocket-accept" in dict(e.headers)
        elif isinstance(e, h2.events.DataReceived):
            got += e.data
            c.acknowledge_received_data(e.flow_controlled_length, sid)
        elif isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)):
            ended = True
    # the echo in: say goodbye (1000), the application answers and closes
    if not sent_close and len(got) >= len(msg) + 4:
        c.send_data(sid, frame(8, struct.pack("!H", 1000)))
        sent_close = True
    s.sendall(c.data_to_send())

def frames(b):
    out = []
    while len(b) >= 2:
        op, n = b[0] & 0x0f, b[1] & 0x7f
        at = 2
        if n == 126:
            n, at = struct.unpack("!H", b[2:4])[0], 4
        out.append((op, b[at:at + n]))
        b = b[at + n:]
    return out

f = frames(got)
print(enabled, status, accept, f[0] == (1, msg), f[-1][0] == 8, ended)
"""


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_http2_extended_connect(ws, scheme):
    """RFC 8441 over h2c and h2: ENABLE_CONNECT_PROTOCOL is 1, the CONNECT
    with :protocol websocket is answered 200 without an accept key, a
    masked 6 KB text frame comes back from the application, and the close
    frames end the stream."""
    r = ws["a"].ns([PYTHON, "-c", H2_CLIENT, APP_IP, scheme, "/ws/h2", ws["ca"]],
                   check=False, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["1", "200", "False", "True", "True", "True"], r.stdout


def test_http2_extended_connect_elsewhere_is_501(ws):
    """:protocol websocket on a route that does not pass WebSockets on,
    and another protocol anywhere: 501; the connection goes on."""
    out = ws["a"].ns_python(f"""
import socket
import h2.connection, h2.config, h2.events
s = socket.create_connection(("{APP_IP}", 80), timeout=10)
c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
c.initiate_connection()
c.update_settings({{}})
s.sendall(c.data_to_send())
for e in c.receive_data(s.recv(65536)):
    pass
s.sendall(c.data_to_send())
got = {{}}
for path, proto in (("/plain/x", "websocket"), ("/ws/x", "chat")):
    sid = c.get_next_available_stream_id()
    c.send_headers(sid, [(":method", "CONNECT"), (":protocol", proto),
                         (":scheme", "http"), (":path", path),
                         (":authority", "ws.example.test")])
    s.sendall(c.data_to_send())
    while sid not in got:
        for e in c.receive_data(s.recv(65536)):
            if isinstance(e, h2.events.ResponseReceived):
                got[e.stream_id] = dict(e.headers)[b":status"].decode()
        s.sendall(c.data_to_send())
print(*got.values())
""")
    assert out.split() == ["501", "501"], out
