# SPDX-License-Identifier: GPL-2.0
# test/lib/sim.sh - helpers of the kfdsim VM tests (sourced after tap.sh).
CTL=${CTL:-build/gpreemptctl}

# gp_insmod ARGS...: insmod gpreempt.ko with the test's ARGS, then the
# host's GP_TEST_MODARGS (test/run-vm), which so override them.
# GP_TEST_KO=testing loads the GP_TESTING build (build/testing/: its
# test_defence_off= switches a defence off for test/run-defences), another
# non-empty value is a module path; unset, the module users get.
gp_insmod() {
	local ko=${GP_OBJ:-.}/module/gpreempt.ko
	case ${GP_TEST_KO:-} in
	'') ;;
	testing) ko=${GP_OBJ:-.}/build/testing/module/gpreempt.ko ;;
	*) ko=$GP_TEST_KO ;;
	esac
	# shellcheck disable=SC2086 # NAME=VALUE words
	insmod "$ko" "$@" ${GP_TEST_MODARGS:-}
}
# wait_for SECONDS CMD...: run CMD every 50 ms until it succeeds; 1 on timeout.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}
# gstat FIELD: a gp_stats field.
gstat() { bpftool -j map dump name gp_stats | jq -r ".[0].formatted.value.$1"; }
# qfield TGID FIELD: a gp_queues field of the process's first queue (raw values).
qfield() {
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" "[.[].formatted.value | select(.tgid == \$t)][0].$2 // empty"
}
# qf TGID FIELD: the same through 'gpreemptctl --json status' (names for states, sources).
qf() {
	$CTL --json status 2>/dev/null |
		jq -r --argjson t "$1" "[.queues[] | select(.tgid == \$t)][0].$2 // empty"
}
# is TGID FIELD VALUE
is() { [ "$(qf "$1" "$2")" = "$3" ]; }
# stat_is FIELD VALUE, stat_ge FIELD N: a gp_stats field is VALUE, at least N.
stat_is() { [ "$(gstat "$1")" = "$2" ]; }
stat_ge() { [ "$(gstat "$1")" -ge "$2" ] 2>/dev/null; }
# ticks_pass N: wait until the monitor has ticked N more times (up to 120 s);
# gp_stats and gp_queues are published in a tick.
ticks_pass() { local t0; t0=$(gstat ticks); wait_for 120 stat_ge ticks $((t0 + $1)); }
# kstat KEY: a kfdsim stats counter.
kstat() { awk -v k="$1" '$1 == k {print $2}' /sys/kernel/debug/kfdsim/stats; }
# fcount KEY: an injected-fault counter of kfdsim (fault/counts).
fcount() { awk -v k="$1" '$1 == k {print $2}' /sys/kernel/debug/kfdsim/fault/counts; }
# fc_ge KEY N: that counter is at least N.
fc_ge() { [ "$(fcount "$1")" -ge "$2" ] 2>/dev/null; }
# refs_zero: every eviction is balanced (kfdsim's qpd->evicted sum is 0).
refs_zero() { [ "$(kstat evicted_refs)" = 0 ]; }
# ks_idle: kfdsim has no queue and no process left.
ks_idle() { [ "$(kstat queues)" = 0 ] && [ "$(kstat processes)" = 0 ]; }
# linefield LINE KEY: the value of KEY in a line of space-separated key=value
# pairs (a kfdsim queue line, a gpload result line).
linefield() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# stop_be PID: SIGTERM a gpload BE (it drains and verifies); its status in be_rc.
stop_be() { kill -TERM "$1"; wait "$1"; be_rc=$?; }
# run_bounded SECONDS CMD...: CMD in the background, waited for up to SECONDS;
# rc is its status (or "timeout"), bg its pid (still running after a
# timeout); a diagnostic says how long it took.
run_bounded() {
	local secs=$1 t0=$SECONDS
	shift
	"$@" &
	bg=$!
	if wait_for "$secs" sh -c "! kill -0 $bg 2>/dev/null"; then
		wait $bg
		rc=$?
	else
		rc=timeout
	fi
	tap_diag "$1 took $((SECONDS - t0)) s (simulation, TCG guest)"
}
# sim_unload: rmmod gpreempt, wait for kfdsim to have no queue or process, rmmod kfdsim.
sim_unload() { rmmod gpreempt; wait_for 30 ks_idle; rmmod kfdsim; }
# state_is TGID STATE: the process's first queue is in STATE (gp_queues' raw value).
state_is() { [ "$(qfield "$1" state)" = "$2" ]; }
# lc_be_round NAME SECONDS: a gpload BE (GPLOAD, BE_ARGS) with a 3 s LC burst
# (LC_ARGS) beside it, with gpreempt loaded: LC's and BE's packets complete
# exactly once, BE is parked and unparked while LC runs and runs again
# within SECONDS after it.  The results in /tmp/lc.json and /tmp/be.json.
lc_be_round() {
	local name=$1 be lc_rc be_rc st pre res
	# BE outlives every check below; it is stopped with SIGTERM (drain + verify).
	$GPLOAD $BE_ARGS --duration 60 --json /tmp/be.json --quiet &
	be=$!
	sleep 1
	$GPLOAD $LC_ARGS --duration 3 --period-us 3000 --json /tmp/lc.json --quiet
	lc_rc=$?
	wait_for "$2" state_is $be 0
	st=$(qfield $be state)
	pre=$(qfield $be preempts)
	res=$(qfield $be resumes)
	kill -TERM $be
	wait $be
	be_rc=$?
	tap_check "$name: LC packets completed exactly once" test $lc_rc -eq 0
	tap_check "$name: BE packets completed exactly once" test $be_rc -eq 0
	if [ "${pre:-0}" -gt 0 ] && [ "${res:-0}" -gt 0 ]; then
		tap_ok "$name: BE parked and unparked while LC ran ($pre/$res)"
	else
		tap_not_ok "$name: BE parked and unparked while LC ran (${pre:-none}/${res:-none})"
	fi
	tap_check "$name: BE running again after LC finished" test "$st" = 0
}
