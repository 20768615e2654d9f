#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreempt against the real Debian amdgpu.ko of the booted kernel (6.1,
# 6.12 or 7.x; no device): it builds against the real layouts, attaches to
# the real symbols, exposes its maps and reverts on rmmod.  What the kernel
# lacks is read from the generated layout (GP_HAVE_*), not from its version.
# Runs inside the test guest (test/run-vm amdgpu, or matrix).
. test/lib/tap.sh
. test/lib/modcheck.sh
bads="tick_us=1 tick_us=abc backend=foo max_actions=0 max_actions=65 hysteresis_us=-1 enable=maybe"
tap_plan $((27 + $(wc -w <<<"$bads")))	# a line for each bad parameter
OBJ=${GP_OBJ:-.}
KO=$OBJ/module/gpreempt.ko
LAYOUT=$OBJ/build/gp_layout.h
have() { grep -q "^#define GP_HAVE_$1 1\$" "$LAYOUT"; }
PROBES="kfd_procfs_add_queue pqm_update_queue_properties pqm_destroy_queue kfd_process_notifier_release pqm_uninit"
have kfd_dbg_trap_enable && PROBES="$PROBES kfd_dbg_trap_enable"
have kfd_dbg_trap_disable && PROBES="$PROBES kfd_dbg_trap_disable"
have suspend_queues && PROBES="$PROBES suspend_queues"
tap_diag "kernel $(uname -r): probes: $PROBES; queue suspend: $(have queue_properties__is_suspended && echo yes || echo no)"

dmesg_has() { dmesg | grep -q -- "$1"; }
dmesg -C

# Before amdgpu is loaded: insmod must refuse with one clear line.
if insmod $KO 2>/dev/null; then
	tap_not_ok "insmod without amdgpu refused"
	rmmod gpreempt
else
	if dmesg_has "is amdgpu (with KFD) loaded"; then
		tap_ok "insmod without amdgpu refused"
	else
		tap_not_ok "insmod without amdgpu refused # no message"
	fi
fi

t0=$(cut -d' ' -f1 /proc/uptime)
tap_check "modprobe amdgpu" modprobe -d "$GP_KROOT" amdgpu
t1=$(cut -d' ' -f1 /proc/uptime)
tap_diag "modprobe amdgpu took $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s (kernel $(uname -r))"
tap_check "/dev/kfd and amdgpu BTF present" test -c /dev/kfd -a -r /sys/kernel/btf/amdgpu

# The layout built from amdgpu.ko's BTF equals the one from the live kernel,
# and the live amdgpu's build id is the one make recorded from amdgpu.ko
# (only GP_LAYOUT_FROM, the path, differs).
live_id=$(od -An -v -tx1 -j16 /sys/module/amdgpu/notes/.note.gnu.build-id | tr -d ' \n')
if $OBJ/build/btf-layout --build-id "$live_id" /sys/kernel/btf/vmlinux /sys/kernel/btf/amdgpu \
	scripts/layout.spec >/tmp/live.h 2>/tmp/live.err &&
	diff <(grep -v -e '^/\*' -e '^#define GP_LAYOUT_FROM ' /tmp/live.h) \
	     <(grep -v -e '^/\*' -e '^#define GP_LAYOUT_FROM ' "$LAYOUT") >/tmp/layout.diff; then
	tap_ok "layout from live /sys/kernel/btf/amdgpu matches the build's"
else
	tap_not_ok "layout from live /sys/kernel/btf/amdgpu matches the build's"
	sed 's/^/# /' /tmp/live.err /tmp/layout.diff | head -20
fi

# Bad parameters: refused, with the parameter named.
for bad in $bads; do
	dmesg -C
	if insmod $KO "$bad" 2>/dev/null; then
		tap_not_ok "insmod $bad refused"
		rmmod gpreempt
	elif dmesg | grep -q "${bad%%=*}"; then
		tap_ok "insmod $bad refused"
	else
		tap_not_ok "insmod $bad refused # dmesg does not name it"
	fi
done

# Without queue_properties.is_suspended (6.1) only evict can park.
if ! have queue_properties__is_suspended; then
	dmesg -C
	if insmod $KO backend=suspend 2>/dev/null; then
		tap_not_ok "insmod backend=suspend refused without is_suspended"
		rmmod gpreempt
	elif [ "$(dmesg | grep -c 'backend=suspend: .*is_suspended')" = 1 ]; then
		tap_ok "insmod backend=suspend refused without is_suspended (one line names why)"
	else
		tap_not_ok "insmod backend=suspend refused without is_suspended # $(dmesg | tail -n 2 | tr '\n' ' ')"
	fi
else
	tap_skip "insmod backend=suspend refused without is_suspended" "this KFD has is_suspended"
fi

# The module users get carries no test knob (review S3 F18): the race
# windows live in the GP_TESTING build (module/testing.c) alone.
knobs=$(modinfo -p $KO | grep -c '^test_')
tap_check "$KO has no test-only parameter ($knobs)" test "$knobs" = 0

