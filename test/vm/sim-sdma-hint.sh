#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The SDMA pre-preemption hint (issue 8, "Levers"): a latency-critical
# process's copy queue with work makes its priority level busy, so gpreempt
# parks lower compute queues while the input is still being copied, before
# the kernels arrive.  Copy queues themselves are never parked.  With
# sdma_hint=0 the same copies park nothing (the check can fail).
. test/lib/tap.sh
tap_plan 5
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
DBG=/sys/kernel/debug/kfdsim
T=$(mktemp -d)
gstat() { bpftool -j map dump name gp_stats | jq -r ".[0].formatted.value.$1"; }
qparks() {	# tgid -> park count of its queues in gp_queues
	bpftool -j map dump name gp_queues |
		jq --argjson t "$1" '[.[].formatted.value | select(.tgid == $t) | .preempts] | add // 0'
}

# run HINT: BE compute (prio 3) with its own copy queue, and an LC process
# (prio 12) that only copies (5 ms every 20 ms) for 3 s.  Prints the parks
# and whether a copy queue was ever seen suspended or evicted.
run() {
	local be bc lc rc brc sdma_parked=0 be_parked=0
	insmod "$OBJ/test/kfdsim/kfdsim.ko" || return 1
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 sdma_hint="$1" || { rmmod kfdsim; return 1; }
	$GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet \
		--json "$T/be.json" &
	be=$!
	$GPLOAD be --sdma --prio 3 --wg 1 --wg-us 3000 --inflight 2 --duration 60 --quiet &
	bc=$!
	sleep 0.5
	$GPLOAD lc --sdma --prio 12 --wg 1 --wg-us 5000 --period-us 20000 --duration 3 \
		--quiet --json "$T/lc.json" &
	lc=$!
	for _ in $(seq 60); do
		kill -0 $lc 2>/dev/null || break
		grep ' type=sdma' $DBG/queues | grep -q -e 'suspended=1' -e 'evicted=1' &&
			sdma_parked=1
		grep ' type=compute' $DBG/queues | grep -q -e 'suspended=1' -e 'evicted=1' &&
			be_parked=1
		sleep 0.05
	done
	wait $lc
	rc=$?
	local parks
	parks=$(gstat preempts)
	# Counted, not sampled: a short park can fall between two samples.
	[ "$(qparks $be)" -gt 0 ] 2>/dev/null && be_parked=1
	[ "$(qparks $bc)" = 0 ] && [ "$(qparks $lc)" = 0 ] || sdma_parked=1
	kill -TERM $be $bc
	wait $be
	brc=$?
	wait $bc || brc=1
	echo "parks=$parks sdma_parked=$sdma_parked be_parked=$be_parked lc_rc=$rc be_rc=$brc"
	rmmod gpreempt
	rmmod kfdsim
}

dmesg -C
on=$(run 1)
tap_diag "sdma_hint=1: $on"
tap_check "SDMA hint: an LC copy alone parks the lower compute queue" \
	bash -c "echo '$on' | grep -q 'be_parked=1' && ! echo '$on' | grep -q 'parks=0 '"
tap_check "SDMA hint: no copy queue is ever parked (LC's or BE's)" \
	bash -c "echo '$on' | grep -q 'sdma_parked=0'"
tap_check "SDMA hint: every packet ran exactly once" \
	bash -c "echo '$on' | grep -q 'lc_rc=0' && echo '$on' | grep -q 'be_rc=0'"
off=$(run 0)
tap_diag "sdma_hint=0: $off"
tap_check "sdma_hint=0: the same copies park nothing" \
	bash -c "echo '$off' | grep -q 'parks=0 ' && echo '$off' | grep -q 'be_parked=0'"
tap_dmesg_clean "SDMA hint: dmesg clean"
rm -rf "$T"
tap_done
