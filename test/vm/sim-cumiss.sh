#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S4 S4-10: a SET_CU_MASK call whose kretprobe gpreempt missed (no
# instance free: the callers sleep in KFD's update_queue) must not let a
# grow-back replace the owner's mask with an older one.  The GP_TESTING
# build with test_maxactive=1 stands for 1024 sleeping callers; kfdsim's
# fault_slow_runlist_us=5000 makes each SET_CU_MASK sleep 5 ms in
# update_queue (as an unmap/map under HWS does).  Eight processes set their
# masks back to back; then a BE (KFD priority 3) is created with a
# distinctive mask of 4 of the 16 CUs while they do, and an LC (12) runs
# with shrink_pct=50.  Before S4-10 the BE's missed mask was "none", so it
# was shrunk from every CU and grown back to every CU (its own 4 lost);
# now every queue's mask is unknown after a miss: the BE is parked, never
# shrunk, and keeps its 4 CUs.  Runs inside the test guest.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 7
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
Q=/sys/kernel/debug/kfdsim/queues
T=$(mktemp -d)
# qline PRIO: kfdsim's line of the (first) queue at KFD priority PRIO.
qline() { grep " prio=$1 " $Q | head -n 1; }
kq() { linefield "$(qline "$1")" "$2"; }
kq_is() { [ "$(kq "$1" "$2")" = "$3" ]; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" num_cu=16 fault_slow_runlist_us=5000 ||
	{ tap_not_ok "cumiss: kfdsim loads"; tap_bail; }
if ! insmod "$OBJ/build/testing/module/gpreempt.ko" test_maxactive=1 shrink_pct=50 \
	user_max_priority=15 max_suspend_ms=600000 hysteresis_us=200000; then
	tap_not_ok "cumiss: the GP_TESTING gpreempt loads with test_maxactive=1"
	rmmod kfdsim
	tap_bail
fi
hammers=()
for i in 1 2 3 4 5 6 7 8; do
	$GPLOAD idle --prio 5 --cu-mask 0-7 --cu-mask-loop --duration 300 --quiet \
		>"$T/h$i.out" 2>&1 &
	hammers+=($!)
done
sleep 2
m0=$(gstat probe_missed)
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 300 --cu-mask 0-3 \
	--quiet --json "$T/be.json" &
be=$!
wait_for 10 kq_is 3 cu_mask_cus 4
own=$(kq 3 se_mask)
sleep 2
m1=$(gstat probe_missed)
tap_diag "probe calls missed: $m0 before the BE, $m1 after; BE's own CUs $(kq 3 cu_mask_cus) ($own)"
tap_check "S4-10: SET_CU_MASK calls were missed (maxactive 1, 8 callers)" test "$m1" -gt "$m0"
$GPLOAD lc --prio 12 --wg 2 --wg-us 20000 --period-us 5000 --duration 6 --quiet \
	--json "$T/lc.json"
lrc=$?
shr=$(qf "$be" backend) st=$(qf "$be" state)
tap_diag "BE after LC: state $st backend $shr parks $(qfield "$be" preempts) CUs $(kq 3 cu_mask_cus) ($(kq 3 se_mask))"
tap_check "S4-10: BE was parked for LC, not shrunk (backend $shr)" \
	test "$(qfield "$be" preempts)" -gt 0 -a "$shr" != shrink
wait_for 10 is "$be" state running
tap_check "S4-10: BE keeps its own 4 CUs after LC (cu_mask_cus $(kq 3 cu_mask_cus))" \
	test "$(kq 3 cu_mask_cus)" = 4 -a "$(kq 3 se_mask)" = "$own"
kill -TERM "${hammers[@]}" $be 2>/dev/null
wait "${hammers[@]}"
wait $be
brc=$?
tap_check "cumiss: LC and BE: every packet ran exactly once" test $lrc = 0 -a $brc = 0
tap_diag "hammers: $(cat "$T"/h*.out | grep -o 'cu_mask_sets=[0-9]*' | tr '\n' ' ')"
tap_check "cumiss: rmmod gpreempt" rmmod gpreempt
tap_check "cumiss: rmmod kfdsim" rmmod kfdsim
tap_dmesg_clean "cumiss: kernel log clean"
rm -rf "$T"
tap_done