# insmod from a mount namespace whose /sys is not the kernel's (a container,
# an initramfs): the layout is still checked against amdgpu's BTF, read from
# init's root, not insmod's (review S3 F18).
dmesg -C
if unshare -m --propagation private sh -c "mount -t tmpfs none /sys && insmod $KO" 2>/dev/null; then
	if dmesg_has "amdgpu has the layout gpreempt was built for: .* against its BTF"; then
		tap_ok "insmod with no /sys in its mount namespace checks the layout against BTF"
	else
		tap_not_ok "insmod with no /sys in its mount namespace checks the layout against BTF # $(dmesg | grep -m1 layout)"
	fi
	rmmod gpreempt
else
	tap_not_ok "insmod with no /sys in its mount namespace checks the layout against BTF # refused: $(dmesg | grep -m1 'gpreempt:')"
fi

dmesg -C
tap_check "insmod gpreempt.ko" insmod $KO tick_us=200
tap_clean_load "amdgpu $(uname -r)" $KO
missing=""
for p in $PROBES; do
	grep -q " $p+" /sys/kernel/debug/kprobes/list || missing="$missing $p"
done
if [ -z "$missing" ]; then tap_ok "all KFD probes attached"; else tap_not_ok "all KFD probes attached # missing:$missing"; fi
tap_check "monitor thread running" pgrep -x gpreempt

if bpftool -j map dump name gp_stats | jq -e '.[0].formatted.value | has("ticks") and has("preempts") and has("scan_ns_total") and (.detect_hist | length) == 20' >/dev/null; then
	tap_ok "bpftool dumps gp_stats with named fields"
else
	tap_not_ok "bpftool dumps gp_stats with named fields"
fi
tap_check "gp_queues is dumpable" bash -c 'bpftool -j map dump name gp_queues | jq -e "length == 0"'

# gp_prio: write this shell's tgid -> priority 11 and its start, read it back
# (a rule for a process that is gone would be deleted within a second).
le() { local i; for ((i = 0; i < $2; i++)); do printf '0x%02x ' $((($1 >> (8 * i)) & 255)); done; }
start=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
bpftool map update name gp_prio key $(le $$ 4) value $(le 11 4) $(le 0 4) $(le $start 8)
if bpftool -j map dump name gp_prio | jq -e --argjson p $$ --argjson s $start '.[].formatted | select(.key == $p) | .value.priority == 11 and .value.start == $s' >/dev/null; then
	tap_ok "gp_prio write is read back"
else
	tap_not_ok "gp_prio write is read back"
fi
bpftool map delete name gp_prio key $(le $$ 4)
# gp_config with an out-of-range tick is rejected and counted.
bpftool map update name gp_config key 0 0 0 0 value 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
# gp_config is read in a tick, and with no queues the monitor sleeps up to
# idle_max_us between ticks: poll for the count rather than sleep.
bad_counted() { bpftool -j map dump name gp_stats | jq -e '.[0].formatted.value.bad_control >= 1' >/dev/null; }
end=$((SECONDS + 10))
until bad_counted || [ $SECONDS -ge $end ]; do sleep 0.05; done
if bad_counted; then
	tap_ok "bad gp_config value rejected and counted"
else
	tap_not_ok "bad gp_config value rejected and counted"
fi
tap_check_fails "runtime write tick_us=0 refused" sh -c 'echo 0 > /sys/module/gpreempt/parameters/tick_us'
tap_check "runtime write tick_us=500 accepted" sh -c 'echo 500 > /sys/module/gpreempt/parameters/tick_us && grep -qx 500 /sys/module/gpreempt/parameters/tick_us'
tap_check "tracepoints gpreempt:preempt/resume exist" test -d /sys/kernel/tracing/events/gpreempt/preempt -a -d /sys/kernel/tracing/events/gpreempt/resume
ticks=$(bpftool -j map dump name gp_stats | jq '.[0].formatted.value.ticks')
tap_diag "idle monitor: $ticks ticks since load (idle period $(cat /sys/module/gpreempt/parameters/idle_us) us)"

tap_check "rmmod gpreempt" rmmod gpreempt
left=""
for p in $PROBES; do
	grep -q " $p+" /sys/kernel/debug/kprobes/list && left="$left $p"
done
if [ -z "$left" ]; then tap_ok "rmmod leaves no probe"; else tap_not_ok "rmmod leaves no probe # left:$left"; fi
if bpftool map show | grep -q ' name gp_'; then tap_not_ok "rmmod leaves no map"; else tap_ok "rmmod leaves no map"; fi
tap_check_fails "rmmod leaves no thread" pgrep -x gpreempt
tap_check "amdgpu still unloadable (no reference leaked)" bash -c '[ "$(cat /sys/module/amdgpu/refcnt)" = 0 ]'
tap_dmesg_clean "dmesg has no BUG/WARNING/Oops"
tap_done
