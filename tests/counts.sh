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
