# SPDX-License-Identifier: BSD-3-Clause
"""HTTP/3 against real peers: ngtcp2's client (gtlsclient, GnuTLS) fetches
static files over QUIC from ewykd's own UDP, byte-exact, over IPv4 and
IPv6, one at a time and many streams at once; request bodies up to
--max-body reach handlers whole; errors come as HTTP/3 answers; answers over TLS (curl, HTTP/1.1 and HTTP/2) offer HTTP/3 with
Alt-Svc exactly when --http3 is on; a version ewykd does not speak gets
Version Negotiation, and datagrams that are not QUIC are counted and
dropped while it keeps serving; --http3 without a certificate is refused
at start with one line."""
import base64
import hashlib
import json
import os
import re
import subprocess
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, APP_IP6, EWYKD, PYTHON, ROOT, Appliance, fnv1a64
from tls_certs import CA
from upstream_servers import MB, sha256, upstream_args, upstreams_serving

HELLO = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")

HOST = "ewyk.test"
QUIC_PORT = 8443


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca = CA(d)
    cert, key, _ = ca.issue("ec")
    return {"ca_path": ca.path, "cert": cert, "key": key}


@pytest.fixture(scope="module")
def access_log(tmp_path_factory):
    return tmp_path_factory.mktemp("log") / "access.log"


@pytest.fixture(scope="module")
def app(www, pki, access_log):
    yield from serve_module(Appliance(
        www=www["dir"], ip6=True,
        args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
              "--quic-port", str(QUIC_PORT), "--access-log", str(access_log),
              "--plugin", HELLO]))


def fetch(a, ip, paths, tmp_path, *args):
    """gtlsclient's fetch of paths: (the downloads' directory, its output
    with the answers' headers)."""
    out = tmp_path / "dl"
    out.mkdir(exist_ok=True)
    host = f"[{ip}]" if ":" in ip else ip
    r = a.ns(["gtlsclient", "--exit-on-all-streams-close", "--no-quic-dump",
              "--timeout=10s", "--download", str(out), *args, ip, str(QUIC_PORT),
              *[f"https://{host}:{QUIC_PORT}{p}" for p in paths]],
             check=False, timeout=60)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    return out, r.stdout + r.stderr


def statuses(text):
    return [int(s) for s in re.findall(r"\[:status: (\d{3})\]", text)]


def quic(a):
    return a.telemetry("/ewyk/quic")


@pytest.mark.parametrize("ip", [APP_IP, APP_IP6], ids=["ipv4", "ipv6"])
def test_files_byte_exact(app, www, tmp_path, ip):
    before = quic(app)
    out, text = fetch(app, ip, ["/hello.txt", "/big.bin"], tmp_path)
    assert (out / "hello.txt").read_text() == "hello from ewyk\n"
    big = (out / "big.bin").read_bytes()
    assert len(big) == www["big_size"]
    assert hashlib.sha256(big).hexdigest() == www["big_sha256"]
    assert statuses(text) == [200, 200], text[-2000:]
    after = quic(app)
    assert after["requests_reqs"] - before["requests_reqs"] == 2, after
    assert after["handshakes_count"] - before["handshakes_count"] == 1, after
    assert after["out_bytes"] - before["out_bytes"] > www["big_size"], after


def test_many_streams_at_once(app, www, tmp_path):
    """Fifty requests of the 1 MB file on one connection, half of its
    stream limit at once: all of them answered whole (gtlsclient writes
    each stream's body to the file of its path, and ends only once every
    stream has; -q, its dump of 50 MB of packets being slower than the
    transfer), and the connection closed cleanly."""
    before = quic(app)
    out, _ = fetch(app, APP_IP, ["/big.bin"], tmp_path, "--nstreams=50", "-q")
    assert hashlib.sha256((out / "big.bin").read_bytes()).hexdigest() == www["big_sha256"]
    after = quic(app)
    assert after["requests_reqs"] - before["requests_reqs"] == 50, after
    assert after["out_bytes"] - before["out_bytes"] > 50 * www["big_size"], after
    assert after["streams_reset_count"] == before["streams_reset_count"], after
    assert after["h3_errors_count"] == before["h3_errors_count"], after


