#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreempt's run-time IBT check (review C1) on kfdsim.  TCG does not emulate
# IBT, so gpreempt's test_ibt=1 makes it check as on an IBT CPU: every
# dqm->ops target it calls through a pointer must start with ENDBR64.
# kfdsim's ops_noendbr=1 points update_queue at an entry without one.
. test/lib/tap.sh
tap_plan 6	# endbr: 2 lines, noendbr: 3; dmesg
GPLOAD=build/gpload
LC_ARGS="--mode lc --prio 12 --wg 4 --wg-us 200"
BE_ARGS="--mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4"

gstat() { bpftool -j map dump name gp_stats | jq -r ".[0].formatted.value.$1"; }
ks_idle() { grep -q '^queues 0' /sys/kernel/debug/kfdsim/stats && grep -q '^processes 0' /sys/kernel/debug/kfdsim/stats; }
wait_for() {	# seconds cmd...
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
run_lc_be() {	# -> sets preempts, lc_rc, be_rc
	$GPLOAD $BE_ARGS --duration 60 --quiet &
	local be=$!
	sleep 1
	$GPLOAD $LC_ARGS --duration 3 --period-us 3000 --quiet
	lc_rc=$?
	preempts=$(gstat preempts)
	kill -TERM $be
	wait $be
	be_rc=$?
}
ibt_logged() { [ "$(dmesg | grep -c "IBT: dqm->ops.update_queue has no ENDBR")" -eq 1 ]; }
unload() {
	rmmod gpreempt 2>/dev/null
	wait_for 10 ks_idle
	rmmod kfdsim
}
dmesg -C

for fixture in endbr noendbr; do
	ksargs=""
	[ $fixture = noendbr ] && ksargs="ops_noendbr=1"
	insmod test/kfdsim/kfdsim.ko $ksargs && insmod build/testing/module/gpreempt.ko user_max_priority=15 test_ibt=1 backend=suspend
	run_lc_be
	tap_check "ibt/$fixture: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
	if [ $fixture = endbr ]; then
		tap_check "ibt/endbr: ops with ENDBR: BE parked (${preempts:-none} parks)" \
			test "${preempts:-0}" -gt 0
	else
		tap_check "ibt/noendbr: update_queue without ENDBR: nothing parked (${preempts:-none} parks)" \
			test "${preempts:-1}" -eq 0
		tap_check "ibt/noendbr: one dmesg line names the function" ibt_logged
	fi
	unload
done
tap_dmesg_clean "ibt: dmesg clean"
tap_done
