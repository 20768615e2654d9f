#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Long runs and races of gpreempt on kfdsim (issue 9), inside the test guest.
#
#   GP_SOAK=short (default, "make check-long" via test/run-vm long): a few of each.
#   GP_SOAK=long  ("make soak", scripts/soak): 100 reloads under load, 100
#                 kill -9s of parked and 100 of running processes, 10^4
#                 queue create/destroy churns during preemption, >= 10^6
#                 packets checked exactly once across HWS and MES.
#
# For each scheduler model (HWS, MES) the phases are: reload (rmmod/insmod
# of gpreempt under load, with random parameters and some invalid ones),
# kill (kill -9 of parked and of running processes), churn (queue
# create/destroy while a gp_prio flip storm runs), race-exit (rmmod racing
# with process exit), race-park (kill -9 while a park is in flight, with a
# slow runlist) and shrink (co-running on a CU mask, issue 19: a BE with its
# own mask killed while shrunk, gpreempt reloaded while it is).  Throughout,
# gp_prio, gp_prio_comm and gp_config get random values, invalid ones included.  After every phase: nothing left parked (every
# kfdsim queue active, or gone with its process), evictions balanced, every
# packet exactly once (gpload's exit status), a clean dmesg.  Ends with a
# table of counts.  Tests wait for states with long timeouts; no timing is
# asserted.
. test/lib/tap.sh
# scripts/soak runs this directly, not through guest-run: drm.ko for kfdsim.
. test/lib/drm.sh
ks_drm_guest
GPLOAD=build/gpload
KO=test/kfdsim/kfdsim.ko
GP="module/gpreempt.ko user_max_priority=15"
DBG=/sys/kernel/debug/kfdsim
T=$(mktemp -d /tmp/soak.XXXXXX)
MODE=${GP_SOAK:-short}
START=$SECONDS
# bash reports every kill -9'd job ("Killed"); those are the test's own.
exec 2> >(grep --line-buffered -v '^[^ ]*: line [0-9]*: *[0-9]* Killed ' >&2)

# Per scheduler model (two models: the totals are twice these).
# The short form runs each phase once, half of them per model.
# The long form has issue 9's counts (100 reloads, 100+100 kills, 10^4
# churns, 10^6 packets in all): 10.5 min on the idle 2-core TCG host with
# faults injected; GP_SOAK_RELOADS, _KILLS, _CHURNS, _PACKETS and _RACES set
# other counts (per model).
case $MODE in
long)
	RELOADS=50 KILLS=50 KILL_BATCH=25 CHURNS=5000 PACKETS=500000 RACES=3
	CHURN_S=20 PUMP_MAX_S=240
	PHASES_hws="reload kill churn race_exit pump hang race_park shrink"
	PHASES_mes="reload kill churn race_exit pump race_park shrink" ;;
*)
	RELOADS=2 KILLS=2 KILL_BATCH=2 CHURNS=20 PACKETS=2000 RACES=1
	CHURN_S=2 PUMP_MAX_S=10
	PHASES_hws="reload kill hang race_park"
	PHASES_mes="churn race_exit shrink" ;;
esac
# GP_SOAK_HWS / GP_SOAK_MES: other phase lists (a phase may repeat), to
# rerun one phase many times in one boot: GP_SOAK_HWS="kill kill" GP_SOAK_MES=
PHASES_hws=${GP_SOAK_HWS-$PHASES_hws}
PHASES_mes=${GP_SOAK_MES-$PHASES_mes}
RELOADS=${GP_SOAK_RELOADS:-$RELOADS} KILLS=${GP_SOAK_KILLS:-$KILLS}
CHURNS=${GP_SOAK_CHURNS:-$CHURNS} PACKETS=${GP_SOAK_PACKETS:-$PACKETS}
RACES=${GP_SOAK_RACES:-$RACES}

