# SPDX-License-Identifier: BSD-3-Clause
"""The traffic of each Pktgen script of pktgen-scripts/ as Pktgen-DPDK
23.06.1 builds it (pktgen_model.py: its defaults, its smallest frame, its
range stepping and range pool), sent into ewykd over net_tap from a packet
socket on the tap's kernel side (floods.py), and ewykd's answer to it, as
the script says. ewykd's port has the scripts' MAC, 02:00:00:00:00:02, so
the frames go as Pktgen would build them; the generator is the tap's
kernel side.

- every .pkt: its frames stay in the test network, to ewykd's MAC and
  address (none left at Pktgen's 192.168.x defaults), bounded in count;
- syn-flood.pkt: the 24 576 SYNs of Pktgen's range pool; SYN cookies
  engage and curl keeps being served;
- ack-flood.pkt, rst-flood.pkt: the script's frames (6 bytes of data: the
  least Pktgen sends) on an established connection, its port given as
  flood.lua's SET would; a connection answers one per --invalid-ack-ms,
  the rest is counted, and the connection still serves;
- udp-junk.pkt: every size and ports across the range at ewykd's address,
  a tenth copied to another address; every frame counted as a drop by
  reason, those to ewykd answered with Port Unreachables within their
  budget, curl served;
- arp-storm.pkt: arp-storm.py's pcap: a MAC of its own per sender, never
  ewykd's or the generator's; only ewykd's requests answered, within
  --arp-reply-limit, the rest counted, curl served;
- size-sweep.pkt: every size 10 times over; each counted on the drop path,
  runts and oversize frames too;
- flood.lua: reports what left the port, against a stand-in of Pktgen's
  Lua API whose counters lag as Pktgen's do.

Every flood is bounded in frames and seconds. The shard limits are
lowered to 100 a second so that a flood from Python exceeds them.
"""
import collections
import importlib.util
import json
import os
import subprocess
import textwrap

import pytest

from conftest import rsts_again, serve_hostile, survived, tap_dropped
from ewyk_harness import APP_IP, HOST_IP, IFACE, ROOT, Appliance
from pktgen_model import FCS, MAX_FRAME, MIN_FRAME, RANGE_POOL, describe, ip4, load, mac48

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(ROOT, "pktgen-scripts")
EWYKD_MAC = "02:00:00:00:00:02"         # the scripts' ewykd
GENERATOR_MAC = "02:00:00:00:00:01"     # the scripts' generator (README.md there)
LIMIT = 100		# --challenge-ack-limit and --arp-reply-limit
BUDGET = LIMIT * 3 // 2	# the most a second's budget can be (rate_limit.h)
ICMP_BUDGET = 150	# Port Unreachables a second at most (100, drawn up to 1.5x)
INVALID_ACK_MS = 500	# ewykd's default --invalid-ack-ms
HELLO = "hello from ewyk\n"
PKT_FILES = sorted(n for n in os.listdir(SCRIPTS) if n.endswith(".pkt"))


@pytest.fixture(scope="module")
def app(www):
    yield from serve_hostile(Appliance(
        www=www["dir"], vdev_args=f",mac={EWYKD_MAC}",
        args=["--challenge-ack-limit", str(LIMIT), "--arp-reply-limit", str(LIMIT)]))


@pytest.fixture
def idle_after(app):
    """Every flood leaves ewykd alive and idle."""
    yield
    survived(app)


