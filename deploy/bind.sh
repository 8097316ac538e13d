#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Gives one named PCI network device to DPDK: loads the driver and binds
# the device with dpdk-devbind.py, after checking what could go wrong.
#
# Usage: bind.sh PCI-ADDR [vfio-pci|uio_pci_generic]   (default vfio-pci)
#   PCI-ADDR  0000:3b:00.0 or 3b:00.0 (lspci -D lists them)
# Refuses, with what to do instead:
#   - no such device;
#   - a device whose kernel interface is up with addresses or routes (the
#     one you are logged in through, perhaps): take them off first;
#   - vfio-pci without an IOMMU: turn it on, or in a VM without one use
#     the unsafe no-IOMMU mode (said how) or uio_pci_generic;
#   - a Mellanox/NVIDIA mlx5 device: bifurcated, it stays on mlx5_core.
# Exit status: 0 bound (or nothing to do), 2 bad argument or refused, 3
# the binding itself failed. Back to the kernel: dpdk-devbind.py -b
# KERNEL-DRIVER PCI-ADDR (bind.sh prints the command).
set -uo pipefail

SYSFS=${EWYK_SYSFS:-/sys}		# tests point it at a tree of their own
DEVBIND=${DEVBIND:-dpdk-devbind.py}
MODPROBE=${MODPROBE:-modprobe}

usage() {
	echo "usage: bind.sh PCI-ADDR [vfio-pci|uio_pci_generic]" >&2
	exit 2
}
refuse() {
	echo "bind.sh: $*" >&2
	exit 2
}

[ $# -ge 1 ] && [ $# -le 2 ] || usage
addr=$1
driver=${2:-vfio-pci}
case $driver in
vfio-pci|uio_pci_generic) ;;
*) refuse "$driver: not a DPDK driver this host has (vfio-pci or uio_pci_generic)" ;;
esac
[[ $addr =~ ^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]] ||
	refuse "'$addr' is not a PCI address (0000:3b:00.0; lspci -D lists them)"
[[ $addr == ????:* ]] || addr=0000:$addr
addr=${addr,,}
dev=$SYSFS/bus/pci/devices/$addr
[ -e "$dev" ] || refuse "$addr: no such PCI device (lspci -D lists them)"

current=$(basename "$(readlink "$dev/driver" 2>/dev/null)" 2>/dev/null)
if [ "$current" = mlx5_core ]; then
	echo "bind.sh: $addr is a Mellanox/NVIDIA mlx5 port: bifurcated, it stays on" \
		"mlx5_core; bring its interface up and give ewykd -a $addr" \
		"(drivers-config/mlx5.conf)"
	exit 0
fi
if [ "$current" = "$driver" ]; then
	echo "bind.sh: $addr is already on $driver"
	exit 0
fi

# A kernel interface in use: its addresses and routes would be cut off.
for ifdir in "$dev"/net/*; do
	[ -e "$ifdir" ] || continue
	ifname=$(basename "$ifdir")
	inuse=$(ip -o addr show dev "$ifname" 2>/dev/null | awk '{print $4}' | xargs)
	routes=$(ip route show dev "$ifname" 2>/dev/null | head -n 3 | xargs)
	if [ -n "$inuse$routes" ]; then
		refuse "$addr is $ifname, which the kernel uses (addresses: ${inuse:-none};" \
			"routes: ${routes:-none}). If you mean it: ip addr flush dev $ifname;" \
			"ip link set $ifname down; then bind.sh again"
	fi
done

if [ "$driver" = vfio-pci ]; then
	groups=$(ls "$SYSFS/kernel/iommu_groups" 2>/dev/null | wc -l)
	noiommu=$(cat "$SYSFS/module/vfio/parameters/enable_unsafe_noiommu_mode" 2>/dev/null)
	if [ "$groups" -eq 0 ] && [ "$noiommu" != Y ]; then
		refuse "vfio-pci needs an IOMMU and this host shows none" \
			"($SYSFS/kernel/iommu_groups is empty). On bare metal turn it on" \
			"(BIOS VT-d/AMD-Vi, kernel: intel_iommu=on iommu=pt or amd_iommu=on)." \
			"In a VM without a virtual IOMMU: modprobe vfio" \
			"enable_unsafe_noiommu_mode=1 (unsafe: the device can write all" \
			"memory) or bind.sh $addr uio_pci_generic"
	fi
fi

if ! $MODPROBE "$driver"; then
	echo "bind.sh: modprobe $driver failed" >&2
	exit 3
fi
if ! $DEVBIND -b "$driver" "$addr"; then
	echo "bind.sh: $DEVBIND -b $driver $addr failed" >&2
	exit 3
fi
now=$(basename "$(readlink "$dev/driver" 2>/dev/null)" 2>/dev/null)
if [ "$now" != "$driver" ]; then
	echo "bind.sh: $addr is on '${now:-no driver}' after binding, not $driver" >&2
	exit 3
fi
echo "bind.sh: $addr bound to $driver (it was on ${current:-no driver})"
[ -n "$current" ] && echo "bind.sh: back to the kernel: $DEVBIND -b $current $addr"
echo "bind.sh: next: deploy/port-check.sh $addr"
