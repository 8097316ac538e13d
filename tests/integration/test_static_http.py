# SPDX-License-Identifier: BSD-3-Clause
"""The static site's HTTP semantics with real clients (curl over HTTP/1.1
and h2c, python3-h2, raw sockets) against ewykd on net_tap: validators
and the preconditions of RFC 9110 13 in their order, If-Range, the
precompressed siblings a client's Accept-Encoding picks, Cache-Control by
path prefix, media types from /etc/mime.types and --mime-type, the
directory redirect, OPTIONS, absolute-form targets, the request limits,
and what the tree walk follows and what it leaves out (said in the log)."""
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from email.utils import parsedate_to_datetime

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, EWYKD, NO_DAC, Appliance

MTIME = 784111777                       # Sun, 06 Nov 1994 08:49:37 GMT
LM = "Sun, 06 Nov 1994 08:49:37 GMT"
APP_JS = b"console.log('ewyk');\n" * 200
CACHE = ["--cache-control", "/=no-cache",
         "--cache-control", "/assets/=public, max-age=31536000, immutable"]


@pytest.fixture(scope="module")
def site():
    """A tree with what a site has: an index, assets with .br and .gz
    siblings, fonts, a directory, links in and out, a loop, a FIFO, a file
    20 directories down and one 70 down."""
    d = tempfile.mkdtemp(prefix="ewyk-site-")
    out = tempfile.mkdtemp(prefix="ewyk-out-")

    def put(rel, data, mtime=MTIME):
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, (mtime, mtime))
        return p

    put("index.html", b"<!doctype html><h1>site</h1>\n")
    put("hello.txt", b"hello, conditional world\n")
    # modified "in an hour": its Last-Modified is the load's time, a date
    # that cannot be a strong validator
    put("fresh.txt", b"fresh from the press\n", time.time() + 3600)
    put("assets/app.js", APP_JS)
    put("assets/app.js.gz", gzip.compress(APP_JS), MTIME + 1)
    br = os.path.join(d, "assets", "app.js.br")
    subprocess.run(["brotli", "-q", "11", "-o", br, os.path.join(d, "assets", "app.js")],
                   check=True)
    os.utime(br, (MTIME + 1, MTIME + 1))
    for name in ["f.woff2", "f.wasm", "f.mjs", "f.avif", "f.webp", "f.svg", "f.json",
                 "f.dat", "f.epub"]:
        put("types/" + name, b"x")
    put("docs/guide/index.html", b"guide\n")
    with open(os.path.join(out, "secret.txt"), "w") as f:
        f.write("outside\n")
    os.symlink("docs", os.path.join(d, "manual"))                 # a directory link
    os.symlink("..", os.path.join(d, "docs", "up"))                # a loop
    os.symlink(out, os.path.join(d, "outside"))                    # leaves the root
    os.mkfifo(os.path.join(d, "pipe"))
    deep = os.path.join(*[f"d{i}" for i in range(20)])
    put(os.path.join(deep, "deep.txt"), b"20 levels down\n")
    put(os.path.join(*[f"e{i}" for i in range(70)], "too-deep.txt"), b"70\n")
    os.chmod(put("locked.txt", b"no one reads this\n"), 0)
    put("locked/inside.txt", b"nor this\n")
    os.chmod(os.path.join(d, "locked"), 0)
    yield {"dir": d, "deep": "/" + deep.replace(os.sep, "/") + "/deep.txt"}
    os.chmod(os.path.join(d, "locked"), 0o755)
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)


# ewykd runs without the capabilities that bypass file permissions, so
# that locked.txt is unreadable to it.
@pytest.fixture(scope="module")
def app(site):
    yield from serve_module(Appliance(www=site["dir"], wrap=NO_DAC, args=CACHE + [
        "--mime-type", "dat=application/x-ewyk-test"]))