def in_namespace(app, body, timeout=120):
    """Runs body on the tap's kernel side with floods' and pktgen_model's
    names imported, w = a Wire on the tap, the addresses as bytes; body
    fills a dict named result, returned."""
    code = f"""
import itertools, json, random, socket, struct, sys, time
sys.path.insert(0, {HERE!r})
from floods import *
from pktgen_model import load, frame, ip4
SCRIPTS = {SCRIPTS!r}
APP, HOST = ip({APP_IP!r}), ip({HOST_IP!r})
APP_MAC = mac({app.mac!r})
URL = "http://{APP_IP}/hello.txt"
w = Wire({IFACE!r})

def pktgen(name, extra=()):
    # The script's port, with the generator's own MAC as its source.
    return load(SCRIPTS + "/" + name, w.mac, extra)

result = {{}}
try:
{textwrap.indent(textwrap.dedent(body), "    ")}
finally:
    w.close()
print(json.dumps(result))
"""
    out = app.ns_python(code, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def pktgen(name, extra=()):
    """The port after Pktgen ran the script (and extra commands)."""
    return load(os.path.join(SCRIPTS, name), GENERATOR_MAC, extra)


def distinct(port):
    """The different packets a flood sends: one in single mode, the range
    pool's (or the count's, if fewer) in range mode."""
    return port.packets(1 if port.mode == "single" else min(port.count, RANGE_POOL))


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


# -- every script ------------------------------------------------------------


def test_flood_lua_compiles():
    """flood.lua cannot run without Pktgen; luac checks its syntax."""
    r = subprocess.run(["luac5.4", "-p", os.path.join(SCRIPTS, "flood.lua")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", PKT_FILES)
def test_pkt_scripts_state_their_version_route_and_telemetry(name):
    text = open(os.path.join(SCRIPTS, name)).read()
    assert "Pktgen-DPDK 23.06" in text.splitlines()[0]
    assert "dpdk-telemetry.py" in text and "test_floods.py::" in text
    assert "net_af_xdp0,iface=pg0" in text, "no route that works with Pktgen 23.06.1"
    assert "Cannot set MTU 1500" in text, "no word that Pktgen cannot be ewykd's memif client"
    assert pktgen(name).count > 0, f"{name}: unbounded (no set 0 count)"


@pytest.mark.parametrize("name", [n for n in PKT_FILES if pktgen(n).mode != "pcap"])
def test_pkt_frames_stay_in_the_test_network(name):
    """Every frame the script makes Pktgen send goes to ewykd's MAC and
    address from an address of the test network: no address is left at
    Pktgen's defaults (192.168.x, the next port's MAC)."""
    port = pktgen(name)
    net = ip4("198.18.0.0"), ip4("198.18.0.255")
    for p in distinct(port):
        assert p["dst_mac"] == mac48(EWYKD_MAC), f"{name}: {describe(p)}: not ewykd's MAC"
        assert p["dst_ip"] == ip4(APP_IP), f"{name}: {describe(p)}: not ewykd's address"
        assert net[0] <= p["src_ip"] <= net[1] and p["src_ip"] != ip4(APP_IP), \
            f"{name}: {describe(p)}: a source outside the test network"


FAKE_PKTGEN = """
-- A stand-in for Pktgen's Lua API with a virtual clock: the port sends
-- RATE frames a second until the .pkt's count, its device counters move
-- at once, and pktgen.portStats() gives the snapshot Pktgen's stats timer
-- takes every whole second.
local clock, sent, count, sending, snap = 437, 0, 0, false, 0
local rate = tonumber(os.getenv("RATE"))
local function tick(ms)
    for _ = 1, ms do
        clock = clock + 1
        if sending then
            sent = math.min(count, sent + rate / 1000)
            sending = sent < count
        end
        if clock % 1000 == 0 then snap = math.floor(sent) end
    end
end
pktgen = {
    clr = function() end,
    load = function(path)
        for line in io.lines(path) do
            count = tonumber(line:match("^set 0 count (%d+)")) or count
        end
    end,
    start = function() sending = count > 0 end,
    stop = function() sending = false end,
    delay = tick,
    isSending = function() return {[0] = sending and "y" or "n"} end,
    portStats = function()
        return {[0] = {opackets = snap, ipackets = 0, ierrors = 0, imissed = 0}}
    end,
}
dofile(arg[1])
"""


@pytest.mark.parametrize("rate", [1000000, 5000])
def test_flood_lua_reports_what_left_the_port(tmp_path, rate):
    """size-sweep.pkt's 14 550 frames in 15 ms and in 2.9 s: flood.lua
    prints 14 550 sent, not the lagging snapshot of Pktgen's counters."""
    fake = tmp_path / "pktgen.lua"
    fake.write_text(FAKE_PKTGEN)
    r = subprocess.run(["lua5.4", str(fake), os.path.join(SCRIPTS, "flood.lua")],
                       env={**os.environ, "FLOOD": "size-sweep.pkt", "SECONDS": "10",
                            "RATE": str(rate)},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "flood.lua: sent 14550 of 14550 frames" in r.stdout, r.stdout


# -- syn-flood.pkt ---------------------------------------------------------------


# An exact RST (seq = ISN + 1) for each of the flood's 4-tuples, as fast as
# the tap takes them (in_namespace's body; port is syn-flood.pkt's).
SYN_FLOOD_RSTS = ('w.flood([tcp_frame(APP_MAC, w.mac, struct.pack("!I", p["src_ip"]), APP, '
                  'p["sport"], 80, p["seq"] + 1, 0, TCP_RST) for p in '
                  f'port.packets({RANGE_POOL})], 30)')


def test_syn_flood(app, idle_after):
    """The SYNs Pktgen builds from syn-flood.pkt (24 576 4-tuples, the
    range pool's), as fast as the tap takes them, while curl fetches a page
    in a loop: every fetch succeeds and SYN cookies answer once the backlog
    is full. The SYN-ACKs go to addresses nobody has, so the half-open
    connections stay, as with unreachable spoofed hosts. Exact RSTs clear
    what is left."""
    packets = distinct(pktgen("syn-flood.pkt"))
    assert {(p["flags"], p["dport"], p["size"] + FCS) for p in packets} == {(0x02, 80, 64)}
    tuples = {(p["src_ip"], p["sport"]) for p in packets}
    assert len(tuples) == RANGE_POOL, "the header's 24 576 different 4-tuples"
    assert {p["src_ip"] & 0xff for p in packets} == set(range(3, 255))
    before = counters(app)
    r = in_namespace(app, f"""
        port = pktgen("syn-flood.pkt")
        syns = port.frames({RANGE_POOL})
        fetch = Fetcher(URL)
        result["sent"], result["seconds"] = w.flood(syns, 30)
        time.sleep(2)          # fetches while the half-open state is largest
        result["fetches"] = fetch.stop()
        {SYN_FLOOD_RSTS}
    """)
    again = rsts_again(app, lambda: in_namespace(app, f"""
        port = pktgen("syn-flood.pkt")
        {SYN_FLOOD_RSTS}
    """))
    d = delta(before, counters(app))
    print(f"\n  {r['sent']} SYNs in {r['seconds']:.2f}s: {d['total_conns']} connections opened, "
          f"{d['syncookies_sent_count']} cookies, {d['drop_tcp_conn_full']} refused (table "
          f"full); {len(r['fetches'])} fetches, slowest {max(f[1] for f in r['fetches'])}s; "
          f"RSTs sent again {again} times")
    assert r["sent"] >= RANGE_POOL * 0.9
    assert_served(r["fetches"])
    assert d["syncookies_sent_count"] > 0, d


# -- ack-flood.pkt and rst-flood.pkt ---------------------------------------------

FLOOD_SECONDS = 2.0

# An established connection from the kernel (a real peer) that has served
# one request: its 4-tuple and sequence numbers are read off the wire. The
# script's fixed sequence number must lie far outside its window (the
# kernel's ISN is random): else it connects again. Then the script's frame,
# with SET's commands (the connection's port first), goes as fast as the
# tap takes it, and what ewykd answered meanwhile is counted.
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

def distance(a, b):
    return abs(((a - b + (1 << 31)) & 0xffffffff) - (1 << 31))

for attempt in range(5):
    c = socket.create_connection((socket.inet_ntoa(APP), 80), timeout=5)
    sport = c.getsockname()[1]
    result["first"] = get(c)
    seen = w.read(0.5, lambda f, incoming: (parse(f)[1] or {}).get(
        "sport" if not incoming else "dport") == sport)
    ours = [parse(f)[1] for f in seen if parse(f)[1]["sport"] == sport]
    # What ewykd expects next: its rcv_nxt.
    rcv_nxt = max(s["seq"] + s["len"] for s in ours)
    if distance(SCRIPT_SEQ, rcv_nxt) > 1 << 24:
        break
    c.close()
w.drain()
# From here on only what comes in: the flood's own frames stay out.
w.sock.setsockopt(263, 23, 1)           # SOL_PACKET, PACKET_IGNORE_OUTGOING

def is_answer(f, incoming):
    t = parse(f)[1]
    return incoming and t is not None and t["dport"] == sport and t["len"] == 0

forged = pktgen(SCRIPT_NAME, [f"set 0 sport {sport}"] + EXTRA).frames(1)[0]
result["data"] = parse(forged)[1]["len"]
result["sent"], result["seconds"] = w.flood(itertools.repeat(forged, 10 ** 7), FLOOD_SECONDS)
result["answers"] = len(w.read(0.5, is_answer))
result["second"] = get(c)
c.close()
"""

# SET's extra commands per case, as the namespace evaluates them.
EXTRA = {"ack": "[]", "rst-outside": "[]",
         "rst-inside": '[f"set 0 tcp seq {(rcv_nxt + 100) & 0xffffffff}"]'}


@pytest.mark.parametrize("kind", ["ack", "rst-outside", "rst-inside"])
def test_forged_segments_on_an_established_connection(app, idle_after, kind):
    """The frame Pktgen builds from ack-flood.pkt or rst-flood.pkt, its
    port the connection's (flood.lua's SET), with 6 bytes of data as every
    64-byte Pktgen frame, as fast as the tap takes it for 2 s.

    ack: data segments outside the window: at most one ACK per
    --invalid-ack-ms, the rest counted in invalid_acks_limited_count, none
    a challenge. rst-outside: the RSTs as the script has them, outside the
    window: no answer at all. rst-inside: aimed just inside the window
    (SET's "set 0 tcp seq"): challenge ACKs, at most one per
    --invalid-ack-ms, the rest counted. Nothing is reset and the
    connection serves its next request."""
    name = "ack-flood.pkt" if kind == "ack" else "rst-flood.pkt"
    port = pktgen(name)
    assert port.mode == "single" and port.single["dport"] == 80
    assert port.single["flags"] == (0x10 if kind == "ack" else 0x04)
    assert port.single["size"] + FCS == MIN_FRAME
    before, lost_before = counters(app), tap_dropped(app)
    r = in_namespace(app, ESTABLISHED.replace("SCRIPT_SEQ", str(port.single["seq"]))
                     .replace("SCRIPT_NAME", repr(name)).replace("EXTRA", EXTRA[kind])
                     .replace("FLOOD_SECONDS", str(FLOOD_SECONDS)))
    d, lost = delta(before, counters(app)), tap_dropped(app) - lost_before
    limited = d["invalid_acks_limited_count"]
    print(f"\n  net_tap, {kind}: {r['sent']} forged segments in {r['seconds']:.2f}s "
          f"({r['sent'] / r['seconds']:.0f}/s, {lost} lost in the tap): {r['answers']} ACKs "
          f"({r['answers'] / r['seconds']:.2f}/s); invalid_acks_limited {limited}, "
          f"challenge_acks {d['challenge_acks_count']}")
    assert r["data"] == 6, "a 64-byte Pktgen frame carries 6 bytes of data"
    assert r["first"] == ["HTTP/1.1 200 OK", HELLO]
    assert r["sent"] >= 1000
    assert r["second"] == ["HTTP/1.1 200 OK", HELLO], "the connection died of the flood"
    assert d["estab_resets_count"] == 0 and d["resets_in_count"] == 0
    if kind == "rst-outside":
        assert d["drop_tcp_out_of_window"] >= r["sent"] - lost, d
        assert r["answers"] == 0 and limited == 0 and d["challenge_acks_count"] == 0, d
        return
    # One answer per interval the flood spanned, one more for the lag of
    # the last frames behind ewykd's clock.
    assert 1 <= r["answers"] <= r["seconds"] * 1000 / INVALID_ACK_MS + 2, r
    assert r["sent"] - lost - r["answers"] <= limited <= r["sent"], (r, lost, d)
    if kind == "ack":
        assert d["drop_tcp_out_of_window"] >= r["sent"] - lost, d
        assert d["challenge_acks_count"] == 0, "data segments are not challenged"
    else:
        assert 1 <= d["challenge_acks_count"] <= r["answers"] + 1, d


# -- udp-junk.pkt ----------------------------------------------------------------


def test_junk_udp_flood(app, idle_after):
    """The UDP frames Pktgen builds from udp-junk.pkt (its range pool's 24 576:
    every size from 64 to 1518, ports across the range, no gap wider than
    the step), at ewykd's address, and a tenth copied to an address of the
    subnet that is not its own (a switch flooding a frame): every frame that
    reaches ewykd is a drop counted by reason (udp_no_port, ip_not_ours);
    those to its address are owed ICMP's Port Unreachable, sent within the
    shard's budget (100 a second) or counted over it, the others nothing;
    curl is served throughout."""
    packets = distinct(pktgen("udp-junk.pkt"))
    assert {p["proto"] for p in packets} == {"udp"}
    sizes = {p["size"] + FCS for p in packets}
    assert sizes == set(range(MIN_FRAME, MAX_FRAME + 1)), \
        f"sizes {min(sizes)}-{max(sizes)}, {len(sizes)} of {MAX_FRAME - MIN_FRAME + 1}"
    for key, lowest in (("dport", 1), ("sport", 1024)):
        ports = sorted({p[key] for p in packets})
        gap = max(b - a for a, b in zip(ports, ports[1:]))
        assert len(ports) >= 1000 and gap <= 64, (key, len(ports), gap)
        assert ports[0] - lowest < 64 and 65535 - ports[-1] < 64, (key, ports[0], ports[-1])
    before, dropped = counters(app), tap_dropped(app)
    r = in_namespace(app, f"""
        junk = []
        for i, p in enumerate(pktgen("udp-junk.pkt").packets({RANGE_POOL})):
            junk.append(frame(p))
            if i % 10 == 0:
                junk.append(frame(dict(p, dst_ip=ip4("198.18.0.77"))))
        fetch = Fetcher(URL)
        result["sent"], result["seconds"] = w.flood(junk, 30)
        result["total"] = len(junk)
        result["fetches"] = fetch.stop()
    """)
    d = delta(before, counters(app))
    lost = tap_dropped(app) - dropped     # the tap's queue was full
    print(f"\n  {r['sent']} UDP frames in {r['seconds']:.2f}s, {lost} lost in the tap: "
          f"udp_no_port {d['drop_udp_no_port']}, ip_not_ours {d['drop_ip_not_ours']}; "
          f"{d['icmp_unreachable_out_pkts']} Port Unreachables, "
          f"{d['icmp_errors_limited_pkts']} over the budget")
    assert r["sent"] >= r["total"] * 0.9
    assert_served(r["fetches"])
    counted = d["drop_udp_no_port"] + d["drop_ip_not_ours"]
    assert r["sent"] - lost <= counted <= r["sent"], (r["sent"], lost, d)
    assert d["drop_ip_not_ours"] >= r["sent"] // 11 - lost
    answered = d["icmp_unreachable_out_pkts"]
    assert answered + d["icmp_errors_limited_pkts"] == d["drop_udp_no_port"], d
    assert answered <= ICMP_BUDGET * (r["seconds"] + 2), (answered, r["seconds"])
    assert d["tx_pkts"] < 20 * len(r["fetches"]) + answered, "ewykd answered junk"


# -- arp-storm.pkt ---------------------------------------------------------------

ARPS = 10000


def test_arp_storm(app, idle_after, tmp_path):
    """ARP requests from 198.18.0.3-254, half for ewykd's address and half
    for others of the subnet, each sender with one MAC of its own, never
    ewykd's or the generator's (else a learning bridge would move ewykd's
    MAC to the generator's port). Only those for ewykd's are answered,
    within --arp-reply-limit a second; the others and those over the limit
    are counted; curl is served throughout (the client's own ARP entry is
    untouched)."""
    assert pktgen("arp-storm.pkt").mode == "pcap"
    pcap = tmp_path / "arp-storm.pcap"
    subprocess.run([os.path.join(SCRIPTS, "arp-storm.py"), "--count", str(ARPS), str(pcap)],
                   check=True)
    spec = importlib.util.spec_from_file_location("arp_storm",
                                                  os.path.join(SCRIPTS, "arp-storm.py"))
    arp_storm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(arp_storm)
    storm = arp_storm.read_pcap(str(pcap))
    senders = collections.defaultdict(set)
    for f in storm:
        assert f[6:12] == f[22:28], "the frame's source is not the sender's MAC"
        senders[f[28:32]].add(f[6:12])
    assert all(len(m) == 1 for m in senders.values()), "a sender changes its MAC"
    macs = [m.pop() for m in senders.values()]
    assert len(set(macs)) == len(macs) == len(range(3, 255)), "senders share a MAC"
    generator = app.ns(["cat", f"/sys/class/net/{IFACE}/address"]).stdout.strip()
    for other in (EWYKD_MAC, GENERATOR_MAC, app.mac, generator):
        assert bytes.fromhex(other.replace(":", "")) not in macs, f"a sender has {other}"
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

SWEEP = MAX_FRAME - MIN_FRAME + 1


def test_size_sweep(app, idle_after):
    """The frames Pktgen builds from size-sweep.pkt: every size from 64 to
    1518 bytes with the FCS, 10 times over; one sweep of them, then runts
    (an IPv4 header cut short, a total length beyond the frame) and frames
    beyond what an mbuf holds (the kernel side's MTU raised for them): each
    is counted, by ewykd's drop reasons or by the port's receive errors."""
    port = pktgen("size-sweep.pkt")
    assert {p["proto"] for p in port.packets(1)} == {"udp"}
    sizes = collections.Counter(p["size"] + FCS for p in port.packets(port.count))
    assert sizes == {n: 10 for n in range(MIN_FRAME, MAX_FRAME + 1)}, \
        f"{len(sizes)} sizes, {min(sizes)}-{max(sizes)}, of {port.count} frames"
    before = counters(app)
    eth_before = app.telemetry("/ethdev/stats,0")
    app.ip("link", "set", IFACE, "mtu", "9000")
    try:
        r = in_namespace(app, f"""
            sweep = pktgen("size-sweep.pkt").frames({SWEEP})
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
    print(f"\n  sizes 64-1518: {r['sent'][0]}, runts {r['sent'][1]}, oversize {r['sent'][2]}: "
          f"udp_no_port {d['drop_udp_no_port']}, ip_short {d['drop_ip_short']}, "
          f"ip_totlen {d['drop_ip_totlen']}, port receive errors {ierrors}")
    assert r["sent"] == [SWEEP, 3, 3]
    lost = r["lost"]
    print(f"  lost on the tap's kernel side: {lost}")
    assert SWEEP - lost[0] <= d["drop_udp_no_port"] <= SWEEP
    if lost[1] == 0:
        assert d["drop_ip_short"] == 2 and d["drop_ip_totlen"] == 1
    assert 3 - lost[1] <= d["drop_ip_short"] + d["drop_ip_totlen"] <= 3
    assert 3 - lost[2] <= ierrors <= 3, eth
