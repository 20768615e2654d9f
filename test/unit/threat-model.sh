#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test/unit/threat-model.sh - docs/threat-model.md's table is what the
# suites run: every row names at least one test case as `FILE`: "NAME",
# FILE exists, is a test make check or make check-long runs (test/vm/,
# test/unit/), and a line of FILE that is not a comment holds NAME, the
# name of one of its TAP lines.  A row whose test was renamed or dropped
# fails here, so the table cannot silently point at nothing.
#
# test/unit/threat-model.sh --reached LOG check|check-long: after a run,
# each named case of the files that target runs (check: test/unit/ and the
# sim and amdgpu tests; check-long: test/vm/long-*, matrix-* and oci-*) must
# have printed its line in LOG, the run's TAP output, as a pass or a failure,
# never a SKIP: a case that silently stopped running fails its rows.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
. test/lib/tap.sh
doc=docs/threat-model.md
reached=
if [ "${1:-}" = --reached ]; then
	reached=$2 target=$3
	[ -r "$reached" ] || { tap_not_ok "threat model: the run's TAP output $reached is readable"; tap_bail; }
fi

# in_target FILE: does the target being checked run FILE?
in_target() {
	case $1 in
	test/vm/long-* | test/vm/matrix-* | test/vm/oci-*) [ "$target" = check-long ] ;;
	*) [ "$target" = check ] ;;
	esac
}

rows=$(awk '/^## The table/ { t = 1; next } /^## / { t = 0 } t && /^\| [0-9]+ \|/' "$doc")
n=$(printf '%s\n' "$rows" | grep -c .)
# A line for the table and one for each row; with --reached (not under a
# runner's plan check) one for each row whose tests the target runs.
[ -n "$reached" ] || tap_plan $((1 + n))
[ -n "$reached" ] || tap_check "threat model: the table has its rows ($n)" test "$n" -ge 15

while IFS= read -r row; do
	[ -n "$row" ] || continue
	id=$(printf '%s\n' "$row" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
	input=$(printf '%s\n' "$row" | awk -F'|' '{ gsub(/^ +| +$/, "", $3); print $3 }')
	tests=$(printf '%s\n' "$row" | awk -F'|' '{ print $(NF - 1) }')
	refs=$(printf '%s\n' "$tests" | grep -o '`[^`]*`: "[^"]*"')
	if [ -z "$refs" ]; then
		tap_not_ok "threat model row $id ($input): names a test # no \`FILE\`: \"NAME\" in its last cell"
		continue
	fi
	bad= ran=0
	while IFS= read -r ref; do
		f=$(printf '%s\n' "$ref" | sed 's/^`\([^`]*\)`.*/\1/')
		name=$(printf '%s\n' "$ref" | sed 's/^[^"]*"\(.*\)"$/\1/')
		case $f in
		test/vm/*.sh | test/unit/*) ;;
		*) bad="$bad $f: not a test make check runs;" ; continue ;;
		esac
		if [ -n "$reached" ]; then
			in_target "$f" || continue
			# A C test's name quoted in the table ends at its escaped quote.
			name=${name%\\}
			ran=$((ran + 1))
			grep -E '^(not )?ok( [0-9]+)? - ' "$reached" | grep -vE '#[[:space:]]*SKIP' |
				grep -F -- "$name" >/dev/null || bad="$bad $f: \"$name\" never printed;"
		elif [ ! -f "$f" ]; then
			bad="$bad $f: no such file;"
		elif ! grep -vE '^[[:space:]]*(#|//|/?\*)' "$f" | grep -F -- "$name" >/dev/null; then
			bad="$bad $f has no test named \"$name\";"
		fi
	done <<<"$refs"
	if [ -n "$reached" ]; then
		[ "$ran" -gt 0 ] || continue
		if [ -n "$bad" ]; then
			tap_not_ok "threat model row $id ($input): its tests ran in make $target #$bad"
		else
			tap_ok "threat model row $id ($input): its tests ran in make $target"
		fi
	elif [ -n "$bad" ]; then
		tap_not_ok "threat model row $id ($input): its tests exist #$bad"
	else
		tap_ok "threat model row $id ($input): its tests exist"
	fi
done <<<"$rows"
exit $((TAP_FAILED > 0))
