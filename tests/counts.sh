# SPDX-License-Identifier: BSD-3-Clause
# Counting for tests/run.sh, sourced by it (and by its own test,
# tests/integration/test_run_counts.py): the totals are passed and failed.
add_counts() {	# add_counts PASSED FAILED
	passed=$((passed + $1))
	failed=$((failed + $2))
}

# Meson's summary: "Ok: N", "Fail: N", "Timeout: N" ... A stage that ran
# nothing (no summary, or nothing ok and nothing failed) is a failure: a
# suite that lost its tests must not pass as "0 passed, 0 failed".
meson_counts() {
	local log=$1 ok fail
	ok=$(awk '/^Ok:/ {print $2}' "$log")
	fail=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {s += $2} END {print s + 0}' "$log")
	if [ "${ok:-0}" -eq 0 ] && [ "${fail:-0}" -eq 0 ]; then
		echo "stage ran no test: counted as a failure" >&2
		fail=1
	fi
	echo "${ok:-0} ${fail:-0}"
}

# The mutation run's last line: "mutation: N breaks: C caught, F failed".
# Each break is a test: caught passes, anything else (survived, stale, did
# not build) fails. A run that did not get to its summary, or ran no
# break, is a failure.
mutation_counts() {
	local log=$1 caught fail
	read -r caught fail < <(sed -nE \
		's/^mutation: [0-9]+ breaks: ([0-9]+) caught, ([0-9]+) failed$/\1 \2/p' \
		"$log" | tail -n 1)
	if [ -z "${caught:-}" ] || [ $((caught + fail)) -eq 0 ]; then
		echo "mutation run gave no summary or ran no break: counted as a failure" >&2
		caught=0
		fail=$((${fail:-0} + 1))
	fi
	echo "$caught $fail"
}
