# SPDX-License-Identifier: GPL-2.0
# test/lib/tap.sh - tiny TAP helpers for gpreempt's shell tests (sourced).
# Each test prints "ok - name" or "not ok - name # reason"; scripts/tap-summary
# numbers them across files and prints the closing "N passed, N failed".
TAP_FAILED=0

tap_ok() { echo "ok - $*"; }
tap_not_ok() { echo "not ok - $*"; TAP_FAILED=$((TAP_FAILED + 1)); }

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
tap_done() { [ "$TAP_FAILED" -eq 0 ]; }
