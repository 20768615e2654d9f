#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The NRI v2 plugin (build/gpreempt-nri) on the host, without gpreempt (never
# loaded on the host): it registers with the runtime side of NRI v2 that
# containerd links (the NRI project's pkg/adaptation, build/nri-runtime),
# an invalid value fails CreateContainer with the hook's line (on the
# container or on its pod), a good one lets the container start and the hook
# logs why nothing was set, and a restarted plugin is synchronized with the
# running containers.  The rules themselves: test/vm/oci-nri.sh.  Skipped
# when make nri built nothing.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 16
CTL=$PWD/build/gpreemptctl
if [ ! -x build/gpreempt-nri ] || [ ! -x build/nri-runtime ]; then
	tap_skip "nri: the NRI v2 plugin" "make nri built nothing (no Go and NRI stub: scripts/setup)"
	tap_skip_rest "make nri built nothing"
	exit 0
fi
W=$(mktemp -d)
mkdir $W/plugins
mkfifo $W/cmd
build/nri-runtime --socket $W/nri.sock --plugin-dir $W/plugins <$W/cmd >$W/out 2>$W/runtime.log &
rt=$!
exec 7>$W/cmd
pl=
trap 'kill $pl 2>/dev/null; exec 7>&-; wait $rt 2>/dev/null; [ -n "${GP_KEEP:-}" ] || rm -rf "$W"' EXIT
plugin_start() {
	build/gpreempt-nri --socket $W/nri.sock --gpreemptctl $CTL --hook-arg --config \
		--hook-arg /dev/null --hook-arg --run-dir --hook-arg $W/run --hook-arg --log \
		--hook-arg $W/hook.log >>$W/plugin.log 2>&1 &
	pl=$!
}
waitfor() {	# SECONDS CMD...
	local end=$((SECONDS + $1))
	shift
	until "$@"; do [ $SECONDS -lt $end ] || return 1; sleep 0.05; done
}
echo 0 >$W/n
nri() {	# COMMAND...: one runtime command; its result on stdout
	local N=$(($(cat $W/n) + 1))
	echo $N >$W/n
	echo "$*" >&7
	waitfor 30 grep -q "^$N " $W/out
	sed -n "s/^$N //p" $W/out
}
syncs() { grep -c "^sync $1\$" $W/out; }

tap_check "nri: the runtime listens on its NRI socket" waitfor 30 test -S $W/nri.sock
plugin_start
tap_check "nri: the plugin registers and is synchronized" waitfor 30 grep -q '^sync 0$' $W/out
out=$(nri run bad /nri-test/bad 0 HIGH)
tap_diag "$out"
tap_check "nri: CreateContainer with HIGH fails with the hook's line" \
	grep -q '^error: CreateContainer: .*gpreempt: container c-bad: annotation gpreempt.io/priority="HIGH" refused: expected low, normal, high or 0..15' <<<"$out"
out=$(nri run badpod /nri-test/badpod 0 1x pod)
tap_check "nri: ... and with the bad value on the pod" grep -q '^error: CreateContainer: .*priority="1x" refused' <<<"$out"
tap_check "nri: a good value: the container starts" test "$(nri run good nri.slice:cri-containerd:good 0 high pod)" = ok
tap_check "nri: the hook ran at StartContainer: its cgroup from cgroupsPath, nothing set without gpreempt" \
	grep -q 'container good: no rule set: no cgroup /[^ ]*/nri.slice/cri-containerd-good.scope$' $W/hook.log
tap_check "nri: no annotation: the container starts" test "$(nri run plain /nri-test/plain 0)" = ok
tap_check "nri: ... and the hook did not run for it" sh -c "! grep -q 'container plain' $W/hook.log"
kill $pl
wait $pl 2>/dev/null
plugin_start
tap_check "nri: a restarted plugin is synchronized with the 2 running containers" waitfor 30 grep -q '^sync 2$' $W/out
tap_check "nri: ... and runs the hook for the annotated one" \
	waitfor 30 sh -c "[ \$(grep -c 'container good: no rule set' $W/hook.log) = 2 ]"
# The runtime (root) names the cgroup; a path that climbs out of its slice
# or names the root cgroup gets no rule, whatever the annotation asks.
tap_check "nri: cgroupsPath with .. : the container starts" \
	test "$(nri run esc /nri-test/../../system.slice 0 high)" = ok
tap_check "nri: cgroupsPath with .. : no rule on another cgroup, the hook says why" \
	waitfor 30 grep -q 'container esc: no rule set: cannot read cgroupsPath "/nri-test/../../system.slice"' $W/hook.log
tap_check "nri: cgroupsPath / : the container starts" test "$(nri run rootc / 0 high)" = ok
tap_check "nri: cgroupsPath / : no rule over the whole node, the hook says why" \
	waitfor 30 grep -q 'container rootc: no rule set: cannot read cgroupsPath "/"' $W/hook.log
nri stop esc >/dev/null
nri stop rootc >/dev/null
tap_check "nri: stop: ok" test "$(nri stop good)" = ok
tap_check "nri: no record left" sh -c "[ -z \"\$(ls $W/run 2>/dev/null)\" ]"
tap_done
