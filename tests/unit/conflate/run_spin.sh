#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Exhaustive check of the conflate protocol model with spin.
#   run_spin.sh MODEL SPEC...
# SPEC is +NAME (must verify: no assertion violation, no invalid end state,
# search not truncated) or -NAME (a seeded bug that must be caught). NAME is
# "protocol" for the model as is, else a macro defined for the variant.
# Two variants run at a time (the test machine has two cores).
# Needs spin (Debian package spin) and a C compiler.

set -u
model=${1:?usage: run_spin.sh MODEL +NAME|-NAME...}
shift
CC=${CC:-cc}

command -v spin >/dev/null 2>&1 || {
	echo "spin not found: apt-get install spin" >&2
	exit 1
}
command -v "$CC" >/dev/null 2>&1 || {
	echo "C compiler $CC not found" >&2
	exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/conflate-spin.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM

# verify NAME: build pan for the variant, run it, keep its output
verify() {
	dir="$work/$1"
	define=
	[ "$1" = protocol ] || define="-D$1"
	mkdir -p "$dir"
	cp "$model" "$dir/model.pml"
	(
		cd "$dir" &&
		spin -a $define model.pml >spin.log 2>&1 &&
		"$CC" -O0 -w -DSAFETY -o pan pan.c >cc.log 2>&1 &&
		./pan -m200000 -w21 >pan.log 2>&1
	)
	if ! grep -q "errors:" "$dir/pan.log" 2>/dev/null; then
		echo "FAIL $1: spin/pan did not run" >&2
		cat "$dir"/*.log >&2
		return 1
	fi
}

errors() {
	sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$work/$1/pan.log"
}

expect_pass() {
	verify "$1" || return 1
	if [ "$(errors "$1")" != 0 ] ||
			grep -q "max search depth too small" "$work/$1/pan.log"; then
		echo "FAIL $1: expected a clean exhaustive search" >&2
		cat "$work/$1/pan.log" >&2
		return 1
	fi
	echo "ok   $1 verified: $(grep -E 'states, stored' "$work/$1/pan.log" |
		sed 's/^ *//')"
}

expect_fail() {
	verify "$1" || return 1
	if [ "$(errors "$1")" = 0 ]; then
		echo "FAIL $1: seeded bug not caught" >&2
		return 1
	fi
	echo "ok   $1 caught: $(grep -m1 -E '^pan:[0-9]|invalid end state' \
		"$work/$1/pan.log")"
}

check() {
	case $1 in
	+*) expect_pass "${1#+}" ;;
	-*) expect_fail "${1#-}" ;;
	*) echo "bad spec $1" >&2; return 1 ;;
	esac
}

rc=0
while [ $# -gt 0 ]; do
	check "$1" &
	p1=$!
	shift
	if [ $# -gt 0 ]; then
		check "$1" || rc=1
		shift
	fi
	wait $p1 || rc=1
done
exit $rc
