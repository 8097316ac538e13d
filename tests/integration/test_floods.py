# SPDX-License-Identifier: BSD-3-Clause
"""The traffic of each Pktgen script of pktgen-scripts/, sent into ewykd
over net_tap from a packet socket on the tap's kernel side (tests/
integration/floods.py), and ewykd's answer to it, as the script says:

- syn-flood.pkt: SYNs from a range of source addresses and ports; SYN
  cookies engage and curl keeps being served;
- ack-flood.pkt, rst-flood.pkt: forged ACKs and RSTs with random and
  in-window sequence numbers on an established connection; the challenge
  ACKs stay within --challenge-ack-limit, the rest is counted, and the
  connection still serves;
- udp-junk.pkt: UDP at ewykd's address and at others; every frame counted
  as a drop by reason, curl served;
- arp-storm.pkt: ARP requests for ewykd's address and for others; only
  ours answered, within --arp-reply-limit, the rest counted, curl served;
- size-sweep.pkt: frames of 60 to 1514 bytes, runts and oversize ones;
  each counted on the drop path.

Every flood is bounded in frames and seconds. Limits are lowered to 100 a
second so that a flood from Python exceeds them.
"""
import collections
import json
import os
import subprocess
import textwrap

import pytest

from conftest import serve_hostile, survived, tap_dropped
from ewyk_harness import APP_IP, HOST_IP, IFACE, ROOT, Appliance

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(ROOT, "pktgen-scripts")
FCS = 4			# Pktgen's sizes count the Ethernet FCS
LIMIT = 100		# --challenge-ack-limit and --arp-reply-limit
BUDGET = LIMIT * 3 // 2	# the most a second's budget can be (rate_limit.h)
HELLO = "hello from ewyk\n"


@pytest.fixture(scope="module")
def app(www):
    yield from serve_hostile(Appliance(www=www["dir"], args=[
        "--challenge-ack-limit", str(LIMIT), "--arp-reply-limit", str(LIMIT)]))


@pytest.fixture
def idle_after(app):
    """Every flood leaves ewykd alive and idle."""
    yield
    survived(app)


