#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test/unit/threat-model.sh - docs/threat-model.md's table is what make check
# runs: every row names at least one test as `FILE`: "NAME", FILE exists, is
# a test that make check runs (test/vm/, test/unit/) and prints a TAP line
# whose name contains NAME.  A row whose test was renamed or dropped fails
# here, so the table cannot silently point at nothing.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
. test/lib/tap.sh
doc=docs/threat-model.md

rows=$(awk '/^## The table/ { t = 1; next } /^## / { t = 0 } t && /^\| [0-9]+ \|/' "$doc")
n=$(printf '%s\n' "$rows" | grep -c .)
tap_check "threat model: the table has its rows ($n)" test "$n" -ge 15

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
	bad=
	while IFS= read -r ref; do
		f=$(printf '%s\n' "$ref" | sed 's/^`\([^`]*\)`.*/\1/')
		name=$(printf '%s\n' "$ref" | sed 's/^[^"]*"\(.*\)"$/\1/')
		case $f in
		test/vm/*.sh | test/unit/*) ;;
		*) bad="$bad $f: not a test make check runs;" ; continue ;;
		esac
		if [ ! -f "$f" ]; then
			bad="$bad $f: no such file;"
		elif ! grep -qF -- "$name" "$f"; then
			bad="$bad $f has no test named \"$name\";"
		fi
	done <<<"$refs"
	if [ -n "$bad" ]; then
		tap_not_ok "threat model row $id ($input): its tests exist #$bad"
	else
		tap_ok "threat model row $id ($input): its tests exist"
	fi
done <<<"$rows"
exit $((TAP_FAILED > 0))
