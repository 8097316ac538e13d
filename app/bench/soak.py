#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The soak's two Python parts (app/bench/soak.sh runs them).

  soak.py client SECONDS RATE OUT    (in the client's namespace)
      One new connection per request, RATE requests/s in all (0: as fast
      as it goes), a third each of: GET of a static file, POST of a
      random body to /echo (the answer must be the body), durable PUT of
      a random value to /v1/state/KEY?durable=1 then GET of it (the same
      value). Every second it rewrites OUT with "ok errors last_error".

  soak.py watch PID PREFIX SECONDS WARMUP CSV CLIENT_OUT
      Every 10 s: ewykd's VmRSS, and from its telemetry (/ewyk/stats,
      /ewyk/tcp) mbufs in use, open connections, requests and answers
      that are not 2xx; one CSV line each. Exits 1, saying why, at the
      first request error (an answer that is not 2xx, or a client's
      error), stall (a window without a request served), or growth after
      WARMUP seconds: RSS above its warm-up peak by more than
      RSS_TOLERANCE, mbufs in use above theirs by more than
      MBUF_TOLERANCE.
"""
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time

APP_IP = "198.18.0.2"
TELEMETRY = "/usr/bin/dpdk-telemetry.py"
PERIOD_S = 10
RSS_TOLERANCE_KB = 4096 + 0	# plus 2 % of the warm-up peak
RSS_TOLERANCE_SHARE = 0.02
MBUF_TOLERANCE = 512		# plus 10 % of the warm-up peak
MBUF_TOLERANCE_SHARE = 0.10
CLIENT_THREADS = 6
CLIENT_TIMEOUT_S = 20		# one request, retransmissions included


# -- client ---------------------------------------------------------------

class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = 0
        self.errors = 0
        self.last_error = "-"

    def add(self, error=None):
        with self.lock:
            if error is None:
                self.ok += 1
            else:
                self.errors += 1
                self.last_error = error.replace(" ", "_")[:120]


def one_request(method, path, body=None):
    c = http.client.HTTPConnection(APP_IP, 80, timeout=CLIENT_TIMEOUT_S)
    try:
        c.request(method, path, body=body)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def operation(n, rng):
    """One request or two on new connections; None when right, else why."""
    kind = n % 3
    if kind == 0:
        status, got = one_request("GET", "/soak.bin")
        if status != 200 or len(got) != 16384:
            return f"GET /soak.bin: {status}, {len(got)} bytes"
    elif kind == 1:
        body = rng.randbytes(rng.randint(1, 65536))
        status, got = one_request("POST", "/echo", body)
        if status != 200 or got != body:
            return f"POST /echo: {status}, {len(got)} of {len(body)} bytes back"
    else:
        key = f"soak{n % CLIENT_THREADS}-{n // CLIENT_THREADS % 64}"	# the thread's own
        value = rng.randbytes(rng.randint(1, 4096))
        status, got = one_request("PUT", f"/v1/state/{key}?durable=1", value)
        if status != 200:
            return f"PUT {key}: {status} {got[:60]!r}"
        status, got = one_request("GET", f"/v1/state/{key}")
        if status != 200 or got != value:
            return f"GET {key}: {status}, {len(got)} bytes"
    return None



def worker(index, deadline, interval, tally):
    rng = random.Random(index)
    n = index
    due = time.monotonic()
    while time.monotonic() < deadline:
        try:
            tally.add(operation(n, rng))
        except (OSError, http.client.HTTPException) as e:
            tally.add(f"{type(e).__name__}: {e}")
        n += CLIENT_THREADS
        if interval > 0:
            due += interval
            time.sleep(max(0.0, due - time.monotonic()))


def client(seconds, rate, out):
    tally = Tally()
    deadline = time.monotonic() + seconds
    interval = CLIENT_THREADS / rate if rate > 0 else 0
    threads = [threading.Thread(target=worker, args=(i, deadline, interval, tally),
                                daemon=True) for i in range(CLIENT_THREADS)]
    for t in threads:
        t.start()

    def write():
        with tally.lock:
            line = f"{tally.ok} {tally.errors} {tally.last_error}\n"
        with open(out + ".tmp", "w") as f:
            f.write(line)
        os.replace(out + ".tmp", out)

    while any(t.is_alive() for t in threads):
        write()
        time.sleep(1)
    write()
    return 0


# -- watch ----------------------------------------------------------------

def telemetry(prefix, tries=2):
    """/ewyk/stats and /ewyk/tcp. A read that gets no answer in 30 s is
    said and asked again, once: twice in CI runs, with the fuzzing lane
    beside the soak, the client waited out its 30 s at the same sample
    while the load went on; the soak judges the data path, whose figures
    the next read brings."""
    try:
        r = subprocess.run([TELEMETRY, "-f", prefix], input="/ewyk/stats\n/ewyk/tcp\n",
                           text=True, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        if tries == 1:
            raise
        print(f"soak: telemetry of {prefix} did not answer in 30 s: asked again",
              flush=True)
        return telemetry(prefix, tries - 1)
    out = {}
    for line in r.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.update(json.loads(line))
    if "/ewyk/stats" not in out or "/ewyk/tcp" not in out:
        raise RuntimeError(f"no telemetry from {prefix}: {r.stdout} {r.stderr}")
    return out["/ewyk/stats"], out["/ewyk/tcp"]


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def not_2xx(stats, before):
    """Answers that were not 2xx since before (a status count): by
    status, those that grew."""
    return {k: v - before.get(k, 0) for k, v in stats["requests_by_status_reqs"].items()
            if not k.startswith("2") and v > before.get(k, 0)}


def client_tally(path):
    try:
        with open(path) as f:
            ok, errors, last = f.read().split(None, 2)
        return int(ok), int(errors), last.strip()
    except (OSError, ValueError):
        return 0, 0, "-"


def watch(pid, prefix, seconds, warmup, csv_path, client_out):
    start = time.monotonic()
    peak_rss = peak_mbufs = 0
    first = telemetry(prefix)[0]
    last_reqs = first["requests_reqs"]
    # The capacity probe ran flat out before: its answers (a 503 when a
    # pool was full) are figures, not failures; only the soak's count.
    before = first["requests_by_status_reqs"]
    with open(csv_path, "w") as csv:
        csv.write("t_s,rss_kb,mbufs_in_use,open_conns,requests,requests_per_s,"
                  "not_2xx,client_ok,client_errors,tcp_retransmits,tcp_timeouts\n")
        t = 0
        while t + PERIOD_S <= seconds:
            t += PERIOD_S
            time.sleep(max(0.0, start + t - time.monotonic()))
            stats, tcp = telemetry(prefix)
            rss = rss_kb(pid)
            mbufs = stats["mbufs_in_use_mbufs"]
            reqs = stats["requests_reqs"]
            grew = not_2xx(stats, before)
            bad = sum(grew.values())
            cok, cerr, clast = client_tally(client_out)
            rate = (reqs - last_reqs) / PERIOD_S
            csv.write(f"{t},{rss},{mbufs},{stats['open_conns']},{reqs},{rate:.0f},{bad},"
                      f"{cok},{cerr},{tcp['retransmits_count']},"
                      f"{tcp['timeouts_count']}\n")
            csv.flush()
            print(f"soak: {t:5d} s  rss {rss} kB  mbufs {mbufs}  conns {stats['open_conns']}"
                  f"  {rate:.0f} req/s  not 2xx {bad}  client {cok} ok {cerr} errors",
                  flush=True)
            if bad:
                return fail(f"{bad} answers were not 2xx during the soak: {grew}; "
                            f"the client's last error: {clast}", prefix)
            if cerr:
                return fail(f"{cerr} client request errors, the last: {clast}", prefix)
            if reqs == last_reqs:
                return fail(f"stall: no request served from {t - PERIOD_S} s to {t} s", prefix)
            last_reqs = reqs
            if t <= warmup:
                peak_rss, peak_mbufs = max(peak_rss, rss), max(peak_mbufs, mbufs)
                continue
            rss_limit = peak_rss * (1 + RSS_TOLERANCE_SHARE) + RSS_TOLERANCE_KB
            mbuf_limit = peak_mbufs * (1 + MBUF_TOLERANCE_SHARE) + MBUF_TOLERANCE
            if rss > rss_limit:
                return fail(f"RSS grew: {rss} kB at {t} s, warm-up peak {peak_rss} kB, "
                            f"limit {rss_limit:.0f} kB")
            if mbufs > mbuf_limit:
                return fail(f"mbufs in use grew: {mbufs} at {t} s, warm-up peak "
                            f"{peak_mbufs}, limit {mbuf_limit:.0f}")
    return 0


# What says where a refusal came from: the tasks and waits (/ewyk/strategy:
# overloaded_reqs, deferred_reqs, fiber_no_stack_count, ...), the store's
# durable writes (/ewyk/conflate), the body buffers (/ewyk/http).
DIAGNOSIS = ("/ewyk/strategy", "/ewyk/conflate", "/ewyk/http")


def fail(why, prefix=None):
    print(f"soak: FAIL: {why}", flush=True)
    if prefix is not None:
        r = subprocess.run([TELEMETRY, "-f", prefix], input="\n".join(DIAGNOSIS) + "\n",
                           text=True, capture_output=True, timeout=30, check=False)
        for line in r.stdout.splitlines():
            if line.strip().startswith("{"):
                print(f"soak: at the failure: {line.strip()[:4000]}", flush=True)
    return 1


def main(argv):
    if len(argv) == 5 and argv[1] == "client":
        return client(float(argv[2]), float(argv[3]), argv[4])
    if len(argv) == 8 and argv[1] == "watch":
        return watch(int(argv[2]), argv[3], int(argv[4]), int(argv[5]), argv[6], argv[7])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
