#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/bench-report renders the HIP rows (scripts/hip-lib.sh's runs):
# make demo's HIP table (--demo, raw/hip.demo.json) with the numbers, the
# ratios to LC alone and BE launches a second of fixed rows; a missing
# scenario, a failed HIP call or a missing HIP part fail the demo, a HIP part
# skipped because build/hip-work is not built is said and does not; and make
# bench's hip table (raw/hip.bench.json); make bench-sweep's section (rates,
# the knee, ratios to the same block's oracle and nogp, remaps, targets).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 39
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rows FILE [DROP] [FAIL]: five HIP rows (one run), without scenario DROP,
# with scenario FAIL's ok false.
rows() {
	mkdir -p "$(dirname "$1")"
	jq -n --arg drop "${2:-}" --arg fail "${3:-}" '[
	  {scenario: "lc_alone", run: 1, lc_requests: 400, lat_p50_us: 5000, lat_p99_us: 10000,
	   lat_max_us: 12000, be_completed: null, be_seconds: null, be_per_s: null, ok: true, gp_stats: null},
	  {scenario: "oracle", run: 1, lc_requests: 400, lat_p50_us: 6000, lat_p99_us: 12000,
	   lat_max_us: 13000, be_completed: 500, be_seconds: 10, be_per_s: 50, ok: true, gp_stats: null},
	  {scenario: "hw_priority", run: 1, lc_requests: 400, lat_p50_us: 20000, lat_p99_us: 30000,
	   lat_max_us: 31000, be_completed: 400, be_seconds: 10, be_per_s: 40, ok: true, gp_stats: null},
	  {scenario: "static_split", run: 1, lc_requests: 400, lat_p50_us: 9000, lat_p99_us: 25000,
	   lat_max_us: 26000, be_completed: 200, be_seconds: 10, be_per_s: 20, ok: true, gp_stats: null},
	  {scenario: "gpreempt", run: 1, lc_requests: 400, lat_p50_us: 8000, lat_p99_us: 15000,
	   lat_max_us: 16000, be_completed: 300, be_seconds: 9, be_per_s: 33.3, ok: true,
	   gp_stats: {preempts: 100}}
	] | map(select(.scenario != $drop)) | map(if .scenario == $fail then .ok = false else . end)' >"$1"
}
# demo DIR: bench-report --demo's output, then "rc N".
demo() { python3 scripts/bench-report --demo "$1" 2>&1; echo "rc $?"; }
has() { grep -qE -- "$2" <<<"$1" || { printf 'no line matches /%s/ in:\n%s\n' "$2" "$1"; return 1; }; }
# says OUT REGEX RC: OUT has a line matching REGEX and ends with "rc RC".
says() { has "$1" "$2" && has "$1" "^rc $3\$"; }

rows "$tmp/ok/raw/hip.demo.json"
out=$(demo "$tmp/ok")
tap_check "bench-report --demo: HIP LC alone row (p50 5000, p99 10000 us, ratios 1.00)" \
	has "$out" '^HIP LC alone +5000 +10000 +1\.00 +1\.00 +- +yes$'
tap_check "bench-report --demo: HIP stream priority row (20000, 30000 us, 4.00x, 3.00x alone, BE 40.0/s)" \
	has "$out" '^HIP LC \+ BE, HIP stream priority only +20000 +30000 +4\.00 +3\.00 +40\.0 +yes$'
tap_check "bench-report --demo: HIP static split row (9000, 25000 us, 1.80x, 2.50x, BE 20.0/s)" \
	has "$out" '^HIP LC \+ BE, static CU split \(CU-mask streams\) +9000 +25000 +1\.80 +2\.50 +20\.0 +yes$'
tap_check "bench-report --demo: HIP gpreempt row (8000, 15000 us, 1.60x, 1.50x, BE 33.3/s)" \
	has "$out" '^HIP LC \+ BE \+ gpreempt \(cgroup rule high\) +8000 +15000 +1\.60 +1\.50 +33\.3 +yes$'
tap_check "bench-report --demo: HIP gpreempt against stream priority (p50 0.40x, p99 0.50x, BE 0.83x)" \
	has "$out" 'gpreempt against HIP stream priority only: LC p50 0\.40x, p99 0\.50x, BE launches/s 0\.83x'
