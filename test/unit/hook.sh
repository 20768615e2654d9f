#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The container hook's input handling on the host: test/unit/test_hook.c
# (tools/gpreemptctl/common/hookparse.c, ASan/UBSan; with the pod and
# container ids a kubelet's cgroup path names, for the metrics labels) and "gpreemptctl hook" as
# podman and containerd run it, without gpreempt (never loaded on the host):
# exit status, the one refusal line, the NRI v0.1 result on stdout.  The
# rules themselves are tested in the guest (test/vm/oci-podman.sh).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
# test_hook.c prints 101 lines, this file 31.
tap_plan $((101 + 31))
CC=${CC_USER:-gcc}
CTL=build/gpreemptctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if $CC -O2 -g -Wall -Wextra -Werror -fsanitize=address,undefined -I bpf -I tools/gpreemptctl/common \
	-o "$tmp/test_hook" test/unit/test_hook.c tools/gpreemptctl/common/hookparse.c -ljson-c 2>"$tmp/cc.log"; then
	"$tmp/test_hook" | sed -u -e '/^TAP version/d' -e '/^1\.\.[0-9]*$/d' \
		-e 's/^\(not ok\|ok\) [0-9][0-9]* /\1 - hook: /' -e 's/^\(not ok\|ok\) - hook: - /\1 - hook: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || TAP_FAILED=$((TAP_FAILED + 1))
else
	tap_not_ok "build test/unit/test_hook.c"
	tap_not_run 85 "test_hook.c not built"
	sed 's/^/# /' "$tmp/cc.log" | head -n 20
fi

[ -x $CTL ] || { tap_not_ok "hook: $CTL built (make tools)"; tap_bail; }
state() {	# VALUE-JSON -> an OCI state as podman passes it (createRuntime)
	printf '{"ociVersion":"1.0","id":"0123abcd","pid":%d,"status":"created","bundle":"/b","annotations":{"io.container.manager":"libpod"%s}}' \
		$$ "${1:+,\"gpreempt.io/priority\":$1}"
}
# hook ARGS... < stdin: sets out, errout, rc
hook() { out=$($CTL hook --run-dir "$tmp/run" --config "$tmp/conf" --log "$tmp/log" "$@" 2>"$tmp/err"); rc=$?; errout=$(cat "$tmp/err"); }
: >"$tmp/conf"

hook create < <(state '"bogus"')
tap_check "hook: bad value: exit 5, one line naming the annotation and the values" \
	sh -c "[ $rc = 5 ] && [ \$(wc -l <'$tmp/err') = 1 ] &&
	       grep -q 'annotation gpreempt.io/priority=\"bogus\" refused: expected low, normal, high or 0..15' '$tmp/err'"
tap_check "hook: the refusal is in the log file too" grep -q 'error container 0123abcd: annotation gpreempt.io/priority="bogus" refused' "$tmp/log"
hook create < <(state '7')
tap_check "hook: a JSON number is a bad value (exit 5)" test $rc = 5
hook create < <(state '')
tap_check "hook: no annotation: exit 0, silent, nothing recorded" \
	sh -c "[ $rc = 0 ] && [ -z '$out$errout' ] && [ ! -e '$tmp/run/0123abcd' ]"
# This shell's cgroup is the container's: in the root cgroup nothing is
# recorded, in another one the record waits for gpreempt (hook resync).
hook create < <(state '"high"')
tap_check "hook: a valid value without gpreempt here: exit 0 (the container starts), why on stderr" \
	sh -c "[ $rc = 0 ] && { { grep -q 'no rule set' '$tmp/err' && [ ! -e '$tmp/run/0123abcd' ]; } ||
	       { grep -q 'gpreempt is not loaded: cgroup rule .* recorded' '$tmp/err' && [ -e '$tmp/run/0123abcd' ]; }; }"
had=$([ -e "$tmp/run/0123abcd" ] && echo 1)
hook poststop < <(state '"high"')
tap_check "hook: poststop without gpreempt: exit 0, silent without a record, the record removed with one" \
	sh -c "[ $rc = 0 ] && [ ! -e '$tmp/run/0123abcd' ] &&
	       { { [ -z '$had' ] && [ -z '$errout' ]; } || { [ -n '$had' ] && grep -q 'record removed' '$tmp/err'; }; }"
hook create <<<'{"id": "x1", "annotations": {'
tap_check "hook: truncated JSON: exit 2 with the reason" \
	sh -c "[ $rc = 2 ] && grep -q 'cannot read the OCI state on stdin: the JSON ends early' '$tmp/err'"
hook create </dev/null
tap_check "hook: empty stdin: exit 2" test $rc = 2
echo 'container max_priority=urgent' >"$tmp/conf"
hook create < <(state '"high"')
tap_check "hook: a bad container line in the config: exit 1, FILE:LINE" \
	sh -c "[ $rc = 1 ] && grep -q 'conf:1: container max_priority=urgent out of range' '$tmp/err'"
