#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Issue 19 item 3: hold_adaptive.  With it, a level stays busy after its last
# work only as long as a park plus an unpark take on its device (measured),
# at most hysteresis_us.  LC arrives every 30 ms; with hysteresis_us=20000
# and the fixed hold BE is released only after 20 ms of LC idle.  Checked:
# with hold_adaptive=1 the hold (gp_stats.hold_us) drops below hysteresis_us
# once 8 calls were measured, to about twice the mean park/unpark call; BE
# is still parked while LC has work and released between LC's requests;
# every packet runs exactly once.  No clock
# threshold: hold_us is compared with the module's own call times.
# Also the latency percentiles of gp_stats (detection, park and unpark
# calls): present in gpreemptctl stats (text and --json), ordered
# (p50 <= p90 <= p99 <= max), their counts those of gp_stats (preempts,
# resumes, the buckets, the power-of-two histograms).
. test/lib/tap.sh
. test/lib/sim.sh
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
run() {	# <hold_adaptive>: LC every 30 ms over BE, 4 s
	insmod "$OBJ/test/kfdsim/kfdsim.ko"
	insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 hysteresis_us=$HYST hold_adaptive=$1
	$GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet &
	be=$!
	sleep 0.5
	$GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 30000 --duration 4 --quiet
	lc_rc=$?
	hold=$(gstat hold_us) parks=$(gstat preempts) resumes=$(gstat resumes)
	lat_read
	ctl_text=$($CTL stats)
	stop_be $be
	sim_unload
}
dmesg -C
run 0
tap_check "fixed hold: hold_us is hysteresis_us ($hold)" test "$hold" = $HYST
tap_check "fixed hold: BE parked and released ($parks/$resumes)" test "${parks:-0}" -gt 0 -a "${resumes:-0}" -gt 0
fixed_parks=$parks
tap_check "fixed hold: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0

run 1
tap_check "adaptive hold: hold_us below hysteresis_us ($hold < $HYST)" test "${hold:-$HYST}" -lt $HYST
tap_check "adaptive hold: BE parked and released ($parks/$resumes; fixed: $fixed_parks)" \
	test "${parks:-0}" -gt 0 -a "${resumes:-0}" -gt 0
tap_check "adaptive hold: LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
tap_diag "adaptive hold ${hold} us; latency (us): $(jq -c .latency <<<"$ctl")"
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

insmod "$OBJ/test/kfdsim/kfdsim.ko"
insmod "$OBJ/module/gpreempt.ko" hysteresis_us=$HYST
tap_check "hold_adaptive can be switched on at run time" sh -c 'echo 1 >/sys/module/gpreempt/parameters/hold_adaptive'
tap_check_fails "hold_adaptive=maybe refused" sh -c 'echo maybe >/sys/module/gpreempt/parameters/hold_adaptive'
rmmod gpreempt
rmmod kfdsim
tap_dmesg_clean "adaptive hold: dmesg clean"
tap_done
