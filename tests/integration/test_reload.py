# SPDX-License-Identifier: BSD-3-Clause
"""Reload while serving: SIGHUP (or /ewyk/reload) loads the static tree
anew off the data path and swaps it in; an answer begun on the old tree
keeps it until its body is out; a tree that cannot be loaded leaves the
old one serving, and the log says why."""
import hashlib
import os
import signal
import time

from ewyk_harness import Appliance

MB = 1 << 20


def get(a, path, *args):
    r = a.ns(["curl", "-sS", "-m", "30", "-w", " %{http_code}", *args, a.url(path)],
             check=False)
    return r.stdout


def info(a):
    return a.telemetry("/ewyk/info")["www"]


def wait_for(what, timeout=10):
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def reload(a, how="signal"):
    n = info(a)["reloads_count"] + info(a)["reload_failures_count"]
    if how == "signal":
        os.kill(a.proc.pid, signal.SIGHUP)
    else:
        assert a.telemetry("/ewyk/reload") == {"reload": "asked"}
    wait_for(lambda: info(a)["reloads_count"] + info(a)["reload_failures_count"] > n)


def test_sighup_serves_the_new_tree(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    (www / "a.txt").write_text("one\n")
    with Appliance(www=str(www), demo=False) as a:
        assert get(a, "/a.txt") == "one\n 200"
        assert get(a, "/b.txt").endswith(" 404")
        (www / "a.txt").write_text("two\n")
        (www / "b.txt").write_text("new\n")
        reload(a)
        assert get(a, "/a.txt") == "two\n 200"
        assert get(a, "/b.txt") == "new\n 200"
        (www / "b.txt").unlink()
        reload(a, how="telemetry")
        assert get(a, "/b.txt").endswith(" 404")
        w = info(a)
        assert w["reloads_count"] == 2 and w["files"] == 1, w
        log = a.read_log()
        assert log.count("ewykd: reloaded --www") == 2, log
        # The process went on: SIGHUP no longer ends it.
        assert a.proc.poll() is None


def test_answer_in_flight_keeps_the_old_file(tmp_path):
    """A slow download of the old file while the tree is replaced: its
    bytes go out of the send queue without a copy, pointing into the old
    tree (net_tap), which stays until the last of them is acknowledged,
    not only until the answer is all queued; new requests get the new
    file meanwhile."""
    www = tmp_path / "www"
    www.mkdir()
    old = os.urandom(8 * MB)
    (www / "big.bin").write_bytes(old)
    out = tmp_path / "slow.bin"
    with Appliance(www=str(www), demo=False) as a:
        # A client whose kernel takes little ahead of it, so that the body
        # waits in ewykd (borrowed from the tree) rather than in its
        # socket buffer.
        a.ns(["sysctl", "-qw", "net.ipv4.tcp_rmem=4096 16384 16384"])
        slow = a.ns_popen(["curl", "-sS", "-m", "60", "--limit-rate", "1M", "-o", str(out),
                           a.url("/big.bin")])
        # In flight once its first bytes came (no fixed sleep: curl's
        # start-up takes its time on a busy host).
        wait_for(lambda: out.exists() and out.stat().st_size > 0)
        new = os.urandom(8 * MB)
        (www / "big.bin").write_bytes(new)
        reload(a)
        # New requests get the new file at once...
        r = a.ns(["curl", "-sS", "-m", "30", "-o", str(tmp_path / "fresh.bin"),
                  a.url("/big.bin")])
        assert (tmp_path / "fresh.bin").read_bytes() == new, r.stderr
        # ...while the old tree waits for the answer still going out of it.
        assert slow.poll() is None, "the slow download ended too soon to tell"
        assert info(a)["retiring"] == 1
        assert slow.wait(60) == 0
        assert hashlib.sha256(out.read_bytes()).digest() == hashlib.sha256(old).digest()
        wait_for(lambda: info(a)["retiring"] == 0)
        # Both downloads' bytes were lent from the trees (whole mbufs of
        # 2 KiB), and every lend came back.
        tcp = a.telemetry("/ewyk/tcp")
        assert tcp["zero_copy_mbufs_count"] > 2 * 8 * MB // 2176 * 9 // 10, tcp
        assert tcp["zero_copy_refs_used_count"] == 0, tcp


def test_bad_new_tree_keeps_the_old_one(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    (www / "a.txt").write_text("kept\n")
    with Appliance(www=str(www), demo=False, args=["--www-max-mb", "1"]) as a:
        (www / "a.txt").write_text("never served\n")
        for i in range(3):		# over --www-max-mb together
            (www / f"f{i}.bin").write_bytes(os.urandom(MB // 2))
        reload(a)
        assert get(a, "/a.txt") == "kept\n 200"
        w = info(a)
        assert w["reload_failures_count"] == 1 and w["reloads_count"] == 0, w
        assert "reload of --www" in a.read_log() and "refused" in a.read_log()
