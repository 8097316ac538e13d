#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the access log costs: two ewykd side by side in one run, one with
# --access-log (a file on tmpfs) and one without, each driven in turn by
# the same client (h2c -c16 -m100, N requests of a small static file),
# ROUNDS rounds. Prints each one's requests/s and ewykd's CPU per request,
# the medians, the ratio, and whether the log holds a line for every
# request (lines against requests, drops). ewykd's shard on CPU 1, its main
# lcore and the log's writer thread on CPU 0 with the client.
#
# The client: CLIENT=h2load (default) over EWYK_MEDIUM (af_xdp default),
# whose core is the limit, so that the writer's CPU shows as the client's
# loss; or CLIENT=ewyk-load, the memif client of ewykd's second port (no
# kernel between them), which leaves the server's core the limit, so that
# the ratio is what the log costs the data path.
#
# Per run it prints ewykd's CPU per request, and its shards' and the
# writer's apart. With IDLE=sleep (ewykd's default, --idle sleep) a shard
# spends CPU only on work, so its CPU per request, log on against off, is
# what the log costs the data path wherever the writer runs; with
# IDLE=poll (the default here) the shards burn their cores either way.
#
# Usage: [CLIENT=h2load|ewyk-load] [EWYK_MEDIUM=tap|af_xdp|memif] [ROUNDS=3]
#        [IDLE=poll|sleep] app/bench/access_log_cost.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
export N=${1:-1000000} ROUNDS=${ROUNDS:-3} EWYK_MEDIUM=${EWYK_MEDIUM:-af_xdp} \
	CLIENT=${CLIENT:-h2load} IDLE=${IDLE:-poll}
case $CLIENT in
h2load) command -v h2load >/dev/null || { echo "needs h2load (nghttp2-client)" >&2; exit 1; } ;;
ewyk-load) [ -x build/app/ewyk-load ] || { echo "needs build/app/ewyk-load (ninja -C build)" >&2; exit 1; } ;;
*) echo "CLIENT: h2load or ewyk-load, not '$CLIENT'" >&2; exit 2 ;;
esac
exec /usr/bin/python3 - <<'PY'
import os, re, statistics, subprocess, sys, tempfile
sys.path.insert(0, "tests/integration")
from ewyk_harness import APP_IP2, HOST_IP2, Appliance, eal_memory_args

N, ROUNDS, MEDIUM = int(os.environ["N"]), int(os.environ["ROUNDS"]), os.environ["EWYK_MEDIUM"]
CLIENT, IDLE = os.environ["CLIENT"], os.environ["IDLE"]
HZ = os.sysconf("SC_CLK_TCK")
www = tempfile.mkdtemp(prefix="ewyk-logcost-")
open(os.path.join(www, "small.txt"), "w").write("x" * 100)
log = os.path.join("/dev/shm", f"ewyk-access-{os.getpid()}.log")


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ


def thread_cpu_s(pid):
    """CPU seconds of the shards' lcores and of the log's writer."""
    shard = writer = 0.0
    for t in os.listdir(f"/proc/{pid}/task"):
        comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
        c = cpu_s(f"{pid}/task/{t}")
        if comm.startswith("rte-worker"):
            shard += c
        elif comm == "ewyk-access-log":
            writer += c
    return shard, writer


def client(a):
    load = ["-n", str(N), "-c", "16", "-m", "100"]
    if CLIENT == "h2load":
        return a.ns(["h2load", *load, a.url("/small.txt")], timeout=600)
    return subprocess.run(
        ["ip", "netns", "exec", a.client2, "build/app/ewyk-load", "-l", "0", "--no-pci",
         "--file-prefix", a.prefix + "m", "--log-level", "*:warning",
         *eal_memory_args(128), "--vdev", a.memif_peer_vdev(), "--",
         "--ip", f"{HOST_IP2}/25", "--quiet", *load, f"http://{APP_IP2}/small.txt"],
        text=True, capture_output=True, timeout=600, check=True)


def run(a):
    c0, (s0, w0) = cpu_s(a.proc.pid), thread_cpu_s(a.proc.pid)
    r = client(a)
    cpu, (s1, w1) = cpu_s(a.proc.pid) - c0, thread_cpu_s(a.proc.pid)
    rate = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", r.stdout).group(1))
    ok = max(int(re.search(r"(\d+) succeeded", r.stdout).group(1)), 1)
    return rate, cpu * 1e6 / ok, ok, (s1 - s0) * 1e6 / ok, (w1 - w0) * 1e6 / ok


res = {"off": [], "on": []}
lost = []
for rnd in range(ROUNDS):
    for mode in ("off", "on"):
        args = ["--idle", IDLE] + (["--access-log", log] if mode == "on" else [])
        if os.path.exists(log):
            os.unlink(log)
        with Appliance(www=www, args=args, medium=MEDIUM, lcores="0@0,1@1",
                       second_port="peer" if CLIENT == "ewyk-load" else None) as a:
            rate, us, ok, shard_us, writer_us = run(a)
            if mode == "on":
                http = a.telemetry("/ewyk/http")
                a.close()	# the writer drains what is queued at the stop
                lines = sum(1 for _ in open(log))
                lost.append((ok, lines, http["access_log_drops_count"]))
        res[mode].append((rate, us, shard_us, writer_us))
        print(f"round {rnd + 1} {mode:>3}: {rate:>10,.0f} req/s  {us:6.2f} us/req CPU "
              f"(shard {shard_us:.2f}, writer {writer_us:.2f})", flush=True)
os.unlink(log)
med = {m: [statistics.median(x[i] for x in v) for i in range(4)] for m, v in res.items()}
over = "net_memif (ewykd's second port)" if CLIENT == "ewyk-load" else MEDIUM
print(f"# {CLIENT} over {over}, h2c -c16 -m100, {N} requests per run, {ROUNDS} rounds, "
      f"--idle {IDLE}")
for m in ("off", "on"):
    print(f"log {m}:{' ' * (4 - len(m))}{med[m][0]:,.0f} req/s, {med[m][1]:.2f} us/req, "
          f"shard {med[m][2]:.3f} us/req, writer {med[m][3]:.3f} us/line")
print(f"on/off rate {med['on'][0] / med['off'][0]:.3f}, CPU {med['on'][1] / med['off'][1]:.3f}, "
      f"shard CPU per request {med['on'][2] / med['off'][2]:.3f}")
for ok, lines, drops in lost:
    print(f"requests {ok}, lines {lines}, drops {drops}" + ("" if ok == lines else "  LOST"))
PY
