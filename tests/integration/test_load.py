# SPDX-License-Identifier: BSD-3-Clause
"""ewyk-load against real servers: ewykd over net_memif (ewyk-load the memif
client of ewykd's second port) and nginx over net_af_xdp (ewyk-load on one
end of a veth pair, nginx behind the other in a namespace of its own). Its
counts and checked answers must agree with what the server says it served
(ewykd's /ewyk/http, nginx's access log); its open-loop latencies must
include the time a stalled server made requests wait (ewykd stopped with
SIGSTOP for a while); bad URLs and options end it at once with one line
and exit status 2."""
import hashlib
import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import serve_module
from ewyk_harness import (APP_IP2, HOST_IP2, ROOT, WITH_BPFFS, Appliance,
                          eal_memory_args, run)
from tls_certs import CA

LOAD = os.environ.get("EWYK_LOAD", os.path.join(ROOT, "build", "app", "ewyk-load"))
PAUSE_S = 0.3


@pytest.fixture(scope="module")
def served(www):
    yield from serve_module(Appliance(www=www["dir"], second_port="peer"))


def load_cmd(a, args, json_path=None, lcores=("-l", "0"), quiet=True):
    """ewyk-load as the memif client of ewykd's second port, on CPU 0."""
    extra = ["--json", json_path] if json_path else []
    if quiet:
        extra.append("--quiet")
    return ["ip", "netns", "exec", a.client2, LOAD, *lcores, "--no-pci",
            "--file-prefix", a.prefix + "m", "--log-level", "*:warning",
            *eal_memory_args(128), "--vdev", a.memif_peer_vdev(), "--",
            "--ip", f"{HOST_IP2}/25", *extra, *args]


