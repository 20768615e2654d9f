#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# KFD evicts a whole process from inside the MMU notifier of each of its
# USERPTR buffers (amdgpu_hmm_invalidate_hsa() -> amdgpu_amdkfd_evict_userptr()
# -> kgd2kfd_quiesce_mm(), under dqm_lock) and restores it 1 ms later: a
# process's own munmap or madvise(MADV_DONTNEED) of such a range reaches
# KFD's eviction path at will.  BE does that in a loop while gpreempt parks
# it for LC, under each backend: the evictions happen, gpreempt keeps
# parking BE, every packet runs once, and no eviction is left behind.
# Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
backends="suspend evict"
tap_plan $((10 * $(wc -w <<<"$backends") + 2))	# ten lines a backend
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
T=$(mktemp -d)
pre_of() { qfield "$1" preempts; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "userptr: kfdsim loads"; tap_bail; }
for backend in $backends; do
	n="userptr $backend"
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=$backend ||
		{ tap_not_ok "$n: gpreempt loads"; tap_not_run 9 "$n: not loaded"; continue; }
	ev0=$(kstat kfd_evict_userptr)
	rs0=$(kstat kfd_restore_userptr)
	mg0=$(kstat kfd_evict_userptr_merged)
	$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet \
		--userptr-loop 200 --json "$T/be.json" >"$T/be.out" &
	be=$!
	sleep 1
	$GPLOAD lc --prio 12 --wg 4 --wg-us 1000 --period-us 3000 --duration 4 --quiet \
		--json "$T/lc.json"
	lrc=$?
	pre=$(pre_of $be)
	res=$(qfield $be resumes)
	ev=$(($(kstat kfd_evict_userptr) - ev0))
	tap_diag "$n: userptr evictions $ev, restores $(($(kstat kfd_restore_userptr) - rs0)), merged $(($(kstat kfd_evict_userptr_merged) - mg0)); BE parks $pre, unparks $res"
	tap_check "$n: BE's invalidations evict it through KFD's notifier (kfd_evict_userptr +$ev)" \
		test "$ev" -gt 0
	tap_check "$n: BE parked and unparked for LC (${pre:-none}/${res:-none})" \
		test "${pre:-0}" -gt 0 -a "${res:-0}" -gt 0
	tap_check "$n: BE runs again after LC" wait_for 30 state_is $be 0
	kill -TERM $be
	wait $be
	brc=$?
	tap_diag "$n: BE: $(grep userptr_invalidations "$T/be.out")"
	tap_check "$n: BE's loop ran to the end (rc=0)" grep -q 'userptr_invalidations=[1-9][0-9]* rc=0' "$T/be.out"
	tap_check "$n: LC and BE: every packet ran exactly once" test $lrc = 0 -a $brc = 0
	tap_check "$n: every userptr eviction restored (kfd_restore_userptr = kfd_evict_userptr)" \
		wait_for 10 sh -c "[ \$(awk '\$1 == \"kfd_evict_userptr\" {e=\$2} \$1 == \"kfd_restore_userptr\" {r=\$2} \$1 == \"kfd_evict_cancelled\" {c=\$2} END {print e - r - c}' /sys/kernel/debug/kfdsim/stats) = 0 ]"
	tap_check "$n: no eviction left behind (kfdsim evicted_refs $(kstat evicted_refs))" wait_for 30 refs_zero
	tap_check "$n: gpreempt holds no eviction (evicts_outstanding $(gstat evicts_outstanding))" \
		test "$(gstat evicts_outstanding)" = 0
	tap_check "$n: the dqm's active counters agree (active_count_mismatches $(kstat active_count_mismatches))" \
		test "$(kstat active_count_mismatches)" = 0
	tap_check "$n: rmmod gpreempt" rmmod gpreempt
done
wait_for 30 ks_idle
tap_check "userptr: rmmod kfdsim" rmmod kfdsim
tap_dmesg_clean "userptr: kernel log clean"
rm -rf "$T"
tap_done
