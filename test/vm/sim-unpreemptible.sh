#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A wave that cannot be preempted (kfdsim KFDSIM_PKT_F_NOPREEMPT: a trap
# handler that never finishes the CWSR save).  On the real driver the unmap
# that meets it times out: KFD resets that queue (6.12/7.3 HWS; 7.3 MES) or
# the GPU.  Every gpreempt park is one more unmap, so gpreempt must stop
# parking on a device that has shown such a wave: at most one failed unmap,
# then a fence with one log line, and nobody else reset.  The same workload
# without gpreempt trips over the wave too (the BE process's own exit unmaps
# it): gpreempt must not add resets.  Under HWS (hang_model of the kernel:
# 6.12 here, queue reset) and under MES with hang_model=7.3 (MES resets the
# queue; 6.12's MES resets the whole GPU, which no scheduler can avoid once
# the wave is hit).  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
KS_ARGS="unmap_latency_ms=1000 mes_timeout_ms=1000 fence_timeout_ms=300 gpu_reset_ms=300"
TR=/sys/kernel/tracing
mountpoint -q $TR || mount -t tracefs nodev $TR
# No comm recording: with it, enabling an event hooks sched_switch, which
# patches __schedule's static key while both vCPUs run it, and a TCG guest
# has oopsed on that (int3 in __schedule).  The event needs no comm.
echo 0 >$TR/options/record-cmd

# fenced_parks: p1, p2, p3: the successful parks (gpreempt:preempt with ret
# 0) begun before the fence's log line (the slow park that fenced it among
# them: its event comes when its call returns), between it and the
# recovery's, and after it, by the tracepoint's and the log's timestamps
# (one clock), the event's time less its call's: however slow
# the guest is to look, a park inside the fence is seen.  win: the fence's
# length as logged, in ms.
fenced_parks() {
	local f r
	echo 0 >$TR/events/gpreempt/preempt/enable
	f=$(dmesg | sed -n 's/^\[ *\([0-9.]*\)\] gpreempt: preemption failed on a device.*/\1/p' | head -n 1)
	r=$(dmesg | sed -n 's/^\[ *\([0-9.]*\)\] gpreempt: device recovered.*/\1/p' | head -n 1)
	read -r p1 p2 p3 < <(sed -n 's/.* \([0-9]*\.[0-9]*\): preempt: .* ret=0 took_ns=\([0-9]*\).*/\1 \2/p' $TR/trace |
		awk -v f="${f:-0}" -v r="${r:-1e9}" '{ s = $1 - $2 / 1e9; if (s < f) a++; else if (s < r) b++; else c++ }
			END { print a + 0, b + 0, c + 0 }')
	win=$(awk -v f="${f:-0}" -v r="${r:-0}" 'BEGIN { printf "%d", (r - f) * 1000 }')
}

# round SCHED GP(0|1) EXTRA...: LC bursts at 12, an unmanaged steady process
# at 7 (started before gpreempt, adopt_existing=0), a managed BE2 at 3, then
# BE at 3 with one no-preempt workgroup; BE is killed once the fence is
# over (after 4 s without gpreempt).  Sets
# resets (queues_reset + gpu_resets), timeouts, lc_rc, mid_rc, be2_rc,
# fences, p1, p2, p3, win (fenced_parks),
# logs (gpreempt's fence lines), bad (kernel log splats).
round() {
	local sched=$1 gp=$2 mid lc be2 be
	shift 2
	dmesg -C
	insmod "$OBJ/test/kfdsim/kfdsim.ko" sched="$sched" $KS_ARGS "$@" ||
		{ tap_not_ok "$sched: kfdsim loads"; tap_bail; }
	$GPLOAD be --prio 7 --wg 2 --wg-us 1000 --inflight 2 --duration 7 --quiet &
	mid=$!
	sleep 0.3
	if [ "$gp" = 1 ]; then
		insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 adopt_existing=0 ||
			{ tap_not_ok "$sched: gpreempt loads"; tap_bail; }
		echo 0 >$TR/tracing_on
		: >$TR/trace
		echo 1 >$TR/events/gpreempt/preempt/enable
		echo 1 >$TR/tracing_on
	fi
	$GPLOAD lc --prio 12 --wg 4 --wg-us 2000 --period-us 30000 --duration 6 --quiet &
	lc=$!
	$GPLOAD be --prio 3 --wg 4 --wg-us 2000 --inflight 2 --duration 6 --quiet &
	be2=$!
	sleep 0.5
	$GPLOAD be --prio 3 --wg 2 --wg-us 2000 --inflight 2 --nopreempt-us 9000000 \
		--duration 30 --quiet &
	be=$!
	fences=0 p1=0 p2=0 p3=0 win=
	if [ "$gp" = 1 ]; then
		wait_for 60 stat_ge dev_fences 1
		fences=$(gstat dev_fences)
		# Through the fence (2 s) and its recovery, however slow the guest.
		wait_for 60 sh -c 'dmesg | grep -q "device recovered"'
		sleep 0.5
		fenced_parks
	else
		sleep 4
	fi
	kill -KILL $be 2>/dev/null
	wait $be 2>/dev/null
	wait $lc
	lc_rc=$?
	wait $mid
	mid_rc=$?
	wait $be2
	be2_rc=$?
	if [ "$gp" = 1 ]; then
		$CTL status | grep -E 'fenced|preempts' | sed 's/^/# /'
		dmesg | grep -E 'preemption failed on a device|device recovered' | sed 's/^/# /'
		rmmod gpreempt
	fi
	wait_for 30 ks_idle	# BE's exit (its last unmap) is over
	timeouts=$(kstat preempt_timeouts)
	resets=$(($(kstat queues_reset) + $(kstat gpu_resets)))
	logs=$(dmesg | grep -c 'preemption failed on a device')
	bad=$(dmesg | grep -cE "$TAP_DMESG_BAD")
	rmmod kfdsim
}

scheds="hws mes"
tap_plan $((10 * $(wc -w <<<"$scheds")))	# ten lines a scheduler
for sched in $scheds; do
	extra=
	[ $sched = mes ] && extra=hang_model=7.3
	round $sched 0 $extra
	r0=$resets
	tap_diag "$sched without gpreempt: queues_reset+gpu_resets $r0, preemptions timed out $timeouts"
	round $sched 1 $extra
	r1=$resets
	tap_diag "$sched with gpreempt: queues_reset+gpu_resets $r1, preemptions timed out $timeouts, fences $fences, parks $p1 before the fence, $p2 in its $win ms, $p3 after"
	tap_check "$sched: the wave is hit (a preemption timed out) with gpreempt" test "$timeouts" -ge 1
	tap_check "$sched: gpreempt makes at most one failed unmap ($timeouts)" test "$timeouts" -le 1
	tap_check "$sched: gpreempt fences the device once (dev_fences $fences)" test "$fences" = 1
	tap_check "$sched: one log line for it ($logs)" test "$logs" = 1
	tap_check "$sched: no park on the fenced device ($p2 in its $win ms; $p1 before, $p3 after)" \
		test "$p2" = 0 -a "$p1" -ge 1 -a "$win" -ge 1000
	tap_check "$sched: LC not reset (every packet exactly once)" test "$lc_rc" = 0
	tap_check "$sched: the unmanaged process not reset" test "$mid_rc" = 0
	tap_check "$sched: the other BE not reset" test "$be2_rc" = 0
	tap_check "$sched: resets with gpreempt <= without ($r1 <= $r0)" test "$r1" -le "$r0" -a "$r0" -ge 1
	tap_check "$sched: kernel log clean" test "$bad" = 0
done
tap_done
