#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F20: a queue an earlier gpreempt could not resume at its unload
# (every update_queue failed) stays is_suspended with no owner.  The next
# insmod must take it over as parked and release it.  Before the fix it was
# adopted as running and stayed off the GPU for good.  Runs inside the test
# guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 8
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
F=/sys/kernel/debug/kfdsim/fault
be_suspended() { grep ' prio=3 ' /sys/kernel/debug/kfdsim/queues | grep -q 'suspended=1'; }
be_running() { ! be_suspended; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F20: kfdsim loads"; tap_bail; }
# No starvation slice: BE stays parked while LC runs.
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=suspend max_suspend_ms=600000 ||
	{ tap_not_ok "F20: gpreempt loads"; rmmod kfdsim; tap_bail; }
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
be=$!
wait_for 20 sh -c "[ -n \"\$($CTL --json status | jq -r '.queues[] | select(.tgid == $be) | .qid')\" ]"
# Parked by hand: it stays parked (no LC whose gaps would let it run).
$CTL park queue "$be:$(qf $be qid)" >/dev/null
if wait_for 30 be_suspended; then
	tap_ok "F20: BE parked (is_suspended)"
else
	tap_not_ok "F20: BE parked (is_suspended) # $(grep ' prio=' /sys/kernel/debug/kfdsim/queues | cut -c1-90)"
fi
# Every update_queue fails from now on: the unload cannot resume BE.
echo "EIO 1000 0" >$F/update_queue
rmmod gpreempt
echo "EIO 0 0" >$F/update_queue
tap_check "F20: after that unload BE is left suspended, with no owner" be_suspended
tap_check "F20: the unload said so" sh -c "dmesg | grep -q 'could not be resumed at unload'"
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=suspend
if wait_for 30 be_running; then
	tap_ok "F20: the next insmod takes the leftover over and releases it"
else
	tap_not_ok "F20: the next insmod takes the leftover over and releases it # $(grep ' prio=3 ' /sys/kernel/debug/kfdsim/queues)"
fi
tap_check "F20: dmesg names the leftover" sh -c "dmesg | grep -q 'left parked by an earlier gpreempt'"
kill -TERM $be
wait $be
brc=$?
tap_check "F20: BE ran every packet exactly once" test $brc = 0
tap_check "F20: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "F20: kernel log clean"
tap_done
