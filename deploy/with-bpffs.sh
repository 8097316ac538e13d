#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# with-bpffs.sh CMD [ARGS...]: runs CMD with a BPF filesystem at /sys/fs/bpf.
# net_af_xdp's libxdp pins its XDP dispatcher there (without one it loads a
# single program and warns). `ip netns exec` gives its command a mount
# namespace of its own with a fresh /sys, which hides the bpffs that
# deploy/setup.sh mounted: used as `ip netns exec NS deploy/with-bpffs.sh
# ewykd ...`, it mounts one in that private mount namespace, which goes
# away with the process and so leaves nothing behind.
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf || echo "with-bpffs.sh: no bpffs at /sys/fs/bpf" >&2
fi
exec "$@"
