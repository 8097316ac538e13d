# SPDX-License-Identifier: BSD-3-Clause
"""/v1/state: a PUT visible at once from every shard, durable PUTs through
the conflating write-behind, recovery after a stop, a torn journal tail,
and kill -9 in the middle of a durable load."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from ewyk_harness import APP_IP, Appliance

LCORES = "0@0,1@1,2@1"


@pytest.fixture
def state_dir():
    d = tempfile.mkdtemp(prefix="ewyk-state-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def store_appliance(www, state_dir, *extra, shards=1):
    args = ["--shards", str(shards), "--state-dir", state_dir, *extra]
    if shards == 1:
        args += ["--reserved", "1"]
    return Appliance(www=www["dir"], lcores=LCORES, args=args)


def http(a, method, path, body=None):
    """One request on a fresh connection: (status, etag, body)."""
    args = ["curl", "-sS", "-m", "10", "-X", method, "-D", "-", "-o", "/dev/stderr"]
    if body is not None:
        args += ["--data-binary", body, "-H", "Content-Type: application/octet-stream"]
    r = a.ns(args + [a.url(path)], check=False)
    status = int(r.stdout.split()[1]) if r.stdout.startswith("HTTP/") else 0
    etag = re.search(r'(?mi)^ETag: "(\d+)"', r.stdout)
    return status, int(etag.group(1)) if etag else None, r.stderr


def test_put_visible_on_every_shard_at_once(www, state_dir):
    with store_appliance(www, state_dir, shards=2) as a:
        status, v, _ = http(a, "PUT", "/v1/state/colour", "blue")
        assert status == 200 and v > 0
        # Twenty fresh connections: the kernel spreads them over both
        # shards, and every one sees the value just written.
        out = a.ns_python(f"""
import http.client
seen = []
for _ in range(20):
    c = http.client.HTTPConnection("{APP_IP}", 80, timeout=5)
    c.request("GET", "/v1/state/colour")
    r = c.getresponse()
    seen.append((r.status, r.read().decode(), r.getheader("ETag")))
    c.close()
print(len({{s for s in seen}}), seen[0])
""")
        assert out.startswith("1 (200, 'blue', '\"%d\"')" % v), out
        shards = a.telemetry("/ewyk/shards")
        assert all(shards[k]["total_conns"] > 0 for k in shards), shards


def test_bad_requests(www, state_dir):
    with store_appliance(www, state_dir) as a:
        assert http(a, "GET", "/v1/state/none")[0] == 404
        assert http(a, "PUT", "/v1/state/bad%20key", "x")[0] == 400
        assert http(a, "PUT", "/v1/state/" + "k" * 65, "x")[0] == 400
        assert http(a, "DELETE", "/v1/state/k")[0] == 404     # absent
        r = a.ns(["curl", "-sS", "-m", "10", "-X", "PATCH", "-D", "-", "-o", "/dev/null",
                  a.url("/v1/state/k")])
        assert r.stdout.startswith("HTTP/1.1 405"), r.stdout
        assert re.search(r"(?mi)^Allow: GET, HEAD, PUT, DELETE$", r.stdout), r.stdout
        assert http(a, "PUT", "/v1/state/big", "x" * 5000)[0] == 413
        assert http(a, "GET", "/v1/state/big")[0] == 404
        # the appliance keeps serving
        assert http(a, "PUT", "/v1/state/ok", "1")[0] == 200


def test_durable_put_survives_restart(www, state_dir):
    acked = {}
    with store_appliance(www, state_dir) as a:
        for i in range(10):
            status, v, body = http(a, "PUT", f"/v1/state/key{i}?durable=1", f"value {i}")
            assert status == 200 and "on disk" in body
            acked[f"key{i}"] = (v, f"value {i}")
        http(a, "PUT", "/v1/state/key0?durable=1", "newest")
        s = a.telemetry("/ewyk/conflate")
        assert s["fsyncs_count"] >= 1 and s["lag_versions"] == 0
        assert a.stop()[0] == 0
    with store_appliance(www, state_dir) as a:
        for k, (v, value) in acked.items():
            status, v2, body = http(a, "GET", f"/v1/state/{k}")
            assert status == 200 and v2 >= v
            assert body == ("newest" if k == "key0" else value)
        assert a.telemetry("/ewyk/conflate")["recovered_records"] >= 10


def test_torn_tail_is_reported_and_ignored(www, state_dir):
    with store_appliance(www, state_dir) as a:
        assert http(a, "PUT", "/v1/state/a?durable=1", "kept")[0] == 200
        a.stop()
    journal = os.path.join(state_dir, "journal.ewyk")
    good = os.path.getsize(journal)
    with open(journal, "ab") as f:
        f.write(b"EWK1\x03\x00\x00\x00\xff\x00")	# a record cut short
    with store_appliance(www, state_dir) as a:
        assert f"torn or corrupt record at offset {good}" in a.read_log()
        status, _, body = http(a, "GET", "/v1/state/a")
        assert status == 200 and body == "kept"
        assert a.telemetry("/ewyk/conflate")["torn_offset_bytes"] == good
        assert http(a, "PUT", "/v1/state/b?durable=1", "after")[0] == 200
    assert os.path.getsize(journal) > good	# appended after the cut


def test_kill_9_keeps_every_acknowledged_durable_put(www, state_dir):
    with store_appliance(www, state_dir) as a:
        load = subprocess.Popen(
            ["ip", "netns", "exec", a.client, "/usr/bin/python3", "-c", f"""