tap_check "bench-report --demo: the HIP table says simulation numbers (kfdsim, TCG guest)" \
	has "$out" '^HIP programs: .*simulation numbers \(kfdsim, TCG guest\)'
tap_check "bench-report --demo: every HIP call succeeded: yes, exit 0" \
	says "$out" '^every HIP call succeeded: yes$' 0

rows "$tmp/drop/raw/hip.demo.json" gpreempt
out=$(demo "$tmp/drop")
tap_check "bench-report --demo: a missing HIP scenario is NO result and exit 1" \
	says "$out" '^HIP LC \+ BE \+ gpreempt \(cgroup rule high\) +NO result' 1

rows "$tmp/nosplit/raw/hip.demo.json" static_split
out=$(demo "$tmp/nosplit")
tap_check "bench-report --demo: without static_split (make demo's default) the gpreempt row, exit 0" \
	says "$out" '^HIP LC \+ BE \+ gpreempt \(cgroup rule high\) +8000 +15000 ' 0
tap_check_fails "bench-report --demo: without static_split no static split row" \
	has "$out" 'static CU split'

rows "$tmp/fail/raw/hip.demo.json" "" hw_priority
out=$(demo "$tmp/fail")
tap_check "bench-report --demo: a failed HIP call is HIP ok NO and exit 1" \
	says "$out" '^HIP LC \+ BE, HIP stream priority only .* NO$' 1

mkdir -p "$tmp/skip/raw"
echo "build/hip-work is not built (test)" >"$tmp/skip/raw/hip.skipped"
out=$(demo "$tmp/skip")
tap_check "bench-report --demo: hip-work not built is said (HIP part NOT run), exit 0" \
	says "$out" '^HIP part NOT run: build/hip-work is not built \(test\)$' 0

mkdir -p "$tmp/none/raw"
out=$(demo "$tmp/none")
tap_check "bench-report --demo: no HIP results and no skip note is NO results, exit 1" \
	says "$out" '^HIP part: NO results' 1

rows "$tmp/bench/raw/hip.bench.json"
out=$(python3 scripts/bench-report "$tmp/bench" 2>&1)
tap_check "bench-report: make bench's hip table has the gpreempt row (8000, 15000 us, 1.60x, 1.50x alone, 1.33x, 1.25x the oracle, BE 0.67x)" \
	has "$out" '^\| gpreempt \| 1 \| 8000 \[8000\.\.8000\] \| 15000 \[15000\.\.15000\] \| 1\.60 \[1\.60\.\.1\.60\] \| 1\.50 \[1\.50\.\.1\.50\] \| 1\.33 \[1\.33\.\.1\.33\] \| 1\.25 \[1\.25\.\.1\.25\] \| 300 \[300\.\.300\] \| 0\.67 \[0\.67\.\.0\.67\] \| yes \|$'
tap_check "bench-report: ... and the oracle's row (1.00x the oracle)" \
	has "$out" '^\| oracle \| 1 \| 6000 \[6000\.\.6000\] \| 12000 \[12000\.\.12000\] \| 1\.20 \[1\.20\.\.1\.20\] \| 1\.20 \[1\.20\.\.1\.20\] \| 1\.00 \[1\.00\.\.1\.00\] \| 1\.00 \[1\.00\.\.1\.00\] \| 500 \[500\.\.500\] \| 1\.00 \[1\.00\.\.1\.00\] \| yes \|$'
tap_check "bench-report: without LC's hipMalloc timings, no driver-call table" \
	eval '! grep -q "own driver calls" <<<"$out"'
# LC's hipMalloc + hipFree per request (HIP_LC_ALLOC): a table of its own.
jq 'map(.alloc_p50_us = (if .scenario == "gpreempt" then 300 else 100 end)
	| .alloc_p99_us = (if .scenario == "gpreempt" then 900 else 200 end) | .alloc_max_us = 1000)' \
	"$tmp/bench/raw/hip.bench.json" >"$tmp/alloc.json" && mv "$tmp/alloc.json" "$tmp/bench/raw/hip.bench.json"
