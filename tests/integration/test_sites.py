# SPDX-License-Identifier: BSD-3-Clause
"""Sites and routes of the configuration file ([site NAME], [route NAME];
DESIGN.md "Sites, routes and upstreams"): a request's Host (HTTP/2's
:authority) chooses the site, exact name before a one-label wildcard,
the first site for any other; its normalised path chooses the route,
longer before shorter, exact before prefix, the site's own before every
site's; a prefix matches at a '/' boundary. Driven with curl and nghttp
over HTTP/1.1 and HTTP/2, cleartext, TLS (each site's certificate by
SNI) and IPv6; a reload swaps every site's files or none."""
import gzip
import os
import re
import subprocess
import signal
import time

import pytest

from app_servers import app_servers, ready
from ewyk_harness import APP_IP, APP_IP6, HOST_IP, ROOT, Appliance, check_config
from test_startup_errors import start
from tls_certs import CA
from upstream_servers import NGINX_PORT, upstream_args, upstreams_serving

HELLO = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """Three sites' roots, a route's root, certificates for two sites and
    the configuration naming them."""
    d = str(tmp_path_factory.mktemp("sites"))
    for site in ("a", "b", "c"):
        write(f"{d}/{site}/index.html", f"site {site}\n")
        write(f"{d}/{site}/page.txt", f"page of {site}\n")
    write(f"{d}/a/imgx.txt", "imgx of a\n")
    write(f"{d}/img/logo.txt", "the logo\n")
    write(f"{d}/b-img/logo.txt", "b's own logo\n")
    write(f"{d}/docs/index.html", "docs index\n")
    ca = CA(d)
    a_cert, a_key, _ = ca.issue("a", names=("a.example.test",), ip=None)
    b_cert, b_key, _ = ca.issue("b", names=("b.example.test", "*.b.example.test"),
                                ip=None)
    conf = f"""# sites: the first is the default
[ewykd]
upstream-timeout-ms = 3000

[site a]
host = a.example.test
root = {d}/a
tls-cert = {a_cert}
tls-key = {a_key}

[site b]
host = b.example.test
host = *.b.example.test
root = {d}/b
tls-cert = {b_cert}
tls-key = {b_key}

[site c]
host = C.Example.Test
root = {d}/c

; every site's
[route img]
prefix = /img
root = {d}/img
add-header = X-Route: img; every site

; b's own on the same path beats every site's
[route b-img]
site = b
prefix = /img
root = {d}/b-img

[route docs]
prefix = /docs/
root = {d}/docs

[route page-exact]
site = c
exact = /page.txt
status = 403

[route old]
site = b
exact = /old
redirect = 301 https://{{host}}/new{{uri}}

[route gone]
prefix = /gone
status = 410

[route app]
site = c
prefix = /app
upstream = ng
strip-prefix = on
add-header = X-Via-Route: app

[route raw]
site = c
prefix = /raw
upstream = ng

[route zip]
site = c
prefix = /zip
upstream = ng
strip-prefix = on
compress = on

[route lim]
exact = /lim
status = 204
limit-rps = 1
"""
    path = f"{d}/ewykd.conf"
    write(path, conf)
    return {"dir": d, "conf": path, "ca": ca.path}


@pytest.fixture(scope="module")
def sites(tree):
    a = Appliance(args=["--config", tree["conf"], "--tls-port", "443"] +
                  upstream_args("ng"), demo=False, ip6=True, client_ns=True)
    try:
        a.start()
        with upstreams_serving(a, {}) as (prefix, files):
            write(os.path.join(prefix, "www", "app.txt"), "from the app\n")
            write(os.path.join(prefix, "www", "raw", "r.txt"), "raw\n")
            for name in ("text.txt", "gz/text.txt"):
                write(os.path.join(prefix, "www", name), TEXT)
            write(os.path.join(prefix, "www", "blob.bin"), TEXT)
            yield {"a": a, "tree": tree, "nginx": prefix}
    finally:
        a.close()


def get(a, path, host=None, proto="h1", ip=APP_IP, extra=()):
    """(status, headers dict in lower case, body) of one request with curl."""
    args = ["curl", "-sS", "-m", "10", "--path-as-is", "-D", "-", *extra]
    if proto == "h2":
        args.append("--http2-prior-knowledge")
    if host is not None:
        args += ["-H", f"Host: {host}"]
    r = a.ns(args + [f"http://{ip if ':' not in ip else '[' + ip + ']'}{path}"],
             check=False)
    assert r.returncode == 0, r.stderr
    return parse(r.stdout)


def parse(out):
    head, _, body = out.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        fields[k.strip().lower()] = v.strip()
    return status, fields, body


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_host_chooses_the_site(sites, proto):
    a = sites["a"]
    cases = [("a.example.test", "site a"), ("b.example.test", "site b"),
             ("B.EXAMPLE.test:80", "site b"),	# any case, a port
             ("b.example.test.", "site b"),	# a final dot
             ("x.b.example.test", "site b"),	# the wildcard's one label
             ("y.x.b.example.test", "site a"),	# two labels: not the wildcard's
             ("c.example.test", "site c"),	# named in capitals
             ("unknown.test", "site a"),	# the default
             (APP_IP, "site a")]
    for host, body in cases:
        status, _, got = get(a, "/", host, proto)
        assert (status, got) == (200, body + "\n"), host


def test_nghttp_authority_chooses_the_site(sites):
    """An independent HTTP/2 client: nghttp's :authority alone."""
    a = sites["a"]
    for host, body in (("b.example.test", "site b"), ("c.example.test", "site c")):
        r = a.ns(["nghttp", "-H", f":authority: {host}", f"http://{APP_IP}/"])
        assert r.stdout == body + "\n", (host, r.stdout)


