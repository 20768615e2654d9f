#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS end to end (issue 21): Debian's dkms adds and builds gpreempt
# (dkms.conf, scripts/dkms-build) for this guest's kernel on the host
# (test/run-dkms-build, run by test/run-vm first: the compile is ~50x faster
# there than in this TCG guest), into build/dkms/<kver>/, which the guest
# sees over 9p.  Here, dkms status finds that build of this very tree,
# dkms install installs it without compiling anything, the installed module
# loads clean (taint OE, vermagic, __versions, tracepoints) with its layout
# checked against the real amdgpu, and dkms remove takes it away again.
# Then the systemd unit, with gpreemptctl and its man page installed where
# it names them, passes systemd-analyze verify.
# Along the way, the README's walk-through: gpreemptctl doctor before the
# install (gpreempt.ko not installed), after it (installed, signed by DKMS's
# own key: the host's dkms build signed it), with the module loaded and a
# rule set (module ok, the running amdgpu is the file on disk, no gpreempt
# error in the kernel log), and after dkms remove (not installed again).
# The guest root is the host's, read-only: DKMS's state goes to a tmpfs on
# /var/lib/dkms (a copy of the host's dkms tree), and /lib/modules/<kver> is
# a tmpfs holding amdgpu and its dependencies from the cached kernel
# (install, depmod); all undone at the end.
. test/lib/tap.sh
. test/lib/modcheck.sh
. test/lib/amdgpu.sh
tap_plan 22
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
	tap_bail "no dkms"
fi
dmesg -C

# /lib/modules/<kver> on a tmpfs: amdgpu and what it needs, linked from the
# cached kernel.
mnt /lib/modules -t tmpfs tmpfs && amdgpu_modules "$kver"
pre=$PWD/build/dkms/$kver
dkt=$pre/dkms/gpreempt/0.1
if [ ! -d "$dkt/$kver/$(uname -m)/module" ]; then
	tap_not_ok "dkms: the host built gpreempt/0.1 for $kver into $pre (run test/run-dkms-build first)"
	tap_bail "no host build"
fi
# The host's build is of the tree under test, not of an older one.
tap_check "dkms: the host's dkms build is of this tree (build/dkms/$kver/source.sha256)" \
	sha256sum --quiet -c "$pre/source.sha256"
mnt /var/lib/dkms -t tmpfs tmpfs
mkdir -p /var/lib/dkms/gpreempt && cp -a "$dkt" /var/lib/dkms/gpreempt/
dk=(-m gpreempt -v 0.1 -k "$kver")
CTL=$PWD/build/gpreemptctl
# doctor_is NAME CHECK STATUS WORDS: gpreemptctl doctor's CHECK says STATUS and WORDS
doctor_is() {
	local js v
	js=$("$CTL" -j doctor 2>/dev/null)
	v=$(printf '%s' "$js" | jq -r --arg n "$2" '.checks[] | select(.name == $n) | .status + ": " + .value' 2>/dev/null)
	if [[ $v == "$3: "* && $v == *"$4"* ]]; then
		tap_ok "dkms: doctor $1: $2 $3 ($4)"
	else
		tap_not_ok "dkms: doctor $1: $2 $3 ($4) # $v"
	fi
}
doctor_is "before the install" module-sig warn "not installed"

tap_check "dkms: status: gpreempt/0.1 built for $kver (by the host's dkms add/build)" \
	sh -c "dkms status ${dk[*]} | grep -q ': built\$'"
# No headers at /lib/modules/<kver>/build: an install that compiled would fail.
if out=$(dkms install "${dk[@]}" 2>&1) && [[ $out != *"Building module"* ]]; then
	tap_ok "dkms: install gpreempt/0.1 (the host's build; nothing compiled in the guest)"
else
	tap_not_ok "dkms: install gpreempt/0.1 (the host's build; nothing compiled in the guest)"
	printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
fi
doctor_is "after the install" module-sig ok "signed by DKMS module signing key"
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
	tap_check "dkms: a rule on the installed module (set comm lc-walk high, list)" \
		sh -c "'$CTL' set comm lc-walk high && '$CTL' list | grep -q 'lc-walk'"
	doctor_is "loaded, a rule set" module ok "gpreempt is loaded (live)"
	doctor_is "loaded" amdgpu-id ok "the running amdgpu is /lib/modules/$kver/"
	doctor_is "loaded" dmesg ok "no gpreempt error"
	tap_check "dkms: modprobe -r gpreempt" modprobe -r gpreempt
else
	tap_not_ok "dkms: modprobe amdgpu, modprobe gpreempt # $(dmesg | tail -n 3 | tr '\n' ' ')"
	tap_not_run 10 "not loaded"
fi
tap_check "dkms: remove gpreempt/0.1" dkms remove "${dk[@]}"
tap_check_fails "dkms: after remove, modprobe no longer finds gpreempt" \
	modinfo -k "$kver" -n gpreempt
doctor_is "after dkms remove" module-sig warn "not installed"
modprobe -r amdgpu 2>/dev/null

# The unit, with what it runs where it names it.
mnt /usr/local/sbin -t tmpfs tmpfs
mnt /usr/local/share/man -t tmpfs tmpfs
install -D -m 0755 "$GP_OBJ/build/gpreemptctl" /usr/local/sbin/gpreemptctl
install -D -m 0644 tools/gpreemptctl/gpreemptctl.8 /usr/local/share/man/man8/gpreemptctl.8
# the units as make install writes them (PREFIX=/usr/local)
sed 's|@SBINDIR@|/usr/local/sbin|g' etc/gpreempt.service >"$tmp/gpreempt.service"
sed 's|@SBINDIR@|/usr/local/sbin|g' etc/gpreempt-retry.service >"$tmp/gpreempt-retry.service"
cp etc/gpreempt-retry.timer "$tmp/"
if out=$(systemd-analyze verify "$tmp/gpreempt.service" "$tmp/gpreempt-retry.service" \
	"$tmp/gpreempt-retry.timer" 2>&1) && [ -z "$out" ]; then
	tap_ok "dkms: systemd-analyze verify etc/gpreempt.service (and gpreempt-retry.service, .timer)"
else
	tap_not_ok "dkms: systemd-analyze verify etc/gpreempt.service (and gpreempt-retry.service, .timer)"
	printf '%s\n' "$out" | head -n 10 | sed 's/^/# /'
fi
tap_dmesg_clean "dkms: dmesg clean"
tap_done
