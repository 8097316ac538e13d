# SPDX-License-Identifier: BSD-3-Clause
"""Streamed bodies in blocking style on fibers (app/ewykd/body_io.c):
/upload reads its request body with ewyk_body_read() as it arrives, and
/bytes writes its answer with ewyk_respond_begin() and ewyk_body_write()
as the client takes it. Byte-exact over HTTP/1.1 (length, chunked,
pipelined) and HTTP/2; a slow handler or a slow client holds back the
other side instead of filling memory; a client that leaves mid-body
cancels the parked fiber and every task and stack comes back."""
import os
import re
import subprocess
import tempfile
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, Appliance, fnv1a64

ONE_WORKER = "0@0,1@1"


def pattern(n):
    one = bytes(i % 251 for i in range(251))
    return (one * (n // 251 + 1))[:n]


def strategy(a):
    return a.telemetry("/ewyk/strategy")["shard_0"]


def settle(a, timeout=5):
    deadline = time.monotonic() + timeout
    while True:
        s = strategy(a)
        if s["fibers_in_use_count"] == 0 or time.monotonic() > deadline:
            return s
        time.sleep(0.05)


@pytest.fixture(scope="module")
def ewyk(www):
    yield from serve_module(Appliance(www=www["dir"], lcores=ONE_WORKER,
                                      args=["--shards", "1"]))


@pytest.fixture(scope="module")
def upload_file():
    """The body to upload, and beside it the place for an answer."""
    data = os.urandom(3 << 20)
    with tempfile.TemporaryDirectory(prefix="ewyk-up-") as d:
        path = os.path.join(d, "body")
        with open(path, "wb") as f:
            f.write(data)
        yield path, data


def curl(a, *args, timeout=60):
    return a.ns(["curl", "-sS", "--max-time", "30", *args], timeout=timeout)


def curl_bytes(a, *args):
    r = subprocess.run(["ip", "netns", "exec", a.client, "curl", "-sS",
                        "--max-time", "30", *args], capture_output=True,
                       timeout=60, check=True)
    return r.stdout


@pytest.mark.parametrize("query,h2", [
    ("n=3000000", False), ("n=3000000&chunked=1", False),
    ("n=3000000&chunk=1000", False), ("n=3000000", True),
    ("n=1&chunked=1", True), ("n=0", False)])
def test_written_answer_is_byte_exact(ewyk, query, h2):
    before = strategy(ewyk)
    proto = ["--http2-prior-knowledge"] if h2 else []
    got = curl_bytes(ewyk, *proto, ewyk.url(f"/bytes?{query}"))
    n = int(re.search(r"n=(\d+)", query).group(1))
    chunk = int((re.search(r"chunk=(\d+)", query) or [0, 8192])[1])
    assert len(got) == n and got == pattern(n)
    after = settle(ewyk)
    assert after["fibers_started_count"] - before["fibers_started_count"] == 1
    # The fiber parks for its begin, and once for each write (of chunk
    # bytes at most, 8 KiB by default), until the client has it all.
    parks = after["fiber_parks_count"] - before["fiber_parks_count"]
    assert parks == 1 + -(-n // chunk), (parks, n, chunk)
    assert after["fibers_in_use_count"] == 0


def test_head_and_pipelined_answers_keep_their_place(ewyk):
    """HEAD: the length, no body, the writes skipped. Pipelined: a written
    answer between two others comes whole and in its place."""
    # The handler naps after its (skipped) write: the HEAD's answer, let
    # go at once, is no client gone.
    before = strategy(ewyk)
    head = ewyk.exchange(b"HEAD /bytes?n=5000&chunk=1000&ms=60 HTTP/1.1\r\nHost: x\r\n"
                         b"Connection: close\r\n\r\n")
    assert head.startswith("HTTP/1.1 200") and "Content-Length: 5000" in head
    assert head.endswith("\n\n")
    after = settle(ewyk)
    assert after["fibers_cancelled_count"] == before["fibers_cancelled_count"]
    assert after["fiber_timeouts_count"] - before["fiber_timeouts_count"] == 5
    out = ewyk.ns_python(f"""
import socket, sys
c = socket.create_connection(("{APP_IP}", 80), timeout=10)
c.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
          b"GET /bytes?n=200000&chunked=1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
          b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
got = b""
while True:
    d = c.recv(65536)
    if not d:
        break
    got += d
sys.stdout.write(got.hex())
""")
    raw = bytes.fromhex(out)
    first = raw.index(b"hello from ewyk")
    last = raw.rindex(b"hello from ewyk")
    middle = raw[first:last]
    assert b"Transfer-Encoding: chunked" in middle
    body = middle[middle.index(b"\r\n\r\n", middle.index(b"chunked")) + 4:]
    data = b""
    while True:
        size, _, rest = body.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        data += rest[:n]
        body = rest[n + 2:]
    assert data == pattern(200000)


@pytest.mark.parametrize("mode", ["length", "chunked", "h2"])
def test_read_body_is_byte_exact(ewyk, upload_file, mode):
    path, data = upload_file
    want = f"bytes {len(data)} fnv1a64 {fnv1a64(data):016x}"
    args = ["-X", "POST", "--data-binary", f"@{path}"]
    if mode == "chunked":
        args += ["-H", "Transfer-Encoding: chunked"]
    before = strategy(ewyk)
    if mode == "h2":
        out = path + ".answer"
        r = ewyk.h2_upload("/upload?chunk=5000", path, out=out)
        assert r.returncode == 0, r.stderr
        assert open(out).read().strip() == want
    else:
        r = curl(ewyk, *args, ewyk.url("/upload?chunk=5000"))
        assert r.stdout.strip() == want, r.stdout
    after = settle(ewyk)
    assert after["fibers_started_count"] - before["fibers_started_count"] == 1


def test_empty_body_reads_end_at_once(ewyk):
    r = curl(ewyk, "-X", "POST", ewyk.url("/upload"))
    assert r.stdout.strip() == "bytes 0 fnv1a64 cbf29ce484222325"


SLOW_SENDER = """
import socket, time
c = socket.socket()
c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
c.connect(("{ip}", 80))
c.sendall(b"POST /upload?ms=100&chunk=8192 HTTP/1.1\\r\\nHost: x\\r\\n"
          b"Content-Length: 8388608\\r\\n\\r\\n")
c.setblocking(False)
sent, block = 0, b"x" * 65536
t0 = time.monotonic()
while time.monotonic() - t0 < 1.5:
    try:
        sent += c.send(block)
    except BlockingIOError:
        time.sleep(0.01)
print(sent)
c.close()
"""


def test_slow_reader_holds_the_client_back_and_its_leaving_cancels(ewyk):
    """The handler takes 8 KiB every 100 ms: in 1.5 s the client gets only
    what ewykd's window and its own small send buffer hold, not its 8 MiB.
    Then it leaves: the fiber parked in its read (or nap) is cancelled."""
    before = strategy(ewyk)
    sent = int(ewyk.ns_python(SLOW_SENDER.format(ip=APP_IP), timeout=30))
    after = settle(ewyk)
    print(f"\n  client sent {sent} bytes in 1.5 s to a reader of ~80 KB/s")
    assert 0 < sent < 1 << 20, sent
    assert after["fibers_in_use_count"] == 0
    assert after["fibers_cancelled_count"] - before["fibers_cancelled_count"] >= 1


NON_READER = """
import socket, time
c = socket.socket()
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
c.connect(("{ip}", 80))
c.sendall(b"GET /bytes?n=67108864 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
time.sleep(1.5)
c.close()
"""


def test_slow_client_holds_the_writer_back_and_its_leaving_cancels(ewyk):
    """A client that reads nothing: the writing fiber stays parked with
    little of its 64 MiB out; its close cancels the write."""
    s0 = ewyk.stats()
    before = strategy(ewyk)
    proc = ewyk.ns_popen_python(NON_READER.format(ip=APP_IP))
    time.sleep(1.0)
    mid = strategy(ewyk)
    out = ewyk.stats()["body_out_bytes"] - s0["body_out_bytes"]
    proc.wait(timeout=10)
    after = settle(ewyk)
    print(f"\n  {out} bytes out to a client reading nothing")
    assert mid["fibers_waiting_count"] >= 1, mid
    assert out < 2 << 20, out
    assert after["fibers_in_use_count"] == 0
    assert after["fibers_cancelled_count"] - before["fibers_cancelled_count"] == 1


SLOW_TAKER = """
import socket, time
n = {n}
c = socket.socket()
c.connect(("{ip}", 80))
c.sendall(b"GET /bytes?n=%d&chunk=%d&chunked=0&wait_ms={wait_ms} HTTP/1.1\\r\\n"
          b"Host: x\\r\\nConnection: close\\r\\n\\r\\n" % (n, n))
got = b""
# About 200 KB/s: the one write of n bytes lasts seconds, but the client
# takes some of it far more often than every {wait_ms} ms.
try:
    while True:
        b = c.recv(16384)
        if not b:
            break
        got += b
        time.sleep(0.08)
except OSError as e:
    print("error", e)
head, _, body = got.partition(b"\\r\\n\\r\\n")
print(len(body), body == bytes(i % 251 for i in range(len(body))))
"""


def test_a_write_the_client_keeps_taking_does_not_time_out(ewyk):
    """A write's timeout is the time the client takes nothing of it: a
    slow client that keeps taking bytes gets the whole answer though its
    1 MiB write lasts longer than the timeout; one that takes nothing has
    its write timed out and the body cut."""
    n = 1 << 20
    before = strategy(ewyk)
    out = ewyk.ns_python(SLOW_TAKER.format(ip=APP_IP, n=n, wait_ms=1500),
                         timeout=60).split()
    after = settle(ewyk)
    assert after["fiber_timeouts_count"] == before["fiber_timeouts_count"]
    assert out == [str(n), "True"], out
    # Nothing taken: the write times out after its 1 s, the body is cut.
    before = after
    proc = ewyk.ns_popen_python(NON_READER.format(ip=APP_IP).replace(
        "n=67108864", "n=67108864&wait_ms=1000").replace(
        "time.sleep(1.5)", "time.sleep(3)"))
    proc.wait(timeout=15)
    after = settle(ewyk)
    assert after["fiber_timeouts_count"] - before["fiber_timeouts_count"] == 1
    assert after["fibers_cancelled_count"] == before["fibers_cancelled_count"]
    assert after["fibers_in_use_count"] == 0


H2_WINDOW_SHUT = """
import socket, time
import h2.config, h2.connection, h2.events, h2.settings
c = socket.create_connection(("{ip}", 80), timeout=10)
h = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
h.initiate_connection()
# A 50000-byte window: after three 16 KiB frames 848 bytes of it are left,
# and the answer's last 1000 bytes are read whole (the writer woken) but
# 152 of them wait for the client's WINDOW_UPDATE, sent while the handler
# naps after its write.
h.update_settings({{h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 50000}})
h.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":authority", "x"),
                   (":path", "/bytes?n=50152&chunk=50152&chunked=0&ms=2000")],
               end_stream=True)
c.sendall(h.data_to_send())
got, ended, acked = 0, False, False
deadline = time.monotonic() + 10
while not ended and time.monotonic() < deadline:
    if got == 50000 and not acked:
        time.sleep(0.5)
        h.acknowledge_received_data(got, 1)
        c.sendall(h.data_to_send())
        acked = True
    data = c.recv(65536)
    if not data:
        break
    for e in h.receive_data(data):
        if isinstance(e, h2.events.DataReceived):
            got += len(e.data)
        elif isinstance(e, h2.events.StreamEnded):
            ended = True
        elif isinstance(e, h2.events.StreamReset):
            print("reset")
    c.sendall(h.data_to_send())
print(got, ended, acked)
c.close()
"""


H2_STALLED_READER = """
import socket, time
import h2.config, h2.connection, h2.events
c = socket.create_connection(("{ip}", 80), timeout=10)
c.settimeout(0.1)
h = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
h.initiate_connection()
c.sendall(h.data_to_send())


def post(sid, path):
    h.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":authority", "x"),
                         (":path", path)])


# Stream 1's reader takes a byte every 5 s; it is sent all its window
# lets it, first. Stream 3 is an upload read as it comes.
post(1, "/upload?chunk=1&ms=5000")
post(3, "/upload")
size = {{1: 1 << 20, 3: 300000}}
sent = {{1: 0, 3: 0}}
answer, ended, closed3 = b"", False, False
deadline = time.monotonic() + 8
while not ended and time.monotonic() < deadline:
    for sid in (1, 3):
        n = min(size[sid] - sent[sid], h.local_flow_control_window(sid))
        while n > 0:
            k = min(n, h.max_outbound_frame_size)
            h.send_data(sid, bytes(k))
            sent[sid] += k
            n -= k
        if sid == 3 and sent[3] == size[3] and not closed3:
            h.end_stream(3)
            closed3 = True
    c.sendall(h.data_to_send())
    try:
        data = c.recv(65536)
    except socket.timeout:
        continue
    if not data:
        break
    for e in h.receive_data(data):
        if isinstance(e, h2.events.DataReceived) and e.stream_id == 3:
            answer += e.data
            h.acknowledge_received_data(e.flow_controlled_length, 3)
        elif isinstance(e, h2.events.StreamEnded) and e.stream_id == 3:
            ended = True
    c.sendall(h.data_to_send())
print(sent[1], sent[3], ended, answer.decode().strip())
c.close()
"""


def test_h2_stalled_reader_does_not_hold_back_other_uploads(ewyk):
    """Two uploads on one HTTP/2 connection: the first's reader stops with
    its stream's window (256 KiB) unread; the second, 300 KB, still goes
    through, the connection's window (1 MiB) having room for both. With
    the protocol's 65535-byte connection window the first stream alone
    took all of it and the second never got a byte out."""
    before = strategy(ewyk)
    out = ewyk.ns_python(H2_STALLED_READER.format(ip=APP_IP), timeout=30).split()
    sent1, sent3, ended = int(out[0]), int(out[1]), out[2]
    print(f"\n  stalled stream took {sent1} bytes; the other sent {sent3}: {out[3:]}")
    assert ended == "True", out
    assert sent3 == 300000
    assert " ".join(out[3:5]) == f"bytes {sent3}", out
    assert 0 < sent1 <= 256 * 1024
    after = settle(ewyk)
    assert after["fibers_in_use_count"] == 0
    assert after["fibers_cancelled_count"] - before["fibers_cancelled_count"] >= 1


def test_h2_answer_ended_after_its_handler_moved_on_cancels_nothing(ewyk):
    """An HTTP/2 answer of known length written whole, whose last bytes
    wait for the client's window while the handler naps: the answer let
    go then is no client gone, and the nap is not cancelled."""
    before = strategy(ewyk)
    out = ewyk.ns_python(H2_WINDOW_SHUT.format(ip=APP_IP), timeout=30).split()
    after = settle(ewyk)
    assert out == ["50152", "True", "True"], out
    assert after["fibers_cancelled_count"] == before["fibers_cancelled_count"]
    assert after["fiber_timeouts_count"] - before["fiber_timeouts_count"] == 1
    assert after["fibers_in_use_count"] == 0


def test_h2_stream_reset_mid_write_cancels_the_writer(ewyk):
    before = strategy(ewyk)
    r = ewyk.ns(["curl", "-sS", "--http2-prior-knowledge", "--limit-rate", "100k",
                 "--max-time", "1", "-o", "/dev/null",
                 ewyk.url("/bytes?n=67108864")], check=False, timeout=30)
    assert r.returncode == 28, r.stderr  # curl's timeout: it left mid-body
    after = settle(ewyk)
    assert after["fibers_in_use_count"] == 0
    assert after["fibers_cancelled_count"] - before["fibers_cancelled_count"] == 1
    # The appliance still serves, on the same medium.
    assert curl_bytes(ewyk, ewyk.url("/bytes?n=1000")) == pattern(1000)


def test_bad_parameters_and_methods(ewyk):
    r = curl(ewyk, "-o", "/dev/null", "-w", "%{http_code}", ewyk.url("/bytes?n=x"))
    assert r.stdout == "400"
    r = curl(ewyk, "-o", "/dev/null", "-w", "%{http_code}", ewyk.url("/upload"))
    assert r.stdout == "405"
