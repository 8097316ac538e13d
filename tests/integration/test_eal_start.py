# SPDX-License-Identifier: BSD-3-Clause
"""The EAL's start in ewykd's words: a failure ends with one line naming
the cause (the bad option, the file prefix another process uses, memory
short) and the exit status of its kind (2 configuration, 1 resources); a
healthy start prints nothing that reads like an error."""
import os
import re
import subprocess

from ewyk_harness import EWYKD, IFACE, Appliance, run

BUDGET = 5


def start(name, eal, args=("--www", "/nonexistent-never-read")):
    """ewykd with these EAL options in a namespace of its own: (rc, stderr)."""
    run(["ip", "netns", "add", name])
    try:
        cmd = ["ip", "netns", "exec", name, EWYKD, *eal, "--", *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=BUDGET)
        return p.returncode, p.stdout, p.stderr
    finally:
        run(["ip", "netns", "del", name], check=False)


def base(name):
    return ["-l", "0-1", "--no-pci", "--vdev", f"net_tap0,iface={IFACE}",
            "--file-prefix", name]


def test_unknown_eal_option_is_named():
    name = f"ewyk-eal{os.getpid()}a"
    rc, out, err = start(name, ["--vdve", "net_tap0"] + base(name) + ["--no-huge", "-m", "64"])
    assert rc == 2, err
    assert err.strip().splitlines() == [
        "ewykd: EAL option '--vdve': unknown to the EAL (ewykd's own options go after --)"], err
    assert "Usage" not in out + err


def test_bad_eal_value_names_the_eal_reason():
    name = f"ewyk-eal{os.getpid()}b"
    rc, out, err = start(name, ["-l", "0-63", "--no-pci", "--file-prefix", name,
                                "--no-huge", "-m", "64"])
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert lines[0].startswith("ewykd: EAL initialisation failed: invalid core list"), lines


def test_memory_short_is_a_resource_failure():
    name = f"ewyk-eal{os.getpid()}c"
    rc, out, err = start(name, base(name) + ["--in-memory", "-m", "200000"])
    lines = err.strip().splitlines()
    assert rc == 1 and len(lines) == 1, err
    assert lines[0].startswith("ewykd: not enough hugepage memory"), lines


def test_second_instance_with_the_same_prefix_refuses(www):
    with Appliance(www=www["dir"]) as a:
        rc, out, err = start(a.prefix + "x", base(a.prefix) + ["--no-huge", "-m", "64"],
                             ["--www", www["dir"]])
        lines = err.strip().splitlines()
        assert rc == 1 and len(lines) == 1, err
        assert f"another process uses file prefix '{a.prefix}'" in lines[0], lines
        assert "serving" not in out
        # The first one serves on, its telemetry where it was.
        assert a.telemetry("/ewyk/info")["version"]


def test_healthy_start_prints_nothing_alarming(www):
    with Appliance(www=www["dir"]) as a:
        # The harness logs at warning level and up: what is left must be
        # ewykd's own lines.
        log = a.read_log()
    alarming = [l for l in log.splitlines()
                if re.search(r"(?i)error|fail|could not|cannot|unknown", l)]
    assert not alarming, log


def test_telemetry_socket_where_the_tools_look_under_systemd(www, tmp_path):
    """Under systemd's RuntimeDirectory= the EAL alone would move its files
    under $RUNTIME_DIRECTORY, where dpdk-telemetry.py run from a shell does
    not look: ewykd keeps them in /var/run/dpdk/PREFIX."""
    with Appliance(www=www["dir"], env={"RUNTIME_DIRECTORY": str(tmp_path)}) as a:
        assert os.path.exists(f"/var/run/dpdk/{a.prefix}/dpdk_telemetry.v2")
        assert not os.path.exists(tmp_path / "dpdk"), list(tmp_path.iterdir())
        r = subprocess.run(["/usr/bin/dpdk-telemetry.py", "-f", a.prefix],
                           input="/ewyk/info\n", capture_output=True, text=True, timeout=10)
        assert '"version"' in r.stdout, r.stdout + r.stderr