def curl(app, path, *args, h2=False, out="/dev/stdout"):
    """Head and body of one exchange: (status, {name: value}, body); the
    body goes to the file out instead when given."""
    r = app.ns(["curl", "-sS", "-m", "10", "-D", "/dev/stderr", "-o", str(out),
                *(["--http2-prior-knowledge"] if h2 else []), *args, app.url(path)],
               check=False)
    assert r.returncode == 0, r.stderr
    heads = [h for h in re.split(r"\r?\n\r?\n", r.stderr) if h.startswith("HTTP/")]
    lines = heads[-1].splitlines()
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), fields, r.stdout


PROTOS = pytest.mark.parametrize("h2", [False, True], ids=["http1", "h2c"])


@PROTOS
def test_last_modified_and_if_modified_since(app, h2):
    status, f, body = curl(app, "/hello.txt", h2=h2)
    assert status == 200 and f["last-modified"] == LM
    assert f["cache-control"] == "no-cache"
    # curl -z sends If-Modified-Since
    assert curl(app, "/hello.txt", "-z", LM, h2=h2)[0] == 304
    assert curl(app, "/hello.txt", "-z", "Sun, 06 Nov 1994 08:49:36 GMT", h2=h2)[0] == 200
    assert curl(app, "/hello.txt", "-H", "If-Modified-Since: garbage", h2=h2)[0] == 200
    # If-None-Match decides when both are there
    assert curl(app, "/hello.txt", "-z", LM, "-H", 'If-None-Match: "0000000000000000"',
                h2=h2)[0] == 200


@PROTOS
def test_if_none_match_in_all_forms(app, h2):
    etag = curl(app, "/hello.txt", h2=h2)[1]["etag"]
    wrong = '"0000000000000000"'
    cases = [(etag, 304), (wrong, 200), ("*", 304), ("W/" + etag, 304),
             (f'{wrong}, W/"x", {etag}', 304), (f"{wrong}, W/{wrong}", 200)]
    for value, want in cases:
        status, f, body = curl(app, "/hello.txt", "-H", f"If-None-Match: {value}", h2=h2)
        assert status == want, value
        assert (body == "hello, conditional world\n") == (want == 200), value
    # with Range: the 304 wins, even over a range past the end (416)
    assert curl(app, "/hello.txt", "-H", f"If-None-Match: {etag}", "-r", "0-3",
                h2=h2)[0] == 304
    assert curl(app, "/hello.txt", "-H", f"If-None-Match: {etag}", "-r", "1000-",
                h2=h2)[0] == 304
    status, f, body = curl(app, "/hello.txt", "-H", f"If-None-Match: {wrong}", "-r",
                           "0-4", h2=h2)
    assert (status, body, f["content-range"]) == (206, "hello", "bytes 0-4/25")


@PROTOS
def test_if_match_and_if_unmodified_since_give_412(app, h2):
    etag = curl(app, "/hello.txt", h2=h2)[1]["etag"]
    assert curl(app, "/hello.txt", "-H", f"If-Match: {etag}", h2=h2)[0] == 200
    status, _, body = curl(app, "/hello.txt", "-H", 'If-Match: "0000000000000000"', h2=h2)
    assert (status, body) == (412, "412 Precondition Failed\n")
    assert curl(app, "/hello.txt", "-H", f"If-Match: W/{etag}", h2=h2)[0] == 412
    assert curl(app, "/hello.txt", "-H", "If-Match: *", h2=h2)[0] == 200
    assert curl(app, "/hello.txt", "-H",
                "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT", h2=h2)[0] == 412
    assert curl(app, "/hello.txt", "-H", f"If-Unmodified-Since: {LM}", h2=h2)[0] == 200
    # If-Match, when there, decides alone
    assert curl(app, "/hello.txt", "-H", f"If-Match: {etag}", "-H",
                "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:36 GMT", h2=h2)[0] == 200


