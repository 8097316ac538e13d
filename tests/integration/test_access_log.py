# SPDX-License-Identifier: BSD-3-Clause
"""The access log: a line per exchange, in the combined format or JSON,
written off the data path; reopened on SIGUSR1 for logrotate; nothing
lost under load (drops counted, here none)."""
import json
import os
import re
import signal
import time

import pytest

from ewyk_harness import HOST_IP, Appliance

COMBINED = re.compile(r'^(\S+) - - \[(\d\d/\w\w\w/\d{4}:\d\d:\d\d:\d\d \+0000)\] '
                      r'"(\S+) (\S+) (HTTP/[\d.]+)" (\d{3}) (\d+|-) "(.*)" "(.*)"$')


def lines_of(path, n, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        text = open(path).read() if os.path.exists(path) else ""
        lines = text.splitlines()
        if len(lines) >= n or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_combined_lines(www, tmp_path):
    log = tmp_path / "access.log"
    with Appliance(www=www["dir"], args=["--access-log", str(log)]) as a:
        ua = 'tester/1.0 "quoted"'
        a.ns(["curl", "-sS", "-o", "/dev/null", "-A", ua, "-e", "http://ref.example/x",
              a.url("/hello.txt?q=1")])
        a.ns(["curl", "-sS", "-o", "/dev/null", a.url("/nope")])
        a.ns(["curl", "-sS", "-o", "/dev/null", "--http2-prior-knowledge",
              a.url("/hello.txt")])
        a.ns(["curl", "-sS", "-o", "/dev/null", "--data-binary", "12345", a.url("/echo")])
        lines = lines_of(log, 4)
        assert len(lines) == 4, lines
        m = [COMBINED.match(l) for l in lines]
        assert all(m), lines
        size = os.path.getsize(os.path.join(www["dir"], "hello.txt"))
        first = m[0].groups()
        assert first[0] == HOST_IP and first[2:6] == ("GET", "/hello.txt?q=1", "HTTP/1.1",
                                                      "200")
        assert first[6] == str(size)
        # A quote of a client's field cannot end the field: escaped.
        assert first[7] == "http://ref.example/x" and first[8] == r"tester/1.0 \x22quoted\x22"
        assert m[1].group(6) == "404"			# answered by lib/http
        assert m[2].group(5) == "HTTP/2.0" and m[2].group(6) == "200"
        assert m[3].group(3) == "POST" and m[3].group(6) == "200" and m[3].group(7) == "5"
        # A head that cannot be parsed is answered 400, and logged.
        a.exchange(b"GET /x HTTP/1.1\r\nHost: a\r\nBad\x01Field: 1\r\n\r\n")
        last = lines_of(log, 5)[-1]
        assert COMBINED.match(last).group(3, 4, 6) == ("-", "-", "400"), last
        http = a.telemetry("/ewyk/http")
        assert http["access_log_lines_count"] == 5 and http["access_log_drops_count"] == 0


def test_json_lines_and_reopen(www, tmp_path):
    log = tmp_path / "access.json"
    with Appliance(www=www["dir"], args=["--access-log", str(log),
                                         "--access-log-format", "json"]) as a:
        a.ns(["curl", "-sS", "-o", "/dev/null", "-A", "ua\u00e9x", a.url("/hello.txt")])
        first = lines_of(log, 1)
        assert len(first) == 1
        j = json.loads(first[0])
        assert j["remote_addr"] == HOST_IP and j["method"] == "GET"
        assert j["target"] == "/hello.txt" and j["status"] == 200
        assert j["protocol"] == "HTTP/1.1" and j["user_agent"] == "ua\u00c3\u00a9x"
        assert j["duration_us"] >= 0 and isinstance(j["bytes"], int)
        # logrotate moves the file, then asks ewykd to reopen its own.
        os.rename(log, str(log) + ".1")
        os.kill(a.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while a.telemetry("/ewyk/http")["access_log_reopens_count"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        a.ns(["curl", "-sS", "-o", "/dev/null", a.url("/hello.txt")])
        assert len(lines_of(log, 1)) == 1
        assert len(open(str(log) + ".1").read().splitlines()) == 1


def test_nothing_lost_under_load(www, tmp_path):
    log = tmp_path / "access.log"
    n = 20000
    with Appliance(www=www["dir"], args=["--access-log", str(log)]) as a:
        r = a.ns(["h2load", "-n", str(n), "-c", "8", "-m", "16", a.url("/hello.txt")],
                 timeout=120)
        assert f"{n} succeeded" in r.stdout, r.stdout
        lines = lines_of(log, n, timeout=30)
        http = a.telemetry("/ewyk/http")
    assert len(lines) == n and http["access_log_drops_count"] == 0, \
        (len(lines), http["access_log_drops_count"])
    assert all(" 200 " in l for l in lines)


def test_bad_access_log_path_is_a_start_up_error(www):
    a = Appliance(www=www["dir"], args=["--access-log", "/nonexistent/dir/access.log"])
    with pytest.raises(RuntimeError) as e:
        a.start()
    a.close()
    assert "--access-log: /nonexistent/dir/access.log: No such file or directory" in str(e.value)
