#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Issue 21: the live layout check (module/kfd/layout_live.c).  Without BTF,
# insmod used to trust the build id alone; a layout generated from a ROCm
# DKMS tree without its config.h has struct kfd_process's pdds, n_pdds and
# pqm 16 bytes too far, and the build id of the amdgpu.ko built from that
# tree still matches.  kfdsim stands in, with its .BTF removed:
#   build/live-ok    gpreempt with the right layout and kfdsim's build id;
#   build/live-skew  the same with pdds, n_pdds, pqm and debug_trap_enabled
#                    16 bytes later (test/layout/layout-variant).
# Both pass the build-id check.  The live check refuses live-skew at insmod
# when a KFD process exists, and disarms it at the first queue when none
# does; live-ok passes both.  Also measures the check's cost with 100
# processes.  Runs inside the test guest.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 18
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
OK=$OBJ/build/live-ok/module/gpreempt.ko
SKEW=$OBJ/build/live-skew/module/gpreempt.ko
tmp=$(mktemp -d)
pids=()
cleanup() {
	[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
for ko in "$OK" "$SKEW"; do
	[ -f "$ko" ] || { tap_not_ok "live: $ko built (make builds build/live-*)"; tap_bail; }
done
nqueues() { bpftool -j map dump name gp_queues 2>/dev/null | jq length; }
ks_queues_ge() { [ "$(kstat queues)" -ge "$1" ] 2>/dev/null; }
refcnt() { cat /sys/module/kfdsim/refcnt; }
gone() { ! grep -q '^gpreempt ' /proc/modules && [ "$(refcnt)" = "$1" ]; }
build_id_ok() { dmesg | grep -q "kfdsim is the binary the layout was made from (no BTF"; }
stop_all() {
	[ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	pids=()
	wait_for 60 ks_idle
}

objcopy --remove-section=.BTF "$OBJ/test/kfdsim/kfdsim.ko" "$tmp/kfdsim.ko"
insmod "$tmp/kfdsim.ko" || { tap_not_ok "live: kfdsim without .BTF loads"; tap_bail; }
tap_check "live: kfdsim without .BTF has no /sys/kernel/btf/kfdsim" test ! -e /sys/kernel/btf/kfdsim

# 1. A process with two queues exists: live-skew is refused at insmod.
$GPLOAD idle --queues 2 --duration 600 --quiet &
pids+=($!)
tap_check "live: a process with 2 queues runs" wait_for 20 ks_queues_ge 2
dmesg -C
ref=$(refcnt)
if insmod "$SKEW" 2>"$tmp/err"; then
	tap_not_ok "live: skewed layout with kfdsim's build id refused at insmod # insmod succeeded"
	tap_not_run 3 "the skewed layout loaded"
	rmmod gpreempt
else
	line=$(dmesg | grep -m1 "live KFD objects do not match")
	tap_check "live: skewed layout passed the build-id check" build_id_ok
	tap_check "live: skewed layout with kfdsim's build id refused at insmod ($(sed 's/.*: //' "$tmp/err"))" \
		test -n "$line"
	tap_check "live: the line names the field" \
		grep -q "kfd_process.pqm.process is not the process" <<<"$line"
	tap_diag "${line#*] }"
	tap_check "live: refused insmod left nothing (no gpreempt, kfdsim's refcount back to $ref)" gone "$ref"
fi

# 2. The same process: live-ok passes, and manages both queues.
dmesg -C
if insmod "$OK"; then
	line=$(dmesg | grep -m1 "live layout check:")
	tap_check "live: right layout passes the live check with 1 process, 2 queues" \
		grep -q "1 KFD process(es), 2 queue(s) match the layout" <<<"$line"
	tap_diag "${line#*] }"
	tap_check "live: both queues managed" test "$(nqueues)" = 2
	rmmod gpreempt
else
	tap_not_ok "live: right layout passes the live check # $(dmesg | tail -n 1)"
	tap_not_run 1 "not loaded"
fi
stop_all

# 3. No process at insmod: live-skew loads, and the first queue disarms it.
dmesg -C
if insmod "$SKEW"; then
	tap_check "live: skewed layout, no KFD process: loads, first queue checked later" \
		bash -c 'dmesg | grep -q "no KFD process yet"'
	$GPLOAD be --prio 3 --wg 4 --wg-us 2000 --inflight 4 --duration 4 --quiet &
	be=$!
	$GPLOAD lc --prio 12 --wg 4 --wg-us 500 --period-us 3000 --duration 4 --quiet &
	lc=$!
	wait $be; brc=$?
	wait $lc; lrc=$?
	line=$(dmesg | grep -m1 "live KFD objects do not match")
	tap_check "live: the first queue disarmed it, naming the field" \
		grep -q "kfd_process.pqm.process is not the process (.*(first queue); gpreempt is disarmed" <<<"$line"
	tap_diag "${line#*] }"
	tap_check "live: disarmed: no queue managed, none parked" \
		test "$(nqueues)" = 0 -a "$(gstat preempts)" = 0
	tap_check "live: disarmed: both queues counted untracked ($(gstat queues_untracked))" \
		test "$(gstat queues_untracked)" -ge 2
	tap_check "live: disarmed: LC and BE ran every packet exactly once" test $lrc = 0 -a $brc = 0
	tap_check "live: disarmed gpreempt unloads" rmmod gpreempt
else
	tap_not_ok "live: skewed layout, no KFD process: loads # $(dmesg | tail -n 1)"
	tap_not_run 5 "not loaded"
fi
wait_for 60 ks_idle

# 4. No process at insmod: live-ok passes at the first queue and manages it.
dmesg -C
if insmod "$OK"; then
	$GPLOAD idle --queues 1 --duration 600 --quiet &
	pids+=($!)
	wait_for 20 ks_queues_ge 1
	tap_check "live: right layout, the first queue passes the check" \
		wait_for 10 bash -c 'dmesg | grep -q "the first queue and its process match the layout"'
	tap_check "live: and is managed" wait_for 10 eval '[ "$(nqueues)" = 1 ]'
	rmmod gpreempt
else
	tap_not_ok "live: right layout, no process: loads # $(dmesg | tail -n 1)"
	tap_not_run 1 "not loaded"
fi
stop_all

# 5. Cost: the check at insmod with 100 KFD processes of one queue each.
for i in $(seq 100); do
	$GPLOAD idle --queues 1 --duration 600 --quiet &
	pids+=($!)
done
if wait_for 120 ks_queues_ge 100; then
	dmesg -C
	if insmod "$OK"; then
		line=$(dmesg | grep -m1 "live layout check:")
		tap_check "live: 100 processes, 100 queues pass" \
			grep -q "100 KFD process(es), 100 queue(s) match" <<<"$line"
		tap_diag "live check cost (simulation, TCG guest): ${line#*] }"
		rmmod gpreempt
	else
		tap_not_ok "live: 100 processes pass # $(dmesg | tail -n 1)"
	fi
else
	tap_not_ok "live: 100 processes with a queue each # kfdsim queues $(kstat queues)"
fi
stop_all
rmmod kfdsim
tap_dmesg_clean "live: kernel log clean"
tap_done