def test_answers_carry_the_static_semantics(app, tmp_path):
    """The static route answers HTTP/3 as it does the other protocols: a
    missing file is 404, the file's validators are there."""
    _, text = fetch(app, APP_IP, ["/no/such/file", "/hello.txt"], tmp_path)
    assert sorted(statuses(text)) == [200, 404], text[-2000:]
    assert re.search(r"\[etag: \"[^\"]+\"\]", text), text[-2000:]
    assert re.search(r"\[content-type: text/plain", text), text[-2000:]
    assert "[server: ewyk/" in text and "[date: " in text, text[-2000:]


def test_handlers_of_every_kind(app, tmp_path):
    """The plugin's handlers answer over HTTP/3 as over the others: a
    copied body, a borrowed one, a fiber that waits (its answer comes back
    through the shard's completions), one that may block."""
    paths = ["/hello?name=h3", "/hello/big?kb=64", "/hello/nap?ms=20",
             "/hello/slow?ms=5"]
    out, text = fetch(app, APP_IP, paths, tmp_path)
    assert statuses(text) == [200] * 4, text[-3000:]
    # gtlsclient names each download after its target's last segment.
    assert (out / "big?kb=64").stat().st_size == 64 * 1024
    assert "hello, h3" in (out / "hello?name=h3").read_text()


def buffers_back(a, timeout=5):
    """/ewyk/http once no body buffer is out: a stream's goes back when
    the stream closes, once the client has its answer whole."""
    deadline = time.monotonic() + timeout
    h = a.telemetry("/ewyk/http")
    while h["body_buffers_busy"] != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        h = a.telemetry("/ewyk/http")
    return h


def post_inspect(a, tmp_path, body, n=1):
    """POST body to /hello/inspect on n streams of one connection: the
    answers' statuses and the last inspect page."""
    (tmp_path / "body").write_bytes(body)
    out, text = fetch(a, APP_IP, ["/hello/inspect"] * n, tmp_path,
                      f"--data={tmp_path / 'body'}", "--http-method=POST")
    page = out / "inspect"
    return statuses(text), text, page.read_text() if page.exists() else ""


@pytest.mark.parametrize("size", [3000, 10000, 1 << 20],
                         ids=["in-the-stream", "past-4k", "max-body"])
def test_body_reaches_a_plain_handler(app, tmp_path, size):
    """A body in the stream's own buffer (up to 4 KiB) or past it in one of
    the shard's body buffers, up to --max-body (1 MiB by default), reaches
    the handler whole and byte-exact; the buffer goes back after."""
    body = os.urandom(size)
    got, text, seen = post_inspect(app, tmp_path, body)
    assert got == [200], text[-2000:]
    assert "method POST" in seen and "version 3" in seen, seen
    assert f"body {size}\n" in seen and f"body fnv1a64 {fnv1a64(body):016x}" in seen, seen
    assert buffers_back(app)["body_buffers_busy"] == 0


def test_body_past_max_body_is_413(app, tmp_path):
    before = app.telemetry("/ewyk/http")
    got, text, _ = post_inspect(app, tmp_path, os.urandom((1 << 20) + 1))
    assert got == [413], text[-2000:]
    after = buffers_back(app)
    assert after["body_buffers_busy"] == 0, after
    assert after["body_buffers_taken_count"] == before["body_buffers_taken_count"] + 1


def test_bodies_beyond_the_buffers_are_503(www, pki, tmp_path):
    """With one body buffer, streams whose bodies arrive while it is out
    are answered 503; the buffer goes back and serves again."""
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
                         "--quic-port", str(QUIC_PORT), "--body-buffers", "1",
                         "--plugin", HELLO]) as a:
        got, text, _ = post_inspect(a, tmp_path, os.urandom(20000), n=4)
        assert 200 in got and 503 in got and set(got) <= {200, 503}, text[-3000:]
        h = buffers_back(a)
        assert h["body_buffers_busy"] == 0 and h["body_buffers_short_count"] >= 1, h
        body = os.urandom(20000)
        got, text, seen = post_inspect(a, tmp_path, body)
        assert got == [200] and f"body fnv1a64 {fnv1a64(body):016x}" in seen, text[-2000:]


