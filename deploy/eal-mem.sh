#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the EAL memory options for this host: hugepages when enough are free
# (--in-memory, so nothing is left in hugetlbfs if the process is killed),
# else --no-huge with the same amount of ordinary memory (--no-shconf, since
# --no-huge implies legacy memory, which --in-memory refuses).
# Usage: eal-mem.sh [MEGABYTES]   (default 256)
mb=${1:-256}
free_pages=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
page_kb=$(awk '/Hugepagesize/ {print $2}' /proc/meminfo)
if [ -n "$free_pages" ] && [ -n "$page_kb" ] &&
   [ $((free_pages * page_kb / 1024)) -ge "$mb" ]; then
	echo "--in-memory -m $mb"
else
	echo "--no-huge --no-shconf -m $mb"
fi