out=$(python3 scripts/bench-report "$tmp/bench" 2>&1)
tap_check "bench-report: LC's hipMalloc+hipFree table: gpreempt's row (300, 900 us, p99 4.50x alone)" \
	has "$out" '^\| gpreempt \| 300 \[300\.\.300\] \| 900 \[900\.\.900\] \| 1000 \[1000\.\.1000\] \| 4\.50 \[4\.50\.\.4\.50\] \|$'
# The headline's accounting table: gpload rows of one repetition (LC alone,
# BE alone, the oracle, gpreempt park), each LC row with kfdsim's acct.
cmp_row() {	# cmp_row DIR VARIANT LC_PRIO BE_PRIO GPREEMPT DETECT_US
	local n=cmp_microbench_k10_r1_$2
	jq -n --arg n "$n" --arg v "$2" --arg lcp "$3" --arg bep "$4" --arg gp "$5" --argjson d "$6" \
		'{name: $n, workload: "microbench", time_scale: 10, kfdsim: "", gpreempt: $gp,
		  lc_prios: $lcp, be_prio: $bep, idle_queues: 0, monitor_cpu_pct: 9.5, gp_stats: {},
		  rep: "1", wall_start: 1, wall_end: 2, kfdsim_stats: {},
		  acct: (if $lcp == "none" then null else {requests: 100, busy_us: 3000,
		    service_us: 2500, extra_us: 500, remap_hits: 1, saves: 2,
		    us: {fetch: 10, detect: $d, cu_wait: 0, cwsr_save: 5, remap_preempt: 1,
			 remap_wait: 50, unmapped: 0, cp_late: 234, run_extra: 0},
		    pct: {fetch: 2, detect: 40, cu_wait: 0, cwsr_save: 1, remap_preempt: 0,
			  remap_wait: 10, unmapped: 0, cp_late: 47, run_extra: 0}} end)}' >"$1/$n.json"
	[ "$3" = none ] || echo '{"count": 100, "p50_us": 1000, "p99_us": 2000, "max_us": 2500,
		"errors": 0, "lost": 0, "double": 0, "gpu_busy_us": 1, "duration_s": 1}' >"$1/$n.lc$3.json"
	[ "$4" = none ] || echo '{"throughput_wgus_per_s": 1000, "errors": 0, "lost": 0,
		"double": 0}' >"$1/$n.be.json"
}
mkdir -p "$tmp/head/raw"
cmp_row "$tmp/head/raw" lc_alone 12 none none 0
cmp_row "$tmp/head/raw" be_alone none 3 none 0
cmp_row "$tmp/head/raw" oracle 12 3 oracle 0
cmp_row "$tmp/head/raw" park 12 3 "" 200
cmp_row "$tmp/head/raw" park_h2000 12 3 "hysteresis_us=20000" 150
cmp_row "$tmp/head/raw" park_mes 12 3 "" 120
python3 scripts/bench-report "$tmp/head" >/dev/null 2>&1
out=$(cat "$tmp/head/results.md" 2>/dev/null)
tap_check "bench-report: the headline says where LC's extra time goes, per workload" \
	has "$out" "^### Where LC's extra time goes"
tap_check "bench-report: ... gpreempt park's row: detect 200 us (40 %), cp_late 234 (47 %), monitor 9.5 %" \
	has "$out" '^\| park \| - \| 3000 \| 500 \| 200 \(40%\) \| 50 \(10%\) \| 1 \(0%\) \| 5 \(1%\) \| 0 \(0%\) \| 0 \(0%\) \| 10 \(2%\) \| 234 \(47%\) \| 0 \(0%\) \| 9\.5 \|$'
tap_check "bench-report: ... and the oracle's row" has "$out" '^\| oracle \| - \| 3000 \| 500 \| 0 \('
tap_check "bench-report: an A/B hold (GP_BENCH_HOLDS=2000) is a headline row of its own" \
	has "$out" '^\| microbench x10 \| gpreempt park, hysteresis_us=2000 \(x scale\) \| 1 \(0\) \|'
tap_check "bench-report: ... with its targets" \
	has "$out" '^\| microbench x10, park_h2000: LC p99 <= 1\.10x the oracle'"'"'s \|'