@PROTOS
def test_if_range_never_gives_a_stale_part(app, h2):
    """A resumed download whose validator is stale gets the whole file
    (200), never the part of another version (206)."""
    etag = curl(app, "/hello.txt", h2=h2)[1]["etag"]
    status, f, body = curl(app, "/hello.txt", "-r", "7-17", "-H", f"If-Range: {etag}",
                           h2=h2)
    assert (status, body) == (206, "conditional")
    for stale in ['"0000000000000000"', "W/" + etag, "Sun, 06 Nov 1994 08:49:36 GMT"]:
        status, f, body = curl(app, "/hello.txt", "-r", "7-17", "-H",
                               f"If-Range: {stale}", h2=h2)
        assert (status, body) == (200, "hello, conditional world\n"), stale
        assert "content-range" not in f
    # the file's date is strong (years older than the load): it matches
    assert curl(app, "/hello.txt", "-r", "7-17", "-H", f"If-Range: {LM}", h2=h2)[0] == 206
    # a file that changed within the second of the load: its date is weak
    # (RFC 9110 8.8.2.2), and never after the answer's Date (8.8.2.1)
    status, f, _ = curl(app, "/fresh.txt", h2=h2)
    lm = f["last-modified"]
    assert parsedate_to_datetime(lm).timestamp() <= time.time()
    status, f, body = curl(app, "/fresh.txt", "-r", "0-4", "-H", f"If-Range: {lm}", h2=h2)
    assert (status, body) == (200, "fresh from the press\n")
    assert curl(app, "/fresh.txt", "-r", "0-4", "-H", f"If-Range: {f['etag']}",
                h2=h2)[0] == 206


@PROTOS
def test_precompressed_siblings(app, h2, tmp_path):
    # curl --compressed asks for br and gzip: br, decoded to the file
    status, f, body = curl(app, "/assets/app.js", "--compressed", h2=h2)
    assert status == 200 and f["content-encoding"] == "br"
    assert body == APP_JS.decode()
    assert f["vary"] == "Accept-Encoding"
    assert f["content-type"] == "text/javascript"
    assert f["cache-control"] == "public, max-age=31536000, immutable"
    # gzip alone, its bytes as stored
    out = tmp_path / "gz"
    r = app.ns(["curl", "-sS", "-m", "10", *(["--http2-prior-knowledge"] if h2 else []),
                "-H", "Accept-Encoding: gzip", "-D", "-", "-o", str(out),
                app.url("/assets/app.js")])
    assert re.search(r"(?mi)^content-encoding: gzip\r?$", r.stdout)
    assert gzip.decompress(out.read_bytes()) == APP_JS
    gz_etag = re.search(r'(?mi)^etag: (".*")', r.stdout).group(1)
    # no Accept-Encoding, or the codings refused: identity, still with Vary
    for args in [[], ["-H", "Accept-Encoding: gzip;q=0, br;q=0"]]:
        status, f, body = curl(app, "/assets/app.js", *args, h2=h2)
        assert "content-encoding" not in f and body == APP_JS.decode()
        assert f["vary"] == "Accept-Encoding" and f["etag"] != gz_etag
    # identity;q=0 with gzip acceptable
    assert curl(app, "/assets/app.js", "-H", "Accept-Encoding: identity;q=0, gzip",
                out=out, h2=h2)[1]["content-encoding"] == "gzip"
    # a range is of the encoded bytes
    status, f, body = curl(app, "/assets/app.js", "-H", "Accept-Encoding: gzip",
                           "-r", "0-1", out=out, h2=h2)
    assert status == 206 and out.read_bytes() == b"\x1f\x8b"
    assert f["content-range"].endswith("/%d" % len(gzip.compress(APP_JS)))
    # the 304 of the gzip representation names it and says Vary
    status, f, _ = curl(app, "/assets/app.js", "-H", "Accept-Encoding: gzip", "-H",
                        f"If-None-Match: {gz_etag}", h2=h2)
    assert (status, f["etag"], f["vary"]) == (304, gz_etag, "Accept-Encoding")
    # by its own name a sibling is a gzip file, not an encoded answer
    status, f, _ = curl(app, "/assets/app.js.gz", out=out, h2=h2)
    assert f["content-type"] == "application/gzip" and "content-encoding" not in f
    assert "vary" not in f and gzip.decompress(out.read_bytes()) == APP_JS


