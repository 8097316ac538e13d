# SPDX-License-Identifier: BSD-3-Clause
"""Every profile of drivers-config/ is a configuration ewykd accepts as it
is (`--config F --check-config`, which checks everything a start would
but the devices and memory, and starts nothing); the bare-metal ones name
their PCI device and how it is bound. test_media.py serves on the virtual ones (net_tap,
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


@pytest.fixture(scope="module")
def www(tmp_path_factory):
    """A profile names no site: the check is given one (with none it
    refuses: nothing to serve)."""
    d = tmp_path_factory.mktemp("profiles-www")
    (d / "index.html").write_text("ewyk\n")
    return str(d)


def host_cpus():
    return os.sched_getaffinity(0)


def profile_cpus(text):
    """The CPUs of the profile's -l (a plain list: 0-4, 0,2-5)."""
    lst = re.search(r"-l (\S+)", text).group(1)
    cpus = set()
    for part in lst.split(","):
        lo, _, hi = part.partition("-")
        cpus |= set(range(int(lo), int(hi or lo) + 1))
    return cpus


def test_the_profiles_are_these():
    assert {f for f in os.listdir(PROFILES) if f.endswith(".conf")} == VIRTUAL | BARE_METAL


@pytest.mark.parametrize("name", sorted(VIRTUAL | BARE_METAL))
def test_profile_is_accepted(name, www, tmp_path):
    """A profile checks good where its -l names CPUs the host has. Where
    it names more (a bare-metal profile on a small test host), the check
    says so, as the start would, and the profile with -l and --shards
    fitted to this host checks good: the rest of it is right."""
    path = os.path.join(PROFILES, name)
    text = open(path).read()
    r = check_config(path, "--www", www)
    if not profile_cpus(text) <= host_cpus():
        assert r.returncode == 2, r.stdout
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(
            "ewykd: EAL option refused: invalid core list"), r.stderr
        cpus = sorted(host_cpus())
        fitted = tmp_path / name
        fitted.write_text(re.sub(r"-l \S+", f"-l {cpus[0]}-{cpus[-1]}", text, count=1))
        path = str(fitted)
        r = check_config(path, "--www", www, "--shards", str(len(cpus) - 1))
    assert r.returncode == 0, r.stderr
    assert f"configuration good: {path}" in r.stdout
    eal = re.search(r"(?m)^args = (.*)", r.stdout).group(1)
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


def test_the_command_line_overrides_the_profile_in_the_check(www):
    r = check_config(os.path.join(PROFILES, "tap.conf"), "--www", www, "--mtu", "9000")
    assert r.returncode == 0, r.stderr
    assert "\nmtu = 9000\n" in r.stdout