tap_check "bench-report: results.json has the headline's derived figures (park's LC p99 / oracle, its runs)" \
	eval '[ "$(jq -c "[(.headline.microbench_x10.variants.park.lc_p99_vs_oracle | .median, .reps), .headline.microbench_x10.reps]" "$tmp/head/results.json")" = "[1,[1],1]" ]'
mes_rows() {
	has "$1" '^\| microbench x10 \| gpreempt park, MES \(one queue per park, no device remap\) \| 1 \(0\) \|' &&
		has "$1" '^\| microbench x10, park_mes: LC p99 <= 1\.10x the oracle.s \|'
}
tap_check "bench-report: park on MES is a headline row beside park (HWS), with its targets" \
	mes_rows "$out"
tap_check "bench-report: ... and its accounting row (detect 150 us)" \
	has "$out" '^\| park_h2000 \| - \| 3000 \| 500 \| 150 \('
# make bench-sweep: two rates (LC period 3000 and 300 us x10), two blocks.
# sw_row DIR NAME LC_PRIO(none|n) BE_THROUGHPUT(none|n) GPREEMPT P50 P99 COUNT PREEMPTS LAT_SLOW
sw_row() {
	jq -n --arg n "$2" --arg lcp "$3" --arg gp "$5" --argjson pre "$9" \
		'{name: $n, workload: "micro", time_scale: 10, kfdsim: "num_cu=8 sched=hws", gpreempt: $gp,
		  lc_prios: $lcp, be_prio: "3", idle_queues: 0, monitor_cpu_pct: 9.5,
		  gp_stats: {preempts: $pre, resumes: $pre}, rep: "1", wall_start: 1, wall_end: 2,
		  kfdsim_stats: {runlist_updates: ($pre * 2 + 2)}}' >"$1/$2.json"
	[ "$3" = none ] || {
		jq -n --argjson p50 "$6" --argjson p99 "$7" --argjson c "$8" \
			'{count: $c, p50_us: $p50, p99_us: $p99, max_us: $p99, errors: 0, lost: 0,
			  double: 0, gpu_busy_us: ($c * 800), duration_s: 10}' >"$1/$2.lc$3.json"
		{ for _ in $(seq $((100 - ${10}))); do echo 1000; done
		  for _ in $(seq "${10}"); do echo 5000; done; } >"$1/$2.lc$3.lat"
	}
	[ "$4" = none ] || echo "{\"throughput_wgus_per_s\": $4, \"errors\": 0, \"lost\": 0, \"double\": 0}" >"$1/$2.be.json"
}
d=$tmp/sweep/raw
mkdir -p "$d"
for r in 1 2; do
	sw_row "$d" "sw_micro_r${r}_be_alone" none 1000 none 0 0 0 0 0
	# 3000 us x10 (33.3/s): LC keeps up (seed 12 draws 335 arrivals in 10 s); park p99 1.2x then 1.0x the oracle's.
	sw_row "$d" "sw_micro_p3000_r${r}_lc_alone" 12 none none 1000 2000 335 0 0
	sw_row "$d" "sw_micro_p3000_r${r}_oracle" 12 950 oracle 1000 2000 335 0 0
	sw_row "$d" "sw_micro_p3000_r${r}_nogp" 7 1000 none 3000 8000 335 0 10
	sw_row "$d" "sw_micro_p3000_r${r}_park" 12 900 "" 1100 $((r == 1 ? 2400 : 2000)) 335 50 2
	sw_row "$d" "sw_micro_p3000_r${r}_parkfix" 12 700 "" 1000 2000 335 20 0
	[ "$r" = 1 ] && sw_row "$d" "sw_micro_p300_r${r}_parklearn" 12 300 "" 3000 9000 100 200 50
	# 300 us x10 (333.3/s): LC alone completes 100 of its arrivals: the knee.
	sw_row "$d" "sw_micro_p300_r${r}_lc_alone" 12 none none 1000 2000 100 0 0
	sw_row "$d" "sw_micro_p300_r${r}_oracle" 12 500 oracle 1000 2000 100 0 0
	sw_row "$d" "sw_micro_p300_r${r}_nogp" 7 800 none 3000 8000 100 0 0
	sw_row "$d" "sw_micro_p300_r${r}_park" 12 100 "" 3000 9000 100 100 50
