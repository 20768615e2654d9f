#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's HIP (hipcc and libamdhip64-5 5.2.3, unmodified) on kfdsim's
# /dev/kfd: build/hip-work (test/hip) is a real HIP program; kfdsim models
# each kernel it launches, work(ns, ...), as ns per workgroup.  First kfdsim
# alone: hsa_init (ROCr's image extension asks GET_TILE_CONFIG), stream
# creation (ROCclr registers host memory: a USERPTR buffer whose GPU VA is
# not its CPU address), the code-object loads (ROCr's blit kernel, whose
# kernarg is pointers, then a vendor-specific PM4 packet ROCr spins on),
# launches, hipEventElapsedTime (the CP's signal timestamps), small
# hipMemcpys; every kernel the program launched is dispatched exactly once
# (kfdsim's per-queue counts, ROCr's and ROCclr's copy kernels apart).  With
# ROCr's default SDMA copies, staged hipMemcpys go through /dev/kfd SDMA
# queues that kfdsim's SDMA engine runs: the same bytes come back.  Then gpreempt: an LC HIP process made
# latency-critical by a cgroup rule parks a BE HIP process, whose idle
# internal queues (the null stream's, ROCr's utility queue) count as no
# work; a multi-stream HIP process (a low-priority producer stream, a
# high-priority consumer that waits for it with hipStreamWaitEvent, the null
# stream, hipDeviceSynchronize) beside the BE never deadlocks (no round
# takes 10 s) and gpreempt sees its barriers pass; how often its producer
# was parked, the starvation slices while the consumer waited and each
# round's latency are printed; its low stream's first kernel, parked for
# BE, gets CUs in its starvation slice (BE is parked for it: the hardware
# runs BE first); rmmod in the middle leaves every stream
# running, each kernel dispatched once.  Every KFD ioctl and AQL packet type is listed with its
# count.  Runs inside the test guest from the repository root; ends with
# kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
HIP=build/hip-work
CG=/sys/fs/cgroup/hip-lc

tap_plan 46
kfdclient_begin hip
kfdclient_need $HIP skip "build/hip-work # SKIP hipcc missing (Debian's hipcc, libamdhip64-dev: run scripts/setup)"

# Lines a HIP program printed that are no result: libdrm's note on the stub render node.
show_err() { grep -v 'amdgpu_get_auth\|^[a-z_0-9]* \|^[a-z_]*$' "$1" | head -5 | sed 's/^/# /'; }
pasid_of() {
	$CTL --json status 2>/dev/null | jq -r --argjson t "$1" '[.queues[] | select(.tgid == $t)][0].pasid // empty'
}
# qsum PASID FIELD [PRIO [FILE]]: FIELD summed over kfdsim's queues of PASID
# (at PRIO), in FILE (a copy of kfdsim/queues) or now.
qsum() {
	grep " pasid=$1 " "${4:-$DBG/queues}" | grep -e " prio=${3:-[0-9]*} " |
		awk -v f="$2" '{for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2 && kv[1] == f) s += kv[2]} END {print s + 0}'
}
# kernels PASID [PRIO [FILE]]: dispatches of the program's own kernels (not copies).
kernels() { echo $(( $(qsum "$1" dispatches "$2" "$3") - $(qsum "$1" utility "$2" "$3") )); }

tap_check "insmod kfdsim num_cu=8" insmod $KO num_cu=8

# --- kfdsim alone: what HIP needs ------------------------------------------
snapshot
rm -f $T/release
HSA_ENABLE_SDMA=0 HIP_WORK_HOLD=$T/release timeout 120 $HIP check >$T/check 2>&1 &
chk=$!
wait_for 90 grep -qx -e hold -e 'check_done 0' $T/check
show_err $T/check
cat $DBG/queues >$T/check.queues
cpasid=$(grep -o 'pasid=[0-9]*' $T/check.queues | head -n 1 | cut -d= -f2)
touch $T/release
wait $chk
rc=$?
tap_check "check: every HIP call succeeds (exit $rc)" test $rc -eq 0
tap_check "check: hipGetDeviceProperties: the gfx908 kfdsim shows" grep -q '^arch gfx908' $T/check
tap_check "check: hipStreamCreate returns (GET_TILE_CONFIG, USERPTR at its own GPU VA, the PM4 packet)" \
	has $T/check stream_created 1
