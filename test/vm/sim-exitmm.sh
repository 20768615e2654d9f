#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F5: the monitor reads a process's dispatch ids holding a
# reference on its mm.  If every thread of the process exits meanwhile, the
# monitor's put is the last one: exit_mmap() and KFD's mmu-notifier release
# (kfd_process_notifier_release(), kfdsim's through its mmu_notifier_ops as
# in KFD) would run in the monitor thread, and no tick runs until that
# teardown is over.  gpreempt puts with mmput_async(): the teardown runs in
# a workqueue.  kfdsim counts who ran each release (stats
# notifier_releases_foreign: a task outside the process; release_tasks:
# the kernel threads among them, by name).
#
# While LC runs, a BE process with 16 queues (the monitor holds its mm
# while it reads all of them) is killed with SIGKILL, its queues still
# registered, until some release ran outside its process (the race was
# hit); not one may have run in the "gpreempt" kthread.  Without help the
# window is a few us of each tick (3 hits in 48 kills, 9 minutes, on 6.12
# under TCG).  The monitor holds the mm in two places: the scan's read of
# the ids (gp_ptr_use() .. gp_ptr_read_end()) and each park or unpark
# (gp_ptr_mm_pin() around KFD's update_queue, 7.x's teardown guard, taken on
# every kernel).  kfdsim's fault/update_queue_lock_delay_us makes each
# update_queue sleep 5 ms with that mm held: with 16 queues parked and
# unparked for LC, most kills land in a hold.  Both holds end in
# mmput_async().
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 6
GPLOAD=build/gpload
RT=/sys/kernel/debug/kfdsim/release_tasks
LC_ARGS="--mode lc --prio 12 --wg 2 --wg-us 300 --period-us 1000"
BE_ARGS="--mode be --prio 3 --wg 1 --wg-us 1000 --inflight 1 --queues 16"
ROUNDS=${GP_EXITMM_ROUNDS:-30}
WANT=2	# releases outside their process: the race was hit this often

ks_queues_are() { [ "$(kstat queues)" = "$1" ]; }
ks_only_lc() { [ "$(kstat processes)" = 1 ] && [ "$(kstat queues)" = 1 ]; }
load() { insmod test/kfdsim/kfdsim.ko && insmod module/gpreempt.ko user_max_priority=15; }
unload() {
	rmmod gpreempt 2>/dev/null
	wait_for 30 ks_idle
	rmmod kfdsim
}
dmesg -C

load
$GPLOAD $LC_ARGS --duration 600 --json /tmp/lc.json --quiet &
lc=$!
wait_for 30 ks_queues_are 1
echo 5000 > /sys/kernel/debug/kfdsim/fault/update_queue_lock_delay_us
kills=0
while [ $kills -lt "$ROUNDS" ] && [ "$(kstat notifier_releases_foreign)" -lt $WANT ]; do
	$GPLOAD $BE_ARGS --duration 600 --quiet &
	be=$!
	wait_for 20 ks_queues_are 17
	sleep 0.$((RANDOM % 5))
	kill -KILL $be
	wait $be 2>/dev/null
	kills=$((kills + 1))
	wait_for 30 ks_only_lc
done
echo 0 > /sys/kernel/debug/kfdsim/fault/update_queue_lock_delay_us
rel=$(kstat notifier_releases)
foreign=$(kstat notifier_releases_foreign)
tasks=$(tr '\n' ' ' < $RT)
tap_diag "simulated GPU: $kills BE processes killed; $rel notifier releases, $foreign outside their process (kernel threads: ${tasks:-none})"
if [ "$foreign" -ge $WANT ]; then
	tap_ok "the race was hit: $foreign of $rel mm teardowns ran outside their process"
else
	tap_not_ok "the race was hit: $foreign of $rel mm teardowns ran outside their process (want $WANT)"
fi
if grep -q '^gpreempt' $RT; then
	tap_not_ok "no process's mm teardown ran in the gpreempt kthread ($(grep '^gpreempt' $RT))"
else
	tap_ok "no process's mm teardown ran in the gpreempt kthread"
fi
tap_check "every killed process's queues are gone from gp_queues" \
	wait_for 30 eval '[ "$(gstat queues)" = 1 ]'
ticks0=$(gstat ticks)
sleep 1
ticks1=$(gstat ticks)
tap_check "the monitor still ticks ($ticks0 -> $ticks1)" test "$ticks1" -gt "$ticks0"
kill -TERM $lc
wait $lc
tap_check "LC: every packet completed exactly once" test $? -eq 0
unload
tap_dmesg_clean "exit_mmap race"
tap_done
