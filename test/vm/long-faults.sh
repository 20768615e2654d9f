#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreempt under injected KFD faults and races (kfdsim's fault/ knobs, the
# test_*_delay_us race windows of gpreempt): review findings C4, C5, C7,
# M4, and REVIEW-S3's F1/F2.
# Every wait polls for a state; no wall-clock time is asserted.  Runs inside
# the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
errs="ETIME EIO"
tap_plan $((41 + 4 * $(wc -w <<<"$errs")))	# 4 lines a failed destroy's errno
GPLOAD=build/gpload
F=/sys/kernel/debug/kfdsim/fault
LC_ARGS="--mode lc --prio 12 --wg 8 --wg-us 5000 --period-us 300"
BE_ARGS="--mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4"

qfield() {
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" "[.[].formatted.value | select(.tgid == \$t)][0].$2 // empty"
}
ksq() { grep " prio=$1 " /sys/kernel/debug/kfdsim/queues | head -n 1; }
state_is() { [ "$(qfield "$1" state)" = "$2" ]; }
gq_zero() { [ "$(gstat queues)" = 0 ]; }
ks_idle() { [ "$(kstat queues)" = 0 ] && [ "$(kstat processes)" = 0 ]; }
no_suspended() { ! grep -q 'suspended=1' /sys/kernel/debug/kfdsim/queues; }
be_running() { case "$(ksq 3)" in *"active=1 evicted=0 suspended=0"*) return 0 ;; esac; return 1; }
# The race windows (test_*_delay_us) exist only in the GP_TESTING build
# (module/testing.c); every other case loads the module users get.
TESTKO=build/testing/module/gpreempt.ko
load() { insmod test/kfdsim/kfdsim.ko $1 && insmod "${KO:-module/gpreempt.ko}" user_max_priority=15 $2; }
unload() {
	rmmod gpreempt 2>/dev/null
	wait_for 30 ks_idle
	rmmod kfdsim
}
dmesg -C

# 1. C5: a queue destroyed and recreated (same qid, same memory) while a
# park of it is pending is never parked by the old decision, and nothing is
# left suspended after rmmod.
fails=0 aba=0
for round in 1 2 3; do
	KO=$TESTKO load "fault_reuse_queue_mem=1" "backend=suspend test_action_delay_us=200000"
	$GPLOAD $LC_ARGS --duration 60 --quiet &
	lc=$!
	$GPLOAD --mode churn --prio 3 --wg 2 --wg-us 200 --duration 60 --quiet &
	churn=$!
	wait_for 30 fc_ge queue_reuses 3
	sleep 0.$((RANDOM % 10))
	rmmod gpreempt
	aba=$((aba + $(fcount queue_reuses)))
	if ! wait_for 20 no_suspended; then
		fails=$((fails + 1))
		tap_diag "round $round: $(grep suspended=1 /sys/kernel/debug/kfdsim/queues)"
	fi
	kill -TERM $lc $churn
	wait $lc
	wait $churn || fails=$((fails + 1))
	wait_for 30 ks_idle
	rmmod kfdsim
done
tap_check "C5: the race happened: queues were recreated over parked ones' memory ($aba reuses in 3 rounds)" test "$aba" -gt 0
tap_check "C5: recreated queue never parked by the old decision, none left suspended ($aba reuses)" test $fails -eq 0

# 2. C7b: a failed park leaves the queue running and counted.
load "" "backend=suspend"
echo "EBUSY 0 1" >$F/update_queue
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD $LC_ARGS --duration 60 --quiet &
lc=$!
wait_for 20 fc_ge update_queue 1
inj=$(fcount update_queue)
err=$(gstat errors)
tap_check "C7b: injected park failure counted by gpreempt (injected $inj, errors $err)" test "$inj" = 1 -a "${err:-0}" -ge 1
tap_check "C7b: after the failed park, BE is parked by a later attempt" wait_for 20 state_is $be 2
# 3. C7b: a failed unpark is retried and never lost.  Armed while BE is
# parked, so the next update_queue call is an unpark (LC's gaps or its kill).
wait_for 20 state_is $be 2
echo "EBUSY 0 1" >$F/update_queue
kill -TERM $lc
wait $lc
tap_check "C7b: failed unpark retried: BE running again" wait_for 20 be_running
tap_check "C7b: the unpark failure was injected ($(fcount update_queue) injected)" wait_for 10 fc_ge update_queue 2
kill -TERM $be
wait $be
tap_check "C7b: BE packets exactly once" test $? -eq 0
unload

