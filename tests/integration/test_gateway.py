# SPDX-License-Identifier: BSD-3-Clause
"""Upstreams off the port's link, reached through --gateway and
--gateway6 (DESIGN.md: "the next hop for addresses off the port's
link"). The client's namespace is the router: a namespace of the test's
own behind it holds the application, on 198.18.1.0/24 and
2001:2:0:1::/64, with its default routes back through the client's
namespace, which forwards. ewykd resolves the gateway's MAC (ARP, ND)
and sends the upstream's segments to it; curl drives the proxy over
HTTP/1.1 and HTTP/2, over IPv4 and IPv6."""
import signal
import subprocess
import time

import pytest

from app_servers import app_servers, ready
from ewyk_harness import APP_IP, HOST_IP, HOST_IP6, PYTHON, Appliance, check_config, run

FAR_IP, FAR_IP6 = "198.18.1.2", "2001:2:0:1::2"
ROUTER_IP, ROUTER_IP6 = "198.18.1.1", "2001:2:0:1::1"

FAR_SERVER = app_servers("::", (8080,))


@pytest.fixture(scope="module")
def routed():
    a = Appliance(args=["--gateway", HOST_IP, "--gateway6", HOST_IP6,
                        "--upstream", f"far={FAR_IP}:8080",
                        "--upstream", f"far6=[{FAR_IP6}]:8080"],
                  demo=False, ip6=True, client_ns=True)
    far = a.name + "f"
    server = None
    try:
        a.start()
        run(["ip", "netns", "add", far])
        run(["ip", "link", "add", "gw0", "netns", a.client, "type", "veth",
             "peer", "name", "up0", "netns", far])
        for ns, args in (
                (a.client, ["addr", "add", f"{ROUTER_IP}/24", "dev", "gw0"]),
                (a.client, ["addr", "add", f"{ROUTER_IP6}/64", "dev", "gw0", "nodad"]),
                (a.client, ["link", "set", "gw0", "up"]),
                (far, ["addr", "add", f"{FAR_IP}/24", "dev", "up0"]),
                (far, ["addr", "add", f"{FAR_IP6}/64", "dev", "up0", "nodad"]),
                (far, ["link", "set", "up0", "up"]),
                (far, ["link", "set", "lo", "up"]),
                (far, ["route", "add", "default", "via", ROUTER_IP]),
                (far, ["-6", "route", "add", "default", "via", ROUTER_IP6])):
            run(["ip", "-n", ns, *args])
        for key in ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"):
            run(["ip", "netns", "exec", a.client, "sysctl", "-q", "-w", key])
        # The router is ready when it reaches the far side (its
        # link-local address, which its neighbour solicitations come
        # from, passes duplicate address detection first).
        deadline = time.monotonic() + 10
        while any(a.ns(["ping", "-c", "1", "-W", "1", ip], check=False).returncode
                  for ip in (FAR_IP, FAR_IP6)):
            assert time.monotonic() < deadline, "the router does not reach the far side"
            time.sleep(0.1)
        server = subprocess.Popen(["ip", "netns", "exec", far, PYTHON, "-c", FAR_SERVER],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        ready(server)
        yield a
    finally:
        if server is not None:
            server.send_signal(signal.SIGTERM)
            server.wait(10)
        a.close()
        run(["ip", "netns", "del", far], check=False)


@pytest.mark.parametrize("proto", ["h1", "h2"])
@pytest.mark.parametrize("name", ["far", "far6"])
def test_upstream_behind_the_gateway_answers(routed, name, proto):
    """The application sees ewykd's own address (routed, not bridged),
    and its answer comes back the same way."""
    r = routed.ns(["curl", "-sS", "-m", "10",
                   "--http2-prior-knowledge" if proto == "h2" else "--http1.1",
                   routed.url(f"/proxy/{name}/peer")])
    source = APP_IP if name == "far" else "2001:2::2"
    assert r.stdout in (f"{source}\n", f"::ffff:{source}\n"), r.stdout


def test_ports_say_their_gateways(routed):
    p = routed.telemetry("/ewyk/ports")["port_0"]
    assert (p["gateway"], p["gateway6"]) == (HOST_IP, HOST_IP6), p


@pytest.mark.parametrize("args,words", [
    (["--upstream", f"far={FAR_IP}:8080"],
     f"--upstream far: {FAR_IP} is not on the link of --ip 198.18.0.2/24, and no "
     "--gateway is given"),
    (["--gateway", "10.1.1.1"],
     "--gateway 10.1.1.1: not another address on the link of port 0's --ip 198.18.0.2/24"),
    (["--gateway", APP_IP], "--gateway 198.18.0.2: not another address on the link"),
    (["--gateway", "198.18.0.1/24"], "--gateway: '198.18.0.1/24' is not a unicast IPv4 address"),
    (["--gateway6", HOST_IP6], "--gateway6 2001:2::1: port 0 has no --ip6"),
    (["--ip", "198.18.0.2/24", "--ip6", "2001:2::2/64", "--gateway6", "2001:3::1"],
     "--gateway6 2001:3::1: not another address on the link of port 0's --ip6"),
    (["--gateway", "198.18.0.1", "--gateway", "198.18.0.3"],
     "--gateway 198.18.0.3: port 1 has no --ip"),
])
def test_bad_gateways_are_refused(cc_ns, args, words):
    rc, out, err = check_config(cc_ns, *args)
    assert rc == 2, (out, err)
    assert words in err, err


def test_gateways_read_back(cc_ns):
    rc, out, err = check_config(cc_ns, "--ip", "198.18.0.2/24", "--ip6", "2001:2::2/64",
                         "--gateway", "198.18.0.1",
                         "--gateway6", "fe80::1", "--upstream", f"far=[{FAR_IP6}]:8080")
    assert rc == 0, err
    assert "gateway = 198.18.0.1\n" in out and "gateway6 = fe80::1\n" in out, out