tap_check "check: the first launch completes (code object loaded by ROCr's blit kernel)" \
	has $T/check first_launch_done 1
# The modelled work is 2 ms of GPU time; ROCr converts the CP's timestamps
# to its clock by a ratio it estimates from GET_CLOCK_COUNTERS samples, which
# is a fraction of a percent off (1995 us in a clean-clone run): 5 % slack.
# Without the CP's timestamps it is 0.
tap_check "check: hipEventElapsedTime over 16 x 1 ms on 8 CUs >= 1.9 ms (CP timestamps): $(field $T/check elapsed_us) us" \
	test "$(field $T/check elapsed_us)" -ge 1900
tap_check "check: hipMemcpy 256 B to the device and 64 B back: the same bytes" \
	has $T/check memcpy_roundtrip 1
n=$(field $T/check launched_normal)
k=$(kernels "$cpasid" "" $T/check.queues)
cq() { qsum "$cpasid" "$1" "" $T/check.queues; }
tap_check "check: kfdsim dispatched the program's $n kernels exactly once ($k), copies apart" \
	test "${n:-0}" -gt 0 -a "$k" = "$n"
tap_check "check: ROCr's copy kernels recognised, no pointer read as ns ($(cq utility) copies, no clamp)" \
	eval 'test "$(cq utility)" -gt 0 && ! dmesg | grep -q "clamped"'
tap_check "check: ROCr's vendor-specific PM4 packets completed as no-ops ($(cq vendor))" \
	test "$(cq vendor)" -gt 0
tap_check "check: hipMemcpy of 4 KiB back, staged through ROCr's blit kernel, which kfdsim did ($(cq blit_bytes) bytes copied in all): the same bytes" \
	eval 'has $T/check memcpy_4k 1 && has $T/check memcpy_4k_same 1'
tap_diag "check: kfdsim's queues of the HIP process: $(grep " pasid=$cpasid " $T/check.queues | awk '{print $3, $4, $10, $13}' | tr '\n' ';') dispatches/utility/barriers/vendor: $(grep " pasid=$cpasid " $T/check.queues | grep -o 'dispatches=.*' | tr '\n' ';')"
tap_diag "KFD ioctls of one HIP process (check): $(deltas)"
tap_diag "AQL packets of it: kernel dispatches $(sdelta aql_dispatches) (copy kernels $(sdelta aql_utility)), barrier-AND/OR $(sdelta aql_barriers), vendor-specific $(sdelta aql_vendor)"
tap_check "check: the HIP process is gone" wait_for 10 ks_idle

# ROCr's default: SDMA for host copies.  The staged hipMemcpys (4 KiB back,
# 256 KiB there and back) go through ROCr's SDMA queues on /dev/kfd, whose
# SDMA v4 packets kfdsim's engine runs (test/kfdsim/sdma.c).
snapshot
rm -f $T/release
HIP_WORK_HOLD=$T/release timeout 120 $HIP check >$T/sdma 2>&1 &
chk=$!
wait_for 90 grep -qx -e hold -e 'check_done 0' $T/sdma
show_err $T/sdma
cat $DBG/queues >$T/sdma.queues
spasid=$(grep -o 'pasid=[0-9]*' $T/sdma.queues | head -n 1 | cut -d= -f2)
touch $T/release
wait $chk
rc=$?
sq() { grep " pasid=$spasid " $T/sdma.queues | grep ' type=sdma '; }
sqsum() { sq | grep -o " $1=[0-9]*" | cut -d= -f2 | awk '{s += $1} END {print s + 0}'; }
tap_check "SDMA on: every HIP call succeeds (exit $rc)" test $rc -eq 0
tap_check "SDMA on: ROCr made its SDMA queues through /dev/kfd ($(sq | wc -l), CREATE_QUEUE $(delta CREATE_QUEUE))" \
	test "$(sq | wc -l)" -ge 1
