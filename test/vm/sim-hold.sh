#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hold: a level stays busy for hysteresis_us after its last work.  LC
# arrives every 30 ms; with hysteresis_us=20000 BE is parked while LC has
# work and released after 20 ms of LC idle, between requests; with 300 ms
# it stays parked across them (counts of unparks, no clock), unless the
# hold is learned from LC's gaps (hold_payback_pct=200, off by default): then
# it runs between them again; gp_stats.hold_us shows the hold, the queue's
# learned_hold_ns what it learned; every packet runs exactly once.
# The latency percentiles of gp_stats (detection, park and unpark
# calls): present in gpreemptctl stats (text and --json), ordered
# (p50 <= p90 <= p99 <= max), their counts those of gp_stats (preempts,
# resumes, the buckets, the power-of-two histograms).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 18
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
HYST=20000
# lat_read: gpreemptctl's stats --json (ctl) and bpftool's gp_stats (raw), once
# two reads agree on the counts (no park or unpark in between).
lat_read() {
	local i
	for i in $(seq 50); do
		ctl=$($CTL --json stats) && raw=$(bpftool -j map dump name gp_stats | jq -c '.[0].formatted.value') &&
			[ "$(jq -c '[.preempts, .resumes, .latency.detect.count]' <<<"$ctl")" = \
			  "$(jq -c '[.preempts, .resumes, .detect_lat.count]' <<<"$raw")" ] && return 0
		sleep 0.1
	done
	return 1
}
run() {	# LC every 30 ms over BE, 4 s; $1: hysteresis_us, then more parameters
	insmod "$OBJ/test/kfdsim/kfdsim.ko"
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 hysteresis_us="$@"
	$GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet &
	be=$!
	sleep 0.5
	$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 30000 --duration 4 --quiet &
	lc=$!
	# After about 100 of LC's gaps: what its queue learned.
	sleep 3
	learned=$(qfield $lc learned_hold_ns) nlearned=$(gstat holds_learned)
	payback=$(gstat hold_payback_us)
	wait $lc
	lc_rc=$?
	hold=$(gstat hold_us) parks=$(gstat preempts) resumes=$(gstat resumes)
	lat_read
	ctl_text=$($CTL stats)
	tick_age=$($CTL --json status | jq -r .stats.tick_age_ms)
	health_out=$(GPREEMPT_CTL=$CTL TMPDIR=$(mktemp -d) bash deploy/gpreempt-node.sh health 2>&1; echo "rc=$?")
	stop_be $be
	sim_unload
}
dmesg -C
# A hold far above LC's 30 ms period: LC's level never goes idle for that
# long, so BE is released only after LC's last request (the starvation
# guard out of the way), not between requests.
run 300000 max_suspend_ms=60000
long_resumes=$resumes long_parks=$parks long_rc=$lc_rc.$be_rc
off_learned=$learned off_n=$nlearned off_payback=$payback
# The same hold, learned from LC's gaps (hold_payback_pct=200):
# each of its ~28 ms gaps pays many times over for a park and an unpark
# (a few ms of KFD calls each), so its level stops holding BE at the first
# idle scan and BE runs between requests.
run 300000 max_suspend_ms=60000 hold_payback_pct=200
learn_resumes=$resumes learn_parks=$parks learn_rc=$lc_rc.$be_rc
learn_text=$ctl_text learn_hold=$learned learn_n=$nlearned learn_payback=$payback
run $HYST
tap_check "hold: hold_us is hysteresis_us ($hold)" test "$hold" = $HYST
tap_check "hold: BE parked and released ($parks/$resumes)" test "${parks:-0}" -gt 0 -a "${resumes:-0}" -gt 0
# LC's ~130 requests each leave about 28 ms idle: a 20 ms hold runs out
# between them and BE is released many times; a 300 ms hold never does.
tap_check "hold: a 20 ms hold releases BE between LC's requests ($resumes unparks)" test "${resumes:-0}" -ge 10
tap_check "hold: a 300 ms hold keeps BE parked across them ($long_parks parks, $long_resumes unparks)" \
	test "${long_parks:-0}" -ge 1 -a "${long_resumes:-99}" -le 2 -a "$long_rc" = 0.0
tap_check "hold: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
tap_check "learned hold: off (hold_payback_pct=0, the default): no queue learns, no payback ($off_learned, $off_n, $off_payback)" \
	test "$off_learned" = 0 -a "$off_n" = 0 -a "$off_payback" = 0
tap_check "learned hold: LC's queue holds under 1 ms of its 300 ms hysteresis (${learn_hold:-none} ns, payback ${learn_payback:-none} us)" \
	test "${learn_hold:-0}" -gt 0 -a "${learn_hold:-0}" -lt 1000000 -a "${learn_payback:-0}" -gt 0 -a "${learn_n:-0}" -ge 1
tap_check "learned hold: BE released between LC's requests under the same 300 ms hysteresis ($learn_parks parks, $learn_resumes unparks)" \
	test "${learn_resumes:-0}" -ge 10 -a "$learn_rc" = 0.0
tap_check "learned hold: gpreemptctl stats names the learned holds and their payback" \
	grep -qE '^learned holds +[0-9]+ queues hold shorter: their gaps pay back [1-9][0-9]* us' <<<"$learn_text"
tap_diag "latency (us): $(jq -c .latency <<<"$ctl")"
tap_check "latency: detect, park and unpark have samples and p50 <= p90 <= p99 <= max" \
	jq -e '[.latency.detect, .latency.park, .latency.unpark] | all(.count > 0 and
		.min_us <= .p50_us and .p50_us <= .p90_us and .p90_us <= .p99_us and .p99_us <= .max_us)' <<<"$ctl"
tap_check "latency: park count = preempts, unpark count = resumes" \
	jq -e '.latency.park.count == .preempts and .latency.unpark.count == .resumes' <<<"$ctl"
tap_check "latency: each count is the sum of its buckets; detect and park those of the power-of-two histograms" \
	jq -e '[.detect_lat, .park_lat, .unpark_lat] | all((.buckets | add) == .count and .min_ns <= .max_ns)' <<<"$raw"
tap_check "latency: detect and park counts are those of the power-of-two histograms" \
	jq -e '(.detect_hist | add) == .detect_lat.count and (.preempt_hist | add) == .park_lat.count' <<<"$raw"
tap_check "latency: max is gp_stats' own, the p99 within its buckets' range" \
	jq -n -e --argjson r "$raw" --argjson c "$ctl" '[["detect", $r.detect_lat], ["park", $r.park_lat],
		["unpark", $r.unpark_lat]] | all(.[1] as $h | $c.latency[.[0]] as $l |
		$l.max_us == $h.max_ns / 1000 and $l.min_us == $h.min_ns / 1000 and $l.p99_us * 1000 >= $h.min_ns)'
tap_check "latency: gpreemptctl stats prints the park call percentiles in us" \
	grep -qE '^park call +[1-9][0-9]* +[0-9]+\.[0-9] +[0-9]+\.[0-9]' <<<"$ctl_text"

tap_check "liveness: gpreemptctl's stats.tick_age_ms is how long ago the monitor ticked (${tick_age:-none} ms, under two idle_max_us)" \
	test "${tick_age:-x}" -ge 0 -a "${tick_age:-x}" -lt 1000
tap_check "liveness: gpreempt-node health, one reading of the real module: healthy ($(echo $health_out))" \
	test "$(echo $health_out)" = "gpreempt-node: healthy rc=0"
tap_dmesg_clean "hold: dmesg clean"
tap_done
