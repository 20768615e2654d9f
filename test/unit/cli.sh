#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreemptctl's command line on the host, without gpreempt (never loaded on
# the host): every exit status of gpreemptctl(8) that needs no module, as
# root and as an unprivileged user (arguments are checked before the module
# is looked for), per-command --help, version, -j and JSON errors, apply
# --check on the shipped /etc/gpreempt.conf and the DaemonSet's ConfigMap,
# and the man page rendering without warnings.  What needs the module (exit
# 1, version's module lines, views) is in test/vm/sim-ctl.sh.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 130
CTL=${GP_CTL:-$PWD/build/gpreemptctl}	# GP_CTL: another build (an older one)
MAN=tools/gpreemptctl/gpreemptctl.8
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

[ -x "$CTL" ] || { tap_not_ok "cli: $CTL built (make tools)"; tap_bail; }
# A user without privilege, when we are root to become one.
NOBODY=
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
# run [ctl args...]: sets rc, so (stdout), errout (stderr); not "out": tap_check has its own
run() { so=$("$CTL" "$@" 2>"$tmp/err"); rc=$?; errout=$(cat "$tmp/err"); }
# json RC FILTER: exit RC and stdout JSON for which jq FILTER is true
json() { [ "$rc" = "$1" ] && printf '%s' "$so" | jq -e "$2" >/dev/null; }
run_nobody() { so=$($NOBODY "$CTL" "$@" 2>"$tmp/err"); rc=$?; errout=$(cat "$tmp/err"); }

# expect RC WORDS ARGS...: exit RC and WORDS in the one stderr line, as root
# (or whoever runs this) and as nobody, with or without the module.
expect() {
	local want=$1 words=$2 who
	shift 2
	for who in "" nobody; do
		if [ -n "$who" ] && [ -z "$NOBODY" ]; then
			tap_skip "cli: '$*' as $who: exit $want" "not root: setpriv needs root"
			continue
		fi
		if [ -z "$who" ]; then run "$@"; else run_nobody "$@"; fi
		if [ "$rc" = "$want" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ -z "$so" ] &&
		   grep -qF -- "$words" "$tmp/err"; then
			tap_ok "cli: '$*'${who:+ as $who}: exit $want, '$words'"
		else
			tap_not_ok "cli: '$*'${who:+ as $who}: exit $want, '$words' # exit $rc, stdout '$so', stderr '$errout'"
		fi
	done
}

# Exit 2: a bad command line, whatever the module.
expect 2 "unknown rule kind 'foo'" set foo bar high
expect 2 "usage: set pid|cgroup|comm|queue TARGET PRIO" set
expect 2 "usage: unset" unset pid
expect 2 "bad queue 'notaqueue': expected PID:QID" park queue notaqueue
expect 2 "usage: unpark queue PID:QID" unpark pid 1
expect 2 "unknown setting 'bogus'" config bogus=1
expect 2 "status takes no arguments" status now
expect 2 "top: unknown argument '-x'" top -x
expect 2 "unknown command 'frobnicate'" frobnicate
expect 2 "unknown option '--bogus'" --bogus
expect 2 "bad pid 'x'" set pid x high
expect 2 "--client-kind 'cuda': expected gpload (kfdsim) or hip" selftest --client /bin/true --client-kind cuda
# Exit 5: a value out of range.
expect 5 "priority 'urgent' out of range" set pid 1 urgent
expect 5 "tick_us=abc out of range" config tick_us=abc
expect 5 "delay '0' out of range" top -d 0
expect 5 "comm 'abcdefghijklmnopq' out of range" set comm abcdefghijklmnopq high
expect 5 "priority '16' out of range" exec --priority 16 -- true
# One grammar with the annotation: digits only (the module's kstrtouint would
# refuse " 7", so exec used to set a GPREEMPT_PRIORITY nothing honoured).
expect 5 "priority ' 7' out of range" exec --priority " 7" -- true
expect 5 "priority '+7' out of range" set pid 1 +7
expect 5 "priority '07' out of range" set comm foo 07
# Exit 6: no such target or file.
expect 6 "cannot open /nonexistent.conf" apply /nonexistent.conf
expect 6 "no such cgroup" set cgroup /sys/fs/cgroup/gp-no-such-cgroup high
sleep 0 & dead=$!; wait $dead
expect 6 "no such process: $dead" set pid $dead high
# The module keys pid rules on the process (thread group) id in the host's
# pid namespace: a thread id, or a pid of a container's namespace, would put
# the rule on another process (or on whichever gets that pid later).
if command -v python3 >/dev/null; then
	python3 -c 'import threading, time; t = threading.Thread(target=time.sleep, args=(30,)); t.start(); time.sleep(30)' &
	py=$!
	tid=
	for _ in $(seq 50); do
		tid=$(ls /proc/$py/task 2>/dev/null | grep -vx "$py" | head -n 1)
		[ -n "$tid" ] && break
		sleep 0.1
	done
	expect 6 "$tid is a thread of process $py: rules name processes" set pid "$tid" high
	kill $py 2>/dev/null
	wait $py 2>/dev/null