# 4. C7a: a hung HWS fences the device with one line; unparks go on; it recovers.
dmesg -C
load "" "backend=suspend"
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD $LC_ARGS --duration 60 --quiet &
lc=$!
wait_for 20 state_is $be 2
echo 1 >$F/hws_hang
fence_logged() { dmesg | grep -q 'preemption failed on a device'; }
wait_for 30 fence_logged
sleep 2
fenced=$(dmesg | grep -c 'preemption failed on a device')
tap_check "C7a: hung device fenced with one line in dmesg ($fenced)" test "$fenced" = 1
kill -TERM $lc
wait $lc
echo 0 >$F/hws_hang
tap_check "C7a: after the hang clears, the unpark is retried: BE running" wait_for 30 be_running
p0=$(gstat preempts)
$GPLOAD $LC_ARGS --duration 60 --quiet &
lc=$!
tap_check "C7a: device recovered: parks resume" wait_for 60 stat_ge preempts $((p0 + 1))
tap_check "C7a: 'device recovered' logged" grep -q 'device recovered' <(dmesg)
kill -TERM $lc $be
wait $lc
wait $be
tap_check "C7a: BE packets exactly once" test $? -eq 0
unload

# 5. C7c: evict fails with -EIO while parked; at rmmod every eviction is
# restored (kfdsim's qpd->evicted sum is 0) and BE runs.
load "" "backend=evict"
echo "EIO 0 1" >$F/evict_process_queues
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD $LC_ARGS --duration 60 --quiet &
lc=$!
wait_for 20 fc_ge evict_process_queues 1
wait_for 20 state_is $be 2
rmmod gpreempt
refs=$(kstat evicted_refs)
tap_check "C7c: rmmod after a failed evict: evictions balanced (evicted_refs $refs)" test "$refs" = 0
tap_check "C7c: rmmod after a failed evict: BE running" be_running
kill -TERM $lc $be
wait $lc
wait $be
tap_check "C7c: BE packets exactly once" test $? -eq 0
wait_for 30 ks_idle
rmmod kfdsim

# 6. C4: processes with several queues exit while the reap is between its
# phases; no use-after-free (the memory-debug guest reports it as KFENCE or
# poison; either way dmesg must stay clean).
KO=$TESTKO load "" "test_reap_delay_us=100000"
pids=""
for i in $(seq 12); do
	$GPLOAD --mode be --prio $((1 + i % 6)) --queues 3 --wg 2 --wg-us 500 --inflight 2 \
		--duration "$((1 + i % 3)).$((i * 37 % 10))" --quiet &
	pids="$pids $!"
	sleep 0.$((RANDOM % 3))
done
$GPLOAD $LC_ARGS --duration 3 --quiet
rc=0
for p in $pids; do wait $p || rc=1; done
tap_check "C4: multi-queue processes exiting during reap: exactly once" test $rc -eq 0
tap_check "C4: every queue and process reaped" wait_for 20 gq_zero
unload

# 7. C3: NO_HWS (sched_policy=2).  update_queue() may load an MQD only in
# the owner's mm, so gpreempt parks with evict/restore there: BE is parked
# and resumed, and kfdsim never refuses a load (its WARN).
load "sched=nohws" ""
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 200 --duration 3 --period-us 3000 --quiet
lc_rc=$?
tap_check "C3: NO_HWS: BE running again after LC" wait_for 30 be_running
pre=$(qfield $be preempts) res=$(qfield $be resumes) bk=$(qfield $be backend)
tap_check "C3: NO_HWS: BE parked and resumed with evict ($pre/$res, backend $bk)" \
	test "${pre:-0}" -gt 0 -a "${res:-0}" -gt 0 -a "$bk" = 1
tap_check "C3: NO_HWS: no load refused from the kthread (nohws_refused $(kstat nohws_refused))" \
	test "$(kstat nohws_refused)" = 0
tap_check "C3: NO_HWS: no 'should only run in user thread' WARN" \
	test "$(dmesg | grep -c 'should only run in user thread')" = 0
kill -TERM $be
wait $be
tap_check "C3: NO_HWS: LC and BE packets exactly once" test $? -eq 0 -a $lc_rc -eq 0
unload

