#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S4 S4-1 and S4-2: a process that holds its own p->mutex (an ioctl
# that does not return: kfdsim's hold_mutex, and last the real primitive, a
# USERPTR map of a page of a FUSE file that never answers, by uid 65534)
# harms nobody but itself.
#  - unload: BE1 parked by eviction and holding its mutex, BE2 parked by
#    suspend, BE3 parked by suspend and holding its mutex.  rmmod returns
#    within the deadline; BE2 runs; BE1's eviction is restored without its
#    mutex (KFD's own eviction path needs none); BE3 is left parked and the
#    kernel log names it; the next load gives it back (a leftover park).
#    Before, rmmod gave back one process at a time, waiting for each
#    mutex: it did not return while BE1 held its mutex, and BE2 stayed
#    parked.
#  - insmod with a held mutex: the load returns, that process is skipped
#    and counted (gp_stats.load_skipped_busy), the others adopted.  Before,
#    insmod slept uninterruptibly until the hold ended.
#  - FUSE: the holder is parked for an LC (by eviction), and rmmod returns;
#    the map fails once the FUSE server goes, and the process goes on.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 24
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
STALL=build/fuse-stall
F=/sys/kernel/debug/kfdsim/fault
MNT=/tmp/fuse-stall
T=$(mktemp -d)
ksq() { linefield "$(grep "^queue pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1)" "$2"; }
off() { [ "$(ksq "$1" active)" = 0 ]; }
running() {
	[ "$(ksq "$1" suspended)" = 0 ] && [ "$(ksq "$1" evicted)" = 0 ] &&
		[ "$(ksq "$1" active)" = 1 ]
}
on() { kill -0 "$1" 2>/dev/null; }
# hold PASID MS: kfdsim holds the process's p->mutex (until killed); $hold.
hold() {
	local h0
	h0=$(fcount mutex_holds)
	sh -c "echo '$1 $2' >$F/hold_mutex" &
	hold=$!
	wait_for 10 fc_ge mutex_holds $((h0 + 1))
}
be_start() {
	$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
	be=$!
	wait_for 10 eval '[ -n "$(qf $be pasid)" ]'
}
park() { $CTL park queue "$1:$(qf "$1" qid)" >/dev/null; }
qline() { grep "pasid=$1 " /sys/kernel/debug/kfdsim/queues | head -1; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "S4-1: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" backend=evict ||
	{ tap_not_ok "S4-1: gpreempt loads"; rmmod kfdsim; tap_bail; }

# --- unload ---
be_start; be1=$be; p1=$(qf $be1 pasid)
be_start; be2=$be; p2=$(qf $be2 pasid)
be_start; be3=$be; p3=$(qf $be3 pasid)
park $be1
evicted() { [ "$(ksq "$1" evicted)" = 1 ] && off "$1"; }
tap_check "S4-1 unload: BE1 parked by eviction" wait_for 10 evicted $p1
echo suspend >/sys/module/gpreempt/parameters/backend
park $be2
park $be3
suspended() { [ "$(ksq "$1" suspended)" = 1 ] && off "$1"; }
both() { suspended $p2 && suspended $p3; }
tap_check "S4-1 unload: BE2 and BE3 parked by suspend" wait_for 10 both
tap_diag "BE1: $(qline $p1)"
tap_diag "BE2: $(qline $p2)"
tap_diag "BE3: $(qline $p3)"
hold $p1 90000; h1=$hold
hold $p3 90000; h3=$hold
run_bounded 60 rmmod gpreempt
rm=$bg
tap_check "S4-1 unload: rmmod returns within 60 s while BE1 and BE3 hold their p->mutex" \
	test "$rc" = 0 -a -n "$(on $h1 && on $h3 && echo on)"
if running $p2; then
	tap_ok "S4-1 unload: BE2's queue runs after rmmod"
else
	tap_not_ok "S4-1 unload: BE2's queue runs after rmmod # $(qline $p2)"
fi
if running $p1 && on $h1; then
	tap_ok "S4-1 unload: BE1's eviction restored without its mutex (the hold still on)"
else
	tap_not_ok "S4-1 unload: BE1's eviction restored without its mutex (the hold still on) # $(qline $p1)"
fi
tap_check "S4-1 unload: every eviction balanced" refs_zero
tap_check "S4-1 unload: BE3 (suspended, holding its mutex) is left parked" suspended $p3
tap_check "S4-1 unload: the kernel log names BE3 (pasid $p3) as left parked" \
	sh -c "dmesg | grep -q 'pasid $p3 .*left parked at unload'"
tap_check "S4-1 unload: the kernel log names BE1 (pasid $p1): restored without its mutex" \
	sh -c "dmesg | grep -q 'pasid $p1 .*restored without it'"
kill -TERM $h1 $h3 2>/dev/null
wait $h1 $h3
wait $rm 2>/dev/null
dmesg | grep gpreempt | tail -n 8 | sed 's/^/# /'

# --- insmod while BE1 holds its mutex: skipped and counted, BE3's leftover given back ---
hold $p1 45000; h1=$hold
run_bounded 30 insmod "$OBJ/module/gpreempt.ko" adopt_existing=1
ins=$bg
tap_check "S4-2: insmod returns within 30 s while BE1 holds its p->mutex" \
	test "$rc" = 0 -a -n "$(on $h1 && echo on)"
tap_check "S4-2: BE1 skipped and counted (gp_stats.load_skipped_busy 1)" \
	test "$(gstat load_skipped_busy)" = 1
tap_check "S4-2: the kernel log names it (pasid $p1)" \
	sh -c "dmesg | grep -q 'pasid $p1: its p->mutex stayed busy'"
tap_check "S4-2: BE1's queue is not adopted, BE2's is" \
	test -z "$(qf $be1 state)" -a -n "$(qf $be2 state)"
if wait_for 10 running $p3; then
	tap_ok "S4-1: the load gives BE3's leftover park back"
else
	tap_not_ok "S4-1: the load gives BE3's leftover park back # $(qline $p3)"
fi
kill -TERM $h1 2>/dev/null
wait $h1
wait $ins 2>/dev/null
# Skipped is not let off: the monitor tries BE1's mutex on every tick and
# adopts its queue once it is free.
adopted() { [ -n "$(qf $be1 state)" ]; }
tap_check "S4-2: once BE1 lets go of its p->mutex, the monitor adopts its queue" wait_for 30 adopted
tap_check "S4-2: the kernel log says so (pasid $p1)" \
	sh -c "dmesg | grep -q 'pasid $p1: its p->mutex is free again: 1 queue(s) adopted'"
for b in $be1 $be2 $be3; do
	stop_be $b
	[ "$be_rc" = 0 ] || brc=$be_rc
done
tap_check "S4-1: BE1, BE2, BE3: every packet ran exactly once" test "${brc:-0}" = 0

# --- the real primitive: a USERPTR map over a FUSE file, by uid 65534 ---
modprobe -d "${GP_KROOT:-/}" fuse 2>/dev/null || modprobe fuse 2>/dev/null
mkdir -p $MNT
chmod 0666 /dev/kfdsim /dev/kfd /dev/dri/renderD*
$STALL --user 65534 $MNT >"$T/fuse.out" 2>&1 &
fuse=$!
wait_for 10 grep -q ready "$T/fuse.out"
setpriv --reuid 65534 --regid 65534 --clear-groups $GPLOAD be --wg 8 --wg-us 2000 \
	--inflight 4 --duration 600 --quiet --userptr-stall $MNT/f >"$T/evil.out" 2>&1 &
evil=$!
wait_for 20 grep -q 'read stalled' "$T/fuse.out"
tap_check "S4-1 FUSE: uid 65534's USERPTR map waits on the FUSE page" \
	sh -c "grep -q 'userptr: mapping' '$T/evil.out' && ! grep -q 'userptr: done' '$T/evil.out' && grep -q 'read stalled' '$T/fuse.out'"
wait_for 10 eval '[ -n "$(qf $evil pasid)" ]'
ep=$(qf $evil pasid)
$GPLOAD lc --wg 8 --wg-us 500 --period-us 20000 --duration 600 --quiet &
lc=$!
wait_for 10 eval '[ -n "$(qf $lc state)" ]'
$CTL set pid $lc high >/dev/null
if wait_for 30 off "$ep"; then
	tap_ok "S4-1 FUSE: the holder is parked for LC ($(qf $evil preempts) parks, mutex_held $(qf $evil mutex_held))"
else
	tap_not_ok "S4-1 FUSE: the holder is parked for LC # $(qline "$ep"); busy_deferred_expired $(gstat busy_deferred_expired), mutex_held $(gstat mutex_held)"
fi
run_bounded 60 rmmod gpreempt
rm=$bg
tap_check "S4-1 FUSE: rmmod returns with the holder parked" test "$rc" = 0
tap_check "S4-1 FUSE: the holder runs after rmmod" running "$ep"
kill -TERM $fuse
wait $fuse
tap_check "S4-1 FUSE: the map fails once the FUSE server goes" wait_for 20 grep -q 'userptr: done' "$T/evil.out"
kill -TERM $lc
wait $lc
lrc=$?
kill -TERM $evil
wait $evil
erc=$?
wait $rm 2>/dev/null
tap_diag "evil: $(tr '\n' ' ' <"$T/evil.out")"
tap_check "S4-1 FUSE: LC and the holder: every packet ran exactly once" test $lrc = 0 -a $erc = 0
umount -l $MNT 2>/dev/null
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "S4-1: kernel log clean"
rm -rf "$T"
tap_done
