#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim's DRM devices link it against drm.ko, which insmod does not load:
# every script scripts/vm runs in the guest, if it can load kfdsim, must
# load drm.ko first (test/lib/drm.sh: guest-run's ks_drm_load, or
# ks_drm_guest in a script scripts/vm runs directly).  The scripts are
# found where they are started: "scripts/vm ... -- ... bash FILE" in
# scripts/, test/ and the Makefile.  Without the load, make bench, the
# demos and the soak failed at insmod kfdsim while make check passed.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
files=$( { grep -rhE -A2 'scripts/vm ' scripts test Makefile 2>/dev/null; } |
	grep -oE 'bash (scripts|test)/[A-Za-z0-9/._-]+' | awk '{print $2}' | sort -u)
n=$(echo "$files" | grep -c .)
tap_plan $((n + 1))
tap_check "the scripts scripts/vm runs are found (at least guest-run, bench-guest, the demos and the soak's)" \
	eval '[ "$n" -ge 5 ] && grep -qx scripts/bench-guest <<<"$files" && grep -qx test/vm/guest-run <<<"$files"'
for f in $files; do
	if [ ! -f "$f" ]; then
		tap_not_ok "$f: exists"
	elif ! grep -qE 'insmod .*kfdsim|kfdsim\.ko|hip-lib\.sh|bench-rules' "$f" && [ "$f" != test/vm/guest-run ]; then
		tap_ok "$f: loads no kfdsim"
	else
		tap_check "$f: loads drm.ko before kfdsim (ks_drm_load or ks_drm_guest)" \
			grep -qE '^[^#]*\bks_drm_(load|guest)\b' "$f"
	fi
done
tap_done
