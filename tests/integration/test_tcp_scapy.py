# SPDX-License-Identifier: BSD-3-Clause
"""Attacks and oddities on the appliance's TCP, crafted with scapy from the
kernel side of the tap (rawtcp.RawTcp, a client over a packet socket):

- out-of-window data and RSTs, in-window RSTs and SYNs on an established
  connection (RFC 9293 3.10.7.4; RFC 5961 3 and 4: challenge ACKs), data
  carrying an ACK of unsent or too old data (RFC 5961 5); a flood of
  out-of-window data segments into one connection, answered once per
  --invalid-ack-ms (Linux's tcp_invalid_ratelimit);
- overlapping, duplicate, out-of-order and replayed segments carrying an
  HTTP request: the answer must be exactly one correct response;
- SYNs with bad options (zero-length, truncated, window scale 200): read
  up to the first malformed option and answered, as Linux does; the
  connection works, and each malformed SYN is counted once.

Floods (SYN, forged ACKs and RSTs, junk) are test_floods.py's.

Counters come from /ewyk/tcp (challenge_acks_count, invalid_acks_limited_count,
syncookies_sent_count, bad_options_count) and /ewyk/stats (drops by reason). After each test the
appliance is alive and its mbufs in use are back to idle.
"""
import itertools
import json
import os
import shutil
import tempfile
import textwrap

import pytest

from conftest import serve_hostile, survived, tap_dropped
from ewyk_harness import APP_IP, HOST_IP, IFACE, Appliance
from rawtcp import kernel_rst_filter

HERE = os.path.dirname(os.path.abspath(__file__))
HELLO = b"hello from ewyk\n"
ONE_ANSWER = [["HTTP/1.1 200 OK", HELLO.decode()]]
RAW_PORTS = (20000, 20999)   # below the kernel's ephemeral range
_ports = itertools.count(RAW_PORTS[0])

# The kernel would reset the raw clients' connections, which it does not
# know: its RSTs from those ports are dropped.
RST_FILTER = kernel_rst_filter("ewyk_scapy", RAW_PORTS, IFACE)


@pytest.fixture(scope="module")
def scapy_www():
    d = tempfile.mkdtemp(prefix="ewyk-scapy-www-")
    with open(os.path.join(d, "hello.txt"), "wb") as f:
        f.write(HELLO)
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<!doctype html><title>ewyk</title>\n")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def app(scapy_www):
    yield from serve_hostile(Appliance(www=scapy_www),
                             lambda a: a.ns(["nft", "-f", "-"], input=RST_FILTER))


@pytest.fixture
def idle_after(app):
    """Every test leaves the appliance alive and idle."""
    yield
    survived(app)


def raw_session(app, body, timeout=60):
    """Runs body in the namespace with c = a fresh RawTcp client; body sets
    a dict named result, printed back as JSON."""
    port = next(_ports)
    assert port <= RAW_PORTS[1]
    code = f"""
import json, sys, time
sys.path.insert(0, {HERE!r})
from rawtcp import RawTcp, http_responses, seq_add
REQ = b"GET /hello.txt HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
HELLO = {HELLO!r}
result = {{}}

def answers():
    # The responses so far as [status line, body], and the bytes after them.
    got, rest = http_responses(c.data)
    return [[st, body.decode(errors="replace")] for st, body in got], len(rest)

c = RawTcp({IFACE!r}, {HOST_IP!r}, {APP_IP!r}, {app.mac!r}, {port})
try:
{textwrap.indent(textwrap.dedent(body), "    ")}
finally:
    if c.iss is not None and not c.rst and not c.fin:
        c.abort()
    c.close()
print(json.dumps(result, default=str))
"""
    out = app.ns_python(code, timeout=timeout)
    return json.loads(out.strip().splitlines()[-1])


def tcp_counters(app):
    t = app.telemetry("/ewyk/tcp")
    assert isinstance(t, dict), f"/ewyk/tcp answers {t!r}: no TCP telemetry"
    return t


def drops(app):
    return app.stats()["drop_by_reason_pkts"]


# -- established connection: out of window, RST, SYN ------------------------

