#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Review S3 F11: CP firmware that advances the read index when a dispatch
# starts (kfdsim early_rptr=1) shows a BE queue running its one long kernel
# as empty, so "pending" never sees it while LC waits for its CUs.  BE runs
# one kernel at a time (8 workgroups x 50 ms: every CU), LC sends a request
# every 30 ms.  Without dispatch_window_ms, BE is parked only when LC comes
# within the hysteresis of BE's last submit; with dispatch_window_ms=200
# (longer than BE's kernel) it is parked for most LC requests.  Counts only,
# no clock threshold; every packet exactly once either way.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 4
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
run() {	# <gpreempt args>
	insmod "$OBJ/test/kfdsim/kfdsim.ko" early_rptr=1
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 $1
	$GPLOAD --mode be --prio 3 --wg 8 --wg-us 50000 --inflight 1 --duration 60 --quiet &
	be=$!
	sleep 0.5
	$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 30000 --duration 4 \
		--json /tmp/lc.json --quiet
	lc_rc=$?
	parks=$(gstat preempts)
	reqs=$(jq -r '.count' /tmp/lc.json)
	p99=$(jq -r '.p99_us' /tmp/lc.json)
	stop_be $be
	sim_unload
}
dmesg -C
run ""
off_parks=$parks off_p99=$p99
tap_check "early rptr, no window: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
run "dispatch_window_ms=200"
tap_check "early rptr, dispatch_window_ms=200: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
tap_check "early rptr: the window parks BE for most LC requests ($parks parks for $reqs requests; without it $off_parks)" \
	test "$parks" -ge $((reqs / 2)) -a "$parks" -ge $((3 * off_parks))
tap_diag "LC p99 (simulation, TCG): ${off_p99} us without the window, ${p99} us with it"
tap_dmesg_clean "early rptr: dmesg clean"
tap_done
