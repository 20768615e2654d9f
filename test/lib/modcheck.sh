# SPDX-License-Identifier: GPL-2.0
# test/lib/modcheck.sh - is a loaded module the artifact a user should get?
# (sourced after tap.sh; issue 21: a module linked against another kernel's
# generated gpreempt.mod.c force-loaded, tainted F and lost its tracepoints).

# tap_clean_load NAME KO: KO's module is loaded.  Checks, as TAP lines:
#  - /sys/module/<m>/taint is exactly "OE" (out of tree, unsigned; no F);
#  - the .ko's vermagic is this kernel's (uname -r first);
#  - it has a __versions section when this kernel has CONFIG_MODVERSIONS;
#  - for gpreempt, its tracepoint events exist.
# Three lines, four for gpreempt.ko (a test's plan counts them).
tap_clean_load() {
	local name=$1 ko=$2 m taint vm cfg
	m=$(basename "$ko" .ko)
	taint=$(cat /sys/module/"$m"/taint 2>/dev/null)
	if [ "$taint" = OE ]; then
		tap_ok "$name: $m taint is OE"
	else
		tap_not_ok "$name: $m taint is OE # '$taint', tainted=$(cat /proc/sys/kernel/tainted)"
	fi
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
	if [ "${vm%% *}" = "$(uname -r)" ]; then
		tap_ok "$name: $m vermagic is $(uname -r)"
	else
		tap_not_ok "$name: $m vermagic is $(uname -r) # '$vm'"
	fi
	# CONFIG_MODVERSIONS: the kernel's own amdgpu.ko has __versions then.
	cfg=$(modinfo -b "${GP_KROOT:-/}" -k "$(uname -r)" -n amdgpu 2>/dev/null)
	if [ -n "$cfg" ] && readelf -S "$cfg" 2>/dev/null | grep -q ' __versions '; then
		tap_check "$name: $m has __versions (CONFIG_MODVERSIONS)" \
			sh -c "readelf -S '$ko' | grep -q ' __versions '"
	else
		tap_skip "$name: $m has __versions" "this kernel has no CONFIG_MODVERSIONS"
	fi
	if [ "$m" = gpreempt ]; then
		tap_check "$name: gpreempt:preempt and gpreempt:resume events exist" \
			test -d /sys/kernel/tracing/events/gpreempt/preempt \
			-a -d /sys/kernel/tracing/events/gpreempt/resume
	fi
}
