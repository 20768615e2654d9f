# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# scripts/hip-lib.sh - sourced inside the test guest by scripts/bench-hip
# (make bench) and scripts/bench-guest demo (make demo): one run of Debian's
# HIP 5.2.3 (build/hip-work, test/hip/hip-work.hip) as LC and BE on kfdsim
# (8 CUs, kfdsim's default costs, time_scale 1, HSA_ENABLE_SDMA=0).
#   LC: HIP_LC_N requests (default 60), each one launch of 8 workgroups x 2 ms
#       waited for with hipStreamSynchronize, one every 20 ms on average
#       (uniform 10..30 ms);
#   BE: launches of 8 workgroups x 20 ms, 2 in flight.
#   HIP_LC_ALLOC=BYTES (make bench sets 65536): after each request LC also
#       does hipMalloc(BYTES) + hipFree, timed apart (alloc_* in the row):
#       LC's own driver calls while BE is parked and unparked.
# Scenarios (hip_one):
#   lc_alone      LC only, HIP's default stream priority (KFD 7);
#   hw_priority   LC's stream at hipStreamCreateWithPriority's greatest
#                 (KFD 15), BE at the default (7), no gpreempt: the
#                 hardware's queue priority only;
#   static_split  LC's stream on CUs 4-7, BE's on CUs 0-3
#                 (hipExtStreamCreateWithCUMask, default priority), no
#                 gpreempt: a static split, as HAMi does;
#   gpreempt      both at the default (7), gpreempt loaded, LC's cgroup has
#                 the rule "high" (12), set as an operator would;
#   oracle        both at the default (7), no gpreempt, kfdsim sched=oracle
#                 with the same cgroup rule as its level: the CP itself
#                 preempts BE the moment LC's packet is fetched (the limit).
HIP=build/hip-work
HIP_CG=/sys/fs/cgroup/gp-hip-lc
# HIP_LC_ARGS: "REQUESTS WORKGROUPS NS_PER_WORKGROUP MEAN_GAP_US" (make
# bench-sweep-hip sets short kernels at several rates).
HIP_LC_ARGS=${HIP_LC_ARGS:-"${HIP_LC_N:-60} 8 2000000 20000"}
HIP_BE_ARGS="8 20000000 2"
export HSA_ENABLE_SDMA=0
say() { echo "[$(date +%T)] $*"; }
hip_field() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }
hip_num() { local v; v=$(hip_field "$1" "$2" 2>/dev/null); echo "${v:-null}"; }
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
. scripts/bench-acct

