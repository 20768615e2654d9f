# SPDX-License-Identifier: GPL-2.0
# test/lib/drm.sh - drm.ko for kfdsim in the test guest (sourced).

# ks_drm_load: load drm.ko (and what it needs) from the booted kernel's
# modules ($GP_KROOT, $GP_KVER) unless it is there.  kfdsim's DRM devices
# (test/kfdsim/drm.c) need it and the tests insmod kfdsim.ko, which loads
# no dependency; a modprobe -r amdgpu takes drm.ko away with it.
ks_drm_load() {
	local m
	[ -d /sys/module/drm ] && return 0
	for m in $(modprobe -d "$GP_KROOT" -S "$GP_KVER" --show-depends drm 2>/dev/null |
		   awk '$1 == "insmod" { print $2 }'); do
		[ -d "/sys/module/$(basename "$m" .ko | tr - _)" ] || insmod "$m" || return 1
	done
}

# ks_drm_guest: ks_drm_load for a script scripts/vm runs directly, not
# through test/vm/guest-run (bench-guest, the demos, the soak's tests),
# which has not read the booted kernel's variables yet.
ks_drm_guest() {
	if [ -z "${GP_KROOT:-}" ]; then
		if [ -f "${GP_VM_SCRATCH:-}/kernel.env" ]; then
			. "$GP_VM_SCRATCH/kernel.env"
		else
			. .cache/kernel.env
		fi
	fi
	ks_drm_load || echo "# drm.ko did not load: kfdsim will not" >&2
}
