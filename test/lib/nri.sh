# SPDX-License-Identifier: GPL-2.0
# test/lib/nri.sh - helpers of the NRI v2 plugin's VM tests (sourced after
# sim.sh): test/vm/oci-nri.sh on NRI's own runtime side, test/vm/oci-containerd.sh
# under containerd.  They use the test's W (its work directory), CTL, CONF,
# LOG, RUNDIR, GP_OBJ and NRI_SOCK (the runtime's NRI socket).

# plugin_start: build/gpreempt-nri on NRI_SOCK, its log in $W/plugin.log, its pid in pl.
plugin_start() {
	build/gpreempt-nri --socket $NRI_SOCK --gpreemptctl $CTL --hook-arg --config \
		--hook-arg $CONF --hook-arg --log --hook-arg $LOG >>$W/plugin.log 2>&1 &
	pl=$!
}
# ct_rules: gpreempt's container rules; records: the hook's container records.
ct_rules() { $CTL --json list | jq '[.[] | select(.kind == "container")] | length'; }
records() { ls $RUNDIR 2>/dev/null | wc -l; }
# no_container_state: no container rule and no record.
no_container_state() { [ "$(ct_rules)" = 0 ] && [ "$(records)" = 0 ]; }
# rule_on CGROUP PRIORITY: a container rule on CGROUP at PRIORITY.
rule_on() {
	$CTL --json list | jq -e --arg t "$1" --argjson p "$2" \
		'.[] | select(.kind == "container" and .target == $t and .priority == $p)' >/dev/null
}
# plugin_insmod: kfdsim and gpreempt loaded, or a "not ok" line for each
# check of the plan left and the test ends (tap_bail).
plugin_insmod() {
	insmod $GP_OBJ/test/kfdsim/kfdsim.ko && insmod $GP_OBJ/module/gpreempt.ko max_suspend_ms=60000 ||
		{ tap_not_ok "insmod kfdsim and gpreempt"; tap_bail; }
}
# be_state NAME TGID STATE: ok NAME when the process's queue is in STATE within 30 s.
be_state() {
	if wait_for 30 is "$2" state "$3"; then tap_ok "$1"
	else tap_not_ok "$1 # state $(qf "$2" state)"; fi
}
# lc_parks_be LC BE: LC's queue at 11 from its container's cgroup rule, BE's
# parked.  Two lines.
lc_parks_be() {
	wait_for 30 is "$1" source cgroup && wait_for 10 is "$1" priority 11
	tap_check "LC's queue at 11 from cgroup" sh -c "[ '$(qf "$1" priority) $(qf "$1" source)' = '11 cgroup' ]"
	be_state "BE parked while LC has work" "$2" parked
}
# plugin_reload WHAT: the plugin stopped, gpreempt reloaded under WHAT (the
# running containers): no container rule is left.  Two lines.
plugin_reload() {
	kill $pl; wait $pl 2>/dev/null
	tap_check "reload gpreempt under the running $1" \
		sh -c "rmmod gpreempt && insmod $GP_OBJ/module/gpreempt.ko max_suspend_ms=60000"
	tap_check "after the reload: no container rule" test "$(ct_rules)" = 0
}