# 8. C6: CWSR off: an unmap would drain waves (and a long one resets the
# GPU).  gpreempt leaves the device alone and says so once.
dmesg -C
load "cwsr=0" ""
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 200 --duration 3 --period-us 3000 --quiet
lc_rc=$?
tap_check "C6: CWSR off: BE never parked (preempts $(gstat preempts), drain unmaps $(kstat drain_unmaps))" \
	test "$(gstat preempts)" = 0 -a "$(kstat drain_unmaps)" = 0
tap_check "C6: CWSR off: said once in dmesg" test "$(dmesg | grep -c 'CWSR disabled')" = 1
kill -TERM $be
wait $be
tap_check "C6: CWSR off: LC and BE packets exactly once" test $? -eq 0 -a $lc_rc -eq 0
unload

# 9. M4: a destroy that KFD fails keeps the queue managed.
# gpload's churn retries a failed destroy (as ROCr would): every destroy
# fails until the fault is switched off, so the queue stays in KFD meanwhile.
load "" ""
$GPLOAD --mode churn --prio 3 --wg 1 --wg-us 300000 --duration 60 --quiet &
churn=$!
echo "EBUSY 1000 0" >$F/destroy_queue
both_one() { [ "$(kstat queues)" = 1 ] && [ "$(gstat queues)" = 1 ]; }
wait_for 30 fc_ge destroy_queue 3
tap_check "M4: failed destroys ($(fcount destroy_queue)): the kept queue is still managed (kfdsim and gpreempt both see 1)" \
	wait_for 20 both_one
echo "EBUSY 0 0" >$F/destroy_queue
kill -TERM $churn
wait $churn
tap_check "M4: gpreempt manages no queue once the process exited" wait_for 20 gq_zero
unload

# 10. F1/F2 (REVIEW-S3): a destroy that fails with ETIME (hung HWS) or EIO
# (GPU reset) still frees the queue, as 6.12.117's pqm_destroy_queue does:
# gpreempt must drop it, and the queue the process creates next, with the
# same qid and (reuse_queue_mem) the same memory, is a new queue with fresh
# state, never the dead one's PARKED entry.  A busy priority-12 stream keeps
# the churn queue parked (no starvation slice, no unpark in its gaps), so it
# is parked when destroyed: its drain times out after --drain-ms and its
# packet (120 s, so that a queue left running by a stale entry cannot finish
# and be destroyed early either) is dropped with it; churn's exit status is
# not checked.  --gap-ms leaves the process without a queue for a while after
# each destroy.  Polls are slow in the memory-debugging guest (a bpftool dump
# takes seconds): one dump each, every window is many polls long, and a
# check names what its last poll saw.
load "fault_reuse_queue_mem=1" "backend=suspend max_suspend_ms=600000 hysteresis_us=5000000"
$GPLOAD --mode be --prio 12 --wg 8 --wg-us 2000 --inflight 4 --duration 300 --quiet &
hi=$!
$GPLOAD --mode churn --prio 3 --wg 1 --wg-us 120000000 --drain-ms 30000 --gap-ms 15000 --duration 300 \
	--json /tmp/churn-f1.json --quiet 2>/dev/null &
churn=$!
# One dump of gp_queues: "ENTRIES CHURN_ENTRIES CHURN_STATE".
gq_churn() {
	bpftool -j map dump name gp_queues 2>/dev/null | jq -r --argjson t $churn \
		'[.[].formatted.value] | [length, ([.[] | select(.tgid == $t)] | length),
		 ([.[] | select(.tgid == $t)][0].state // "-")] | map(tostring) | join(" ")'
}
# Parked for real: gpreempt's only entry for it says 2 and kfdsim suspended=1.
churn_parked() {
	local k g
	k=$(ksq 3 | grep -o 'qid=[0-9]*\|suspended=[01]' | tr '\n' ' ') g=$(gq_churn)
	saw="gp_queues: $g; kfdsim: ${k:-none}"
	case "$k" in *suspended=1*) [ "${g#* }" = "1 2" ] ;; *) false ;; esac
}
# Gone: no kfdsim queue, no gp_queues entry, as many entries as kfdsim queues.
churn_gone() {
	local k g n
	k=$(ksq 3) g=$(gq_churn) n=$(kstat queues)
	saw="gp_queues: $g; kfdsim queues $n"
	[ -z "$k" ] && [ "$g" = "$n 0 -" ]
}
churn_back() { [ -n "$(ksq 3)" ]; }
tap_check "F1: the churn queue is parked" wait_for 60 churn_parked
for err in $errs; do
	n=$(fcount destroy_queue) r=$(fcount queue_reuses)
	echo "$err 0 1" >$F/destroy_queue
	# The parked queue's drain times out, then its destroy fails.
	wait_for 90 fc_ge destroy_queue $((n + 1))
	seen=$(gstat queues_seen)
	wait_for 10 churn_gone
	gone=$?
	tap_check "F1: a destroy failed with $err freed the queue, gpreempt dropped it too (entries, the churn's, its state: $saw)" \
		test $gone -eq 0
	wait_for 30 churn_back
	tap_check "F2: recreated after $err with the same qid and memory (reuses $r -> $(fcount queue_reuses), $(ksq 3 | grep -o 'qid=[0-9]*'))" \
		test "$(fcount queue_reuses)" -gt "$r"
	wait_for 10 stat_ge queues_seen $((seen + 1))
	tap_check "F2: the recreated queue is registered as a new queue (queues_seen $seen -> $(gstat queues_seen))" \
		test "$(gstat queues_seen)" = $((seen + 1))
	wait_for 20 churn_parked
	parked=$?
	tap_check "F2: the recreated queue is parked: gpreempt's one entry and kfdsim agree ($saw)" \
		test $parked -eq 0
