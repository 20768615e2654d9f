# SPDX-License-Identifier: GPL-2.0
# test/lib/tap.sh - tiny TAP helpers for gpreempt's shell tests (sourced).
# Each test prints its plan ("1..N", tap_plan), then "ok - name" or
# "not ok - name # reason"; scripts/tap-summary numbers them across files and
# prints the closing "N passed, N failed, N skipped".
TAP_FAILED=0

# tap_plan N: the number of test lines this test prints, on every path,
# printed once, before its first check, as TAP's plan line "1..N".  Its
# runner (test/vm/guest-run, test/run-unit: tap_plan_check) fails the test by
# name when it printed another number of lines, or no plan: a check that
# silently stopped being reached (an early exit, a loop run zero times, a
# helper that returned first) is a failure, not a shorter green run.
# TAP_PLAN_ADD (environment): lines a wrapper prints after this test's own
# (test/vm/matrix-1-amdgpu.sh), so that their sum is the one plan.
TAP_PLANNED=0
TAP_COUNT=0
tap_plan() {
	TAP_PLANNED=$1
	echo "1..$(($1 + ${TAP_PLAN_ADD:-0}))"
}

# tap_not_run N WHY: N checks that a failure before them left nothing to
# decide, each a failing line, so that this path prints its plan too.
tap_not_run() {
	local i
	for ((i = 1; i <= $1; i++)); do
		tap_not_ok "check not run ($i of $1) # $2"
	done
}

# tap_skip_n N NAME WHY: a block of N checks that cannot run here, each a
# SKIP line, so that the plan is the same where it runs.
tap_skip_n() {
	local i
	for ((i = 1; i <= $1; i++)); do
		tap_skip "$2 ($i of $1)" "$3"
	done
}

# tap_skip_rest WHY: a test that cannot run here (a tool not installed) skips
# each planned check not printed yet.
tap_skip_rest() {
	local i
	for ((i = TAP_COUNT + 1; i <= TAP_PLANNED; i++)); do
		tap_skip "planned check $i of $TAP_PLANNED" "$*"
	done
}

# tap_bail [WHY]: the test cannot go on (a module did not load): a failing line
# for each planned check not printed yet, then exit 1, so that every path
# prints its plan and each check it could not run fails.  Counts the lines
# the helpers below printed in this shell (not in a subshell or pipeline).
tap_bail() {
	local i
	for ((i = TAP_COUNT + 1; i <= TAP_PLANNED; i++)); do
		tap_not_ok "planned check $i of $TAP_PLANNED not run # ${*:-an earlier step failed}"
	done
	exit 1
}

# tap_plan_check NAME OUT: OUT is a test's whole output.  Prints nothing and
# succeeds when it has one plan line and as many "ok"/"not ok" lines as it
# planned; else prints a failing line naming NAME and returns 1.
tap_plan_check() {
	local name=$1 out=$2 plans plan lines
	plans=$(grep -cE '^1\.\.[0-9]+$' "$out")
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$out" | head -n 1)
	lines=$(grep -cE '^(not ok|ok)([[:space:]]|$)' "$out")
	if [ "$plans" -eq 0 ]; then
		echo "not ok - $name: no plan line"
	elif [ "$plans" -gt 1 ]; then
		echo "not ok - $name: one plan line # $plans"
	elif [ "$lines" != "$plan" ]; then
		echo "not ok - $name: printed $lines of its $plan planned test lines"
	else
		return 0
	fi
	return 1
}

tap_ok() { echo "ok - $*"; TAP_COUNT=$((TAP_COUNT + 1)); }
tap_not_ok() { echo "not ok - $*"; TAP_FAILED=$((TAP_FAILED + 1)); TAP_COUNT=$((TAP_COUNT + 1)); }

# tap_check NAME CMD...: run CMD, ok when it succeeds.
tap_check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		tap_ok "$name"
	else
		tap_not_ok "$name"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
	fi
}

# tap_check_todo REASON NAME CMD...: tap_check for a known, open defect.  A
# failure prints TAP's TODO directive ("not ok - NAME # TODO REASON"), which
# scripts/tap-summary reports and counts apart, not as a failure; a pass is a
# plain ok (the defect may be gone: drop the TODO).
tap_check_todo() {
	local why=$1 name=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		tap_ok "$name"
	else
		echo "not ok - $name # TODO $why"
		TAP_COUNT=$((TAP_COUNT + 1))
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
		return 1
	fi
}

# tap_check_fails NAME CMD...: ok when CMD fails.
tap_check_fails() {
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		tap_not_ok "$name # unexpectedly succeeded"
	else
		tap_ok "$name"
	fi
}

tap_diag() { printf '# %s\n' "$*"; }

# tap_skip NAME WHY: a check that did not run, said as TAP's SKIP directive;
# scripts/tap-summary counts it as skipped, never as passed.
tap_skip() { echo "ok - $1 # SKIP $2"; TAP_COUNT=$((TAP_COUNT + 1)); }

# The kernel log lines that fail a run: splats, SLUB debug and KFENCE reports
# (the memory-debugging guest, scripts/vm --memdebug), UBSAN, list and
# refcount corruption, hung tasks.
TAP_DMESG_BAD='\bBUG\b|WARNING|Oops|general protection|RIP:|KFENCE|Poison overwritten|Redzone|Object padding|Freepointer|UBSAN|refcount_t|list_del corruption|list_add corruption|blocked for more than'

# tap_memdebug: true in a guest booted with SLUB debugging (scripts/vm --memdebug).
tap_memdebug() { grep -q 'slub_debug=' /proc/cmdline 2>/dev/null; }

# tap_dmesg_clean NAME: ok when the kernel log has none of TAP_DMESG_BAD since
# the last "dmesg -C".  In the memory-debugging guest every slab cache is
# validated first, so a write to a freed, poisoned object that was never
# reallocated is reported too.
tap_dmesg_clean() {
	local bad f
	if tap_memdebug; then
		for f in /sys/kernel/slab/*/validate; do
			echo 1 >"$f" 2>/dev/null
		done
	fi
	if bad=$(dmesg | grep -E "$TAP_DMESG_BAD"); then
		tap_not_ok "$1"
		printf '%s\n' "$bad" | head -n 20 | sed 's/^/# /'
	else
		tap_memdebug && set -- "$1 (memory-debugging guest)"
		tap_ok "$1"
	fi
}
tap_done() { [ "$TAP_FAILED" -eq 0 ]; }
