#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreemptctl selftest with hip-work, the client it uses on a real GPU:
# Debian's HIP 5.2.3 (unmodified) on kfdsim, whose kernel spins on real
# hardware for as long as kfdsim models it.  Both of the self-test's
# processes run at HIP's default stream priority (KFD 7, as every ROCm
# queue), so their levels come only from the pid rules selftest sets on
# them: the shadow stage must count parks, the parks must be its own BE's,
# and no rule of its own is left after it.  Counts and order only, no clock
# bound.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
HIP=build/hip-work
tap_plan 7
kfdclient_begin hip-selftest
kfdclient_need $HIP skip "build/hip-work # SKIP hipcc missing (Debian's hipcc, libamdhip64-dev: run scripts/setup)"
export HSA_ENABLE_SDMA=0

tap_check "insmod kfdsim num_cu=8, gpreempt in shadow mode" \
	sh -c "insmod $KO num_cu=8 && insmod $OBJ/module/gpreempt.ko enable=0"
ticks_pass 3
p0=$(gstat preempts)
timeout 600 $CTL selftest --client $HIP --runs 5 --seconds 2 >$T/st.json 2>$T/st.err
rc=$?
r=$(cat $T/st.json)
tap_diag "report: $(jq -c '{client_kind, runs_done, stopped, park, unpark, detect_us, lc_us, shadow, errors, other_processes_parked}' <<<"$r" 2>/dev/null)"
tap_check "selftest --client hip-work: exit 0, 5 runs of 5, not stopped (rc $rc: $(head -c 200 $T/st.err))" \
	test "$rc" = 0 -a "$(jq -r '[.client_kind, .runs_done, .stopped] | join(" ")' <<<"$r")" = "hip 5 "
tap_check "selftest --client hip-work: LC latencies present and ordered (0 < p50 <= p99 <= max)" \
	jq -e '[.lc_us.alone, .lc_us.beside_be, .lc_us.be_parked, .park.end_to_end_us, .unpark.end_to_end_us] |
		all(.p50 > 0 and .p50 <= .p99 and .p99 <= .max)' <<<"$r"
tap_check "selftest --client hip-work: both at KFD priority 7, the shadow stage counted parks (its pid rules made LC the higher level)" \
	jq -e '.shadow.parks > 0 and .errors == 0 and .device_fences_after == .device_fences_before' <<<"$r"
tap_check "selftest --client hip-work: its BE parked by the module ($(( $(gstat preempts) - p0 )) parks, 5 at least), no other process" \
	test $(( $(gstat preempts) - p0 )) -ge 5 -a "$(jq .other_processes_parked <<<"$r")" = 0
tap_check "selftest --client hip-work: no pid rule of its own left ($(bpftool -j map dump name gp_prio | jq length) in gp_prio)" \
	test "$(bpftool -j map dump name gp_prio | jq length)" = 0
rmmod gpreempt
tap_check "rmmod kfdsim: no process left" rmmod kfdsim
tap_done
