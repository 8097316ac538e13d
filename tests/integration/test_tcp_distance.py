# SPDX-License-Identifier: BSD-3-Clause
"""ewykd's TCP across a path of tens of milliseconds: ewyk-delay between the
client's namespace and ewykd's tap (app/bench/delay_path.sh, the tap's
kernel side adopted by the path), a Linux client (curl) at the far end.
A download's flight goes far past the 128 segments the scoreboard once
held, and the send buffer grows past --snd-buf to let it."""
import contextlib
import os
import subprocess
import tempfile
import time

import pytest

from ewyk_harness import IFACE, ROOT, Appliance, run

SIZE = 24 << 20
RTT_MS = 50


@contextlib.contextmanager
def delay_path(a, rtt_ms, loss=0):
    """The path up between a new client namespace (yielded) and a's tap,
    for the with block; taken down after it, whatever happens (a shell
    holds it: the end of its input ends it, and its trap takes it down)."""
    base = f"ewyk-dd{os.getpid()}"
    script = f"""cd {ROOT} || exit 1
. app/bench/delay_path.sh
trap delay_path_down EXIT
delay_path_up {base}d {base}c {a.name} {IFACE} {rtt_ms / 2} {loss} 0 7 >/dev/null || exit 1
echo up
read -r _
"""
    p = subprocess.Popen(["bash", "-c", script], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert line.strip() == "up", f"the path did not come up: {line!r}"
        yield base + "c"
    finally:
        p.stdin.close()
        p.wait(timeout=30)


def settled(a, timeout=10):
    """/ewyk/tcp once no scoreboard entry is in use, or at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        t = a.telemetry("/ewyk/tcp")
        if t["scoreboard_entries_used_count"] == 0 or time.monotonic() > deadline:
            return t
        time.sleep(0.1)


@pytest.fixture(scope="module")
def big_tree():
    with tempfile.TemporaryDirectory(prefix="ewyk-dist-") as d:
        with open(os.path.join(d, "big.bin"), "wb") as f:
            f.write(os.urandom(SIZE))
        yield d


def test_download_at_50_ms_flies_hundreds_of_segments(big_tree):
    """CUBIC, no loss, 50 ms: the pool of scoreboard entries grows past
    two chunks of 256 (more than 256 segments were in flight at once:
    the old ring held 128) and the send buffer, from 64 KiB, grows. With
    --tso off: a TSO frame is one entry of many segments."""
    args = ["--tcp-cc", "cubic", "--snd-buf", "65536", "--tso", "off"]
    with Appliance(www=big_tree, args=args, demo=False) as a:
        before = a.telemetry("/ewyk/tcp")
        with delay_path(a, RTT_MS) as client:
            r = run(["ip", "netns", "exec", client, "curl", "-sS", "-m", "90",
                     "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                     a.url("/big.bin")], timeout=120)
            # The last ACKs are still on the path: every entry back once
            # they are in.
            after = settled(a)
    assert r.stdout.split() == ["200", str(SIZE)], r.stdout + r.stderr
    assert after["scoreboard_entries_made_count"] >= 512, after
    assert after["snd_buf_grows_count"] > before["snd_buf_grows_count"], after
    assert after["scoreboard_entries_used_count"] == 0, after
