# SPDX-License-Identifier: BSD-3-Clause
"""Start-up errors, the configuration file, and stopping under load."""
import json
import re
import signal
import time

import pytest

from ewyk_harness import APP_IP, EWYKD, Appliance, run


def test_help_lists_the_contract_options():
    r = run([EWYKD, "--help"])
    for opt in ["--config FILE", "--ip ADDR/PREFIX", "--www DIR"]:
        assert opt in r.stdout
    assert "HTTP/1.1 and HTTP/2" in r.stdout


def test_help_lists_every_telemetry_command(www):
    with Appliance(www=www["dir"]) as a:
        listed = a.telemetry("/")
    ours = [c for c in listed if c.startswith("/ewyk/")]
    assert len(ours) >= 9, listed
    helped = run([EWYKD, "--help"]).stdout
    for c in ours:
        assert f"  {c} " in helped, c


def test_bad_option_is_one_line_and_status_2():
    for args, word in [(["--", "--ip", "300.1.1.1/24"], "--ip"),
                       (["--", "--shards", "zero"], "--shards"),
                       (["--", "--no-such-option"], "--no-such-option"),
                       (["--", "--www"], "--www"),
                       (["--", "--idle", "nap"], "--idle")]:
        r = run([EWYKD, *args], check=False)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and word in lines[0], r.stderr


def test_bad_config_file_names_the_line(tmp_path):
    cases = {
        "[ewykd]\nip = 198.18.0.2/24\nmtu = 20\n": ":3: mtu:",
        "[ewykd]\nwww = /tmp\nfrobnicate = 1\n": ":3: unknown key 'frobnicate'",
        "[ewykd]\nthis line is broken\n": ":2: expected",
        "[ewykd]\nip = 198.18.0.2/24\n[other]\nx = 1\n": ":3: unknown section [other]",
    }
    for text, expect in cases.items():
        f = tmp_path / "ewykd.conf"
        f.write_text(text)
        r = run([EWYKD, "--config", str(f)], check=False)
        assert r.returncode == 2, (text, r.stderr)
        assert expect in r.stderr, (text, r.stderr)
    r = run([EWYKD, "--config", str(tmp_path / "missing.conf")], check=False)
    assert r.returncode == 2 and "missing.conf" in r.stderr


def test_config_file_is_applied(www, tmp_path):
    conf = tmp_path / "ewykd.conf"
    conf.write_text(f"; test configuration\n[ewykd]\nwww = {www['dir']}\n"
                    "max-conns = 64\nidle = sleep\n")
    with Appliance(args=["--config", str(conf)]) as a:
        info = a.telemetry("/ewyk/info")
        assert info["max_conns_per_shard"] == 64
        assert info["www"]["files"] == 4
        r = a.ns(["curl", "-sS", "-m", "5", a.url("/hello.txt")])
        assert r.stdout == "hello from ewyk\n"


def test_sigterm_during_traffic_exits_0_within_2s(www):
    with Appliance(www=www["dir"]) as a:
        status, took = a.stop_under_load("/hello.txt")
        assert status == 0, a.read_log()
        assert took < 2.0, f"took {took:.2f}s"
        assert "ewykd: stopped" in a.read_log()


def test_two_shards_serve_each_connection_on_one_shard(www):
    # Two shards on a two-queue tap; the kernel spreads flows by hash and
    # each flow must be answered by the shard that owns its queue, else the
    # other shard would reset it.
    with Appliance(www=www["dir"], lcores="0@0,1@1,2@1", args=["--shards", "2"]) as a:
        r = a.ns(["h2load", "--h1", "-n", "4000", "-c", "64", "-m", "1",
                  a.url("/hello.txt")], timeout=120)
        assert "4000 succeeded" in r.stdout, r.stdout
        shards = a.telemetry("/ewyk/shards")
        assert sorted(shards) == ["shard_0", "shard_1"]
        per = [shards[k]["total_conns"] for k in sorted(shards)]
        assert sum(per) >= 64 and all(n > 0 for n in per), per
        assert {shards[k]["lcore"] for k in shards} == {1, 2}
        stats = a.stats()
        assert stats["drop_by_reason_pkts"]["tcp_no_conn"] == 0
        assert stats["tcp_reset_out_segs"] == 0


