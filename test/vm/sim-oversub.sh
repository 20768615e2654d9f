#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An oversubscribed HWS runlist (FIDELITY B4; 6.12 pm.c:41-67): more
# processes with queues on a device than max_proc_per_quantum, or more
# active compute queues than the HQDs, and the HWS time-slices the
# processes.  kfdsim cuts the runlist into slices (max_proc processes,
# hqds compute queues each, newest process first) and runs one a quantum.
#  1. processes: max_proc=2, BE1, BE2 and LC (3 processes):
#     - without gpreempt, the runlist is sliced and LC waits for its turn
#       (acct "sliced");
#     - with gpreempt, BE is parked, but a parked process keeps its place:
#       the runlist stays sliced while BE is parked, and gpreempt says so
#       (gp_stats dev_oversub, the devices' process counts, one log line,
#       a warning in status);
#  2. queues: hqds=2, BE with 2 queues and LC with 1: parking BE takes its
#     queues off, so the runlist is not sliced while BE is parked.
# Snapshots of kfdsim's queues file are read under its device lock: a
# parked BE and the runlist's slices are seen at one instant.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 16
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
CTL=$OBJ/build/gpreemptctl
Q=/sys/kernel/debug/kfdsim/queues
LCA=(--mode lc --prio 12 --wg 8 --wg-us 2000 --period-us 8000 --quiet)
# Busier, with gpreempt: BE parked most of the time, for the snapshots.
LCB=(--mode lc --prio 12 --wg 8 --wg-us 2000 --period-us 3000 --quiet)
BEA=(--mode be --prio 3 --wg 8 --wg-us 5000 --inflight 2 --duration 120 --quiet)
acct_of() { grep " live=0 .* pid=$1 " /sys/kernel/debug/kfdsim/acct | head -1; }
f() { linefield "$line" "$1"; }

# sample PID: snapshots of the queues file, one awk each, while PID (LC)
# runs, until 5 of them have BE parked (or 300 snapshots: a guest on a busy
# host reads slowly); counts those with every BE queue (prio 3) off the
# hardware and LC (prio 12) in a sliced runlist (par_sliced) or in one
# slice (par_whole).  Then LC is stopped (TERM: it checks its packets).
sample() {
	local r
	par_sliced=0 par_whole=0 snaps=0
	while kill -0 "$1" 2>/dev/null && [ $((par_sliced + par_whole)) -lt 5 ] &&
		[ $snaps -lt 300 ]; do
		snaps=$((snaps + 1))
		r=$(awk '/ prio=3 / {n++; if ($0 ~ / mapped=0 /) p++}
			/ prio=12 / {for (i = 1; i <= NF; i++) if ($i ~ /^slices=/) {sub(/slices=/, "", $i); l = $i}}
			END {if (n && n == p && l != "") print (l > 1) ? "sliced" : "whole"}' $Q)
		case $r in
		sliced) par_sliced=$((par_sliced + 1)) ;;
		whole) par_whole=$((par_whole + 1)) ;;
		esac
	done
	kill -TERM "$1" 2>/dev/null
}

# 1. Oversubscribed by processes.
dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" max_proc=2 quantum_us=5000
$GPLOAD "${BEA[@]}" &
be1=$!
$GPLOAD "${BEA[@]}" &
be2=$!
sleep 0.5
$GPLOAD "${LCA[@]}" --duration 1.5 &
pid=$!
wait $pid
lc_rc=$?
line=$(acct_of $pid)
tap_diag "processes, no gpreempt: LC $line; oversubscribed runlists $(kstat oversubscribed_runlists), slice switches $(kstat hws_slices)"
tap_check "processes, no gpreempt: LC packets exactly once" test "$lc_rc" = 0
tap_check "processes, no gpreempt: 3 processes over max_proc 2 slice the runlist ($(kstat oversubscribed_runlists) runlists, $(kstat hws_slices) switches)" \
	test "$(kstat oversubscribed_runlists)" -gt 0 -a "$(kstat hws_slices)" -gt 0
tap_check "processes, no gpreempt: LC waited for its slice (sliced_ns $(f sliced_ns)), and its periods sum" \
	test "${line:+$(f sliced_ns)}" -gt 0 -a "$(f sum_ns)" = "$(( ${line:+$(f total_ns)} + ${line:+$(f open_ns)} ))"

