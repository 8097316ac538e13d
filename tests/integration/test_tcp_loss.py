# SPDX-License-Identifier: BSD-3-Clause
"""Downloads through random packet loss against the Linux stack.

nftables in the namespace drops a random share of the packets on the kernel
side of the tap: towards the kernel (the appliance's data is lost), from the
kernel (requests and ACKs are lost), or both. Every transfer is checked byte
for byte (sha256), is bounded by a curl timeout derived from its size, and
prints its duration and throughput (pytest -s) so that stalls show. After
each one the appliance's mbufs return to their idle count.

Sizes x loss are chosen to keep the module near three minutes on two cores:
64 MB only without loss and at 1 % both ways, 1 MB at every rate and
direction, 1 KB at every rate both ways. Over IPv6 (the loss on its TCP
segments): 1 MB at 5 % in every direction, 1 KB at 5 % both ways, and 64 MB
without loss.
"""
import pytest

from ewyk_harness import APP_IP
from tcp_loss_util import (case_id, clear_loss, loss_drops, lossy_appliance, random_files,
                           set_loss, sha256_file, timed_curl)

SIZES = {"1K": 1024, "1M": 1 << 20, "64M": 64 << 20}

CASES = [
    ("none", 0, "1K"), ("none", 0, "1M"), ("none", 0, "64M"),
    ("both", 1, "1K"), ("in", 1, "1M"), ("out", 1, "1M"), ("both", 1, "1M"),
    ("both", 1, "64M"),
    ("both", 5, "1K"), ("in", 5, "1M"), ("out", 5, "1M"), ("both", 5, "1M"),
    ("both", 10, "1K"), ("in", 10, "1M"), ("out", 10, "1M"), ("both", 10, "1M"),
]


@pytest.fixture(scope="module")
def loss_www():
    """Random files of 1 KB, 1 MB and 64 MB with their sha256."""
    yield from random_files("ewyk-loss-www-", SIZES, "f{}.bin")


@pytest.fixture(scope="module")
def loss_appliance(loss_www):
    yield from lossy_appliance(loss_www["dir"])


CASES6 = [("none", 0, "64M"), ("both", 5, "1K"), ("in", 5, "1M"), ("out", 5, "1M"),
          ("both", 5, "1M")]


@pytest.mark.parametrize("case, family",
                         [(c, 4) for c in CASES] + [(c, 6) for c in CASES6],
                         ids=[case_id(c) for c in CASES] +
                         [f"ipv6-{case_id(c)}" for c in CASES6])
def test_download_through_loss(loss_appliance, loss_www, tmp_path, case, family):
    a = loss_appliance
    direction, pct, size_name = case
    size = SIZES[size_name]
    out = tmp_path / "out.bin"
    before = a.stats()
    set_loss(a, direction, pct, family)
    url = a.url(f"/f{size_name}.bin") if family == 4 else a.url6(f"/f{size_name}.bin")
    try:
        code, got, dt, r = timed_curl(a, ["-o", str(out), url], case_id(case), size, pct)
        dropped = loss_drops(a)
    finally:
        clear_loss(a)
    after = a.stats()
    print(f"  nft dropped {dropped} packets; appliance retransmitted "
          f"{after['tcp_retransmit_segs'] - before['tcp_retransmit_segs']} segments")
    assert r.returncode == 0, f"curl failed: {r.stderr.strip()} after {dt:.1f}s"
    assert code == "200"
    assert got == size
    assert out.stat().st_size == size
    assert sha256_file(out) == loss_www["sha256"][size_name], "content differs"
    if family == 6:
        assert after["rx_ip6_pkts"] > before["rx_ip6_pkts"]
        assert dropped > 0 or pct == 0 or size_name == "1K"
    a.wait_idle(a.idle_mbufs, timeout=15)


def test_loss_rules_really_drop(loss_appliance):
    """The loss machinery itself: at 50 % both ways pings get lost."""
    a = loss_appliance
    set_loss(a, "both", 50)
    try:
        r = a.ns(["ping", "-c", "20", "-i", "0.05", "-W", "1", APP_IP], check=False)
        dropped = loss_drops(a)
    finally:
        clear_loss(a)
    assert dropped > 0
    assert " 0% packet loss" not in r.stdout
