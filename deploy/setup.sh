#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prepares a Debian 12 host for ewyk: installs the packages that the build, the
# tests, the demo and the benchmarks need (only those missing), reserves
# hugepages, mounts hugetlbfs and the BPF filesystem (net_af_xdp). Where
# hugepages cannot be had it says so; deploy/eal-mem.sh then falls back to
# --no-huge. Run as root; idempotent.
set -euo pipefail

PACKAGES=(
	dpdk dpdk-dev libdpdk-dev libnghttp2-dev libbsd-dev meson ninja-build pkg-config gcc
	# compress = on (docs/operations.md): gzip
	zlib1g-dev
	nghttp2-client nghttp2-server curl wrk iproute2 iputils-ping nftables ethtool
	python3 python3-pytest python3-pytest-xdist python3-scapy python3-h2 libcmocka-dev clang libclang-rt-14-dev spin
	tcpdump lua5.4 nginx-light media-types brotli
	# TLS (docs/tls.md): the libraries tls-bench measures, the scanner and
	# the second server of the side-by-side benchmark
	openssl libssl-dev libgnutls28-dev libwolfssl-dev testssl.sh h2o
	# HTTP/3 (docs/http3.md): QUIC on ngtcp2 with GnuTLS, nghttp3, and
	# ngtcp2's client (gtlsclient), the tests' peer
	libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev ngtcp2-client
	# the tests' certificate authority, certificates and OCSP responses
	python3-cryptography
	# WebSockets through a route (websocket = on): the tests' client and
	# application
	python3-websockets
	# the mutation run's compiles (tests/mutation/run.py): a file put back
	# after its break, and a break compiled in an earlier run, are hits
	ccache
)
# 2 MiB pages: 2 GiB, for two integration tests side by side (tests/run.sh),
# each with an appliance, a load generator or a wire of its own.
HUGEPAGES=${EWYK_HUGEPAGES:-1024}

if [ "$(id -u)" -ne 0 ]; then
	echo "setup.sh: must run as root (installs packages, reserves hugepages)" >&2
	exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Hugepages: best effort. A host that cannot reserve them still runs ewyk
# with --no-huge (see deploy/eal-mem.sh).
nr=/proc/sys/vm/nr_hugepages
if [ -w "$nr" ] && [ "$(cat "$nr")" -lt "$HUGEPAGES" ]; then
	echo "$HUGEPAGES" > "$nr" 2>/dev/null || true
fi
if ! grep -q ' /dev/hugepages ' <<<"$(mount -t hugetlbfs)"; then
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
fi
# net_af_xdp: libxdp keeps its XDP dispatcher on a BPF filesystem.
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null ||
		echo "setup.sh: cannot mount bpffs at /sys/fs/bpf; net_af_xdp loads its program without a dispatcher"
fi
free_pages=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if [ "${free_pages:-0}" -gt 0 ]; then
	echo "setup.sh: ${free_pages} hugepages free on /dev/hugepages"
else
	echo "setup.sh: no hugepages available; ewykd will run with --no-huge"
fi

# --- operations: ewyk-exporter, its dashboard and the deployment checks ---
# python3-prometheus-client (the exporter), libjs-chart.js (the dashboard's
# charts), prometheus (promtool), chromium (the dashboard test), npm (the
# Kubernetes schema validator of tests/k8s, schemas bundled in its packages),
# node (the dashboard's figures computed in a test).
OPS_PACKAGES=(python3-prometheus-client libjs-chart.js prometheus chromium)
command -v npm >/dev/null || OPS_PACKAGES+=(npm)
command -v node >/dev/null || OPS_PACKAGES+=(nodejs)
ops_missing=()
for p in "${OPS_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		ops_missing+=("$p")
done
if [ ${#ops_missing[@]} -gt 0 ]; then
	echo "setup.sh: installing ${ops_missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	[ ${#missing[@]} -gt 0 ] || apt-get update -qq	# once per run
	apt-get install -y -qq --no-install-recommends "${ops_missing[@]}" >/dev/null
fi
k8s_dir="$(dirname "$0")/../tests/k8s"
if [ ! -d "$k8s_dir/node_modules/kubernetes-models" ]; then
	echo "setup.sh: installing the Kubernetes schema validator (npm ci in tests/k8s)"
	npm ci --prefix "$k8s_dir" --no-audit --no-fund --loglevel=error >/dev/null
fi
# --- end of operations ---
