#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bound on pressure (review finding M3, issue 9 item 4): gpreempt makes
# at most max_rate state changes per device per second and backs off after a
# failed action.  Counts come from gp_stats; no wall-clock time is asserted.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
tap_plan 10
GPLOAD=build/gpload
F=/sys/kernel/debug/kfdsim/fault
LC_ARGS="--mode lc --prio 12 --wg 2 --wg-us 200 --period-us 1000"
BE_ARGS="--mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4"

gstat() { bpftool -j map dump name gp_stats | jq -r ".[0].formatted.value.$1"; }
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
stat_ge() { [ "$(gstat "$1")" -ge "$2" ] 2>/dev/null; }
ks_idle() {
	awk '$1 == "queues" || $1 == "processes" { n += $2 } END { exit n != 0 }' \
		/sys/kernel/debug/kfdsim/stats
}
no_suspended() { ! grep -q 'suspended=1' /sys/kernel/debug/kfdsim/queues; }
dmesg -C

# 1. The default and the parameter's range.
insmod test/kfdsim/kfdsim.ko
tap_check "max_rate out of range is refused at load" \
	bash -c '! insmod module/gpreempt.ko max_rate=0'
insmod module/gpreempt.ko user_max_priority=15 backend=suspend max_rate=10
tap_check "gp_stats.rate_limit shows max_rate" wait_for 30 stat_ge rate_limit 10
tap_check "max_rate=5 refused at run time" bash -c '! echo 5 >/sys/module/gpreempt/parameters/max_rate'

# 2. LC arriving every ms against BE wants ~2000 changes/s; max_rate=10
# holds the device to about 10 (one burst token, plus owed unparks).
$GPLOAD $BE_ARGS --duration 120 --quiet &
be=$!
$GPLOAD $LC_ARGS --duration 120 --quiet &
lc=$!
tap_check "actions over max_rate are held back (throttled)" wait_for 60 stat_ge throttled 20
wait_for 60 stat_ge rate_last_sec 1
r=$(gstat rate_last_sec)
tap_diag "rate_last_sec=$r throttled=$(gstat throttled) preempts=$(gstat preempts)"
tap_check "state changes per device per second <= max_rate + burst + owed ($r)" \
	test "$r" -ge 1 -a "$r" -le 20
pk=$(gstat rate_peak_sec)
tap_check "rate_peak_sec is the highest busiest-device second, within max_rate + burst + owed ($r <= $pk <= 20)" \
	test "$pk" -ge "$r" -a "$pk" -le 20

# 3. A failing backend backs off (no retry storm) and recovers.  -ETIME (a
# preemption timeout) charges the device's back-off; -EIO is left to the
# device fence (apply.c gp_dev_charge()).
echo 1000 >/sys/module/gpreempt/parameters/max_rate
echo "ETIME 1000 0" >$F/update_queue
tap_check "a failed park starts a back-off" wait_for 60 stat_ge backoffs 1
echo "EIO 0 0" >$F/update_queue
p0=$(gstat preempts)
tap_check "parks resume after the faults stop" wait_for 60 stat_ge preempts $((p0 + 1))
kill -TERM $lc $be
wait $lc
wait $be
rmmod gpreempt
tap_check "nothing left suspended after rmmod" wait_for 30 no_suspended
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "device rate: dmesg has no BUG/WARNING/Oops/KFENCE"
tap_done
