# SPDX-License-Identifier: BSD-3-Clause
"""IPv6 beside IPv4 on every medium (net_tap, net_af_xdp, net_memif), with
the contract's 2001:2::2/64 (ewykd) and 2001:2::1/64 (the kernel side):

- ping -6 to the global and to the link-local address (EUI-64 of the
  port's MAC), the kernel's neighbour entry for ewykd the port's MAC;
- curl -6 over HTTP/1.1 and HTTP/2, 1 MB byte-exact both ways, also to the
  link-local address; h2load and nghttp over IPv6; Python's http.client
  and a raw AF_INET6 socket; both families at once, counted apart;
- /ewyk/ports in RFC 5952 form with the addresses' states;
- a port with IPv6 only; --ip6 in --check-config and the configuration
  file; duplicate address detection taking an address another node has
  out of use (net_tap: the kernel side claims 2001:2::2, the link goes
  down and up, ewykd probes again).
"""
import hashlib
import ipaddress
import os
import time

import pytest

from conftest import serve_module
from ewyk_harness import APP_IP, APP_IP6, EWYKD, HOST_IP6, IFACE, MEDIA, Appliance, run
from app_servers import app_servers, ready

PROTOCOLS = {"h1": ["--http1.1"], "h2": ["--http2-prior-knowledge"]}


@pytest.fixture(scope="module", params=MEDIA)
def app(request, www):
    yield from serve_module(Appliance(www=www["dir"], medium=request.param, ip6=True))


def link_local(mac):
    """fe80:: and the modified EUI-64 of mac (RFC 4291 appendix A)."""
    b = bytes.fromhex(mac.replace(":", ""))
    iid = bytes([b[0] ^ 2]) + b[1:3] + b"\xff\xfe" + b[3:]
    return str(ipaddress.IPv6Address(b"\xfe\x80" + b"\0" * 6 + iid))


def curl(a, out, *args):
    r = a.ns(["curl", "-6", "-sS", "-m", "30", "-o", str(out), "-w",
              "%{http_code} %{http_version}", *args])
    return tuple(r.stdout.split())


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def port0(a):
    return a.telemetry("/ewyk/ports,0")["port_0"]


def test_addresses_in_telemetry(app):
    p = port0(app)
    assert p["ip"] == "198.18.0.2/24"
    assert p["ip6"] == "2001:2::2/64"		# RFC 5952: zeros compressed
    assert p["ip6_link_local"] == link_local(p["mac"])
    deadline = time.time() + 5		# DAD takes a second after a link up
    while p["ip6_state"] != "preferred" and time.time() < deadline:
        time.sleep(0.2)
        p = port0(app)
    assert (p["ip6_state"], p["ip6_link_local_state"]) == ("preferred", "preferred")
    assert p["ip6_multicast"] in ("filter", "allmulticast", "promiscuous", "unfiltered")
    info = app.telemetry("/ewyk/info")
    assert info["ip6"] == "2001:2::2/64" and info["ip"] == "198.18.0.2/24"


def test_ping6_and_the_neighbour_entry(app):
    r = app.ns(["ping", "-6", "-c", "3", "-i", "0.2", "-W", "1", APP_IP6])
    assert "3 received" in r.stdout
    ll = port0(app)["ip6_link_local"]
    r = app.ns(["ping", "-6", "-c", "2", "-i", "0.2", "-W", "1", f"{ll}%{IFACE}"])
    assert "2 received" in r.stdout, r.stdout
    s = app.stats()
    assert s["icmp6_echo_pkts"] >= 5 and s["nd_na_out_pkts"] >= 1
    r = app.ns(["ip", "-6", "neigh", "show", APP_IP6, "dev", IFACE])
    learnt = r.stdout.split("lladdr")[1].split()[0]
    if app.medium == "af_xdp":		# ewykd is the veth end
        assert f"link/ether {learnt} " in app.ip("link", "show", IFACE).stdout
    else:
        assert learnt.lower() == port0(app)["mac"].lower()


