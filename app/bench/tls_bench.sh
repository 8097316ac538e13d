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
# The raw primitives a full handshake's server needs, for scale: one
# signature and two X25519 operations (key generation and agreement).
openssl speed -seconds 1 ecdsap256 ecdhx25519 rsa2048 2>/dev/null | awk '
	/^rsa 2048/ { rsa = $(NF - 1) }
	/ecdsa \(nistp256\)/ { ecdsa = $(NF - 1) }
	/ecdh \(X25519\)/ { x = $NF }
	END { printf "raw crypto (openssl speed, now): ECDSA P-256 sign %s/s, X25519 %s/s, RSA-2048 sign %s/s\n", ecdsa, x, rsa }'
"$BUILD/app/bench/tls-bench" "$@"
echo "load after: $(load)"
