#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets with clang (build-fuzz/, -Dfuzz=true) and runs
# one, fuzz_net_input unless TARGET says otherwise, for SECONDS (default 60).
# Exits non-zero when the fuzzer finds a crash, a leak or a broken
# invariant; the input that did it is left in build-fuzz/fuzz-artifacts/
# (build-fuzz/TARGET-artifacts/ for the HTTP and TLS targets) and belongs in the
# target's regressions/ once the bug is understood (the unit suite replays
# that directory).
#
#   tests/fuzz/run_fuzz.sh 60
#   tests/fuzz/run_fuzz.sh 600 fuzz_http1      # or fuzz_h2, fuzz_tls
#   FUZZ_JOBS=2 tests/fuzz/run_fuzz.sh 300     # -fork=2: two worker processes
#   tests/fuzz/run_fuzz.sh build               # builds every target, runs none
#   FUZZ_PREBUILT=1 tests/fuzz/run_fuzz.sh ... # runs what "build" built (runs
#                                              # side by side must not build)
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SECONDS_BUDGET=${1:-60}
TARGET=${2:-fuzz_net_input}
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${FUZZ_JOBS:-1}

case "$SECONDS_BUDGET" in
build) ;;
'' | *[!0-9]*)
	echo "usage: $0 SECONDS|build [fuzz_net_input|fuzz_http1|fuzz_h2|fuzz_tls|fuzz_quic]" >&2
	exit 2
	;;
esac
# The target's committed seeds and regressions, its scratch names.
case "$TARGET" in
fuzz_net_input)
	inputs=(tests/fuzz/corpus tests/fuzz/regressions)
	name=fuzz	# fuzz-corpus, fuzz-artifacts, fuzz.log
	dict=()
	;;
fuzz_http1 | fuzz_h2)
	d=tests/fuzz/${TARGET#fuzz_}
	inputs=("$d/corpus" "$d/regressions")
	name=$TARGET
	dict=(-dict="tests/fuzz/${TARGET#fuzz_}.dict")
	;;
fuzz_tls)
	inputs=(tests/fuzz/tls/corpus tests/fuzz/tls/regressions)
	name=$TARGET
	dict=()
	;;
fuzz_quic)
	inputs=(tests/fuzz/quic/corpus tests/fuzz/quic/regressions)
	name=$TARGET
	dict=()
	;;
*)
	echo "run_fuzz.sh: no target $TARGET" >&2
	exit 2
	;;
esac
if ! command -v clang >/dev/null; then
	echo "run_fuzz.sh: clang is missing (apt-get install clang libclang-rt-14-dev)" >&2
	exit 1
fi

if [ -z "${FUZZ_PREBUILT:-}" ]; then
	if [ -d "$BUILD" ]; then
		meson setup --reconfigure "$BUILD" -Dfuzz=true -Db_lundef=false >/dev/null
	else
		# Through ccache where there is one: a build of an earlier run
		# is a hit.
		CC="$(command -v ccache || true) clang" \
			meson setup "$BUILD" -Dfuzz=true -Db_lundef=false >/dev/null
	fi || { echo "run_fuzz.sh: meson setup failed" >&2; exit 1; }
	targets=("tests/fuzz/$TARGET")
	[ "$SECONDS_BUDGET" = build ] &&
		targets=(tests/fuzz/fuzz_net_input tests/fuzz/fuzz_http1 tests/fuzz/fuzz_h2 tests/fuzz/fuzz_tls
			tests/fuzz/fuzz_quic)
	ninja -C "$BUILD" "${targets[@]}" ||
		{ echo "run_fuzz.sh: build failed" >&2; exit 1; }
fi
[ "$SECONDS_BUDGET" = build ] && exit 0

# New inputs go to a scratch corpus; the committed seeds and regressions
# are read, never written.
work=$ROOT/$BUILD/$name-corpus
artifacts=$ROOT/$BUILD/$name-artifacts
# Earlier findings were reported by their run; keep them aside.
if [ -n "$(ls -A "$artifacts" 2>/dev/null)" ]; then
	mkdir -p "$artifacts.prev"
	mv "$artifacts"/* "$artifacts.prev/"
fi
mkdir -p "$work" "$artifacts"
log=$ROOT/$BUILD/$name.log
parallel=()
if [ "$JOBS" -gt 1 ]; then
	parallel=(-fork="$JOBS" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0)
fi

# Each fuzzing process has its own EAL runtime directory under this prefix;
# libFuzzer may exit without the target's atexit clean-up, so sweep them.
prefix=fuzzrun$$-
trap 'rm -rf /var/run/dpdk/${prefix}*' EXIT

echo "== $TARGET for ${SECONDS_BUDGET}s ($JOBS job(s)), log in $log"
# -timeout: one input that runs for seconds is a hang worth a report.
# The outer timeout is a belt over libFuzzer's own clock.
FUZZ_NET_PREFIX=$prefix \
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
timeout -k 10 $((SECONDS_BUDGET + 60)) \
	"$BUILD/tests/fuzz/$TARGET" "${dict[@]}" \
	-max_total_time="$SECONDS_BUDGET" -timeout=10 -rss_limit_mb=2048 \
	-max_len=8192 -print_final_stats=1 \
	"${parallel[@]}" \
	-artifact_prefix="$artifacts/" \
	"$work" "${inputs[@]}" >"$log" 2>&1
rc=$?
grep -E "^(#[0-9]+ +(DONE|INITED)|#[0-9]+: cov|stat::|INFO: exiting|==[0-9]+==ERROR|SUMMARY|$TARGET:)" \
	"$log" | tail -n 12
found=$(ls -A "$artifacts" 2>/dev/null)
if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
	# The report: sanitizer or invariant message and its stack.
	grep -m1 -A60 -E '==[0-9]+==ERROR|invariant broken|deadly signal|runtime error' "$log"
	echo "run_fuzz.sh: the fuzzer found a problem (exit $rc); inputs:"
	ls -1 "$artifacts"
	echo "reproduce: $BUILD/tests/fuzz/$TARGET $artifacts/<file>"
	exit 1
fi
echo "run_fuzz.sh: no crash in ${SECONDS_BUDGET}s"
exit 0
