#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Review finding m3: the monitor scans at most GP_MAX_QUEUES queues.  A queue
# past the limit is left unmanaged out loud: counted in
# gp_stats.queues_untracked and named in dmesg, never silently ignored.
# test_max_queues lowers the limit so that three queues reach it; it exists
# only in the GP_TESTING build (module/testing.c, build/testing/).
. test/lib/tap.sh
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
. test/lib/sim.sh
tap_plan 4
dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko"
insmod "$OBJ/build/testing/module/gpreempt.ko" user_max_priority=15 test_max_queues=2
$GPLOAD --mode lc --prio 12 --queues 3 --wg 2 --wg-us 200 --period-us 3000 --duration 60 --quiet &
pid=$!
# All three queues created (a slow guest takes seconds to start a load),
# then a tick more for the monitor to publish what it made of them.
ks_queues() { [ "$(kstat queues)" = 3 ]; }
wait_for 30 ks_queues
ticks_pass 2
queues=$(gstat queues) untracked=$(gstat queues_untracked)
kill -TERM $pid
wait $pid
rc=$?
tap_check "m3: limit 2, 3 queues: 2 managed, 1 counted as untracked (queues $queues, untracked $untracked)" \
	test "$queues.$untracked" = 2.1
tap_check "m3: dmesg names the unmanaged queue" bash -c 'dmesg | grep -q "not managed: 2 queues tracked already"'
tap_check "m3: every packet ran exactly once" test "$rc" = 0
rmmod gpreempt
rmmod kfdsim
tap_dmesg_clean "m3: dmesg clean"
tap_done
