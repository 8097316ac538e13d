# SPDX-License-Identifier: BSD-3-Clause
"""The foundation's acceptance: ping, static files over ewyk's own TCP,
keep-alive, many connections, telemetry and mbufs back to idle; on every
medium the tests use (net_tap, net_af_xdp, net_memif)."""
import hashlib
import os
import re

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, IFACE, MEDIA, Appliance


@pytest.fixture(scope="module", params=MEDIA)
def appliance(request, www):
    yield from serve_module(Appliance(www=www["dir"], medium=request.param))


def test_ping_is_answered(appliance):
    r = appliance.ns(["ping", "-c", "3", "-i", "0.2", "-W", "1", APP_IP])
    assert "3 received" in r.stdout
    assert appliance.stats()["icmp_echo_pkts"] >= 3


def test_download_1mb_byte_exact(appliance, www, tmp_path):
    """Byte-exact on every medium; on net_tap, which offers TSO, in frames
    of many segments that the device cuts (the others offer none), through
    a kernel queue as deep as a receive buffer."""
    out = tmp_path / "big.bin"
    before = appliance.telemetry("/ewyk/tcp")
    r = appliance.ns(["curl", "-sS", "-m", "30", "-o", str(out), "-w", "%{http_code}",
                      appliance.url("/big.bin")])
    assert r.stdout == "200"
    assert out.stat().st_size == www["big_size"]
    assert hashlib.sha256(out.read_bytes()).hexdigest() == www["big_sha256"]
    after = appliance.telemetry("/ewyk/tcp")
    frames = after["tso_frames_count"] - before["tso_frames_count"]
    segs = after["segs_out_count"] - before["segs_out_count"]
    tso = appliance.telemetry("/ewyk/ports")["port_0"]["tso"]
    if appliance.medium == "tap":
        assert tso == "offload" and frames > 0 and segs > 5 * frames, (frames, segs)
        # The tap's kernel side queues what ewykd has not read yet:
        # deepened from 1,000 frames to a whole receive buffer (6 MiB) of
        # full segments, so that a window's burst is not dropped there.
        r = appliance.ns(["ip", "-o", "link", "show", IFACE])
        qlen = int(re.search(r"qlen (\d+)", r.stdout).group(1))
        assert qlen == -(-6 * 1024 * 1024 // 1448), r.stdout
    else:
        assert tso == "off" and frames == 0


def test_head_has_headers_and_no_body(appliance, www):
    # Raw socket: the byte count after the head must be zero, which curl
    # would hide.
    out = appliance.ns_python(f"""
import socket
s = socket.create_connection(("{APP_IP}", 80), timeout=5)
s.sendall(b"HEAD /big.bin HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
data = b""
while b"\\r\\n\\r\\n" not in data:
    data += s.recv(4096)
head, rest = data.split(b"\\r\\n\\r\\n", 1)
s.settimeout(0.5)
try:
    rest += s.recv(4096)
except socket.timeout:
    pass
# the connection stays usable after HEAD
s.settimeout(5)
s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
nxt = b""
while not nxt.endswith(b"hello from ewyk\\n"):
    chunk = s.recv(4096)
    if not chunk:
        break
    nxt += chunk
print(head.decode())
print("EXTRA", len(rest))
print("NEXT", nxt.split(b"\\r\\n")[0].decode(), nxt.endswith(b"hello from ewyk\\n"))
""")
    assert out.startswith("HTTP/1.1 200 OK")
    assert re.search(rf"(?mi)^Content-Length: {www['big_size']}\r?$", out)
    assert re.search(r"(?mi)^Content-Type: application/octet-stream", out)
    assert re.search(r'(?mi)^ETag: "[0-9a-f]{16}"', out)
    assert re.search(r"(?mi)^Date: ", out)
    assert "EXTRA 0" in out
    assert "NEXT HTTP/1.1 200 OK True" in out


def test_unknown_path_is_404(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                      appliance.url("/no/such/file")])
    assert r.stdout == "404"


def test_directory_maps_to_index(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "5", appliance.url("/sub/")])
    assert r.stdout == "sub index\n"


def test_path_traversal_is_refused(appliance):
    for path in ["/../etc/passwd", "/sub/../../etc/passwd", "/%2e%2e/etc/passwd",
                 "/sub/%2E%2E/%2E%2E/etc/passwd", "/%2fetc/passwd"]:
        r = appliance.ns(["curl", "-sS", "--path-as-is", "-m", "5", "-o", "/dev/null",
                          "-w", "%{http_code}", appliance.url(path)])
        assert r.stdout == "404", path


def test_post_is_405_with_allow(appliance):
    r = appliance.ns(["curl", "-sS", "-m", "5", "-D", "-", "-o", "/dev/null",
                      "-d", "x=1", appliance.url("/hello.txt")])
    assert r.stdout.startswith("HTTP/1.1 405")
    assert re.search(r"(?mi)^Allow: GET, HEAD", r.stdout)


def test_50_requests_on_one_keepalive_connection(appliance):
    urls = []
    for _ in range(50):
        urls += ["-o", "/dev/null", appliance.url("/hello.txt")]
    r = appliance.ns(["curl", "-sS", "-m", "30",
                      "-w", "%{http_code} %{num_connects}\\n", *urls])
    lines = r.stdout.split()
    codes, connects = lines[0::2], [int(x) for x in lines[1::2]]
    assert codes == ["200"] * 50
    assert sum(connects) == 1, "curl opened more than one connection"


