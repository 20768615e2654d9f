#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A process one of whose queues KFD reset (its preemption timed out: 6.12
# reset_queues_on_hws_hang() -> set_queue_as_reset()) keeps its other queues
# in the runlist.  They are parked like any BE below busy work, by eviction
# (update_queue() refuses such a process, -EACCES, after unmapping the
# device), and the reset queue stays off the hardware through gpreempt's
# restore, which would map it again (QUEUE_IS_ACTIVE() does not look at a
# reset).  Its later evictions are not new resets: they fence nothing (each
# one fenced the device as a reset of its own, up to 5 min without parks).
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 11
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
KQ=/sys/kernel/debug/kfdsim/queues

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "resetpark: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 max_suspend_ms=60000 ||
	{ tap_not_ok "resetpark: gpreempt loads"; rmmod kfdsim; tap_bail; }
# kq PASID QID FIELD: a field of kfdsim's line for that queue.
kq() { linefield "$(grep "^queue pasid=$1 qid=$2 " $KQ)" "$3"; }
$GPLOAD be --queues 2 --reset-queue 1 --prio 3 --wg 8 --wg-us 2000 --inflight 4 \
	--duration 600 --quiet &
v=$!
has_pasid() { [ -n "$(qf $v pasid)" ]; }
wait_for 30 has_pasid
vp=$(qf $v pasid)
both_run() { [ "$(kq "$vp" 0 active)$(kq "$vp" 1 active)" = 11 ]; }
wait_for 30 both_run
kill -USR1 $v	# KFD resets its queue 1
reset_off() { [ "$(kq "$vp" 1 active)" = 0 ] && [ "$(kstat queues_reset)" = 1 ]; }
wait_for 10 reset_off
tap_check "the reset queue is off the hardware, its process's other queue runs ($(kq "$vp" 0 active)/$(kq "$vp" 1 active))" \
	test "$(kq "$vp" 0 active).$(kq "$vp" 1 active)" = 1.0
# Busy work above it: a backlog that keeps its level busy.
$GPLOAD be --prio 12 --wg 8 --wg-us 3000 --inflight 8 --duration 600 --quiet &
lc=$!
evicted0() { [ "$(kq "$vp" 0 evicted)" = 1 ] && [ "$(kq "$vp" 0 active)" = 0 ]; }
if wait_for 30 evicted0; then
	tap_ok "its other queue is parked by eviction below the busy work"
else
	tap_not_ok "its other queue is parked by eviction below the busy work # queue 0 active=$(kq "$vp" 0 active) evicted=$(kq "$vp" 0 evicted), skipped_reset $(gstat skipped_reset)"
fi
sleep 1
tap_check "the reset queue stays off while its process is parked (active $(kq "$vp" 1 active))" \
	test "$(kq "$vp" 1 active)" = 0
kill -TERM $lc
wait $lc
lrc=$?
running0() { [ "$(kq "$vp" 0 active)" = 1 ] && [ "$(kq "$vp" 0 evicted)" = 0 ]; }
wait_for 30 running0
tap_check "its other queue runs again when the work above it ends (active $(kq "$vp" 0 active), evicted $(kq "$vp" 0 evicted))" \
	running0
tap_check "gpreempt's restore left the reset queue off (active $(kq "$vp" 1 active), queue resets $(kstat queues_reset))" \
	test "$(kq "$vp" 1 active).$(kstat queues_reset)" = 0.1
# A second busy period: parked again, and no evict of it fenced the device.
$GPLOAD be --prio 12 --wg 8 --wg-us 3000 --inflight 8 --duration 600 --quiet &
lc=$!
tap_check "parked again by eviction in a second busy period" wait_for 30 evicted0
kill -TERM $lc
wait $lc
lrc2=$?
wait_for 30 running0
tap_check "parked and restored again: no fence (dev_fences $(gstat dev_fences), $(dmesg | grep -c 'preemption failed on a device') log lines)" \
	test "$(gstat dev_fences).$(dmesg | grep -c 'preemption failed on a device')" = 0.0
tap_check "the reset queue still off after the second restore (active $(kq "$vp" 1 active), queue resets $(kstat queues_reset))" \
	test "$(kq "$vp" 1 active).$(kstat queues_reset)" = 0.1
tap_diag "gp_stats: parks $(gstat preempts), resumes $(gstat resumes), skipped_reset $(gstat skipped_reset), errors $(gstat errors); busy work exit $lrc, $lrc2"
# A reset process that KFD holds evicted (its own eviction, as after a GPU
# reset): which queue is the reset one cannot be told, gpreempt's eviction
# is refused with no KFD call, and not tried again every tick (each try
# spent the device's budget and counted an error): its queues wait out a
# back-off, unmanaged (reset).
$GPLOAD be --queues 2 --reset-queue 1 --reset-ms 200 --evict-ms 400 --prio 3 --wg 8 \
	--wg-us 2000 --inflight 4 --duration 600 --quiet &
w=$!
has_wpasid() { [ -n "$(qf $w pasid)" ]; }
wait_for 30 has_wpasid
wp=$(qf $w pasid)
held() { [ "$(kq "$wp" 0 evicted)" = 1 ] && [ "$(kq "$wp" 1 active)" = 0 ]; }
wait_for 30 held
$GPLOAD be --prio 12 --wg 8 --wg-us 3000 --inflight 8 --duration 600 --quiet &
lc=$!
sleep 1
s0=$(gstat skipped_reset) e0=$(qfield $w errors)
sleep 3
s1=$(gstat skipped_reset) e1=$(qfield $w errors)
tap_check "a refused eviction of a reset process is backed off ($s0 -> $s1 refusals in 3 s, its errors $e0 -> $e1)" \
	test $((s1 - s0)) -le 3 -a "$e1" = "$e0"
um_reset() { [ "$(qfield $w unmanaged)" = 2 ]; }
tap_check "its queues are unmanaged (reset) meanwhile" wait_for 10 um_reset
kill -TERM $lc $w
wait $lc $w
kill -TERM $v
wait $v
sim_unload
tap_dmesg_clean "resetpark: kernel log clean"
tap_done