def test_streamed_answers_come_whole(app, tmp_path):
    """A source's answer of unknown length goes out piece by piece as the
    client acknowledges it: 5 lines, and 200,000 lines (1.3 MB, far past
    what a stream holds unacknowledged), on two streams at once; every
    source is told done."""
    out, text = fetch(app, APP_IP, ["/hello/count?n=5", "/hello/count?n=200000"],
                      tmp_path)
    assert statuses(text) == [200, 200], text[-2000:]
    assert (out / "count?n=5").read_text() == "1\n2\n3\n4\n5\n"
    want = "".join(f"{i}\n" for i in range(1, 200001))
    assert (out / "count?n=200000").read_text() == want
    deadline = time.monotonic() + 5
    while True:
        out, _ = fetch(app, APP_IP, ["/hello/stats"], tmp_path)
        lent, returned = re.match(r"lent (\d+) returned (\d+)",
                                  (out / "stats").read_text()).groups()
        if lent == returned or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert lent == returned, (lent, returned)


@pytest.mark.parametrize("size", [10, 3 << 20], ids=["small", "3mb"])
def test_bodies_read_as_they_come(app, tmp_path, size):
    """A route that reads its body as it comes gets it over HTTP/3 while
    the client still sends it: /hello/shout writes each piece back in
    capitals as it reads it. 3 MB is many times the stream's window, which
    opens only as the handler reads. The client sends the body on its
    second stream too, to a static file, which gathers it whole before it
    answers: 405 (a file takes no POST), or 413 past --max-body."""
    body = bytes(b % 26 + 97 for b in os.urandom(size))
    (tmp_path / "body").write_bytes(body)
    before = quic(app)
    out, text = fetch(app, APP_IP, ["/hello/shout", "/hello.txt"], tmp_path,
                      f"--data={tmp_path / 'body'}", "--http-method=POST")
    got = statuses(text)
    assert sorted(got) == [200, 405 if size < 1 << 20 else 413], text[-2000:]
    assert (out / "shout").read_bytes() == body.upper()
    assert quic(app)["streams_reset_count"] == before["streams_reset_count"]


def test_proxied_upload_and_download(www, pki, tmp_path):
    """The proxy over HTTP/3: a 4 MiB PUT streams to nginx as it comes
    (stored byte for byte), then comes back with a GET; a PUT nginx
    refuses before its end has the rest refused."""
    a = Appliance(www=www["dir"], client_ns=True,
                  args=["--tls-cert", pki["cert"], "--tls-key", pki["key"],
                        "--http3", "--quic-port", str(QUIC_PORT),
                        *upstream_args("ng")])
    try:
        a.start()
        with upstreams_serving(a, {"small.txt": 1000}) as (prefix, _):
            data = os.urandom(4 * MB)
            (tmp_path / "body").write_bytes(data)
            _, text = fetch(a, APP_IP, ["/proxy/ng/dav/up-h3.bin"], tmp_path,
                            f"--data={tmp_path / 'body'}", "--http-method=PUT")
            assert statuses(text) in ([201], [204]), text[-2000:]
            with open(os.path.join(prefix, "www", "dav", "up-h3.bin"), "rb") as f:
                assert sha256(f.read()) == sha256(data)
            out, text = fetch(a, APP_IP, ["/proxy/ng/dav/up-h3.bin"], tmp_path)
            assert statuses(text) == [200], text[-2000:]
            assert sha256((out / "up-h3.bin").read_bytes()) == sha256(data)
            # Past nginx's client_max_body_size (16 MiB) its 413 comes
            # before the body's end: the rest is refused with STOP_SENDING
            # and the connection serves on.
            (tmp_path / "body").write_bytes(os.urandom(20 * MB))
            before = quic(a)
            _, text = fetch(a, APP_IP, ["/proxy/ng/dav/big-h3.bin", "/hello.txt"],
                            tmp_path, f"--data={tmp_path / 'body'}",
                            "--http-method=PUT")
            assert 413 in statuses(text), text[-2000:]
            assert re.search(r"frm rx .*STOP_SENDING", text), text[-3000:]
            after = quic(a)
            assert after["h3_errors_count"] == before["h3_errors_count"], after
    finally:
        a.close()


