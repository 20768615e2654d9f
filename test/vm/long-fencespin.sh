#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim fence_spin=1: the caller of a modelled preemption waits for the
# firmware on the CPU, under dqm->lock, as KFD's fence waits do (HWS: a
# schedule() loop; MES: udelay polling), instead of sleeping.  gpreempt's
# parks and unparks still work under both, every packet runs exactly once,
# the spun time is counted, and the kernel log stays clean (no sleep in
# atomic context, no lockdep report).  Runs inside the test guest
# (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
BE_ARGS="be --prio 3 --wg 8 --wg-us 2000 --inflight 4"
LC_ARGS="lc --prio 12 --wg 4 --wg-us 1000"

dmesg -C
scheds="hws mes"
tap_plan $((5 * $(wc -w <<<"$scheds") + 1))	# lc_be_round: 4 lines, the spin check
for sched in $scheds; do
	insmod "$OBJ/test/kfdsim/kfdsim.ko" sched=$sched fence_spin=1 ||
		{ tap_not_ok "fence_spin $sched: kfdsim loads"; tap_not_run 4 "not loaded"; continue; }
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 ||
		{ tap_not_ok "fence_spin $sched: gpreempt loads"; tap_not_run 4 "not loaded"; rmmod kfdsim; continue; }
	lc_be_round "fence_spin $sched" 30
	s=$(kstat fence_spin_us)
	tap_check "fence_spin $sched: the firmware waits were spun (fence_spin_us $s)" test "${s:-0}" -gt 0
	sim_unload
done
tap_dmesg_clean "fence_spin: kernel log clean"
tap_done
