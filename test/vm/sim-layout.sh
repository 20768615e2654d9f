#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Review finding C2: gpreempt refuses to load next to a KFD whose layout is
# not the one it was built for (module/kfd/layout_check.c).  kfdsim stands in for
# amdgpu: the plain build has the layout (accepted), build/kfdsim-skew has
# queue_properties.priority 8 bytes later (refused, with one line naming the
# field), and kfdsim without its .BTF section must be the very binary the
# layout was made from (it is not: refused, naming both build ids).
. test/lib/tap.sh
tap_plan 9
OBJ=${GP_OBJ:-.}
KO=$OBJ/module/gpreempt.ko
SIM=$OBJ/test/kfdsim/kfdsim.ko
SKEW=$OBJ/build/kfdsim-skew/kfdsim.ko
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dmesg_line() { dmesg | grep -m1 -- "$1"; }
loaded() { grep -q "^$1 " /proc/modules; }
dmesg -C

# Accepted: the plain kfdsim has the layout gpreempt was built with.
insmod "$SIM"
if insmod "$KO"; then
	line=$(dmesg_line "kfdsim has the layout gpreempt was built for")
	tap_check "layout: plain kfdsim accepted, checked against its BTF" test -n "$line"
	tap_diag "${line#*] }"
	rmmod gpreempt
else
	tap_not_ok "layout: plain kfdsim accepted # $(dmesg | tail -n 1)"
fi
rmmod kfdsim

# Refused: a kfdsim whose queue_properties.priority moved.
if [ ! -f "$SKEW" ]; then
	tap_not_ok "layout: skewed kfdsim built (make builds build/kfdsim-skew)"
	tap_not_run 3 "no skewed kfdsim"
else
	dmesg -C
	insmod "$SKEW"
	if insmod "$KO" 2>"$tmp/err"; then
		tap_not_ok "layout: kfdsim with priority moved 8 bytes refused # insmod succeeded"
		tap_not_run 3 "the skewed kfdsim was accepted"
		rmmod gpreempt
	else
		line=$(dmesg_line "does not have the layout")
		tap_check "layout: kfdsim with priority moved 8 bytes refused (insmod: $(sed 's/.*: //' "$tmp/err"))" \
			test -n "$line"
		tap_check "layout: the line names the field and both offsets" \
			grep -q "queue_properties.priority: offset 40 size 4, built for offset 32 size 4" <<<"$line"
		tap_check "layout: the line names the binary gpreempt was built for" \
			grep -q "built for (from .*amdgpu.ko)" <<<"$line"
		tap_diag "${line#*] }"
		tap_check "layout: refused insmod left nothing (no gpreempt, kfdsim unreferenced)" \
			bash -c "! grep -q '^gpreempt ' /proc/modules && [ \"\$(cat /sys/module/kfdsim/refcnt)\" = 0 ]"
	fi
	rmmod kfdsim
fi

# No BTF: only the binary the layout was made from (amdgpu's build id) passes.
objcopy --remove-section=.BTF "$SIM" "$tmp/kfdsim.ko"
insmod "$tmp/kfdsim.ko"
tap_check "layout: kfdsim without .BTF has no /sys/kernel/btf/kfdsim" test ! -e /sys/kernel/btf/kfdsim
dmesg -C
if insmod "$KO"; then
	tap_not_ok "layout: kfdsim without BTF, another build id, refused # insmod succeeded"
	rmmod gpreempt
else
	line=$(dmesg_line "is not the binary gpreempt was built for")
	id=$(readelf -n "$SIM" | awk '/Build ID:/ { print $3; exit }')
	tap_check "layout: kfdsim without BTF, another build id, refused naming both ids" \
		grep -q "no BTF, build id $id; built for .*amdgpu.ko, build id [0-9a-f]\{40\}" <<<"$line"
	tap_diag "${line#*] }"
fi
rmmod kfdsim
tap_check "layout: kfdsim unloads" eval '! loaded kfdsim'
tap_dmesg_clean "layout: dmesg clean"
tap_done