done
kill -TERM $hi
wait $hi
hi_rc=$?
kill -TERM $churn
wait $churn
freed=$(jq -r .destroy_freed /tmp/churn-f1.json) retried=$(jq -r .destroy_retries /tmp/churn-f1.json)
tap_check "F1: churn: the ETIME and EIO destroys count as done, never retried (freed $freed, retried $retried)" \
	test "$freed" = 2 -a "$retried" = 0
tap_check "F1: priority-12 packets exactly once" test $hi_rc -eq 0
echo off >$F/destroy_queue
tap_check "F1: gpreempt manages no queue once the processes exited" wait_for 30 gq_zero
unload

# 11. F14 (REVIEW-S3): a park whose update_queue fails after update_mqd()
# (a failed map_queues_cpsch()): the queue is off the runlist when KFD
# returns the error.  The flag stays with it, gpreempt counts it parked and
# unparks it once LC is gone.  The old code put the flag back: the queue was
# left off the runlist (active=0 suspended=0) while gpreempt showed it
# running, and nothing moved it again once LC stopped (the ETIME fences
# parks for 500 ms, so no later park came to repair it).
load "" "backend=suspend"
echo "ETIME 0 1" >$F/update_queue_map
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD $LC_ARGS --duration 60 --quiet &
lc=$!
wait_for 20 fc_ge update_queue_map 1
kill -TERM $lc
wait $lc
tap_check "F14: the park failed after update_mqd (injected $(fcount update_queue_map))" \
	test "$(fcount update_queue_map)" = 1
tap_check "F14: LC gone, BE runs again" wait_for 30 be_running
tap_diag "F14: kfdsim: $(ksq 3 | grep -o 'active=.*')"
tap_check "F14: gpreempt shows BE running" wait_for 10 state_is $be 0
kill -TERM $be
wait $be
tap_check "F14: BE packets exactly once" test $? -eq 0
unload
# 12. F20 (REVIEW-S3): an evict that fails after KFD evicted and counted
# (kfdsim's evict_process_queues fault) leaves the eviction held.  It is
# committed as parked, and restored once LC is done, with gpreempt still
# loaded.  LC is one request: it is done well inside the 500 ms in which
# the EIO fences parks, so no later park comes.  The old code committed the
# queue as running, nothing restored the eviction, and BE stayed evicted
# while gp_queues showed it running.
load "" "backend=evict"
echo "EIO 0 1" >$F/evict_process_queues
$GPLOAD $BE_ARGS --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD --mode lc --prio 12 --wg 8 --wg-us 5000 --period-us 30000000 --duration 1 --quiet
lrc=$?
tap_check "F20: the evict failed after KFD evicted (injected $(fcount evict_process_queues))" \
	test "$(fcount evict_process_queues)" = 1
tap_check "F20: LC done, the eviction is restored with gpreempt loaded" wait_for 30 refs_zero
tap_check "F20: BE runs again" wait_for 10 be_running
tap_check "F20: gpreempt shows BE running" wait_for 10 state_is $be 0
kill -TERM $be
wait $be
tap_check "F20: LC and BE packets exactly once" test $? -eq 0 -a $lrc -eq 0
unload
tap_dmesg_clean "faults: dmesg has no BUG/WARNING/Oops/KFENCE"
tap_done
