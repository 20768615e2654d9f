#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmmod's waits for busy p->mutexes are shared per process: one process
# with many parked queues that holds its own p->mutex (kfdsim's hold_mutex)
# spends its own share, not every other process's.
#  - BE1 starts first (its queues come first in the registry) with 16
#    queues, all parked by suspend, then holds its p->mutex.
#  - BE2 is parked, then its p->mutex is hammered (kfdsim's hammer_mutex:
#    owned at every instant, handed over only to a waiter, as by threads
#    looping on cheap ioctls: a try never wins it).
#  - rmmod returns; BE2's queue runs; BE1's stay parked and are named, BE2
#    is not; BE2's packets each ran exactly once.
# Before, the unload waited up to 1 s per queue in registry order: BE1's 16
# queues spent the whole 10 s deadline, BE2 got only two tries and stayed
# suspended after rmmod.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 9
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
F=/sys/kernel/debug/kfdsim/fault
NQ=16
ksq() { linefield "$(grep "^queue pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1)" "$2"; }
running() {
	[ "$(ksq "$1" suspended)" = 0 ] && [ "$(ksq "$1" evicted)" = 0 ] &&
		[ "$(ksq "$1" active)" = 1 ]
}
# nsusp PASID: the process's queues kfdsim has suspended and off the hardware.
nsusp() {
	grep "^queue pasid=$1 " /sys/kernel/debug/kfdsim/queues |
		grep -c ' active=0 .*suspended=1 '
}
all_susp() { [ "$(nsusp "$1")" = "$2" ]; }
on() { kill -0 "$1" 2>/dev/null; }
qids() {
	$CTL --json status 2>/dev/null |
		jq -r --argjson t "$1" '.queues[] | select(.tgid == $t) | .qid'
}
nq() { [ "$(qids "$1" | wc -l)" = "$2" ]; }
park_all() {
	local q
	for q in $(qids "$1"); do
		$CTL park queue "$1:$q" >/dev/null
	done
}
qline() { grep "pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "unload share: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" backend=suspend ||
	{ tap_not_ok "unload share: gpreempt loads"; rmmod kfdsim; tap_bail; }

$GPLOAD be --queues $NQ --wg 4 --wg-us 2000 --inflight 2 --duration 600 --quiet &
be1=$!
wait_for 20 nq $be1 $NQ
p1=$(qf $be1 pasid)
$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
be2=$!
wait_for 20 eval '[ -n "$(qf $be2 pasid)" ]'
p2=$(qf $be2 pasid)
park_all $be1
park_all $be2
tap_check "unload share: BE1's $NQ queues parked by suspend" wait_for 30 all_susp "$p1" $NQ
tap_check "unload share: BE2 parked by suspend" wait_for 30 all_susp "$p2" 1
h0=$(fcount mutex_holds)
sh -c "echo '$p1 90000' >$F/hold_mutex" &
hold=$!
wait_for 10 fc_ge mutex_holds $((h0 + 1))
h0=$(fcount mutex_hammers)
sh -c "echo '$p2 120000' >$F/hammer_mutex" &
hammer=$!
wait_for 10 fc_ge mutex_hammers $((h0 + 1))
run_bounded 60 rmmod gpreempt
tap_check "unload share: rmmod returns within 60 s while BE1 holds its p->mutex" \
	test "$rc" = 0 -a -n "$(on $hold && on $hammer && echo on)"
if running "$p2"; then
	tap_ok "unload share: BE2's queue runs after rmmod"
else
	tap_not_ok "unload share: BE2's queue runs after rmmod # $(qline "$p2")"
fi
tap_check "unload share: BE1's $NQ queues (suspended, holding its p->mutex) are left parked" \
	all_susp "$p1" $NQ
tap_check "unload share: the kernel log names BE1 (pasid $p1) as left parked" \
	sh -c "dmesg | grep -q 'pasid $p1 .*$NQ queue(s) left parked at unload'"
tap_check "unload share: the kernel log does not name BE2 (pasid $p2)" \
	sh -c "! dmesg | grep -q 'pasid $p2 .*left parked at unload'"
dmesg | grep gpreempt | tail -n 4 | sed 's/^/# /'
kill -TERM $hammer 2>/dev/null
wait $hammer
stop_be $be2
tap_check "unload share: BE2: every packet ran exactly once" test "$be_rc" = 0
kill -TERM $hold 2>/dev/null
wait $hold
# BE1's parks are given back by the next load (a leftover park).
insmod "$OBJ/module/gpreempt.ko"
wait_for 20 running "$p1"
kill -TERM $be1
wait $be1
wait_for 30 ks_idle
rmmod gpreempt
rmmod kfdsim
tap_dmesg_clean "unload share: kernel log clean"
tap_done
