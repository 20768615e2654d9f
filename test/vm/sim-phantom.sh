#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An LC queue that KFD itself holds off the hardware must not look pending.
# KFD deactivates queues without touching their dispatch ids: its TTM
# eviction (restored >= 100 ms later), a VM fault or a GPU reset (never
# restored while the process lives), ROCr's or the debugger's suspend.  The
# LC queue's write index stays ahead of its read index and nothing runs; a
# gpreempt that counts it as pending keeps BE parked while the GPU idles.
# First kfdsim's kfd_evict knob alone (the real timelines, and nothing
# leaks at exit), then LC (prio 12, a backlog) and BE (prio 3, busy) under
# gpreempt, with the starvation guard out of the way: LC's TTM eviction
# with a 500 ms restore, then a VM fault that is never restored.  Runs
# inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 24
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
D=/sys/kernel/debug/kfdsim
EV=$D/kfd_evict

# qpasid PRIO: the PASID of kfdsim's first queue at PRIO.
qpasid() { awk -v p="$1" '$1 == "queue" && $0 ~ " prio=" p " " {sub(/.*pasid=/, ""); sub(/ .*/, ""); print; exit}' $D/queues; }
# sample: "LC LC_ACTIVE BE BE_ACTIVE BE_PACKETS": kfdsim's queues at prio 12
# and 3, and how many of them KFD has on the hardware (one read of queues).
sample() {
	awk '$1 == "queue" {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["prio"] == 12) { lc++; lca += f["active"] }
		if (f["prio"] == 3) { be++; bea += f["active"]; bep += f["packets"] }
	} END { printf "%d %d %d %d %d\n", lc, lca, be, bea, bep }' $D/queues
}
lc_off() { set -- $(sample); [ "$1" -gt 0 ] && [ "$2" = 0 ]; }
lc_on() { set -- $(sample); [ "$1" -gt 0 ] && [ "$2" = "$1" ]; }
be_on() { set -- $(sample); [ "$3" -gt 0 ] && [ "$4" = "$3" ]; }
be_off() { set -- $(sample); [ "$3" -gt 0 ] && [ "$4" = 0 ]; }
kstat_is() { [ "$(kstat "$1")" = "$2" ]; }
ks_clean() { ks_idle && refs_zero; }
be_reparked() { is $be state parked && [ "$(qf $be preempts)" -gt "$p0" ]; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "phantom: kfdsim loads"; tap_bail; }

# kfdsim alone: a process with one busy queue at prio 5.
$GPLOAD be --prio 5 --wg 1 --wg-us 1000 --inflight 2 --duration 120 --quiet &
x=$!
wait_for 10 sh -c "grep -q ' prio=5 ' $D/queues"
xp=$(awk '$1 == "queue" && / prio=5 / {sub(/.*pasid=/, ""); sub(/ .*/, ""); print; exit}' $D/queues)
# TTM, two BO validations failing: evicted, then restored after 100 ms + 2 retries.
echo "$xp ttm 0 2" >$EV
tap_check "kfd_evict ttm: evicted, restored after its two failed validations" \
	wait_for 20 kstat_is kfd_restore_ttm 1
tap_check "kfd_evict ttm: each failed validation retried (kfd_restore_ttm_retries 2)" \
	kstat_is kfd_restore_ttm_retries 2
tap_check "kfd_evict ttm: balanced (evicted_refs 0)" wait_for 10 refs_zero
echo "$xp ttm 60000" >$EV
echo "$xp ttm" 2>/dev/null >$EV
tap_check "kfd_evict ttm: a second one while one is pending is refused (kfd_evict_ttm_busy 1)" \
	kstat_is kfd_evict_ttm_busy 1
echo "$xp userptr" >$EV
tap_check "kfd_evict userptr: quiesced and restored 1 ms later" wait_for 20 kstat_is kfd_restore_userptr 1
echo "$xp fault" >$EV
tap_check "kfd_evict fault: the queue is off the hardware" \
	sh -c "grep ' prio=5 ' $D/queues | grep -q 'active=0 evicted=1'"
echo "$xp reset" >$EV
tap_check "kfd_evict: ttm, fault and reset nest in qpd->evicted (evicted_refs 3)" \
	wait_for 10 kstat_is evicted_refs 3
kill -KILL $x
wait $x 2>/dev/null
tap_check "kfd_evict: the exit cancels the pending TTM restore (kfd_evict_cancelled 1)" \
	wait_for 20 kstat_is kfd_evict_cancelled 1
tap_check "kfd_evict: nothing left after the exit (no process, evicted_refs 0)" wait_for 20 ks_clean

# gpreempt: the starvation guard (max_suspend_ms) never unparks BE here, so
# every unpark below is the policy's.
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 max_suspend_ms=600000 ||
	{ tap_not_ok "phantom: gpreempt loads"; rmmod kfdsim; tap_bail; }
