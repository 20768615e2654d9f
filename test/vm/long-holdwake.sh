#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Work that an idle queue below the top starts while the monitor sleeps
# through a hold.  After LC's last work its level stays busy for
# hysteresis_us and BE stays parked; nothing the monitor reads can change
# before the hold's end but such work (its doorbell kicks nothing), so the
# monitor sleeps towards that end, in steps of at most a quarter of the
# hold and of idle_us (gp_hold_period(), module/monitor/period.c).
#
# Staged with a 1 s hold and idle_us 1 s, so that only the quarter step
# bounds the sleep: LC (12) sends one 20 ms request and stays idle; BE (3)
# is busy throughout; MID, a second process at BE's level whose queue exists
# from the start, starts a long wave 0.4 s later, inside the hold.  (At a
# level between LC and BE it would be a middle tier, left to the hardware:
# only the lowest busy level is held below the top.)  MID must be parked
# while the hold lasts: sleeping to the hold's end, the monitor would find
# the hold over and MID would run unparked beside LC's next work.  Count-based (MID's
# parks); the staging itself is checked on kfdsim's clock: MID's first
# workgroup started after LC's last one ended, early enough in the hold for
# a quarter step to end before it does.
# Runs inside the test guest (test/run-vm long).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 5
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
DBG=/sys/kernel/debug/kfdsim
HOLD_US=1000000
# ksq_ns TGID KEY: KEY (a kfdsim clock value) of the process's queue.
ksq_ns() {
	local pasid
	pasid=$(qfield "$1" pasid)
	[ -n "$pasid" ] && linefield "$(grep -m 1 "^queue pasid=$pasid " $DBG/queues)" "$2"
}

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "hold wake: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 max_suspend_ms=60000 \
	idle_max_us=1000000 idle_us=1000000 hysteresis_us=$HOLD_US ||
	{ tap_not_ok "hold wake: gpreempt loads"; rmmod kfdsim; tap_bail; }

$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet &
be=$!
# Both queues exist long before their first request: their creation's kick
# is long over when the work starts.
at=$(awk '{ printf "%.0f", ($1 + 6) * 1e6 }' /proc/uptime)
$GPLOAD lc --prio 12 --wg 8 --wg-us 20000 --period-us 60000000 --start-at "$at" \
	--duration 12 --quiet &
lc=$!
$GPLOAD lc --prio 3 --wg 8 --wg-us 1000000 --period-us 60000000 --start-at $((at + 400000)) \
	--duration 12 --quiet &
mid=$!
wait_for 30 state_is $be 0
# The hold after LC's request is over 1.5 s after it (a slow guest's LC
# may take a few hundred ms to complete it: the staging check says so).
past() { awk -v t="$1" '{ exit !($1 * 1e6 >= t) }' /proc/uptime; }
wait_for 30 past $((at + 2600000))
lc_end=$(ksq_ns $lc last_end_ns) mid_start=$(ksq_ns $mid first_start_ns)
parks=$(qfield $mid preempts)
tap_diag "LC's request ended at ${lc_end:-?} ns, MID's wave started at ${mid_start:-?} ns (kfdsim's clock); MID parked ${parks:-?} times, BE $(qfield $be preempts)"
gap=$(( ${mid_start:-0} - ${lc_end:-0} ))
# (A request the monitor never saw pending, in a loaded guest, parks
# nothing and starts no hold: BE's park is part of the staging.)
tap_check "hold wake: LC's request parked BE, and MID's work started inside LC's hold, before its last quarter ($((gap / 1000000)) ms after LC's last work)" \
	test -n "$lc_end" -a -n "$mid_start" -a "$gap" -gt 0 -a "$gap" -lt $((HOLD_US * 1000 * 3 / 4)) \
	-a "$(qfield $be preempts)" -ge 1
tap_check "hold wake: MID's work, started while the monitor slept through the hold, was parked within it (${parks:-0} parks)" \
	test "${parks:-0}" -ge 1
kill -TERM $lc $mid $be
wait $lc
lrc=$?
wait $mid
mrc=$?
wait $be
brc=$?
tap_check "hold wake: every packet of LC, MID and BE completed exactly once" test "$lrc/$mrc/$brc" = 0/0/0
tap_check "hold wake: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "hold wake: kernel log clean"
tap_done