tap_check "SDMA on: hipMemcpy 4 KiB back through SDMA: the same bytes" has $T/sdma memcpy_4k_same 1
tap_check "SDMA on: hipMemcpy 256 KiB there and back through SDMA: the same bytes" \
	has $T/sdma memcpy_256k_same 1
tap_check "SDMA on: the engine copied each byte once ($(sqsum sdma_bytes) bytes on the SDMA queues = 4 KiB + 2 x 256 KiB, $(sdelta sdma_copy_linear) COPY_LINEAR)" \
	test "$(sqsum sdma_bytes)" = $((4096 + 2 * 262144))
tap_check "SDMA on: one completion-signal decrement (ATOMIC) per copy ($(sdelta sdma_atomic) for $(sdelta sdma_copy_linear))" \
	test "$(sdelta sdma_atomic)" = "$(sdelta sdma_copy_linear)" -a "$(sdelta sdma_atomic)" -gt 0
tap_check "SDMA on: no SDMA queue stopped at a packet ($(sdelta sdma_errors) errors)" \
	eval 'test "$(sdelta sdma_errors)" = 0 && test "$(sqsum sdma_error)" = 0'
n=$(field $T/sdma launched_normal)
k=$(qsum "$spasid" dispatches "" $T/sdma.queues)
k=$((k - $(qsum "$spasid" utility "" $T/sdma.queues)))
tap_check "SDMA on: kfdsim dispatched the program's $n kernels exactly once ($k)" \
	test "${n:-0}" -gt 0 -a "$k" = "$n"
tap_diag "SDMA on: SDMA packets ROCr sent: $(for o in nop copy_linear const_fill fence trap poll_regmem atomic timestamp reg_polls; do printf '%s %s ' $o "$(sdelta sdma_$o)"; done)"
tap_diag "SDMA on: its SDMA queues: $(sq | awk '{print $3, $4, $10, $11}' | tr '\n' ';') $(sq | grep -o 'sdma_bytes=[0-9]*' | tr '\n' ' ')"
tap_diag "KFD ioctls of one HIP process (SDMA on): $(deltas)"
wait_for 10 ks_idle

# --- gpreempt: LC parks BE ---------------------------------------------------
# user_max_priority=15: the consumer stream's KFD 15 counts, as sim-deps.
tap_check "insmod gpreempt user_max_priority=15" insmod $OBJ/module/gpreempt.ko user_max_priority=15
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
mkdir -p $CG
tap_check "gpreemptctl set cgroup $CG high" $CTL set cgroup $CG high
export HSA_ENABLE_SDMA=0
nqueues() { $CTL --json status 2>/dev/null | jq --argjson t "$1" '[.queues[] | select(.tgid == $t)] | length'; }
rm -f $T/stop $T/release
# 4 launches in flight: BE always has workgroups queued, whatever the
# guest's scheduling delays in relaunching.
HIP_WORK_HOLD=$T/bedone $HIP be 8 20000000 4 $T/stop >$T/be 2>&1 &
be=$!
tap_check "BE (HIP, root cgroup): its stream runs kernels" wait_for 180 grep -qx be_ready $T/be
HIP_WORK_HOLD=$T/release sh -c "echo \$\$ > $CG/cgroup.procs && exec $HIP lc 20 8 2000000 20000" \
	>$T/lc 2>&1 &
lc=$!
tap_check "LC (HIP, in $CG): started" wait_for 180 grep -qx lc_ready $T/lc
tap_check "LC: its 20 requests done" wait_for 180 grep -qx lc_done $T/lc
pre=$(psum $be preempts)
res=$(psum $be resumes)
tap_diag "gpreempt's queues: $($CTL --json status | jq -c '[.queues[] | {tgid, qid, priority, source, kfd_priority, state}]')"
tap_check "LC's $(nqueues $lc) queues (its stream's, ROCr's utility queue) at 12 from the cgroup rule" \
	eval '[ "$($CTL --json status | jq --argjson t $lc "[.queues[] | select(.tgid == \$t and .priority == 12)] | length")" -ge 2 ]'