def test_connections_memory_is_counted_and_given_back(app, tmp_path):
    """ngtcp2's and nghttp3's memory is counted per connection: held while
    one is open, all of it back once none is (nothing leaked)."""
    fetch(app, APP_IP, ["/hello.txt", "/index.html"], tmp_path)
    deadline = time.monotonic() + 15	# closing connections drain first
    q = quic(app)
    while (q["open_conns"] != 0 or q["mem_bytes"] != 0) and time.monotonic() < deadline:
        time.sleep(0.1)
        q = quic(app)
    assert q["open_conns"] == 0 and q["mem_bytes"] == 0, q
    assert q["mem_refused_count"] == 0, q


def test_a_connection_past_its_memory_bound_is_closed(www, pki, tmp_path):
    """--quic-conn-mem bounds what one connection may hold: with 64 KiB a
    handshake does not fit, its allocation is refused and counted, the
    connection closed, and ewykd serves on (its telemetry answers, its
    memory is all given back)."""
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
                         "--quic-port", str(QUIC_PORT), "--quic-conn-mem", "65536"]) as a:
        out = tmp_path / "dl"
        out.mkdir()
        r = a.ns(["gtlsclient", "--exit-on-all-streams-close", "--no-quic-dump",
                  "--timeout=3s", "--download", str(out), APP_IP, str(QUIC_PORT),
                  f"https://{APP_IP}:{QUIC_PORT}/hello.txt"], check=False, timeout=30)
        assert not (out / "hello.txt").exists(), r.stdout[-1000:]
        deadline = time.monotonic() + 15
        q = quic(a)
        while (q["open_conns"] != 0 or q["mem_bytes"] != 0) and time.monotonic() < deadline:
            time.sleep(0.1)
            q = quic(a)
        assert q["mem_refused_count"] >= 1 and q["mem_bytes"] == 0, q
        assert q["open_conns"] == 0, q


def test_reload_after_files_over_http3(www, pki, tmp_path):
    """A static file's answer borrows the tree until its stream closes;
    then the lend goes back, so a reload's old tree is freed and the next
    reload is taken (a lend never given back kept the old tree forever
    and refused every reload after)."""
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
                         "--quic-port", str(QUIC_PORT)]) as a:
        def www_info():
            return a.telemetry("/ewyk/info")["www"]

        def wait(what):
            deadline = time.monotonic() + 10
            while not what():
                assert time.monotonic() < deadline, www_info()
                time.sleep(0.05)

        for round_ in range(2):
            _, text = fetch(a, APP_IP, ["/hello.txt", "/index.html"], tmp_path)
            assert statuses(text) == [200, 200], text[-2000:]
            n = www_info()["reloads_count"]
            assert a.telemetry("/ewyk/reload") == {"reload": "asked"}
            wait(lambda: www_info()["reloads_count"] == n + 1)
            wait(lambda: www_info()["retiring"] == 0)
        assert www_info()["reload_failures_count"] == 0, www_info()


def test_access_log_says_http3(app, tmp_path, access_log):
    fetch(app, APP_IP, ["/hello.txt?log-me"], tmp_path)
    deadline = time.monotonic() + 10	# the log's writer runs behind
    while True:
        lines = [ln for ln in access_log.read_text().splitlines()
                 if "/hello.txt?log-me" in ln]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(lines) == 1 and '"GET /hello.txt?log-me HTTP/3" 200' in lines[0], lines


def curl(a, pki, *args):
    return a.ns(["curl", "-sS", "-o", "/dev/null", "-D", "-", "--max-time", "10",
                 "--cacert", pki["ca_path"], "--resolve", f"{HOST}:443:{APP_IP}",
                 *args, f"https://{HOST}/hello.txt"], check=False, timeout=30)


@pytest.mark.parametrize("proto", ["--http1.1", "--http2"])
def test_tls_answers_offer_http3(app, pki, proto):
    r = curl(app, pki, proto)
    assert r.returncode == 0, r.stderr
    assert re.search(rf'^alt-svc: h3=":{QUIC_PORT}"\r?$', r.stdout, re.I | re.M), r.stdout