def test_200_sequential_connections(appliance):
    before = appliance.stats()["total_conns"]
    out = appliance.ns_python(f"""
import socket
ok = 0
for i in range(200):
    s = socket.create_connection(("{APP_IP}", 80), timeout=5)
    s.sendall(b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    if data.startswith(b"HTTP/1.1 200 OK") and data.endswith(b"hello from ewyk\\n"):
        ok += 1
print(ok)
""")
    assert out.strip() == "200"
    assert appliance.stats()["total_conns"] - before >= 200


def test_telemetry_info_and_stats(appliance):
    t = appliance.telemetry("/ewyk/info", "/ewyk/stats")
    info, stats = t["/ewyk/info"], t["/ewyk/stats"]
    assert info["ip"] == "198.18.0.2/24"
    assert info["shards"] == 1 and len(info["shard_lcores"]) == 1
    assert info["www"]["files"] == 4
    for key in ["rx_pkts", "tx_pkts", "drop_pkts", "open_conns", "total_conns",
                "requests_reqs", "mbufs_in_use_mbufs"]:
        assert isinstance(stats[key], int), key
    assert stats["requests_by_status_reqs"]["200"] > 0
    assert stats["requests_by_status_reqs"]["404"] > 0
    for key in list(stats) + list(info):
        assert re.fullmatch(r"[A-Za-z0-9_]+", key), key


def test_mbufs_return_to_idle_after_traffic(appliance):
    idle = appliance.idle_baseline()
    baseline = idle["mbufs_in_use_mbufs"]
    r = appliance.ns(["h2load", "--h1", "-n", "400", "-c", "8", "-m", "1",
                      appliance.url("/big.bin"), appliance.url("/hello.txt")], timeout=120)
    assert "400 succeeded" in r.stdout, r.stdout
    after = appliance.wait_idle(baseline, timeout=15)
    assert after["requests_reqs"] > idle["requests_reqs"]


def test_single_range_requests(appliance, www, tmp_path):
    data = (open(www["dir"] + "/big.bin", "rb")).read()
    size = len(data)
    cases = [("bytes=0-99", 206, data[0:100], f"bytes 0-99/{size}"),
             ("bytes=1000-", 206, data[1000:], f"bytes 1000-{size - 1}/{size}"),
             ("bytes=-100", 206, data[-100:], f"bytes {size - 100}-{size - 1}/{size}"),
             (f"bytes={size - 10}-{size + 50}", 206, data[-10:],
              f"bytes {size - 10}-{size - 1}/{size}"),
             (f"bytes={size}-", 416, None, f"bytes */{size}"),
             ("bytes=5-1", 200, data, None),          # invalid: ignored
             ("bytes=0-1,5-6", 200, data, None),      # several: ignored
             ("items=0-1", 200, data, None)]
    for rng, status, body, content_range in cases:
        out = tmp_path / "part.bin"
        r = appliance.ns(["curl", "-sS", "-m", "10", "-H", f"Range: {rng}", "-D", "-",
                          "-o", str(out), appliance.url("/big.bin")])
        assert r.stdout.startswith(f"HTTP/1.1 {status}"), (rng, r.stdout)
        if content_range:
            assert re.search(rf"(?mi)^Content-Range: {re.escape(content_range)}\r?$",
                             r.stdout), (rng, r.stdout)
        if body is not None:
            assert out.read_bytes() == body, rng
    r = appliance.ns(["curl", "-sS", "-m", "5", "-I", appliance.url("/hello.txt")])
    assert re.search(r"(?mi)^Accept-Ranges: bytes", r.stdout)


def test_chunked_upload_comes_back_chunked(appliance, tmp_path):
    body = tmp_path / "up.bin"
    body.write_bytes(os.urandom(300 * 1000))
    out = tmp_path / "back.bin"
    r = appliance.ns(["curl", "-sS", "-m", "20", "-D", "-", "-o", str(out),
                      "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + str(body),
                      appliance.url("/echo")])
    assert r.stdout.startswith("HTTP/1.1 200"), r.stdout
    assert re.search(r"(?mi)^Transfer-Encoding: chunked", r.stdout)
    assert re.search(r"(?mi)^Server: ewyk/", r.stdout)
    assert out.read_bytes() == body.read_bytes()


@pytest.mark.parametrize("path", ["/echo", "/kv/continued"])
def test_expect_100_continue_before_the_body(appliance, path):
    # The client holds its body back until "100 Continue": for the
    # streamed /echo and for a handler that is given the body whole.
    out = appliance.ns_python(f"""
import socket
c = socket.create_connection(("{APP_IP}", 80), timeout=5)
c.sendall(b"PUT {path} HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 5\\r\\n"
          b"Expect: 100-continue\\r\\nConnection: close\\r\\n\\r\\n")
first = c.recv(100)
c.sendall(b"hello")
rest = b""
while True:
    d = c.recv(4096)
    if not d:
        break
    rest += d
print(first.decode().split("\\r\\n")[0])
print(rest.decode().split("\\r\\n")[0])
""")
    assert out.splitlines()[:2] == ["HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"], out