def test_http10_without_host_gets_the_default_site(sites):
    r = sites["a"].ns(["curl", "-sS", "-m", "10", "--http1.0", "-H", "Host:",
                       f"http://{APP_IP}/"])
    assert r.stdout == "site a\n"


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_routes_by_longest_prefix_at_a_boundary(sites, proto):
    a = sites["a"]
    status, f, body = get(a, "/img/logo.txt", "a.example.test", proto)
    assert (status, body) == (200, "the logo\n")
    assert f["x-route"] == "img; every site"	# a value may hold ';'
    # b's own route on the same path wins over every site's.
    status, f, body = get(a, "/img/logo.txt", "b.example.test", proto)
    assert (status, body) == (200, "b's own logo\n") and "x-route" not in f
    # "/img" does not take "/imgx.txt": the site's root does.
    status, _, body = get(a, "/imgx.txt", "a.example.test", proto)
    assert (status, body) == (200, "imgx of a\n")
    # The path after the prefix is looked up under the route's root.
    status, _, body = get(a, "/docs/", "a.example.test", proto)
    assert (status, body) == (200, "docs index\n")
    # Exact beats the site's root on its one path only.
    assert get(a, "/page.txt", "c.example.test", proto)[:3:2] == (403, "403 Forbidden\n")
    assert get(a, "/page.txt", "a.example.test", proto)[2] == "page of a\n"
    status, _, body = get(a, "/gone/x", "b.example.test", proto)
    assert (status, body) == (410, "410 Gone\n")
    # An error answer carries no route field (as nginx's add_header).
    status, f, _ = get(a, "/img/none", "a.example.test", proto)
    assert status == 404 and "x-route" not in f


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_redirect_fills_host_and_uri(sites, proto):
    a = sites["a"]
    status, f, _ = get(a, "/old?x=1", "b.example.test", proto)
    assert status == 301
    assert f["location"] == "https://b.example.test/new/old?x=1"
    assert get(a, "/old", "a.example.test", proto)[0] == 404	# b's own


@pytest.mark.parametrize("path,where", [
    ("/x/../img/logo.txt", "/img/logo.txt"),
    ("/img/./logo.txt", "/img/logo.txt"),
    ("//img//logo.txt", "/img/logo.txt"),
    ("/%69mg/logo.txt?q=%2e", "/img/logo.txt?q=%2e"),	# unreserved decoded
    ("/a/b/../../..", "/"),		# never above the root
])
def test_a_path_not_in_normal_form_is_sent_to_it(sites, path, where):
    """The route is chosen on the normalised path: a path that is not (dot
    segments, '//', escaped unreserved bytes) is redirected to it, so that
    what chose the route and what a handler or upstream reads are one."""
    status, f, _ = get(sites["a"], path, "a.example.test")
    assert status == 308 and f["location"] == where


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_upstream_route_strips_its_prefix_or_not(sites, proto):
    a = sites["a"]
    status, f, body = get(a, "/app/app.txt", "c.example.test", proto)
    assert (status, body) == (200, "from the app\n")
    assert f["x-via-route"] == "app"
    # Without strip-prefix the upstream sees the whole path.
    assert get(a, "/raw/app.txt", "c.example.test", proto)[0] == 404
    assert get(a, "/raw/r.txt", "c.example.test", proto)[2] == "raw\n"
    # Another site has no such route.
    assert get(a, "/app/app.txt", "a.example.test", proto)[0] == 404


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_each_site_has_its_certificate_over_tls(sites, proto):
    a, tree = sites["a"], sites["tree"]
    # x.b.example.test: b's certificate by its wildcard name, b's site by
    # its wildcard host.
    for host, body in (("a.example.test", "site a"), ("b.example.test", "site b"),
                       ("x.b.example.test", "site b")):
        r = a.ns(["curl", "-sS", "-m", "10", "--cacert", tree["ca"],
                  "--http2" if proto == "h2" else "--http1.1",
                  "--resolve", f"{host}:443:{APP_IP}", "-w", "\n%{http_version}",
                  f"https://{host}/"], check=False)
        assert r.returncode == 0, (host, r.stderr)	# the name was verified
        got, version = r.stdout.rsplit("\n", 1)
        assert got == body + "\n"
        assert version == ("2" if proto == "h2" else "1.1")


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_host_of_another_site_than_the_sni_gets_421(sites, proto):
    """A TLS connection made for a.example.test (its certificate) asking
    for b.example.test's pages: 421, so that the client opens one of its
    own for that name (RFC 9110 15.5.20); the same name, or a name of the
    same site, is served."""
    a, tree = sites["a"], sites["tree"]
    base = ["curl", "-sS", "-m", "10", "--cacert", tree["ca"], "-o", "/dev/null",
            "-w", "%{http_code}", "--http2" if proto == "h2" else "--http1.1",
            "--resolve", f"a.example.test:443:{APP_IP}"]
    r = a.ns(base + ["-H", "Host: b.example.test", "https://a.example.test/"])
    assert r.stdout == "421", r.stdout
    r = a.ns(base + ["-H", "Host: A.example.test:443", "https://a.example.test/"])
    assert r.stdout == "200", r.stdout


def test_host_of_another_site_than_the_sni_gets_421_over_http3(tree, tmp_path):
    """The same over HTTP/3 (gtlsclient): a QUIC connection whose
    handshake named a.example.test asking for b.example.test is 421; its
    own name is served, and b's connection gets b's site. gtlsclient
    sends a host's name as SNI only when it resolves one (for an address
    it sends "localhost"): the client's namespace gets a hosts file
    (ip netns exec reads /etc/netns/NS/hosts)."""
    with Appliance(args=["--config", tree["conf"], "--http3", "--quic-port", "8443"] +
                   upstream_args("ng"), demo=False) as a:
        hosts_dir = f"/etc/netns/{a.client}"
        made_netns = not os.path.isdir("/etc/netns")
        os.makedirs(hosts_dir)
        try:
            write(f"{hosts_dir}/hosts",
                  f"{APP_IP} a.example.test b.example.test\n")

            def h3(name, authority):
                out = tmp_path / "dl"
                out.mkdir(exist_ok=True)
                r = a.ns(["gtlsclient", "--exit-on-all-streams-close",
                          "--no-quic-dump", "--timeout=10s", "--download", str(out),
                          name, "8443", f"https://{authority}:8443/"],
                         check=False, timeout=60)
                assert r.returncode == 0, r.stderr[-2000:]
                got = re.findall(r"\[:status: (\d{3})\]", r.stdout + r.stderr)
                page = out / "index.html"
                return int(got[0]), page.read_text() if got[0] == "200" else ""

            assert h3("a.example.test", "b.example.test")[0] == 421
            assert h3("a.example.test", "a.example.test") == (200, "site a\n")
            assert h3("b.example.test", "b.example.test") == (200, "site b\n")
            assert h3("b.example.test", "a.example.test")[0] == 421
        finally:
            os.remove(f"{hosts_dir}/hosts")
            os.rmdir(hosts_dir)
            if made_netns:
                os.rmdir("/etc/netns")


