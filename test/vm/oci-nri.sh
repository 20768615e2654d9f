#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NRI v2 plugin (build/gpreempt-nri, tools/gpreempt-nri) against the
# runtime side of NRI v2 that containerd 1.7 and 2.x link: the NRI
# project's pkg/adaptation (Debian's golang-github-containerd-nri-dev),
# driven by build/nri-runtime.  "Containers" are cgroups under
# /sys/fs/cgroup/nri.slice with kfdsim loads in them; the runtime sends
# CreateContainer + StartContainer with their pid and cgroupsPath, then
# StopContainer + RemoveContainer.  An invalid annotation fails the
# creation with the hook's line; an annotated-high LC parks an unannotated
# BE; no rule or record is left; after rmmod/insmod of gpreempt a restart
# of the plugin (NRI's Synchronize) brings the rules back.  The plugin's
# cost per container start is measured (TCG guest).  containerd itself:
# test/vm/oci-containerd.sh.  Runs inside the test guest (test/run-vm oci).
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/nri.sh
tap_plan 21
GP_OBJ=${GP_OBJ:-.}
CTL=$PWD/build/gpreemptctl
GPLOAD=$PWD/build/gpload
W=/tmp/nri
LOG=$W/hook.log
CONF=$W/gpreempt.conf
RUNDIR=/run/gpreempt/containers
CG=/sys/fs/cgroup/nri.slice
NRI_SOCK=$W/nri.sock
LOAD_ARGS="--mode be --wg 8 --wg-us 2000 --inflight 4 --duration 1800 --quiet"

if [ ! -x build/gpreempt-nri ] || [ ! -x build/nri-runtime ]; then
	tap_skip "NRI v2 plugin" "make nri built nothing (no Go and NRI stub: scripts/setup)"
	tap_skip_rest "make nri built nothing"
	exit 0
fi
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
rm -rf $W && mkdir -p $W/plugins $CG && : >$CONF
mkfifo $W/cmd
build/nri-runtime --socket $W/nri.sock --plugin-dir $W/plugins <$W/cmd >$W/out 2>$W/runtime.log &
rt=$!
exec 7>$W/cmd
syncs() { grep -c '^sync ' $W/out; }
echo 0 >$W/n
# nri COMMAND...: one runtime command; its result on stdout (run in $(...):
# the count of commands sent is kept in a file)
nri() {
	local N=$(($(cat $W/n) + 1))
	echo $N >$W/n
	echo "$*" >&7
	wait_for 60 grep -q "^$N " $W/out
	sed -n "s/^$N //p" $W/out
}
# ctr NAME: a cgroup of its own with a kfdsim load in it; its pid in $!
ctr() {
	mkdir -p $CG/$1
	sh -c "echo \$\$ > $CG/$1/cgroup.procs && exec $GPLOAD $LOAD_ARGS --prio 5" >$W/$1.log 2>&1 &
}

tap_check "nri: the runtime listens on its NRI socket" wait_for 30 test -S $W/nri.sock
plugin_start
tap_check "the plugin connects to the NRI v2 runtime and is synchronized" wait_for 30 grep -q "^sync 0$" $W/out
plugin_insmod

# 1. An invalid value fails CreateContainer with the hook's line.
sleep 600 >/dev/null &
sl=$!
mkdir -p $CG/bad && echo $sl >$CG/bad/cgroup.procs
out=$(nri run bad /nri.slice/bad $sl HIGH)
tap_diag "$out"
tap_check "HIGH: CreateContainer fails with the hook's refusal" \
	grep -q 'error: CreateContainer: .*annotation gpreempt.io/priority="HIGH" refused: expected low, normal, high or 0..15' <<<"$out"
tap_check "HIGH: no rule and no record" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ -z \"\$(ls $RUNDIR 2>/dev/null)\" ]"

# 2. LC (high) parks BE (no annotation); the LC's cgroup found from its
# cgroupsPath alone (pid 0), in the systemd driver's form containerd sends.
ctr cri-containerd-lc.scope
lc=$!
ctr be
be=$!
tap_check "LC started (the annotation on its pod; StartContainer with cgroupsPath nri.slice:cri-containerd:lc only)" \
	test "$(nri run lc nri.slice:cri-containerd:lc 0 high pod)" = ok
tap_check "BE started (no annotation)" test "$(nri run be /nri.slice/be $be)" = ok
tap_check "the LC rule: 11 (the default cap) on $CG/cri-containerd-lc.scope" rule_on $CG/cri-containerd-lc.scope 11
lc_parks_be "$lc" "$be"

# 3. The rules survive rmmod/insmod and a restart of the plugin: on
# reconnection NRI hands it every container (Synchronize).
plugin_reload containers
s=$(syncs)
plugin_start
tap_check "the restarted plugin is synchronized with both containers" \
	wait_for 30 sh -c "grep '^sync ' $W/out | tail -n +$((s + 1)) | grep -q '^sync 2$'"
wait_for 10 eval '[ "$(ct_rules)" = 1 ]'
tap_check "after the plugin's restart: the LC rule at 11 again" rule_on $CG/cri-containerd-lc.scope 11
grep 'synchronized' $W/plugin.log | tail -n 1 | sed 's/^/# /'
be_state "after the restart: BE parked again" "$be" parked

# none_left NAME: within 30 s (a hook is one gpreemptctl run, seconds in a
# loaded guest), no container rule and no record remain; else what is left.
none_left() {
	if wait_for 30 no_container_state; then
		tap_ok "$1"
	else
		tap_not_ok "$1 # rules: $($CTL --json list | jq -c '[.[] | select(.kind == "container") | .target]'), records: $(ls $RUNDIR | tr '\n' ' ')"
		tail -n 5 $W/plugin.log 2>/dev/null | sed 's/^/# plugin: /'
	fi
}

# 4. StopContainer removes the rule: BE runs again; nothing is left.
tap_check "LC stopped (StopContainer, RemoveContainer)" test "$(nri stop lc)" = ok
# RemoveContainer reaches the plugin as an event: its hook may still run.
none_left "LC stopped: its rule and its record are gone"
be_state "LC stopped: BE running again" "$be" running
nri stop be >/dev/null
stop_be "$lc"; lrc=$be_rc
stop_be "$be"
tap_check "both loads ended cleanly (SIGTERM)" test "$lrc $be_rc" = "0 0"

# 5. The plugin's cost per annotated container start (CreateContainer's
# check + StartContainer's rule, both one gpreemptctl run) and stop.
n=10 t0=$(date +%s%N)
bad=
for i in $(seq $n); do
	[ "$(nri run c$i /nri.slice/bad $sl normal)" = ok ] || bad="$bad c$i not started;"
	[ "$(nri stop c$i)" = ok ] || bad="$bad c$i not stopped;"
done
if [ -z "$bad" ]; then
	tap_ok "cost loop: $n annotated containers started and stopped"
else
	tap_not_ok "cost loop: $n annotated containers started and stopped #$bad"
fi
t1=$(date +%s%N)
tap_diag "$n annotated start+stop pairs through NRI: $(( (t1 - t0) / n / 1000 )) us each (TCG guest); the hook's own times: $(grep -o 'in [0-9.]* ms' $LOG | tail -n 4 | tr '\n' ' ')"
none_left "after $n start/stop pairs: no container rule and no record"

kill $sl $pl 2>/dev/null
exec 7>&-
wait $rt 2>/dev/null
rmdir $CG/* $CG 2>/dev/null
tap_check "rmmod gpreempt kfdsim" sim_unload
tap_done
