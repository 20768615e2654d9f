#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Trixie's ROCm 6.1 user space (rocminfo and ROCr 6.1.2, libhsakmt 6.2.4,
# libdrm_amdgpu 2.4.124, unmodified; scripts/setup unpacks them into
# .cache/trixie-rocm) on kfdsim: ROCr 6.1 builds each GPU agent with
# libdrm_amdgpu on the device's render node, which kfdsim's DRM devices
# answer.  rocminfo lists a gfx908 agent per kfdsim device, and ROCr's
# hsa_init() succeeds with them; then test/rocr-client (bookworm-built) on
# ROCr 6.1.2 runs its check to the end: a queue (after AVAILABLE_MEMORY),
# 33 dispatches and a barrier-AND, every signal and completion, exit 0.  rocminfo first reads /sys/module/amdgpu/initstate,
# which only amdgpu has: it runs with a stand-in bound over /sys/module.
# The programs run with the trixie root's loader and libraries, not
# chrooted.  Skips without the unpacked packages.  Runs inside the test guest
# from the repository root (test/run-vm sim); ends with kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
NDEV=2
R=$PWD/.cache/root-trixie
X=$PWD/.cache/trixie-rocm
LD=$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
LP=$X/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu
tap_plan 7
kfdclient_begin rocr61
if [ ! -x "$X/usr/bin/rocminfo" ] || [ ! -x "$LD" ] || [ ! -x build/rocr-client ]; then
	tap_skip_rest "no trixie ROCm 6.1 in $X, no trixie root or no build/rocr-client: run scripts/setup and make"
	tap_done
	exit
fi
# run61 PROGRAM ARGS...: PROGRAM on trixie's loader and libraries
run61() { HSA_ENABLE_INTERRUPT=0 timeout 180 "$LD" --library-path "$LP" "$@"; }

tap_check "insmod kfdsim ndev=$NDEV" insmod $KO ndev=$NDEV
mkdir -p $T/module/amdgpu && echo live >$T/module/amdgpu/initstate
bwrap --bind / / --dev-bind /dev /dev --bind $T/module /sys/module \
	env HSA_ENABLE_INTERRUPT=0 timeout 180 "$LD" --library-path "$LP" $X/usr/bin/rocminfo >$T/rocminfo 2>&1
grep -E '^  (Name|Marketing Name|Chip ID|Compute Unit):' $T/rocminfo | sed 's/^/# /'
tap_check "rocminfo 6.1.2: a gfx908 agent per kfdsim device ($NDEV), device 0x738c" \
	eval 'test "$(grep -c "^  Name: *gfx908 *$" $T/rocminfo)" = $NDEV &&
	      test "$(grep -c "^  Chip ID: *29580(0x738c)" $T/rocminfo)" = $NDEV'
# ACCEL_WORKING once per device and process: rocminfo's
counted() {
	[ "$(awk '$1 == "INFO.ACCEL_WORKING" {print $2}' $DBG/drm_ioctls)" = $NDEV ] &&
		grep -qx 'refused 0' $DBG/drm_ioctls || { sed 's/^/# /' $DBG/drm_ioctls; return 1; }
}
tap_check "ROCr 6.1.2's libdrm_amdgpu initialised each device once, nothing refused (drm_ioctls)" counted
run61 build/rocr-client check >$T/rocr 2>&1
rc=$?
sed 's/^/# /' $T/rocr | head -40
tap_check "ROCr 6.1.2 (bookworm-built rocr-client): hsa_init() = 0, a gfx908 agent" \
	eval 'has $T/rocr hsa_init 0 && grep -q "^agent gpu gfx908$" $T/rocr'
tap_check "ROCr 6.1.2 runs rocr-client check to the end on kfdsim: its queue, dispatches and barrier, every call ok (exit $rc)" \
	test "$rc" = 0
tap_diag "KFD ioctls: $(tr '\n' ' ' <$DBG/kfd_ioctls)"
tap_check "rmmod kfdsim" eval 'wait_for 10 ks_idle && rmmod kfdsim'
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
