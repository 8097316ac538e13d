# SPDX-License-Identifier: BSD-3-Clause
import hashlib
import os
import shutil
import tempfile
import uuid

import pytest

from ewyk_harness import EWYKD, IFACE, Appliance, live_appliances, run


# Modules that take longest, first: pytest-xdist hands a worker whole
# modules in the order collected, and a long one collected last would
# leave the other worker idle while it runs.
LONG_FIRST = ("test_tls_scan.py", "test_tls_memory.py", "test_proxy.py",
              "test_load.py", "test_serving.py", "test_exporter.py", "test_faults.py",
              "test_dashboard_figures.py", "test_ipv6.py", "test_ipv6_scapy.py")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "alone: a module that measures scheduling, or what a load's peak "
        "does; tests/run.sh runs it after the others, with no test beside it")


def pytest_collection_modifyitems(session, config, items):
    def rank(item):
        name = os.path.basename(str(item.fspath))
        return LONG_FIRST.index(name) if name in LONG_FIRST else len(LONG_FIRST)
    items.sort(key=rank)	# stable: a module's tests keep their order


MODULE_SECONDS = {}	# module file name: set-up, call and tear-down seconds


def pytest_runtest_logreport(report):
    # On the controller too under xdist: each worker's reports arrive there.
    name = report.nodeid.split("::")[0].rsplit("/", 1)[-1]
    MODULE_SECONDS[name] = MODULE_SECONDS.get(name, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """Where the time went, module by module (a test's own durations are
    --durations's): the modules worth making faster, first."""
    if not MODULE_SECONDS or hasattr(terminalreporter.config, "workerinput"):
        return
    top = sorted(MODULE_SECONDS.items(), key=lambda kv: -kv[1])[:15]
    terminalreporter.write_sep("=", f"slowest modules (of {sum(MODULE_SECONDS.values()):.0f} "
                               "worker-seconds)")
    for name, secs in top:
        terminalreporter.write_line(f"{secs:7.1f}s  {name}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries what each appliance alive in this
    worker looked like then: its log's end, its ports and counters. Its
    module's tear-down removes the log, and a medium that stopped answering
    leaves nothing else behind to read."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for a in live_appliances():
        report.sections.append((f"{a.name} ({a.medium}) when {report.when} failed",
                                a.post_mortem()))


def pytest_sessionstart(session):
    # These tests need what a deployment has: root, /dev/net/tun and the
    # built appliance. Missing pieces are failures, never silent skips.
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (network namespaces, tap devices)")
    if not os.path.exists("/dev/net/tun"):
        problems.append("/dev/net/tun is missing")
    if not os.access(EWYKD, os.X_OK):
        problems.append(f"{EWYKD} is not built")
    if problems:
        pytest.exit("integration tests cannot run: " + "; ".join(problems), returncode=1)


@pytest.fixture(scope="session")
def www():
    """A static root: an index, a 1 MB file with known content, a text file."""
    d = tempfile.mkdtemp(prefix="ewyk-www-")
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<!doctype html><title>ewyk</title><h1>ewyk</h1>\n")
    with open(os.path.join(d, "hello.txt"), "w") as f:
        f.write("hello from ewyk\n")
    data = os.urandom(1 << 20)
    with open(os.path.join(d, "big.bin"), "wb") as f:
        f.write(data)
    os.makedirs(os.path.join(d, "sub"))
    with open(os.path.join(d, "sub", "index.html"), "w") as f:
        f.write("sub index\n")
    info = {"dir": d, "big_sha256": hashlib.sha256(data).hexdigest(), "big_size": len(data)}
    yield info
    shutil.rmtree(d, ignore_errors=True)


def serve_module(a):
    """Starts an appliance for a module's tests; when they are done,
    whatever they did, every mbuf must come back once its connections are
    gone."""
    a.start()
    idle = a.idle_baseline()["mbufs_in_use_mbufs"]
    yield a
    try:
        a.wait_idle(idle, timeout=20)
    finally:
        a.close()


def serve_hostile(a, prepare=None):
    """Starts an appliance for a module of hostile traffic (crafted
    segments, floods): a.mac is its port's MAC, a.idle_mbufs its mbufs in
    use at rest; prepare(a) runs first on the client side."""
    try:
        a.start()
        if prepare:
            prepare(a)
        a.mac = a.telemetry("/ewyk/info")["mac"]
        a.idle_mbufs = a.idle_baseline()["mbufs_in_use_mbufs"]
        yield a
    finally:
        a.close()


def counters(a):
    """/ewyk/stats and /ewyk/tcp as one flat dict of numbers, drop reasons
    as drop_<reason>."""
    s, t = a.telemetry("/ewyk/stats", "/ewyk/tcp").values()
    flat = {k: v for k, v in {**s, **t}.items() if isinstance(v, int)}
    flat.update({f"drop_{k}": v for k, v in s["drop_by_reason_pkts"].items()})
    return flat


def delta(before, after):
    return {k: after[k] - before.get(k, 0) for k in after}


def rsts_again(a, send, times=3):
    """A SYN flood's exact RSTs (send()) again while ewykd still holds
    half-open connections, up to times; returns how often. The tap's queue
    holds 1000 frames, fewer than a flood's half-open connections: a shard
    kept off its CPU for a few milliseconds as the RSTs start (the
    generator runs beside it on this 2-CPU host) loses the rest there, and
    their connections would stay for their SYN-ACK retries (63 s)."""
    n = 0
    while counters(a)["syn_received_conns"] > 0 and n < times:
        n += 1
        send()
    return n


def survived(a):
    """After hostile traffic ewykd is alive, with no connection and every
    mbuf back."""
    assert a.proc.poll() is None, \
        f"ewykd died (status {a.proc.returncode}):\n{a.read_log()[-3000:]}"
    a.wait_idle(a.idle_mbufs, timeout=15)


def empty_netns():
    name = f"ewyk-ns{os.getpid()}-{uuid.uuid4().hex[:6]}"
    run(["ip", "netns", "add", name])
    try:
        yield name
    finally:
        run(["ip", "netns", "del", name], check=False)


@pytest.fixture
def netns():
    """An empty network namespace of the test's own, removed after it."""
    yield from empty_netns()


@pytest.fixture(scope="module")
def cc_ns():
    """An empty network namespace for a module's --check-config runs."""
    yield from empty_netns()


@pytest.fixture(scope="module")
def appliance(www):
    yield from serve_module(Appliance(www=www["dir"]))


def tap_dropped(a):
    """Frames the kernel dropped on its side of a's tap (its queue full)."""
    return int(a.ns(["cat", f"/sys/class/net/{IFACE}/statistics/tx_dropped"]).stdout)