def test_cleartext_answers_do_not_offer_http3(app):
    r = app.ns(["curl", "-sS", "-o", "/dev/null", "-D", "-", "--max-time", "10",
                app.url("/hello.txt")], timeout=30)
    assert "200" in r.stdout.splitlines()[0] and "alt-svc" not in r.stdout.lower(), r.stdout


def test_without_http3_tls_offers_nothing(www, pki):
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"]]) as a:
        r = curl(a, pki, "--http2")
        assert r.returncode == 0 and "alt-svc" not in r.stdout.lower(), r.stdout
        assert a.telemetry("/ewyk/quic")["enabled"] == 0


# A long-header Initial of version 0x1a2a3a4a (reserved for negotiation
# tests, RFC 9000 15), padded to 1200 bytes; prints what came back.
UNKNOWN_VERSION = """
import json, socket, sys
af = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(af, socket.SOCK_DGRAM)
s.settimeout(2)
dcid, scid = bytes(range(1, 9)), bytes(range(11, 19))
pkt = bytes([0xc0]) + (0x1a2a3a4a).to_bytes(4, "big") + bytes([8]) + dcid + bytes([8]) + scid
# Sent again when no answer came: the first may wait on neighbour
# discovery of a busy host.
for sends in range(1, 4):
    s.sendto(pkt + bytes(1200 - len(pkt)), (sys.argv[1], int(sys.argv[2])))
    try:
        got = s.recv(2000)
        break
    except socket.timeout:
        got = None
if got is None:
    print(json.dumps(None)); sys.exit()
n = got[5]
print(json.dumps({"sends": sends, "long": got[0] >> 7, "version": int.from_bytes(got[1:5], "big"),
                  "dcid": got[6:6 + n].hex(), "scid": got[7 + n:7 + n + got[6 + n]].hex(),
                  "versions": [int.from_bytes(got[i:i + 4], "big")
                               for i in range(7 + n + got[6 + n], len(got), 4)]}))
"""

# Datagrams that are not QUIC a client would send: empty (ngtcp2 asserts on
# one: fuzz_quic found it), random, a short header for no connection, a
# truncated long header, coalesced garbage.
HOSTILE = """
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
dst = (sys.argv[1], int(sys.argv[2]))
s.sendto(b"", dst)
for i in range(200):
    s.sendto(os.urandom(1 + i * 7 % 1300), dst)
s.sendto(bytes([0x40]) + os.urandom(40), dst)
s.sendto(bytes([0xc0, 0, 0, 0, 1, 20]) + os.urandom(3), dst)
s.sendto(bytes([0xc0, 0, 0, 0, 1, 8]) + os.urandom(8) + bytes([8]) + os.urandom(8) + os.urandom(1300), dst)
"""


@pytest.mark.parametrize("ip", [APP_IP, APP_IP6], ids=["ipv4", "ipv6"])
def test_unknown_version_gets_version_negotiation(app, ip):
    before = quic(app)
    r = app.ns([PYTHON, "-c", UNKNOWN_VERSION, ip, str(QUIC_PORT)])
    got = json.loads(r.stdout)
    assert got is not None, "no answer to a version ewykd does not speak"
    assert got["long"] == 1 and got["version"] == 0, got
    # Its connection IDs mirror the client's (RFC 9000 17.2.1).
    assert got["dcid"] == bytes(range(11, 19)).hex(), got
    assert got["scid"] == bytes(range(1, 9)).hex(), got
    assert 1 in got["versions"], got
    after = quic(app)
    assert 1 <= after["version_negotiations_count"] - before["version_negotiations_count"] \
        <= got["sends"], (before, after, got)


def test_hostile_datagrams_are_counted_and_survived(app, tmp_path):
    before = quic(app)
    app.ns([PYTHON, "-c", HOSTILE, APP_IP, str(QUIC_PORT)])
    after = quic(app)
    # Every one of them dropped or failed its handshake; none is served.
    assert after["requests_reqs"] == before["requests_reqs"], after
    assert after["dropped_count"] - before["dropped_count"] >= 190, (before, after)
    _, text = fetch(app, APP_IP, ["/hello.txt"], tmp_path)
    assert statuses(text) == [200]