# --- helpers -------------------------------------------------------------------
say() { tap_diag "soak $(printf '%4d' $((SECONDS - START))) s: $*"; }
kstat() { awk -v k="$1" '$1 == k {print $2}' $DBG/stats; }
gstat() { bpftool -j map dump name gp_stats 2>/dev/null | jq -r ".[0].formatted.value.$1 // empty"; }
wait_for() {	# seconds cmd...
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.05
	done
	"$@"
}
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# Polling goes to kfdsim's debugfs (cheap); bpftool runs once per check.
# Each role has its own priority: pump/BE 3, LC 12, victims 1 (to park),
# 14 (running), 4 (race-park).  ks_parked P: a queue at priority P is not
# active (suspended or evicted: parked, or a park has started);
# ks_running P: queues at priority P exist and all are active.
ks_parked() { grep " prio=$1 " $DBG/queues | grep -qv ' active=1 evicted=0 suspended=0 '; }
ks_running() {
	grep -q " prio=$1 " $DBG/queues &&
		! grep " prio=$1 " $DBG/queues | grep -qv ' active=1 evicted=0 suspended=0 '
}
ks_all_parked() {
	grep -q " prio=$1 " $DBG/queues && ! grep " prio=$1 " $DBG/queues | grep -q ' active=1 '
}
ks_none_at() { ! grep -q " prio=$1 " $DBG/queues; }
# CU masks (the shrink phase).  ks_cus P: the CU counts of the queues at
# priority P.  ks_shrunk P N: a queue at priority P runs on fewer than the N
# CUs its owner gave it.  masks_own: every queue has its owner's CUs back:
# MASKED_PRIO's victims set MASKED_CUS (CUs 0-5), everyone else none or all.
MASKED_PRIO=2 MASKED_CUS=6
ks_cus() { sed -n "s/.* prio=$1 .* cu_mask_cus=\([0-9]*\) .*/\1/p" $DBG/queues; }
ks_shrunk() {
	local c
	for c in $(ks_cus "$1"); do [ "$c" -lt "$2" ] && return 0; done
	return 1
}
masks_own() {
	awk -v n="$(awk '$1 == "num_cu" {print $2}' $DBG/params)" -v mp=$MASKED_PRIO -v mc=$MASKED_CUS '
		/^queue / {
			p = $0; sub(/.* prio=/, "", p); sub(/ .*/, "", p)
			c = $0; sub(/.* cu_mask_cus=/, "", c); sub(/ .*/, "", c)
			if (c != (p == mp ? mc : n)) bad = 1
		}
		END { exit bad }' $DBG/queues
}
# ks_masks: each queue's priority and CU count, on one line (diagnostics).
ks_masks() { grep -o 'prio=[0-9]* .*cu_mask_cus=[0-9]*' $DBG/queues | sed 's/ active.*cu_mask/ cu_mask/' | tr '\n' ' '; }
# gp_queues holds no queue of a dead process.
gp_only_live() {
	local t
	for t in $(bpftool -j map dump name gp_queues 2>/dev/null | jq -r '.[].formatted.value.tgid' | sort -u); do
		kill -0 "$t" 2>/dev/null || return 1
	done
}
gp_queues_empty() { [ "$(bpftool -j map dump name gp_queues 2>/dev/null | jq length)" = 0 ]; }
# Nothing parked: every kfdsim queue is active, none suspended or evicted.
none_parked() { ! grep -v ' active=1 evicted=0 suspended=0 ' $DBG/queues | grep -q .; }
ks_idle() { [ "$(kstat processes)" = 0 ] && [ "$(kstat queues)" = 0 ] && [ "$(kstat evicted_refs)" = 0 ]; }
gp_loaded() { grep -q '^gpreempt ' /proc/modules; }
le32() { printf '%08x' $(($1 & 0xffffffff)) | sed 's/\(..\)\(..\)\(..\)\(..\)/0x\4 0x\3 0x\2 0x\1/'; }

# Counters, in the main shell (no fork: forks are slow in the
# memory-debugging TCG guest).
declare -A C
count() { C[$1]=$((${C[$1]:-0} + ${2:-1})); }
counter() { echo "${C[$1]:-0}"; }
# Sum every numeric counter of gp_stats into the totals (before each rmmod).
sum_gp_stats() {
	bpftool -j map dump name gp_stats 2>/dev/null |
		jq -r '.[0].formatted.value | to_entries[] | select(.value | type == "number") |
			"\(.key) \(.value)"' >"$T/gs" 2>/dev/null || return
	while read -r k v; do
		case $k in queues|processes|evicts_outstanding|scan_ns_*) continue ;; esac
		count "gp.$k" "$v"
	done <"$T/gs"
}
# gpreempt's own totals, from its unload lines ("unloaded: N preemptions, M
# resumes, E errors"): every load counted, before each dmesg -C.
sum_unloads() {
	local n m e
	while read -r n m e; do
		count unload.preempts "$n"
		count unload.resumes "$m"
		count unload.errors "$e"
		count unloads
	done < <(dmesg | sed -n 's/.*gpreempt: unloaded: \([0-9]*\) preemptions, \([0-9]*\) resumes, \([0-9]*\) errors.*/\1 \2 \3/p')
}
dmesg_clear() {
	sum_unloads
	count fences "$(dmesg | grep -c "$FENCE_MSG")"
	count recoveries "$(dmesg | grep -c 'device recovered')"
	dmesg -C
}
# Sum kfdsim's counters (not the gauges) into the totals (before its rmmod).
sum_ks_stats() {
	while read -r k v; do
		case $k in processes|queues|evicted_refs) continue ;; esac
		case $v in '' | *[!0-9]*) continue ;; esac
		count "ks.$k" "$v"
	done <$DBG/stats
}

# Random valid timing parameters of gpreempt.
gp_random_timing() {
	echo "tick_us=$((50 + RANDOM % 400)) hysteresis_us=$((RANDOM % 4000)) max_actions=$((1 + RANDOM % 16))"
}
gp_insmod() {	# gpreempt with random valid parameters (or GP_SOAK_INSMOD's)
	local be=(auto suspend evict)
	if [ -n "${GP_SOAK_INSMOD:-}" ]; then
		# shellcheck disable=SC2086
		insmod $GP $GP_SOAK_INSMOD
		return
	fi
	# shellcheck disable=SC2046
	insmod $GP backend=${be[RANDOM % 3]} $(gp_random_timing)
}
gp_rmmod() {	# [nostats]: leave gp_stats out of the totals (reload loop: speed)
	gp_loaded || return 0
	[ -n "${1:-}" ] || sum_gp_stats
	rmmod gpreempt
}

