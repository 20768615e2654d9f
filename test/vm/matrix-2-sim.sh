#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Matrix suite, part 2: the core of the kfdsim behaviour suite, on kfdsim
# and gpreempt built for the booted kernel (make KVER=): for every backend
# this kernel supports (GP_HAVE_* of its layout, not its version) LC/BE park
# and unpark with every packet completed exactly once, kill -9 of a parked
# process, rmmod under load, and on kernels with KFD contexts (7.2+) the
# same with one process owning two contexts.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/modcheck.sh
. test/lib/drm.sh
OBJ=${GP_OBJ:-.}
LAYOUT=$OBJ/build/gp_layout.h
GPLOAD=build/gpload
LC_ARGS="--mode lc --prio 12 --wg 4 --wg-us 200"
BE_ARGS="--mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4"
have() { grep -q "^#define GP_HAVE_$1 1\$" "$LAYOUT"; }

qfield() {	# tgid field -> value from gp_queues (first queue of tgid)
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" "[.[].formatted.value | select(.tgid == \$t)][0].$2 // empty"
}
cfield() {	# tgid ctx(0: primary, 1: a secondary context) field -> value
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" --argjson s "$2" "[.[].formatted | select(.key.tgid == \$t and
			((.key.qid >= 65536) == (\$s == 1))) | .value][0].$3 // empty"
}
cstate_is() { [ "$(cfield "$1" "$2" state)" = "$3" ]; }
cparked_resumed() { [ "$(cfield "$1" "$2" preempts)" -gt 0 ] 2>/dev/null &&
		    [ "$(cfield "$1" "$2" resumes)" -gt 0 ] 2>/dev/null; }
nkeys() {	# tgid -> "entries distinct-keys distinct-pasids" in gp_queues
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" '[.[].formatted | select(.key.tgid == $t)] |
			"\(length) \(map(.key.qid) | unique | length) \(map(.value.pasid) | unique | length)"'
}
no_queue() { [ -z "$(qfield "$1" state)" ]; }
ks_idle() { grep -q '^queues 0' /sys/kernel/debug/kfdsim/stats && grep -q '^processes 0' /sys/kernel/debug/kfdsim/stats; }
load() {	# kfdsim args | gpreempt args; part 1's modprobe -r amdgpu took drm.ko
	ks_drm_load && insmod $OBJ/test/kfdsim/kfdsim.ko $1 && insmod $OBJ/module/gpreempt.ko user_max_priority=15 $2
}
unload() {
	rmmod gpreempt 2>/dev/null
	wait_for 30 ks_idle
	rmmod kfdsim
}

backends=evict
have queue_properties__is_suspended && backends="suspend evict"
tap_diag "kernel $(uname -r): backends $backends (simulated GPU)"
# Per backend: lc_be_round's 4 lines, 5 on device 1, and with KFD contexts
# 12 more; gpload test contexts prints 13 lines with contexts, 1 without.
nb=$(wc -w <<<"$backends")
ctx=1 ctx_each=0
have kfd_process__context_id && ctx=13 ctx_each=12
tap_plan $((7 + 4 * nb + 5 + ctx + ctx_each * nb + 5 * nb + 2))
dmesg -C

# 0. Issue 21: what the build left behind loads clean, whatever the order of
# make, make matrix and make check.
if load "" ""; then
	tap_clean_load "kernel $(uname -r)" $OBJ/test/kfdsim/kfdsim.ko
	tap_clean_load "kernel $(uname -r)" $OBJ/module/gpreempt.ko
else
	tap_not_ok "kernel $(uname -r): kfdsim and gpreempt load"
	tap_not_run 6 "not loaded"
fi
unload

# 1. LC + BE for each backend this kernel has (HWS scheduler model).
for backend in $backends; do
	if ! load "sched=hws" "backend=$backend"; then
		tap_not_ok "$backend: kfdsim and gpreempt load"
		tap_not_run 3 "$backend: not loaded"
		continue
	fi
	lc_be_round "$backend" 30
	unload
done

# 2. kill -9 of a parked BE: its queues leave, no eviction is held.
load "" ""
$GPLOAD $BE_ARGS --duration 120 --quiet &
be=$!
$GPLOAD $LC_ARGS --duration 120 --period-us 300 --quiet &
lc=$!
if wait_for 30 state_is $be 2; then
	tap_ok "BE parked under LC load"
