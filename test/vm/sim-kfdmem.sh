#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two KFD pieces ROCm 6.x's thunk uses, on kfdsim's /dev/kfd from raw ioctls
# (build/kfdmem-client; test/kfdsim/kfd_mem.c and events.c):
# AVAILABLE_MEMORY (hipMemGetInfo) answers from kfdsim's VRAM accounting
# (the 1 GiB bank less amdgpu's page-table reserve, less each VRAM buffer
# rounded up to 2 MiB, given back at its free), for a process bound to the
# device or not, and refuses an unknown gpu_id with EINVAL, counted; and
# event ages (KFD 1.14): a WAIT_EVENTS whose age is stale returns at once
# with the new age, one with the current age waits (a timeout, or the
# SET_EVENT that wakes it).  libhsakmt's hsaKmtAvailableMemory is asked
# when the installed libhsakmt has it (Debian's 5.2.3 does not: SKIP).
# Runs inside the test guest from the repository root; ends with kfdsim
# unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
tap_plan 20
CLIENT=build/kfdmem-client
# 1 GiB less ESTIMATE_PT_SIZE's floor of 8 MiB (the guest has far less than
# 128 GiB of RAM), rounded down to 2 MiB
AVAIL=$(( (1024 - 8) << 20 ))

kfdclient_begin kfdmem
kfdclient_need $CLIENT fail "build/kfdmem-client built"

tap_check "insmod kfdsim" insmod $KO
$CLIENT >$T/out 2>$T/err
rc=$?
sed 's/^/# /' $T/out $T/err
tap_check "kfdmem-client: every ioctl that must work did (exit $rc)" test $rc = 0
tap_check "AVAILABLE_MEMORY on an empty device: the 1 GiB bank less amdgpu's 8 MiB page-table reserve" \
	has $T/out avail $AVAIL
tap_check "AVAILABLE_MEMORY answers before ACQUIRE_VM (KFD's: any device of the process)" \
	has $T/out avail_unbound "0 $AVAIL"
tap_check "AVAILABLE_MEMORY drops by 8 MiB after an 8 MiB VRAM ALLOC_MEMORY_OF_GPU" \
	has $T/out vram_drop 8388608
tap_check "AVAILABLE_MEMORY comes back after FREE_MEMORY_OF_GPU" has $T/out vram_back $AVAIL
tap_check "a 4 KiB VRAM buffer takes 2 MiB of it (amdgpu's VRAM_AVAILABLITY_ALIGN)" \
	has $T/out small_drop 2097152
tap_check "AVAILABLE_MEMORY of an unknown gpu_id: EINVAL" has $T/out bad_gpu_id 22
tap_check "... counted in stats (available_memory_refused $(kstat available_memory_refused))" \
	test "$(kstat available_memory_refused)" = 1
tap_check "... with a kernel log line naming it" \
	eval 'dmesg | grep -q "AVAILABLE_MEMORY of unknown gpu_id 0x1234 refused"'
tap_check "VRAM accounting balanced after the frees (kfd_vram_used $(kstat kfd_vram_used))" \
	test "$(kstat kfd_vram_used)" = 0
tap_diag "ioctls: AVAILABLE_MEMORY $(calls AVAILABLE_MEMORY) WAIT_EVENTS $(calls WAIT_EVENTS)"

# Event ages exist from KFD 1.14 (the kernel's uapi header kfdsim built with).
v=$(field $T/out version)
if [ "${v#*.}" -ge 14 ] 2>/dev/null; then
	tap_check "age: WAIT_EVENTS with the new event's age (1), nothing signalled: times out" \
		has $T/out age_current timeout
	tap_check "age: after SET_EVENT and RESET_EVENT, a stale age (1) returns at once with age 2" \
		has $T/out age_stale "complete 2"
	tap_check "age: with the current age (2) it waits (times out)" \
		has $T/out age_current2 timeout
	tap_check "age: age 0 is the wait without ages (the reset event: times out)" \
		has $T/out age_none timeout
	tap_check "age: a waiter with the current age wakes on SET_EVENT with age 3" \
		has $T/out age_woken "complete 3"
else
	tap_skip_n 5 "age: WAIT_EVENTS with last_event_age" "KFD $v has no event ages (1.14+)"
fi

$CLIENT hsakmt >$T/hsakmt 2>&1
rc=$?
sed 's/^/# /' $T/hsakmt
if has $T/hsakmt hsakmt_available absent >/dev/null; then
	tap_skip "libhsakmt's hsaKmtAvailableMemory: the empty bank" \
		"$(dpkg-query -W -f '${Version}' libhsakmt1 2>/dev/null) has no hsaKmtAvailableMemory"
else
	tap_check "libhsakmt's hsaKmtAvailableMemory: the empty bank (exit $rc)" \
		has $T/hsakmt hsakmt_available "0 $AVAIL"
fi
tap_check "kfdsim idle" wait_for 10 ks_idle
tap_check "rmmod kfdsim" rmmod kfdsim
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