def test_each_route_counts_apart_in_telemetry(sites):
    """/ewyk/http's figures per route: each site's routes count apart
    from another site's and from the built-in ones, whatever their index
    in their router; a [route] of every site is in each site's router and
    counts for the site asked: 3 GETs of c's exact /page.txt (403), 2 of
    every site's /gone (410) by a, 1 of b's /old (301)."""
    a = sites["a"]

    def counts():
        return {k: v["requests_reqs"] for k, v in all_routes(a).items()}

    before = counts()
    for _ in range(3):
        assert get(a, "/page.txt", "c.example.test")[0] == 403
    for _ in range(2):
        assert get(a, "/gone", "a.example.test")[0] == 410
    assert get(a, "/old", "b.example.test")[0] == 301
    after = counts()
    grew = {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}
    assert grew == {"site_c_route_page_txt": 3, "site_a_route_gone": 2,
                    "site_b_route_old": 1}, grew
    h = all_routes(a)
    assert (h["site_c_route_page_txt"]["site"], h["site_c_route_page_txt"]["path"],
            h["site_c_route_page_txt"]["match"]) == ("c", "/page.txt", "exact")
    assert h["site_b_route_gone"]["requests_reqs"] == before.get("site_b_route_gone", 0)


def all_routes(a):
    """Every route's figures, from /ewyk/routes a page at a time."""
    first = a.telemetry("/ewyk/routes")
    routes = {}
    for page in range(first["pages"]):
        reply = a.telemetry(f"/ewyk/routes,{page}")
        assert reply["page"] == page and reply["routes_total"] == first["routes_total"]
        routes.update({k: v for k, v in reply.items() if isinstance(v, dict)})
    assert len(routes) == first["routes_total"], (len(routes), first)
    return routes


def test_many_routes_are_read_a_page_at_a_time(tmp_path):
    """70 routes do not fit one telemetry reply (16 KiB): /ewyk/http keeps
    the first 32 and says how many there are, /ewyk/routes gives them all
    32 to a page, every reply whole JSON; a page past the last is refused."""
    write(f"{tmp_path}/www/index.html", "x\n")
    conf = (f"[site a]\nroot = {tmp_path}/www\n\n[site b]\nhost = b.test\n"
            f"root = {tmp_path}/www\n") + "".join(
        f"\n[route r{i}]\nsite = {'ab'[i // 35]}\n"
        f"exact = /a-rather-long-path-name/number-{i:03d}\nstatus = 204\n"
        for i in range(70))
    (tmp_path / "c.conf").write_text(conf)
    with Appliance(args=["--config", str(tmp_path / "c.conf")], demo=False) as a:
        assert get(a, "/a-rather-long-path-name/number-069", "b.test")[0] == 204
        h = a.telemetry("/ewyk/http")
        in_http = [k for k, v in h.items() if isinstance(v, dict) and
                   k.startswith(("route_", "site_"))]
        assert h["routes_total"] >= 71 and len(in_http) == 32, (h["routes_total"], len(in_http))
        routes = all_routes(a)
        assert routes["site_b_route_a_rather_long_path_name_number_069"]["requests_reqs"] == 1
        assert a.telemetry(f"/ewyk/routes,{(h['routes_total'] + 31) // 32}") is None


def test_sites_over_ipv6(sites):
    status, _, body = get(sites["a"], "/", "b.example.test", "h2", ip=APP_IP6)
    assert (status, body) == (200, "site b\n")
    assert get(sites["a"], "/img/logo.txt", "c.example.test", ip=APP_IP6)[2] == \
        "the logo\n"


def reloaded(a, n):
    deadline = time.time() + 10
    while time.time() < deadline:
        if a.read_log().count("ewykd: reload") >= n:
            return a.read_log()
        time.sleep(0.1)
    raise AssertionError(a.read_log()[-2000:])


def test_reload_swaps_every_site_or_none(sites):
    a, d = sites["a"], sites["tree"]["dir"]
    write(f"{d}/b/index.html", "site b, reloaded\n")
    write(f"{d}/img/new.txt", "new logo\n")
    a.proc.send_signal(signal.SIGHUP)
    log = reloaded(a, 2)
    assert "reloaded the sites' " in log, log[-1500:]
    assert get(a, "/", "b.example.test")[2] == "site b, reloaded\n"
    assert get(a, "/img/new.txt", "a.example.test")[2] == "new logo\n"
    # One root gone: nothing is swapped, every site serves what it had.
    os.rename(f"{d}/docs", f"{d}/docs.away")
    write(f"{d}/a/index.html", "site a, not yet\n")
    try:
        a.proc.send_signal(signal.SIGHUP)
        log = reloaded(a, 4)
        assert "reload of the sites' files refused: root " + f"{d}/docs" in log, \
            log[-1500:]
        assert get(a, "/", "a.example.test")[2] == "site a\n"
        assert get(a, "/docs/", "a.example.test")[2] == "docs index\n"
    finally:
        os.rename(f"{d}/docs.away", f"{d}/docs")
    assert a.telemetry("/ewyk/info")["www"]["reload_failures_count"] == 1


