#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The container hook's input handling on the host: test/unit/test_hook.c
# (tools/gpreemptctl/hookparse.c, ASan/UBSan) and "gpreemptctl hook" as
# podman and containerd run it, without gpreempt (never loaded on the host):
# exit status, the one refusal line, the NRI v0.1 result on stdout.  The
# rules themselves are tested in the guest (test/vm/oci-podman.sh).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
CC=${CC_USER:-gcc}
CTL=build/gpreemptctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if $CC -O2 -g -Wall -Wextra -Werror -fsanitize=address,undefined -I bpf -I tools/gpreemptctl \
	-o "$tmp/test_hook" test/unit/test_hook.c tools/gpreemptctl/hookparse.c -ljson-c 2>"$tmp/cc.log"; then
	"$tmp/test_hook" | sed -u -e '/^TAP version/d' -e '/^1\.\.[0-9]*$/d' \
		-e 's/^\(not ok\|ok\) [0-9][0-9]* /\1 - hook: /' -e 's/^\(not ok\|ok\) - hook: - /\1 - hook: /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || TAP_FAILED=$((TAP_FAILED + 1))
else
	tap_not_ok "build test/unit/test_hook.c"
	sed 's/^/# /' "$tmp/cc.log" | head -n 20
fi

[ -x $CTL ] || { tap_not_ok "hook: $CTL built (make tools)"; exit 1; }
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
hook create < <(state '"high"')
tap_check "hook: a valid value without gpreempt here: exit 0 (the container starts), why on stderr" \
	sh -c "[ $rc = 0 ] && grep -q 'no rule set' '$tmp/err' && [ ! -e '$tmp/run/0123abcd' ]"
hook poststop < <(state '"high"')
tap_check "hook: poststop without a record: exit 0, silent" sh -c "[ $rc = 0 ] && [ -z '$errout' ]"
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
nri '{"version":"0.1","state":"delete","id":"c1","spec":{}}'
tap_check "nri: delete without a record: exit 0" sh -c "[ $rc = 0 ] && echo '$out' | jq -e '.error == \"\"'"
nri 'not json'
tap_check "nri: bad input: exit 2, the reason in \"error\"" \
	sh -c "[ $rc = 2 ] && echo '$out' | jq -e '.error | test(\"cannot read the NRI request\")'"
tap_check "hook files: the hooks.d and NRI JSON parse" \
	sh -c 'for f in etc/oci-hooks.d/*.json etc/nri/conf.json; do jq -e . "$f" >/dev/null || exit 1; done'
tap_check "hook files: hooks.d matches the annotation, createRuntime and poststop" \
	sh -c 'jq -e ".when.annotations[\"^gpreempt\\\\.io/priority\$\"] and .stages == [\"createRuntime\"]" etc/oci-hooks.d/gpreempt-create.json &&
	       jq -e ".stages == [\"poststop\"]" etc/oci-hooks.d/gpreempt-poststop.json'
tap_done
