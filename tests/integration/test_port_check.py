# SPDX-License-Identifier: BSD-3-Clause
"""deploy/port-check.sh: the real dpdk-testpmd runs
pktgen-scripts/testpmd/port-check.cmd on a port and the script answers
yes or no per need of ewykd, with the options to use. Checked on a net_tap
vdev (link up, queues, no RSS of its own, checksum offloads) and on a
net_memif server without a peer (link down, no offloads), each in a
namespace of its own; then its refusals of bad arguments."""
import os
import re
import subprocess

import pytest

from ewyk_harness import ROOT, run

PORT_CHECK = os.path.join(ROOT, "deploy", "port-check.sh")
ANSWER = re.compile(r"^  (.+?) +(yes|no)  ", re.M)


def port_check(netns, *args):
    r = subprocess.run(["ip", "netns", "exec", netns, PORT_CHECK, *args],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, dict(ANSWER.findall(r.stdout)), r.stdout, r.stderr


def option_line(out, name):
    return re.search(rf"^{name} options: +(.*)$", out, re.M).group(1)


def test_tap_answers(netns):
    """net_tap: link up, 16 queue pairs, ipv4-tcp offered but no hash of
    its own (its RSS is rte_flow rules only), checksum offloads both ways;
    more than one shard still, since the kernel keeps a flow on one queue."""
    vdev = "net_tap0,iface=pc0"
    status, answers, out, err = port_check(netns, "--shards", "2", vdev)
    assert answers == {
        "link up": "yes",
        "queue pairs for 2 shards": "yes",
        "RSS over the TCP 4-tuple": "no",
        "IPv4/TCP RX checksum offload": "yes",
        "IPv4/TCP TX checksum offload": "yes",
    }, out + err
    assert status == 1, "a 'no' must make the exit status 1"
    assert "16 RX, 16 TX" in out
    assert option_line(out, "EAL").startswith(f"-l 0-2 --no-pci --vdev {vdev} ")
    assert "--shards 2 " in option_line(out, "ewykd")
    assert "net_tap keeps each flow on one queue" in out
    # testpmd's tap went away with it
    assert "pc0" not in run(["ip", "-n", netns, "link"]).stdout


def test_tap_too_few_queues(netns):
    status, answers, out, _ = port_check(netns, "--shards", "20", "net_tap0,iface=pc0")
    assert answers["queue pairs for 20 shards"] == "no"
    assert "--shards 16 " in option_line(out, "ewykd")
    assert option_line(out, "EAL").startswith("-l 0-16 ")
    assert status == 1


def test_memif_without_peer(netns, tmp_path):
    """A memif server nobody connects to: link down; memif has no RSS and
    no checksum offload: one shard, checksums in software, mtu 1500
    (frames of 1518 bytes at most)."""
    vdev = f"net_memif0,role=server,socket={tmp_path}/m.sock,socket-abstract=no"
    status, answers, out, _ = port_check(netns, "--shards", "2", vdev)
    assert answers == {
        "link up": "no",
        "queue pairs for 2 shards": "yes",
        "RSS over the TCP 4-tuple": "no",
        "IPv4/TCP RX checksum offload": "no",
        "IPv4/TCP TX checksum offload": "no",
    }, out
    assert "offers no TCP hash" in out
    assert option_line(out, "ewykd").startswith("--shards 1 --mtu 1500 ")
    assert "one shard: without RSS" in out
    assert status == 1


@pytest.mark.parametrize("args,message", [
    (["eth0"], "neither a PCI address"),
    (["net_tap0 iface=x"], "neither a PCI address"),
    (["0000:ff:1f.7"], "no such PCI device"),
    (["ff:1f.7"], "0000:ff:1f.7: no such PCI device"),
    (["--shards", "0", "net_tap0"], "--shards 0"),
    (["net_tap0", "net_tap1"], "one port at a time"),
    ([], "usage"),
])
def test_bad_arguments(netns, args, message):
    status, answers, out, err = port_check(netns, *args)
    assert status == 2, out + err
    assert message in err
    assert answers == {}


def test_a_port_that_cannot_be_opened(netns):
    """A vdev whose PMD refuses its arguments: testpmd's own words, status 3."""
    status, _, out, err = port_check(netns, "net_af_xdp0,iface=nosuchif0")
    assert status == 3, out + err
    assert "could not open net_af_xdp0" in err