done
python3 scripts/bench-report "$tmp/sweep" >/dev/null 2>&1
out=$(cat "$tmp/sweep/results.md" 2>/dev/null)
tap_check "bench-report: make bench-sweep has its section" has "$out" '^## Sweep: the microbench at several LC rates'
tap_check "bench-report: ... the knee is the rate LC alone falls behind at (333.3 requests/s)" \
	has "$out" '^The knee: 333\.3 LC requests/s'
tap_check "bench-report: ... the rate row: LC share 0.034, offered 33.5/s (seed 12's Poisson arrivals) and achieved, below the knee" \
	has "$out" '^\| 33\.3 \| 0\.034 \[0\.034\.\.0\.034\] \| 33\.5 / 33\.5, 33\.5, 33\.5, 33\.5, 33\.5, - \| 2000 \[2000\.\.2000\] \| yes \|$'
tap_check "bench-report: ... park at 33.3/s: p50 1.10x, p99 1.10 [1.00..1.20]x the oracle, SLO loss 2 pp, BE 0.95x oracle, 0.90x nogp, 10 remaps/s, 0.30 a request" \
	has "$out" '^\| 33\.3 \| gpreempt park \| 1\.10 \[1\.10\.\.1\.10\] \| 1\.10 \[1\.00\.\.1\.20\] \| 1\.10 \[1\.00\.\.1\.20\] \| 2\.0 \[2\.0\.\.2\.0\] \| 0\.95 \[0\.95\.\.0\.95\] \| 0\.90 \[0\.90\.\.0\.90\] \| 0\.90 \[0\.90\.\.0\.90\] \| 10\.0 \[10\.0\.\.10\.0\] \| 0\.30 \[0\.30\.\.0\.30\] \| 0\.30 \[0\.30\.\.0\.30\] \|$'
tap_check "bench-report: ... the nogp co-run's row against the oracle (p99 4.00x)" \
	has "$out" '^\| 33\.3 \| no gpreempt \(LC and BE at KFD 7\) \| 3\.00 \[3\.00\.\.3\.00\] \| 4\.00 \[4\.00\.\.4\.00\] \|'
tap_check "bench-report: ... park with the fixed hold has its row (BE 0.74x the oracle's, 0.12 remaps a request)" \
	has "$out" '^\| 33\.3 \| gpreempt park, fixed hold \(hold_payback_pct=0\) \| 1\.00 \[1\.00\.\.1\.00\] \| 1\.00 \[1\.00\.\.1\.00\] \| [^|]* \| [^|]* \| 0\.74 \[0\.74\.\.0\.74\] \| [^|]* \| [^|]* \| [^|]* \| 0\.12 \[0\.12\.\.0\.12\] \|'
tap_check "bench-report: ... park with the learned hold has its row where it ran (BE 0.60x the oracle's, 4.00 remaps a request)" \
	has "$out" '^\| 333\.3 \| gpreempt park, learned hold \(hold_payback_pct=200\) \| [^|]* \| [^|]* \| [^|]* \| [^|]* \| 0\.60 \[0\.60\.\.0\.60\] \| [^|]* \| [^|]* \| [^|]* \| 4\.00 \[4\.00\.\.4\.00\] \|'
# (tap_check's own local "out" would hide $out from an eval'd check.)
sweep_targets() {
	has "$1" "^\| 33\.3 \| LC p99 <= 1\.10x the oracle.s \| 1\.10x \| met \|$" &&
		has "$1" "^\| 33\.3 \| SLO loss <= 1 pp \| 2\.0 pp \| \*\*missed\*\* \|$" &&
		has "$1" "^\| 33\.3 \| BE >= 0\.9x the oracle.s BE \| 0\.95x \| met \|$" &&
		! grep -q "^| 333\.3 | LC p99" <<<"$1"
}
tap_check "bench-report: ... targets below the knee only: p99 met, SLO loss missed, BE met" \
	sweep_targets "$out"
