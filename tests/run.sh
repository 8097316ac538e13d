#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what is missing, builds with warnings as errors, runs every test
# (cmocka unit tests, ThreadSanitizer stress tests, the mutation run,
# bounded fuzzing, a 2-minute soak, pytest integration tests against the
# Linux stack through net_tap, net_af_xdp and net_memif in private
# namespaces) and ends with one line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

./deploy/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
# add_counts, meson_counts and mutation_counts
. "$ROOT/tests/counts.sh"

build() {	# build DIR [meson options...]
	local dir=$1
	shift
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi && ninja -C "$dir" "${NINJA_TARGETS[@]}"
}

echo "== build (warnings as errors)"
NINJA_TARGETS=()
if ! build build -Dwerror=true; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

echo "== unit tests"
log=$(mktemp)
meson test -C build --suite unit --print-errorlogs --no-rebuild 2>&1 | tee "$log" |
	grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):'
read -r ok fail < <(meson_counts "$log")
add_counts "$ok" "$fail"
rm -f "$log"

# Stress tests that registered in the 'tsan' suite run again under
# ThreadSanitizer, in a tree of their own. Finding none is a failure, said.
# (The list is read whole first: with pipefail, grep -q leaving early
# would make meson's exit on SIGPIPE look like an empty list.)
tsan_list=$(meson test -C build --list --suite tsan --no-rebuild 2>/dev/null)
if ! grep -q tsan <<<"$tsan_list"; then
	echo "== ThreadSanitizer stress tests: SKIPPED, none listed in the 'tsan' suite"
	add_counts 0 1
else
	echo "== ThreadSanitizer stress tests"
	mapfile -t NINJA_TARGETS < <(meson introspect build --tests |
		/usr/bin/python3 -c 'import json,sys,os
for t in json.load(sys.stdin):
    if "tsan" in t["suite"] or any(s.endswith(":tsan") for s in t["suite"]):
        print(os.path.relpath(t["cmd"][0], "build"))')
	if build build-tsan -Db_sanitize=thread -Db_lundef=false -Dwerror=true; then
		log=$(mktemp)
		meson test -C build-tsan --suite tsan --print-errorlogs --no-rebuild 2>&1 |
			tee "$log" | grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Timeout):'
		read -r ok fail < <(meson_counts "$log")
		add_counts "$ok" "$fail"
		rm -f "$log"
	else
		echo "ThreadSanitizer build failed"
		add_counts 0 1
	fi
	NINJA_TARGETS=()
fi

# The mutation run: each break of the product in tests/mutation/breaks/
# must make the tests listed beside it fail (a scratch tree of its own,
# build-mutation/, incremental). Each break counts as one test.
echo "== mutation run (tests/mutation/run.py)"
log=$(mktemp)
/usr/bin/python3 tests/mutation/run.py 2>&1 | tee "$log" |
	grep -E '^(SURVIVED|STALE|NO BUILD|CONTROL|mutation:) '
read -r ok fail < <(mutation_counts "$log")
[ "$fail" -eq 0 ] || tail -n 60 "$log"
add_counts "$ok" "$fail"
rm -f "$log"

# one_test LOG COMMAND...: a command that is one test; the tail of its
# log shown, longer when it fails.
one_test() {
	local log=$1
	shift
	if "$@" >"$log" 2>&1; then
		tail -n 3 "$log"
		add_counts 1 0
	else
		tail -n 30 "$log"
		add_counts 0 1
	fi
}

# Each target one test: the TCP receive path, the HTTP/1.1 server, the
# HTTP/2 server, the TLS layer.
for target in fuzz_net_input fuzz_http1 fuzz_h2 fuzz_tls; do
	echo "== fuzzing: $target (bounded: ${EWYK_FUZZ_SECONDS:-60} s)"
	one_test "/tmp/ewyk-$target.log" tests/fuzz/run_fuzz.sh "${EWYK_FUZZ_SECONDS:-60}" "$target"
done

# The soak, short: the mix under 1 % loss, no error, no growth, no stall
# (about 2.5 minutes with its capacity probe).
echo "== soak (${EWYK_SOAK_MINUTES:-2} min)"
one_test /tmp/ewyk-soak.log app/bench/soak.sh "${EWYK_SOAK_MINUTES:-2}" /tmp/ewyk-soak.csv

echo "== integration tests (net_tap, net_af_xdp, net_memif in private namespaces)"
log=$(mktemp)
/usr/bin/python3 -m pytest -q -p no:cacheprovider "$ROOT/tests/integration" 2>&1 | tee "$log"
summary=$(tail -n 1 "$log")
ip=$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
if=$(echo "$summary" | grep -oE '[0-9]+ (failed|error|errors)' | grep -oE '[0-9]+' |
	awk '{s += $1} END {print s + 0}')
if [ -z "$ip" ] && [ "${if:-0}" -eq 0 ]; then
	if=1	# pytest ran nothing: that is a failure, not a pass
fi
add_counts "${ip:-0}" "${if:-0}"
rm -f "$log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
