#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shrink instead of park (issue 19): kfdsim's per-queue CU masks, and
# gpreempt's shrink_pct mode, which keeps a best-effort queue running on
# part of its CUs while a latency-critical one has work.
#   - kfdsim: SET_CU_MASK maps the mask over the shader engines as KFD
#     does, and a queue's workgroups run only on CUs its mask enables;
#   - gpreempt shrinks BE (state "shrunk", backend "shrink") while LC has
#     work, BE keeps completing packets meanwhile, and it grows back to
#     exactly the mask its owner set (ROCr-style, at creation) once LC is
#     idle, and at rmmod;
#   - under injected update_queue faults nothing stays shrunk, and every
#     packet runs exactly once.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 29
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
CTL=$OBJ/build/gpreemptctl
Q=/sys/kernel/debug/kfdsim/queues
F=/sys/kernel/debug/kfdsim/fault
T=$(mktemp -d)

# qline PRIO: kfdsim's line of the (first) queue at KFD priority PRIO.
qline() { grep " prio=$1 " $Q | head -n 1; }
# kq PRIO KEY: one field of it.
kq() { linefield "$(qline "$1")" "$2"; }
# kq_is PRIO KEY VALUE
kq_is() { [ "$(kq "$1" "$2")" = "$3" ]; }
state_of() { qf "$1" state; }
maxrun=0
# sample_running PRIO SECONDS: the most workgroups the queue ran at once.
sample_running() {
	local end=$((SECONDS + $2)) r
	maxrun=0
	while [ $SECONDS -lt $end ]; do
		r=$(kq "$1" running)
		[ -n "$r" ] && [ "$r" -gt "$maxrun" ] && maxrun=$r
		sleep 0.02
	done
}

dmesg -C
# ---- kfdsim alone: masks over engines, and dispatch honours them --------------
tap_check "kfdsim loads (8 CUs, 4 engines)" insmod "$OBJ/test/kfdsim/kfdsim.ko" num_cu=8
tap_check "kfdsim reports num_se 4" grep -qx "num_se 4" /sys/kernel/debug/kfdsim/params
# Each load runs until the sampling is over (a loaded guest is slow to start one).
$GPLOAD be --prio 3 --wg 8 --wg-us 5000 --inflight 4 --duration 120 --cu-mask 5 --quiet &
p1=$!
wait_for 10 kq_is 3 cu_mask_cus 1
# CU 5 is engine 5 % 4 = 1, CU 5 / 4 = 1 of it: bit 1 of se_mask[1].
tap_check "SET_CU_MASK 5: one CU, engine 1 bit 1 (KFD's symmetric mapping)" \
	kq_is 3 se_mask 00000000,00000002,00000000,00000000
sample_running 3 2
tap_check "a queue masked to 1 CU never runs more than 1 workgroup at once (saw $maxrun)" \
	test "$maxrun" = 1
kill -TERM $p1
wait $p1
tap_check "the masked queue completed every packet" test $? = 0
tap_check "kfdsim counts the CU-mask updates" test "$(kstat cu_mask_updates)" -ge 1
$GPLOAD be --prio 3 --wg 8 --wg-us 5000 --inflight 4 --duration 120 --quiet &
p1=$!
wait_for 30 sh -c "grep -q ' prio=3 ' $Q"
sleep 1
sample_running 3 1
tap_check "an unmasked queue uses all 8 CUs (saw $maxrun)" test "$maxrun" = 8
kill -TERM $p1
wait $p1

# ---- gpreempt shrink_pct=50 --------------------------------------------------
tap_check "gpreempt loads with shrink_pct=50" \
	insmod "$OBJ/module/gpreempt.ko" shrink_pct=50 user_max_priority=15 max_suspend_ms=600000 \
		hysteresis_us=200000
# BE as ROCr creates it: a mask set at creation, here 6 of the 8 CUs.
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --cu-mask 0-5 \
	--json "$T/be.json" --quiet &
