#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds and runs tls-bench (docs/tls.md): the TLS libraries of Debian 12
# in memory, handshakes, records and memory side by side, with the
# machine's load before and after (figures from a loaded machine are
# noisier: the CPU-time columns less so than the wall-clock ones).
#
#   app/bench/tls_bench.sh                      # about 80 s
#   app/bench/tls_bench.sh --rounds 5 --ms 1000 # steadier, about 5 min
#   app/bench/tls_bench.sh --lib openssl --row "full 1.3"
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
[ -d "$BUILD" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" app/bench/tls-bench >/dev/null
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(load)"
"$BUILD/app/bench/tls-bench" "$@"
echo "load after: $(load)"
