#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shadow mode: with enable=0 gpreempt parks nothing, and counts what it
# would have done.  One workload (BE at 3 with work all the time, LC at 12
# every 50 ms for 4 s, a 20 ms hold: each LC request is one busy period,
# one park and one unpark of BE) in four interleaved rounds, shadow,
# enabled, shadow, enabled.  Shadow rounds: no queue parked, the parks it
# would make counted on BE's queue and none on LC's, one backend call per
# action, LC's level waited beside BE; their parks agree with the enabled
# rounds' real parks (the spread is printed).  Then the evict backend in
# shadow mode: one call moves both queues of BE's process.  gpreemptctl
# shows it (status text, stats --json).  Counts only, no clock.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 13
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
P=/sys/module/gpreempt/parameters

# two PID PID: both processes' first queue's shadow_parks from one dump (x: none).
two() {
	bpftool -j map dump name gp_queues | jq -r --argjson a "$1" --argjson b "$2" '
		[(map(select(.formatted.value.tgid == $a))[0].formatted.value.shadow_parks // "x"),
		 (map(select(.formatted.value.tgid == $b))[0].formatted.value.shadow_parks // "x")] |
		join(" ")'
}
sum() { bpftool -j map dump name gp_stats | jq -r ".[0].formatted.value | $1"; }
# round ENABLE [BE args]: one LC run over BE; sets the deltas of this round.
round() {
	local en=$1 s0 lc bq lq
	shift
	echo "$en" >$P/enable
	ticks_pass 3
	s0=$(sum '[.preempts, .resumes, .shadow_parks, .shadow_unparks, .shadow_remaps, .lc_wait_ns[12], .shadow_dev_remaps[0]] | join(" ")')
	$GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet "$@" &
	be=$!
	sleep 0.5
	$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 50000 --duration 4 --quiet &
	lc=$!
	# Both queues in one read of the map, and in shadow mode BE's first
	# parks counted (LC's run is about 80 requests: within its first few).
	for _ in $(seq 200); do
		read -r bq lq <<<"$(two $be $lc)"
		[ "$lq" != x ] && { [ "$en" = 1 ] || [ "$bq" != x -a "$bq" != 0 ]; } && break
		sleep 0.05
	done
	active=$(gstat shadow_active)
	status=$($CTL status 2>&1)
	wait $lc
	lc_rc=$?
	stop_be $be
	rc="$rc$lc_rc$be_rc"
	read -r d_pre d_res d_sp d_su d_rm d_wait d_dev <<<"$(sum "[.preempts, .resumes, .shadow_parks, .shadow_unparks, .shadow_remaps, .lc_wait_ns[12], .shadow_dev_remaps[0]] | [., [$(tr ' ' , <<<"$s0")]] | transpose | map(.[0] - .[1]) | join(\" \")")"
	be_q=$bq lc_q=$lq
}

dmesg -C
rc=
insmod "$OBJ/test/kfdsim/kfdsim.ko"
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 hysteresis_us=20000 max_suspend_ms=60000
round 0
s1="$d_pre $d_res $d_sp $d_su $d_rm $d_wait $d_dev" s1_be=$be_q s1_lc=$lc_q s1_active=$active
s1_status=$status
round 1
e1="$d_pre $d_res" e1_active=$active
round 0
s2="$d_pre $d_res $d_sp $d_su $d_rm $d_wait $d_dev"
round 1
e2="$d_pre $d_res"
tap_diag "shadow rounds (parks unparks shadow_parks shadow_unparks calls lc_wait_ns dev0): $s1 | $s2"
tap_diag "enabled rounds (parks unparks): $e1 | $e2"
read -r a1 b1 sp1 su1 rm1 w1 dv1 <<<"$s1"
read -r a2 b2 sp2 su2 rm2 w2 dv2 <<<"$s2"
read -r ep1 _ <<<"$e1"
read -r ep2 _ <<<"$e2"

tap_check "shadow: nothing parked or unparked (real parks $a1 and $a2, unparks $b1 and $b2)" \
	test "$a1.$b1.$a2.$b2" = 0.0.0.0
tap_check "shadow: gp_stats.shadow_active is 1 with enable=0, 0 with enable=1 ($s1_active, $e1_active)" \
	test "$s1_active.$e1_active" = 1.0
tap_check "shadow: parks BE would have had counted ($sp1 and $sp2), on BE's queue ($s1_be), none on LC's ($s1_lc)" \
	test "${sp1:-0}" -gt 0 -a "${sp2:-0}" -gt 0 -a "${s1_be:-0}" -gt 0 -a "$s1_lc" = 0
tap_check "shadow: each park unparked again (parks $sp1/$sp2, unparks $su1/$su2)" \
	test "$((sp1 - su1))" -ge 0 -a "$((sp1 - su1))" -le 1 -a "$((sp2 - su2))" -ge 0 -a "$((sp2 - su2))" -le 1
tap_check "shadow: one backend call per action of a one-queue BE, all on device 0 ($rm1 = $sp1 + $su1, device 0: $dv1)" \
	test "$rm1" = $((sp1 + su1)) -a "$dv1" = "$rm1" -a "$rm2" = $((sp2 + su2))
tap_check "shadow: LC's level waited beside BE (lc_wait_ns[12] +$w1, +$w2)" \
	test "${w1:-0}" -gt 0 -a "${w2:-0}" -gt 0
tap_check "enabled: BE parked for real ($ep1 and $ep2 parks)" test "${ep1:-0}" -gt 0 -a "${ep2:-0}" -gt 0
# One park per LC busy period in either mode: LC's ~80 requests.  Shadow
# mode cannot see its own parks' effect (BE keeps running, LC runs slower
# beside it), so it agrees within a factor, not exactly.
lo=$(( (ep1 < ep2 ? ep1 : ep2) / 2 )) hi=$(( (ep1 > ep2 ? ep1 : ep2) * 2 ))
tap_check "shadow parks agree with the enabled rounds' ($sp1, $sp2 within $lo..$hi)" \
	test "$sp1" -ge "$lo" -a "$sp1" -le "$hi" -a "$sp2" -ge "$lo" -a "$sp2" -le "$hi"
tap_check "gpreemptctl status: the shadow block and BE's line (pid $be)" \
	bash -c 'grep -q "^shadow mode (on: enable=0" <<<"$0" && grep -q "^  pid [0-9]* (gpload): [1-9][0-9]* parks" <<<"$0" && grep -q "^waited beside lower work" <<<"$0"' "$s1_status"
ctl=$($CTL --json stats)
raw=$(sum '[.shadow_parks, .shadow_remaps] | join(" ")')
tap_check "gpreemptctl stats --json: shadow counters as gp_stats has them ($raw)" \
	test "$(jq -r '[.shadow_parks, .shadow_remaps] | join(" ")' <<<"$ctl")" = "$raw"

# The evict backend: one eviction moves both queues of BE's process.
echo evict >$P/backend
round 0 --queues 2
tap_check "shadow, evict: one call per process for both BE queues ($d_rm calls, $d_sp parks, $d_su unparks)" \
	test "${d_rm:-0}" -gt 0 -a "$((2 * d_rm))" = $((d_sp + d_su)) -a "$d_pre" = 0
tap_check "LC and BE packets exactly once in every round" test "$rc" = 0000000000
sim_unload
tap_dmesg_clean "sim-shadow"
tap_done