be=$!
wait_for 10 kq_is 3 cu_mask_cus 6
own=$(kq 3 se_mask)
tap_diag "BE's own mask over the engines: $own"
tap_check "BE runs unshrunk while LC is idle" wait_for 10 is $be state running
# LC always has work until it is stopped: BE stays shrunk meanwhile.
$GPLOAD lc --prio 12 --wg 2 --wg-us 20000 --period-us 5000 --duration 120 --cu-mask all \
	--json "$T/lc.json" --quiet &
lc=$!
tap_check "LC's work shrinks BE (state shrunk)" wait_for 10 is $be state shrunk
tap_check "BE's backend is shrink" is $be backend shrink
tap_check "BE keeps 3 of its 6 CUs (kfdsim cu_mask_cus=3)" \
	wait_for 5 kq_is 3 cu_mask_cus 3
tap_check "BE's kept CUs are the first 3 of its own (CUs 0-2: engines 0,1,2 bit 0)" \
	kq_is 3 se_mask 00000001,00000001,00000001,00000000
b0=$(kq 3 packets)
sleep 2
b1=$(kq 3 packets)
tap_check "BE keeps completing packets while shrunk ($b0 -> $b1)" test "$b1" -gt "$b0"
tap_check "shrunk BE is still mapped and active" \
	sh -c "grep ' prio=3 ' $Q | grep -q 'active=1 evicted=0 suspended=0 mapped=1'"
kill -TERM $lc
wait $lc
lrc=$?
tap_check "LC idle: BE grows back (state running)" wait_for 10 is $be state running
tap_check "BE's mask is exactly its owner's again ($own)" kq_is 3 se_mask "$own"
tap_check "BE has all 6 of its CUs again" kq_is 3 cu_mask_cus 6

# Shrunk again, then unloaded while shrunk.
$GPLOAD lc --prio 12 --wg 2 --wg-us 20000 --period-us 5000 --duration 120 --quiet &
lc=$!
tap_check "shrunk again under a second LC run" wait_for 10 is $be state shrunk
tap_check "rmmod while shrunk" rmmod gpreempt
tap_check "rmmod gave BE its own mask back ($own)" kq_is 3 se_mask "$own"
kill -TERM $lc
wait $lc
lrc2=$?
kill -TERM $be
wait $be
brc=$?
tap_check "LC and BE: every packet ran exactly once" test $lrc = 0 -a $lrc2 = 0 -a $brc = 0

# ---- shrink under injected update_queue faults --------------------------------
tap_check "gpreempt loads again (shrink_pct=25)" \
	insmod "$OBJ/module/gpreempt.ko" shrink_pct=25 user_max_priority=15
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --cu-mask all --quiet &
be=$!
wait_for 10 kq_is 3 cu_mask_cus 8
own=$(kq 3 se_mask)
echo "EBUSY 300 0" >$F/update_queue
echo "EIO 100 0" >$F/update_queue_map
$GPLOAD lc --prio 12 --wg 2 --wg-us 1000 --period-us 20000 --poisson --duration 6 --quiet &
lc=$!
wait $lc
lrc=$?
echo off >$F/update_queue
echo off >$F/update_queue_map
tap_diag "injected: $(grep -h injected $F/update_queue $F/update_queue_map | tr '\n' ' ')"
tap_check "faults were injected" \
	sh -c "cat $F/update_queue $F/update_queue_map | grep -qv 'injected=0 *$'"
tap_check "after the faults: BE grows back (state running)" wait_for 20 is $be state running
tap_check "after the faults: BE's mask is all 8 CUs again" \
	wait_for 10 kq_is 3 se_mask "$own"
tap_check "rmmod gpreempt" rmmod gpreempt
kill -TERM $be
wait $be
brc=$?
tap_check "under faults: every packet ran exactly once" test $lrc = 0 -a $brc = 0
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "shrink: kernel log clean"
rm -rf "$T"
tap_done