tap_check "BE runs again while LC's idle HIP queues remain" wait_for 10 all_running $be
be_cycled "$pre" "$res"
lpasid=$(pasid_of $lc)
tap_check "LC: 20 requests, every kernel dispatched exactly once ($(kernels "$lpasid") of $(field $T/lc launched_normal))" \
	eval 'has $T/lc lc_requests 20 && test "$(kernels "$lpasid")" = "$(field $T/lc launched_normal)"'
tap_diag "LC latency (kfdsim/TCG simulation numbers; alone a request is one round of 2 ms): p50 $(field $T/lc lat_p50) us, p99 $(field $T/lc lat_p99) us"
touch $T/release
wait $lc
tap_check "LC: every HIP call succeeded" test $? = 0

# --- a multi-stream process beside BE; rmmod in the middle -------------------
# BE is stopped before rmmod: without gpreempt, kfdsim's CP gives every free
# CU to the highest-priority queue with work, and the producer stream (KFD
# 0) would wait behind BE (KFD 7) for as long as BE has work.
st0=$(gstat starvation_slices) r0=$(gstat dep_releases) y0=$(gstat yield_parks)
rm -f $T/release
# Rounds take tens of ms under gpreempt: enough of them that rmmod lands in the middle.
NR=1000
# Each starvation slice given to a queue of the streams process:
# gpreempt:resume with reason GP_WHY_STARVING (3), by its tgid.  The filter
# is set right after the launch, seconds before HIP's start-up creates a
# queue, so the warm-up's slice is seen: the control that the count works.
TR=/sys/kernel/tracing
mountpoint -q $TR || mount -t tracefs nodev $TR
echo 0 >$TR/tracing_on
: >$TR/trace
t_st=$(date +%s%N)
HIP_WORK_HOLD=$T/release $HIP streams $NR 5000000 >$T/st 2>&1 &
st=$!
echo "reason == 3 && tgid == $st" >$TR/events/gpreempt/resume/filter
echo 1 >$TR/events/gpreempt/resume/enable
echo 1 >$TR/tracing_on
# The streams process's warm-up kernel on the low stream (KFD 0) has nothing
# waiting on it yet, so it is parked for BE (7, the top level); kfdsim's CP
# hands every CU BE has waves for to BE first, so the starvation guard's
# slice is run time only with BE parked for it (GP_WHY_YIELD): the start
# waits about max_suspend (1 s), not for as long as BE runs.
tap_check "streams: started (low and high stream, the null stream) beside a busy BE: the starvation slice parks BE, which the hardware runs first" \
	wait_for 180 grep -qx streams_ready $T/st
tap_diag "streams: started $(( ($(date +%s%N) - t_st) / 1000000 )) ms after launch (simulation numbers), $(( $(gstat starvation_slices) - st0 )) starvation slice(s) by then"
st_ready=$(gstat starvation_slices)
warm_slices=$(grep -c 'resume:' $TR/trace)
tap_check "streams: the tracepoint saw the warm-up's starvation slice ($warm_slices)" test "$warm_slices" -ge 1
tap_check "streams: 8 rounds under gpreempt" wait_for 180 grep -qx "round 7" $T/st
echo 0 >$TR/events/gpreempt/resume/enable
own_slices=$(( $(grep -c 'resume:' $TR/trace) - warm_slices ))
echo 0 >$TR/events/gpreempt/resume/filter
st1=$(gstat starvation_slices) r1=$(gstat dep_releases) y1=$(gstat yield_parks)
tap_check "streams: each starvation slice had what the hardware runs first parked (slices $((st1 - st0)), yield parks $((y1 - y0)))" \
	test $((st1 - st0)) = 0 -o $((y1 - y0)) -gt 0
