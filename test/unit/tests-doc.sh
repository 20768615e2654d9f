#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test/unit/tests-doc.sh - docs/tests.md is the inventory of the suites:
# every test file the runners run (test/vm/*.sh, test/unit/*.sh, *.c, *.py)
# is named on it.  A new test without a line there fails here.
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
. test/lib/tap.sh
tap_plan 1
missing=
n=0
for f in test/vm/*.sh test/unit/*.sh test/unit/*.c test/unit/*.py; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	grep -qF -- "$(basename "$f")" docs/tests.md || missing="$missing $f"
done
tap_check "docs/tests.md names every test file ($n)${missing:+ # missing:$missing}" test -z "$missing" -a "$n" -gt 0
tap_done
