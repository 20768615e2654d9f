#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS end to end (issue 21), in the guest: Debian's dkms adds, builds and
# installs gpreempt (dkms.conf, scripts/dkms-build) for the running kernel
# from a copy of this tree, the installed module loads clean (taint OE,
# vermagic, __versions, tracepoints) with its layout checked against the
# real amdgpu, and dkms remove takes it away again.  Then the systemd unit,
# with gpreemptctl and its man page installed where it names them, passes
# systemd-analyze verify.
# The guest root is the host's, read-only: DKMS's state goes to a tmpfs on
# /var/lib/dkms (its signing key too), its source tree to /tmp
# (--sourcetree), and /lib/modules/<kver> is a tmpfs holding amdgpu and its
# dependencies from the cached kernel (install, depmod); all undone at the end.
. test/lib/tap.sh
. test/lib/modcheck.sh
# shellcheck source=/dev/null
[ -f "${GP_VM_SCRATCH:-}/kernel.env" ] && . "$GP_VM_SCRATCH/kernel.env"
kver=$(uname -r)
tmp=$(mktemp -d)
mounts=()
undo() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap undo EXIT
mnt() {   # mnt TARGET MOUNT-ARGS...: mount, remembered for undo
	local t=$1
	shift
	mount "$@" "$t" && mounts+=("$t")
}

if ! command -v dkms >/dev/null; then
	tap_not_ok "dkms: the dkms package is installed (scripts/setup)"
	tap_done
	exit
fi
dmesg -C

# /lib/modules/<kver> on a tmpfs: amdgpu and what it needs, linked from the
# cached kernel (depmod of all its 4000 modules takes minutes in a TCG guest).
mods=$GP_KROOT/lib/modules/$kver
mnt /lib/modules -t tmpfs tmpfs && mkdir -p "/lib/modules/$kver"
modprobe -d "$GP_KROOT" -S "$kver" --show-depends amdgpu | awk '$1 == "insmod" { print $2 }' |
	while read -r m; do
		mkdir -p "$(dirname "/lib/modules/$kver/${m#"$mods"/}")"
		ln -s "$m" "/lib/modules/$kver/${m#"$mods"/}"
	done
cp "$mods"/modules.builtin* "$mods"/modules.order "/lib/modules/$kver/"
depmod -a "$kver"
ln -sfn "$GP_KDIR" "/lib/modules/$kver/build"
mnt /var/lib/dkms -t tmpfs tmpfs
srct=$tmp/src
mkdir -p "$srct/gpreempt-0.1"
git ls-files -z | xargs -0 cp --parents -t "$srct/gpreempt-0.1"
dk=(-m gpreempt -v 0.1 -k "$kver" --sourcetree "$srct")

tap_check "dkms: add gpreempt/0.1" dkms add "${dk[@]}"
start=$(date +%s)
if dkms build "${dk[@]}" >"$tmp/build.log" 2>&1; then
	tap_ok "dkms: build gpreempt/0.1 for $kver ($(( $(date +%s) - start )) s)"
else
	tap_not_ok "dkms: build gpreempt/0.1 for $kver"
	tail -n 15 "$tmp/build.log" | sed 's/^/# /'
	tail -n 25 /var/lib/dkms/gpreempt/0.1/build/make.log 2>/dev/null | sed 's/^/# /'
fi
log=/var/lib/dkms/gpreempt/0.1/$kver/$(uname -m)/log/make.log
tap_check "dkms: the layout came from amdgpu.ko's BTF (BTF first)" \
	grep -q 'has BTF: layout from it' "$log"
tap_check "dkms: install gpreempt/0.1" dkms install "${dk[@]}"
ko=$(modinfo -k "$kver" -n gpreempt 2>/dev/null)
tap_check "dkms: modprobe finds the installed module in /lib/modules/$kver/updates/dkms ($ko)" \
	test -n "$ko" -a "${ko#/lib/modules/"$kver"/updates/dkms/}" != "$ko"
case $ko in
*.xz) xz -dc "$ko" >"$tmp/gpreempt.ko" ;;
*.zst) zstd -qdc "$ko" >"$tmp/gpreempt.ko" ;;
*) cp "$ko" "$tmp/gpreempt.ko" 2>/dev/null ;;
esac

if modprobe amdgpu && modprobe gpreempt; then
	tap_ok "dkms: modprobe amdgpu, modprobe gpreempt"
	line=$(dmesg | grep -m1 "amdgpu has the layout gpreempt was built for")
	tap_check "dkms: the installed gpreempt checked amdgpu's layout at insmod" test -n "$line"
	tap_clean_load "dkms" "$tmp/gpreempt.ko"
	tap_check "dkms: modprobe -r gpreempt" modprobe -r gpreempt
else
	tap_not_ok "dkms: modprobe amdgpu, modprobe gpreempt # $(dmesg | tail -n 3 | tr '\n' ' ')"
fi
tap_check "dkms: remove gpreempt/0.1" dkms remove "${dk[@]}"
tap_check_fails "dkms: after remove, modprobe no longer finds gpreempt" \
	modinfo -k "$kver" -n gpreempt
modprobe -r amdgpu 2>/dev/null

# The unit, with what it runs where it names it.
mnt /usr/local/sbin -t tmpfs tmpfs
mnt /usr/local/share/man -t tmpfs tmpfs
install -D -m 0755 "$GP_OBJ/build/gpreemptctl" /usr/local/sbin/gpreemptctl
install -D -m 0644 tools/gpreemptctl/gpreemptctl.8 /usr/local/share/man/man8/gpreemptctl.8
if out=$(systemd-analyze verify etc/gpreempt.service 2>&1) && [ -z "$out" ]; then
	tap_ok "dkms: systemd-analyze verify etc/gpreempt.service"
else
	tap_not_ok "dkms: systemd-analyze verify etc/gpreempt.service"
	printf '%s\n' "$out" | head -n 10 | sed 's/^/# /'
fi
tap_dmesg_clean "dkms: dmesg clean"
tap_done
