#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A process insmod skipped (its p->mutex busy) is adopted by a waiter, not
# by a try that must win against the process being managed.
#  - BE3 starts first and holds its p->mutex (kfdsim's hold_mutex) for the
#    whole test; BE1's p->mutex is hammered (kfdsim's hammer_mutex: owned
#    at every instant, handed over only to a waiter, as by threads looping
#    on cheap ioctls); BE2 is plain.
#  - insmod adopt_existing=1 skips BE1 and BE3 (gp_stats.load_skipped_busy
#    2) and adopts BE2.  The waiter has BE1's mutex and adopts its queue
#    while the hammer goes on, although BE3, skipped before it, never lets
#    go; BE1 is then parked for an LC.
# Before, the monitor only tried each skipped process's mutex once per
# tick: a try never wins a hammered mutex, so BE1 stayed unmanaged.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 9
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
F=/sys/kernel/debug/kfdsim/fault
ksq() { linefield "$(grep "^queue pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1)" "$2"; }
off() { [ "$(ksq "$1" active)" = 0 ]; }
on() { kill -0 "$1" 2>/dev/null; }
qline() { grep "pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1; }
# hold PASID MS: kfdsim holds the process's p->mutex (until killed); $hold.
hold() {
	local h0
	h0=$(fcount mutex_holds)
	sh -c "echo '$1 $2' >$F/hold_mutex" &
	hold=$!
	wait_for 10 fc_ge mutex_holds $((h0 + 1))
}
be_start() {
	$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet "$@" &
	be=$!
}
nproc_ks() { [ "$(kstat processes)" = "$1" ]; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "adopt wait: kfdsim loads"; tap_bail; }
# Without gpreempt the PASIDs come from kfdsim, in order of creation.
be_start; be3=$be; wait_for 10 nproc_ks 1; p3=1
be_start; be1=$be; wait_for 10 nproc_ks 2; p1=2
be_start; be2=$be; wait_for 10 nproc_ks 3
wait_for 10 eval '[ "$(grep -c "^queue pasid=" /sys/kernel/debug/kfdsim/queues)" = 3 ]'
hold $p3 120000; h3=$hold
h0=$(fcount mutex_hammers)
sh -c "echo '$p1 120000' >$F/hammer_mutex" &
h1=$!
wait_for 10 fc_ge mutex_hammers $((h0 + 1))
run_bounded 30 insmod "$OBJ/module/gpreempt.ko" adopt_existing=1
tap_check "adopt wait: insmod returns while BE1's p->mutex is hammered and BE3 holds its own" test "$rc" = 0
tap_check "adopt wait: BE1 and BE3 skipped and counted (gp_stats.load_skipped_busy 2)" \
	test "$(gstat load_skipped_busy)" = 2
# BE1 may be adopted already: the waiter starts with the monitor.
tap_check "adopt wait: BE2 adopted at load, BE3 not" \
	test -n "$(qf $be2 state)" -a -z "$(qf $be3 state)"
adopted() { [ -n "$(qf $be1 state)" ]; }
if wait_for 20 adopted; then
	tap_ok "adopt wait: BE1 (its p->mutex hammered) adopted, BE3 still holding"
else
	tap_not_ok "adopt wait: BE1 (its p->mutex hammered) adopted, BE3 still holding # $(dmesg | grep gpreempt | tail -n 3 | tr '\n' ' ')"
fi
tap_check "adopt wait: the kernel log says so (pasid $p1)" \
	sh -c "dmesg | grep -q 'pasid $p1: its p->mutex is free again: 1 queue(s) adopted'"
tap_check "adopt wait: BE3 (holding) is not adopted" test -z "$(qf $be3 state)"
$GPLOAD lc --wg 8 --wg-us 500 --period-us 20000 --duration 600 --quiet &
lc=$!
wait_for 10 eval '[ -n "$(qf $lc state)" ]'
$CTL set pid $lc high >/dev/null
if wait_for 30 off "$p1"; then
	tap_ok "adopt wait: BE1 is parked for LC"
else
	tap_not_ok "adopt wait: BE1 is parked for LC # $(qline "$p1")"
fi
kill -TERM $lc
wait $lc
lrc=$?
kill -TERM $h1 2>/dev/null
wait $h1
stop_be $be1
b1=$be_rc
stop_be $be2
tap_check "adopt wait: LC, BE1, BE2: every packet ran exactly once" test $lrc = 0 -a $b1 = 0 -a $be_rc = 0
kill -TERM $h3 2>/dev/null
wait $h3
stop_be $be3
run_bounded 30 rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "adopt wait: kernel log clean"
tap_done
