#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# meson install's last step: the example configuration goes to
# SYSCONFDIR/ewyk/ewykd.conf unless a file is there already, so that
# installing again never overwrites an operator's edits.
#   install-conf.sh BUILT_CONF DESTINATION (absolute; $DESTDIR prepended)
set -eu
src=$1
dst=${DESTDIR:-}$2
if [ -e "$dst" ]; then
	echo "Keeping $dst (the example is in $(dirname "$src"))"
	exit 0
fi
mkdir -p "$(dirname "$dst")"
install -m 0644 "$src" "$dst"
echo "Installing $dst"
