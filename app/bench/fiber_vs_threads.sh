#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A handler that waits MS milliseconds, then answers (/delay?ms=MS, a fiber
# handler), served three ways by one ewykd, side by side, ROUNDS times in
# turn, on the same cores:
#   pec    the blocking pool: one thread per waiting request
#          (--strategy pec at run time; --blocking-threads = the load's
#          concurrency, so that threads are not what limits it)
#   epc    hand production to a reserved lcore, which waits in the handler
#          (two spare reserved lcores; when none is free, the pool again)
#   fiber  a fiber of the shard's lcore (adaptive, the default)
# Every ewykd lcore (main, shard, 2 reserved) and hence every pool thread
# is on CPU 1; h2load on CPU 0. Per mode: requests/s at peak (h2load
# -c8 -m64: 512 in flight, DURATION s after 1 s of warm-up), ewykd's CPU
# per request (utime+stime of the process over the run, /proc), the mean
# request time, and the strategy's mode counters; then at low load (LOW
# requests/s for DURATION s) ewykd's CPU per second, and per request above
# what the idle ewykd spends polling (measured first). Figures are medians
# over the rounds. Figures, not a test: the machine's noise shows in the
# spread, and a busy machine lowers every column alike.
#
# Usage: [EWYK_MEDIUM=tap|af_xdp|memif] [ROUNDS=3] [MS=10] [DURATION=4]
#        [LOW=200] app/bench/fiber_vs_threads.sh   (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v h2load >/dev/null || { echo "needs h2load (nghttp2-client)" >&2; exit 1; }
export ROUNDS=${ROUNDS:-3} MS=${MS:-10} DURATION=${DURATION:-4} LOW=${LOW:-200}
export EWYK_MEDIUM=${EWYK_MEDIUM:-tap}
exec taskset -c 1 /usr/bin/python3 - <<'PY'
import os, re, statistics, sys, time
sys.path.insert(0, "tests/integration")
from ewyk_harness import Appliance

ROUNDS, MS = int(os.environ["ROUNDS"]), int(os.environ["MS"])
DURATION, LOW = int(os.environ["DURATION"]), int(os.environ["LOW"])
MEDIUM = os.environ["EWYK_MEDIUM"]
CONNS, STREAMS = 8, 64
INFLIGHT = CONNS * STREAMS
MODES = ("pec", "epc", "fiber")
HZ = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ


def counters(a):
    s = a.telemetry("/ewyk/strategy")["shard_0"]
    return {k: s[f"{k}_tasks"] for k in ("pc", "pec", "epc", "fiber")}


def load(a, args):
    """h2load on CPU 0; returns (req/s, requests done, mean ms, cpu s)."""
    c0 = cpu_s(a.proc.pid)
    r = a.ns(["taskset", "-c", "0", "h2load", *args, a.url(f"/delay?ms={MS}")],
             timeout=DURATION * 10 + 60)
    cpu = cpu_s(a.proc.pid) - c0
    rate = float(re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", r.stdout).group(1))
    done = int(re.search(r"requests: \d+ total, \d+ started, (\d+) done", r.stdout).group(1))
    ok = int(re.search(r"status codes: (\d+) 2xx", r.stdout).group(1))
    mean = re.search(r"time for request:\s+\S+\s+\S+\s+([\d.]+)(ms|us|s)", r.stdout)
    ms = float(mean.group(1)) * {"ms": 1, "us": 1e-3, "s": 1e3}[mean.group(2)]
    if ok != done:
        print(f"  ({done - ok} answers were not 2xx)")
    return rate, done, ms, cpu


def set_mode(a, mode):
    a.telemetry(f"/ewyk/strategy,{'adaptive' if mode == 'fiber' else mode}")


args = ["--shards", "1", "--reserved", "2", "--blocking-threads", str(INFLIGHT),
        "--blocking-queue", str(4 * INFLIGHT), "--fibers", str(INFLIGHT)]
peak = {m: [] for m in MODES}
low = {m: [] for m in MODES}
with Appliance(lcores="0@1,1@1,2@1,3@1", args=args, medium=MEDIUM) as a:
    # Idle first: what polling and the watchdog cost with no request.
    c0 = cpu_s(a.proc.pid)
    time.sleep(DURATION)
    idle = (cpu_s(a.proc.pid) - c0) / DURATION * 1e3
    print(f"# /delay?ms={MS}, {INFLIGHT} in flight (h2load -c{CONNS} -m{STREAMS}), "
          f"{DURATION} s per run, {ROUNDS} rounds, medium {MEDIUM}, ewykd on CPU 1")
    for rnd in range(ROUNDS):
        order = MODES[rnd % 3:] + MODES[:rnd % 3]
        for mode in order:
            set_mode(a, mode)
            before = counters(a)
            rate, done, ms, cpu = load(a, ["-c", str(CONNS), "-m", str(STREAMS),
                                           "-D", str(DURATION), "--warm-up-time", "1"])
            after = counters(a)
            moved = {k: after[k] - before[k] for k in after if after[k] != before[k]}
            peak[mode].append((rate, cpu * 1e6 / max(done, 1), ms))
            print(f"  round {rnd + 1} {mode:5s}: {rate:9.0f} req/s, "
                  f"{cpu * 1e6 / max(done, 1):7.1f} us CPU/req, mean {ms:6.2f} ms, {moved}")
            time.sleep(1)
        for mode in order:
            set_mode(a, mode)
            rate, done, ms, cpu = load(a, ["-c", "4", "--rps", str(LOW // 4),
                                           "-D", str(DURATION)])
            low[mode].append((rate, cpu / DURATION * 1e3,
                              max(cpu - idle / 1e3 * DURATION, 0) * 1e6 / max(done, 1)))


def med(rows, i):
    return statistics.median(r[i] for r in rows)


print()
print(f"| mode | peak req/s | CPU us/req at peak | mean request ms | "
      f"CPU ms/s at {LOW} req/s | above idle, us/req |")
print("|---|---:|---:|---:|---:|---:|")
for m in MODES:
    print(f"| {m} | {med(peak[m], 0):.0f} | {med(peak[m], 1):.1f} | {med(peak[m], 2):.2f} | "
          f"{med(low[m], 1):.1f} | {med(low[m], 2):.1f} |")
print(f"\nidle ewykd (4 lcores polling, backing off): {idle:.1f} CPU ms/s")
print(f"fiber / pec peak: {med(peak['fiber'], 0) / med(peak['pec'], 0):.2f}x; "
      f"fiber / epc: {med(peak['fiber'], 0) / med(peak['epc'], 0):.2f}x; "
      f"CPU per request pec / fiber: {med(peak['pec'], 1) / med(peak['fiber'], 1):.2f}x")
PY
