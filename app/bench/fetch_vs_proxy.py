#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ewyk_fetch() against the reverse proxy, on one upstream (nginx in the
client's namespace, tests/integration/upstream_servers.py) over net_tap:
h2load on /proxy/ng/FILE (the body streamed to the client) and on the
example plugin's /hello/fetch/ng/FILE (the body read whole by a fiber
handler, a 3-line summary answered), with the fiber parks per request.

    ROUNDS=3 app/bench/fetch_vs_proxy.py       # as root, from the tree
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from ewyk_harness import Appliance  # noqa: E402
from upstream_servers import upstream_args, upstreams_serving  # noqa: E402

PLUGIN = os.path.join(ROOT, "build", "app", "plugins", "ewyk-hello.so")
RUNS = (("small.txt", 1000, 20000), ("f64k.bin", 65536, 4000))


def h2load(a, path, n):
    parks = lambda: a.telemetry("/ewyk/strategy")["shard_0"]["fiber_parks_count"]  # noqa: E731
    p0 = parks()
    out = a.ns(["h2load", "-n", str(n), "-c", "4", "-m", "16", a.url(path)]).stdout
    rate = float(re.search(r"finished in .*?, ([\d.]+) req/s", out).group(1))
    ok = int(re.search(r"(\d+) succeeded", out).group(1))
    mean = re.search(r"time for request:\s+\S+\s+\S+\s+(\S+)", out).group(1)
    return rate, ok, mean, (parks() - p0) / n


def main():
    rounds = int(os.environ.get("ROUNDS", "3"))
    a = Appliance(args=upstream_args("ng") + ["--plugin", PLUGIN], client_ns=True)
    try:
        a.start()
        with upstreams_serving(a, {name: size for name, size, _ in RUNS}):
            print("round file route req/s ok mean parks/req")
            for r in range(rounds):
                for name, _, n in RUNS:
                    for route in ("/proxy/ng/", "/hello/fetch/ng/"):
                        rate, ok, mean, parks = h2load(a, route + name, n)
                        print(f"{r} {name} {route} {rate:.0f} {ok}/{n} {mean} {parks:.2f}",
                              flush=True)
    finally:
        a.close()


if __name__ == "__main__":
    main()
