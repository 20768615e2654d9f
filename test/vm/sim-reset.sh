#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F12: a queue gpreempt parked in a process that then gets a reset
# queue (6.12 pdd->has_reset_queue).  update_queue() refuses it (-EACCES)
# after unmapping the whole device, so the old unpark failed for ever, each
# try a full-device unmap, and its back-off delayed every other queue on the
# device.  Now gpreempt drops its flag without a KFD call: the queue is no
# longer gpreempt's parked one, and other processes are still parked and
# resumed.  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 10
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F12: kfdsim loads"; tap_bail; }
# The starvation guard far away: its slice would unpark BE for a moment,
# and a reset landing then finds BE running (seen in a slow guest).
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=suspend max_suspend_ms=60000 ||
	{ tap_not_ok "F12: gpreempt loads"; rmmod kfdsim; tap_bail; }
# The victim: BE, parked by a long LC burst, then its device resets.
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
v=$!
# LC keeps a backlog of 8 dispatches (24 ms of GPU time): a periodic LC
# waits for each request, and in a slow guest its wake-up can outlast the
# hysteresis, so BE was rightly unparked before its reset landed.
$GPLOAD be --prio 12 --wg 8 --wg-us 3000 --inflight 8 --duration 600 --quiet &
lc=$!
tap_check "F12: the BE queue is parked for LC" wait_for 30 is $v state parked
kill -USR1 $v	# its device resets while it is parked
vpasid=$(qf $v pasid)
# The reset must land while BE's queue is still suspended in KFD (LC's
# backlog keeps it so): else BE would be unparked by the ordinary path and
# nothing here is tested.  gpreempt itself drops the park once it sees the
# reset, so its own state may already say running.
reset_seen() { grep -q "queue pasid=$vpasid .*pdd_reset=1 evicted=[0-9]* active=0" /sys/kernel/debug/kfdsim/resets; }
if wait_for 10 reset_seen; then
	tap_ok "F12: the reset landed while BE was parked (kfdsim's pdd has_reset_queue, the queue inactive)"
else
	tap_not_ok "F12: the reset landed while BE was parked # pasid ${vpasid:-?}, state $(qf $v state)"
	sed 's/^/# resets: /' /sys/kernel/debug/kfdsim/resets
fi
kill -TERM $lc
wait $lc
lrc0=$?
tap_check "F12: LC ran every packet exactly once through the reset" test $lrc0 = 0
[ $lrc0 = 0 ] || { cat /sys/kernel/debug/kfdsim/queues; dmesg | tail -20; } | sed 's/^/# /'
e1=$(qf $v errors)
# LC idle: the unpark is owed.
if wait_for 20 is $v state running; then
	tap_ok "F12: after the reset, its unpark is done (gpreempt no longer holds it)"
else
	tap_not_ok "F12: after the reset, its unpark is done # state $(qf $v state), errors $(qf $v errors), resumes $(qf $v resumes)"
fi
sleep 1
e2=$(qf $v errors)
tap_check "F12: no park or unpark retry storm on the reset process ($e2 errors)" test "$e2" -le 2
tap_check "F12: its flag is clear in KFD" \
	bash -c "! grep -q 'suspended=1' /sys/kernel/debug/kfdsim/queues"
# Another process on the device is still parked and resumed.
p1=$(gstat preempts)
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 6 --quiet &
be=$!
$GPLOAD lc --prio 12 --wg 4 --wg-us 1000 --period-us 20000 --duration 3 --quiet &
lc=$!
wait $lc
lrc=$?
wait $be
brc=$?
p2=$(gstat preempts)
tap_check "F12: another process is still parked and resumed ($p1 -> $p2 parks)" test "$p2" -gt "$p1"
tap_check "F12: its packets ran exactly once" test $lrc = 0 -a $brc = 0
kill -TERM $v
wait $v
tap_check "F12: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "F12: kernel log clean"
tap_done
