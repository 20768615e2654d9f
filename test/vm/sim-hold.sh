#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Issue 19 item 3: hold_adaptive.  With it, a level stays busy after its last
# work only as long as a park plus an unpark take on its device (measured),
# at most hysteresis_us.  LC arrives every 30 ms; with hysteresis_us=20000
# and the fixed hold BE is released only after 20 ms of LC idle.  Checked:
# with hold_adaptive=1 the hold (gp_stats.hold_us) drops below hysteresis_us
# once 8 calls were measured, to about twice the mean park/unpark call; BE
# is still parked while LC has work and released between LC's requests;
# every packet runs exactly once.  No clock
# threshold: hold_us is compared with the module's own call times.
. test/lib/tap.sh
. test/lib/sim.sh
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
HYST=20000
run() {	# <hold_adaptive>: LC every 30 ms over BE, 4 s
	insmod "$OBJ/test/kfdsim/kfdsim.ko"
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 hysteresis_us=$HYST hold_adaptive=$1
	$GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet &
	be=$!
	sleep 0.5
	$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 30000 --duration 4 --quiet
	lc_rc=$?
	hold=$(gstat hold_us) parks=$(gstat preempts) resumes=$(gstat resumes)
	calls_ns=$(bpftool -j map dump name gp_stats | jq '.[0].formatted.value.preempt_hist')
	stop_be $be
	sim_unload
}
dmesg -C
run 0
tap_check "fixed hold: hold_us is hysteresis_us ($hold)" test "$hold" = $HYST
tap_check "fixed hold: BE parked and released ($parks/$resumes)" test "${parks:-0}" -gt 0 -a "${resumes:-0}" -gt 0
fixed_parks=$parks
tap_check "fixed hold: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0

run 1
tap_check "adaptive hold: hold_us below hysteresis_us ($hold < $HYST)" test "${hold:-$HYST}" -lt $HYST
tap_check "adaptive hold: BE parked and released ($parks/$resumes; fixed: $fixed_parks)" \
	test "${parks:-0}" -gt 0 -a "${resumes:-0}" -gt 0
tap_check "adaptive hold: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
tap_diag "adaptive hold ${hold} us; park call histogram (us buckets) $(echo $calls_ns | tr -d ' \n')"

insmod "$OBJ/test/kfdsim/kfdsim.ko"
insmod "$OBJ/module/gpreempt.ko" hysteresis_us=$HYST
tap_check "hold_adaptive can be switched on at run time" sh -c 'echo 1 >/sys/module/gpreempt/parameters/hold_adaptive'
tap_check_fails "hold_adaptive=maybe refused" sh -c 'echo maybe >/sys/module/gpreempt/parameters/hold_adaptive'
rmmod gpreempt
rmmod kfdsim
tap_dmesg_clean "adaptive hold: dmesg clean"
tap_done
