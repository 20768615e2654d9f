#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim's DRM devices (issue 42, part 2): the host's libdrm_amdgpu (Debian's
# 2.4.114, unmodified) initialises each simulated GPU through its render
# node, as ROCr 6.1 and later do per GPU agent (build/drm-client,
# test/drm-client): amdgpu_device_initialize() takes the node (DRM "amdgpu"
# 3.x, ACCEL_WORKING, DEV_INFO, GB_ADDR_CONFIG), the device id, family and
# CU count it reports are the topology's, each node's minor is the
# topology's drm_render_minor, libdrm tells the two devices apart, and the
# DRM_AMDGPU_INFO queries kfdsim does not answer are refused and counted
# (debugfs kfdsim/drm_ioctls).  Runs inside the test guest from the
# repository root (test/run-vm sim); ends with kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
CLIENT=build/drm-client
TOPO=/sys/devices/virtual/kfd/kfd/topology
NDEV=2
NCU=12
# 6 lines for each device
tap_plan $((6 + 6 * NDEV))

kfdclient_begin drm
kfdclient_need $CLIENT fail "build/drm-client built # libdrm-dev missing: run scripts/setup"

tap_check "insmod kfdsim ndev=$NDEV num_cu=$NCU" insmod $KO ndev=$NDEV num_cu=$NCU
# prop NODE KEY: a topology node's property
prop() { awk -v k="$2" '$1 == k {print $2}' $TOPO/nodes/$1/properties; }
nodes=''
for d in $(seq 0 $((NDEV - 1))); do
	nodes="$nodes /dev/dri/renderD$(prop $((d + 1)) drm_render_minor)"
done
$CLIENT $nodes >$T/out 2>$T/err
crc=$?
sed 's/^/# /' $T/err | head -5
tap_check "drm-client: every libdrm_amdgpu call succeeds (exit 0)" test "$crc" = 0

for d in $(seq 0 $((NDEV - 1))); do
	n=$((d + 1)) m=$(prop $((d + 1)) drm_render_minor)
	tap_check "dev $d: amdgpu_device_initialize() = 0 on renderD$m, DRM 3.61" \
		eval "has $T/out dev$d.init 0 && has $T/out dev$d.drm_version 3.61"
	tap_check "dev $d: asic_id is the topology's device_id (0x738c), family AMDGPU_FAMILY_AI (141), external rev 0x33" \
		eval "has $T/out dev$d.asic_id $(printf 0x%x "$(prop $n device_id)") && has $T/out dev$d.asic_id 0x738c &&
		      has $T/out dev$d.family_id 141 && has $T/out dev$d.chip_external_rev 51"
	tap_check "dev $d: cu_active_number is the topology's CUs ($NCU), num_shader_engines its array_count" \
		eval "has $T/out dev$d.cu_active_number $(( $(prop $n simd_count) / $(prop $n simd_per_cu) )) &&
		      has $T/out dev$d.cu_active_number $NCU &&
		      has $T/out dev$d.num_shader_engines $(prop $n array_count)"
	tap_check "dev $d: gpu_counter_freq 1000000 kHz (GET_CLOCK_COUNTERS' 1 GHz), gb_addr_cfg GET_TILE_CONFIG's 0x22014042" \
		eval "has $T/out dev$d.gpu_counter_freq 1000000 && has $T/out dev$d.gb_addr_cfg 0x22014042"
	tap_check "dev $d: drm_render_minor $m is DRM's renderD$m (char 226:$m), a DRM device on kfdsim-gpu.$d (platform bus)" \
		eval "has $T/out dev$d.minor $m && test \"\$(cat /sys/class/drm/renderD$m/dev)\" = 226:$m &&
		      test \"\$(basename \"\$(readlink /sys/class/drm/renderD$m/device)\")\" = kfdsim-gpu.$d &&
		      test \"\$(basename \"\$(readlink /sys/class/drm/renderD$m/device/subsystem)\")\" = platform"
	tap_check "dev $d: an unknown query, return_size 0, another register, an unmapped pointer refused (EINVAL EINVAL EFAULT EFAULT)" \
		eval "has $T/out dev$d.bad.query 22 && has $T/out dev$d.bad.size0 22 &&
		      has $T/out dev$d.bad.register 14 && has $T/out dev$d.bad.pointer 14"
done
tap_check "libdrm tells the $NDEV devices apart (distinct handles: their primary nodes differ)" \
	has $T/out handles_distinct yes
# per device: ACCEL_WORKING 1; DEV_INFO 1 + size0 + pointer; READ_MMR_REG 1 + register; 0x7f 1
counted() {
	local want="INFO.ACCEL_WORKING $NDEV
INFO.READ_MMR_REG $((2 * NDEV))
INFO.DEV_INFO $((3 * NDEV))
INFO.0x7f $NDEV
refused $((4 * NDEV))"
	[ "$(cat $DBG/drm_ioctls)" = "$want" ] || { sed 's/^/# /' $DBG/drm_ioctls; return 1; }
}
tap_check "drm_ioctls counts each DRM_AMDGPU_INFO query and the $((4 * NDEV)) refused" counted
# drm_nodes: kfdsim's card and render nodes in sysfs (0 without a DRM device)
drm_nodes() { ls /sys/bus/platform/devices/kfdsim-gpu.*/drm 2>/dev/null | grep -c '^card\|^renderD'; }
tap_check "rmmod kfdsim: its $NDEV card and $NDEV render nodes are gone" \
	eval 'test "$(drm_nodes)" = $((2 * NDEV)) && wait_for 5 ks_idle && rmmod kfdsim && test "$(drm_nodes)" = 0'

tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