insmod "$OBJ/module/gpreempt.ko" user_max_priority=15
$GPLOAD "${LCB[@]}" --duration 60 &
pid=$!
sleep 0.3
status=$($CTL status 2>&1)
stats=$($CTL --json stats 2>&1)
metrics=$($CTL metrics 2>&1)
oversub=$(gstat dev_oversub)
sample $pid
wait $pid
lc_rc=$?
tap_diag "processes, gpreempt: BE parked in $((par_sliced + par_whole)) of $snaps snapshots, the runlist sliced in $par_sliced; parks $(gstat preempts)"
tap_check "processes, gpreempt: LC packets exactly once, BE parked ($(gstat preempts) parks)" \
	test "$lc_rc" = 0 -a "$(gstat preempts)" -gt 0
tap_check "processes, gpreempt: a parked process keeps its place: sliced while BE is parked ($par_sliced of $((par_sliced + par_whole)) snapshots)" \
	test "$par_sliced" -gt 0 -a "$par_whole" = 0
tap_check "processes, gpreempt: gp_stats says the device is oversubscribed (dev_oversub $oversub, events $(gstat oversub_events))" \
	test "$oversub" = 1 -a "$(gstat oversub_events)" -ge 1
procs=$(echo "$stats" | jq -r '.devices[0] | "\(.kfd_processes) \(.max_procs)"' 2>/dev/null)
tap_check "processes, gpreempt: stats give the device's KFD processes and how many are mapped at once ($procs)" \
	test "$procs" = "3 2"
tap_check "processes, gpreempt: status warns" grep -q 'time-slices them' <<<"$status"
tap_check "processes, gpreempt: the exporter says it (devices oversubscribed 1, the device's KFD processes 3 of 2)" \
	eval 'grep -qx "gpreempt_devices_oversubscribed 1" <<<"$metrics" &&
		grep -qx "gpreempt_device_kfd_processes{dev=\"0\"} 3" <<<"$metrics" &&
		grep -qx "gpreempt_device_max_processes{dev=\"0\"} 2" <<<"$metrics"'
tap_check "processes, gpreempt: one log line" \
	test "$(dmesg | grep -c 'KFD processes, over the 2 the hardware scheduler maps at once')" = 1
stop_be $be1
rc1=$be_rc
stop_be $be2
tap_check "processes: BE packets exactly once" test "$rc1.$be_rc" = 0.0
wait_for 10 test "$(gstat dev_oversub)" = 0
tap_check "processes: no longer oversubscribed once BE is gone (dev_oversub $(gstat dev_oversub))" \
	test "$(gstat dev_oversub)" = 0
sim_unload

# 2. Oversubscribed by compute queues.
insmod "$OBJ/test/kfdsim/kfdsim.ko" hqds=2 quantum_us=5000
$GPLOAD "${BEA[@]}" --queues 2 &
be=$!
sleep 0.5
$GPLOAD "${LCA[@]}" --duration 1.5 &
pid=$!
wait $pid
lc_rc=$?
line=$(acct_of $pid)
tap_check "queues, no gpreempt: 3 compute queues over hqds 2 slice the runlist, LC waited for its slice (sliced_ns $(f sliced_ns))" \
	test "$lc_rc" = 0 -a "$(kstat oversubscribed_runlists)" -gt 0 -a "${line:+$(f sliced_ns)}" -gt 0
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15
$GPLOAD "${LCB[@]}" --duration 60 &
pid=$!
sleep 0.3
sample $pid
wait $pid
lc_rc=$?
stop_be $be
tap_diag "queues, gpreempt: BE parked in $((par_sliced + par_whole)) of $snaps snapshots, the runlist sliced in $par_sliced"
tap_check "queues, gpreempt: parking BE's queues ends the slicing ($par_whole snapshots with BE parked, $par_sliced of them sliced)" \
	test "$par_whole" -gt 0 -a "$par_sliced" = 0
tap_check "queues, gpreempt: LC and BE packets exactly once, gp_stats not oversubscribed by processes ($(gstat dev_oversub))" \
	test "$lc_rc.$be_rc" = 0.0 -a "$(gstat dev_oversub)" = 0
tap_dmesg_clean "kernel log clean"
sim_unload
tap_done