@pytest.mark.parametrize("proto", PROTOCOLS)
def test_download_and_echo_1mb_byte_exact(app, www, tmp_path, proto):
    out = tmp_path / "big.bin"
    status, version = curl(app, out, *PROTOCOLS[proto], app.url6("/big.bin"))
    assert (status, version) == ("200", "2" if proto == "h2" else "1.1")
    assert sha256(out) == www["big_sha256"]
    echo = tmp_path / "echo.bin"
    big = os.path.join(www["dir"], "big.bin")
    if proto == "h2":	# h2_upload.py: curl 7.88's HTTP/2 uploads are flaky
        r = app.h2_upload("/echo", big, out=echo, url=app.url6("/echo"))
        assert r.returncode == 0, r.stderr
        status = r.stdout.strip()
    else:
        status, _ = curl(app, echo, *PROTOCOLS[proto], "--data-binary", f"@{big}", "-H",
                         "Content-Type: application/octet-stream", app.url6("/echo"))
    assert status == "200"
    assert sha256(echo) == www["big_sha256"]


def test_link_local_address_serves(app, tmp_path):
    ll = port0(app)["ip6_link_local"]
    out = tmp_path / "hello.txt"
    assert curl(app, out, "-g", f"http://[{ll}%25{IFACE}]/hello.txt") == ("200", "1.1")
    assert out.read_text() == "hello from ewyk\n"


def test_h2load_and_nghttp(app):
    before = app.telemetry("/ewyk/tcp")
    r = app.ns(["h2load", "-n", "400", "-c", "4", "-m", "10", app.url6("/hello.txt")],
               timeout=120)
    assert "400 succeeded" in r.stdout, r.stdout
    r = app.ns(["h2load", "--h1", "-n", "200", "-c", "4", app.url6("/big.bin")], timeout=120)
    assert "200 succeeded" in r.stdout, r.stdout
    r = app.ns(["nghttp", "-n", "-s", app.url6("/hello.txt")], timeout=60)
    assert r.returncode == 0 and "200" in r.stdout, r.stdout
    after = app.telemetry("/ewyk/tcp")
    assert after["ip6_passive_opens_count"] - before["ip6_passive_opens_count"] >= 9


def test_python_clients(app):
    out = app.ns_python(f"""
import http.client, socket
c = http.client.HTTPConnection("{APP_IP6}", 80, timeout=10)
for i in range(20):
    c.request("PUT", "/kv/six%d" % i, body=b"v%d" % i)
    assert c.getresponse().read() is not None
c.request("GET", "/kv/six7")
r = c.getresponse()
print(r.status, r.read().decode())
s = socket.socket(socket.AF_INET6)
s.settimeout(10)
s.connect(("{APP_IP6}", 80))
print(s.getpeername()[0])
s.sendall(b"GET /hello.txt HTTP/1.0\\r\\n\\r\\n")
data = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
print(data.split(b"\\r\\n")[0].decode(), data.endswith(b"hello from ewyk\\n"))
""")
    lines = out.splitlines()
    assert lines[0] == "200 v7"
    assert lines[1] == APP_IP6
    assert lines[2] == "HTTP/1.1 200 OK True"


def test_both_families_at_once_counted_apart(app):
    before = app.stats()
    app.ns(["h2load", "--h1", "-n", "100", "-c", "2", app.url("/hello.txt")], timeout=60)
    app.ns(["h2load", "--h1", "-n", "100", "-c", "2", app.url6("/hello.txt")], timeout=60)
    deadline = time.time() + 10
    while (after := app.stats())["open_conns"] and time.time() < deadline:
        time.sleep(0.2)
    for fam in ("ip4", "ip6"):
        for d in ("rx", "tx"):
            assert after[f"{d}_{fam}_pkts"] - before[f"{d}_{fam}_pkts"] >= 100, (fam, d)
    assert after["open_conns_ip6"] == 0
    tcp = app.telemetry("/ewyk/tcp")
    assert tcp["ip6_segs_in_count"] < tcp["segs_in_count"]


