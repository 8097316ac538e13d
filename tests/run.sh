#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what is missing, builds with warnings as errors, runs every test
# (cmocka unit tests, ThreadSanitizer stress tests, the mutation run, a
# 2-minute soak, bounded fuzzing beside them at idle priority, pytest
# integration tests against the Linux stack through net_tap, net_af_xdp
# and net_memif in private namespaces), prints each stage's wall time and
# ends with one line: "N passed, N failed". About 16 minutes on a 2-CPU
# host, package installs apart.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

passed=0
failed=0
# The time table printed at the end: each stage's name and wall seconds.
stage_names=()
stage_secs=()
stage_t0=$SECONDS
stage_name=""
stage() {	# stage NAME: ends the stage running, starts NAME ("" ends all)
	if [ -n "$stage_name" ]; then
		stage_names+=("$stage_name")
		stage_secs+=($((SECONDS - stage_t0)))
	fi
	stage_name=$1
	stage_t0=$SECONDS
	[ -z "$1" ] || echo "== $1"
}
time_table() {
	local i
	stage ""
	echo "== time table (wall seconds)"
	for i in "${!stage_names[@]}"; do
		printf '%6d  %s\n' "${stage_secs[$i]}" "${stage_names[$i]}"
	done
	printf '%6d  total\n' "$SECONDS"
}
# add_counts, meson_counts and mutation_counts
. "$ROOT/tests/counts.sh"

stage "setup (package installs on a fresh machine)"
./deploy/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

build() {	# build DIR [meson options...]
	local dir=$1
	shift
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi && ninja -C "$dir" "${NINJA_TARGETS[@]}"
}

stage "build (warnings as errors)"
NINJA_TARGETS=()
if ! build build -Dwerror=true; then
	echo "build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

stage "unit tests"
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
	stage "ThreadSanitizer stress tests"
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

# Bounded fuzzing, each target one test: the TCP receive path, the
# HTTP/1.1 server, the HTTP/2 server, the TLS layer, the QUIC endpoint. Its build and the
# fuzzers (two at a time) run in a lane of their own under SCHED_IDLE,
# beside the mutation run and the soak: they take only the CPU time those
# leave idle (the mutation run's integration catchers wait on timers and
# peers; the soak holds the appliance at 80 % of its capacity), never
# theirs. The lane is waited for before the integration tests start,
# which it would slow.
fuzz_targets=(fuzz_net_input fuzz_http1 fuzz_h2 fuzz_tls fuzz_quic)
fuzz_lane() {	# the build, then two at a time; exit statuses in /tmp/ewyk-*.rc
	local t pids=()
	tests/fuzz/run_fuzz.sh build >/tmp/ewyk-fuzz-build.log 2>&1
	echo $? >/tmp/ewyk-fuzz-build.rc
	[ "$(cat /tmp/ewyk-fuzz-build.rc)" = 0 ] || return
	for t in "${fuzz_targets[@]}"; do
		(FUZZ_PREBUILT=1 tests/fuzz/run_fuzz.sh "${EWYK_FUZZ_SECONDS:-36}" "$t" \
			>"/tmp/ewyk-$t.log" 2>&1
		echo $? >"/tmp/ewyk-$t.rc") &
		pids+=($!)
		if [ ${#pids[@]} -eq 2 ]; then
			wait "${pids[@]}"
			pids=()
		fi
	done
	wait "${pids[@]}"
}
rm -f /tmp/ewyk-fuzz*.rc
chrt --idle 0 bash -c "$(declare -p fuzz_targets); $(declare -f fuzz_lane); fuzz_lane" &
fuzz_pid=$!

# The mutation run: each break of the product in tests/mutation/breaks/
# must make the tests listed beside it fail (a scratch tree of its own,
# build-mutation/, incremental). Each break counts as one test.
stage "mutation run (tests/mutation/run.py), the fuzzing lane beside it at idle priority"
log=$(mktemp)
/usr/bin/python3 tests/mutation/run.py 2>&1 | tee "$log" |
	grep -E '^(SURVIVED|UNSTEADY|STALE|NO BUILD|CONTROL|mutation:) '
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

# The soak, short: the mix under 1 % loss, no error, no growth, no stall
# (about 2.5 minutes with its capacity probe).
stage "soak (${EWYK_SOAK_MINUTES:-2} min)"
one_test /tmp/ewyk-soak.log app/bench/soak.sh "${EWYK_SOAK_MINUTES:-2}" /tmp/ewyk-soak.csv

stage "fuzzing lane: waiting for the last (${EWYK_FUZZ_SECONDS:-36} s a target)"
wait "$fuzz_pid"
if [ "$(cat /tmp/ewyk-fuzz-build.rc 2>/dev/null)" != 0 ]; then
	echo "-- fuzzing build failed"
	tail -n 30 /tmp/ewyk-fuzz-build.log
	add_counts 0 1
else
	for t in "${fuzz_targets[@]}"; do
		echo "-- $t"
		if [ "$(cat "/tmp/ewyk-$t.rc" 2>/dev/null)" = 0 ]; then
			grep -E '^stat::number_of_executed_units|no crash' "/tmp/ewyk-$t.log"
			add_counts 1 0
		else
			tail -n 30 "/tmp/ewyk-$t.log"
			add_counts 0 1
		fi
	done
fi

# pytest_counts LOG: passed and failed (errors included) of pytest's last
# line; a run that passed nothing and failed nothing is a failure.
pytest_counts() {
	local summary ip if
	summary=$(tail -n 1 "$1")
	ip=$(echo "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
	if=$(echo "$summary" | grep -oE '[0-9]+ (failed|error|errors)' | grep -oE '[0-9]+' |
		awk '{s += $1} END {print s + 0}')
	if [ -z "$ip" ] && [ "${if:-0}" -eq 0 ]; then
		if=1	# pytest ran nothing: that is a failure, not a pass
	fi
	echo "${ip:-0} ${if:-0}"
}

# Two workers (pytest-xdist, a module to a worker, so that its appliance
# starts once), then the modules marked "alone", one test at a time with
# nothing beside them: those that measure scheduling
# (tests/integration/conftest.py).
stage "integration tests, two at a time (net_tap, net_af_xdp, net_memif in private namespaces)"
log=$(mktemp)
/usr/bin/python3 -m pytest -q -p no:cacheprovider -n 2 --dist loadfile -m "not alone" \
	--durations=20 "$ROOT/tests/integration" 2>&1 | tee "$log"
read -r ok fail < <(pytest_counts "$log")
add_counts "$ok" "$fail"
stage "integration tests, alone"
/usr/bin/python3 -m pytest -q -p no:cacheprovider -m alone \
	--durations=10 "$ROOT/tests/integration" 2>&1 | tee "$log"
read -r ok fail < <(pytest_counts "$log")
add_counts "$ok" "$fail"
rm -f "$log"

time_table
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
