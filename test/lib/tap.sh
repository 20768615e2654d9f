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

# tap_dmesg_clean NAME: ok when the kernel log has no splat (BUG, WARNING,
# Oops, GPF, refcount or list corruption) since the last "dmesg -C".
tap_dmesg_clean() {
	local bad
	if bad=$(dmesg | grep -E 'BUG|WARNING|Oops|general protection|RIP:|refcount_t|list_del corruption'); then
		tap_not_ok "$1"
		printf '%s\n' "$bad" | head -n 20 | sed 's/^/# /'
	else
		tap_ok "$1"
	fi
}
tap_done() { [ "$TAP_FAILED" -eq 0 ]; }