import http.client, re, sys, threading, time
acked = {{}}
lock = threading.Lock()
def worker(t):
    seq = 0
    try:
        c = http.client.HTTPConnection("{APP_IP}", 80, timeout=5)
        while True:
            key = "hot%d" % (seq % 8)
            c.request("PUT", "/v1/state/%s?durable=1" % key, body="%d-%d" % (t, seq))
            r = c.getresponse()
            r.read()
            if r.status == 200:
                v = int(r.getheader("ETag").strip('"'))
                with lock:
                    acked[key] = max(acked.get(key, 0), v)
            seq += 1
    except Exception:
        return
ts = [threading.Thread(target=worker, args=(t,)) for t in range(12)]
[t.start() for t in ts]
[t.join(timeout=30) for t in ts]
print(" ".join("%s=%d" % kv for kv in sorted(acked.items())))
"""], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(2.0)
        a.stop(sig=signal.SIGKILL)	# mid-load, nothing flushed on the way out
        out, _ = load.communicate(timeout=60)
    acked = dict((k, int(v)) for k, v in (p.split("=") for p in out.split()))
    assert len(acked) == 8, out
    with store_appliance(www, state_dir) as a:
        for key, v in acked.items():
            status, v2, _ = http(a, "GET", f"/v1/state/{key}")
            assert status == 200 and v2 is not None and v2 >= v, (key, v, v2)


def test_journal_is_compacted(www, state_dir):
    with store_appliance(www, state_dir, "--journal-max-mb", "1") as a:
        out = a.ns_python(f"""
import http.client
c = http.client.HTTPConnection("{APP_IP}", 80, timeout=10)
for i in range(800):
    c.request("PUT", "/v1/state/k%d?durable=1" % (i % 4), body="%04d" % i * 1000)
    r = c.getresponse(); r.read()
    assert r.status == 200, r.status
print("ok")
""")
        assert out.strip() == "ok"
        s = a.telemetry("/ewyk/conflate")
        assert s["compactions_count"] >= 1
    assert os.path.getsize(os.path.join(state_dir, "journal.ewyk")) < 2 << 20
    with store_appliance(www, state_dir) as a:
        status, _, body = http(a, "GET", "/v1/state/k3")
        assert status == 200 and body == "0799" * 1000