# hip_one SCENARIO RUN RAW [WATCH]: one run; writes RAW/hip.SCENARIO.RUN.{lc,be}
# (hip-work's output) and RAW/hip.SCENARIO.RUN.json.row (the measured row:
# latencies in us, BE launches and launches a second from its first
# completion to the stop; simulation numbers of a TCG guest).  WATCH, a
# command, runs with the LC's pid and output file while LC runs in the
# gpreempt scenario (make demo's live view).
hip_one() {
	local sc=$1 run=$2 watch=${4:-} f=$3/hip.$1.$2 be="" lc lc_rc be_rc=0 gp=0 gpsay=""
	local c0 t0 lcpid acct mcpu gpcpu
	local lcenv="HIP_WORK_PRIO=normal${HIP_LC_ALLOC:+ HIP_WORK_ALLOC=$HIP_LC_ALLOC}"
	local beenv="HIP_WORK_PRIO=normal" t_ready="" t_stop=""
	local incg=0 ks=""

	[ "$sc" = oracle ] && ks=sched=oracle
	# shellcheck disable=SC2086
	insmod test/kfdsim/kfdsim.ko num_cu=8 $ks || return 1
	case $sc in
	hw_priority) lcenv="${lcenv/HIP_WORK_PRIO=normal/HIP_WORK_PRIO=high}" ;;
	static_split) lcenv="${lcenv/HIP_WORK_PRIO=normal/HIP_WORK_CU_MASK=0xf0}" beenv="HIP_WORK_CU_MASK=0x0f" ;;
	gpreempt)
		gp=1
		insmod module/gpreempt.ko || { rmmod kfdsim; return 1; }
		mkdir -p $HIP_CG
		say "  the operator's rule: gpreemptctl set cgroup $HIP_CG high"
		build/gpreemptctl set cgroup $HIP_CG high >/dev/null
		incg=1
		;;
	oracle)
		mkdir -p $HIP_CG
		echo "$(stat -c %i $HIP_CG) 12" >/sys/kernel/debug/kfdsim/oracle_rules || { rmmod kfdsim; return 1; }
		incg=1
		;;
	esac
	if [ "$sc" != lc_alone ]; then
		rm -f "$f.stop"
		# shellcheck disable=SC2086
		env $beenv $HIP be $HIP_BE_ARGS "$f.stop" >"$f.be" 2>&1 &
		be=$!
		for _ in $(seq 600); do grep -qx be_ready "$f.be" && break; sleep 0.1; done
		t_ready=$(date +%s.%N)
	fi
	c0=$(cpu_ns) t0=$(date +%s%N)
	if [ $incg = 1 ]; then
		sh -c "echo \$\$ > $HIP_CG/cgroup.procs && exec env $lcenv $HIP lc $HIP_LC_ARGS" >"$f.lc" 2>&1 &
	else
		# shellcheck disable=SC2086
		env $lcenv $HIP lc $HIP_LC_ARGS >"$f.lc" 2>&1 &
	fi
	lc=$!
	[ $gp = 1 ] && [ -n "$watch" ] && $watch $lc "$f.lc"
	wait $lc
	lc_rc=$?
	lcpid=$lc
	acct_end
	if [ -n "$be" ]; then
		t_stop=$(date +%s.%N)
		touch "$f.stop"
		wait $be
		be_rc=$?
	fi
	if [ $gp = 1 ]; then
		# What gpreempt did in this run (parks, starvation slices, ...).
		build/gpreemptctl stats --json >"$f.gstats" 2>/dev/null || echo null >"$f.gstats"
		gpsay="; gpreempt: $(jq -c '{preempts, resumes, starvation_slices}' "$f.gstats")"
		build/gpreemptctl unset cgroup $HIP_CG >/dev/null
		rmmod gpreempt
	fi
	for _ in $(seq 50); do grep -q '^processes 0' /sys/kernel/debug/kfdsim/stats && break; sleep 0.1; done
	[ $incg = 1 ] && rmdir $HIP_CG
	rmmod kfdsim
	jq -n --arg sc "$sc" --argjson run "$run" --argjson lc_rc "$lc_rc" --argjson be_rc "$be_rc" \
		--argjson p50 "$(hip_num "$f.lc" lat_p50)" --argjson p99 "$(hip_num "$f.lc" lat_p99)" \
		--argjson max "$(hip_num "$f.lc" lat_max)" --argjson n "$(hip_num "$f.lc" lc_requests)" \
		--argjson be_n "$(if [ -n "$be" ]; then hip_num "$f.be" be_completed; else echo null; fi)" \
		--argjson be_s "$(if [ -n "$be" ]; then awk -v a="$t_ready" -v b="$t_stop" 'BEGIN { printf "%.3f", b - a }'; else echo null; fi)" \
		--argjson gs "$(if [ $gp = 1 ]; then cat "$f.gstats"; else echo null; fi)" \
		--argjson acct "$acct" --argjson mean "$(hip_num "$f.lc" lat_mean)" \
		--argjson mcpu "$(if [ $gp = 1 ]; then echo "$mcpu"; else echo null; fi)" \
		--argjson a50 "$(hip_num "$f.lc" alloc_p50)" --argjson a99 "$(hip_num "$f.lc" alloc_p99)" \
		--argjson amax "$(hip_num "$f.lc" alloc_max)" \
		--argjson wgns "$(awk '{print $3}' <<<"$HIP_LC_ARGS")" \
		--argjson gap "$(awk '{print $4}' <<<"$HIP_LC_ARGS")" \
		'{scenario: $sc, run: $run, lc_requests: $n, lat_p50_us: $p50, lat_p99_us: $p99,
		  lat_max_us: $max, be_completed: $be_n, be_seconds: $be_s,
		  be_per_s: (if $be_n != null and $be_s != null and $be_s > 0
			     then ($be_n / $be_s * 10 | round) / 10 else null end),
		  ok: ($lc_rc == 0 and $be_rc == 0), gp_stats: $gs,
		  lat_mean_us: $mean, acct: $acct, monitor_cpu_pct: $mcpu,
		  alloc_p50_us: $a50, alloc_p99_us: $a99, alloc_max_us: $amax,
		  lc_wg_ns: $wgns, lc_gap_us: $gap}' \
		>"$f.json.row"
	say "  hip $sc run $run: LC p50 $(hip_field "$f.lc" lat_p50) us p99 $(hip_field "$f.lc" lat_p99) us," \
		"BE ${be:+$(hip_field "$f.be" be_completed)} launches, exit $lc_rc/$be_rc$gpsay"
	say "    kfdsim acct (simulation), LC mean $(hip_field "$f.lc" lat_mean) us: $(acct_text "$acct")${gpcpu}"
}

# hip_collect RAW NAME: the rows of hip_one's runs into RAW/NAME (a JSON array).
hip_collect() {
	jq -s . "$1"/hip.*.json.row >"$1/$2"
	rm -f "$1"/hip.*.json.row
}