def test_sigterm_drains_in_flight_and_refuses_new(www):
    """A request in flight when SIGTERM comes is answered; a new connection
    is refused at once; ewykd then exits 0."""
    with Appliance(www=www["dir"], lcores="0@0,1@1,2@1",
                   args=["--shards", "1", "--reserved", "1", "--drain-ms", "3000"]) as a:
        slow = a.ns_popen_python(f"""
import socket
s = socket.create_connection(("{APP_IP}", 80), timeout=5)
s.sendall(b"GET /delay?ms=800 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
got = b""
while True:
    c = s.recv(4096)
    if not c:
        break
    got += c
print(got.decode())
""")
        # In flight once its handler has it (the client's start-up takes
        # its time on a busy host: no fixed sleep).
        deadline = time.monotonic() + 10
        while a.telemetry("/ewyk/strategy")["shard_0"]["fibers_started_count"] == 0:
            assert time.monotonic() < deadline, "the slow request never came"
            time.sleep(0.02)
        a.proc.send_signal(signal.SIGTERM)
        time.sleep(0.1)
        t0 = time.monotonic()
        r = a.ns(["curl", "-sS", "-m", "2", a.url("/hello.txt")], check=False)
        # curl's 7: the SYN was answered with a reset, not left to time out
        assert r.returncode == 7 and time.monotonic() - t0 < 1.0, r.stderr
        out, _ = slow.communicate(timeout=10)
        assert out.startswith("HTTP/1.1 200 OK"), out
        assert "Connection: close" in out and "delayed 800 ms" in out
        status, _ = a.stop()
        assert status == 0, a.read_log()
        # The log says what the drain did, in a line each.
        log = a.read_log()
        assert "ewykd: draining: 1 connection(s) open" in log, log
        assert re.search(r"ewykd: drained in \d+ ms: 1 connection\(s\) finished, 0 cut",
                         log), log


def test_sigterm_lets_an_h2_stream_in_flight_finish(www):
    """GOAWAY on drain refuses new streams, but a handler's answer still
    under way is delivered on its stream."""
    with Appliance(www=www["dir"], lcores="0@0,1@1,2@1",
                   args=["--shards", "1", "--reserved", "1", "--drain-ms", "3000"]) as a:
        slow = a.ns_popen(["curl", "-sS", "-m", "5", "--http2-prior-knowledge",
                           "-w", " %{http_code}", a.url("/delay?ms=800")])
        time.sleep(0.3)
        a.proc.send_signal(signal.SIGTERM)
        out, _ = slow.communicate(timeout=10)
        assert out.startswith("delayed 800 ms") and out.endswith(" 200"), out
        status, _ = a.stop()
        assert status == 0, a.read_log()


def test_sigterm_during_h2_load_exits_0(www):
    with Appliance(www=www["dir"]) as a:
        load = a.ns_popen(["h2load", "-D", "4", "-c", "4", "-m", "8", a.url("/hello.txt")])
        time.sleep(1.0)
        status, took = a.stop()
        out, _ = load.communicate(timeout=30)
        assert status == 0 and took < 2.0, (status, took)
        # answers that were given are all good ones
        assert re.search(r"status codes: \d+ 2xx, 0 3xx, 0 4xx, 0 5xx", out), out


SLOW_CLIENT = """
import json, socket, time
s = socket.create_connection(("{ip}", 80), timeout=30)
s.sendall(b"GET {path} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
got, err, t0 = b"", None, time.monotonic()
try:
    while True:
        c = s.recv(4096)
        if not c:
            break
        got += c
except OSError as e:
    err = repr(e)
print(json.dumps({{"got": got.decode(errors="replace"), "error": err,
                  "took": time.monotonic() - t0}}))
"""


@pytest.mark.parametrize("path", ["/delay?ms=4000", "/blocking-delay?ms=4000"])
def test_drain_cuts_an_answer_outlasting_drain_ms(www, path):
    """--drain-ms bounds the drain: an answer still owed when it is up
    is cut (its connection ends without it), and ewykd exits 0 on time,
    a handler asleep on a fiber or a pool thread notwithstanding."""
    with Appliance(www=www["dir"], lcores="0@0,1@1,2@1",
                   args=["--shards", "1", "--reserved", "1", "--drain-ms", "500"]) as a:
        slow = a.ns_popen_python(SLOW_CLIENT.format(ip=APP_IP, path=path))
        time.sleep(0.5)
        status, took = a.stop(timeout=20)
        out, _ = slow.communicate(timeout=20)
        client = json.loads(out)
        print(f"\n  stopped in {took:.2f} s; the client: {client}")
        assert status == 0, a.read_log()
        assert took < 0.5 + 1.5, f"ewykd took {took:.2f} s to stop"
        assert client["got"] == "", client
        assert client["took"] < 0.5 + 0.5 + 1.5, client
        assert "ewykd: stopped" in a.read_log()
