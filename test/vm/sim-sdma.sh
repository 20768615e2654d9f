#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim's SDMA v4 engine (test/kfdsim/sdma.c) on a /dev/kfd SDMA queue that
# Debian's libhsakmt creates, driven as ROCr's BlitSdmaV4 drives one
# (build/sdma-client): a POLL_REGMEM waits for its value; 1 MiB host ->
# VRAM -> host by COPY_LINEAR comes back the same, though two runlist
# changes preempt it on the way (kfdsim counts the save and the restore,
# and the bytes once); CONST_FILL, ATOMIC ADD64, TIMESTAMP and FENCE do
# what they say; COPY_LINEAR_RECT (hipMemcpy2D's packet) copies a 2-D and a
# 3-D box between pitched buffers, touching nothing else; the read offset
# ends at the write offset, in bytes.  An unknown opcode stops the queue at
# that packet with a kernel log line and sdma_error=1, nothing after it
# runs, and the queue is still destroyed; so does, on a second queue, a
# COPY_LINEAR_RECT whose box runs past its buffer.
# gpreempt sees the queue.  Runs inside the test guest
# from the repository root; ends with kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
tap_plan 27
CLIENT=build/sdma-client

kfdclient_begin sdma
kfdclient_need $CLIENT fail "build/sdma-client built # libhsakmt-dev missing: run scripts/setup"

# 1 MiB at 2 MB/s: 520 ms a copy, so the client's AQL queue churn (create,
# 100 ms, destroy: two runlist changes) lands within the copies even in a
# slow guest (at 50 MB/s, 21 ms, CI's memory-debugging guest created the
# queue after both copies had ended: 0 preemptions; at 5 MB/s a guest under
# a load of 20 did too).
tap_check "insmod kfdsim sdma_mbps=2" insmod $KO sdma_mbps=2
tap_check "insmod gpreempt" insmod $OBJ/module/gpreempt.ko
# The client keeps its SDMA queue until $T/hold exists: its work takes about
# two seconds, one gpreemptctl run can take as long in a loaded guest.
SDMA_CLIENT_HOLD=$T/hold $CLIENT >$T/out 2>$T/err &
pid=$!
wait_for 60 grep -q '^queue_id' $T/out
cat $DBG/queues >$T/queues.early
$CTL --json status >$T/status 2>/dev/null
touch $T/hold
wait $pid
rc=$?
grep -v 'amdgpu_get_auth' $T/err | head -5 | sed 's/^/# /'
sed 's/^/# /' $T/out
tap_check "sdma-client: every libhsakmt call succeeds, every check holds (exit $rc)" test $rc = 0
# The client may have made its second SDMA queue (the bad-opcode one) by
# the time of the read: at least the first, whose id it printed.
tap_check "gpreempt saw the SDMA queue" \
	eval "jq -e --argjson t $pid '[.queues[] | select(.tgid == \$t)] | length >= 1' $T/status >/dev/null"
tap_diag "gpreempt's view: $(jq -c --argjson t $pid '[.queues[] | select(.tgid == $t)]' $T/status)"
tap_check "kfdsim: a queue of type sdma" grep -q ' type=sdma ' $T/queues.early
tap_check "POLL_REGMEM: the engine waits at it until the value holds" has $T/out poll_waits 1
tap_check "COPY_LINEAR: 1 MiB host -> VRAM -> host, the same bytes" has $T/out copy_same 1
tap_check "the copies were preempted by the runlist changes and resumed ($(kstat preemptions) preemptions)" \
	test "$(kstat preemptions)" -ge 1
tap_check "CONST_FILL: 4 KiB of one dword, nothing beyond" has $T/out fill_ok 1
tap_check "ATOMIC ADD64 of -1 on 5: 4" has $T/out atomic 4
tap_check "TIMESTAMP: the clock written" has $T/out timestamp_ok 1
tap_check "FENCE: 2015 written after the rest" has $T/out fence 2015
tap_check "COPY_LINEAR_RECT: 10 x 7 dwords between pitches 256 and 384 land, nothing else written" \
	has $T/out rect2d_ok 1
tap_check "COPY_LINEAR_RECT: 13 x 5 x 3 bytes across slices land, nothing else written" \
	has $T/out rect3d_ok 1
tap_check "... counted as sdma_copy_linear_rect ($(kstat sdma_copy_linear_rect))" \
	test "$(kstat sdma_copy_linear_rect)" = 2
r=$(awk '$1 == "rptr" {print $2, $4}' $T/out)
tap_check "the read offset (bytes) ends at the write offset ($r)" \
	test "${r% *}" = "${r#* }" -a "${r% *}" -gt 0
tap_check "an unknown opcode stops the queue at it; the FENCE after it never runs" \
	has $T/out bad_rptr_stuck 1
tap_check "... with a kernel log line naming it" \
	eval 'dmesg | grep -q "SDMA queue .*opcode not simulated: packet 0x0000003f (opcode 63"'
tap_check "... and the queue is destroyed as usual" has $T/out destroy 0
tap_check "a COPY_LINEAR_RECT running past its buffer stops its queue; nothing written, the FENCE after it never runs" \
	has $T/out rect_oob_stuck 1
tap_check "... with a kernel log line naming it" \
	eval 'dmesg | grep -q "SDMA queue .*rect copy outside the GPU VM: packet 0x80000401 (opcode 1 sub-op 4)"'
tap_check "kfdsim's stats count both stops ($(kstat sdma_errors))" test "$(kstat sdma_errors)" = 2
tap_check "each byte copied once: sdma_bytes $(kstat sdma_bytes) = 2 MiB + 4 KiB + the boxes' 475" \
	test "$(kstat sdma_bytes)" = $((2 * 1048576 + 4096 + 10 * 7 * 4 + 13 * 5 * 3))
tap_diag "SDMA packets (kfdsim/TCG simulation): $(grep '^sdma_' $DBG/stats | tr '\n' ' ')"
tap_check "kfdsim idle" wait_for 10 ks_idle
tap_check "rmmod gpreempt" rmmod gpreempt
tap_check "rmmod kfdsim" rmmod kfdsim
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
