# SPDX-License-Identifier: BSD-3-Clause
"""ewyk-exporter run beside an appliance, as a test's client of it: started
on a free port of 127.0.0.1, read over HTTP, stopped by its pid."""
import os
import socket
import subprocess
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from ewyk_harness import ROOT

EXPORTER = os.path.join(ROOT, "build", "app", "ewyk-exporter")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# The exporter's wait for a telemetry reply. Its default, 1 s, keeps a
# scrape short on a host of its own; a test host running other tests
# beside it can hold ewykd's telemetry thread off its CPU longer than that
# (once: one command timed out, the scrape said ewyk_up 0). The tests
# check the metrics, not that deadline.
TELEMETRY_TIMEOUT_S = 5


class Exporter:
    def __init__(self, prefix):
        self.port = free_port()
        self.proc = subprocess.Popen([EXPORTER, "--file-prefix", prefix, "--listen",
                                      f"127.0.0.1:{self.port}",
                                      "--timeout", str(TELEMETRY_TIMEOUT_S)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                self.get("/healthz")
                return
            except OSError:
                assert self.proc.poll() is None, self.proc.stdout.read()
                time.sleep(0.1)
        raise AssertionError("ewyk-exporter does not answer")

    def get(self, path, accept=None):
        req = urllib.request.Request(self.base + path)
        if accept:
            req.add_header("Accept", accept)
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.headers.get("Content-Type"), r.read().decode()

    def metrics(self):
        return self.get("/metrics")[1]

    def samples(self):
        """{(name, frozenset(labels)): value} of one scrape."""
        out = {}
        for fam in text_string_to_metric_families(self.metrics()):
            for s in fam.samples:
                out[(s.name, frozenset(s.labels.items()))] = s.value
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