tap_check "bench-report: ... results.json has the derived figures (knee, park's p99 / oracle median and interval)" \
	eval '[ "$(jq -c "[.sweep.knee_rps, (.sweep.rates[0].variants.park.p99_vs_oracle | .median, .ci95)]" "$tmp/sweep/results.json")" = "[333.33,1.1,[1,1.2]]" ]'
tap_check "bench-report: ... and the plot" test -s "$tmp/sweep/sweep.png"
# LC's window as bench-guest recorded it (4.5 s), not the elapsed time (5.6 s:
# a slow last request): seed 12 draws 150 arrivals in 4.5 s, 33.3/s.
d=$tmp/sweep2/raw
mkdir -p "$d"
sw_row "$d" sw_micro_r1_be_alone none 1000 none 0 0 0 0 0
sw_row "$d" sw_micro_p3000_r1_lc_alone 12 none none 1000 2000 150 0 0
jq '.lc_seconds = 4.5' "$d/sw_micro_p3000_r1_lc_alone.json" >"$d/x" && mv "$d/x" "$d/sw_micro_p3000_r1_lc_alone.json"
jq '.duration_s = 5.6' "$d/sw_micro_p3000_r1_lc_alone.lc12.json" >"$d/x" && mv "$d/x" "$d/sw_micro_p3000_r1_lc_alone.lc12.json"
python3 scripts/bench-report "$tmp/sweep2" >/dev/null 2>&1
tap_check "bench-report: the sweep's offered rate counts arrivals in LC's recorded window (33.3/s in 4.5 s)" \
	has "$(cat "$tmp/sweep2/results.md" 2>/dev/null)" '^\| 33\.3 \| [^|]* \| 33\.3 / 26\.8, -, -, -, -, - \|'
# make bench-sweep-hip: rows of scripts/hip-lib.sh at two gaps, two blocks;
# gpreempt's ratios are to the same block's oracle at the same gap (the other
# gap's oracle is slower: pairing across gaps would give 0.50x).
d=$tmp/hipsweep/raw
mkdir -p "$d"
python3 - "$d/hip.sweep.json" <<'EOF2'
import json, sys
rows = []
for run in (1, 2):
    for g, slow in ((40000, 1), (10000, 2)):
        for sc, p50, p99, be in (("lc_alone", 3000, 5000, None), ("oracle", 3000 * slow, 5000 * slow, 100.0),
                                 ("hw_priority", 9000, 15000, 105.0),
                                 ("gpreempt", 3300 * slow, 5500 * slow, 90.0 + run)):
            rows.append({"scenario": sc, "run": run, "lat_p50_us": p50, "lat_p99_us": p99,
                         "be_per_s": be, "ok": True, "lc_gap_us": g, "lc_wg_ns": 400000})
json.dump(rows, open(sys.argv[1], "w"))
EOF2
out=$(python3 scripts/bench-report "$tmp/hipsweep" 2>&1)
tap_check "bench-report: the HIP sweep: gpreempt at 25/s against the same block's oracle (p50 1.10x, p99 1.10x, BE 0.92x), the targets met" \
	has "$out" '^\| 25\.0 \| gpreempt \| 2 \| 3300 \[3300\.\.3300\] \| 1\.10 \[1\.10\.\.1\.10\] \| 1\.10 \[1\.10\.\.1\.10\] \| 1\.10 \[1\.10\.\.1\.10\] \| 0\.92 \[0\.91\.\.0\.92\] \| yes \| yes \|$'
tap_check "bench-report: ... hardware priority at 100/s misses them (p50 1.50x the oracle's)" \
	has "$out" '^\| 100\.0 \| hw_priority \| 2 \| 9000 [^|]* \| 1\.50 \[1\.50\.\.1\.50\] \| [^|]* \| [^|]* \| [^|]* \| no \| yes \|$'
tap_check "bench-report: ... results.json carries the HIP sweep's derived figures" \
	eval '[ "$(jq -c "[.hip_sweep[] | select(.scenario == \"gpreempt\" and .lc_gap_us == 10000) | .p99_over_oracle.median, .meets_targets]" "$tmp/hipsweep/results.json")" = "[1.1,true]" ]'
tap_done