$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet --json /tmp/phantom-be.json &
be=$!
# LC's backlog: 8 dispatches of 8 x 20 ms, refilled long before it runs dry.
$GPLOAD be --prio 12 --wg 8 --wg-us 20000 --inflight 8 --duration 600 --quiet &
lc=$!
tap_check "phantom: BE is parked for LC's backlog" wait_for 30 is $be state parked
pasid=$(qpasid 12)
tap_diag "LC pasid $pasid, BE parks $(qf $be preempts), unparks $(qf $be resumes)"
r0=$(qf $be resumes) p0=$(qf $be preempts) o0=$(gstat off_hw_scans)

# TTM eviction of LC, restored 500 ms later.  One awk writes it and then
# reads kfdsim's queues and stats again and again until the restore (in a
# loaded TCG guest a fork alone can outlast a 500 ms window): while LC is
# off the hardware BE may be parked only until gpreempt first sees it (the
# hold), and never again.
t0=$(kstat kfd_restore_ttm)
set -- $(awk -v q=$D/queues -v st=$D/stats -v t0="$t0" -v ev=$EV -v cmd="$pasid ttm 500" 'BEGIN {
	printf "%s\n", cmd > ev
	if (close(ev))
		exit 1
	end = systime() + 30
	while (systime() < end) {
		done = 0
		iters++
		while ((getline l < st) > 0)
			if (split(l, w, " ") == 2 && w[1] == "kfd_restore_ttm" && w[2] != t0)
				done = 1
		close(st)
		if (done)
			break
		lc = lca = be = bea = 0
		while ((getline l < q) > 0) {
			n = split(l, w, " ")
			if (w[1] != "queue")
				continue
			delete f
			for (i = 2; i <= n; i++) { split(w[i], kv, "="); f[kv[1]] = kv[2] }
			if (f["prio"] == 12) { lc++; lca += f["active"] }
			if (f["prio"] == 3) { be++; bea += f["active"] }
		}
		close(q)
		if (!lc || lca)
			continue
		off++
		if (be && bea == be)
			run++
		else if (!run)
			before++
		else
			again++
	}
	printf "%d %d %d %d %d\n", off, run, before, again, iters
}')
off=${1:-0} run=${2:-0} before=${3:-0} again=${4:-0}
tap_diag "TTM window: $5 samples, $(kstat kfd_evict_ttm) TTM evictions and $(kstat kfd_restore_ttm) restores so far; $off samples with LC off the hardware; BE parked in $before before its unpark, running in $run, parked again in $again"
tap_check "phantom TTM: LC was seen off the hardware ($off samples)" test $off -ge 2
tap_check "phantom TTM: BE unparked while LC was off the hardware and not parked again ($run running, $again parked after)" \
	test $run -ge 1 -a $again = 0
tap_check "phantom TTM: LC is back on the hardware after the restore" wait_for 20 lc_on
tap_check "phantom TTM: LC is protected again (BE parked while LC has work)" wait_for 30 be_reparked
tap_diag "BE parks $p0 -> $(qf $be preempts), unparks $r0 -> $(qf $be resumes)"

# A VM fault: LC evicted for good, its process alive.  BE must run, in
# every sample of kfdsim's and gpreempt's state.
echo "$pasid fault" >$EV
tap_check "phantom fault: LC is off the hardware" wait_for 10 lc_off
wait_for 30 be_on
bad=0 n=0
set -- $(sample)
pk0=$5
while [ $n -lt 15 ]; do
	n=$((n + 1))
	lc_off || { bad=$((bad + 1)); tap_diag "sample $n: LC back on the hardware: $(sample)"; }
	be_on || { bad=$((bad + 1)); tap_diag "sample $n: BE off the hardware: $(sample)"; }
	is $be state running || { bad=$((bad + 1)); tap_diag "sample $n: gpreempt has BE $(qf $be state)"; }
	sleep 0.1
done
set -- $(sample)
pk1=$5
tap_check "phantom fault: BE running in all $n samples while LC stays faulted ($bad not)" test $bad = 0
tap_check "phantom fault: BE completed packets meanwhile ($pk0 -> $pk1)" test "$pk1" -gt "$pk0"
tap_check "phantom fault: LC's process is alive" kill -0 $lc
o1=$(gstat off_hw_scans)
tap_check "phantom: gp_stats.off_hw_scans counts the scans ($o0 -> $o1)" test "${o1:-0}" -gt "${o0:-0}" 2>/dev/null

kill -KILL $lc
wait $lc 2>/dev/null
stop_be $be
tap_check "phantom: BE ran every packet exactly once" test $be_rc = 0
tap_check "phantom: LC's exit balances every eviction (evicted_refs 0)" wait_for 20 refs_zero
tap_check "phantom: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
tap_check "phantom: rmmod kfdsim" rmmod kfdsim
tap_dmesg_clean "phantom: kernel log clean"
tap_done
