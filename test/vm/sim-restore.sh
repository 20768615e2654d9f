#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F8: a restore KFD fails without dropping its eviction count
# (6.12 MES: add_queue_mes() fails, "goto out" skips qpd->evicted = 0) must
# not end gpreempt's hold: it keeps the eviction and tries again, so the
# process runs again and every eviction is balanced.  Before the fix
# gpreempt dropped its slot and the best-effort process stayed evicted for
# good.  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 14
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
F=/sys/kernel/debug/kfdsim/fault
T=$(mktemp -d)
be_evicted() { grep ' prio=3 ' /sys/kernel/debug/kfdsim/queues | grep -q 'evicted=1'; }
be_running() { ! be_evicted; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" sched=mes || { tap_not_ok "F8: kfdsim sched=mes loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=evict ||
	{ tap_not_ok "F8: gpreempt loads"; rmmod kfdsim; tap_bail; }
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 120 --quiet --json "$T/be.json" &
be=$!
sleep 0.5
# One LC burst; the restore after it fails the MES way.
echo "EIO 0 1" >$F/restore_process_queues
$GPLOAD lc --prio 12 --wg 4 --wg-us 1000 --period-us 5000 --duration 1 --quiet &
lc=$!
wait_for 20 be_evicted
tap_check "F8: BE evicted for LC (MES)" test "$(gstat preempts)" -gt 0
wait $lc
lrc=$?
wait_for 30 fc_ge restore_process_queues 1
tap_diag "injected restore failures: $(fcount restore_process_queues); restore_retries $(gstat restore_retries)"
tap_check "F8: the failed restore is retried (gp_stats.restore_retries)" \
	test "$(gstat restore_retries)" -ge 1
tap_check "F8: BE runs again once LC is idle" wait_for 30 be_running
tap_check "F8: every eviction is balanced (kfdsim evicted_refs 0)" wait_for 30 refs_zero
tap_check "F8: gpreempt holds no eviction (evicts_outstanding 0)" \
	wait_for 30 sh -c "[ \"\$(bpftool -j map dump name gp_stats | jq -r '.[0].formatted.value.evicts_outstanding')\" = 0 ]"
kill -TERM $be
wait $be
brc=$?
tap_check "F8: LC and BE: every packet ran exactly once" test $lrc = 0 -a $brc = 0
tap_check "F8: rmmod gpreempt" rmmod gpreempt

# The same at rmmod: BE evicted for a steady LC, and the unload's own
# restore fails the MES way.  rmmod tries again; before, it forgot the
# eviction after one try, and BE stayed evicted with gpreempt gone (the
# soak's race-exit phase found it, 1 in ~60 reloads).
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=evict ||
	tap_not_ok "F8 unload: gpreempt loads"
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 120 --quiet --json "$T/be.json" &
be=$!
sleep 0.5
$GPLOAD lc --prio 12 --wg 4 --wg-us 1000 --period-us 2000 --duration 120 --quiet &
lc=$!
tap_check "F8 unload: BE evicted for LC (MES)" wait_for 20 be_evicted
before=$(fcount restore_process_queues)
echo "EIO 0 1" >$F/restore_process_queues
tap_check "F8 unload: rmmod gpreempt with BE evicted" rmmod gpreempt
tap_check "F8 unload: the unload's restore failed once (injected $before -> $(fcount restore_process_queues))" \
	test "$(fcount restore_process_queues)" = $((before + 1))
tap_check "F8 unload: BE runs after rmmod" be_running
tap_check "F8 unload: every eviction is balanced (kfdsim evicted_refs $(kstat evicted_refs))" refs_zero
kill -TERM $lc $be
wait $lc
lrc=$?
wait $be
brc=$?
tap_check "F8 unload: LC and BE: every packet ran exactly once" test $lrc = 0 -a $brc = 0
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "F8: kernel log clean"
rm -rf "$T"
tap_done