def run_load(cmd, json_path, timeout=60):
    r = subprocess.run(cmd, text=True, capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(json_path) as f:
        return json.load(f), r.stdout


def load_result(proc, text, json_path):
    """A background run's JSON summary, once it ended well."""
    assert proc.returncode == 0, text
    with open(json_path) as f:
        return json.load(f)


def http_counts(a):
    h = a.telemetry("/ewyk/http")
    return h["requests_reqs"], h["by_status_reqs"]


@pytest.fixture
def json_path():
    fd, path = tempfile.mkstemp(prefix="ewyk-load-", suffix=".json")
    os.close(fd)
    yield path
    os.unlink(path)


@pytest.fixture
def url_file(www):
    """Two requests in turn: a file that is there, one that is not."""
    fd, path = tempfile.mkstemp(prefix="ewyk-load-urls-")
    with os.fdopen(fd, "w") as f:
        f.write(f"# in turn\nhttp://{APP_IP2}/hello.txt\nGET http://{APP_IP2}/missing\n")
    yield path
    os.unlink(path)


@pytest.mark.parametrize("proto", [["--h1"], []], ids=["http1", "h2c"])
def test_counts_agree_with_ewykd(served, url_file, json_path, proto):
    a = served
    n = 2000
    reqs0, st0 = http_counts(a)
    out, text = run_load(load_cmd(a, [*proto, "-n", str(n), "-c", "4", "-m", "8",
                                      "-i", url_file], json_path), json_path)
    reqs1, st1 = http_counts(a)
    # The summary in h2load's words, as scripts read it.
    assert f"requests: {n} total, {n} started, {n} done, {n // 2} succeeded, " \
        f"{n // 2} failed, 0 errored, 0 timeout" in text, text
    assert f"status codes: {n // 2} 2xx, 0 3xx, {n // 2} 4xx, 0 5xx" in text, text
    assert out["requests"]["done"] == n
    assert out["status"]["2xx"] == n // 2 and out["status"]["4xx"] == n // 2, out
    assert out["errors"]["status"] == n // 2, out["errors"]
    # ewykd served exactly what ewyk-load counted.
    assert reqs1 - reqs0 == n
    assert st1["200"] - st0["200"] == n // 2
    assert st1["404"] - st0["404"] == n // 2


@pytest.mark.parametrize("proto", [["--h1", "-m", "4"], ["-m", "16"]], ids=["http1", "h2c"])
def test_bodies_checked_by_digest(served, www, json_path, proto):
    assert_bodies_checked_by_digest(served, www, json_path, proto,
                                    f"http://{APP_IP2}/big.bin")


def assert_bodies_checked_by_digest(a, www, json_path, proto, url, expect=()):
    """40 downloads of big.bin pass its digest and length; with another
    digest every answer is counted failed, by digest."""
    ok, _ = run_load(load_cmd(a, [*proto, "-n", "40", "-c", "2", *expect, "--expect-sha256",
                                  www["big_sha256"], "--expect-length",
                                  str(www["big_size"]), url], json_path), json_path)
    assert ok["requests"]["succeeded"] == 40, ok
    assert ok["bytes"]["data"] == 40 * www["big_size"], ok
    bad = hashlib.sha256(b"not the file").hexdigest()
    out, _ = run_load(load_cmd(a, [*proto, "-n", "40", "-c", "2", "--expect-sha256",
                                   bad, url], json_path), json_path)
    assert out["requests"]["failed"] == 40 and out["errors"]["digest"] == 40, out


@pytest.mark.parametrize("given", ["-d", "-i"])
@pytest.mark.parametrize("proto", [["--h1", "-m", "2"], ["-m", "4"]], ids=["http1", "h2c"])
def test_bodies_sent_whole(served, json_path, proto, given, tmp_path):
    """-d FILE, or "PUT URL FILE" lines of -i: each request sends FILE
    (100 kB: many segments, and past HTTP/2's first flow-control window)
    to /echo, which sends the body back: its digest and length say it went
    whole and in order."""
    a = served
    body = os.urandom(100_000)
    path = tmp_path / "body"
    path.write_bytes(body)
    url = f"http://{APP_IP2}/echo"
    if given == "-d":
        source = ["-d", str(path), url]
    else:
        (tmp_path / "urls").write_text(f"PUT {url} {path}\nPOST {url} {path}\n")
        source = ["-i", str(tmp_path / "urls")]
    reqs0, st0 = http_counts(a)
    out, text = run_load(load_cmd(a, [*proto, "-n", "24", "-c", "2", *source,
                                      "--expect-sha256", hashlib.sha256(body).hexdigest(),
                                      "--expect-length", str(len(body))], json_path),
                         json_path)
    reqs1, st1 = http_counts(a)
    assert out["requests"]["succeeded"] == 24, text
    assert out["bytes"]["data"] == 24 * len(body)
    assert reqs1 - reqs0 == 24 and st1["200"] - st0["200"] == 24


@pytest.mark.parametrize("proto", [["--h1"], []], ids=["http1", "h2c"])
def test_new_connection_per_request(served, json_path, proto):
    a = served
    before = a.stats()["total_conns"]
    out, _ = run_load(load_cmd(a, [*proto, "--new-conn", "-n", "300", "-c", "4",
                                   f"http://{APP_IP2}/hello.txt"], json_path), json_path)
    after = a.stats()["total_conns"]
    assert out["requests"]["succeeded"] == 300, out
    assert out["connections"]["established"] == 300, out
    assert after - before == 300


def test_open_loop_latency_includes_a_stall(served, json_path):
    """At 1000 requests a second, ewykd stopped for PAUSE_S: the requests
    due meanwhile waited for it, and their latencies say so (a closed-loop
    client would have sent none of them, and seen one slow request per
    connection)."""
    a = served
    proc = subprocess.Popen(load_cmd(a, ["--h1", "--rate", "1000", "-n", "3000", "-c", "8",
                                         f"http://{APP_IP2}/hello.txt"], json_path,
                                     quiet=False),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        assert proc.poll() is None, proc.stdout.read()
        a.proc.send_signal(signal.SIGSTOP)
        t0 = time.monotonic()
        time.sleep(PAUSE_S)
        a.proc.send_signal(signal.SIGCONT)
        paused = time.monotonic() - t0
        text, _ = proc.communicate(timeout=60)
    finally:
        a.proc.send_signal(signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = load_result(proc, text, json_path)
    lat = out["latency_us"]
    assert out["loop"] == "open" and out["requests"]["succeeded"] == 3000, out
    # The first request due in the stall waited all of it, less the 1 ms
    # between requests and the histogram's rounding (2 %); a hundredth of
    # the run (30 requests) fell in its first 30 ms and waited most of it.
    assert lat["max"] >= 0.98 * PAUSE_S * 1e6, (lat, paused)
    assert lat["p99"] >= (PAUSE_S - 0.05) * 1e6, (lat, paused)
    assert "latency: p50 " in text and "p99.9 " in text and " max " in text, text
    # A progress line each second of the 3-second run, the count rising.
    done = [int(line.split(" req/s, ")[1].split()[0]) for line in text.splitlines()
            if line.startswith("progress: ")]
    assert len(done) >= 2 and done == sorted(done) and done[-1] > 0, text


def test_idle_connections_give_back_their_state(served, json_path):
    """2000 keep-alive connections, each answered once, then held idle
    (--hold) while 40 requests a second go to them in turn: after a second
    idle, ewykd's connections hold no HTTP/1.1 state and, past the 1024
    that may keep them, no TCP rings; the sampled ones take theirs again
    and are answered."""
    a = served
    n = 2000
    proc = subprocess.Popen(load_cmd(a, ["--h1", "-n", str(n), "-c", str(n), "--hold", "8",
                                         "--sample", "40", "--timeout", "20",
                                         f"http://{APP_IP2}/hello.txt"], json_path,
                                     quiet=False),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        for line in proc.stdout:
            if line.startswith("holding: "):
                break
        time.sleep(2.5)
        http, tcp = a.telemetry("/ewyk/http"), a.telemetry("/ewyk/tcp")
        holding = proc.poll() is None
        text, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = load_result(proc, text, json_path)
    assert holding, text  # the figures are of the held connections
    # Answered: the first request of each, and every sampled one.
    assert out["requests"]["succeeded"] == out["requests"]["started"] > n, out
    assert out["requests"]["failed"] == out["requests"]["errored"] == 0, out
    # At most the last second's sample (40) holds its state again.
    assert http["h1_released_conns"] >= n - 50, http
    assert tcp["open_conns"] >= n, tcp
    assert tcp["conn_rings_used_count"] <= 1024 + 50, tcp


def test_unreachable_server_ends_the_run(served, json_path):
    """Nobody answers ARP for the server's address: after --timeout every
    attempt fails, a request is given up for each, and the run ends with
    them counted as connect errors."""
    a = served
    t0 = time.monotonic()
    out, text = run_load(load_cmd(a, ["--h1", "--timeout", "1", "-n", "20", "-c", "2",
                                      "http://198.18.0.131/hello.txt"], json_path),
                         json_path, timeout=30)
    assert time.monotonic() - t0 < 15
    assert out["requests"]["errored"] == 20 and out["requests"]["done"] == 0, out
    assert out["errors"]["connect"] >= 20, out["errors"]
    assert out["connections"]["established"] == 0


@pytest.fixture(scope="module")
def served2(www):
    """ewykd with two shards: its memif peer port has two queue pairs."""
    yield from serve_module(Appliance(www=www["dir"], second_port="peer",
                                      lcores="0@0,1@1,2@1", args=("--shards", "2")))


def test_two_worker_lcores(served2, json_path):
    """ewyk-load on two worker lcores (and a main one for the progress
    lines): each its shard on its queue pair, facing one of ewykd's."""
    a = served2
    n = 2000
    reqs0, st0 = http_counts(a)
    out, text = run_load(load_cmd(a, ["--h1", "-n", str(n), "-c", "4", "-m", "2",
                                      f"http://{APP_IP2}/hello.txt"], json_path,
                                  lcores=("--lcores", "0@0,1@0,2@0")), json_path)
    reqs1, st1 = http_counts(a)
    assert out["workers"] == 2 and out["requests"]["succeeded"] == n, out
    assert out["done_by_worker"] == [n // 2, n // 2], out["done_by_worker"]
    assert reqs1 - reqs0 == n and st1["200"] - st0["200"] == n
    shards = a.telemetry("/ewyk/shards")
    assert all(shards[f"shard_{i}"]["requests_reqs"] == n // 2 for i in (0, 1)), shards


BAD = [
    (["-n", "x", "http://198.18.0.2/"], "-n 'x'"),
    (["http://www.example.org/"], "resolves no names"),
    (["ftp://198.18.0.2/"], "not http[s]://"),
    (["https://198.18.0.2/", "http://198.18.0.2/"], "every URL has the first one's scheme"),
    (["--sni", "ewyk.test", "http://198.18.0.2/"], "for https:// URLs"),
    (["--sni", "198.18.0.2", "https://198.18.0.2/"], "--sni '198.18.0.2'"),
    (["--tls-priority", "NORMAL:+VERS-TLS1.0", "https://198.18.0.2/"],
     "older than TLS 1.2"),
    (["--tls-priority", "BOGUS", "https://198.18.0.2/"], "--tls-priority 'BOGUS'"),
    (["http://198.18.0.2:99999/"], "port"),
    (["http://198.18.0.2/", "http://198.18.0.3/"], "every URL"),
    ([], "no URL"),
    (["--bogus", "http://198.18.0.2/"], "unknown option '--bogus'"),
    (["-c"], "needs a value"),
    (["--ip", "198.18.0.1", "http://198.18.0.2/"], "--ip"),
    (["--new-conn", "-m", "4", "http://198.18.0.2/"], "--new-conn"),
    (["-n", "2", "-c", "4", "http://198.18.0.2/"], "fewer than -c"),
    (["--expect-sha256", "abc", "http://198.18.0.2/"], "--expect-sha256"),
    (["-t", "2", "http://198.18.0.2/"], "worker lcores"),
    (["http://[2001:2::2]/"], "--ip6"),
    (["-d", "/nonexistent/body", "http://198.18.0.2/"], "/nonexistent/body"),
    (["--ip-count", "0", "http://198.18.0.2/"], "--ip-count '0'"),
    (["--ip-count", "65", "http://198.18.0.2/"], "--ip-count '65'"),
    (["--ip", "198.18.0.250/24", "--ip-count", "8", "http://198.18.0.2/"],
     "leave its subnet"),
    (["--ip-count", "4", "http://198.18.0.3/"], "server's address"),
    (["--ip", "198.18.0.129/25", "http://198.18.0.2/"], "off --ip's subnet"),
    (["--ip6", "2001:2::1/64", "http://[2001:3::2]/"], "off --ip6's prefix"),
]


@pytest.mark.parametrize("args,says", BAD, ids=[" ".join(b[0]) or "none" for b in BAD])
def test_bad_options_one_line_exit_2(args, says):
    r = run([LOAD, "--", *args], check=False, timeout=20)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ewyk-load: "), r.stderr
    assert says in lines[0], lines[0]
    assert r.stdout == ""


def test_help_lists_every_option():
    r = run([LOAD, "--help"], check=False)
    assert r.returncode == 0
    for opt in ("--ip", "--ip-count", "--ip6", "--port-id", "--mtu", "-n", "-c", "-m", "-D", "--h1",
                "--rate", "--new-conn", "-d", "-i", "--expect-sha256", "--json", "--hold",
                "--sni", "--tls-priority"):
        assert f"  {opt} " in r.stdout, opt


# -- a kernel server over net_af_xdp ------------------------------------------

NGINX_CONF = """user root;
worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log crit;
events {{ worker_connections 1024; }}
http {{
	log_format peer '$remote_addr $remote_port "$request" $status';
	log_format tls '$connection $ssl_protocol $ssl_session_reused $server_protocol $status '
		'$ssl_server_name';
	access_log {d}/access.log;
	access_log {d}/peers.log peer;
	keepalive_requests 1000000;
	server {{ listen 198.18.0.2:80; root {www}; }}
	server {{ listen 198.18.0.2:81 http2; root {www}; }}
	server {{
		listen 198.18.0.2:443 ssl http2;
		ssl_certificate {d}/ec.pem;
		ssl_certificate_key {d}/ec.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		access_log {d}/tls.log tls;
		root {www};
	}}
}}
"""


@pytest.fixture(scope="module")
def nginx(www):
    """nginx in namespace NS on veth1 (198.18.0.2); the other end, veth0 in
    NSc, left without an address for ewyk-load's net_af_xdp."""
    ns = f"ewyk-ld{os.getpid()}"
    d = tempfile.mkdtemp(prefix="ewyk-load-nginx-")
    os.chmod(d, 0o755)
    proc = None
    try:
        run(["ip", "netns", "add", ns])
        run(["ip", "netns", "add", ns + "c"])
        run(["ip", "-n", ns, "link", "add", "veth1", "type", "veth", "peer", "name",
             "veth0", "netns", ns + "c"])
        run(["ip", "-n", ns, "addr", "add", "198.18.0.2/24", "dev", "veth1"])
        for n, dev in ((ns, "veth1"), (ns + "c", "veth0")):
            run(["ip", "-n", n, "link", "set", dev, "up"])
            run(["ip", "-n", n, "link", "set", "lo", "up"])
        # Whole checksums towards af_xdp, which takes no partial ones.
        run(["ip", "netns", "exec", ns, "ethtool", "-K", "veth1", "tx", "off"])
        CA(d).issue("ec", ip="198.18.0.2")  # ec.pem, ec.key: port 443's
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(NGINX_CONF.format(d=d, www=www["dir"]))
        proc = subprocess.Popen(["ip", "netns", "exec", ns, "nginx", "-c",
                                 os.path.join(d, "nginx.conf")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        for _ in range(50):
            if run(["ip", "netns", "exec", ns, "curl", "-s", "-o", "/dev/null",
                    "http://198.18.0.2/hello.txt"], check=False).returncode == 0:
                break
            time.sleep(0.1)
        # nginx logs after it answers: the readiness request's line must be
        # in before a test counts the log's lines from its length.
        log = os.path.join(d, "access.log")
        for _ in range(50):
            if os.path.exists(log) and access_statuses(log):
                break
            time.sleep(0.1)
        yield {"ns": ns, "client": ns + "c", "log": log,
               "peers": os.path.join(d, "peers.log"), "tls_log": os.path.join(d, "tls.log")}
    finally:
        if proc is not None:
            proc.send_signal(signal.SIGQUIT)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        run(["ip", "netns", "del", ns], check=False)
        run(["ip", "netns", "del", ns + "c"], check=False)
        import shutil
        shutil.rmtree(d, ignore_errors=True)


def access_statuses(path):
    """The statuses of nginx's access log (combined format), in order."""
    with open(path) as f:
        return [line.split('"')[2].split()[0] for line in f if line.strip()]


def run_load_af_xdp(nginx, json_path, args, ip="198.18.0.1"):
    """ewyk-load on veth0 over net_af_xdp, ip its (first) address."""
    prefix = f"ewyk-ldc{os.getpid()}"
    cmd = ["ip", "netns", "exec", nginx["client"], WITH_BPFFS, LOAD, "-l", "0",
           "--no-pci", "--file-prefix", prefix, "--log-level", "*:warning",
           *eal_memory_args(128), "--vdev",
           "net_af_xdp0,iface=veth0,start_queue=0,queue_count=1", "--",
           "--ip", f"{ip}/24", "--quiet", "--json", json_path, *args]
    try:
        return run_load(cmd, json_path)
    finally:
        run(["rm", "-rf", f"/var/run/dpdk/{prefix}"], check=False)


@pytest.mark.parametrize("proto,port", [(["--h1", "-m", "4"], 80), (["-m", "10"], 81)],
                         ids=["http1", "h2c"])
def test_counts_agree_with_nginx_over_af_xdp(nginx, www, json_path, proto, port):
    before = len(access_statuses(nginx["log"]))
    n = 1000
    out, text = run_load_af_xdp(nginx, json_path, [
        *proto, "-n", str(n), "-c", "4", "--expect-sha256",
        hashlib.sha256(b"hello from ewyk\n").hexdigest(),
        f"http://198.18.0.2:{port}/hello.txt"])
    assert out["requests"]["succeeded"] == n, text
    assert out["status"]["2xx"] == n
    # nginx writes its log line after the answer: give it a moment.
    for _ in range(20):
        got = access_statuses(nginx["log"])[before:]
        if len(got) >= n:
            break
        time.sleep(0.1)
    assert len(got) == n and set(got) == {"200"}, (len(got), set(got))


# nginx's side: the first ACK that follows a connection's FIN from nginx is
# dropped, once, so that nginx sends its FIN again; the client's kernel, which would answer
# a FIN once ewyk-load is gone with a RST, sends none.
LOST_LAST_ACK = """
table ip lost_last_ack {
	set finned { type ipv4_addr . inet_service; flags dynamic; }
	set lost { type ipv4_addr . inet_service; flags dynamic; }
	chain out {
		type filter hook output priority 0;
		tcp sport 80 tcp flags & fin == fin ip daddr . tcp dport != @lost \\
			add @finned { ip daddr . tcp dport }
	}
	chain in {
		type filter hook input priority 0;
		tcp dport 80 tcp flags == ack ip saddr . tcp sport @finned \\
			delete @finned { ip saddr . tcp sport } \\
			add @lost { ip saddr . tcp sport } counter drop
	}
}
"""
NO_KERNEL_RST = """
table ip no_kernel_rst {
	chain out {
		type filter hook output priority 0;
		tcp flags & rst == rst drop
	}
}
"""


def test_server_fin_sent_again_is_answered_in_time_wait(nginx, json_path):
    """ewyk-load closes first and nginx answers with its FIN; the ACK of
    that FIN is lost. ewyk-load stays through TIME-WAIT before it leaves,
    so nginx's FIN, sent again, is answered: no connection of nginx's is
    left in LAST-ACK, sending a FIN to a client gone."""
    def nft(ns, text):
        subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=text,
                       text=True, check=True)
    try:
        nft(nginx["ns"], LOST_LAST_ACK)
        nft(nginx["client"], NO_KERNEL_RST)
        out, text = run_load_af_xdp(nginx, json_path, [
            "--h1", "-n", "8", "-c", "4", "http://198.18.0.2/hello.txt"])
        assert out["requests"]["succeeded"] == 8, text
        last_ack = run(["ip", "netns", "exec", nginx["ns"], "ss", "-Htn", "state",
                        "last-ack"]).stdout.split("\n")
        lost = run(["ip", "netns", "exec", nginx["ns"], "nft", "list", "chain", "ip",
                    "lost_last_ack", "in"]).stdout
    finally:
        run(["ip", "netns", "exec", nginx["ns"], "nft", "delete", "table", "ip",
             "lost_last_ack"], check=False)
        run(["ip", "netns", "exec", nginx["client"], "nft", "delete", "table", "ip",
             "no_kernel_rst"], check=False)
    assert "counter packets 4 " in lost, lost  # each connection's last ACK lost
    assert [line for line in last_ack if line.strip()] == [], last_ack


def test_connections_spread_over_source_addresses(nginx, json_path):
    """--ip-count 4: the connections come from four addresses (nginx's
    log says from which), each answered: ewyk-load's side answers ARP for
    them all and takes their segments in."""
    with open(nginx["peers"]) as f:
        before = len(f.readlines())
    out, text = run_load_af_xdp(nginx, json_path, [
        "--h1", "--ip-count", "4", "-n", "400", "-c", "8",
        "http://198.18.0.2/hello.txt"], ip="198.18.0.11")
    assert out["requests"]["succeeded"] == 400, text
    assert out["connections"]["established"] == 8, out["connections"]
    for _ in range(20):
        with open(nginx["peers"]) as f:
            got = [line.split() for line in f.readlines()[before:]]
        if len(got) >= 400:
            break
        time.sleep(0.1)
    assert len(got) == 400, len(got)
    by_addr = {}
    for addr, port, *_ in got:
        by_addr.setdefault(addr, set()).add(port)
    assert set(by_addr) == {f"198.18.0.{i}" for i in (11, 12, 13, 14)}, by_addr
    # two connections from each address, 8 in all
    assert sorted(len(p) for p in by_addr.values()) == [2, 2, 2, 2], by_addr