@pytest.fixture(scope="module")
def plugin_routes(tmp_path_factory):
    """A site whose routes put the hello plugin's named handlers at paths
    of the configuration's choosing."""
    d = tmp_path_factory.mktemp("plugin-routes")
    write(f"{d}/www/index.html", "the site\n")
    conf = d / "ewykd.conf"
    conf.write_text(f"""[site a]
host = a.example.test
root = {d}/www

[route look]
prefix = /look
plugin = inspect
add-header = X-Route: look

[route loud]
site = a
exact = /loud
plugin = shout

[route bigz]
prefix = /bigz
plugin = big
compress = on
add-header = X-Route: bigz

[route countz]
prefix = /countz
plugin = count
compress = on
""")
    with Appliance(args=["--config", str(conf), "--plugin", HELLO], demo=False) as a:
        yield a


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_plugin_route_serves_a_named_handler(plugin_routes, proto):
    """plugin = NAME puts the handler a --plugin registered by that name
    at the route's path, at a '/' boundary, with the route's fields; a
    handler that reads its body as it comes does so there too."""
    a = plugin_routes
    status, fields, body = get(a, "/look/x/y?q=1", proto=proto)
    assert status == 200, body
    assert "path /look/x/y\n" in body and "rest /x/y\n" in body, body
    assert "query q=1\n" in body, body
    assert fields.get("x-route") == "look", fields
    status, _, body = get(a, "/lookout", proto=proto)	# no boundary: the site's
    assert status == 404, body
    status, _, body = get(a, "/loud", proto=proto,
                          extra=("--data-binary", "make it loud"))
    assert (status, body) == (200, "MAKE IT LOUD"), body


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_compress_gzips_a_handlers_text(plugin_routes, proto):
    """compress = on on a plugin's route: a handler's bytes (borrowed,
    given back at once) deflated whole, a source's deflated as it streams;
    each gunzips to what the handler made; identity without
    Accept-Encoding; what the handler lent all comes back."""
    a = plugin_routes
    url = f"http://{APP_IP}"
    big = bytes(ord("a") + i % 26 for i in range(64 * 1024))
    lines = "".join(f"{i}\n" for i in range(1, 5001)).encode()
    status, f, body = fetch_raw(a, f"{url}/bigz?kb=64", "Accept-Encoding: gzip",
                                proto=proto)
    assert status == 200 and f.get("content-encoding") == "gzip", f
    assert f.get("x-route") == "bigz" and "accept-encoding" in f.get("vary", "").lower(), f
    assert gzip.decompress(body) == big and len(body) < len(big) // 20
    assert int(f["content-length"]) == len(body)
    status, f, body = fetch_raw(a, f"{url}/countz?n=5000", "Accept-Encoding: gzip",
                                proto=proto)
    assert status == 200 and f.get("content-encoding") == "gzip", f
    assert gzip.decompress(body) == lines
    status, f, body = fetch_raw(a, f"{url}/bigz?kb=64", proto=proto)
    assert "content-encoding" not in f and body == big, f
    status, f, body = fetch_raw(a, f"{url}/hello/stats")
    lent, returned = body.decode().split()[1::2]
    assert lent == returned, body


def test_plugin_route_without_its_handler_is_refused(tmp_path):
    """A route naming a handler no --plugin registered ends the start with
    one line naming the route and the name, status 2."""
    write(f"{tmp_path}/www/index.html", "x\n")
    conf = tmp_path / "c.conf"
    conf.write_text(f"[site a]\nroot = {tmp_path}/www\n\n[route r]\n"
                    "prefix = /x\nplugin = nosuch\n")
    rc, _, err, _ = start(["--config", str(conf), "--plugin", HELLO])
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert "[route r] plugin nosuch: no --plugin registered a handler by that name" \
        in lines[0], lines[0]


# A text answer worth compressing: 300 KB of log-like lines.
TEXT = "".join(f"{i:06d} GET /api/items/{i * 7919 % 1000} 200 {i * 31 % 997} ms\n"
               for i in range(8000))


