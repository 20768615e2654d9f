#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Threat-model row 28: forged ROCr blit dispatches on kfdsim
# (build/blit-client, Debian's libhsakmt on kfdsim's /dev/kfd).  A process
# writes the kernel descriptor kfdsim takes for ROCr 5.2.3's CopyAligned or
# Fill shader and the kernargs that name the range; kfdsim copies or fills
# only when each range lies inside one of the caller's own GPU-mapped
# buffers and is at most 4 MiB, else logs it and skips it.  A legal 4 KiB
# copy lands (the client reaches the blit path); a source in no buffer, a
# source or destination running past its buffer's end, a copy and a fill
# over 4 MiB, a fill outside the buffers, and addresses whose last bytes
# wrap past 2^64 (the descriptor, the kernargs, the completion signal)
# change no byte of the caller's buffers, and every dispatch still
# completes.  kfdsim only; runs inside the test guest from the repository
# root; ends with kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
tap_plan 19
CLIENT=build/blit-client

kfdclient_begin blit
kfdclient_need $CLIENT fail "build/blit-client built # libhsakmt-dev missing: run scripts/setup"

tap_check "insmod kfdsim" insmod $KO
run_bounded 120 $CLIENT >$T/out 2>$T/err
grep -v 'amdgpu_get_auth' $T/err | head -5 | sed 's/^/# /'
sed 's/^/# /' $T/out
tap_check "blit-client: every libhsakmt call succeeds, every check holds (exit $rc)" test "$rc" = 0

# same CASE: the case's dispatch completed and left A, B and G as they should be.
same() { grep -q "^$1 done 1 b_same 1 a_same 1 g_same 1\$" $T/out; }
# logged PATTERN: kfdsim's kernel log has a line matching PATTERN.
logged() { dmesg | grep -qE "$1"; }
tap_check "row 28: control: a legal 4 KiB blit copy from A lands in B" same control
tap_check "row 28: a blit from outside the caller's buffers copies nothing, logged" \
	eval 'same copy_src_outside && logged "ROCr blit 0x1000 -> 0x[0-9a-f]+ \(4096 bytes\) outside the GPU VM"'
tap_check "row 28: a blit source running past its buffer's end copies nothing" same copy_src_past_end
tap_check "row 28: a blit destination running past its buffer's end writes nothing" same copy_dst_past_end
tap_check "row 28: the five blits outside a buffer (source, past an end, fill) are logged" \
	test "$(dmesg | grep -cE 'ROCr blit 0x[0-9a-f]+ -> 0x[0-9a-f]+ \(4096 bytes\) outside the GPU VM')" = 5
tap_check "row 28: a blit copy over 4 MiB copies nothing" same copy_over_cap
tap_check "row 28: a blit fill over 4 MiB fills nothing" same fill_over_cap
tap_check "row 28: the blits over 4 MiB are logged, not done" \
	test "$(dmesg | grep -c 'ROCr blit of 4198400 bytes not done')" = 2
tap_check "row 28: a blit fill outside the caller's buffers writes nothing" same fill_outside
tap_check "row 28: a blit fill running past its buffer's end writes nothing" same fill_past_end
tap_check "row 28: a kernel descriptor at 2^64 - 64 (wrapping) is no blit" same kd_wraps
tap_check "row 28: kernargs at 2^64 - 8 (wrapping) are not read, logged" \
	eval 'same kernarg_wraps && logged "kernarg 0xfffffffffffffff8 not mapped to the GPU"'
tap_check "row 28: a completion signal at 2^64 - 16 (wrapping) is not written, logged" \
	eval 'same signal_wraps && logged "completion signal 0xfffffffffffffff0 not mapped to the GPU"'
tap_check "the queue is destroyed as usual" has $T/out destroy 0
tap_check "kfdsim idle" wait_for 10 ks_idle
tap_check "rmmod kfdsim" rmmod kfdsim
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