def in_namespace(app, body, timeout=120):
    """Runs body on the tap's kernel side with floods' names imported, w =
    a Wire on the tap, the addresses as bytes; body fills a dict named
    result, returned."""
    code = f"""
import json, random, socket, sys, time
sys.path.insert(0, {HERE!r})
from floods import *
APP, HOST = ip({APP_IP!r}), ip({HOST_IP!r})
APP_MAC = mac({app.mac!r})
URL = "http://{APP_IP}/hello.txt"
rnd = random.Random(5961)
w = Wire({IFACE!r})
result = {{}}
try:
{textwrap.indent(textwrap.dedent(body), "    ")}
finally:
    w.close()
print(json.dumps(result))
"""
    out = app.ns_python(code, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def pkt(name):
    """A Pktgen .pkt script's commands: "set 0 dport" -> ["80"], the last word
    of each line under the words before it, in order."""
    found = collections.defaultdict(list)
    with open(os.path.join(SCRIPTS, name)) as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                found[" ".join(words[:-1])].append(words[-1])
    assert found["set 0 count"], f"{name}: unbounded (no set 0 count)"
    return found


def one(script, key):
    assert len(script[key]) == 1, (key, script[key])
    return script[key][0]


def test_flood_lua_compiles():
    """flood.lua cannot run without Pktgen; luac checks its syntax."""
    r = subprocess.run(["luac5.4", "-p", os.path.join(SCRIPTS, "flood.lua")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(SCRIPTS) if n.endswith(".pkt")))
def test_pkt_scripts_state_their_version_and_telemetry(name):
    text = open(os.path.join(SCRIPTS, name)).read()
    assert "Pktgen-DPDK 23.06" in text.splitlines()[0]
    assert "dpdk-telemetry.py" in text and "test_floods.py::" in text
    pkt(name)


def counters(app):
    s, t = app.telemetry("/ewyk/stats", "/ewyk/tcp").values()
    flat = {k: v for k, v in {**s, **t}.items() if isinstance(v, int)}
    flat.update({f"drop_{k}": v for k, v in s["drop_by_reason_pkts"].items()})
    return flat


def delta(before, after):
    return {k: after[k] - before.get(k, 0) for k in after}


def assert_served(fetches):
    failed = [f for f in fetches if f[0] != "200"]
    assert len(fetches) >= 5
    assert not failed, f"{len(failed)} of {len(fetches)} fetches failed: {failed[:5]}"


# -- syn-flood.pkt ---------------------------------------------------------------

SYNS = 30000


def test_syn_flood(app, idle_after):
    """SYNs from 198.18.0.3-254 and random ports, as fast as the tap takes
    them, while curl fetches a page in a loop: every fetch succeeds and SYN
    cookies answer once the backlog is full. The SYN-ACKs go to a MAC nobody
    has, so the kernel drops them without a RST and the half-open
    connections stay, as with unreachable spoofed hosts. Exact RSTs clear
    what is left."""
    script = pkt("syn-flood.pkt")
    assert script["set 0 tcp flag set"] == script["range 0 tcp flag set"] == ["syn"]
    hosts = [int(one(script, f"range 0 src ip {m}").rsplit(".", 1)[1]) for m in ("min", "max")]
    ports = [int(one(script, f"range 0 src port {m}")) for m in ("min", "max")]
    dport = int(one(script, "set 0 dport"))
    before = counters(app)
    r = in_namespace(app, f"""
        nobody = mac("02:00:00:00:00:99")
        conns = set()
        while len(conns) < {SYNS}:
            conns.add((rnd.randint(*{hosts}), rnd.randint(*{ports})))
        conns = [(ip("198.18.0.%d" % h), p, rnd.getrandbits(32)) for h, p in conns]
        syns = [tcp_frame(APP_MAC, nobody, s, APP, p, {dport}, q, 0, TCP_SYN)
                for s, p, q in conns]
        fetch = Fetcher(URL)
        result["sent"], result["seconds"] = w.flood(syns, 30)
        time.sleep(2)          # fetches while the half-open state is largest
        result["fetches"] = fetch.stop()
        w.flood([tcp_frame(APP_MAC, nobody, s, APP, p, 80, q + 1, 0, TCP_RST)
                 for s, p, q in conns], 30)
    """)
    d = delta(before, counters(app))
    print(f"\n  {r['sent']} SYNs in {r['seconds']:.2f}s: {d['total_conns']} connections opened, "
          f"{d['syncookies_sent_count']} cookies, {d['drop_tcp_conn_full']} refused (table "
          f"full); {len(r['fetches'])} fetches, slowest {max(f[1] for f in r['fetches'])}s")
    assert r["sent"] >= SYNS * 0.9
    assert_served(r["fetches"])
    assert d["syncookies_sent_count"] > 0, d


# -- ack-flood.pkt and rst-flood.pkt ---------------------------------------------

FORGED = 20000

# An established connection from the kernel (a real peer) that has served
# one request: its 4-tuple and sequence numbers are read off the wire.
ESTABLISHED = """
REQ = b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"

def get(c):
    c.sendall(REQ)
    data = b""
    while not data.endswith(b"hello from ewyk\\n"):
        more = c.recv(4096)
        if not more:
            break
        data += more
    return data.split(b"\\r\\n")[0].decode(), data.rsplit(b"\\r\\n\\r\\n", 1)[-1].decode()

c = socket.create_connection((socket.inet_ntoa(APP), 80), timeout=5)
sport = c.getsockname()[1]
result["first"] = get(c)
seen = w.read(0.5, lambda f, incoming: (parse(f)[1] or {}).get(
    "sport" if not incoming else "dport") == sport)
ours = [parse(f)[1] for f in seen if parse(f)[1]["sport"] == sport]
theirs = [parse(f)[1] for f in seen if parse(f)[1]["dport"] == sport]
# What ewykd expects next (its rcv_nxt) and what it sent last (its snd_nxt).
rcv_nxt = max(s["seq"] + s["len"] for s in ours)
snd_nxt = max(s["seq"] + s["len"] for s in theirs)
w.drain()

def is_answer(f, incoming):
    t = parse(f)[1]
    return incoming and t is not None and t["dport"] == sport and t["len"] == 0
"""


@pytest.mark.parametrize("kind", ["ack", "rst"])
def test_forged_segments_on_an_established_connection(app, idle_after, kind):
    """ack: ACKs with random sequence and acknowledgment numbers (almost all
    outside the window). rst: RSTs, half at random sequence numbers, half
    inside the window but never at its left edge (RFC 5961 3.2). ewykd sends
    challenge ACKs within its budget, counts the rest, resets nothing, and
    the connection serves its next request."""
    script = pkt(f"{kind}-flood.pkt")
    assert script["set 0 tcp flag set"] == [kind]
    assert one(script, "set 0 dport") == "80"
    assert kind == "ack" or script["set 0 tcp flag clr"] == ["ack"]
    make = {
        "ack": "tcp_frame(APP_MAC, w.mac, HOST, APP, sport, 80, rnd.getrandbits(32), "
               "rnd.getrandbits(32), TCP_ACK)",
        "rst": "tcp_frame(APP_MAC, w.mac, HOST, APP, sport, 80, rnd.getrandbits(32) if i % 2 "
               "else rcv_nxt + rnd.randint(1, 4000), 0, TCP_RST)",
    }[kind]
    before = counters(app)
    r = in_namespace(app, ESTABLISHED + f"""
forged = [{make} for i in range({FORGED})]
result["sent"], result["seconds"] = w.flood(forged, 20)
result["answers"] = len(w.read(0.5, is_answer))
result["second"] = get(c)
c.close()
""")
    d = delta(before, counters(app))
    print(f"\n  {r['sent']} forged {kind.upper()}s in {r['seconds']:.2f}s: "
          f"{d['challenge_acks_count']} challenge ACKs, {d['challenge_acks_limited_count']} "
          f"over the limit, {r['answers']} ACKs seen")
    assert r["first"] == ["HTTP/1.1 200 OK", HELLO]
    assert r["sent"] >= FORGED * 0.9
    assert r["second"] == ["HTTP/1.1 200 OK", HELLO], "the connection died of the flood"
    assert d["estab_resets_count"] == 0 and d["resets_in_count"] == 0
    seconds = int(r["seconds"]) + 2		# the budgets the flood could span
    assert 0 < d["challenge_acks_count"] <= BUDGET * seconds, d
    assert d["challenge_acks_limited_count"] > 0, d
    # What ewykd sent while flooded: its challenge ACKs (several of a burst
    # go out as one) and the second answer's few segments.
    assert r["answers"] <= d["challenge_acks_count"] + 3


# -- udp-junk.pkt ----------------------------------------------------------------

JUNK = 20000


def test_junk_udp_flood(app, idle_after):
    """UDP of random ports and sizes at ewykd's address, and a tenth at an
    address of the subnet that is not its own (a switch flooding a frame):
    every frame that reaches ewykd is a drop counted by reason (ip_proto,
    ip_not_ours); none is answered; curl is served throughout."""
    script = pkt("udp-junk.pkt")
    assert one(script, "set 0 proto") == one(script, "range 0 proto") == "udp"
    sizes = [int(one(script, f"range 0 size {m}")) - FCS for m in ("min", "max")]
    ports = [int(one(script, f"range 0 dst port {m}")) for m in ("min", "max")]
    before, dropped = counters(app), tap_dropped(app)
    r = in_namespace(app, f"""
        other = ip("198.18.0.77")
        junk = [udp_frame(APP_MAC, w.mac, HOST, other if i % 10 == 0 else APP,
                          rnd.randint(*{ports}), rnd.randint(*{ports}),
                          bytes(rnd.randint(*{sizes}) - 42))
                for i in range({JUNK})]
        fetch = Fetcher(URL)
        result["sent"], result["seconds"] = w.flood(junk, 20)
        result["fetches"] = fetch.stop()
    """)
    d = delta(before, counters(app))
    lost = tap_dropped(app) - dropped     # the tap's queue was full
    print(f"\n  {r['sent']} UDP frames in {r['seconds']:.2f}s, {lost} lost in the tap: "
          f"ip_proto {d['drop_ip_proto']}, ip_not_ours {d['drop_ip_not_ours']}")
    assert r["sent"] >= JUNK * 0.9
    assert_served(r["fetches"])
    counted = d["drop_ip_proto"] + d["drop_ip_not_ours"]
    assert r["sent"] - lost <= counted <= r["sent"], (r["sent"], lost, d)
    assert d["drop_ip_not_ours"] >= r["sent"] // 10 - lost
    assert d["tx_pkts"] < 20 * len(r["fetches"]), "ewykd answered junk"


# -- arp-storm.pkt ---------------------------------------------------------------

ARPS = 10000


def test_arp_storm(app, idle_after, tmp_path):
    """ARP requests from 198.18.0.3-254, half for ewykd's address and half
    for others of the subnet. Only those for ewykd's are answered, within
    --arp-reply-limit a second; the others and those over the limit are
    counted; curl is served throughout (the client's own ARP entry is
    untouched)."""
    assert pkt("arp-storm.pkt")["enable 0"] == ["pcap"]
    pcap = tmp_path / "arp-storm.pcap"
    subprocess.run([os.path.join(SCRIPTS, "arp-storm.py"), "--count", str(ARPS), str(pcap)],
                   check=True)
    before, dropped = counters(app), tap_dropped(app)
    r = in_namespace(app, f"""
        sys.path.insert(0, {SCRIPTS!r})
        storm = __import__("arp-storm").read_pcap({str(pcap)!r})
        assert len(storm) == {ARPS}
        fetch = Fetcher(URL)
        result["sent"], result["seconds"] = w.flood(storm, 20)
        replies = w.read(0.5, lambda f, incoming: incoming and parse(f)[0] == ETH_ARP
                         and parse(f)[1]["op"] == 2)
        result["fetches"] = fetch.stop()
        result["repliers"] = sorted({{parse(f)[1]["spa"] for f in replies}})
        result["replies"] = len(replies)
    """)
    d = delta(before, counters(app))
    lost = tap_dropped(app) - dropped
    print(f"\n  {r['sent']} ARP requests in {r['seconds']:.2f}s, {lost} lost in the tap: "
          f"{d['arp_reply_pkts']} replies, {d['arp_reply_limited_pkts']} over the limit, "
          f"{d['arp_other_target_pkts']} for others")
    assert r["sent"] >= ARPS * 0.9
    assert_served(r["fetches"])
    assert r["repliers"] in ([], [APP_IP]), "ewykd answered for an address not its own"
    seconds = int(r["seconds"]) + 2
    assert 0 < d["arp_reply_pkts"] <= BUDGET * seconds, d
    assert d["arp_reply_limited_pkts"] > 0, d
    # Every request that reached ewykd: answered, over the limit, or not
    # for it (the client's own requests for ewykd among them).
    handled = d["arp_reply_pkts"] + d["arp_reply_limited_pkts"] + d["arp_other_target_pkts"]
    assert r["sent"] - lost <= handled <= r["sent"] + 10, (r["sent"], lost, d)
    assert d["arp_other_target_pkts"] >= r["sent"] // 2 - lost


# -- size-sweep.pkt --------------------------------------------------------------


def test_size_sweep(app, idle_after):
    """UDP frames of every size from 60 to 1514 bytes, then runts (an IPv4
    header cut short, a total length beyond the frame) and frames beyond
    what an mbuf holds (the kernel side's MTU raised for them): each is
    counted, by ewykd's drop reasons or by the port's receive errors."""
    script = pkt("size-sweep.pkt")
    assert one(script, "range 0 proto") == "udp"
    lo, hi, inc = (int(one(script, f"range 0 size {m}")) for m in ("min", "max", "inc"))
    sizes = range(lo - FCS, hi - FCS + 1, inc)
    assert (sizes[0], sizes[-1], len(sizes)) == (60, 1514, 1455)
    before = counters(app)
    eth_before = app.telemetry("/ethdev/stats,0")
    app.ip("link", "set", IFACE, "mtu", "9000")
    try:
        r = in_namespace(app, f"""
            sweep = [udp_frame_of_size(APP_MAC, w.mac, HOST, APP, n) for n in {sizes!r}]
            full = udp_frame_of_size(APP_MAC, w.mac, HOST, APP, 60)
            runts = [full[:20], full[:33],                        # ip_short
                     full[:16] + b"\\x03\\xe8" + full[18:]]        # ip_totlen
            oversize = [udp_frame_of_size(APP_MAC, w.mac, HOST, APP, n)
                        for n in (2100, 4000, 9000)]
            # Each group after the tap's queue drained, with what the
            # kernel dropped on its side of the tap meanwhile (a loaded
            # host falls behind the sweep).
            def dropped():
                with open("/sys/class/net/{IFACE}/statistics/tx_dropped") as f:
                    return int(f.read())
            result["sent"], result["lost"] = [], []
            for group in (sweep, runts, oversize):
                d0 = dropped()
                result["sent"].append(w.flood(group, 20)[0])
                time.sleep(0.3)
                result["lost"].append(dropped() - d0)
        """)
    finally:
        app.ip("link", "set", IFACE, "mtu", "1500")
    d = delta(before, counters(app))
    eth = app.telemetry("/ethdev/stats,0")
    ierrors = eth["ierrors"] - eth_before["ierrors"]
    print(f"\n  sizes 60-1514: {r['sent'][0]}, runts {r['sent'][1]}, oversize {r['sent'][2]}: "
          f"ip_proto {d['drop_ip_proto']}, ip_short {d['drop_ip_short']}, "
          f"ip_totlen {d['drop_ip_totlen']}, port receive errors {ierrors}")
    assert r["sent"] == [1455, 3, 3]
    lost = r["lost"]
    print(f"  lost on the tap's kernel side: {lost}")
    assert 1455 - lost[0] <= d["drop_ip_proto"] <= 1455
    if lost[1] == 0:
        assert d["drop_ip_short"] == 2 and d["drop_ip_totlen"] == 1
    assert 3 - lost[1] <= d["drop_ip_short"] + d["drop_ip_totlen"] <= 3
    assert 3 - lost[2] <= ierrors <= 3, eth