def test_media_types(app):
    want = {"f.woff2": "font/woff2", "f.wasm": "application/wasm",
            "f.mjs": "text/javascript", "f.avif": "image/avif", "f.webp": "image/webp",
            "f.svg": "image/svg+xml", "f.json": "application/json",
            "f.dat": "application/x-ewyk-test",
            "f.epub": "application/epub+zip"}     # /etc/mime.types' only
    for name, ctype in want.items():
        assert curl(app, "/types/" + name)[1]["content-type"] == ctype, name
    assert curl(app, "/")[1]["content-type"] == "text/html; charset=utf-8"


@PROTOS
def test_directory_redirect_and_options(app, h2):
    status, f, _ = curl(app, "/docs/guide?page=2", h2=h2)
    assert (status, f["location"]) == (301, "/docs/guide/?page=2")
    # curl 7.88 cannot reuse a prior-knowledge connection (nghttpd's
    # neither): -L over HTTP/1.1, the target itself over both
    if not h2:
        r = app.ns(["curl", "-sS", "-m", "10", "-L", app.url("/docs/guide")])
        assert r.stdout == "guide\n"
    assert curl(app, f["location"], h2=h2)[2] == "guide\n"
    status, f, body = curl(app, "/hello.txt", "-X", "OPTIONS", h2=h2)
    assert (status, f["allow"], body) == (204, "GET, HEAD, OPTIONS", "")
    status, f, _ = curl(app, "/hello.txt", "-X", "POST", "-d", "x", h2=h2)
    assert status == 405 and f["allow"] == "GET, HEAD, OPTIONS"


H2_OPTIONS_STAR = """
import json, socket
import h2.config, h2.connection, h2.events
c = socket.create_connection(("{app}", 80), timeout=10)
h = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
h.initiate_connection()
h.send_headers(1, [(":method", "OPTIONS"), (":scheme", "http"), (":authority", "x"),
                   (":path", "*")], end_stream=True)
c.sendall(h.data_to_send())
out = {{}}
while "end" not in out:
    data = c.recv(65536)
    if not data:
        break
    for e in h.receive_data(data):
        if isinstance(e, h2.events.ResponseReceived):
            out.update({{k.decode(): v.decode() for k, v in e.headers}})
        elif isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)):
            out["end"] = type(e).__name__
    c.sendall(h.data_to_send())
print(json.dumps(out))
"""