# The background load: a BE stream (prio 3) that fills the CUs, and an LC
# stream (prio 12) that keeps the BE parked most of the time.  Both are
# stopped with SIGTERM at the end of the phase; their exit status is the
# exactly-once check.  The pump phase uses many tiny packets instead (about
# 10^5 per second in the TCG guest, which that saturates).
BE="--prio 3 --queues 2 --wg 2 --wg-us 1000 --inflight 16"
PUMP="--prio 3 --queues 8 --wg 1 --wg-us 5 --inflight 200"
LC="--prio 12 --wg 2 --wg-us 200 --period-us 1500 --poisson"
# Fault injection in kfdsim (test/kfdsim/README.md, "Fault injection"), when
# this kfdsim has it, every kind: update_queue, evict, restore and destroy
# fail at 2 % of calls (the error kind rotating among EIO, ETIME, EBUSY; a
# destroy failed with EBUSY leaves the queue and gpload churn retries it, one
# failed with ETIME or EIO freed it, as KFD does), and every second
# or so the runlist gets slow, lookups get delayed, a process's p->mutex is
# held by a long "ioctl", or a destroyed queue's memory goes to the next
# created one; the HWS hangs in the hang phase.  Turned off before the
# end-of-phase checks.
FLT=$DBG/fault
FENCE_MSG='preemption failed on a device'	# gpreempt's one line per fence
faults_on() { [ -d $FLT ] && [ -z "${GP_SOAK_NO_FAULTS:-}" ]; }
fault_loop() {
	local errs=(EIO ETIME EBUSY) pasids
	while :; do
		echo "${errs[RANDOM % 3]} 20 0" >$FLT/update_queue
		echo "${errs[RANDOM % 3]} 20 0" >$FLT/evict_process_queues
		echo "${errs[RANDOM % 3]} 20 0" >$FLT/restore_process_queues
		echo "${errs[RANDOM % 3]} 20 0" >$FLT/destroy_queue
		case $((RANDOM % 5)) in
		3) echo $((RANDOM % 2)) >$FLT/reuse_queue_mem ;;
		0) echo $(((RANDOM % 3) * 5000)) >$FLT/slow_runlist_us ;;
		1) echo $(((RANDOM % 2) * 2000)) >$FLT/lookup_delay_us ;;
		2) mapfile -t pasids < <(sed -n 's/.* pasid=\([0-9]*\) .*/\1/p' $DBG/queues | sort -u)
		   [ ${#pasids[@]} -gt 0 ] &&
			echo "${pasids[RANDOM % ${#pasids[@]}]} $((100 + RANDOM % 400))" >$FLT/hold_mutex ;;
		esac 2>/dev/null
		sleep 1
	done
}
faults_start() {
	faults_on || return 0
	fault_loop &
	faulter=$!
}
faults_stop() {
	faults_on && [ -n "${faulter:-}" ] || return 0
	kill $faulter
	wait $faulter 2>/dev/null
	faulter=
	local f
	for f in update_queue evict_process_queues restore_process_queues destroy_queue; do
		echo off >$FLT/$f
	done
	echo 0 >$FLT/slow_runlist_us
	echo 0 >$FLT/lookup_delay_us
	echo 0 >$FLT/reuse_queue_mem
}
# Sum kfdsim's fault counts (before its rmmod).
sum_faults() {
	[ -r $FLT/counts ] || return 0
	while read -r k v; do
		case $v in '' | *[!0-9]*) continue ;; esac
		count "fault.$k" "$v"
	done <$FLT/counts
}

load_start() {	# [gpload be arguments]
	# shellcheck disable=SC2086
	$GPLOAD be ${1:-$BE} --duration 100000 --json $T/pump.json --quiet --seed $RANDOM &
	pump=$!
	$GPLOAD lc $LC --duration 100000 --json $T/lc.json --quiet --seed $RANDOM &
	lc=$!
	writer_start
	faults_start
}
# load_stop PHASE [masks]: stop the writer and LC, then check that nothing
# stays parked (with "masks": nor shrunk), stop the pump, and check that both
# completed every packet exactly once.
load_stop() {
	local rc_lc rc_pump
	faults_stop
	writer_stop "$1"
	kill -TERM $lc
	wait $lc
	rc_lc=$?
	if wait_for 60 none_parked && [ "$(kstat evicted_refs)" = 0 ]; then
		tap_ok "$1: nothing left parked once LC stopped, evictions balanced"
	else
		tap_not_ok "$1: nothing left parked once LC stopped, evictions balanced (evicted_refs $(kstat evicted_refs))"
		grep -v ' active=1 evicted=0 suspended=0 ' $DBG/queues | head -5 | sed 's/^/# /'
	fi
	if [ "${2:-}" = masks ]; then
		if wait_for 60 masks_own; then
			tap_ok "$1: nothing left shrunk once LC stopped: every queue has its owner's CUs"
		else
			tap_not_ok "$1: nothing left shrunk once LC stopped # $(ks_masks)"
		fi
	fi
	kill -TERM $pump
	wait $pump
	rc_pump=$?
	tap_check "$1: every LC and BE packet completed exactly once (rc $rc_lc/$rc_pump)" \
		test "$rc_lc$rc_pump" = 00
	count packets "$(jq -r .packets $T/pump.json 2>/dev/null || echo 0)"
	count packets "$(jq -r .packets $T/lc.json 2>/dev/null || echo 0)"
}
# phase_end PHASE: every process of the phase is gone: kfdsim holds no
# process, queue or eviction, gpreempt's evictions are balanced, dmesg clean.
phase_end() {
	local eo
	if wait_for 60 ks_idle; then
		tap_ok "$1: no process, queue or eviction left in kfdsim"
	else
		tap_not_ok "$1: no process, queue or eviction left in kfdsim # $(tr '\n' ' ' <$DBG/stats)"
	fi
	if gp_loaded; then
		eo=$(gstat evicts_outstanding)
		tap_check "$1: gpreempt's evictions balanced (evicts_outstanding ${eo:-?})" test "$eo" = 0
		# Every process of the phase is gone: once the monitor has
		# reaped them, gp_queues holds nothing (issue 9: a stale entry
		# was seen once after 25 kill -9s on MES).
		if wait_for 60 gp_queues_empty; then
			tap_ok "$1: gp_queues empty once every process is gone and reaped"
		else
			tap_not_ok "$1: gp_queues empty once every process is gone and reaped # $(bpftool -j map dump name gp_queues 2>/dev/null |
				jq -c '[.[].formatted.value | {tgid, pasid, qid, state}] | .[:4]')"
			count stale_gp_queues
		fi
	else
		tap_skip_n 2 "$1: gpreempt's evictions balanced, gp_queues empty" "gpreempt not loaded"
	fi
	tap_dmesg_clean "$1: dmesg clean"
	dmesg_clear
	say "$1 done: $(counter packets) packets, $(counter reloads) reloads, $(counter kills_parked)+$(counter kills_running) kills, $(counter churns) churns, $(counter map_writes) map writes"
}

