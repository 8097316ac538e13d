# SPDX-License-Identifier: BSD-3-Clause
"""Every profile of drivers-config/ is a configuration ewykd accepts as it
is (`--config F --check-config`, which parses and checks everything but
the devices and starts nothing); the bare-metal ones name their PCI device
and how it is bound. test_media.py serves on the virtual ones (net_tap,
net_af_xdp, net_memif)."""
import os
import re
import subprocess

import pytest

from ewyk_harness import EWYKD, ROOT

PROFILES = os.path.join(ROOT, "drivers-config")
VIRTUAL = {"tap.conf", "af_xdp.conf", "memif.conf"}
BARE_METAL = {"virtio.conf", "i40e.conf", "ice.conf", "mlx5.conf", "ena.conf"}


def check_config(path, *more):
    return subprocess.run([EWYKD, "--config", path, "--check-config", *more],
                          capture_output=True, text=True, timeout=30)


def test_the_profiles_are_these():
    assert {f for f in os.listdir(PROFILES) if f.endswith(".conf")} == VIRTUAL | BARE_METAL


@pytest.mark.parametrize("name", sorted(VIRTUAL | BARE_METAL))
def test_profile_is_accepted(name):
    path = os.path.join(PROFILES, name)
    r = check_config(path)
    assert r.returncode == 0, r.stderr
    assert f"configuration good: {path}" in r.stdout
    eal = re.search(r"eal args: (.*)", r.stdout).group(1)
    text = open(path).read()
    if name in BARE_METAL:
        assert re.search(r"-a [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", eal), eal
        assert "deploy/bind.sh" in text and "deploy/port-check.sh" in text
        assert "librte-net-" in text, "the Debian package of the PMD"
    else:
        assert "--no-pci --vdev net_" in eal


def test_a_broken_profile_is_refused(tmp_path):
    """What --check-config is for: a profile edited wrong is named by
    file and line, exit status 2, before anything starts."""
    broken = tmp_path / "i40e.conf"
    text = open(os.path.join(PROFILES, "i40e.conf")).read()
    broken.write_text(text.replace("shards = 4", "shards = four"))
    r = check_config(str(broken))
    assert r.returncode == 2
    line = text.splitlines().index("shards = 4") + 1
    assert f"{broken}:{line}: shards: 'four' is not a number" in r.stderr, r.stderr
    assert "configuration good" not in r.stdout


def test_the_command_line_overrides_the_profile_in_the_check():
    r = check_config(os.path.join(PROFILES, "ice.conf"), "--shards", "2")
    assert r.returncode == 0 and "shards: 2," in r.stdout