def test_ipv6_only_port(www, tmp_path):
    """--ip6 without --ip: the port has no IPv4, answers no ARP, serves
    over IPv6."""
    with Appliance(www=www["dir"], ip6="only") as a:
        out = tmp_path / "hello.txt"
        assert curl(a, out, a.url6("/hello.txt")) == ("200", "1.1")
        r = a.ns(["ping", "-c", "2", "-i", "0.2", "-W", "1", APP_IP], check=False)
        assert r.returncode != 0
        p = port0(a)
        assert p["ip"] == "" and p["ip6"] == "2001:2::2/64"
        s = a.stats()
        assert s["rx_ip4_pkts"] == 0 and s["drop_by_reason_pkts"]["ethertype"] >= 2
        assert "serving 2001:2::2/64 port 80" in a.read_log()


def test_check_config_and_the_file(tmp_path):
    conf = tmp_path / "ewykd.conf"
    conf.write_text(f"[ewykd]\nwww = {tmp_path}\nip = 198.18.0.2/24\n"
                    "ip6 = 2001:2::2/64, 2001:2:0:1::2/64\n")
    r = run([EWYKD, "--config", str(conf), "--check-config"])
    # The Nth for the Nth port, in the order of the ports.
    assert "\nip6 = 2001:2::2/64\nip6 = 2001:2:0:1::2/64\n" in r.stdout
    # The command line's replace the file's.
    r = run([EWYKD, "--config", str(conf), "--ip6", "2001:2::0:0:0:5/64", "--check-config"])
    assert "\nip6 = 2001:2::5/64\n" in r.stdout and "2001:2:0:1::2" not in r.stdout
    for bad, word in (("fe80::1/64", "link-local"), ("2001:2::2", "ADDR/N"),
                      ("2001:2::2/129", "ADDR/N"), ("ff02::1/64", "unicast"),
                      ("::ffff:198.18.0.2/64", "unicast"), ("198.18.0.2/24", "ADDR/N")):
        r = run([EWYKD, "--ip6", bad, "--check-config"], check=False)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (bad, r.stderr)
        assert lines[0].startswith("ewykd: --ip6: ") and word in lines[0], (bad, lines)
    conf.write_text(f"[ewykd]\nwww = {tmp_path}\nip6 = 2001:2::2/64\nip6 = 2001:2::2/64\n")
    r = run([EWYKD, "--config", str(conf), "--check-config"], check=False)
    assert r.returncode == 2 and ":4: ip6: 2001:2::2 is already" in r.stderr, r.stderr


def test_help_says_what_ip6_does():
    r = run([EWYKD, "--help"])
    assert "--ip6 ADDR/PREFIX" in r.stdout and "link-local" in r.stdout
    assert "--nd-reply-limit N" in r.stdout