# Random control writes throughout (gpload maps fuzz: gp_prio, gp_prio_comm,
# gp_config, valid and invalid values, each undone within 200 ms).
jcount() {	# json-file field counter
	local v
	v=$(jq -r ".$2 // 0" "$1" 2>/dev/null)
	count "$3" "${v:-0}"
}
writer_start() {
	$GPLOAD maps fuzz --duration 100000 --hold-ms 200 --seed $RANDOM --json $T/fuzz.json >/dev/null &
	writer=$!
}
writer_stop() {	# PHASE
	kill -TERM $writer
	if wait $writer; then
		tap_ok "$1: gpload maps fuzz: every well-formed map write taken"
	else
		tap_not_ok "$1: gpload maps fuzz: a map refused a well-formed write"
	fi
	jcount $T/fuzz.json writes map_writes
	jcount $T/fuzz.json invalid map_writes_invalid
	gp_loaded && $GPLOAD maps reset >/dev/null
}

# --- phases ----------------------------------------------------------------------
# reload: rmmod/insmod of gpreempt under load, random parameters; after each
# rmmod every queue runs again; an invalid parameter now and then is refused.
phase_reload() {
	local i bad=0 ok=0 refused=0 parked=0 t1 t2 t3
	local bads=(tick_us=1 max_actions=0 backend=foo hysteresis_us=-1 max_suspend_ms=0)
	load_start
	for i in $(seq $RELOADS); do
		# Reload with the BE parked when it gets there (LC keeps it parked
		# most of the time).
		wait_for 3 ks_parked 3 && parked=$((parked + 1))
		t1=$EPOCHREALTIME
		gp_rmmod nostats || bad=$((bad + 1))
		t2=$EPOCHREALTIME
		if none_parked && [ "$(kstat evicted_refs)" = 0 ]; then
			ok=$((ok + 1))
		else
			bad=$((bad + 1))
			tap_diag "reload $i: parked after rmmod: $(grep -v ' active=1 evicted=0 suspended=0 ' $DBG/queues | head -1)"
		fi
		if [ $((i % 10)) = 1 ]; then
			insmod $GP "${bads[RANDOM % ${#bads[@]}]}" 2>/dev/null && { rmmod gpreempt; bad=$((bad + 1)); }
			refused=$((refused + 1))
		fi
		t3=$EPOCHREALTIME
		gp_insmod || { bad=$((bad + 1)); insmod $GP; }
		count reloads
		[ $((i % 10)) = 0 ] || [ $MODE != long ] &&
			say "$sched reload $i/$RELOADS ($parked with the BE parked; last: rmmod $(dt $t1 $t2) s, insmod $(dt $t3 $EPOCHREALTIME) s)"
	done
	count reloads_parked $parked
	tap_check "$sched reload: $RELOADS rmmod/insmod under load ($parked with the BE parked), every queue running after each rmmod ($ok), $refused invalid parameter sets refused" \
		test $bad = 0
	load_stop "$sched reload"
	phase_end "$sched reload"
}

