#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreemptctl selftest, as an operator runs it on first contact: gpreempt
# loaded in shadow mode (enable=0), another user's best-effort process
# running beside it at the priority the self-test's own BE has.  The report
# (JSON) has every field, each plausible (ordered percentiles, the call
# within the end-to-end time, the machine named), the other process is
# never parked, and the self-test's own BE was (its parks counted by the
# module).  Refused while gpreempt is enabled.  Then an injected failure
# (kfdsim's update_queue returns -EIO at the self-test's third call: the
# second run's park) stops it: exit 1, the run named, fewer runs done.
# Markdown names the same machine.  Last, a GPU reset during a run (kfdsim's
# next unmap fence times out: the HWS hangs, the GPU resets) stops it, and
# the report counts the reset from KFD's SMI reset events (0 in the runs
# before).  Counts and order only, no clock bound.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 15
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
ST="$CTL selftest --client $GPLOAD --seconds 1"

dmesg -C
# Short fence and reset times: only the injected timeout at the end uses them.
insmod "$OBJ/test/kfdsim/kfdsim.ko" fence_timeout_ms=300 gpu_reset_ms=500
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 enable=0
# Another user's BE: the self-test's LC at 12 would park it, were gpreempt enabled.
setpriv --reuid=65534 --regid=65534 --clear-groups \
	$GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 600 --quiet &
other=$!
wait_for 10 eval '[ -n "$(qfield $other state)" ]'
ticks_pass 3

$ST --runs 10 >/tmp/st.json 2>/tmp/st.err
rc=$?
r=$(cat /tmp/st.json)
tap_diag "system: $(jq -c .system <<<"$r" 2>/dev/null)"
tap_diag "report: $(jq -c '{runs_done, stopped, park, unpark, detect_us, lc_us, shadow, errors, other_processes_parked}' <<<"$r" 2>/dev/null)"
tap_check "selftest: exit 0, 10 runs of 10, not stopped (rc $rc: $(head -c 200 /tmp/st.err))" \
	test "$rc" = 0 -a "$(jq -r '[.runs_asked, .runs_done, .stopped] | join(" ")' <<<"$r")" = "10 10 "
tap_check "selftest: the machine named (kernel $(uname -r), the module's version, a GPU with its gfx target)" \
	jq -e --arg k "$(uname -r)" '.system.kernel == $k and .system.gpreempt != "unknown" and
		(.system.gpus | length) >= 1 and (.system.gpus[0].gfx_target_version | length) > 0' <<<"$r"
tap_check "selftest: park and unpark latencies present and ordered (0 < p50 <= p99 <= max)" \
	jq -e '[.park.end_to_end_us, .park.kfd_call_us, .unpark.end_to_end_us, .unpark.kfd_call_us,
		.lc_us.alone, .lc_us.beside_be, .lc_us.be_parked] |
		all(.p50 > 0 and .p50 <= .p99 and .p99 <= .max)' <<<"$r"
tap_check "selftest: the KFD call within the end-to-end park (max call <= max end to end)" \
	jq -e '.park.kfd_call_us.max <= .park.end_to_end_us.max and
		.unpark.kfd_call_us.max <= .unpark.end_to_end_us.max' <<<"$r"
tap_check "selftest: shadow stage counted parks and detection, no error, no fence" \
	jq -e '.shadow.parks > 0 and .shadow.backend_calls >= .shadow.parks and .detect_us.p50 > 0 and
		.errors == 0 and .device_fences_after == .device_fences_before' <<<"$r"
tap_check "selftest: the other user's BE never parked (report $(jq .other_processes_parked <<<"$r"), its queue: $(qfield $other preempts) parks)" \
	test "$(jq .other_processes_parked <<<"$r").$(qfield $other preempts)" = 0.0
tap_check "selftest: its own BE parked and unparked by the module (gp_stats $(gstat preempts)/$(gstat resumes), 11 each at least)" \
	test "$(gstat preempts)" -ge 11 -a "$(gstat resumes)" -ge 11
tap_check "selftest: still shadow mode after it (shadow_active 1)" stat_is shadow_active 1
tap_check "selftest: watched the GPU's reset events and saw none ($(jq -c '[.gpus_watched_for_resets, .gpu_resets_during_run]' <<<"$r"))" \
	jq -e '.gpus_watched_for_resets >= 1 and .gpu_resets_during_run == 0' <<<"$r"

# Refused while enabled: it would not be the only one parking.
echo 1 >/sys/module/gpreempt/parameters/enable
ticks_pass 3
$ST --runs 1 >/dev/null 2>/tmp/st.err
rc=$?
tap_check "selftest: refused while gpreempt is enabled (rc $rc: $(head -c 120 /tmp/st.err))" \
	bash -c '[ "$0" = 1 ] && grep -q "only in shadow mode" /tmp/st.err' "$rc"
echo 0 >/sys/module/gpreempt/parameters/enable
ticks_pass 3

# The injected failure: the self-test's third update_queue (run 2's park) fails.
echo "EIO 0 3" >/sys/kernel/debug/kfdsim/fault/update_queue
$ST --runs 10 >/tmp/st.json 2>/tmp/st.err
rc=$?
echo off >/sys/kernel/debug/kfdsim/fault/update_queue
r=$(cat /tmp/st.json)
tap_diag "stopped: $(jq -c '{runs_done, stopped, errors}' <<<"$r" 2>/dev/null)"
tap_check "selftest: stops at the injected failure (exit $rc, $(jq -r '.runs_done' <<<"$r") runs done: $(jq -r .stopped <<<"$r"))" \
	jq -e --argjson rc "$rc" '$rc == 1 and .runs_done < 10 and (.stopped | test("^run [0-9]+: the park"))' <<<"$r"
$ST --runs 2 --markdown >/tmp/st.md 2>/tmp/st.err
tap_check "selftest --markdown: the table and the kernel" \
	bash -c 'grep -q "^| park call (KFD" /tmp/st.md && grep -q "kernel $(uname -r)" /tmp/st.md'
kill -TERM $other
wait $other
tap_check "the other user's BE: every packet exactly once" test $? = 0
echo 1 >/sys/kernel/debug/kfdsim/fence_timeout_next	# the next unmap's fence times out
$ST --runs 10 >/tmp/st.json 2>/tmp/st.err
rc=$?
r=$(cat /tmp/st.json)
tap_diag "reset: $(jq -c '{runs_done, stopped, gpu_resets_during_run, device_fences_after}' <<<"$r" 2>/dev/null), kfdsim gpu_resets $(kstat gpu_resets)"
tap_check "selftest: a GPU reset during the run stops it and is counted from KFD's reset events (exit $rc: $(jq -r .stopped <<<"$r"))" \
	jq -e --argjson rc "$rc" '$rc == 1 and .gpu_resets_during_run == 1 and (.stopped | test("a GPU reset during the run \\(1\\)"))' <<<"$r"
sim_unload
tap_dmesg_clean "sim-selftest"
tap_done