# An Initial of version 1 carrying a token that starts as a Retry token
# does (0xb6) but that ewykd never made, padded to 1200 bytes.
FORGED_TOKEN = """
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
token = bytes([0xb6]) + os.urandom(40)
hdr = (bytes([0xc3, 0, 0, 0, 1, 8]) + os.urandom(8) + bytes([8]) + os.urandom(8)
       + bytes([len(token)]) + token)
body = os.urandom(1200 - len(hdr) - 2)
s.sendto(hdr + bytes([0x40 | len(body) >> 8, len(body) & 0xff]) + body,
         (sys.argv[1], int(sys.argv[2])))
"""


def test_retry_proves_the_address_first(www, pki, tmp_path):
    """With --quic-retry-threshold 0 every new client gets a Retry first,
    comes back with its token and is served; a token ewykd never made is
    dropped and counted."""
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
                         "--quic-port", str(QUIC_PORT),
                         "--quic-retry-threshold", "0"]) as a:
        out, text = fetch(a, APP_IP, ["/hello.txt"], tmp_path)
        assert statuses(text) == [200], text[-2000:]
        assert (out / "hello.txt").read_text() == "hello from ewyk\n"
        q = quic(a)
        assert q["retries_count"] == 1 and q["handshakes_count"] == 1, q
        assert q["accepted_conns"] == 1 and q["bad_tokens_count"] == 0, q
        a.ns([PYTHON, "-c", FORGED_TOKEN, APP_IP, str(QUIC_PORT)])
        q = quic(a)
        assert q["bad_tokens_count"] == 1 and q["accepted_conns"] == 1, q


# An Initial of QUIC v1 carrying the token in argv[3] (hex), protected as
# RFC 9001 5 says, its CRYPTO frame not a real ClientHello: ewykd decides
# on the token (Retry or not) before TLS reads a byte. Prints what came
# back first: "retry", "other" (the handshake going on, or its close),
# or "none".
INITIAL_WITH_TOKEN = """
import os, socket, sys
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hmac import HMAC
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

def extract(salt, ikm):
    h = HMAC(salt, hashes.SHA256()); h.update(ikm); return h.finalize()

def label(secret, name, n):
    full = b"tls13 " + name
    info = n.to_bytes(2, "big") + bytes([len(full)]) + full + bytes([0])
    return HKDFExpand(hashes.SHA256(), n, info).derive(secret)

def varint(v):
    return bytes([v]) if v < 64 else (0x4000 | v).to_bytes(2, "big")

token = bytes.fromhex(sys.argv[3])
dcid, scid = os.urandom(8), os.urandom(8)
secret = label(extract(bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a"), dcid),
               b"client in", 32)
key, iv, hp = label(secret, b"quic key", 16), label(secret, b"quic iv", 12), label(secret, b"quic hp", 16)
hello = bytes([1, 0, 0, 60]) + os.urandom(60)
payload = bytes([6, 0]) + varint(len(hello)) + hello
payload += bytes(1100 - len(payload))
head = (bytes([0xc3, 0, 0, 0, 1, 8]) + dcid + bytes([8]) + scid + varint(len(token)) + token
        + (0x4000 | (4 + len(payload) + 16)).to_bytes(2, "big"))
pn = bytes(4)
sealed = AESGCM(key).encrypt(iv, payload, head + pn)	# packet number 0
sample = sealed[:16]
mask = Cipher(algorithms.AES(hp), modes.ECB()).encryptor().update(sample)
head = bytes([head[0] ^ (mask[0] & 0x0f)]) + head[1:]
pn = bytes(a ^ b for a, b in zip(pn, mask[1:5]))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(head + pn + sealed, (sys.argv[1], int(sys.argv[2])))
try:
    got = s.recv(2000)
    print("retry" if got[0] & 0xf0 == 0xf0 else "other")
except socket.timeout:
    print("none")
"""