# kill: kill -9 of a parked process (below LC) and of a running one (above LC).
# kill_when_parked SECONDS PID...: kill -9 each process as soon as kfdsim
# shows all its queues parked (not active); those left are in "alive".
declare -A PASID
kill_when_parked() {
	local end=$((SECONDS + $1)) v t p line rest
	shift
	alive=("$@")
	# tgid -> pasid from gp_queues, once every process is registered.
	while [ $SECONDS -lt $end ]; do
		PASID=()
		while read -r t p; do PASID[$t]=$p; done < <(bpftool -j map dump name gp_queues 2>/dev/null |
			jq -r '.[].formatted.value | "\(.tgid) \(.pasid)"')
		rest=0
		for v in "${alive[@]}"; do [ -n "${PASID[$v]:-}" ] || rest=1; done
		[ $rest = 0 ] && break
		sleep 0.5
	done
	while [ ${#alive[@]} -gt 0 ] && [ $SECONDS -lt $end ]; do
		declare -A seen=() act=()
		while read -r line; do
			[[ $line =~ pasid=([0-9]+).*\ active=([01]) ]] || continue
			seen[${BASH_REMATCH[1]}]=1
			[ "${BASH_REMATCH[2]}" = 1 ] && act[${BASH_REMATCH[1]}]=1
		done <$DBG/queues
		rest=()
		for v in "${alive[@]}"; do
			p=${PASID[$v]:-none}
			if [ -n "${seen[$p]:-}" ] && [ -z "${act[$p]:-}" ]; then
				kill -9 "$v"
				count kills_parked
			else
				rest+=("$v")
			fi
		done
		alive=("${rest[@]}")
		unset seen act
		sleep 0.05
	done
}

# diag_unparked PID...: why these processes were never seen parked.
diag_unparked() {
	local v p
	tap_diag "never parked: $*; gpreempt $(cd /sys/module/gpreempt/parameters 2>/dev/null &&
		grep -H . backend tick_us hysteresis_us max_actions max_rate max_suspend_ms 2>/dev/null | tr '\n' ' ')"
	for v in "$@"; do
		p=${PASID[$v]:-none}
		tap_diag "  $v (pasid $p) gp_queues: $(bpftool -j map dump name gp_queues 2>/dev/null |
			jq -c --argjson t "$v" '[.[].formatted.value | select(.tgid == $t) |
				{qid, kfd_priority, eff_priority, prio_source, state, pending, ptr_path, rptr, wptr, preempts, resumes, errors}]')"
		grep " pasid=$p " $DBG/queues | sed 's/^/#   kfdsim: /'
	done
	tap_diag "  all kfdsim queues:"
	sed 's/^/#     /' $DBG/queues
	tap_diag "  gp_stats: $(bpftool -j map dump name gp_stats 2>/dev/null | jq -c '.[0].formatted.value |
		del(.detect_hist, .preempt_hist, .detect_lat, .park_lat, .unpark_lat, .scan_ns_total, .scan_ns_last, .scan_ns_max)')"
	tap_diag "  gp_config: $(bpftool -j map dump name gp_config 2>/dev/null | jq -c '.[0].formatted.value')"
	tap_diag "  faults: $(tr '\n' ' ' <$FLT/counts 2>/dev/null)"
	dmesg | tail -15 | sed 's/^/#   dmesg: /'
}

