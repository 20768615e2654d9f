#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim's accounting of a busy queue's time (debugfs acct): from the CP's
# first sight of its work to its last packet's retirement, split into
# fetch, detect, cu_wait, cwsr_save, remap_preempt, remap_wait, unmapped, sliced
# and run.  Checked, HWS (runlist_us 100), LC 8 workgroups x 2 ms:
#  1. alone: the categories sum to the measured busy time (every period,
#     acct_mismatches 0), nothing in detect/cu_wait/cwsr_save/remap/unmapped,
#     and it ran exactly its service time; the time beyond it (fetch and
#     cp_late: the emulator's CP waking up late) is printed, not bounded, as
#     it grows with the host's load (40 % in one clean-clone run beside a
#     DKMS build);
#  2. remapped while its waves run (another process creates and destroys
#     queues: each is a runlist change): remap_hits is the queue's own
#     preemptions counter, its CWSR saves were all restored, and
#     remap_preempt_ns lies between remap_hits x runlist_us and the
#     device's runlist changes x runlist_us; it ran beyond its service time
#     at most its restores x cwsr_restore_us; the sum still holds;
#  3. over BE with gpreempt: LC waits for BE's CUs until the park (detect)
#     and for the park's runlist change (remap_wait).
# No wall-clock threshold: kfdsim's own clock on both sides.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 18
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
RL=100
LCA=(--mode lc --prio 12 --wg 8 --wg-us 2000 --period-us 8000 --quiet)
# acct_of PID: the acct line of PID's (destroyed) queue.
acct_of() { grep " live=0 .* pid=$1 " /sys/kernel/debug/kfdsim/acct | head -1; }
f() { linefield "$line" "$1"; }
# sum_ok: the categories sum to the busy time, exactly (ns).
sum_ok() { [ -n "$line" ] && [ "$(f sum_ns)" = "$(( $(f total_ns) + $(f open_ns) ))" ]; }
zero() { local k; for k; do [ "$(f "${k}_ns")" = 0 ] || return 1; done; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" runlist_us=$RL
$GPLOAD "${LCA[@]}" --duration 1.5 &
pid=$!
wait $pid
lc_rc=$?
line=$(acct_of $pid)
tap_diag "alone: $line"
tap_check "alone: LC packets exactly once" test "$lc_rc" = 0
tap_check "alone: requests accounted ($(f requests))" test "${line:+$(f requests)}" -ge 5
tap_check "alone: categories sum to the busy time ($(f sum_ns) = $(f total_ns) + $(f open_ns)), no period off ($(kstat acct_mismatches))" \
	sum_ok -a "$(kstat acct_mismatches)" = 0
tap_check "alone: no detect, cu_wait, cwsr_save, remap, unmapped or sliced time" \
	zero detect cu_wait cwsr_save remap_preempt remap_wait unmapped sliced
tap_check "alone: it ran exactly its service time (run_ns $(f run_ns) = ideal_ns $(f ideal_ns))" \
	test -n "$line" -a "$(f run_ns)" = "$(f ideal_ns)"
tap_diag "alone: busy time beyond the service time $(( ${line:+$(f total_ns)} - ${line:+$(f ideal_ns)} )) ns of $(f ideal_ns) (fetch $(f fetch_ns), cp_late $(f cp_late_ns))"
sim_unload

insmod "$OBJ/test/kfdsim/kfdsim.ko" runlist_us=$RL
$GPLOAD --mode churn --prio 3 --wg 1 --wg-us 100 --gap-ms 2 --duration 60 --quiet &
churn=$!
sleep 0.3
u0=$(kstat runlist_updates)
$GPLOAD "${LCA[@]}" --duration 1.5 &
pid=$!
wait $pid
lc_rc=$?
u1=$(kstat runlist_updates)
kill -TERM $churn
wait $churn
line=$(acct_of $pid)
tap_diag "remapped: $line (runlist changes during LC: $((u1 - u0)))"
tap_check "remapped: LC packets exactly once" test "$lc_rc" = 0
hits=${line:+$(f remap_hits)}
tap_check "remapped: remaps with its waves in flight ($hits) = its preemptions ($(f preemptions)), > 0" \
	test "${hits:-0}" -gt 0 -a "$hits" = "$(f preemptions)"
tap_check "remapped: its CWSR saves ($(f saves)) >= those remaps and all restored ($(f restores))" \
	test "$(f saves)" -ge "$hits" -a "$(f saves)" = "$(f restores)"
rp=${line:+$(f remap_preempt_ns)}
tap_check "remapped: remap_preempt_ns $rp in [hits x runlist_us, runlist changes x runlist_us] = [$((hits * RL * 1000)), $(((u1 - u0) * RL * 1000))]" \
	test "${rp:-0}" -ge $((hits * RL * 1000)) -a "${rp:-0}" -le $(((u1 - u0) * RL * 1000))
tap_check "remapped: it ran beyond its service time at most its restores x cwsr_restore_us ($(f run_ns) - $(f ideal_ns) <= $(f restores) x 10 us)" \
	test "${line:+$(f run_ns)}" -ge "$(f ideal_ns)" -a \
	$(( ${line:+$(f run_ns)} - ${line:+$(f ideal_ns)} )) -le $(( ${line:+$(f restores)} * 10000 ))
tap_check "remapped: categories sum to the busy time, no period off ($(kstat acct_mismatches))" \
	sum_ok -a "$(kstat acct_mismatches)" = 0
sim_unload

insmod "$OBJ/test/kfdsim/kfdsim.ko" runlist_us=$RL
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15
$GPLOAD --mode be --prio 3 --wg 8 --wg-us 5000 --inflight 2 --duration 60 --quiet &
be=$!
sleep 0.5
$GPLOAD "${LCA[@]}" --duration 1.5 &
pid=$!
wait $pid
lc_rc=$?
parks=$(gstat preempts)
stop_be $be
line=$(acct_of $pid)
tap_diag "over BE: $line (parks $parks)"
tap_check "over BE: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
tap_check "over BE: LC waited for BE's CUs before the park (detect $(f detect_ns) ns) and for its runlist change (remap_wait $(f remap_wait_ns) ns)" \
	test "${line:+$(f detect_ns)}" -gt 0 -a "${line:+$(f remap_wait_ns)}" -gt 0 -a "${parks:-0}" -gt 0
tap_check "over BE: categories sum to the busy time, no period off ($(kstat acct_mismatches))" \
	sum_ok -a "$(kstat acct_mismatches)" = 0
sim_unload

# 4. A hostile owner's write index (threat-model row 41): an idle queue whose
# write index jumps ahead of its read index (by 1 or by 2^40, no packet
# behind it) and back every millisecond, beside LC in another process.  It
# opens and closes busy periods of its own queue only: every period still
# sums (acct_mismatches 0), LC ran exactly its service time, kfdsim's log
# has no report.
insmod "$OBJ/test/kfdsim/kfdsim.ko" runlist_us=$RL
dmesg -C
$GPLOAD --mode idle --prio 3 --wptr-flap --duration 3 >/tmp/flap.out 2>&1 &
flap=$!
sleep 0.3
$GPLOAD "${LCA[@]}" --duration 1.5 &
pid=$!
wait $pid
lc_rc=$?
wait $flap
flap_rc=$?
line=$(acct_of $flap)
flaps=$(sed -n 's/^gpload: wptr_flaps=//p' /tmp/flap.out)
tap_diag "hostile write index: ${flaps:-no} flaps; its queue: $line"
tap_check "hostile write index: its busy periods are its own queue's, and each sums ($(f requests) periods, $(f sum_ns) = $(f total_ns) + $(f open_ns))" \
	test "${flaps:-0}" -gt 100 -a "${line:+$(f requests)}" -gt 10 -a "$flap_rc" = 0 && sum_ok
line=$(acct_of $pid)
tap_check "hostile write index: LC beside it ran exactly its service time (run_ns $(f run_ns) = ideal_ns $(f ideal_ns)), its packets exactly once, its periods sum" \
	test -n "$line" -a "$(f run_ns)" = "$(f ideal_ns)" -a "$lc_rc" = 0 && sum_ok
tap_check "hostile write index: no period off anywhere ($(kstat acct_mismatches))" test "$(kstat acct_mismatches)" = 0
tap_dmesg_clean "hostile write index: kernel log clean"
wait_for 30 ks_idle
rmmod kfdsim
tap_done
