#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NRI v2 plugin (build/gpreempt-nri) under a real containerd 1.7:
# Debian trixie's containerd and runc, from the trixie root scripts/setup
# makes (they link trixie's glibc: containerd runs chrooted there, with the
# guest's /proc, /sys, /dev, /run and /tmp bound in), with NRI enabled in
# its config.  Pods are made through CRI by build/cri-client (what the
# kubelet does; crictl is not packaged in Debian), with the
# gpreempt.io/priority annotation on the pod, as a pod YAML's
# metadata.annotations.  The sandbox image is a local one (no registry):
# busybox-static, with cri-client as its /pause, imported with ctr.
# An invalid value fails the container's creation with the hook's line,
# which the CRI client sees; an annotated-high LC pod parks an unannotated
# BE pod, both running kfdsim loads; the rules survive rmmod/insmod of
# gpreempt and a restart of the plugin (NRI's Synchronize); no rule or
# record is left after the pods are removed.  Prints the plugin's cost per
# container start (CreateContainer + StartContainer, with and without the
# plugin; TCG guest, never asserted).  Runs inside the test guest (test/run-vm
# oci).
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/containerd.sh
. test/lib/nri.sh
tap_plan 22
GP_OBJ=${GP_OBJ:-.}
CTL=$PWD/build/gpreemptctl
W=/tmp/ctd
LOG=$W/hook.log
CONF=$W/gpreempt.conf
RUNDIR=/run/gpreempt/containers
NRI_SOCK=/run/nri/nri.sock
ANN=gpreempt.io/priority
LOAD_ARGS="--mode be --wg 8 --wg-us 2000 --inflight 4 --duration 1800 --quiet"

if ! containerd_setup $W >/tmp/ctd.why; then
	tap_skip "containerd and the NRI v2 plugin" "$(cat /tmp/ctd.why)"
	tap_skip_rest "$(cat /tmp/ctd.why)"
	exit 0
fi
: >$CONF
if containerd_start >$W/start.out; then
	tap_ok "containerd starts in the trixie root, answers on CRI and imports the local image"
else
	tap_not_ok "containerd starts in the trixie root, answers on CRI and imports the local image"
	sed 's/^/# /' $W/start.out
	tap_bail "containerd did not start"
fi
tap_diag "CRI: $("${CRI[@]}" version)"

syncs() { grep -c 'synchronized' $W/plugin.log; }

plugin_start
tap_check "the plugin registers on containerd's NRI socket and is synchronized" \
	wait_for 60 grep -q 'synchronized 0 of 0 containers' $W/plugin.log
grep 'connected to' $W/plugin.log | sed 's/^/# /'
plugin_insmod

# 1. An invalid value: CreateContainer fails, the CRI client (the kubelet's
# place) gets the hook's line; nothing is left.
out=$("${CRI[@]}" run bad --pod-ann $ANN=HIGH -- /bin/sleep 600 2>&1)
tap_diag "$out"
# started after all (no plugin): removed, so that the rest starts clean
[ "$(wc -w <<<"$out")" = 3 ] && "${CRI[@]}" rm "${out%% *}"
tap_check "HIGH: the container's creation fails with the hook's refusal" \
	grep -q 'annotation gpreempt.io/priority="HIGH" refused: expected low, normal, high or 0..15' <<<"$out"
tap_check "HIGH: no container, no rule and no record" no_pods_left

# 2. LC (the pod annotated high) parks BE (no annotation).
read -r lcpod lcid _ < <("${CRI[@]}" run lc --pod-ann $ANN=high "${WORK[@]}" -- /gp/gpload $LOAD_ARGS --prio 5)
read -r bepod beid _ < <("${CRI[@]}" run be "${WORK[@]}" -- /gp/gpload $LOAD_ARGS --prio 5)
tap_check "LC and BE pods run (RunPodSandbox, CreateContainer, StartContainer)" test -n "$lcid" -a -n "$beid"
if [ -z "$lcid" ] || [ -z "$beid" ]; then
	tail -n 20 $CTD_DIR/containerd.log | sed 's/^/# /'
	kill $pl
	containerd_stop
	tap_bail "no pods"
fi
lc=$("${CRI[@]}" pid "$lcid")
be=$("${CRI[@]}" pid "$beid")
LCG=/sys/fs/cgroup/kubepods/besteffort/podlc/$lcid
tap_check "the LC rule: 11 (the default cap) on the container's cgroup" rule_on "$LCG" 11
tap_check "the LC's load is in that cgroup" grep -qx "0::${LCG#/sys/fs/cgroup}" /proc/"$lc"/cgroup
lc_parks_be "$lc" "$be"

# 3. rmmod/insmod drops the rules; a restart of the plugin (NRI hands it
# every container) brings them back.
plugin_reload pods
s=$(syncs)
plugin_start
tap_check "the restarted plugin is synchronized with containerd's containers" \
	wait_for 60 sh -c "[ \$(grep -c synchronized $W/plugin.log) -gt $s ]"
grep 'synchronized' $W/plugin.log | tail -n 1 | sed 's/^/# /'
tap_check "after the plugin's restart: the LC rule at 11 again" wait_for 10 rule_on "$LCG" 11
be_state "after the restart: BE parked again" "$be" parked

# 4. The LC pod removed (StopContainer, RemoveContainer, StopPodSandbox,
# RemovePodSandbox): its rule and record go, BE runs again.
tap_check "LC pod removed" "${CRI[@]}" rm "$lcpod"
tap_check "LC removed: its rule and its record are gone" no_container_state
be_state "LC removed: BE running again" "$be" running
tap_check "BE pod removed" "${CRI[@]}" rm "$bepod"

# 5. The plugin's cost per container start: CreateContainer + StartContainer
# of an annotated container, with the plugin and without it.
cost() {	# WHAT: one line
	local i pod id ms all= bad=
	for i in 1 2 3; do
		read -r pod id ms < <("${CRI[@]}" run c$i --pod-ann $ANN=normal -- /bin/sleep 600)
		[ -n "$ms" ] || { bad="$bad c$i not started;"; continue; }
		all="$all $ms"
		"${CRI[@]}" rm "$pod" || bad="$bad c$i not removed;"
	done
	if [ -z "$bad" ]; then
		tap_ok "cost loop $1: 3 annotated containers started and removed"
	else
		tap_not_ok "cost loop $1: 3 annotated containers started and removed #$bad"
	fi
	mean=$(echo $all | awk '{ for (i = 1; i <= NF; i++) s += $i; printf "%.0f (%s)", s / NF, $0 }')
}
cost "with the plugin"
with=$mean
kill $pl; wait $pl 2>/dev/null
cost "without the plugin"
without=$mean
tap_diag "CreateContainer + StartContainer of an annotated container, mean (each) of 3: $with ms with the plugin, $without ms without (TCG guest)"
tap_check "after the pods: no container, no rule and no record" no_pods_left

containerd_stop
tap_check "rmmod gpreempt kfdsim" sim_unload
tap_done