phase_kill() {
	local i j b v vs missed=0 lingering=0 extra
	load_start
	for ((i = 0; i < KILLS; i += b)); do
		b=$((KILLS - i < KILL_BATCH ? KILLS - i : KILL_BATCH))
		# b processes below LC, each killed once all its queues are parked.
		vs=()
		for ((j = 0; j < b; j++)); do
			extra=
			[ $((RANDOM % 3)) = 0 ] && extra="--pfnmap"
			# shellcheck disable=SC2086
			$GPLOAD be --prio 1 --queues $((1 + RANDOM % 3)) --wg 4 --wg-us 500 \
				--duration 1000 --quiet $extra &
			vs+=($!)
		done
		kill_when_parked 120 "${vs[@]}"
		missed=$((missed + ${#alive[@]}))
		[ ${#alive[@]} = 0 ] || diag_unparked "${alive[@]}"
		kill -9 "${alive[@]}" 2>/dev/null
		wait "${vs[@]}" 2>/dev/null
		wait_for 60 ks_none_at 1 || lingering=$((lingering + 1))
		# b processes above LC, killed while they run.
		vs=()
		for ((j = 0; j < b; j++)); do
			extra=
			[ $((RANDOM % 3)) = 0 ] && extra="--pfnmap"
			[ $((RANDOM % 4)) = 0 ] && extra="$extra --sdma"
			# shellcheck disable=SC2086
			$GPLOAD be --prio 14 --queues $((1 + RANDOM % 3)) --wg 4 \
				--wg-us 500 --duration 1000 --quiet $extra &
			vs+=($!)
		done
		wait_for 60 ks_running 14
		sleep 0.$((RANDOM % 3))
		kill -9 "${vs[@]}"
		count kills_running $b
		wait "${vs[@]}" 2>/dev/null
		wait_for 60 ks_none_at 14 || lingering=$((lingering + 1))
		say "$sched kill $((i + b))/$KILLS parked and running"
	done
	tap_check "$sched kill: $KILLS processes killed while parked ($missed never parked within 120 s)" test $missed = 0
	tap_check "$sched kill: $KILLS parked and $KILLS running processes killed, their queues gone from kfdsim ($lingering lingered) and gp_queues" \
		eval "test $lingering = 0 && wait_for 60 gp_only_live"
	load_stop "$sched kill"
	phase_end "$sched kill"
}

# churn: queue create/destroy at four priorities during preemption, while a
# gp_prio flip storm moves the churners, the pump and LC between 0 and 15.
phase_churn() {
	local done=0 round=0 p pids rc=0 n dur=$CHURN_S secs=0
	load_start
	while [ "$done" -lt "$CHURNS" ]; do
		round=$((round + 1))
		pids=()
		# After the first round, only as long as the rest needs (at the
		# rate measured so far, +20 %), so the phase does not overshoot.
		[ "$done" -gt 0 ] && dur=$(( (CHURNS - done) * 12 * secs / (10 * done) + 1 ))
		[ "$dur" -gt "$CHURN_S" ] && dur=$CHURN_S
		[ "$dur" -lt 2 ] && dur=2
		for p in 2 6 10 13; do
			$GPLOAD churn --prio $p --wg 2 --wg-us 50 --duration $dur --quiet \
				--json $T/churn.$p.json --seed $RANDOM &
			pids+=($!)
		done
		secs=$((secs + dur))
		flip_storm "${pids[@]}" &
		flips=$!
		for p in "${pids[@]}"; do wait "$p" || rc=1; done
		kill -TERM $flips
		wait $flips || rc=1
		jcount $T/flip.json flips flips
		for p in 2 6 10 13; do
			n=$(jq -r .packets $T/churn.$p.json 2>/dev/null || echo 0)
			jcount $T/churn.$p.json destroy_retries destroy_retries
			done=$((done + n))
			count churns "$n"
			count packets "$n"
		done
		say "$sched churn round $round ($dur s): $done/$CHURNS create/destroy"
	done
	tap_check "$sched churn: $done queue create/destroy churns during preemption and a priority flip storm, exactly once" \
		test $rc = 0
	load_stop "$sched churn"
	phase_end "$sched churn"
}
flip_storm() {	# pids...: gp_prio of them, the pump and LC flipped between 0 and 15
	exec $GPLOAD maps flip --duration 100000 --json $T/flip.json "$@" $pump $lc >/dev/null
}

# race-exit: rmmod gpreempt racing with the exit (kill -9 or SIGTERM) of
# processes of which some are parked, one evicted by itself.
phase_race_exit() {
	local i v vs bad=0 sig
	load_start
	for i in $(seq $RACES); do
		vs=()
		$GPLOAD be --prio 1 --queues 2 --wg 4 --wg-us 500 --duration 1000 --quiet &
		vs+=($!)
		$GPLOAD be --prio 2 --wg 4 --wg-us 500 --duration 1000 --evict-ms 300 --quiet &
		vs+=($!)
		$GPLOAD be --prio 14 --wg 4 --wg-us 500 --duration 1000 --quiet &
		vs+=($!)
		wait_for 60 ks_parked 1
		sig=$([ $((RANDOM % 2)) = 0 ] && echo -9 || echo -TERM)
		sum_gp_stats
		kill $sig "${vs[@]}" &
		rmmod gpreempt || bad=$((bad + 1))
		wait "${vs[@]}" 2>/dev/null
		for v in "${vs[@]}"; do wait_for 60 gone $v || bad=$((bad + 1)); done
		if ! wait_for 60 none_parked; then
			bad=$((bad + 1))
			tap_diag "race-exit $i: parked after rmmod: $(grep -v ' active=1 evicted=0 suspended=0 ' $DBG/queues | head -1)"
		fi
		count races_exit
		gp_insmod || bad=$((bad + 1))
		count reloads
	done
	tap_check "$sched race-exit: $RACES rmmods racing with process exits, nothing left parked" \
		test $bad = 0
	load_stop "$sched race-exit"
	phase_end "$sched race-exit"
}

# race-park: kill -9 while a park is in flight.  kfdsim reloaded with the
# slowest runlist/MES call (100 ms), so a park takes that long; the victim is
# killed as soon as kfdsim shows its park started (queue suspended or
# evicted), after a random delay within the call.
phase_race_park() {
	local i v l bad=0 inflight=0 rc
	gp_rmmod
	sum_ks_stats
	sum_faults
	rmmod kfdsim
	insmod $KO sched=$sched runlist_us=100000 mes_us=100000 && insmod $GP
	for i in $(seq $RACES); do
		$GPLOAD be --prio 4 --queues 2 --wg 4 --wg-us 500 --duration 1000 --quiet &
		v=$!
		wait_for 60 ks_running 4
		$GPLOAD lc --prio 12 --wg 4 --wg-us 500 --period-us 300 --duration 1000 --quiet &
		l=$!
		if wait_for 60 ks_parked 4; then
			sleep 0.0$((RANDOM % 10))
			kill -9 $v
			inflight=$((inflight + 1))
		else
			kill -9 $v
		fi
		wait $v 2>/dev/null
		kill -TERM $l
		wait $l
		rc=$?
		[ $rc = 0 ] || bad=$((bad + 1))
		wait_for 60 ks_idle || bad=$((bad + 1))
		count races_park
		count kills_parking
	done
	tap_check "$sched race-park: $RACES kill -9s during a park ($inflight seen in flight), nothing left behind, LC exactly once" \
		test $bad = 0
	phase_end "$sched race-park"
}

# hang: the HWS hangs in the middle of the load (kfdsim fault
# hws_hang_after); gpreempt must fence the device with one line in dmesg,
# and once the hang is cleared, rmmod brings back everything it parked.
fenced_now() { dmesg | grep -q "$FENCE_MSG"; }
hung() { [ "$(awk '$1 == "hws_hangs" {print $2}' $FLT/counts)" -gt 0 ] 2>/dev/null; }
phase_hang() {
	local lines
	if ! faults_on; then
		tap_skip_n 9 "$sched hang" "kfdsim without fault injection"
		return
	fi
	load_start
	faults_stop	# only the hang in this phase: one fence line expected
	# A fresh gpreempt: no device fenced by the faults of earlier phases.
	sum_gp_stats
	gp_rmmod nostats
	dmesg_clear
	gp_insmod
	echo 20 >$FLT/hws_hang_after
	if wait_for 120 hung && wait_for 120 fenced_now; then
		sleep 2
		lines=$(dmesg | grep -c "$FENCE_MSG")
		tap_check "$sched hang: the hung device is fenced, with one line in dmesg ($lines)" test "$lines" = 1
	else
		tap_not_ok "$sched hang: the hung device is fenced # hws_hangs $(awk '$1 == "hws_hangs" {print $2}' $FLT/counts), no '$FENCE_MSG' in dmesg"
	fi
	count hangs
	echo 0 >$FLT/hws_hang_after
	echo 0 >$FLT/hws_hang
	gp_rmmod
	if none_parked && [ "$(kstat evicted_refs)" = 0 ]; then
		tap_ok "$sched hang: after the hang cleared, rmmod brought every queue back, evictions balanced"
	else
		tap_not_ok "$sched hang: after the hang cleared, rmmod brought every queue back # $(grep -v ' active=1 evicted=0 suspended=0 ' $DBG/queues | head -1)"
	fi
	gp_insmod
	load_stop "$sched hang"
	phase_end "$sched hang"
}

# pump: top up to PACKETS packets for this model (kfdsim's count since its
# load; gpload's own exactly-once count is what the table reports), capped at
# PUMP_MAX_S seconds.
phase_pump() {
	local end=$((SECONDS + PUMP_MAX_S))
	load_start "$PUMP"
	while [ $SECONDS -lt $end ] && [ "$(kstat packets_completed)" -lt "$PACKETS" ]; do
		sleep 5
		say "$sched pump: $(kstat packets_completed)/$PACKETS packets"
	done
	load_stop "$sched pump"
	phase_end "$sched pump"
}

# shrink (issue 19): gpreempt in shrink mode (a random shrink_pct) under the
# fault loop.  The pump sets every CU (ROCr's mask on each new queue), so
# BE queues co-run on what LC leaves instead of being parked.  Each round a
# victim with its own mask (CUs 0-5, as hsa_amd_queue_cu_set_mask sets) is
# waited for until it is shrunk, then either killed -9 while shrunk or left
# running while gpreempt is reloaded: after that rmmod every queue has its
# owner's mask again.
gp_insmod_shrink() {
	# shellcheck disable=SC2046
	insmod $GP shrink_pct=$((25 * (1 + RANDOM % 3))) $(gp_random_timing)
}
phase_shrink() {
	local i victim bad=0 shrunk=0 kills=0 reloads=0 at=0
	# An LC with work nearly all the time: what is shrunk stays shrunk.
	local LC="--prio 12 --wg 2 --wg-us 2000 --period-us 2000"
	sum_gp_stats
	gp_rmmod nostats
	gp_insmod_shrink || { tap_not_ok "$sched shrink: insmod gpreempt shrink_pct=..."; tap_not_run 9 "not loaded"; gp_insmod; return; }
	load_start "$BE --cu-mask all"
	for i in $(seq $((2 * RACES))); do
		$GPLOAD be --prio $MASKED_PRIO --wg 4 --wg-us 500 --duration 1000 --cu-mask 0-5 --quiet &
		victim=$!
		if wait_for 60 ks_shrunk $MASKED_PRIO $MASKED_CUS; then
			shrunk=$((shrunk + 1))
		else
			tap_diag "shrink $i: the masked victim was never shrunk: $(ks_cus $MASKED_PRIO | tr '\n' ' ')CUs"
		fi
		if [ $((i % 2)) = 1 ]; then
			kill -9 $victim
			wait $victim 2>/dev/null
			wait_for 60 gone $victim || bad=$((bad + 1))
			kills=$((kills + 1))
		else
			sum_gp_stats
			ks_shrunk $MASKED_PRIO $MASKED_CUS && at=$((at + 1))
			rmmod gpreempt || bad=$((bad + 1))
			if ! masks_own || ! none_parked; then
				bad=$((bad + 1))
				tap_diag "shrink $i: after rmmod: $(ks_masks)"
			fi
			gp_insmod_shrink || bad=$((bad + 1))
			count reloads
			reloads=$((reloads + 1))
			kill -TERM $victim
			wait $victim || bad=$((bad + 1))
		fi
		count shrinks_seen
	done
	tap_check "$sched shrink: $((2 * RACES)) masked victims shrunk ($shrunk)" test $shrunk = $((2 * RACES))
	tap_check "$sched shrink: $kills killed while shrunk, $reloads rmmods ($at with the victim shrunk): every mask given back, nothing parked" \
		test $bad = 0
	load_stop "$sched shrink" masks
	# The next phase gets gpreempt's usual random parameters.
	sum_gp_stats
	gp_rmmod nostats
	gp_insmod
	phase_end "$sched shrink"
}

# --- run ------------------------------------------------------------------------
# phase_lines PHASE: the test lines phase_PHASE prints (load_stop: 3, 4 with
# masks; phase_end: 4), on every path.
phase_lines() {
	case $1 in
	reload | churn | race_exit) echo 8 ;;
	kill | hang) echo 9 ;;
	race_park) echo 5 ;;
	pump) echo 7 ;;
	shrink) echo 10 ;;
	*) echo 0 ;;
	esac
}
sched_lines() {	# SCHED: the lines of its phases
	local ph n=0 phases=PHASES_$1
	for ph in ${!phases}; do
		n=$((n + $(phase_lines "$ph")))
	done
	echo $n
}
# The packets check, and the five counts of the long form.
tap_plan $(($(sched_lines hws) + $(sched_lines mes) + 1 + $([ $MODE = long ] && echo 5 || echo 0)))
dmesg -C
rmmod gpreempt 2>/dev/null
rmmod kfdsim 2>/dev/null
tap_memdebug || tap_diag "soak: not a memory-debugging guest (scripts/vm --memdebug)"
say "mode $MODE: hws: $PHASES_hws; mes: $PHASES_mes; $RELOADS reloads, $KILLS+$KILLS kills, $CHURNS churns, $RACES races of each kind per phase; memory $(awk '/MemTotal/ {print $2 / 1024 " MiB"}' /proc/meminfo)"
for sched in hws mes; do
	p0=$(counter packets)
	insmod $KO sched=$sched && gp_insmod ||
		{ tap_not_ok "$sched: insmod kfdsim + gpreempt"; tap_not_run $(($(sched_lines $sched) - 1)) "$sched: not loaded"; continue; }
	phases=PHASES_$sched
	for ph in ${!phases}; do
		"phase_$ph"
	done
	gp_rmmod
	sum_ks_stats
	sum_faults
	rmmod kfdsim
	say "$sched: $(( $(counter packets) - p0 )) packets checked"