else
	tap_skip "cli: 'set pid TID high': exit 6 (a thread)" "python3 missing: no multithreaded process to name"
	tap_skip "cli: 'set pid TID high' as nobody: exit 6 (a thread)" "python3 missing"
fi
if [ "$(id -u)" = 0 ] && unshare --pid --fork --mount-proc true 2>/dev/null; then
	run_ns() { so=$(unshare --pid --fork --mount-proc "$CTL" set pid 1 high 2>"$tmp/err"); rc=$?; }
	run_ns
	tap_check "cli: 'set pid 1 high' in a container's pid namespace: exit 6, says to run in the host's (rc $rc)" \
		sh -c "[ $rc = 6 ] && grep -q \"not the host's\" '$tmp/err'"
else
	tap_skip "cli: 'set pid 1 high' in a container's pid namespace: exit 6" "not root: unshare --pid needs root"
fi

# Exit 3 (root: the map walk finds no gpreempt) and 4 (a user cannot walk).
if [ -d /sys/module/gpreempt ]; then
	tap_skip_n 6 "cli: 'status' without gpreempt: exit 3" "gpreempt is loaded on this host: tested in the guest only"
elif [ "$(id -u)" = 0 ]; then
	run status
	tap_check "cli: 'status' without gpreempt: exit 3, not loaded, points to dmesg" \
		sh -c "[ $rc = 3 ] && grep -q 'gpreempt is not loaded' '$tmp/err' && grep -q 'dmesg' '$tmp/err'"
	for v in status list stats top config; do
		run -j $v
		tap_check "cli: '-j $v' without gpreempt: exit 3, {\"error\"} on stdout" \
			json 3 '.error | test("not loaded")'
	done
else
	tap_skip_n 6 "cli: 'status' without gpreempt: exit 3" "not root: a user's map walk ends in exit 4"
fi
if [ -n "$NOBODY" ]; then
	for v in status list stats "top -n 1" config "set comm x high"; do
		run_nobody $v
		if [ "$rc" = 4 ] && grep -q "not permitted: gpreempt's maps are not pinned.*CAP_SYS_ADMIN: run as root" "$tmp/err"; then
			tap_ok "cli: '$v' as nobody: exit 4, says why (maps not pinned, CAP_SYS_ADMIN)"
		else
			tap_not_ok "cli: '$v' as nobody: exit 4, says why # exit $rc, '$errout'"
		fi
	done
else
	tap_skip_n 6 "cli: as nobody: exit 4, says why" "not root: setpriv needs root"
fi

# Exit 126/127: exec could not run the command; 0: it ran, with the variable.
expect 127 "cannot run /nonexistent" exec --priority high -- /nonexistent
expect 126 "cannot run $MAN" exec --priority high -- "$MAN"
run exec --priority high -- sh -c 'test "$GPREEMPT_PRIORITY" = high'
tap_check "cli: exec runs CMD with GPREEMPT_PRIORITY (exit 0)" test "$rc" = 0

# Per-command help: its own usage on stdout, exit 0, nothing on stderr.
for v in status top stats list config set unset park unpark apply exec version hook; do
	for h in --help -h; do
		run $v $h
		if [ "$rc" = 0 ] && [ -z "$errout" ] && head -n 1 <<<"$so" | grep -q "^usage: gpreemptctl .*$v"; then
			tap_ok "cli: '$v $h': its own usage on stdout, exit 0"
		else
			tap_not_ok "cli: '$v $h': its own usage on stdout, exit 0 # exit $rc, first line '$(head -n 1 <<<"$so")', stderr '$errout'"
		fi
	done
