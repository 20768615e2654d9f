#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The insmod layout check (review finding C2, module/kfd/layout_check.c) run in
# user space on real BTF: module/kfd/btf_walk.c, built with ASan/UBSan against
# each built kernel's generated gp_layout.h, must accept the amdgpu.ko and
# kfdsim.ko of that kernel and refuse the other kernels' amdgpu.ko and the
# skewed kfdsim (build/kfdsim-skew).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC_USER:-gcc}
default_kver=$(. .cache/kernel.env 2>/dev/null; echo "${GP_KVER:-}")

section() { objcopy --dump-section .BTF="$2" "$1" /dev/null 2>/dev/null; }

# Raw BTF of every cached kernel's vmlinux and amdgpu.ko.
kvers=() unreadable=()
for envf in .cache/kernels/*.env; do
	[ -f "$envf" ] || continue
	k=$(basename "$envf" .env)
	(. "$envf"; section "$GP_VMLINUX" "$tmp/$k.vmlinux" && section "$GP_AMDGPU_KO" "$tmp/$k.amdgpu") ||
		{ unreadable+=("$k"); continue; }
	kvers+=("$k")
done
# A kernel: the clone check, test_layout_check's 6 checks and one for kfdsim
# and for each other kernel; the default kernel's skewed kfdsim one more.
nk=${#kvers[@]}
per=$((7 + nk))
skewed=0
[[ " ${kvers[*]} " == *" $default_kver "* ]] && [ -s build/gp_layout.h ] && skewed=1
tap_plan $((${#unreadable[@]} + nk * per + skewed + 1))
for k in "${unreadable[@]}"; do
	tap_not_ok "layout check: BTF of $k readable"
done

ran=0
for k in "${kvers[@]}"; do
	if [ "$k" = "$default_kver" ] && [ -s build/gp_layout.h ]; then
		inc=build sim=test/kfdsim/kfdsim.ko skew=build/kfdsim-skew/kfdsim.ko
	elif [ -s "build/$k/build/gp_layout.h" ]; then
		inc=build/$k/build sim=build/$k/test/kfdsim/kfdsim.ko skew=
	else
		tap_skip_n $per "layout check $k: the BTF walk against kfdsim and amdgpu" "not built (make KVER=$k)"
		continue
	fi
	if ! $CC -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -I module -I "$inc" \
		-o "$tmp/check-$k" test/unit/test_layout_check.c module/kfd/btf_walk.c 2>"$tmp/cc.log"; then
		tap_not_ok "layout check $k: builds"
		sed 's/^/# /' "$tmp/cc.log" | head -20
		tap_not_run $((per - 1 + (${#skew} > 0))) "layout check $k: not built"
		continue
	fi
	args=("$tmp/$k.vmlinux" "$tmp/$k.amdgpu")
	# An out-of-tree module's BTF may be split on a distilled base (.BTF.base,
	# 6.16+), which the kernel relocates onto vmlinux at load.
	simbase=$tmp/$k.vmlinux
	rm -f "$tmp/sim.base"
	objcopy --dump-section .BTF.base="$tmp/sim.base" "$sim" /dev/null 2>/dev/null
	[ -s "$tmp/sim.base" ] && simbase=$tmp/sim.base
	if section "$sim" "$tmp/sim.btf"; then
		args+=("kfdsim $k" "$simbase" "$tmp/sim.btf" same)
	else
		tap_not_ok "layout check $k: kfdsim's BTF readable ($sim)"
	fi
	if [ -n "$skew" ]; then
		if [ -f "$skew" ] && section "$skew" "$tmp/skew.btf"; then
			args+=("kfdsim $k with priority moved 8 bytes" "$simbase" "$tmp/skew.btf" differs)
		else
			tap_skip "layout check $k: a skewed kfdsim is refused" "$skew is not built (make)"
		fi
	fi
	for o in "${kvers[@]}"; do
		[ "$o" = "$k" ] || args+=("amdgpu $o" "$tmp/$o.vmlinux" "$tmp/$o.amdgpu" differs)
	done
	# Every function gpreempt probes or calls is kfdsim's real entry, not a
	# GCC clone its callers would use instead (kfd_dbg_trap_enable.constprop.0
	# hid the debugger attach from gpreempt's probe).
	fns=$(awk '$1 == "hook" || $1 == "call" { sub(/^\?/, "", $2); print $2 }' scripts/layout.spec | paste -sd'|')
	clones=$(nm "$sim" 2>/dev/null | awk '{ print $NF }' | grep -E "^($fns)\.(constprop|isra|part)\." | paste -sd' ')
	if [ -z "$clones" ]; then
		tap_ok "layout check $k: kfdsim's probed and called functions are not cloned by the compiler"
	else
		tap_not_ok "layout check $k: kfdsim's probed and called functions are not cloned by the compiler # $clones"
	fi
	"$tmp/check-$k" "${args[@]}" | tee "$tmp/check.out" | sed -e '/^TAP version/d' -e '/^1\.\.[0-9]*$/d' \
		-e "s/^\(not ok\|ok\) [0-9][0-9]* - /\1 - layout check $k: /" \
		-e "s/^\(not ok\|ok\) - \(layout check $k: \)[^ ]*amdgpu\.ko: /\1 - \2amdgpu.ko: /"
	[ "${PIPESTATUS[0]}" -eq 0 ] || TAP_FAILED=$((TAP_FAILED + 1))
	TAP_COUNT=$((TAP_COUNT + $(grep -cE '^(not ok|ok) ' "$tmp/check.out")))
	ran=$((ran + 1))
done
tap_check "layout check: at least one kernel built" test $ran -gt 0
exit $((TAP_FAILED > 0))