else
	tap_not_ok "BE parked under LC load (state $(qfield $be state))"
fi
kill -9 $be
wait $be 2>/dev/null
tap_check "kill -9 of a parked BE: its queues leave gp_queues" wait_for 30 no_queue $be
tap_check "kill -9 of a parked BE: gpreempt holds no eviction" wait_for 30 stat_is evicts_outstanding 0

# 3. rmmod under load: a parked BE is resumed before rmmod returns.
$GPLOAD $BE_ARGS --duration 120 --quiet &
be=$!
wait_for 30 state_is $be 2
rmmod gpreempt
tap_check "rmmod under load: BE queue resumed" \
	bash -c "! grep ' prio=3 ' /sys/kernel/debug/kfdsim/queues | grep -q -e 'active=0' -e 'evicted=1' -e 'suspended=1'"
kill -TERM $lc $be
wait $lc
lc_rc=$?
wait $be
tap_check "after rmmod under load: BE and LC complete exactly once" test $? -eq 0 -a $lc_rc -eq 0
unload

# 4. 7.2+: one process owning two KFD contexts (AMDKFD_IOC_CREATE_PROCESS).
#    kfdsim alone first: the ioctl (-ENOTTY without contexts), ids, teardown.
if insmod $OBJ/test/kfdsim/kfdsim.ko; then
	out=$($GPLOAD test contexts 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(ok|not ok|#)'
	n=$(printf '%s\n' "$out" | grep -c '^not ok')
	TAP_FAILED=$((TAP_FAILED + n))
	[ $rc -ne 0 ] && [ "$n" -eq 0 ] && tap_not_ok "gpload test contexts # exit status $rc"
	wait_for 60 ks_idle
	rmmod kfdsim
else
	tap_not_ok "kfdsim loads (gpload test contexts)"
	tap_not_run $((ctx - 1)) "kfdsim not loaded"
fi
if have kfd_process__context_id; then
	for backend in $backends; do
		if ! load "sched=hws" "backend=$backend"; then
			tap_not_ok "$backend: two contexts: kfdsim and gpreempt load"
			tap_not_run 11 "$backend: not loaded"
			continue
		fi
		# a. LC in the primary and BE in a secondary context of one process.
		$GPLOAD $LC_ARGS --period-us 400000 --duration 120 --be-prio 3 --be-wg 8 \
			--be-wg-us 2000 --json /tmp/two.json --quiet &
		two=$!
		if wait_for 60 cparked_resumed $two 1; then
			tap_ok "$backend: BE in the secondary context parked and unparked by LC in the primary ($(cfield $two 1 preempts)/$(cfield $two 1 resumes))"
		else
			tap_not_ok "$backend: BE in the secondary context parked and unparked by LC in the primary ($(cfield $two 1 preempts)/$(cfield $two 1 resumes))"
		fi
		tap_check "$backend: LC in the primary context never parked" \
			test "$(cfield $two 0 preempts)" = 0
		keys=$(nkeys $two)
		tap_check "$backend: one process, two contexts: two gp_queues keys, two PASIDs ($keys)" \
			test "$keys" = "2 2 2"
		kill -TERM $two
		wait $two
		tap_check "$backend: two contexts: LC and BE packets completed exactly once" \
			test $? -eq 0 -a "$(jq .be_packets /tmp/two.json)" -gt 0
		tap_check "$backend: two contexts: the process's queues leave gp_queues" \
			wait_for 30 no_queue $two

		# b. Across processes: LC alone, BE in a secondary context of a
		#    process that owns two, which someone else keeps referenced
		#    (its pqm_uninit comes 45 s after its teardown).
		$GPLOAD $BE_ARGS --context secondary --hold-ms 45000 --duration 120 --quiet &
		be=$!
		$GPLOAD $LC_ARGS --duration 120 --period-us 300 --quiet &
		lc=$!
		if wait_for 30 cstate_is $be 1 2; then
			tap_ok "$backend: BE in a secondary context parked by LC of another process"
		else
			tap_not_ok "$backend: BE in a secondary context parked by LC of another process (state $(cfield $be 1 state))"
		fi
		tap_check "$backend: keys of the two processes distinct (LC qid $(cfield $lc 0 qid), BE pasid $(cfield $be 1 pasid) != LC pasid $(cfield $lc 0 pasid))" \
			test -n "$(cfield $lc 0 pasid)" -a "$(cfield $be 1 pasid)" != "$(cfield $lc 0 pasid)"
		kill -9 $be
		wait $be 2>/dev/null
		tap_check "$backend: kill -9 of a process with two contexts and a parked queue: it leaves gp_queues before its last reference" \
			wait_for 20 no_queue $be
		tap_check "$backend: ... and gpreempt holds no eviction" \
			wait_for 20 stat_is evicts_outstanding 0
		tap_check "$backend: ... and nothing of it stays on the device (kfdsim queues)" \
			wait_for 20 bash -c "[ \$(grep -c ' prio=3 ' /sys/kernel/debug/kfdsim/queues) = 0 ]"
		kill -TERM $lc
		wait $lc
		tap_check "$backend: LC beside it completed exactly once" test $? -eq 0
		rmmod gpreempt
		tap_check "$backend: rmmod gpreempt with a held secondary context" \
			bash -c '! grep -q "^gpreempt " /proc/modules'
		wait_for 90 ks_idle
		rmmod kfdsim
	done
else
	tap_diag "no KFD contexts in this layout (7.2+): two-context checks skipped"
fi
# 5. S3 F9: a process that uses only device 1 (ndev=2).  On 6.17+ layouts
#    PASIDs are per process device and kfdsim sets one at the device's first
#    use, so this process's pdds[0] has PASID 0: gpreempt must take device
#    1's, and park and unpark the queue.  Then an unpark whose PASID lookup
#    fails while the process lives (fault/lookup_fail_pasid) is retried, not
#    counted as done: the queue is never left parked behind gpreempt's back.
F=/sys/kernel/debug/kfdsim/fault
kq() { grep " prio=$1 " /sys/kernel/debug/kfdsim/queues | head -n 1; }
kq_running() { case "$(kq 3)" in *"active=1 evicted=0 suspended=0"*) return 0 ;; esac; return 1; }
for backend in $backends; do
	if ! load "ndev=2 sched=hws" "backend=$backend max_suspend_ms=60000"; then
		tap_not_ok "$backend: device 1 only: kfdsim ndev=2 and gpreempt load"
		tap_not_run 4 "$backend: not loaded"
		continue
	fi
	$GPLOAD $BE_ARGS --gpu 1 --duration 120 --quiet &
	be=$!
	wait_for 30 eval '[ -n "$(qfield $be state)" ]'
	pasid=$(qfield $be pasid)
	tap_check "$backend: device 1 only: BE's PASID in gp_queues is not 0 (${pasid:-none}; kfdsim: $(linefield "$(kq 3)" dev))" \
		test "${pasid:-0}" != 0
	$GPLOAD $LC_ARGS --gpu 1 --duration 120 --period-us 300 --quiet &
	lc=$!
	if wait_for 30 eval 'state_is $be 2 && ! kq_running'; then
		tap_ok "$backend: device 1 only: BE parked by LC there"
	else
		tap_not_ok "$backend: device 1 only: BE parked by LC there (state $(qfield $be state): $(kq 3))"
	fi
	echo "$pasid" >$F/lookup_fail_pasid
	kill -TERM $lc
	wait $lc
	lc_rc=$?
	n=0
	for i in $(seq 10); do
		# gpreempt says running while KFD still has it parked: stranded.
		[ "$(qfield $be state)" = 0 ] && ! kq_running && n=$((n + 1))
		sleep 0.2
	done
	tap_check "$backend: an unpark whose lookup fails is not done while the process lives ($n/10 samples stranded)" \
		test $n -eq 0
	echo 0 >$F/lookup_fail_pasid
	if wait_for 30 eval 'state_is $be 0 && kq_running'; then
		tap_ok "$backend: device 1 only: BE unparked once the lookup works"
	else
		tap_not_ok "$backend: device 1 only: BE unparked once the lookup works (state $(qfield $be state): $(kq 3))"
	fi
	kill -TERM $be
	wait $be
	tap_check "$backend: device 1 only: LC and BE completed exactly once" test $? -eq 0 -a $lc_rc -eq 0
	unload
done

tap_check "kfdsim unloads (no reference left)" bash -c '! grep -q "^kfdsim " /proc/modules'
tap_dmesg_clean "dmesg has no BUG/WARNING/Oops"
tap_done
