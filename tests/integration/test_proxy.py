# SPDX-License-Identifier: BSD-3-Clause
"""The reverse proxy: /proxy/NAME/ over ewyk's own TCP to upstreams in the
client's namespace.

nginx and the broken upstreams come from upstream_servers.py.
Bodies are checked byte for byte (sha256) both ways, over HTTP/1.1 and
HTTP/2 (h2c with prior knowledge), also through 1 % random loss on the
bridge that carries both the client's and the upstream's traffic.

Every test runs twice: with the proxy's handler on fibers (the default),
and with --fibers 0, where dispatch runs the same fetch as events.
"""
import os
import subprocess
import time

import pytest

from ewyk_harness import APP_IP, EWYKD, HOST_IP, PYTHON, ROOT, Appliance, run
from tcp_loss_util import clear_loss, loss_drops, set_loss
from upstream_servers import MB, NGINX_PORT, sha256, upstream_args, upstreams_serving

# The buffers ewykd may hold for one proxied exchange, set below their
# defaults (6 MiB receive buffers, send buffers autotuned up to 4 MiB) so
# that what a slow peer lets it take has a bound under the 4 MiB bodies:
# its receive buffer of one side, its send queue to the other.
PROXY_RCV_BUF = 256 * 1024
PROXY_SND_BUF = 256 * 1024
HELD_BOUND = PROXY_RCV_BUF + PROXY_SND_BUF + 256 * 1024	# + the peers' sockets

# Long enough that "let go at once" (test_client_leaving_before_the_answer)
# is told apart from "timed out" even on a busy host.
ANSWER_TIMEOUT_MS = 3000


@pytest.fixture(scope="module", params=["fibers", "events"])
def proxy_env(request):
    """The appliance with its upstreams, nginx and the broken upstreams."""
    args = upstream_args("ng", "dies", "slow", "refused", "once", "sink") + [
        "--upstream", "ghost=198.18.0.77:80",	# nobody answers its ARP
        "--upstream-connect-timeout-ms", "500",
        "--upstream-timeout-ms", str(ANSWER_TIMEOUT_MS),
        "--rcv-buf", str(PROXY_RCV_BUF), "--snd-buf", str(PROXY_SND_BUF),
        "--snd-buf-max", str(PROXY_SND_BUF)]
    if request.param == "events":
        args += ["--fibers", "0"]
    a = Appliance(args=args, client_ns=True)
    try:
        a.start()
        with upstreams_serving(a, {"small.txt": 1000, "f1M.bin": MB,
                                   "f4M.bin": 4 * MB}) as (prefix, files):
            yield {"a": a, "prefix": prefix, "files": files, "mode": request.param}
    finally:
        a.close()


def curl(a, *args, timeout=60):
    return a.ns(["curl", "-sS", "--max-time", str(timeout - 5), *args], check=False,
                timeout=timeout)


def proto_args(proto):
    return ["--http2-prior-knowledge"] if proto == "h2" else ["--http1.1"]


def upload(a, proto, src, path):
    """A PUT of src; its status in stdout. Over HTTP/2 with python3-h2
    (h2_upload.py says why not curl)."""
    if proto == "h2":
        return a.h2_upload(path, src, method="PUT")
    return curl(a, "--http1.1", "-T", str(src), "-o", "/dev/null", "-w", "%{http_code}",
                a.url(path))


def upstreams(a):
    return a.telemetry("/ewyk/upstreams")