def fetch_raw(a, url, *headers, method="GET", proto="h1"):
    """(status, fields in lower case, body bytes as sent) with curl, no
    decoding."""
    args = ["curl", "-sS", "-m", "20"] + (["-I"] if method == "HEAD" else
                                          ["-D", "-", "-o", "-", "-X", method])
    if proto == "h2":
        args.append("--http2-prior-knowledge")
    for h in headers:
        args += ["-H", h]
    r = subprocess.run(["ip", "netns", "exec", a.client, *args, url],
                       capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    head, _, body = r.stdout.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        fields.setdefault(k.strip().lower(), v.strip())
    return int(lines[0].split()[1]), fields, body


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_compress_gzips_an_upstreams_text(sites, proto):
    """compress = on: an upstream's text answer is gzipped for a client
    that takes gzip (Content-Encoding, Vary, its ETag made weak, no
    length), as small as nginx's own gzip at level 6 for the same bytes;
    left as it is without Accept-Encoding, with gzip;q=0, for a type that
    is not text, and for a range."""
    a = sites["a"]
    url = f"http://{APP_IP}/zip/text.txt"
    host = "Host: c.example.test"
    before = a.telemetry("/ewyk/http")
    status, f, body = fetch_raw(a, url, host, "Accept-Encoding: gzip, br",
                                proto=proto)
    assert status == 200, f
    assert f.get("content-encoding") == "gzip", f
    assert "accept-encoding" in f.get("vary", "").lower(), f
    assert "content-length" not in f, f
    assert f.get("etag", "").startswith('W/"'), f
    assert gzip.decompress(body) == TEXT.encode()
    _, nf, nginx_gz = fetch_raw(a, f"http://{HOST_IP}:{NGINX_PORT}/gz/text.txt",
                                "Accept-Encoding: gzip")
    assert nf.get("content-encoding") == "gzip", nf
    assert len(body) <= len(nginx_gz), (len(body), len(nginx_gz))
    after = a.telemetry("/ewyk/http")
    assert after["compressed_answers_count"] == before["compressed_answers_count"] + 1
    assert after["compress_in_bytes"] - before["compress_in_bytes"] == len(TEXT)
    for extra in ((), ("Accept-Encoding: gzip;q=0, identity",),
                  ("Accept-Encoding: gzip", "Range: bytes=0-99")):
        status, f, body = fetch_raw(a, url, host, *extra, proto=proto)
        assert "content-encoding" not in f, (extra, f)
        assert body == TEXT.encode()[:len(body)] and status in (200, 206), extra
    _, f, body = fetch_raw(a, f"http://{APP_IP}/zip/blob.bin", host,
                           "Accept-Encoding: gzip", proto=proto)
    assert "content-encoding" not in f and body == TEXT.encode(), f
    status, f, body = fetch_raw(a, url, host, "Accept-Encoding: *", method="HEAD",
                                proto=proto)
    assert status == 200 and f.get("content-encoding") == "gzip" and body == b"", f
    assert a.telemetry("/ewyk/http")["compress_streams"] == 0


def test_compress_is_refused_on_a_status_route(cc_ns, tmp_path):
    rc, _, err = check(cc_ns, SITE.format(d=tmp_path) +
                       "[route r]\nprefix = /x\nstatus = 404\ncompress = on\n",
                       tmp_path)
    assert rc == 2 and "compress is for an upstream's or a plugin's answers" in err, err


def check(ns, conf_text, tmp_path, *args):
    """ewykd --check-config on a file of conf_text: (exit status, stdout,
    stderr)."""
    p = tmp_path / "c.conf"
    p.write_text(conf_text)
    return check_config(ns, "--config", str(p), *args)


SITE = "[site a]\nroot = {d}\n"


@pytest.mark.parametrize("body,words", [
    ("[site]\n", ":1: [site] needs a name"),
    ("[site a b]\n", ":1: [site a b]: expected [KIND] or [KIND NAME]"),
    ("[site  a]\n", ":1: [site  a]: expected"),
    ("[site a]\n[site a]\n", ":2: section [site a] given twice (first on line 1)"),
    ("[place a]\n", ":1: unknown section [place a]"),
    ("[ewykd x]\n", ":1: [ewykd x]: [ewykd] has no name"),
    (SITE + "colour = red\n", ":3: [site a] unknown key 'colour'"),
    (SITE + "host = a..test\n", ":3: [site a] host: 'a..test' is not a host name"),
    (SITE + "[site b]\nhost = x.test\nhost = X.test\n",
     "[site b]: host x.test is [site b]'s already"),
    (SITE + "[site b]\nroot = {d}\n", "[site b]: no host"),
    (SITE + "tls-cert = /x.pem\n", "[site a]: tls-cert and tls-key come together"),
    (SITE + "[route r]\nprefix = /x\n", "[route r]: needs prefix or exact, and one of"),
    (SITE + "[route r]\nprefix = x\nstatus = 404\n", "prefix: a path that begins with '/'"),
    (SITE + "[route r]\nprefix = /x\nexact = /y\n", "exact: a route has one prefix or exact"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nroot = {d}\n",
     "root: a route does one thing"),
    (SITE + "[route r]\nprefix = /x\nstatus = 99\n", "status: a status code from 200"),
    (SITE + "[route r]\nprefix = /x\nredirect = 200 /y\n", "redirect: CODE URL"),
    (SITE + "[route r]\nsite = z\nprefix = /x\nstatus = 404\n", "site z: no such [site]"),
    (SITE + "[route r]\nprefix = /x\nroot = {d}\nstrip-prefix = on\n",
     "strip-prefix is for an upstream"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nadd-header = Content-Length: 1\n",
     "add-header: content-length is the server's own field"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nadd-header = X-A:b\n",
     "add-header: NAME: VALUE"),
    (SITE + "[route r]\nprefix = /x\nupstream = ng\ncompress = yes\n",
     "compress: on or off"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nwebsocket = on\n",
     "[route r]: websocket is for an upstream"),
    (SITE + "[route r]\nprefix = /x\nupstream = ng\nwebsocket = yes\n",
     "websocket: on or off"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nlimit-rps = 0\n",
     ":6: [route r] limit-rps: a number from 1"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nlimit-conns = 2000000\n",
     "limit-conns: a number from 1 to 1000000"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nlimit-burst = ten\n",
     "limit-burst: a number from 0"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nlimit-burst = 5\n",
     "[route r]: limit-burst is a burst beyond limit-rps, which is not given"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\n[route s]\nprefix = /x\nstatus = 403\n",
     "[route s]: prefix /x is [route r]'s already"),
    (SITE + "[route r]\nprefix = /x\nupstream = nobody\n", "[route r] upstream: nobody: no such --upstream"),
    (SITE + "[route r]\nprefix = /x\nstatus = 404\nsite = a\nsite = a\n",
     ":7: site given twice (first on line 6)"),
    ("[route r]\nprefix = /x\nstatus = 404\n", "routes belong to sites"),
])
def test_bad_sites_are_refused_with_file_line_and_key(cc_ns, tmp_path, body, words):
    rc, out, err = check(cc_ns, body.format(d=tmp_path), tmp_path)
    lines = err.strip().splitlines()
    assert rc == 2, (out, err)
    assert len(lines) == 1 and lines[0].startswith("ewykd: "), err
    assert words in lines[0], lines[0]
    assert "configuration good" not in out


def test_www_with_sites_is_refused(cc_ns, tmp_path):
    rc, _, err = check(cc_ns, SITE.format(d=tmp_path), tmp_path, "--www", str(tmp_path))
    assert rc == 2 and "with [site] sections: each site names its own root" in err


def test_missing_root_is_refused_by_check_config(cc_ns, tmp_path):
    rc, _, err = check(cc_ns, SITE.format(d=tmp_path / "nowhere"), tmp_path)
    assert rc == 2 and "[site a] root " in err and "nowhere" in err, err


def test_hundreds_of_sections_and_comments_read_back_the_same(cc_ns, tmp_path):
    """A file of 300 sites and 300 routes, comments on lines of their own
    (';' or '#'), a ';' kept inside a value; --check-config prints it as a
    file that checks again to the same."""
    d = tmp_path / "www"
    write(str(d / "index.html"), "x\n")
    parts = ["; many sites\n"]
    for i in range(300):
        parts.append(f"[site s{i}]\n# site {i}\nhost = s{i}.example.test\nroot = {d}\n")
        parts.append(f"[route r{i}]\nsite = s{i}\nprefix = /r{i}\n"
                     f"add-header = X-N: {i}; n\nstatus = 204\n")
    rc, out, err = check(cc_ns, "".join(parts), tmp_path)
    assert rc == 0, err
    assert "; sites: 300, routes: 300, trees: 1 " in out
    assert "add-header = X-N: 299; n" in out
    printed = "\n".join(line for line in out.splitlines()
                        if not line.startswith("; checked") and
                        not line.startswith("; configuration good"))
    rc2, out2, err2 = check(cc_ns, printed, tmp_path)
    assert rc2 == 0, err2
    strip = lambda o: [l for l in o.splitlines() if not l.startswith("; configuration good")]
    assert strip(out2) == strip(out)


# Upstream pools ([upstream NAME]) ---------------------------------------------

POOL_SERVERS = app_servers(HOST_IP, (8101, 8102, 8103))

POOLS_CONF = """
[site any]

[upstream weighted]
server = {h}:8101 weight=3
server = {h}:8102

[upstream hashed]
server = {h}:8101
server = {h}:8102
balance = hash
hash-key = header X-User

[upstream dead]
server = {h}:8109
server = {h}:8102
health-fails = 3
health-interval-ms = 60000

[upstream backed]
server = {h}:8109
server = {h}:8103 backup

[upstream spare]
server = {h}:8101
server = {h}:8103 backup

[upstream busy]
server = {h}:8101
server = {h}:8102
balance = least-conn

[upstream checked]
server = {h}:8101
server = {h}:8104
health-uri = /health?from=ewykd
health-fails = 2
health-interval-ms = 200

"""


# Limits per client address: a rate with a burst (a route per protocol,
# each test its client's own allowance), requests at once.
for proto in ("h1", "h2"):
    POOLS_CONF += f"""
[route rate-{proto}]
prefix = /rate-{proto}
status = 204
limit-rps = 1
limit-burst = 2
"""
POOLS_CONF += """
[route one-h1]
prefix = /one-h1
upstream = spare
strip-prefix = on
limit-conns = 1

[route one-h2]
prefix = /one-h2
upstream = spare
strip-prefix = on
limit-conns = 1
"""

# A route /NAME to each pool, its prefix stripped.
POOLS_CONF += "".join(f"\n[route {n}]\nprefix = /{n}\nupstream = {n}\nstrip-prefix = on\n"
                      for n in ("weighted", "hashed", "dead", "backed", "spare", "busy",
                                "checked"))


def pools_serving(tmp_path_factory, *args):
    """An appliance of POOLS_CONF (and args) with its pools' servers."""
    d = tmp_path_factory.mktemp("pools")
    conf = d / "pools.conf"
    conf.write_text(POOLS_CONF.format(h=HOST_IP))
    a = Appliance(args=["--config", str(conf), *args], demo=False, client_ns=True)
    servers = None
    try:
        a.start()
        servers = a.ns_popen_python(POOL_SERVERS)
        ready(servers)
        yield a
    finally:
        if servers is not None:
            servers.send_signal(signal.SIGTERM)
            servers.wait(10)
        a.close()


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    yield from pools_serving(tmp_path_factory)


def bodies(a, path, n, proto="h1", headers=()):
    """The bodies of n GETs of path on one connection: curl's one after
    the other over HTTP/1.1, nghttp's side by side over HTTP/2 (curl
    7.88's --http2-prior-knowledge breaks on reusing its connection: curl
    issue 10634)."""
    args = ["nghttp"] if proto == "h2" else ["curl", "-sS", "-m", "20", "--http1.1"]
    for h in headers:
        args += ["-H", h]
    urls = [a.url(f"{path}{i}") for i in range(n)]	# nghttp fetches a URL once
    r = a.ns(args + urls)
    return r.stdout.splitlines()


def servers_of(lines):
    return [int(line.split()[1]) for line in lines]


def pool_stats(a, name):
    return a.telemetry("/ewyk/upstreams")[f"upstream_{name}"]


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_round_robin_follows_the_weights(pools, proto):
    got = servers_of(bodies(pools, "/weighted/x", 20, proto))
    assert len(got) == 20
    # Smooth weighted round robin: 3 to 1 in every run of four.
    assert got.count(8101) == 15 and got.count(8102) == 5, got


def test_hash_keeps_a_key_on_one_server(pools):
    seen = {}
    for user in ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"):
        got = set(servers_of(bodies(pools, "/hashed/x", 4, headers=[f"X-User: {user}"])))
        assert len(got) == 1, (user, got)
        seen[user] = got.pop()
    assert set(seen.values()) == {8101, 8102}, seen	# eight keys, both used


def test_a_dead_server_costs_its_threshold_then_nothing(pools):
    """Nothing listens on 8109: a request sent there fails to connect and
    goes to the other server, never to the client as an error; after
    health-fails (3) such failures the server is out, and no request tries
    it again until health-interval-ms has passed."""
    got = servers_of(bodies(pools, "/dead/x", 12))
    assert got == [8102] * 12
    st = pool_stats(pools, "dead_0")
    assert st["failovers_reqs"] == 3 and st["taken_out_count"] == 1, st
    assert st["out_shards"] == 1 and st["error_connect_refused_reqs"] == 3, st
    assert servers_of(bodies(pools, "/dead/y", 6)) == [8102] * 6
    assert pool_stats(pools, "dead_0")["failovers_reqs"] == 3


def test_backup_only_while_no_other_is_in(pools):
    assert set(servers_of(bodies(pools, "/spare/x", 6))) == {8101}
    assert servers_of(bodies(pools, "/backed/x", 6)) == [8103] * 6


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_least_conn_uses_both_servers(pools, proto):
    """One request at a time: each finds both servers idle, and the tie
    goes to the first; the test is that it picks among the servers in
    and answers (its choice under load is the unit's)."""
    got = servers_of(bodies(pools, "/busy/x", 4, proto))
    assert len(got) == 4 and set(got) <= {8101, 8102}


@pytest.mark.parametrize("body,words", [
    ("[upstream u]\n", "[upstream u]: no server"),
    ("[upstream u]\nserver = 198.18.0.1\n", "[upstream u] server 198.18.0.1"),
    ("[upstream u]\nserver = 198.18.0.1:80 weight=0\n", "weight=0: a weight from 1"),
    ("[upstream u]\nserver = 198.18.0.1:80 heavy\n", "'heavy': ADDR:PORT, then weight=N or backup"),
    ("[upstream u]\nserver = 198.18.0.1:80\nbalance = random\n", "balance: round-robin, least-conn or hash"),
    ("[upstream u]\nserver = 198.18.0.1:80\nhash-key = client\n", "hash-key is for balance = hash"),
    ("[upstream u]\nserver = 198.18.0.1:80\nprotocol = h2c\n", "protocol: only http1 is served"),
    ("[upstream u]\nserver = 198.18.0.1:80\nhealth-uri = up\n", "health-uri: a path that begins with '/'"),
    ("[upstream u]\nserver = 198.18.0.1:80\nhealth-uri = /a b\n", "health-uri: a path (and query) without blanks"),
    ("[upstream u]\nserver = 198.18.0.1:80\nhealth-interval-ms = 0\n", "health-interval-ms: a number from 1"),
    ("[upstream u]\nserver = 10.0.0.1:80\n", "is not on the link"),
])
def test_bad_pools_are_refused(cc_ns, tmp_path, body, words):
    rc, out, err = check(cc_ns, body, tmp_path, "--demo-routes")
    assert rc == 2, (out, err)
    assert words in err, err


def forwarded_headers(a, proto, *fields):
    """The headers the pools' server saw for a request through /spare/
    with fields (as curl -H takes them): name -> list of values."""
    args = ["curl", "-sS", "-m", "10", "-H", "Host: app.example.test"]
    for fld in fields:
        args += ["-H", fld]
    args.append("--http2-prior-knowledge" if proto == "h2" else "--http1.1")
    r = a.ns(args + [a.url("/spare/headers")])
    got = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(": ")
        got.setdefault(k.lower(), []).append(v)
    return got


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_forwarded_request_keeps_host_and_says_who_asked(pools, proto):
    """The upstream sees the client's Host, and who asked and how in
    X-Forwarded-For, X-Forwarded-Proto, Forwarded and Via; what the client
    itself said of who it is is not passed on (no address is trusted)."""
    got = forwarded_headers(pools, proto, "X-Forwarded-For: 203.0.113.9",
                            "Forwarded: for=203.0.113.9", "Via: 1.0 elsewhere")
    assert got["host"] == ["app.example.test"], got
    assert got["x-forwarded-for"] == [HOST_IP], got
    assert got["x-forwarded-proto"] == ["http"], got
    assert got["forwarded"] == [f'for={HOST_IP};proto=http;host="app.example.test"'], got
    assert got["via"] == ["1.0 elsewhere", "1.1 ewyk"], got


@pytest.fixture(scope="module")
def trusting(tmp_path_factory):
    """The pools behind ewykd that trusts the client's address (a proxy in
    front of it, as it were) and a block of IPv6 beside it."""
    yield from pools_serving(tmp_path_factory, "--trusted-forwarder", f"{HOST_IP}/32",
                             "--trusted-forwarder", "2001:db8::/32")


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_a_trusted_forwarders_fields_go_first(trusting, proto):
    """From a trusted client, its X-Forwarded-For and Forwarded are passed
    on with ewykd's after them (one list, in order), and its
    X-Forwarded-Proto and -Host stand for ewykd's."""
    got = forwarded_headers(trusting, proto, "X-Forwarded-For: 203.0.113.9",
                            "Forwarded: for=203.0.113.9;proto=https",
                            "X-Forwarded-Proto: https", "X-Forwarded-Host: app.example.test")
    assert got["x-forwarded-for"] == ["203.0.113.9", HOST_IP], got
    assert got["forwarded"] == [
        "for=203.0.113.9;proto=https",
        f'for={HOST_IP};proto=http;host="app.example.test"'], got
    assert got["x-forwarded-proto"] == ["https"], got
    assert got["x-forwarded-host"] == ["app.example.test"], got
    # Without fields of its own, a trusted client gets ewykd's alone.
    got = forwarded_headers(trusting, proto)
    assert got["x-forwarded-for"] == [HOST_IP] and got["x-forwarded-proto"] == ["http"], got


def test_a_client_outside_the_blocks_is_not_trusted(tmp_path_factory):
    """A block next to the client's address (198.18.0.128/25 and an IPv6
    one) trusts nothing of it: its fields are dropped."""
    for a in pools_serving(tmp_path_factory, "--trusted-forwarder", "198.18.0.128/25",
                           "--trusted-forwarder", "::ffff:198.18.0.1/128"):
        got = forwarded_headers(a, "h1", "X-Forwarded-For: 203.0.113.9",
                                "X-Forwarded-Proto: https", "X-Forwarded-Host: evil.test")
        assert got["x-forwarded-for"] == [HOST_IP], got
        assert got["x-forwarded-proto"] == ["http"], got
        assert "x-forwarded-host" not in got, got


@pytest.mark.parametrize("value,words", [
    ("198.18.0.1/33", "'198.18.0.1/33' is not an address or ADDR/LEN"),
    ("2001:db8::/129", "'2001:db8::/129' is not an address or ADDR/LEN"),
    ("example.test", "'example.test' is not an address or ADDR/LEN"),
    ("198.18.0.0/", "'198.18.0.0/' is not an address or ADDR/LEN"),
])
def test_bad_trusted_forwarders_are_refused(cc_ns, value, words):
    rc, out, err = check_config(cc_ns, "--demo-routes", "--trusted-forwarder", value)
    assert rc == 2 and words in err, (out, err)


def test_trusted_forwarders_read_back(cc_ns):
    rc, out, err = check_config(cc_ns, "--demo-routes", "--trusted-forwarder",
                                "198.18.0.77/24", "--trusted-forwarder", "2001:DB8::1")
    assert rc == 0, err
    assert "trusted-forwarder = 198.18.0.0/24\n" in out, out
    assert "trusted-forwarder = 2001:db8::1/128\n" in out, out


# Limits per client address ([route] limit-rps, limit-burst, limit-conns) --------

def codes(a, path, n, proto):
    """The statuses of n requests of path at once: curl's one after the
    other on one connection over HTTP/1.1, h2load's as concurrent streams
    of one connection over HTTP/2 (its summary: counts by class)."""
    if proto == "h2":
        r = a.ns(["h2load", "-n", str(n), "-c", "1", "-m", str(n), a.url(path)])
        line = next(l for l in r.stdout.splitlines() if l.startswith("status codes:"))
        return line
    r = a.ns(["curl", "-sS", "-m", "10", "--http1.1", "-w", "%{http_code}\\n"] +
             ["-o", "/dev/null", a.url(path)] * n)	# an -o per URL
    return r.stdout.split()


def refused(a, which):
    return a.telemetry("/ewyk/http")[f"limit_{which}_refused_reqs"]


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_rate_limit_answers_429_beyond_the_burst(pools, proto):
    """limit-rps = 1 with limit-burst = 2: three requests at once are
    served, the rest of eight within the second get 429 with Retry-After;
    a second later one more is served."""
    before = refused(pools, "rate")
    t0 = time.monotonic()
    got = codes(pools, f"/rate-{proto}/x", 8, proto)
    took = time.monotonic() - t0
    if proto == "h2":
        assert got == "status codes: 3 2xx, 0 3xx, 5 4xx, 0 5xx", got
    else:
        assert got[:3] == ["204"] * 3, got
        # Each later one gets 429 unless a second has passed since the
        # first (then one more is on time).
        assert got[3:].count("429") >= 5 - int(took), (got, took)
    assert refused(pools, "rate") - before == (5 if proto == "h2" else got.count("429"))
    r = pools.ns(["curl", "-sS", "-m", "10", "-D", "-", "-o", "/dev/null",
                  pools.url(f"/rate-{proto}/y")])
    status, fields, _ = parse(r.stdout)
    if status == 429:
        assert fields["retry-after"] == "1", fields
    else:	# the run above took a second: its allowance came back
        assert took >= 0.9 and status == 204, (status, took)
    time.sleep(1.1)
    assert codes(pools, f"/rate-{proto}/z", 1, proto) in (["204"], "status codes: 1 2xx, 0 3xx, 0 4xx, 0 5xx")


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_limit_conns_refuses_the_second_request_at_once(pools, proto):
    """limit-conns = 1 on a route to an application that takes 1.5 s: of
    two requests at once (two connections over HTTP/1.1, two streams of
    one over HTTP/2), one is answered, the other gets 429; once it is,
    the next is served (its place given back)."""
    before = refused(pools, "conns")
    path = f"/one-{proto}/slow"
    if proto == "h2":
        got = codes(pools, path, 2, proto)
        assert got == "status codes: 1 2xx, 0 3xx, 1 4xx, 0 5xx", got
    else:
        procs = [pools.ns_popen(["curl", "-sS", "-m", "10", "-o", "/dev/null",
                                 "-w", "%{http_code}", pools.url(path)])
                 for _ in range(2)]
        got = sorted(p.communicate(timeout=20)[0].strip() for p in procs)
        assert got == ["200", "429"], got
    assert refused(pools, "conns") - before == 1
    assert codes(pools, f"/one-{proto}/x", 1, proto) in (["200"], "status codes: 1 2xx, 0 3xx, 0 4xx, 0 5xx")


def test_rate_limit_over_tls_and_ipv6(sites):
    """The same limit from a client over TLS (HTTP/2) and one over IPv6:
    each has its own allowance (an IPv6 client is its /64)."""
    a, tree = sites["a"], sites["tree"]
    tls = ["curl", "-sS", "-m", "10", "--cacert", tree["ca"], "--http2",
           "-w", "%{http_code}\\n", "--resolve", f"a.example.test:443:{APP_IP}"]
    r = a.ns(tls + ["-o", "/dev/null", "https://a.example.test/lim"] * 2)
    assert r.stdout.split() == ["204", "429"], r.stdout
    v6 = ["curl", "-sS", "-m", "10", "-w", "%{http_code}\\n"]
    r = a.ns(v6 + ["-o", "/dev/null", f"http://[{APP_IP6}]/lim"] * 2)
    assert r.stdout.split() == ["204", "429"], r.stdout


def until(what, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s")


def test_active_checks_take_a_dead_server_out_and_put_it_back(pools):
    """health-uri: each server is probed every health-interval-ms (200);
    8104 refuses until the test starts it: two failed probes take it out
    before any request is sent there, so requests meet no failover; once
    it answers its probe it is back, and stopped again it is taken out
    by its probes alone."""
    out = lambda: pool_stats(pools, "checked_1")["out_shards"] == 1
    until(out)
    st = pool_stats(pools, "checked_1")
    assert st["health_checks_failed_count"] >= 2, st
    assert servers_of(bodies(pools, "/checked/x", 6)) == [8101] * 6
    assert pool_stats(pools, "checked_1")["failovers_reqs"] == 0
    late = pools.ns_popen_python(app_servers(HOST_IP, (8104,)))
    try:
        ready(late)
        until(lambda: pool_stats(pools, "checked_1")["out_shards"] == 0)
        assert set(servers_of(bodies(pools, "/checked/y", 6))) == {8101, 8104}
        # Read while it answers: once it stops, two probes (400 ms) may
        # take it out before a read after the stop.
        downs = pool_stats(pools, "checked_1")["taken_out_count"]
    finally:
        late.send_signal(signal.SIGTERM)
        late.wait(10)
    until(out)
    st = pool_stats(pools, "checked_1")
    assert st["taken_out_count"] == downs + 1 and st["requests_reqs"] >= st["health_checks_count"], st
    assert pool_stats(pools, "checked_0")["out_shards"] == 0