done
run help set
help_set() { [ "$rc" = 0 ] && [ "$("$CTL" set --help)" = "$so" ]; }
tap_check "cli: 'help set' is 'set --help'" help_set
global_help() { [ "$rc" = 0 ] && [ -z "$errout" ] && grep -q 'apply --check' <<<"$so"; }
for h in --help -h help; do
	run $h
	tap_check "cli: '$h': the commands on stdout, exit 0" global_help
done
run
tap_check "cli: no command: usage on stderr, exit 2" sh -c "[ $rc = 2 ] && [ -z '$so' ] && grep -q '^usage:' '$tmp/err'"

# version, -V, --version: the tool's version (dkms.conf's); no module here.
pkgver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
version_ok() {
	[ "$rc" = 0 ] && [ "$(head -n 1 <<<"$so")" = "gpreemptctl $pkgver" ] &&
		grep -q '^using libbpf v[0-9]' <<<"$so" &&
		{ [ -d /sys/module/gpreempt ] || grep -q 'module: gpreempt is not loaded' <<<"$so"; }
}
for v in version -V --version; do
	run $v
	tap_check "cli: '$v': gpreemptctl $pkgver (dkms.conf), libbpf, module not loaded, exit 0" version_ok
done
ko=${GP_OBJ:-.}/module/gpreempt.ko
if [ -f "$ko" ]; then
	tap_check "cli: the module built here has the same version (modinfo: $(modinfo -F version "$ko" 2>&1))" \
		test "$(modinfo -F version "$ko")" = "$pkgver"
else
	tap_skip "cli: the module built here has the same version" "module/gpreempt.ko not built"
fi
run -j version
tap_check "cli: '-j version': JSON with the version, module null" \
	json 0 ".gpreemptctl.version == \"$pkgver\" and (.module == null or (.module | has(\"build_id\")))"
if [ -n "$NOBODY" ]; then
	run_nobody -V
	tap_check "cli: '-V' as nobody: exit 0" test "$rc" = 0
else
	tap_skip "cli: '-V' as nobody: exit 0" "not root: setpriv needs root"
fi

# -j and --json, before or after the command; errors as JSON on stdout.
for form in "-j set pid 1 urgent" "set pid 1 urgent -j" "--json set pid 1 urgent" "set pid 1 urgent --json"; do
	run $form
	if [ "$rc" = 5 ] && [ -z "$errout" ] && printf '%s' "$so" | jq -e '.error | test("priority .urgent. out of range")' >/dev/null 2>&1; then
		tap_ok "cli: '$form': exit 5, {\"error\": ...} on stdout"
	else
		tap_not_ok "cli: '$form': exit 5, {\"error\": ...} on stdout # exit $rc, stdout '$so', stderr '$errout'"
	fi
done
run -j frobnicate
tap_check "cli: '-j frobnicate': exit 2, JSON error" json 2 '.error | test("unknown command")'
run -j apply /nonexistent.conf
tap_check "cli: '-j apply /nonexistent.conf': exit 6, JSON error" json 6 '.error | test("cannot open")'

