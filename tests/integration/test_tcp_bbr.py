# SPDX-License-Identifier: BSD-3-Clause
"""BBR (--tcp-cc bbr) and CUBIC's optional pacing (--tcp-pacing on)
against the Linux stack through net_tap, with nftables random loss each
way: downloads and /echo uploads of 1 MB, and 16 MB without loss, every
byte checked (sha256); BBR's counters show its model at work (the pipe
found full, its gain cycle, pacing), and the mbufs go back to idle.
"""
import shutil
import tempfile

import pytest

from tcp_loss_util import (assert_whole, case_id, clear_loss, loss_drops, lossy_appliance,
                           random_files, set_loss, timed_curl)

SIZES = {"1M": 1 << 20, "16M": 16 << 20}
CASES = [("none", 0, "16M"), ("both", 1, "1M"), ("both", 5, "1M"), ("both", 10, "1M")]


@pytest.fixture(scope="module")
def files():
    yield from random_files("ewyk-bbr-", SIZES, "f{}.bin")


@pytest.fixture(scope="module", params=["bbr", "cubic-paced"])
def appliance(request, files):
    args = ["--tcp-cc", "bbr"] if request.param == "bbr" else \
        ["--tcp-cc", "cubic", "--tcp-pacing", "on"]
    d = tempfile.mkdtemp(prefix="ewyk-bbr-www-")
    try:
        for name in SIZES:
            shutil.copy(f"{files['dir']}/f{name}.bin", d)
        for a in lossy_appliance(d, args):
            a.cc = request.param
            yield a
    finally:
        shutil.rmtree(d, ignore_errors=True)


def tcp(a):
    return a.telemetry("/ewyk/tcp")


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
@pytest.mark.parametrize("kind", ["download", "upload"])
def test_transfer_through_loss(appliance, files, tmp_path, case, kind):
    a = appliance
    direction, pct, size_name = case
    size = SIZES[size_name]
    out = tmp_path / "out.bin"
    set_loss(a, direction, pct)
    try:
        if kind == "download":
            args = ["-o", str(out), a.url(f"/f{size_name}.bin")]
            moved = size
        else:
            args = ["-X", "POST", "-H", "Expect:", "--data-binary",
                    f"@{files['dir']}/f{size_name}.bin", "-o", str(out), a.url("/echo")]
            moved = 2 * size
        result = timed_curl(a, args, f"{a.cc} {kind} {case_id(case)}", size, pct,
                            moved=moved)
        dropped = loss_drops(a)
    finally:
        clear_loss(a)
    assert_whole(a, result, dropped, size, out, files["sha256"][size_name])


def test_counters(appliance):
    """After the transfers above: the sending was paced; BBR found the
    pipe full and cycled its gains."""
    t = tcp(appliance)
    assert t["pacing_waits_count"] > 0
    if appliance.cc == "bbr":
        assert t["bbr_full_bw_count"] > 0
        assert t["bbr_cycles_count"] > 0
    else:
        assert t["bbr_full_bw_count"] == 0
