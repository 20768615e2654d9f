#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Review finding C2 on the real amdgpu.ko: insmod checks every offset, size,
# parameter position and enumerator gpreempt uses against the running
# amdgpu's BTF; without BTF (as on ROCm DKMS builds, modelled here by the same
# amdgpu.ko with its .BTF section removed) it accepts only the binary whose
# build id the layout recorded.  Runs after amdgpu-gpreempt.sh (amdgpu loaded).
. test/lib/tap.sh
tap_plan 5
OBJ=${GP_OBJ:-.}
KO=$OBJ/module/gpreempt.ko
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dmesg_line() { dmesg | grep -m1 -- "$1"; }

dmesg -C
if insmod "$KO"; then
	line=$(dmesg_line "amdgpu has the layout gpreempt was built for")
	tap_check "layout: amdgpu checked against its BTF at insmod" test -n "$line"
	tap_diag "${line#*] }"
	rmmod gpreempt
else
	tap_not_ok "layout: amdgpu checked against its BTF at insmod # $(dmesg | tail -n 1)"
fi

ko=$(modinfo -b "$GP_KROOT" -k "$(uname -r)" -n amdgpu 2>/dev/null)
case $ko in
*.ko) objcopy --remove-section=.BTF "$ko" "$tmp/amdgpu.ko" ;;
*.ko.xz) xz -dc "$ko" >"$tmp/a.ko" && objcopy --remove-section=.BTF "$tmp/a.ko" "$tmp/amdgpu.ko" ;;
*.ko.zst) zstd -qdc "$ko" >"$tmp/a.ko" && objcopy --remove-section=.BTF "$tmp/a.ko" "$tmp/amdgpu.ko" ;;
esac
if [ ! -s "$tmp/amdgpu.ko" ] || ! rmmod amdgpu; then
	tap_not_ok "layout: amdgpu reloaded without BTF # module $ko"
	tap_bail "amdgpu not reloaded without BTF"
fi
insmod "$tmp/amdgpu.ko" 2>"$tmp/err"
tap_check "layout: amdgpu without .BTF loaded, no /sys/kernel/btf/amdgpu" \
	bash -c 'grep -q "^amdgpu " /proc/modules && [ ! -e /sys/kernel/btf/amdgpu ]'
dmesg -C
if insmod "$KO"; then
	line=$(dmesg_line "amdgpu is the binary the layout was made from")
	tap_check "layout: amdgpu without BTF accepted by its build id" \
		grep -q "no BTF, build id $(readelf -n "$ko" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')" <<<"$line"
	tap_diag "${line#*] }"
	rmmod gpreempt
else
	tap_not_ok "layout: amdgpu without BTF accepted by its build id # $(dmesg | tail -n 1)"
fi
rmmod amdgpu && modprobe -d "$GP_KROOT" amdgpu
tap_check "layout: the real amdgpu.ko loads again" test -e /sys/kernel/btf/amdgpu
tap_dmesg_clean "layout: dmesg clean"
tap_done
