#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A process killed at any moment while gpreempt parks and unparks it.  On
# 7.x (and ROCm's DKMS tree) KFD tears a process down in
# kfd_process_notifier_release_internal() without p->mutex: its queues are
# dequeued (process_termination_cpsch(): the counters drop, is_active stays
# set, each MQD freed with the dqm lock dropped) and freed (pqm_uninit()),
# and only then is p->mm cleared.  A park or unpark that passed its checks
# before the teardown and reaches update_queue()'s dqm lock after it
# decrements active_queue_count a second time (or leaks +1), writes into the
# freed MQD and reads the freed struct queue.  kfdsim models that teardown
# on 7.x layouts (test/kfdsim/README.md, "Process teardown"), warns when a
# dqm's counters leave its active queues (stats active_count_mismatches),
# and poisons and frees each MQD, so that the memory-debugging guest (SLUB
# debug, KFENCE) reports a write into one.  Its fault knobs widen the
# windows: update_queue sleeps before its dqm lock, the teardown between the
# dequeue and pqm_uninit (the queue outlives its MQD).
#
# LC at level 12 runs 1.5 ms bursts every 4 ms, so gpreempt parks and
# unparks BE every few ms; BE processes at level 3 are started and killed
# with SIGKILL at a random moment of their first 50-250 ms, 8 at once, 200
# times per backend on 7.x layouts (24 before), once with backend=suspend
# (6.12+ layouts) and once with shrink_pct=50.  Pass:
# no counter mismatch, the counters equal the active queues at the end,
# LC's packets all completed exactly once, dmesg clean.  The 7.x layout is
# the one that matters (make check-long boots the 7.x kernel for it,
# test/run-teardown); on 6.12 the teardown waits for the last reference,
# and the same run passes.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
OBJ=${GP_OBJ:-.}
LAYOUT=$OBJ/build/gp_layout.h
GPLOAD=build/gpload
FAULT=/sys/kernel/debug/kfdsim/fault
LANES=8
LC_ARGS="--mode lc --prio 12 --wg 4 --wg-us 1500 --period-us 4000"
BE_ARGS="--mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --cu-mask all"
have() { grep -q "^#define GP_HAVE_$1 1\$" "$LAYOUT"; }
only_lc() { [ "$(kstat processes)" = 1 ]; }
# One read of kfdsim's stats: the dqms' counters against the active queues.
counts_agree() {
	awk '{ v[$1] = $2 } END { exit !(v["active_queue_count"] == v["active_queues"] &&
		v["active_cp_queue_count"] == v["active_cp_queues"]) }' /sys/kernel/debug/kfdsim/stats
}

# opened PID: the process has kfdsim open (a process killed before that has
# no teardown to race).
opened() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q kfdsim; }
# lane N: start and SIGKILL N BE processes, one at a time, each at a random
# moment of its first 50-250 ms with kfdsim open (in a loaded guest the
# exec alone can take longer than that).
lane() {
	local i be
	for ((i = 0; i < $1; i++)); do
		$GPLOAD $BE_ARGS --duration 60 --quiet 2>/dev/null &
		be=$!
		wait_for 10 opened $be
		sleep "0.$(printf %03d $((50 + RANDOM % 200)))"
		kill -KILL $be 2>/dev/null
		wait $be 2>/dev/null
	done
}

# round NAME GPREEMPT-ARGS: the kills with gpreempt loaded so, then the checks.
round() {
	local name=$1 t0 rel0 pre0 res0 lc lc_rc i per rel pre res mm lanes
	dmesg -C
	if ! insmod "$OBJ/test/kfdsim/kfdsim.ko" ||
	   ! insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 $2; then
		tap_not_ok "$name: kfdsim and gpreempt load"
		tap_not_run 4 "$name: not loaded"
		rmmod gpreempt 2>/dev/null
		rmmod kfdsim 2>/dev/null
		return
	fi
	echo 300 >$FAULT/update_queue_lock_delay_us
	echo 5000 >$FAULT/teardown_delay_us
	# LC outlives the kills (stopped by TERM after them): 2000 take minutes.
	$GPLOAD $LC_ARGS --duration $((KILLS > 300 ? KILLS * 2 : 600)) --json /tmp/lc.json --quiet &
	lc=$!
	wait_for 30 only_lc
	t0=$SECONDS
	rel0=$(kstat notifier_releases)
	pre0=$(gstat preempts)
	res0=$(gstat resumes)
	per=$(((KILLS + LANES - 1) / LANES))
	lanes=()
	for ((i = 0; i < LANES; i++)); do
		lane $per &
		lanes+=($!)
	done
	wait "${lanes[@]}"
	wait_for 60 only_lc
	rel=$(($(kstat notifier_releases) - rel0))
	pre=$(($(gstat preempts) - pre0))
	res=$(($(gstat resumes) - res0))
	mm=$(gstat mm_gone)
	tap_diag "$name: $((per * LANES)) BE processes killed in $((SECONDS - t0)) s ($LANES at once); $rel teardowns; BE parked $pre and unparked $res times; kfdsim fault counts: $(grep -E '^(teardown_delays|update_queue_lock_delays) ' $FAULT/counts | tr '\n' ' ')gp_stats mm_gone ${mm:-none}"
	# A process killed before it opened kfdsim has no teardown.
	if [ $((rel * 4)) -ge $((per * LANES * 3)) ] && [ "$pre" -ge $((per * LANES / 2)) ] && [ "$res" -ge $((per * LANES / 2)) ]; then
		tap_ok "$name: most killed BE processes torn down while BE was parked and unparked"
	else
		tap_not_ok "$name: most killed BE processes torn down while BE was parked and unparked ($rel teardowns of $((per * LANES)) kills, $pre parks, $res unparks)"
	fi
	tap_check "$name: no dqm counter left its active queues (active_count_mismatches $(kstat active_count_mismatches))" \
		test "$(kstat active_count_mismatches)" = 0
	tap_check "$name: kfdsim's active counters equal its active queues (active_queue_count $(kstat active_queue_count), active_queues $(kstat active_queues))" \
		counts_agree
	kill -TERM $lc
	wait $lc
	lc_rc=$?
	tap_check "$name: LC: every packet completed exactly once" test $lc_rc -eq 0
	echo 0 >$FAULT/update_queue_lock_delay_us
	echo 0 >$FAULT/teardown_delay_us
	sim_unload
	tap_dmesg_clean "$name: kernel log clean"
}

# Five lines a round: suspend where the layout has it, then shrink.
rounds=1
have queue_properties__is_suspended && rounds=2
tap_plan $((5 * rounds))

# Kills per backend: 200 on 7.x layouts (GP_TEARDOWN_KILLS: 2000 from
# test/run-teardown, make check-long), 24 before (one BE process every
# 0.3-0.5 s in a TCG guest on a loaded host, 8 at once).
if have kfd_process__context_id; then
	KILLS=${GP_TEARDOWN_KILLS:-200}
	tap_diag "kernel $(uname -r): the 7.x teardown (queues freed at the mm's release, without p->mutex)"
else
	KILLS=24
	tap_diag "kernel $(uname -r): the queues are freed at the last reference (before 7.x)"
fi
# 7.3.4's first slab validation after boot reports one kmem_cache_node
# object of the boot ("Freepointer corrupt", untainted, in an idle guest)
# and fixes it: one pass first, so that each round's check sees its own.
if tap_memdebug; then
	for f in /sys/kernel/slab/*/validate; do
		echo 1 >"$f" 2>/dev/null
	done
fi
if have queue_properties__is_suspended; then
	round suspend "backend=suspend"
fi
round shrink "shrink_pct=50"
tap_done
