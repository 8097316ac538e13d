# SPDX-License-Identifier: BSD-3-Clause
"""Packet capture the DPDK way: dpdk-dumpcap attached to a running ewykd
(a shared configuration under its --file-prefix, rte_pdump_init) captures
a curl exchange that tcpdump reads back as the GET and its 200; starting
and stopping captures under load loses no request."""
import os
import re
import signal
import subprocess
import time

import pytest

from ewyk_harness import APP_IP, Appliance, run

DUMPCAP = "/usr/bin/dpdk-dumpcap"


@pytest.fixture
def shared(www):
    with Appliance(www=www["dir"], shared_config=True) as a:
        yield a


def start_capture(a, path):
    """dpdk-dumpcap on port 0; returns once it counts what it captures."""
    log = open(path + ".log", "w")
    p = subprocess.Popen([DUMPCAP, "--file-prefix", a.prefix, "-i", "0", "-w", path],
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 20
    while time.time() < deadline:
        text = open(path + ".log").read()
        if "Packets captured" in text:
            return p, log
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    p.wait()
    log.close()
    raise AssertionError(f"dpdk-dumpcap did not start: {open(path + '.log').read()}")


def stop_capture(p, log):
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        log.close()


def test_dumpcap_captures_a_curl_exchange(shared, tmp_path):
    pcap = str(tmp_path / "cap.pcapng")
    p, log = start_capture(shared, pcap)
    try:
        r = shared.ns(["curl", "-sS", "-m", "5", shared.url("/hello.txt")])
        assert r.stdout == "hello from ewyk\n"
        time.sleep(0.5)	# dumpcap writes what its ring holds
    finally:
        stop_capture(p, log)
    out = run(["tcpdump", "-nn", "-A", "-r", pcap], check=False)
    assert out.returncode == 0, out.stderr
    assert re.search(r"GET /hello\.txt HTTP/1\.1", out.stdout), out.stdout[-2000:]
    assert "HTTP/1.1 200 OK" in out.stdout, out.stdout[-2000:]
    assert f"{APP_IP}.80 >" in out.stdout


def test_starting_and_stopping_captures_under_load_loses_nothing(shared, tmp_path):
    n = 20000
    load = shared.ns_popen(["h2load", "--h1", "-n", str(n), "-c", "4", "-m", "4",
                            shared.url("/hello.txt")])
    try:
        for i in range(3):
            p, log = start_capture(shared, str(tmp_path / f"cap{i}.pcapng"))
            time.sleep(0.2)
            stop_capture(p, log)
            if load.poll() is not None:
                break
        out, _ = load.communicate(timeout=120)
    finally:
        if load.poll() is None:
            load.kill()
            load.wait()
    assert re.search(rf"status codes: {n} 2xx", out), out
    assert os.path.getsize(tmp_path / "cap0.pcapng") > 0
