#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F20 (evasion): a best-effort process keeps its own p->mutex busy
# (four threads loop on an ioctl that works 500 us under it, as KFD's memory
# mapping ioctls do: gpload --mutex-threads 4 --mutex-us 500) while
# it runs long kernels; a latency-critical process (made "high" by a pid
# rule) runs periodic work.  The monitor only tries p->mutex, so before the
# fix the BE queue was (almost) never parked: only busy_retries grew.  Now,
# after a few busy ticks in a row, a helper thread waits for the mutex and
# parks it: BE is parked (through the helper: busy_deferred), unparked once
# LC stops, parked again, and rmmod with BE parked and still hammering
# returns and leaves nothing suspended.  Every packet completes exactly once.
# Then the same against kfdsim's hammer_mutex, which leaves the mutex free
# at no instant: the old code did not park BE at all.
# Last (REVIEW-S4 S4-1), a BE that *holds* its own p->mutex (kfdsim's
# hold_mutex: an ioctl that does not return, as a USERPTR map of a page of
# a FUSE file that never answers): it is parked by eviction, which needs no
# p->mutex, counted (gp_stats.mutex_held, gp_queues mutex_held), unparked,
# and rmmod with it parked returns and gives it back.  The old code never
# parked it (the helper's waits expired), and its rmmod waited for the hold.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 31
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
T=$(mktemp -d)
# ksq PASID FIELD: a field of the process's kfdsim queue line.
ksq() { linefield "$(grep "^queue pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1)" "$2"; }
# Parked by either backend: off the runlist (suspended or evicted).
be_off() { [ "$(ksq "$bepasid" active)" = 0 ]; }
be_running() {
	[ "$(ksq "$bepasid" suspended)" = 0 ] && [ "$(ksq "$bepasid" evicted)" = 0 ] &&
		[ "$(ksq "$bepasid" active)" = 1 ]
}
be_parked() { [ "$(qf "$be" preempts)" -gt "$1" ] 2>/dev/null; }
lc_start() {
	$GPLOAD lc --wg 8 --wg-us 500 --period-us 20000 --duration 600 --quiet &
	lc=$!
	wait_for 10 eval '[ -n "$(qf $lc state)" ]'
	$CTL set pid $lc high >/dev/null
}

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F20: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" || { tap_not_ok "F20: gpreempt loads"; rmmod kfdsim; tap_bail; }

# BE: work always pending, and its own p->mutex kept busy.
$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 600 --mutex-threads 4 \
	--mutex-us 500 >"$T/be.out" 2>&1 &
be=$!
wait_for 10 eval '[ -n "$(qf $be pasid)" ]'
bepasid=$(qf $be pasid)
r0=$(gstat busy_retries)
lc_start
if wait_for 30 be_parked 0; then
	tap_ok "F20: BE with its p->mutex kept busy is parked ($(qf $be preempts) parks)"
else
	tap_not_ok "F20: BE with its p->mutex kept busy is parked # $(qf $be preempts) parks, busy_retries $r0 -> $(gstat busy_retries)"
fi
tap_diag "backend $(qf $be backend); busy_retries $r0 -> $(gstat busy_retries), busy_deferred $(gstat busy_deferred), expired $(gstat busy_deferred_expired)"
tap_check "F20: the helper did it (gp_stats.busy_deferred > 0)" \
	test "$(gstat busy_deferred)" -gt 0
tap_check "F20: kfdsim counted BE's preemptions" test "$(ksq "$bepasid" preemptions)" -gt 0

kill -TERM $lc
wait $lc
lrc=$?
if wait_for 30 be_running; then
	tap_ok "F20: BE unparked after LC stopped (not suspended nor evicted, active)"
else
	tap_not_ok "F20: BE unparked after LC stopped # $(grep "pasid=$bepasid " /sys/kernel/debug/kfdsim/queues)"
fi
tap_check "F20: the policy agrees (state running)" wait_for 10 is $be state running