def test_duplicate_address_is_taken_out_of_use(www):
    """The kernel side takes 2001:2::2 too (without its own DAD), the tap's
    link goes down and up: ewykd probes its addresses again, the kernel
    defends its own, and ewykd stops using it (its link-local address
    stays). Counted, shown in /ewyk/ports."""
    with Appliance(www=www["dir"], ip6=True) as a:
        a.ip("addr", "add", f"{APP_IP6}/64", "dev", IFACE, "nodad")
        # Linux drops its IPv6 addresses when the link goes down, unless.
        a.in_appliance_ns(["sysctl", "-qw", f"net.ipv6.conf.{IFACE}.keep_addr_on_down=1"])
        a.ip("link", "set", IFACE, "down")
        time.sleep(0.5)			# ewykd looks at the link every 100 ms
        a.ip("link", "set", IFACE, "up")
        # A tap's link may come up more than once as its bridge takes it
        # back, and each time ewykd probes again: how many probes the
        # kernel defended depends on the bridge, not on ewykd.
        deadline = time.time() + 10
        p = port0(a)
        while (p["ip6_state"], p["ip6_link_local_state"]) != ("duplicate", "preferred") \
                and time.time() < deadline:
            time.sleep(0.2)
            p = port0(a)
        assert p["ip6_state"] == "duplicate", p
        assert p["ip6_link_local_state"] == "preferred"
        s = a.stats()
        assert s["link_ups_count"] >= 1 and s["nd_dad_duplicates_count"] >= 1, s
        assert s["nd_dad_probes_pkts"] >= 4
        # What comes for it is not ewykd's any more.
        before = s["drop_by_reason_pkts"]["ip6_not_ours"]
        a.ns_python(f"""
import socket
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("{IFACE}", 0))
from scapy.all import Ether, raw
from scapy.layers.inet6 import IPv6
from scapy.layers.inet import TCP
s.send(raw(Ether(dst="{p['mac']}", src=s.getsockname()[4]) /
           IPv6(src="{HOST_IP6}", dst="{APP_IP6}") / TCP(dport=80, flags="S")))
""")
        time.sleep(0.3)
        assert a.stats()["drop_by_reason_pkts"]["ip6_not_ours"] == before + 1
        assert a.proc.poll() is None


@pytest.mark.parametrize("medium", ["tap", "af_xdp"])
def test_upstream_over_ipv6(www, tmp_path, medium):
    """--upstream NAME=[ADDR6]:PORT: /proxy/NAME/ reaches an upstream over
    IPv6 (neighbour discovery, then TCP), for clients of either family;
    the client's Host is kept (an IPv6 client's "[ADDR6]"); telemetry
    names the upstream [ADDR6]:PORT."""
    with Appliance(www=www["dir"], medium=medium, ip6=True,
                   args=["--upstream", f"six=[{HOST_IP6}]:8086"]) as a:
        # A kernel HTTP server on 2001:2::1 in the client's namespace.
        server = a.ns_popen_python(app_servers(HOST_IP6, (8086,)))
        try:
            digest = ready(server)
            for family, url in (("-4", a.url("/proxy/six/blob")),
                                ("-6", a.url6("/proxy/six/blob"))):
                out = tmp_path / f"blob{family}"
                r = a.ns(["curl", "-sS", family, "--max-time", "20", "-o", str(out),
                          "-w", "%{http_code}", url], check=False)
                assert r.stdout == "200", r.stderr
                assert sha256(out) == digest
            r = a.ns(["curl", "-sS", "--max-time", "20", a.url6("/proxy/six/host")])
            assert r.stdout == f"[{APP_IP6}]", r.stdout
            up = a.telemetry("/ewyk/upstreams")["upstream_six"]
            assert up["addr"] == f"[{HOST_IP6}]:8086" and up["requests_reqs"] == 3, up
        finally:
            server.kill()
            server.wait()


def test_upstream_ipv6_option_errors():
    for bad, word in (("six=2001:2::1:80", "brackets"), ("six=[2001:2::1]", "[ADDR6]:PORT"),
                      ("six=[2001:2::zz]:80", "not an IPv6 address"),
                      ("six=[2001:2::1]:0", "")):
        r = run([EWYKD, "--ip6", "2001:2::2/64", "--upstream", bad, "--check-config"],
                check=False)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (bad, r.stderr)
        assert lines[0].startswith("ewykd: --upstream: ") and word in lines[0], (bad, lines)
    # Off every port's prefix: no gateway to reach it by.
    r = run([EWYKD, "--ip6", "2001:2::2/64", "--upstream", "far=[2001:3::1]:80",
             "--check-config"], check=False)
    assert r.returncode == 2 and "2001:3::1 is not on the link of --ip6 2001:2::2/64" \
        in r.stderr, r.stderr
    r = run([EWYKD, "--ip", "198.18.0.2/24", "--ip6", "2001:2::2/64", "--upstream",
             "six=[2001:2:0:0::1]:8086", "--check-config"])
    assert "\nupstream = six=[2001:2::1]:8086\n" in r.stdout, r.stdout