# apply --check: offline, any user, the same exit status as apply.
printf 'comm trainer low\nconfig tick_us=200 env=on\ncontainer max_priority=normal\n' >"$tmp/good.conf"
printf 'comm trainer low\nconfig tick_us=5\n' >"$tmp/range.conf"
printf 'comm trainer low\nfrobnicate\n' >"$tmp/syntax.conf"
chmod 644 "$tmp"/*.conf
for who in "" nobody; do
	[ -z "$who" ] || [ -n "$NOBODY" ] || continue
	r() { if [ -z "$who" ]; then run "$@"; else run_nobody "$@"; fi; }
	r apply --check "$tmp/good.conf"
	tap_check "cli: apply --check of a good file${who:+ as $who}: exit 0, FILE: valid" \
		sh -c "[ $rc = 0 ] && [ '$so' = '$tmp/good.conf: valid' ]"
	r apply --check "$tmp/range.conf"
	tap_check "cli: apply --check, a value out of range${who:+ as $who}: exit 5, FILE:2" \
		sh -c "[ $rc = 5 ] && grep -q 'range.conf:2: line not applied' '$tmp/err'"
	r apply --check "$tmp/syntax.conf"
	tap_check "cli: apply --check, a bad line${who:+ as $who}: exit 2, FILE:2" \
		sh -c "[ $rc = 2 ] && grep -q 'syntax.conf:2: line not applied' '$tmp/err'"
	r apply --check "$tmp/none.conf"
	tap_check "cli: apply --check of a missing file${who:+ as $who}: exit 6" test "$rc" = 6
	r apply --check etc/gpreempt.conf
	tap_check "cli: apply --check etc/gpreempt.conf (shipped)${who:+ as $who}: exit 0" test "$rc" = 0
done
# The grammar: any number of settings on a config line; a rule or a setting
# given twice is refused with both lines; -j's error keeps FILE:LINE.
printf 'config tick_us=200 env=on hysteresis_us=1000 max_suspend_us=900000 min_slice_us=20000\n' >"$tmp/many.conf"
run apply --check "$tmp/many.conf"
tap_check "cli: apply --check: five settings on one config line are valid (rc $rc)" test "$rc" = 0
printf 'comm trainer low\nconfig env=on\ncomm trainer high\n' >"$tmp/dup.conf"
run apply --check "$tmp/dup.conf"
tap_check "cli: apply --check: a second rule for one comm is refused, both lines named ($(head -n 1 "$tmp/err"))" \
	sh -c "[ $rc = 2 ] && grep -q 'dup.conf:3: a second rule for comm trainer (the first at .*dup.conf:1)' '$tmp/err'"
printf 'config tick_us=200\nconfig env=on tick_us=300\n' >"$tmp/dupkey.conf"
run apply --check "$tmp/dupkey.conf"
tap_check "cli: apply --check: a config key set twice is refused, both lines named" \
	sh -c "[ $rc = 2 ] && grep -q 'dupkey.conf:2: config tick_us is set twice (also at .*dupkey.conf:1)' '$tmp/err'"
run -j apply --check "$tmp/range.conf"
tap_check "cli: -j apply --check: the JSON error keeps FILE:LINE" json 5 '.error | test("range.conf:2: tick_us=5 out of range")'
run -j apply --check "$tmp/good.conf"
tap_check "cli: -j apply --check: {\"file\": ..., \"valid\": true}" \
	json 0 ".valid == true and .file == \"$tmp/good.conf\""
# The DaemonSet's ConfigMap (deploy/base/gpreempt.yaml, data gpreempt.conf), on stdin.
awk '/^  gpreempt\.conf: \|/ { f = 1; next } f && /^  [^ ]/ { f = 0 } f { sub(/^    /, ""); print }' \
	deploy/base/gpreempt.yaml >"$tmp/cm.conf"
so=$("$CTL" apply --check - <"$tmp/cm.conf" 2>"$tmp/err"); rc=$?
tap_check "cli: apply --check - of the ConfigMap's gpreempt.conf: exit 0 ($(grep -cv '^[[:space:]]*\(#\|$\)' "$tmp/cm.conf") lines)" \
	sh -c "[ -s '$tmp/cm.conf' ] && [ $rc = 0 ]"
so=$(printf 'config tick_us=5\n' | "$CTL" apply --check - 2>"$tmp/err"); rc=$?
tap_check "cli: apply --check - refuses a bad ConfigMap line: exit 5" test "$rc" = 5

# The man page: every exit status of the usage legend, and it renders clean.
missing=
for code in 0 1 2 3 4 5 6 126; do
	grep -q "^\.B $code\( \|$\|,\)" "$MAN" || missing="$missing $code"
done
tap_check "cli: the man page's EXIT STATUS lists 0 1 2 3 4 5 6 126${missing:+ # missing:$missing}" test -z "$missing"
warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
tap_check "cli: groff -man -ww renders gpreemptctl.8 without warnings" test -z "$warn"
[ -z "$warn" ] || tap_diag "$warn"
if command -v mandoc >/dev/null; then
	lint=$(mandoc -Tlint -W warning "$MAN" 2>&1)
	tap_check "cli: mandoc -Tlint: no warnings in gpreemptctl.8" test -z "$lint"
	[ -z "$lint" ] || tap_diag "$lint"
else
	tap_skip "cli: mandoc -Tlint: no warnings in gpreemptctl.8" "mandoc not installed"
fi
missing=
for v in status top stats list config set unset park unpark apply exec version hook; do
	grep -q "^\.B[IR]* \"*$v\b" "$MAN" || missing="$missing $v"
done
tap_check "cli: the man page documents every command${missing:+ # missing:$missing}" test -z "$missing"
[ "$TAP_FAILED" -eq 0 ]