def test_options_star(app):
    """OPTIONS * speaks for the server: the methods of all its routes."""
    out = app.exchange(b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert out.startswith("HTTP/1.1 200 OK"), out
    allow = re.search(r"(?mi)^Allow: (.*?)\r?$", out).group(1)
    assert allow.split(", ")[:3] == ["GET", "HEAD", "POST"] and "OPTIONS" in allow
    h2 = json.loads(app.ns_python(H2_OPTIONS_STAR.format(app=APP_IP)))
    assert h2[":status"] == "200" and h2["allow"] == allow and h2["end"] == "StreamEnded"


def test_absolute_form_targets(app):
    """RFC 9112 3.2.2: the target's path is served and its host wins over
    Host's; curl through ewykd as a "proxy" sends exactly that."""
    out = app.exchange(b"GET http://example.test/hello.txt?x HTTP/1.1\r\n"
                       b"Host: elsewhere\r\nConnection: close\r\n\r\n")
    assert out.startswith("HTTP/1.1 200 OK") and out.endswith("hello, conditional world\n")
    out = app.exchange(b"GET http://example.test HTTP/1.1\r\nHost: x\r\n"
                       b"Connection: close\r\n\r\n")
    assert out.startswith("HTTP/1.1 200 OK") and out.endswith("<h1>site</h1>\n")
    r = app.ns(["curl", "-sS", "-m", "10", "-x", f"http://{APP_IP}:80",
                "http://any.name.test/hello.txt"])
    assert r.stdout == "hello, conditional world\n"
    # still HTTP/1.1: Host is required
    out = app.exchange(b"GET http://example.test/hello.txt HTTP/1.1\r\n\r\n")
    assert out.startswith("HTTP/1.1 400")


@PROTOS
def test_target_and_head_limits(app, h2):
    """8 KiB targets pass, one byte more is 414; a 12 KiB field fits the
    16 KiB head; a 20 KiB one is 431 (HTTP/2: its 16 KiB header list)."""
    base = "/hello.txt?"
    assert curl(app, base + "a" * (8192 - len(base)), h2=h2)[0] == 200
    assert curl(app, base + "a" * (8193 - len(base)), h2=h2)[0] == 414
    assert curl(app, "/hello.txt", "-H", "X-Big: " + "v" * 12288, h2=h2)[0] == 200
    assert curl(app, "/hello.txt", "-H", "X-Big: " + "v" * 20480, h2=h2)[0] == 431


def test_links_depth_and_the_skipped_said(app, site):
    """Directory links inside the root are followed, a file 20 levels down
    is served; loops, links out of the root, special files, unreadable
    files and directories, and trees past 64 levels are left out, each
    named in the log with its reason."""
    assert curl(app, "/manual/guide/index.html")[2] == "guide\n"
    assert curl(app, site["deep"])[2] == "20 levels down\n"
    for path in ["/outside/secret.txt", "/pipe", "/docs/up/hello.txt", "/locked.txt",
                 "/locked/inside.txt", "/locked"]:
        assert curl(app, path)[0] == 404, path
    log = app.read_log()
    d = site["dir"]
    for rel, why in [("docs/up", "a link loop"), ("manual/up", "a link loop"),
                     ("outside", "a link leading outside the root"),
                     ("pipe", "a special file"),
                     ("locked.txt", "unreadable: Permission denied"),
                     ("locked", "unreadable: Permission denied"),
                     ("/".join(f"e{i}" for i in range(65)), "too deep")]:
        assert f"ewyk: www: skipped {d}/{rel}: {why}" in log, (rel, log)
    info = app.telemetry("/ewyk/info")
    assert info["www"]["skipped_files"] == 7


def test_options_and_their_config_keys(tmp_path):
    """--cache-control, --mime-type, --mime-types, --max-target and
    --max-header-bytes: checked at start (one line, status 2), the same
    as keys of the configuration file, where a repeated key adds a rule."""
    for args, word in [(["--cache-control", "assets=no-cache"], "--cache-control"),
                       (["--cache-control", "/a=no\x01cache"], "--cache-control"),
                       (["--cache-control", "/a=x", "--cache-control", "/a=y"],
                        "given twice"),
                       (["--mime-type", "woff2"], "--mime-type"),
                       (["--mime-type", ".js=text/javascript"], "--mime-type"),
                       (["--mime-type", "js=text"], "--mime-type"),
                       (["--max-target", "10"], "--max-target"),
                       (["--max-header-bytes", "100"], "--max-header-bytes")]:
        r = subprocess.run([EWYKD, "--", *args], capture_output=True, text=True)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and word in lines[0], (args, r.stderr)
    conf = tmp_path / "ewykd.conf"
    conf.write_text(f"[ewykd]\nwww = {tmp_path}\ncache-control = /=no-cache\n"
                    "cache-control = /assets/=public, max-age=60\n"
                    "mime-type = dat=application/x-dat\nmime-types = none\n"
                    "max-target = 4096\n")
    r = subprocess.run([EWYKD, "--config", str(conf), "--check-config"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for line in ["cache-control = /=no-cache", "cache-control = /assets/=public, max-age=60",
                 "mime-type = dat=application/x-dat", "mime-types = none",
                 "max-target = 4096"]:
        assert line in r.stdout, r.stdout
    conf.write_text(f"[ewykd]\nwww = {tmp_path}\ncache-control = /=a\ncache-control = /=b\n")
    r = subprocess.run([EWYKD, "--config", str(conf), "--check-config"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and ":4: cache-control:" in r.stderr, r.stderr