: >"$tmp/conf"
hook bogus </dev/null
tap_check "hook: unknown hook: exit 2" test $rc = 2
tap_check "hook --help: exit 0" $CTL hook --help

# NRI v0.1: "invoke" under the plugin's name, the result on stdout.
ln -s "$PWD/$CTL" "$tmp/gpreempt"
nri() { out=$(printf '%s' "$1" | "$tmp/gpreempt" invoke 2>"$tmp/err"); rc=$?; }
nri '{"version":"0.1","state":"create","id":"c1","pid":0,"spec":{"cgroupsPath":"a.slice:p:c1","annotations":{"gpreempt.io/priority":"x"}}}'
tap_check "nri: bad value: exit 5, result with the refusal in \"error\"" \
	sh -c "[ $rc = 5 ] && echo '$out' | jq -e '.plugin == \"gpreempt\" and .version == \"0.1\" and (.error | test(\"gpreempt.io/priority=\\\"x\\\" refused\"))'"
nri '{"version":"0.1","state":"update","id":"c1","spec":{}}'
tap_check "nri: state update: exit 0, empty error" sh -c "[ $rc = 0 ] && echo '$out' | jq -e '.error == \"\"'"
nri '{"version":"0.1","state":"create","id":"c1","sandboxID":"c1","spec":{"annotations":{"gpreempt.io/priority":"x"}}}'
tap_check "nri: the pod sandbox itself is skipped" sh -c "[ $rc = 0 ] && echo '$out' | jq -e '.error == \"\"'"
nri '{"version":"0.1","state":"check","id":"c1","spec":{"annotations":{"gpreempt.io/priority":"HIGH"}}}'
tap_check "nri: state check (gpreempt-nri's CreateContainer): bad value: exit 5, the refusal in \"error\"" \
	sh -c "[ $rc = 5 ] && echo '$out' | jq -e '.error | test(\"refused: expected low, normal, high or 0..15\")'"
nri '{"version":"0.1","state":"check","id":"c1","spec":{"annotations":{"gpreempt.io/priority":"normal"}}}'
tap_check "nri: state check: a good value: exit 0, empty error, nothing set" \
	sh -c "[ $rc = 0 ] && echo '$out' | jq -e '.error == \"\" and .metadata == {}'"
nri '{"version":"0.1","state":"delete","id":"c1","spec":{}}'
tap_check "nri: delete without a record: exit 0" sh -c "[ $rc = 0 ] && echo '$out' | jq -e '.error == \"\"'"
nri 'not json'
tap_check "nri: bad input: exit 2, the reason in \"error\"" \
	sh -c "[ $rc = 2 ] && echo '$out' | jq -e '.error | test(\"cannot read the NRI request\")'"
