# SPDX-License-Identifier: BSD-3-Clause
"""deploy/bind.sh: its refusals, and the binding it asks dpdk-devbind.py
for. This host has no NIC to give away, so beyond "no such device" the
script runs on a sysfs tree of the test's own (EWYK_SYSFS) with stand-ins
for dpdk-devbind.py and modprobe that record what they are asked (and move
the fake device's driver link, as the real one would). Nothing real is
ever bound."""
import os
import subprocess

import pytest

from ewyk_harness import ROOT, run

BIND = os.path.join(ROOT, "deploy", "bind.sh")
ADDR = "0000:3b:00.0"

DEVBIND_STUB = """#!/bin/sh
echo "devbind $*" >> "$STUB_LOG"
ln -sfn "$EWYK_SYSFS/bus/pci/drivers/$2" "$EWYK_SYSFS/bus/pci/devices/$3/driver"
"""
MODPROBE_STUB = """#!/bin/sh
echo "modprobe $*" >> "$STUB_LOG"
"""


def bind(*args, env=None, netns=None):
    cmd = ["ip", "netns", "exec", netns, BIND] if netns else [BIND]
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=30,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def fake(tmp_path):
    """A sysfs with one Intel port on i40e (interface ewykbd0), IOMMU groups,
    and the stand-ins; returns (env, the stand-ins' log)."""
    sysfs = tmp_path / "sys"
    dev = sysfs / "bus" / "pci" / "devices" / ADDR
    (dev / "net" / "ewykbd0").mkdir(parents=True)
    for d in ("i40e", "vfio-pci", "uio_pci_generic", "mlx5_core"):
        (sysfs / "bus" / "pci" / "drivers" / d).mkdir(parents=True)
    os.symlink(sysfs / "bus" / "pci" / "drivers" / "i40e", dev / "driver")
    (sysfs / "kernel" / "iommu_groups" / "0").mkdir(parents=True)
    (sysfs / "module" / "vfio" / "parameters").mkdir(parents=True)
    (sysfs / "module" / "vfio" / "parameters" / "enable_unsafe_noiommu_mode").write_text("N\n")
    log = tmp_path / "stub.log"
    log.write_text("")
    for name, text in (("devbind", DEVBIND_STUB), ("modprobe", MODPROBE_STUB)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    env = {"EWYK_SYSFS": str(sysfs), "DEVBIND": str(tmp_path / "devbind"),
           "MODPROBE": str(tmp_path / "modprobe"), "STUB_LOG": str(log)}
    return env, log, dev


@pytest.mark.parametrize("args,message", [
    ([], "usage"),
    (["eth0"], "'eth0' is not a PCI address"),
    (["0000:ff:1f.7"], "0000:ff:1f.7: no such PCI device"),
    (["ff:1f.7"], "0000:ff:1f.7: no such PCI device"),
    (["0000:ff:1f.7", "igb"], "igb: not a DPDK driver"),
])
def test_bad_arguments(args, message):
    r = bind(*args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert message in r.stderr


def test_binds_with_vfio_pci(fake):
    env, log, dev = fake
    r = bind(ADDR, env=env)
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines() == ["modprobe vfio-pci", f"devbind -b vfio-pci {ADDR}"]
    assert os.path.basename(os.readlink(dev / "driver")) == "vfio-pci"
    assert f"back to the kernel: {env['DEVBIND']} -b i40e {ADDR}" in r.stdout
    r = bind(ADDR, env=env)
    assert r.returncode == 0 and "already on vfio-pci" in r.stdout


def test_mlx5_needs_no_binding(fake):
    env, log, dev = fake
    os.unlink(dev / "driver")
    os.symlink(os.path.join(env["EWYK_SYSFS"], "bus/pci/drivers/mlx5_core"), dev / "driver")
    r = bind(ADDR, env=env)
    assert r.returncode == 0 and "bifurcated" in r.stdout
    assert log.read_text() == ""


def test_no_iommu(fake):
    """vfio-pci without IOMMU groups: refused, with the no-IOMMU mode and
    uio_pci_generic as ways out; uio_pci_generic then binds."""
    env, log, dev = fake
    os.rmdir(os.path.join(env["EWYK_SYSFS"], "kernel/iommu_groups/0"))
    r = bind(ADDR, env=env)
    assert r.returncode == 2
    assert "enable_unsafe_noiommu_mode=1" in r.stderr and "uio_pci_generic" in r.stderr
    assert log.read_text() == ""
    r = bind(ADDR, "uio_pci_generic", env=env)
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines()[-1] == f"devbind -b uio_pci_generic {ADDR}"


def test_an_interface_in_use_is_refused(fake, netns):
    """The device's interface has an address and a route: refused, named,
    and how to free it said; then freed, it binds."""
    env, log, dev = fake
    run(["ip", "-n", netns, "link", "add", "ewykbd0", "type", "veth", "peer", "name", "ewykbd1"])
    run(["ip", "-n", netns, "addr", "add", "198.18.0.9/24", "dev", "ewykbd0"])
    run(["ip", "-n", netns, "link", "set", "ewykbd0", "up"])
    r = bind(ADDR, env=env, netns=netns)
    assert r.returncode == 2
    assert "ewykbd0, which the kernel uses" in r.stderr and "198.18.0.9/24" in r.stderr
    assert "ip addr flush dev ewykbd0" in r.stderr
    assert log.read_text() == ""
    run(["ip", "-n", netns, "addr", "flush", "dev", "ewykbd0"])
    run(["ip", "-n", netns, "link", "set", "ewykbd0", "down"])
    r = bind(ADDR, env=env, netns=netns)
    assert r.returncode == 0, r.stderr


def test_a_failing_binding_is_reported(fake):
    env, log, dev = fake
    with open(env["DEVBIND"], "w") as f:
        f.write("#!/bin/sh\necho 'Error: bind failed' >&2\nexit 1\n")
    r = bind(ADDR, env=env)
    assert r.returncode == 3
    assert f"-b vfio-pci {ADDR} failed" in r.stderr