def test_new_token_spares_the_retry(www, pki, tmp_path):
    """After a handshake the client gets a NEW_TOKEN (gtlsclient writes it
    to its --token-file; Debian's 0.12 cannot read it back, so the next
    Initial is made here, from the same address): an Initial with it
    proves the address and gets no Retry, even with --quic-retry-threshold
    0. A reload rotates the tokens' keys: a token stays good across one
    rotation, not two, and a token ewykd never made is taken as none (a
    Retry), not dropped."""
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
                         "--quic-port", str(QUIC_PORT),
                         "--quic-retry-threshold", "0"]) as a:
        token_file = tmp_path / "token"
        _, text = fetch(a, APP_IP, ["/hello.txt"], tmp_path, f"--token-file={token_file}")
        assert statuses(text) == [200], text[-2000:]
        q = quic(a)
        assert q["retries_count"] == 1 and q["new_tokens_count"] == 1, q
        pem = token_file.read_text()
        assert "BEGIN QUIC TOKEN" in pem, pem
        token = base64.b64decode("".join(ln for ln in pem.splitlines()
                                         if ln and not ln.startswith("-----")))
        assert token[0] == 0x36, token.hex()	# ngtcp2's regular token

        def initial(tok, want):
            before = quic(a)
            r = a.ns([PYTHON, "-c", INITIAL_WITH_TOKEN, APP_IP, str(QUIC_PORT),
                      tok.hex()])
            after = quic(a)
            assert r.stdout.strip() == want, (r.stdout, r.stderr, after)
            return {k: after[k] - before[k] for k in
                    ("retries_count", "tokens_accepted_count", "bad_tokens_count",
                     "accepted_conns")}

        def reload_keys(n):
            assert a.telemetry("/ewyk/reload") == {"reload": "asked"}
            deadline = time.monotonic() + 10
            while quic(a)["token_key_rotations_count"] != n:
                assert time.monotonic() < deadline, quic(a)
                time.sleep(0.05)

        proved = {"retries_count": 0, "tokens_accepted_count": 1,
                  "bad_tokens_count": 0, "accepted_conns": 1}
        retried = {"retries_count": 1, "tokens_accepted_count": 0,
                   "bad_tokens_count": 1, "accepted_conns": 0}
        assert initial(token, "other") == proved
        assert initial(bytes([0x36]) + os.urandom(len(token) - 1), "retry") == retried
        reload_keys(1)
        assert initial(token, "other") == proved	# one rotation: still good
        reload_keys(2)
        assert initial(token, "retry") == retried	# two: a Retry again


# A real client's first Initial (tests/fuzz/quic/corpus/initial, past its
# record header), sent once: the handshake begins and is never finished.
HALF_HANDSHAKE = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(open(sys.argv[3], "rb").read()[3:], (sys.argv[1], int(sys.argv[2])))
"""


def test_a_handshake_left_half_way_is_dropped(www, pki):
    """ngtcp2 would probe a client that left its handshake for as long as
    ewykd lets it; --tls-handshake-timeout-ms ends it, silently."""
    initial = os.path.join(ROOT, "tests", "fuzz", "quic", "corpus", "initial")
    with Appliance(www=www["dir"],
                   args=["--tls-cert", pki["cert"], "--tls-key", pki["key"], "--http3",
                         "--quic-port", str(QUIC_PORT),
                         "--tls-handshake-timeout-ms", "500"]) as a:
        a.ns([PYTHON, "-c", HALF_HANDSHAKE, APP_IP, str(QUIC_PORT), initial])
        q = quic(a)
        assert q["accepted_conns"] == 1 and q["dgrams_out_count"] >= 1, q
        deadline = time.monotonic() + 10
        while quic(a)["open_conns"] > 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        q = quic(a)
        assert q["open_conns"] == 0 and q["handshaking_conns"] == 0, q
        assert q["handshake_timeouts_count"] == 1 and q["handshakes_count"] == 0, q


def test_no_retry_below_the_threshold(app, tmp_path):
    before = quic(app)
    fetch(app, APP_IP, ["/hello.txt"], tmp_path)
    assert quic(app)["retries_count"] == before["retries_count"]


def test_http3_without_a_certificate_is_refused(www):
    p = subprocess.run([EWYKD, "--no-huge", "-m", "64", "--no-pci", "--",
                        "--check-config", "--www", www["dir"], "--http3"],
                       capture_output=True, text=True, timeout=30)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, (p.returncode, p.stderr)
    assert "--http3" in lines[0] and "certificate" in lines[0], lines