# Parked again, then rmmod while BE is parked and its threads still hammer.
p1=$(qf $be preempts)
lc_start
if wait_for 30 be_off; then
	tap_ok "F20: BE parked again ($(qf $be preempts) parks, was $p1)"
else
	tap_not_ok "F20: BE parked again # $(qf $be preempts) parks, was $p1"
fi
t0=$SECONDS
tap_check "F20: rmmod gpreempt with BE parked and hammering" timeout 120 rmmod gpreempt
tap_diag "rmmod took $((SECONDS - t0)) s (simulation, TCG guest)"
tap_check "F20: nothing left suspended after rmmod" be_running
tap_check "F20: kfdsim: no queue left suspended or evicted" \
	sh -c "! grep -Eq 'suspended=1|evicted=1' /sys/kernel/debug/kfdsim/queues"
tap_check "F20: every eviction balanced" refs_zero

kill -TERM $lc $be
wait $lc
lrc2=$?
wait $be
brc=$?
n=$(sed -n 's/.*mutex_ioctls=\([0-9]*\).*/\1/p' "$T/be.out")
tap_diag "BE's threads made ${n:-?} p->mutex ioctls"
tap_check "F20: BE's threads kept p->mutex busy (mutex ioctls made)" test "${n:-0}" -gt 1000
tap_check "F20: every packet completed exactly once (BE, LC twice)" \
	test $brc = 0 -a $lrc = 0 -a $lrc2 = 0

# The same with no gap at all: kfdsim's hammer_mutex keeps BE's p->mutex
# owned at every instant and lets it go only to a waiter, by hand-off.  The
# old code only tried the mutex, and did not park BE while the hammer ran;
# the helper waits for it and gets it.
F=/sys/kernel/debug/kfdsim/fault
hammer_on() { kill -0 "$hammer" 2>/dev/null; }
tap_check "F20 hammer: gpreempt loads" insmod "$OBJ/module/gpreempt.ko"
$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
be=$!
wait_for 10 eval '[ -n "$(qf $be pasid)" ]'
bepasid=$(qf $be pasid)
wait_for 10 be_running
sh -c "echo '$bepasid 60000' >$F/hammer_mutex" &
hammer=$!
wait_for 10 fc_ge mutex_hammers 11
r0=$(gstat busy_retries) d0=$(gstat busy_deferred)
lc_start
if wait_for 15 be_off && hammer_on; then
	tap_ok "F20 hammer: BE parked while its p->mutex is never free"
else
	tap_not_ok "F20 hammer: BE parked while its p->mutex is never free # $(qf $be preempts) parks, busy_retries $r0 -> $(gstat busy_retries), busy_deferred $d0 -> $(gstat busy_deferred)"
fi
kill -TERM $lc
wait $lc
lrc=$?
if hammer_on && wait_for 15 be_running && hammer_on; then
	tap_ok "F20 hammer: BE unparked after LC stopped, the hammer still on"
else
	tap_not_ok "F20 hammer: BE unparked after LC stopped, the hammer still on # $(grep "pasid=$bepasid " /sys/kernel/debug/kfdsim/queues | head -1)"
fi
tap_diag "hammer: busy_retries $r0 -> $(gstat busy_retries), busy_deferred $d0 -> $(gstat busy_deferred), mutex_hammers $(fcount mutex_hammers)"
# rmmod with BE parked: the unload waits for the mutex as a waiter once
# polling it found it busy for 5 s.  Before, it polled until the hammer
# ended (60 s).
p1=$(qf $be preempts)
lc_start
if wait_for 15 be_off && hammer_on; then
	tap_ok "F20 hammer: BE parked again ($(qf $be preempts) parks, was $p1)"
else
	tap_not_ok "F20 hammer: BE parked again # $(qf $be preempts) parks, was $p1"
fi
t0=$SECONDS
rmmod gpreempt
rc=$?
tap_diag "rmmod took $((SECONDS - t0)) s (simulation, TCG guest)"
tap_check "F20 hammer: rmmod with BE parked returns while the hammer is still on" \
	test $rc = 0 -a -n "$(hammer_on && echo on)"