done
tap_check "soak: at least $((2 * PACKETS)) packets checked exactly once ($(counter packets))" \
	test "$(counter packets)" -ge $((2 * PACKETS))
[ $MODE = long ] && for c in reloads:$((2 * RELOADS)) kills_parked:$((2 * KILLS)) \
	kills_running:$((2 * KILLS)) churns:$((2 * CHURNS)) packets:$((2 * PACKETS)); do
	tap_check "soak: ${c%:*} >= ${c#*:} ($(counter ${c%:*}))" test "$(counter ${c%:*})" -ge "${c#*:}"
done

# --- table --------------------------------------------------------------------------
tap_diag "soak ($MODE, $((SECONDS - START)) s, simulated GPU, memory-debugging guest: $(tap_memdebug && echo yes || echo no))"
tap_diag "| count | value |"
tap_diag "|---|---|"
row() { tap_diag "| $1 | $2 |"; }
sum_of() {	# counters whose name matches a glob, summed; "-" if none exists
	local k t=0 any=
	for k in "${!C[@]}"; do
		# shellcheck disable=SC2053
		[[ $k == $1 ]] || continue
		t=$((t + C[$k])) any=1
	done
	if [ -n "$any" ]; then echo "$t"; else echo -; fi
}
row "packets checked exactly once (gpload)" "$(counter packets)"
dmesg_clear
row "preemptions: gpreempt parks / unparks / backend errors (all $(counter unloads) loads, from its unload lines)" "$(counter unload.preempts) / $(counter unload.resumes) / $(counter unload.errors)"
row "queue preemptions in kfdsim (unmapped while running)" "$(counter ks.preemptions)"
row "reloads (rmmod/insmod under load; with the BE parked)" "$(counter reloads) ($(counter reloads_parked))"
row "kill -9: parked / running / during a park" "$(counter kills_parked) / $(counter kills_running) / $(counter kills_parking)"
row "rmmod racing with process exits" "$(counter races_exit)"
row "masked victims shrunk, then killed or reloaded under (shrink phase)" "$(counter shrinks_seen)"
row "queue create/destroy churns" "$(counter churns)"
row "priority flips (gp_prio storm)" "$(counter flips)"
row "random map writes (invalid ones)" "$(counter map_writes) ($(counter map_writes_invalid))"
row "rejected control values (gp_stats.bad_control)" "$(counter gp.bad_control)"
row "backend errors (gp_stats.errors)" "$(counter gp.errors)"
row "retries: p->mutex busy (gp_stats.busy_retries) / failed destroys retried (gpload churn)" "$(sum_of 'gp.*retr*') / $(counter destroy_retries)"
row "devices fenced / recovered (dmesg lines; HWS hangs injected)" "$(counter fences) / $(counter recoveries) ($(counter hangs))"
row "back-offs started / actions throttled (gp_stats.backoffs / .throttled)" "$(counter gp.backoffs) / $(counter gp.throttled)"
row "phases that ended with a stale gp_queues entry" "$(counter stale_gp_queues)"
for k in $(printf '%s\n' "${!C[@]}" | sort); do
	[[ $k == fault.* ]] && row "injected faults: ${k#fault.}" "${C[$k]}"
done
tap_diag "all counters:"
for k in $(printf '%s\n' "${!C[@]}" | sort); do
	[[ $k == gp.* || $k == ks.* || $k == fault.* ]] && printf '#   %-28s %s\n' "$k" "${C[$k]}"
done
tap_diag "guest memory after the soak: $(awk '/MemAvailable|Slab:/ {printf "%s %d MiB ", $1, $2 / 1024}' /proc/meminfo)"
rm -rf "$T"
tap_done