def get_sha(a, path, proto, out):
    r = curl(a, *proto_args(proto), "-o", str(out), "-w", "%{http_code}", a.url(path))
    assert r.returncode == 0, r.stderr
    return r.stdout.strip(), sha256(out.read_bytes())


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_get_1mb_byte_exact(proxy_env, tmp_path, proto):
    a, files = proxy_env["a"], proxy_env["files"]
    code, digest = get_sha(a, "/proxy/ng/f1M.bin", proto, tmp_path / "out")
    assert code == "200"
    assert digest == files["f1M.bin"]


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_put_1mb_then_get_back(proxy_env, tmp_path, proto):
    a, prefix = proxy_env["a"], proxy_env["prefix"]
    data = os.urandom(MB)
    src = tmp_path / "up.bin"
    src.write_bytes(data)
    name = f"dav/up-{proto}.bin"
    r = upload(a, proto, src, f"/proxy/ng/{name}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("201", "204")
    with open(os.path.join(prefix, "www", name), "rb") as f:
        assert sha256(f.read()) == sha256(data)	# what the upstream stored
    code, digest = get_sha(a, f"/proxy/ng/{name}", proto, tmp_path / "back")
    assert code == "200" and digest == sha256(data)


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_upload_8mb_streams_through(proxy_env, tmp_path, proto):
    """A body streams to the upstream as it comes, in either protocol: 8 MiB,
    far past what HTTP/2 once gathered whole (1 MiB), stored byte for
    byte."""
    a, prefix = proxy_env["a"], proxy_env["prefix"]
    data = os.urandom(8 * MB)
    src = tmp_path / "up8.bin"
    src.write_bytes(data)
    t0 = time.monotonic()
    r = upload(a, proto, src, f"/proxy/ng/dav/up8-{proto}.bin")
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    code = r.stdout.split()[0]
    assert code in ("201", "204"), r.stdout
    print(f"8 MiB upload through the proxy ({proto}, {proxy_env['mode']}): "
          f"{8 / took:.1f} MiB/s")
    with open(os.path.join(prefix, "www", "dav", f"up8-{proto}.bin"), "rb") as f:
        assert sha256(f.read()) == sha256(data)


H2_UPLOADS = """
import hashlib, os, socket
import h2.config, h2.connection, h2.events
N, SIZE = {n}, {size}
bodies = [os.urandom(SIZE) for _ in range(N)]
c = socket.create_connection(("{app}", 80), timeout=30)
h = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
h.initiate_connection()
ids = []
for i in range(N):
    sid = h.get_next_available_stream_id()
    # The last has no content-length: it goes to the upstream chunked.
    h.send_headers(sid, [(":method", "PUT"), (":scheme", "http"), (":authority", "x"),
                         (":path", "/proxy/ng/dav/multi-%d.bin" % i)] +
                   ([("content-length", str(SIZE))] if i < N - 1 else []))
    ids.append(sid)
sent, status, done = dict.fromkeys(ids, 0), {{}}, set()
while len(done) < N:
    # A frame of each stream in turn, as far as the windows let.
    moved = True
    while moved:
        moved = False
        for i, sid in enumerate(ids):
            n = min(SIZE - sent[sid], h.local_flow_control_window(sid),
                    h.max_outbound_frame_size)
            if n > 0 and sid not in done:
                h.send_data(sid, bodies[i][sent[sid]:sent[sid] + n],
                            end_stream=sent[sid] + n == SIZE)
                sent[sid] += n
                moved = True
    c.sendall(h.data_to_send())
    data = c.recv(65536)
    if not data:
        break
    for e in h.receive_data(data):
        if isinstance(e, h2.events.ResponseReceived):
            status[e.stream_id] = dict(e.headers)[b":status"].decode()
        elif isinstance(e, h2.events.DataReceived):
            h.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
        elif isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)):
            done.add(e.stream_id)
    c.sendall(h.data_to_send())
for i, sid in enumerate(ids):
    print(status.get(sid), sent[sid], hashlib.sha256(bodies[i]).hexdigest())
"""


def test_h2_concurrent_uploads_share_the_connection(proxy_env):
    """Four 1 MiB uploads at once on one HTTP/2 connection, their DATA
    interleaved frame by frame: each reaches the upstream byte for byte,
    the connection's window given back as each stream's reader takes. One
    without content-length goes to the upstream chunked."""
    a, prefix = proxy_env["a"], proxy_env["prefix"]
    out = a.ns_python(H2_UPLOADS.format(n=4, size=MB, app=APP_IP), timeout=90)
    lines = out.split("\n")[:4]
    assert len(lines) == 4, out
    for i, line in enumerate(lines):
        code, sent, digest = line.split()
        assert code in ("201", "204") and int(sent) == MB, out
        with open(os.path.join(prefix, "www", "dav", f"multi-{i}.bin"), "rb") as f:
            assert sha256(f.read()) == digest


def test_chunked_upload_and_query(proxy_env, tmp_path):
    """A body of unknown length goes chunked; the query goes along."""
    a, prefix = proxy_env["a"], proxy_env["prefix"]
    data = os.urandom(300000)
    src = tmp_path / "c.bin"
    src.write_bytes(data)
    r = curl(a, "--http1.1", "-H", "Transfer-Encoding: chunked", "-T", str(src),
             "-o", "/dev/null", "-w", "%{http_code}", a.url("/proxy/ng/dav/chunked.bin"))
    assert r.returncode == 0 and r.stdout.strip() in ("201", "204"), r.stderr
    with open(os.path.join(prefix, "www", "dav", "chunked.bin"), "rb") as f:
        assert f.read() == data
    r = curl(a, "-o", "/dev/null", "-w", "%{http_code}", a.url("/proxy/ng/small.txt?a=1"))
    assert r.stdout.strip() == "200"


def fibers_started(a):
    return a.telemetry("/ewyk/strategy")["shard_0"]["fibers_started_count"]


def test_keepalive_reuse_counted(proxy_env):
    a = proxy_env["a"]
    before = upstreams(a)["upstream_ng"]
    fibers = fibers_started(a)
    urls = ["-o", "/dev/null", a.url("/proxy/ng/small.txt")] * 8
    r = curl(a, "-w", "%{http_code}\n", *urls)
    assert r.stdout.split() == ["200"] * 8
    # On fibers, each request starts a fiber; as events, none does.
    assert fibers_started(a) - fibers == (8 if proxy_env["mode"] == "fibers" else 0)
    after = upstreams(a)["upstream_ng"]
    assert after["requests_reqs"] - before["requests_reqs"] == 8
    assert after["reused_reqs"] - before["reused_reqs"] >= 7
    assert after["opened_conns"] - before["opened_conns"] <= 1
    assert after["idle_conns"] >= 1
    assert after["p50_ns"] > 0


def test_stale_keepalive_retried_when_idempotent(proxy_env):
    """A pooled connection the upstream closes as the request arrives: a
    GET goes again on a fresh connection, a POST is answered 502."""
    a = proxy_env["a"]
    before = upstreams(a)["upstream_once"]
    r = curl(a, "-w", " %{http_code}\n", a.url("/proxy/once/1"), a.url("/proxy/once/2"))
    assert r.stdout.split("\n")[:2] == ["once 200", "once 200"], r.stdout
    mid = upstreams(a)["upstream_once"]
    assert mid["reused_reqs"] - before["reused_reqs"] == 1
    assert mid["retries_reqs"] - before["retries_reqs"] == 1
    # The retry's connection answered once and went back to the pool.
    r = curl(a, "-w", " %{http_code}", "-d", "x", a.url("/proxy/once/3"))
    assert r.stdout == "502 upstream reset\n 502", r.stdout
    after = upstreams(a)["upstream_once"]
    assert after["retries_reqs"] == mid["retries_reqs"]
    assert after["error_reset_reqs"] - mid["error_reset_reqs"] == 1


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_upstream_dying_mid_answer(proxy_env, tmp_path, how):
    """Half a body, then the upstream goes: the client's answer is cut (it
    cannot be taken for whole) and the next request is served."""
    a, files = proxy_env["a"], proxy_env["files"]
    before = upstreams(a)["upstream_dies"]
    for proto in ("h1", "h2"):
        out = tmp_path / f"cut-{proto}"
        r = curl(a, *proto_args(proto), "-o", str(out), a.url(f"/proxy/dies/{how}"))
        assert r.returncode != 0, "a cut answer was taken for whole"
        assert out.stat().st_size < 200000 if out.exists() else True
        code, digest = get_sha(a, "/proxy/ng/small.txt", proto, tmp_path / f"next-{proto}")
        assert code == "200" and digest == files["small.txt"]
    after = upstreams(a)["upstream_dies"]
    assert after["error_reset_reqs"] - before["error_reset_reqs"] == 2


def test_client_leaving_before_the_answer(proxy_env):
    """A client that gives up on a slow upstream: on fibers the parked
    fetch is cancelled and its fiber freed; either way ewykd serves on."""
    a = proxy_env["a"]
    st0 = a.telemetry("/ewyk/strategy")["shard_0"]
    t0 = time.monotonic()
    r = a.ns(["curl", "-sS", "--max-time", "0.5", a.url("/proxy/slow/x")], check=False)
    assert r.returncode == 28, r    # curl's timeout: no answer came
    deadline = time.time() + 5
    while True:
        st = a.telemetry("/ewyk/strategy")["shard_0"]
        if st["fibers_waiting_count"] == 0 and st["fibers_in_use_count"] == 0 and \
                (proxy_env["mode"] == "events" or
                 st["fibers_cancelled_count"] > st0["fibers_cancelled_count"]):
            break
        assert time.time() < deadline, st
        time.sleep(0.1)
    if proxy_env["mode"] == "fibers":
        assert st["fiber_parks_count"] > st0["fiber_parks_count"]
        # The fetch was let go at once, its connection with it: well
        # before the upstream's answer timeout would have ended it.
        assert time.monotonic() - t0 < ANSWER_TIMEOUT_MS / 1000
        assert upstreams(a)["upstream_slow"]["open_conns"] == 0, upstreams(a)
    r = curl(a, "-o", "/dev/null", "-w", "%{http_code}", a.url("/proxy/ng/small.txt"))
    assert r.stdout == "200"


def test_connect_refused_is_502(proxy_env):
    a = proxy_env["a"]
    for proto in ("h1", "h2"):
        r = curl(a, *proto_args(proto), "-w", "%{http_code}", a.url("/proxy/refused/x"))
        assert r.stdout.endswith("502"), r.stdout
        assert "connect_refused" in r.stdout
    assert upstreams(a)["upstream_refused"]["error_connect_refused_reqs"] == 2
    r = curl(a, "-o", "/dev/null", "-w", "%{http_code}", a.url("/proxy/nosuch/x"))
    assert r.stdout == "404"


def test_slow_upstream_is_504(proxy_env):
    a = proxy_env["a"]
    t0 = time.monotonic()
    r = curl(a, "-w", "%{http_code}", a.url("/proxy/slow/x"))
    dt = time.monotonic() - t0
    assert r.stdout.endswith("504"), r.stdout
    assert ANSWER_TIMEOUT_MS / 1000 * 0.9 <= dt < ANSWER_TIMEOUT_MS / 1000 + 5
    assert upstreams(a)["upstream_slow"]["error_answer_timeout_reqs"] >= 1


def test_connect_timeout_is_504(proxy_env):
    a = proxy_env["a"]
    t0 = time.monotonic()
    r = curl(a, "-w", " %{http_code}", a.url("/proxy/ghost/x"))
    dt = time.monotonic() - t0
    assert r.stdout == "504 upstream connect_timeout\n 504", r.stdout
    assert 0.45 <= dt < 5
    assert a.telemetry("/ewyk/tcp")["arp_requests_count"] >= 2	# asked again


def test_head_has_the_length_and_no_body(proxy_env):
    a = proxy_env["a"]
    for proto in ("h1", "h2"):
        r = curl(a, *proto_args(proto), "-I", a.url("/proxy/ng/f1M.bin"))
        assert r.returncode == 0, r.stderr
        lines = r.stdout.lower().splitlines()
        assert lines[0].split()[1] == "200"
        assert f"content-length: {MB}" in [x.strip() for x in lines]
    r = curl(a, "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
             a.url("/proxy/ng/small.txt"))	# still in step
    assert r.stdout == "200 1000", r.stdout


SLOW_CLIENT = """
import hashlib, socket, sys, time
c = socket.socket()
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
c.connect(("{app}", 80))
c.sendall(b"GET /proxy/ng/f4M.bin HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
print("sent", flush=True)
time.sleep(2.5)         # reads nothing meanwhile
data = b""
while True:
    d = c.recv(1 << 20)
    if not d:
        break
    data += d
body = data.split(b"\\r\\n\\r\\n", 1)[1]
print(len(body), hashlib.sha256(body).hexdigest(), flush=True)
"""


def upstream_acked(a):
    """bytes_acked of each of nginx's connections, by the peer's port."""
    ss = a.ns(["ss", "-tniH", "state", "established", "sport", "=", f":{NGINX_PORT}"]).stdout
    acked, peer = {}, None
    for w in ss.split():
        if w.startswith(f"{APP_IP}:"):
            peer = w
        elif w.startswith("bytes_acked:"):
            acked[peer] = int(w.split(":")[1])
    return acked


def test_slow_client_holds_the_upstream_back(proxy_env):
    """A client that stops reading: ewykd reads the upstream only as fast as
    the client drains, so what it takes from the upstream (bytes_acked of
    the upstream's socket, seen with ss) is bounded by its send queue to
    the client and the upstream connection's receive buffer (HELD_BOUND),
    however long the client waits."""
    a, files = proxy_env["a"], proxy_env["files"]
    before = upstream_acked(a)
    client = subprocess.Popen(["ip", "netns", "exec", a.client, "/usr/bin/python3", "-c",
                               SLOW_CLIENT.format(app=APP_IP)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert client.stdout.readline().strip() == "sent"
        time.sleep(1.5)
        during = upstream_acked(a)
        out, err = client.communicate(timeout=30)
        assert client.returncode == 0, err
        length, digest = out.split()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert int(length) == 4 * MB and digest == files["f4M.bin"]
    # What ewykd took from the upstream: what the client's small socket,
    # ewykd's send queue to it and the upstream connection's receive
    # buffer hold, not the 4 MiB.
    took = max(n - before.get(p, 0) for p, n in during.items())
    print(f"ewykd took {took} bytes of 4 MiB from the upstream while the client "
          f"did not read (bound {HELD_BOUND})")
    assert 0 < took < HELD_BOUND, (before, during)


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_slow_upstream_holds_the_client_back(proxy_env, tmp_path, proto):
    """An upstream that takes nothing for 1.5 s: ewykd reads the client's body
    no faster than the upstream takes it, so what it took from the client
    (bytes_acked of curl's socket) stays bounded by its receive buffer and
    its send queue to the upstream, HELD_BOUND (HTTP/2: by the windows,
    whose ceiling is that receive buffer, given back as the proxy reads,
    not the whole body gathered)."""
    a = proxy_env["a"]
    data = os.urandom(4 * MB)
    src = tmp_path / "up4.bin"
    src.write_bytes(data)
    # HTTP/2 with python3-h2, as every HTTP/2 upload of the suite (curl 7.88
    # sometimes sends a DATA frame past the Content-Length it announced).
    answer = tmp_path / "answer"
    if proto == "h2":
        cmd = [PYTHON, os.path.join(ROOT, "tests", "integration", "h2_upload.py"),
               a.url("/proxy/sink/x"), str(src), "--method", "PUT", "--out", str(answer)]
    else:
        cmd = ["curl", "-sS", *proto_args(proto), "--max-time", "30", "-T", str(src),
               "-o", str(answer), a.url("/proxy/sink/x")]
    client = subprocess.Popen(["ip", "netns", "exec", a.client, *cmd],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Once the client has sent its first bytes (its start-up takes its
        # time on a busy host), the proxy's buffers fill in milliseconds;
        # measured well within the upstream's 1.5 s of taking nothing.
        deadline = time.monotonic() + 10
        acked, ss = [], ""
        while not acked and time.monotonic() < deadline:
            time.sleep(0.05)
            ss = a.ns(["ss", "-tniH", "state", "established", "dport", "=", ":80"]).stdout
            acked = [int(w.split(":")[1]) for w in ss.split()
                     if w.startswith("bytes_acked:") and int(w.split(":")[1]) > 1]
        time.sleep(0.3)
        ss = a.ns(["ss", "-tniH", "state", "established", "dport", "=", ":80"]).stdout
        acked = [int(w.split(":")[1]) for w in ss.split() if w.startswith("bytes_acked:")]
        out, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert client.returncode == 0, err
    assert answer.read_text() == sha256(data)
    print(f"ewykd took {max(acked)} bytes of the client's 4 MiB ({proto}) while the "
          f"upstream took none (bound {HELD_BOUND})")
    assert len(acked) == 1 and 0 < acked[0] < HELD_BOUND, ss


def test_one_percent_loss_byte_exact(proxy_env, tmp_path):
    a, files = proxy_env["a"], proxy_env["files"]
    data = os.urandom(MB)
    src = tmp_path / "lossy.bin"
    src.write_bytes(data)
    set_loss(a, "both", 1)
    try:
        for proto in ("h1", "h2"):
            code, digest = get_sha(a, "/proxy/ng/f1M.bin", proto, tmp_path / f"l-{proto}")
            assert code == "200" and digest == files["f1M.bin"]
            r = upload(a, proto, src, f"/proxy/ng/dav/lossy-{proto}.bin")
            assert r.returncode == 0 and r.stdout.strip() in ("201", "204"), r.stderr
            code, digest = get_sha(a, f"/proxy/ng/dav/lossy-{proto}.bin", proto,
                                   tmp_path / f"lb-{proto}")
            assert code == "200" and digest == sha256(data)
        dropped = loss_drops(a)
    finally:
        clear_loss(a)
    assert dropped > 0


def test_two_shards_need_a_device_that_says_how_it_hashes():
    """Upstream answers must reach the shard that opened the connection.
    net_tap's queues are picked by the kernel's tun with a hash of its own
    (its RSS key and table say nothing true), so several shards with
    upstreams on it are refused at start, with a reason."""
    a = Appliance(lcores="0@0,1@1,2@1",
                  args=["--shards", "2", "--upstream", f"ng={HOST_IP}:{NGINX_PORT}"])
    try:
        with pytest.raises(RuntimeError):
            a.start(timeout=10)
        a.proc.wait(10)
        assert a.proc.returncode == 2
        assert "--upstream with 2 shards" in a.read_log()
        assert "use --shards 1" in a.read_log()
    finally:
        a.close()


@pytest.mark.parametrize("value, words", [
    ("ng", "NAME=ADDR:PORT"),
    ("=198.18.0.1:80", "NAME=ADDR:PORT"),
    ("n g=198.18.0.1:80", "letters, digits"),
    ("ng=198.18.0.300:80", "not an IPv4 address"),
    ("ng=198.18.0.1:0", "from 1 to 65535"),
    ("ng=198.18.0.1", "is not ADDR:PORT or [ADDR6]:PORT"),
    ("ng=10.0.0.1:80", "not on the link of --ip 198.18.0.2/24"),
])
def test_bad_upstream_is_one_line_and_status_2(value, words):
    r = run([EWYKD, "--", "--upstream", value], check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and "--upstream" in lines[0] and words in lines[0], r.stderr


def test_upstreams_from_the_config_file(tmp_path):
    """Repeated upstream keys are all read: the second of one name is the
    error, on its line."""
    f = tmp_path / "ewykd.conf"
    f.write_text("[ewykd]\nupstream = a=198.18.0.1:80\nupstream = b=198.18.0.1:81\n"
                 "upstream = a=198.18.0.1:82\n")
    r = run([EWYKD, "--config", str(f)], check=False)
    assert r.returncode == 2, r.stderr
    assert ":4: upstream: upstream 'a' given twice" in r.stderr, r.stderr
