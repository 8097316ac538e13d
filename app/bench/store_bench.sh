#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Durable PUTs per second on a hot key set, with the conflating
# write-behind and without it (--store-conflate off: every PUT writes its
# own record), side by side in one run. h2load drives 16 connections of
# PUT /v1/state/hotN?durable=1 round robin over KEYS keys.
#
# ewykd runs on $EWYK_MEDIUM (tap, af_xdp or memif; default af_xdp where the
# kernel supports it: deploy/ewyk-ns.sh).
#
# Usage: [EWYK_MEDIUM=...] app/bench/store_bench.sh [REQUESTS] [KEYS]
#        (as root, after a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ewyk-ns.sh
N=${1:-20000}
KEYS=${2:-8}
NS="ewyk-sbench-$$"
BODY=$(mktemp /tmp/ewyk-sbench-body.XXXXXX)
STATE=$(mktemp -d /tmp/ewyk-sbench-state.XXXXXX)
LOG=$(mktemp /tmp/ewyk-sbench-log.XXXXXX)
EWYKD_PID=""

cleanup() {
	ewyk_ns_stop "$NS" || true
	rm -rf "$BODY" "$STATE" "$LOG"
}
trap cleanup EXIT
head -c 256 /dev/urandom | base64 -w0 | head -c 256 > "$BODY"

run() {		# run on|off; sets RESULT="req/s fsyncs records"
	rm -rf "${STATE:?}"/*
	ewyk_ns_start "$NS" "$LOG" --lcores 0@0,1@1,2@1 -- --shards 1 \
		--state-api --state-dir "$STATE" --store-conflate "$1"
	local urls=() k
	for k in $(seq "$KEYS"); do urls+=("http://198.18.0.2/v1/state/hot$k?durable=1"); done
	local rate
	rate=$(ip netns exec "$EWYK_CLIENT_NS" h2load --h1 -n "$N" -c 16 -d "$BODY" -H ':method: PUT' \
		"${urls[@]}" | awk '/^finished in/ {r = $4} /^status codes:/ {ok = ($3 == '"$N"')}
		END {print ok ? r : 0}')
	local st
	st=$(echo /ewyk/conflate | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$NS" |
		/usr/bin/python3 -c 'import json,sys
d = json.loads(sys.stdin.read())["/ewyk/conflate"]
print(d["fsyncs_count"], d["applied_count"])')
	ewyk_ns_stop "$NS" || true
	RESULT="$rate $st"
}

# Not in a subshell: the EXIT trap must see EWYKD_PID to stop ewykd on failure.
run on
read -r on_rate on_fsyncs on_records <<<"$RESULT"
run off
read -r off_rate off_fsyncs off_records <<<"$RESULT"
echo "durable PUTs, $N requests, 16 connections, $KEYS hot keys, 256-byte values," \
	"on $(ewyk_medium_name "$EWYK_MEDIUM")"
printf '%-22s %12s %10s %14s\n' "" "PUTs/s" "fsyncs" "records written"
printf '%-22s %12s %10s %14s\n' "with conflation" "$on_rate" "$on_fsyncs" "$on_records"
printf '%-22s %12s %10s %14s\n' "without conflation" "$off_rate" "$off_fsyncs" "$off_records"
awk -v a="$on_rate" -v b="$off_rate" 'BEGIN {printf "ratio (with / without): %.2f\n", a / b}'