tap_diag "gpreempt's queues of the streams process: $($CTL --json status | jq -c --argjson t $st '[.queues[] | select(.tgid == $t) | {qid, priority, source, kfd_priority, state, preempts}]')"
pp=$($CTL --json status | jq --argjson t $st '[.queues[] | select(.tgid == $t and .kfd_priority == 0) | .preempts] | add // 0')
tap_check "streams: gpreempt saw the consumer's barriers pass ($((r1 - r0)))" test $((r1 - r0)) -gt 0
# Counted from the streams' start, after the warm-up (whose wait may take a
# slice).  Before the tiers fix a BE at KFD 7 was left to the hardware while
# the consumer waited, and the hardware runs it before the producer (KFD 0),
# which gpreempt had running at the consumer's inherited 15: it stood
# pending for seconds (0 -> 33 slices, rounds up to 7.6 s, in one run).
# gp_stats counts BE's own slices too (parked for a second while the
# streams run); the tracepoint, filtered by the streams' tgid, does not.
tap_diag "streams: starvation slices over the 8 rounds (from the streams' start, every queue): $st_ready -> $st1"
tap_check "streams: no queue of the streams process waited for a starvation slice in the 8 rounds ($own_slices slices)" \
	test "$own_slices" = 0
slow=$(awk '$1 == "round_us" && $2 > 1000000' $T/st | wc -l)
worst=$(awk '$1 == "round_us" && $2 > m {m = $2} END {print m + 0}' $T/st)
tap_check "streams: no round under gpreempt took 10 s or more (worst $worst us; $slow over 1 s)" \
	test "$worst" -lt 10000000
tap_diag "streams: the producer stream (KFD 0, below BE's 7) parked $pp times in $(grep -c '^round ' $T/st) rounds; round latencies under gpreempt (us, simulation numbers): $(awk '$1 == "round_us" {printf "%s ", $2}' $T/st)"
spasid=$(pasid_of $st)
touch $T/stop
tap_check "BE: stops cleanly" wait_for 30 grep -qx be_done $T/be
tap_check "rmmod gpreempt in the middle of the rounds ($(grep -c '^round ' $T/st) of $NR)" \
	eval '! grep -qx streams_done $T/st && rmmod gpreempt'
tap_check "streams: all $NR rounds done after rmmod" wait_for 90 grep -qx streams_done $T/st
tap_check "streams: the low (KFD 0) and high (KFD 15) streams dispatched each kernel exactly once ($(kernels "$spasid" 0)/$(field $T/st launched_low), $(kernels "$spasid" 15)/$(field $T/st launched_high))" \
	eval 'test "$(kernels "$spasid" 0)" = "$(field $T/st launched_low)" -a "$(kernels "$spasid" 15)" = "$(field $T/st launched_high)"'
tap_check "streams: the null stream's kernels exactly once, on a queue at KFD 7 ($(kernels "$spasid" 7)/$(field $T/st launched_null))" \
	test "$(kernels "$spasid" 7)" = "$(field $T/st launched_null)"
tap_diag "streams: kfdsim's queues: $(grep " pasid=$spasid " $DBG/queues | awk '{print $3, $4}' | tr '\n' ';') round latency (simulation numbers) p50 $(field $T/st lat_p50) us, p99 $(field $T/st lat_p99) us"
tap_diag "streams: kfdsim/kernels (dispatches ns name): $(grep -v "^#" $DBG/kernels 2>/dev/null | tr "\n" ";")"
touch $T/release
wait $st
tap_check "streams: every HIP call succeeded" test $? = 0
touch $T/bedone
wait $be
tap_check "BE: every HIP call succeeded ($(field $T/be be_completed) kernels)" test $? = 0
show_err $T/be
show_err $T/st
$CTL unset cgroup $CG 2>/dev/null
rmdir $CG 2>/dev/null

tap_diag "KFD ioctls since kfdsim was loaded: $(awk '$2 > 0' $DBG/kfd_ioctls | tr '\n' ' ')"
tap_diag "AQL packets since kfdsim was loaded: $(grep aql_ $DBG/stats | tr '\n' ' ')"
tap_check "rmmod kfdsim" eval 'wait_for 10 ks_idle && rmmod kfdsim'
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