tap_check "F20 hammer: BE runs after rmmod" be_running
tap_check "F20 hammer: every eviction balanced" refs_zero
kill -TERM $lc
wait $lc
lrc2=$?
kill -TERM $hammer 2>/dev/null
wait $hammer
stop_be $be
tap_check "F20 hammer: every packet completed exactly once" test $be_rc = 0 -a $lrc = 0 -a $lrc2 = 0

# S4-1: BE holds its own p->mutex (until the writer is killed).
hold_on() { kill -0 "$hold" 2>/dev/null; }
tap_check "S4-1 hold: gpreempt loads" insmod "$OBJ/module/gpreempt.ko"
dmesg -C
$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
be=$!
wait_for 10 eval '[ -n "$(qf $be pasid)" ]'
bepasid=$(qf $be pasid)
wait_for 10 be_running
h0=$(fcount mutex_holds)
sh -c "echo '$bepasid 300000' >$F/hold_mutex" &
hold=$!
wait_for 10 fc_ge mutex_holds $((h0 + 1))
x0=$(gstat busy_deferred_expired)
lc_start
if wait_for 20 be_off && hold_on; then
	tap_ok "S4-1 hold: BE parked while it holds its own p->mutex ($(qf $be preempts) parks, backend $(qf $be backend))"
else
	tap_not_ok "S4-1 hold: BE parked while it holds its own p->mutex # $(qf $be preempts) parks, busy_deferred_expired $x0 -> $(gstat busy_deferred_expired), mutex_held $(gstat mutex_held)"
fi
tap_diag "hold: mutex_held $(gstat mutex_held) (queue: $(qf $be mutex_held)), lockless_evicts $(gstat lockless_evicts), busy_deferred $(gstat busy_deferred), expired $x0 -> $(gstat busy_deferred_expired)"
tap_check "S4-1 hold: the evader is counted (gp_stats.mutex_held, its gp_queues mutex_held)" \
	test "$(gstat mutex_held)" -gt 0 -a "$(qf $be mutex_held)" -gt 0
tap_check "S4-1 hold: the kernel log names it" \
	sh -c "dmesg | grep -q 'pasid $bepasid .*holds its own KFD p->mutex'"
kill -TERM $lc
wait $lc
lrc=$?
if wait_for 15 be_running && hold_on; then
	tap_ok "S4-1 hold: BE unparked after LC stopped, the hold still on"
else
	tap_not_ok "S4-1 hold: BE unparked after LC stopped, the hold still on # $(grep "pasid=$bepasid " /sys/kernel/debug/kfdsim/queues | head -1)"
fi
p1=$(qf $be preempts)
lc_start
if wait_for 15 be_off && hold_on; then
	tap_ok "S4-1 hold: BE parked again ($(qf $be preempts) parks, was $p1)"
else
	tap_not_ok "S4-1 hold: BE parked again # $(qf $be preempts) parks, was $p1"
fi
run_bounded 60 rmmod gpreempt
rm=$bg
tap_check "S4-1 hold: rmmod with BE parked returns while BE still holds its mutex" \
	test "$rc" = 0 -a -n "$(hold_on && echo on)"
if be_running && hold_on; then
	tap_ok "S4-1 hold: BE runs after rmmod, the hold still on"
else
	tap_not_ok "S4-1 hold: BE runs after rmmod, the hold still on # $(grep "pasid=$bepasid " /sys/kernel/debug/kfdsim/queues | head -1)"
fi
tap_check "S4-1 hold: every eviction balanced" refs_zero
kill -TERM $lc
wait $lc
lrc2=$?
kill -TERM $hold 2>/dev/null
wait $hold
wait $rm 2>/dev/null
stop_be $be
tap_check "S4-1 hold: every packet completed exactly once" test $be_rc = 0 -a $lrc = 0 -a $lrc2 = 0
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "F20: kernel log clean"
rm -rf "$T"
tap_done
