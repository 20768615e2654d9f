#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every module parameter is documented: the names `modinfo` gives for the
# built module/gpreempt.ko and the rows of docs/parameters.md's table are the
# same set (skipped with a message when the module is not built).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 2
KO=${GP_KO:-module/gpreempt.ko}
DOC=${GP_PARAM_DOC:-docs/parameters.md}
if [ ! -f "$KO" ]; then
	tap_skip_n 2 "parameters: modinfo and $DOC list the same names" "$KO is not built (make module)"
	exit 0
fi
have=$(modinfo -F parm "$KO" | sed -n 's/^\([a-z0-9_]*\):.*/\1/p' | sort -u)
doc=$(sed -n 's/^| `\([a-z0-9_]*\)` |.*/\1/p' "$DOC" | sort -u)
undoc=$(comm -23 <(echo "$have") <(echo "$doc") | tr '\n' ' ')
gone=$(comm -13 <(echo "$have") <(echo "$doc") | tr '\n' ' ')
tap_check "parameters: every parameter of modinfo $KO ($(echo "$have" | wc -l)) is in $DOC # not documented: ${undoc:-none}" \
	test -z "$undoc" -a -n "$have"
tap_check "parameters: every parameter $DOC lists is one of $KO's # not in the module: ${gone:-none}" \
	test -z "$gone"
tap_done
