#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim sched=oracle, the bench's limit: the simulated CP itself
# CWSR-preempts lower levels the moment a higher level's packet is fetched,
# and a queue's level comes from a cgroup rule (debugfs oracle_rules) as
# gpreemptctl's would.  LC's queue has the lower MQD priority (7 against
# BE's 9) and level 12 from its cgroup's rule; BE runs 200 ms waves on every
# CU.  LC's requests must finish while BE is mid-wave, each of BE's
# workgroups exactly once, with the saves and restores counted.  No
# gpreempt.  Runs inside the test guest (test/run-vm sim), in under a minute.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 16
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
DBG=/sys/kernel/debug/kfdsim
T=$(mktemp -d)
CG=/sys/fs/cgroup
jnum() { jq -r ".$2" "$1"; }

dmesg -C
rmmod kfdsim 2>/dev/null
mountpoint -q $CG || mount -t cgroup2 none $CG
tap_check "insmod kfdsim sched=oracle" insmod "$OBJ/test/kfdsim/kfdsim.ko" sched=oracle
grep -q '^sched oracle' $DBG/params || { tap_not_ok "params say sched oracle"; rmmod kfdsim; tap_bail; }
mkdir -p $CG/gp-oracle-lc
cgid=$(stat -c %i $CG/gp-oracle-lc)
tap_check_fails "oracle_rules refuses level 16" sh -c "echo '$cgid 16' >$DBG/oracle_rules"
tap_check "oracle_rules takes 'CGROUP_ID 12'" sh -c "echo '$cgid 12' >$DBG/oracle_rules"
tap_check "oracle_rules reads back the rule" grep -qx "$cgid 12" $DBG/oracle_rules

$GPLOAD be --prio 9 --wg 8 --wg-us 200000 --inflight 2 --duration 120 --quiet --json "$T/be.json" &
be=$!
sleep 1
sh -c "echo \$\$ >$CG/gp-oracle-lc/cgroup.procs && exec $GPLOAD lc --prio 7 --wg 4 --wg-us 2000 \
	--period-us 20000 --duration 6 --quiet --json $T/lc.json" &
lc=$!
lcq() { grep ' prio=7 ' $DBG/queues | head -1; }
# A loaded guest can take many seconds to start LC: its queue is read while it lives.
wait_for 60 sh -c "grep -q ' prio=7 ' $DBG/queues"
tap_check "LC's queue has level 12 from its cgroup's rule (MQD priority 7)" \
	test "$(linefield "$(lcq)" oracle)" = 12
tap_check "BE's queue has no rule (level -1: its MQD priority 9)" \
	test "$(linefield "$(grep ' prio=9 ' $DBG/queues | head -1)" oracle)" = -1
wait $lc
lrc=$?
stop_be $be
tap_check "LC: every request completed exactly once (gpload status $lrc)" test $lrc = 0
tap_check "BE: every packet completed exactly once (gpload status $be_rc)" test "$be_rc" = 0
lcp=$(jnum "$T/lc.json" packets) bep=$(jnum "$T/be.json" packets)
tap_diag "LC $(jnum "$T/lc.json" count) requests p50 $(jnum "$T/lc.json" p50_us) us p99 $(jnum "$T/lc.json" p99_us) us; BE $bep packets of 8 x 200 ms (kfdsim, TCG guest)"
tap_diag "kfdsim: $(grep -E '^(oracle_preemptions|cwsr_saves|cwsr_restores|workgroups_completed|runlist_updates) ' $DBG/stats | tr '\n' ' ')"
# LC's 2 ms requests finish while BE's 200 ms waves run, because the CP
# preempts them (counted below); how fast is the bench's (make bench, the
# oracle rows), not a test's: a wall-clock bound fails on a loaded host.
tap_diag "LC's median request against half a BE wave: p50 $(jnum "$T/lc.json" p50_us) us (100000 us)"
tap_check "the CP preempted BE's waves for LC (oracle_preemptions > 0)" test "$(kstat oracle_preemptions)" -gt 0
tap_check "each oracle preemption is a CWSR save (cwsr_saves >= oracle_preemptions)" \
	test "$(kstat cwsr_saves)" -ge "$(kstat oracle_preemptions)"
tap_check "every saved workgroup was restored (cwsr_restores = cwsr_saves)" \
	test "$(kstat cwsr_restores)" = "$(kstat cwsr_saves)"
tap_check "no runlist change (runlist_updates 0)" test "$(kstat runlist_updates)" = 0
tap_check "every dispatched workgroup ran exactly once (4 x $lcp + 8 x $bep = $(kstat workgroups_completed))" \
	test $((4 * lcp + 8 * bep)) = "$(kstat workgroups_completed)"
tap_check "oracle_rules 'clear' drops the rules" sh -c "echo clear >$DBG/oracle_rules && ! test -s $DBG/oracle_rules"
wait_for 30 ks_idle
tap_check "rmmod kfdsim" rmmod kfdsim
rmdir $CG/gp-oracle-lc
tap_dmesg_clean "no kernel warning (dmesg)"
rm -rf "$T"
tap_done