# Records, their lock, gc and resync (S4-6, S4-8, S4-9): test/unit/hookrun.c
# runs hook.c with its maps as files in $GP_FAKE_MAPS and the cgroup2 root a
# directory ($GP_FAKE_CGROOT).
if $CC -O2 -g -Wall -Wextra -Werror -I bpf -I tools/gpreemptctl/common -o "$tmp/hookrun" \
	test/unit/hookrun.c tools/gpreemptctl/hook/hook.c tools/gpreemptctl/common/hookparse.c -ljson-c 2>"$tmp/cc.log"; then
	export GP_FAKE_MAPS=$tmp/maps GP_FAKE_CGROOT=$tmp/cg
	mkdir -p "$tmp/maps" "$tmp/cg/a b" "$tmp/cg/x" "$tmp/cg/p"
	: >"$tmp/conf"
	fk() { "$tmp/hookrun" hook --run-dir "$tmp/fr" --config "$tmp/conf" "$@" 2>>"$tmp/fk.err"; }
	fnri() {	# STATE ID CGROUPSPATH [PRIO]
		printf '{"version":"0.1","state":"%s","id":"%s","spec":{"cgroupsPath":"%s","annotations":{"gpreempt.io/priority":"%s"}}}' \
			"$1" "$2" "$3" "${4:-high}" | fk nri >/dev/null
	}
	ino() { stat -c %i "$1"; }
	fget() { "$tmp/hookrun" get "$1"; }
	rec_cgid() { head -n 1 "$tmp/fr/$1" 2>/dev/null | awk '{print $3}'; }

	fnri create A "/a b" 12
	tap_check "records: a path with a space is recorded whole" \
		test "$(sed -n 2p "$tmp/fr/A")" = "$tmp/cg/a b"
	fk gc >/dev/null
	tap_check "records: gc keeps the rule of a live cgroup whose path has a space" \
		test -e "$tmp/fr/A" -a "$(fget "$(ino "$tmp/cg/a b")")" = 11
	tap_check "S4-4: the default container cap is 11, below an administrator's high (12)" \
		grep -q '^gpreempt-record 2 [0-9]* 11 ' "$tmp/fr/A"

	# S4-8: X restarts in a new cgroup (its old one is gone) while A's create
	# runs its gc: X's record and rule must name the new cgroup every time.
	n=${HOOK_RACE_N:-300} bad=0
	for i in $(seq "$n"); do
		mkdir "$tmp/cg/xo$i"
		fnri create X "/xo$i"
		rmdir "$tmp/cg/xo$i"
		mkdir "$tmp/cg/xn$i"
		fnri create X "/xn$i" & p1=$!
		fnri create A "/a b" & p2=$!
		wait $p1 $p2
		if [ "$(rec_cgid X)" != "$(ino "$tmp/cg/xn$i")" ] ||
		   [ "$(fget "$(ino "$tmp/cg/xn$i")")" != 11 ]; then
			bad=$((bad + 1))
		fi
		fnri delete X x
		rmdir "$tmp/cg/xn$i"
	done
	tap_check "S4-8: concurrent creates: X's record and rule name its new cgroup ($bad of $n runs lost them)" test "$bad" = 0

	# poststop of a container whose cgroup is gone: its entry is deleted
	mkdir "$tmp/cg/g"
	fnri create G /g
	g=$(ino "$tmp/cg/g")
	rmdir "$tmp/cg/g"
	fnri delete G g
	tap_check "S4-8: poststop after the cgroup is gone leaves no entry" \
		test "$(fget "$g")" = none -a ! -e "$tmp/fr/G"

	# S4-6: a reload empties the maps; resync writes the live records' rules
	# again, lowered to today's max_priority, and drops the stale ones.
	mkdir "$tmp/cg/s"
	fnri create S /s 9
	fnri create P /p low
	rm -f "$tmp/maps"/*
	"$tmp/hookrun" put 424242 5		# a container rule without a record
	echo 'container max_priority=8' >"$tmp/conf"
	rmdir "$tmp/cg/s"
	out=$(fk resync)
	tap_check "S4-6: resync restores the live containers' rules, lowered to max_priority ($out)" \
		test "$(fget "$(ino "$tmp/cg/a b")")" = 8 -a "$(fget "$(ino "$tmp/cg/p")")" = 3 \
		-a "$out" = "2 container rules restored"
	tap_check "S4-6: resync drops the record of a gone cgroup and an unrecorded rule" \
		test ! -e "$tmp/fr/S" -a "$(fget 424242)" = none
	: >"$tmp/conf"
	printf '%s 7 -1 %s\n' "$(ino "$tmp/cg/x")" "$tmp/cg/x" >"$tmp/fr/OLD"
	fk resync >/dev/null
	tap_check "S4-6: resync reads a record of the format before" test "$(fget "$(ino "$tmp/cg/x")")" = 7

	# S4-9: no rule on the cgroup root, whatever the path says
	for pth in /. // /p/.. /./; do
		fnri create R "$pth"
	done
	tap_check "S4-9: cgroupsPath /. // /p/.. /./: no record, no rule on the root" \
		test ! -e "$tmp/fr/R" -a "$(fget "$(ino "$tmp/cg")")" = none

	# gpreempt not loaded when a container is created (a boot before its
	# unit, a DaemonSet rebuilding it): the record is written all the same,
	# and the resync that follows the load sets the rule.
	mv "$tmp/maps" "$tmp/maps.off"
	mkdir "$tmp/cg/u" "$tmp/cg/v"
	: >"$tmp/fk.err"
	fnri create U /u high
	fnri create V /v low
	fnri delete V v
	tap_check "not loaded: create records the container, saying so; a poststop meanwhile removes its record" \
		test -e "$tmp/fr/U" -a ! -e "$tmp/fr/V" \
		-a "$(grep -c 'gpreempt is not loaded: cgroup rule .* recorded, set by gpreemptctl hook resync' "$tmp/fk.err")" = 2
	mv "$tmp/maps.off" "$tmp/maps"
	fk resync >/dev/null
	tap_check "not loaded: the resync after the load sets the recorded rule (high, capped at 11)" \
		test "$(fget "$(ino "$tmp/cg/u")")" = 11 -a "$(fget "$(ino "$tmp/cg/v")")" = none
else
	tap_not_ok "build test/unit/hookrun.c"
	tap_not_run 10 "hookrun.c not built"
	sed 's/^/# /' "$tmp/cc.log" | head -n 20
fi

tap_check "hook files: the hooks.d and NRI JSON parse" \
	sh -c 'for f in etc/oci-hooks.d/*.json etc/nri/conf.json; do jq -e . "$f" >/dev/null || exit 1; done'
tap_check "hook files: hooks.d matches the annotation, createRuntime and poststop" \
	sh -c 'jq -e ".when.annotations[\"^gpreempt\\\\.io/priority\$\"] and .stages == [\"createRuntime\"]" etc/oci-hooks.d/gpreempt-create.json &&
	       jq -e ".stages == [\"poststop\"]" etc/oci-hooks.d/gpreempt-poststop.json'
tap_done
