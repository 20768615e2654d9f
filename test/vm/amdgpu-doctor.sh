#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreemptctl doctor on the real amdgpu of the guest's kernel (Debian 6.12):
# before gpreempt is loaded it sees the tested kernel and its headers, the
# in-tree amdgpu with its build id equal to the file modprobe loads, the
# layout from amdgpu's BTF, CWSR on, kprobes, no cgroup v2 (then one), and no GPU in
# KFD's topology (QEMU has none: the one failing check, exit 7); after
# insmod, the module and its parameters; as nobody, the same without a
# crash.  /lib/modules/<kver> is a tmpfs with amdgpu and its dependencies
# linked from the cached kernel and build -> the headers (as
# amdgpu-dkms.sh), so modinfo finds amdgpu as on an installed system.
. test/lib/tap.sh
. test/lib/amdgpu.sh
tap_plan 22
# shellcheck source=/dev/null
[ -f "${GP_VM_SCRATCH:-}/kernel.env" ] && . "$GP_VM_SCRATCH/kernel.env"
OBJ=${GP_OBJ:-.}
CTL=$PWD/build/gpreemptctl
kver=$(uname -r)
tmp=$(mktemp -d)
chmod 755 "$tmp"
undo() {
	rmmod gpreempt 2>/dev/null
	modprobe -r amdgpu 2>/dev/null
	umount /lib/modules 2>/dev/null
	[ -z "${umount_cg:-}" ] || umount /sys/fs/cgroup
	rm -rf "$tmp"
}
trap undo EXIT
nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
# check NAME STATUS WORDS: the check in $js
check() {
	printf '%s' "$js" | jq -e --arg n "$1" --arg s "$2" --arg w "$3" \
		'.checks[] | select(.name == $n) | .status == $s and (.value | contains($w))' >/dev/null
}
value() { printf '%s' "$js" | jq -r --arg n "$1" '.checks[] | select(.name == $n) | .status + ": " + .value' 2>/dev/null; }
# expect NAME STATUS WORDS: one TAP line
expect() {
	if check "$1" "$2" "$3"; then
		tap_ok "doctor on amdgpu: $1 $2 ($3)"
	else
		tap_not_ok "doctor on amdgpu: $1 $2 ($3) # $(value "$1")"
	fi
}

mount -t tmpfs tmpfs /lib/modules && amdgpu_modules "$kver"
[ -n "${GP_KDIR:-}" ] && ln -s "$GP_KDIR" "/lib/modules/$kver/build"
rmmod gpreempt 2>/dev/null
tap_check "doctor on amdgpu: modprobe amdgpu" modprobe amdgpu
dmesg -C

js=$("$CTL" -j doctor 2>"$tmp/err"); rc=$?
tap_check "doctor on amdgpu: exit 7 (no GPU in QEMU), JSON, nothing on stderr" \
	sh -c "[ $rc = 7 ] && [ ! -s '$tmp/err' ] && printf '%s' \"\$1\" | jq -e .summary >/dev/null" _ "$js"
expect kernel ok "a tested series: 6.12"
expect headers ok "/lib/modules/$kver/build"
expect amdgpu ok "loaded, in-tree"
expect amdgpu-id ok "the running amdgpu is /lib/modules/$kver/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko"
expect layout ok "BTF of the running amdgpu"
expect cwsr ok "on"
expect scheduler fail "no AMD GPU in KFD's topology"
expect kprobes ok ""
# The guest boots without a cgroup2 mount: doctor says so, then sees it.
if mountpoint -q /sys/fs/cgroup; then
	tap_skip "doctor on amdgpu: cgroup2 warn (no cgroup v2)" "/sys/fs/cgroup was mounted at boot"
else
	expect cgroup2 warn "no cgroup v2"
	mount -t cgroup2 none /sys/fs/cgroup && umount_cg=1
fi
expect module warn "not loaded"
for c in amdgpu amdgpu-id layout cwsr scheduler; do tap_diag "$(value $c)"; done

if insmod "$OBJ/module/gpreempt.ko"; then
	js=$("$CTL" -j doctor 2>"$tmp/err")
	tick=$(cat /sys/module/gpreempt/parameters/tick_us)
	expect module ok "gpreempt is loaded (live)"
	expect cgroup2 ok "mounted on /sys/fs/cgroup"
	tap_check "doctor on amdgpu: parameters.tick_us = $tick" sh -c \
		"printf '%s' \"\$1\" | jq -e '.checks[] | select(.name == \"parameters\") | .parameters.tick_us == \"$tick\"' >/dev/null" _ "$js"
	# insmod of the unsigned module logged "module verification failed ...
	# tainting kernel": a taint, not an error
	expect dmesg ok "no gpreempt error"
	js=$(nobody "$CTL" -j doctor 2>"$tmp/err"); rc=$?
	tap_check "doctor on amdgpu as nobody: exit 7, JSON, root false, nothing on stderr" \
		sh -c "[ $rc = 7 ] && [ ! -s '$tmp/err' ] && printf '%s' \"\$1\" | jq -e '.root == false' >/dev/null" _ "$js"
	expect module ok "gpreempt is loaded"
	expect layout ok "BTF"
	tap_diag "as nobody: $(value dmesg); $(value amdgpu-id)"
	out=$(nobody "$CTL" doctor 2>&1)
	tap_check "doctor on amdgpu as nobody, words: one summary line" \
		grep -qE '^[0-9]+ ok, [0-9]+ warn, 1 fail, [0-9]+ unknown$' <<<"$out"
	tap_check "doctor on amdgpu: rmmod gpreempt" rmmod gpreempt
else
	tap_not_ok "doctor on amdgpu: insmod gpreempt # $(dmesg | tail -n 2 | tr '\n' ' ')"
	tap_not_run 8 "gpreempt did not load"
fi
tap_dmesg_clean "doctor on amdgpu: dmesg clean"
tap_done
