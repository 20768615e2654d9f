#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A GPU reset with 6.12's semantics (kfdsim hang_model=6.12) in the middle
# of parking: the HIQ fence of an unmap times out (fault knob
# fence_timeout_next), kfd_hws_hang flags every process on the device
# (has_reset_queue: the parking update_queue returns -EACCES, not -EIO), a
# reset work fails unmaps with -EIO, stops the dqm (update_queue then
# returns 0 with no hardware action), evicts every process for ever and
# starts the dqm again.  gpreempt must fence the device once, make no retry
# storm on the flagged processes, and park and unpark a process started
# after the reset normally.  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 15
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
R=/sys/kernel/debug/kfdsim

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" hang_model=6.12 fence_timeout_ms=300 gpu_reset_ms=500 ||
	{ tap_not_ok "reset-real: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 ||
	{ tap_not_ok "reset-real: gpreempt loads"; rmmod kfdsim; tap_bail; }
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet &
be=$!
$GPLOAD lc --prio 12 --wg 4 --wg-us 2000 --period-us 20000 --duration 60 --quiet &
lc=$!
be_parked3() { [ "$(qfield $be preempts)" -ge 3 ] 2>/dev/null; }
reset_done() { [ "$(kstat gpu_resets)" -ge 1 ] 2>/dev/null; }
tap_check "reset-real: BE is parked for LC's bursts" wait_for 30 be_parked3
echo 1 > $R/fence_timeout_next	# the next unmap's fence times out
tap_check "reset-real: the modelled GPU reset ran" wait_for 30 reset_done
tap_check "reset-real: the dqm runs again" wait_for 10 grep -q 'state 0 .* sched_running 1' $R/resets
grep -E '^(hang_model|dev)' $R/resets | sed 's/^/# /'
fences=$(gstat dev_fences)
tap_check "reset-real: gpreempt fenced the device once (dev_fences $fences)" test "$fences" = 1
logs=$(dmesg | grep -c 'preemption failed on a device')
tap_check "reset-real: one log line for it ($logs)" test "$logs" = 1
# Both old processes are flagged and evicted for ever: count gpreempt's KFD
# calls on them (parks, unparks, errors) over 2 s.
# LC may have exited on its own (a request that never completes).
calls() {
	local p r e
	p=$(qfield "$1" preempts) r=$(qfield "$1" resumes) e=$(qfield "$1" errors)
	echo $((${p:-0} + ${r:-0} + ${e:-0}))
}
c0=$(calls $be) l0=$(calls $lc)
sleep 2
c1=$(calls $be) l1=$(calls $lc)
tap_check "reset-real: no retry storm on the flagged BE ($c0 -> $c1 calls)" test $((c1 - c0)) -le 1
tap_check "reset-real: no retry storm on the flagged LC ($l0 -> $l1 calls)" test $((l1 - l0)) -le 1
tap_check "reset-real: the old processes are flagged, none is not" \
	sh -c "grep -q 'pdd_reset=1' $R/resets && ! grep -q 'pdd_reset=0' $R/resets" ||
	grep '^queue' $R/resets | sed 's/^/# /'
# Their work is lost (as on a real reset, where ROCr aborts them).
kill -KILL $be $lc 2>/dev/null
wait $be $lc 2>/dev/null
tap_check "reset-real: the old processes are gone" wait_for 30 sh -c "! grep -q '^queue' $R/resets"
# A new BE and LC, after the device recovered: parked and unparked normally.
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet &
be2=$!
sleep 3	# past the fence's back-off (2 s after one strike)
$GPLOAD lc --prio 12 --wg 4 --wg-us 2000 --period-us 20000 --duration 3 --quiet
lrc=$?
tap_check "reset-real: a new LC's packets ran exactly once" test $lrc = 0
p=$(qfield $be2 preempts)
tap_check "reset-real: a new BE is parked after the reset ($p parks)" test "${p:-0}" -ge 1
tap_check "reset-real: ... and unparked once LC is done" wait_for 20 is $be2 state running
stop_be $be2
tap_check "reset-real: the new BE's packets ran exactly once" test "$be_rc" = 0
tap_check "reset-real: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "reset-real: kernel log clean"
tap_done
