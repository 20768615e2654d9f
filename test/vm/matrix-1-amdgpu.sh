#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Matrix suite, part 1: the real amdgpu.ko of the booted kernel (the amdgpu
# suite), then amdgpu unloaded so that part 2's kfdsim is the only KFD.
# Its plan counts this file's one line too (TAP_PLAN_ADD).
TAP_PLAN_ADD=1 bash test/vm/amdgpu-gpreempt.sh
rc=$?
. test/lib/tap.sh
tap_check "modprobe -r amdgpu after the attach tests" modprobe -d "$GP_KROOT" -r amdgpu
exit $((rc | TAP_FAILED))