def test_out_of_window_data_is_acked_and_dropped(app, idle_after):
    before = drops(app)["tcp_out_of_window"]
    r = raw_session(app, """
        assert c.connect() == "established"
        n = len(c.segs)
        # A whole request far to the right of the window: never delivered.
        c.send("PA", seq=seq_add(c.snd_nxt, 1000000), data=REQ)
        c.pump(0.5)
        result["acks"] = [s["ack"] for s in c.acks_since(n)]
        result["expect_ack"] = c.snd_nxt
        result["data_after_bogus"] = len(c.data)
        ok = c.deliver(REQ)
        c.read_response()
        c.linger(0.3)
        result["delivered"] = ok
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert r["data_after_bogus"] == 0, "the appliance answered out-of-window data"
    assert r["expect_ack"] in r["acks"], "no ACK for an unacceptable segment (RFC 9293 3.10.7.4)"
    assert r["delivered"]
    assert r["responses"] == ONE_ANSWER
    assert r["rest"] == 0
    assert r["closed"]
    assert drops(app)["tcp_out_of_window"] > before


def test_rst_outside_the_window_is_ignored(app, idle_after):
    r = raw_session(app, """
        assert c.connect() == "established"
        n = len(c.segs)
        c.send("R", seq=seq_add(c.snd_nxt, 1000000), ack=0)
        c.send("R", seq=seq_add(c.snd_nxt, -1), ack=0)       # just left of it
        c.send("RA", seq=seq_add(c.snd_nxt, 0x80000000))
        c.pump(0.5)
        result["answers"] = [s["flags"] for s in c.segs[n:]]
        result["delivered"] = c.deliver(REQ)
        c.read_response()
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert r["delivered"], "the connection died of an out-of-window RST"
    assert r["responses"] == ONE_ANSWER
    assert r["closed"]


def test_rst_in_window_gets_a_challenge_ack(app, idle_after):
    r = raw_session(app, """
        assert c.connect() == "established"
        n = len(c.segs)
        c.send("R", seq=seq_add(c.snd_nxt, 100), ack=0)
        c.pump(0.5)
        result["acks"] = [s["ack"] for s in c.acks_since(n)]
        result["expect_ack"] = c.snd_nxt
        result["delivered"] = c.deliver(REQ)
        c.read_response()
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert r["expect_ack"] in r["acks"], "no challenge ACK (RFC 5961 3.2)"
    assert r["delivered"], "an in-window, inexact RST killed the connection"
    assert r["responses"] == ONE_ANSWER
    assert r["closed"]


def test_rst_at_rcv_nxt_resets(app, idle_after):
    open_before = app.stats()["open_conns"]
    r = raw_session(app, """
        assert c.connect() == "established"
        c.send("R", seq=c.snd_nxt, ack=0)
        c.pump(0.3)
        # The connection is gone: data now earns a RST.
        c.send("PA", data=REQ)
        c.pump(1.0, until=lambda: c.rst)
        result["rst"] = c.rst
        c.rst = True      # nothing to abort
    """)
    assert r["rst"], "data after an exact RST was not refused"
    assert app.stats()["open_conns"] == open_before


def test_syn_on_established_gets_a_challenge_ack(app, idle_after):
    r = raw_session(app, """
        assert c.connect() == "established"
        n = len(c.segs)
        c.send("S", seq=seq_add(c.snd_nxt, 5000), ack=0, options=[("MSS", 1400)])
        c.pump(0.5)
        result["answers"] = [s["flags"] for s in c.segs[n:]]
        result["acks"] = [s["ack"] for s in c.acks_since(n)]
        result["expect_ack"] = c.snd_nxt
        result["delivered"] = c.deliver(REQ)
        c.read_response()
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert "SA" not in r["answers"], "a SYN on an established connection got a SYN-ACK"
    assert r["expect_ack"] in r["acks"], "no challenge ACK (RFC 5961 4.2)"
    assert r["delivered"]
    assert r["responses"] == ONE_ANSWER
    assert r["closed"]


def test_challenge_acks_are_counted(app, idle_after):
    """Each challenge ACK is counted, and so is the one the connection's
    interval (--invalid-ack-ms, 500 ms) holds back: an RST and a SYN at
    once earn one answer, a SYN a second later another."""
    before = tcp_counters(app)
    raw_session(app, """
        assert c.connect() == "established"
        c.send("R", seq=seq_add(c.snd_nxt, 100), ack=0)
        c.send("S", seq=seq_add(c.snd_nxt, 5000), ack=0)
        c.pump(1.0)
        c.send("S", seq=seq_add(c.snd_nxt, 5000), ack=0)
        c.pump(0.3)
    """)
    after = tcp_counters(app)
    assert after["challenge_acks_count"] - before["challenge_acks_count"] == 2
    assert after["invalid_acks_limited_count"] - before["invalid_acks_limited_count"] == 1


FLOOD_SECONDS = 3.0
INVALID_ACK_MS = 500          # ewykd's default --invalid-ack-ms


def test_out_of_window_data_flood_earns_two_acks_a_second(app, idle_after):
    """Pktgen's ACK flood (ack-flood.pkt) as scapy builds it: ACKs carrying
    6 bytes (the least a Pktgen frame carries) far outside an established
    connection's window, as fast as the tap takes them for 3 s. The
    connection answers at most one per --invalid-ack-ms (Linux's
    tcp_invalid_ratelimit), counts the rest in invalid_acks_limited_count,
    takes none of their bytes, and serves its next request."""
    before, lost_before = tcp_counters(app), tap_dropped(app)
    r = raw_session(app, f"""
        assert c.connect() == "established"
        # Only what comes in is read: the flood's own frames stay out.
        c.sock.setsockopt(263, 23, 1)       # SOL_PACKET, PACKET_IGNORE_OUTGOING
        n = len(c.segs)
        forged = c.frame("A", seq=seq_add(c.snd_nxt, 0x40000000), data=b"wxyz01")
        sent, t0 = 0, time.monotonic()
        while time.monotonic() - t0 < {FLOOD_SECONDS}:
            for _ in range(64):
                try:
                    c.sock.send(forged)
                    sent += 1
                except OSError:             # the tap's queue is full
                    time.sleep(0.0005)
            c.pump(0.0001)
        result["seconds"] = time.monotonic() - t0
        c.pump(0.3)
        result["sent"] = sent
        result["answers"] = [s["t"] - t0 for s in c.acks_since(n)]
        result["data"] = len(c.data)
        result["delivered"] = c.deliver(REQ)
        c.read_response()
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    after, lost = tcp_counters(app), tap_dropped(app) - lost_before
    limited = after["invalid_acks_limited_count"] - before["invalid_acks_limited_count"]
    answers, seconds = len(r["answers"]), r["seconds"]
    print(f"\n  net_tap: {r['sent']} out-of-window data segments in {seconds:.2f}s "
          f"({r['sent'] / seconds:.0f}/s, {lost} lost in the tap): {answers} ACKs "
          f"({answers / seconds:.2f}/s), {limited} counted in invalid_acks_limited_count")
    assert r["sent"] >= 1000, r["sent"]
    assert r["data"] == 0, "forged bytes reached HTTP"
    # One answer per interval the flood spanned, and one for the lag of
    # the last segments behind the clock.
    assert 1 <= answers <= seconds * 1000 / INVALID_ACK_MS + 2, r["answers"]
    assert r["sent"] - lost - answers <= limited <= r["sent"], (r["sent"], lost, limited)
    assert r["delivered"], "the connection died of the flood"
    assert r["responses"] == ONE_ANSWER
    assert r["closed"]


@pytest.mark.parametrize("case", ["unsent", "too_old"])
def test_data_with_an_unacceptable_ack_is_dropped(app, idle_after, case):
    """RFC 9293 3.10.7.4 (SEG.ACK > SND.NXT: send an ACK, drop the segment)
    and RFC 5961 5.2 (SEG.ACK older than SND.UNA - MAX.SND.WND: the same):
    a blind attacker's data must not reach the application."""
    ack_expr = {"unsent": "seq_add(c.iss, 1 + 1000000)",
                "too_old": "seq_add(c.iss, 1 - 1000000)"}[case]
    r = raw_session(app, f"""
        assert c.connect() == "established"
        n = len(c.segs)
        c.send("PA", data=REQ, ack={ack_expr})
        c.pump(0.7)
        result["answered"] = len(c.data)
        result["acks"] = [s["ack"] for s in c.acks_since(n)]
        result["expect_ack"] = c.snd_nxt
        result["delivered"] = c.deliver(REQ)
        c.read_response()
        c.linger(0.3)
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert r["answered"] == 0, "data carrying an unacceptable ACK reached HTTP"
    assert r["expect_ack"] in r["acks"], "no ACK for a segment with an unacceptable ACK"
    assert r["delivered"]
    assert r["responses"] == ONE_ANSWER
    assert r["closed"]


# -- the request in odd pieces: exactly one answer ---------------------------

PIECES = {
    # name: (pieces of REQ as (start, end); negative end counts from the end, twice)
    "duplicates": ([(0, 12), (12, 25), (25, None)], True),
    "overlaps": ([(0, 10), (5, 20), (15, None), (3, 30)], False),
    "out_of_order": ([(10, None), (0, 15)], False),
    "tiny_overlapping": ([(i, i + 3) for i in range(0, 36, 2)] + [(34, None)], False),
}


@pytest.mark.parametrize("name", list(PIECES))
def test_request_in_odd_segments_is_answered_once(app, idle_after, name):
    pieces, twice = PIECES[name]
    r = raw_session(app, f"""
        assert c.connect() == "established"
        pieces = [(s, len(REQ) if e is None else min(e, len(REQ))) for s, e in {pieces!r}]
        result["delivered"] = c.deliver(REQ, pieces=pieces, twice={twice!r})
        c.read_response()
        c.linger(0.7)        # a second answer would come now
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert r["delivered"]
    assert r["responses"] == ONE_ANSWER
    assert r["rest"] == 0
    assert r["closed"]


def test_replayed_request_is_not_answered_again(app, idle_after):
    r = raw_session(app, """
        assert c.connect() == "established"
        base = c.snd_nxt
        result["delivered"] = c.deliver(REQ)
        c.read_response()
        n = len(c.segs)
        # The same bytes again, at their old sequence numbers: a duplicate.
        c.send("PA", seq=base, data=REQ)
        c.send("PA", seq=seq_add(base, 5), data=REQ[5:20])
        c.linger(0.7)
        result["acks"] = [s["ack"] for s in c.acks_since(n)]
        result["expect_ack"] = c.snd_nxt
        result["responses"], result["rest"] = answers()
        result["closed"] = c.finish()
    """)
    assert r["delivered"]
    assert r["responses"] == ONE_ANSWER
    assert r["rest"] == 0
    assert r["expect_ack"] in r["acks"], "a duplicate segment was not acknowledged"
    assert r["closed"]


# -- SYNs with bad options -----------------------------------------------------

BAD_OPTIONS = {
    # MSS, then an option whose length is zero
    "zero_length": b"\x02\x04\x05\x78" + b"\x08\x00" + b"\x00" * 10,
    # an MSS option claiming 8 bytes where 4 are left
    "truncated": b"\x01\x01\x01\x01" + b"\x02\x08\x05\x78",
    # window scale 200 (RFC 7323 2.3: use 14)
    "wscale_200": b"\x02\x04\x05\x78" + b"\x01\x03\x03\xc8",
}


# Malformed, each counted once; the window scale beyond 14 is not malformed
# (RFC 7323 2.3: taken as 14).
MALFORMED = {"zero_length": 1, "truncated": 1, "wscale_200": 0}


@pytest.mark.parametrize("name", list(BAD_OPTIONS))
def test_syn_with_bad_options_is_answered_and_counted(app, idle_after, name):
    """The one right outcome, as Linux: the options are read up to the
    first malformed one, the SYN is answered, the connection works; the
    SYN is counted in bad_options_count, once."""
    before = tcp_counters(app)["bad_options_count"]
    r = raw_session(app, f"""
        state = c.connect(raw_opts={BAD_OPTIONS[name]!r})
        result["state"] = state
        result["synack_options"] = c.synack["options"] if c.synack else None
        if state == "established":
            result["delivered"] = c.deliver(REQ)
            c.read_response()
            result["responses"], result["rest"] = answers()
            result["closed"] = c.finish()
    """)
    counted = tcp_counters(app)["bad_options_count"] - before
    assert r["state"] == "established", r
    for opt in r["synack_options"] or []:
        if opt[0] == "WScale":
            assert int(opt[1]) <= 14, "the SYN-ACK's own window scale is beyond 14"
    assert r["delivered"]
    assert r["responses"] == ONE_ANSWER
    assert r["closed"]
    assert counted == MALFORMED[name], (name, counted)
