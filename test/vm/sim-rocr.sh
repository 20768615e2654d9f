#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's ROCr (libhsa-runtime64-1 5.2.3, unmodified) on kfdsim's /dev/kfd
# (issue 18, stages 3 and 4).  build/rocr-client (test/rocr-client) runs
# hsa_init, hsa_queue_create, hsa_amd_queue_set_priority,
# hsa_amd_queue_cu_set_mask, AQL dispatches and barriers and
# hsa_signal_wait_scacquire: with polled signals (HSA_ENABLE_INTERRUPT=0),
# then in ROCr's default interrupt mode, where its signals wait on KFD
# events that kfdsim's CP signals through their mailboxes.  The event
# ioctls' own semantics are checked from a client of ours.  Then gpreempt
# on ROCr's queues: an LC and a BE process, both ROCr, both at ROCr's
# priority 7; LC is made latency-critical by a cgroup rule; BE must be
# parked while LC has work and run again after; every completion signal
# reaches 0 exactly once; the queues ROCr makes for itself are in gpreempt's
# maps with their process's priority.  Every KFD ioctl ROCr issued is
# listed with its count.  Runs inside the test guest from the repository
# root (test/run-vm sim); ends with kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
ROCR=build/rocr-client
NCU=8

# 13 lines polled, 15 with interrupts; stage 4: 15 a run, twice (once by
# hand: GP_ROCR_GPREEMPT_ARGS), then the shrink stage's 10 (not by hand).
stages=2 shrink=10
[ -z "${GP_ROCR_GPREEMPT_ARGS:-}" ] || stages=1 shrink=0
tap_plan $((1 + 13 + 15 + 9 + 15 * stages + shrink + 2))
kfdclient_begin rocr
kfdclient_need $ROCR fail "build/rocr-client built # libhsa-runtime-dev missing: run scripts/setup"

# Lines the client printed that are no result: libdrm's note on the stub render node.
show_err() { grep -v 'amdgpu_get_auth\|^[a-z_0-9]* ' "$1" | head -5 | sed 's/^/# /'; }

tap_check "insmod kfdsim num_cu=$NCU" insmod $KO num_cu=$NCU

# --- stage 3: ROCr with polled signals, then with interrupts ------------------
# rocr-client check: 1 dispatch of 16 workgroups, 32 of 2, a barrier-AND:
# 34 completion signals, each waited for and re-checked 100 ms later.
for mode in polled interrupt; do
	if [ $mode = polled ]; then env=HSA_ENABLE_INTERRUPT=0; else env=HSA_ENABLE_INTERRUPT=1; fi
	snapshot
	ints0=$(kstat event_interrupts)
	env $env timeout 120 $ROCR check >$T/$mode 2>&1
	rc=$?
	show_err $T/$mode
	tap_check "$mode: rocr-client check: every ROCr call succeeds (exit 0)" test $rc -eq 0
	tap_check "$mode: hsa_init() = SUCCESS, a gfx908 GPU agent" \
		eval 'has $T/$mode hsa_init 0 && grep -qx "agent gpu gfx908" $T/$mode'
	tap_check "$mode: hsa_queue_create() = SUCCESS, 1024 packets" \
		eval 'has $T/$mode queue_create 0 && has $T/$mode queue_size 1024'
	tap_check "$mode: hsa_amd_queue_set_priority(HIGH), hsa_amd_queue_cu_set_mask(4 CUs) = SUCCESS" \
		eval 'has $T/$mode set_priority 0 && has $T/$mode cu_set_mask 0'
	# 16 workgroups of 1 ms on $NCU CUs: 2 rounds at least
	tap_check "$mode: a dispatch of 16 x 1 ms workgroups waited for: >= 2 ms ($(field $T/$mode dispatch_us) us)" \
		test "$(field $T/$mode dispatch_us)" -ge 2000
	tap_check "$mode: 32 dispatches in flight, each signal waited for" has $T/$mode batch_done 32
	tap_check "$mode: a barrier-AND waits while its dependency is 1, then completes" \
		eval 'has $T/$mode barrier_blocked 1 && has $T/$mode barrier_done 1'
	tap_check "$mode: read_dispatch_id = write_dispatch_id = 34 packets" \
		has $T/$mode read_index "34 write_index 34"
	tap_check "$mode: all 34 completion signals reached 0 exactly once" \
		eval 'has $T/$mode signals_zero 34/34 && has $T/$mode completions 34'
	tap_check "$mode: hsa_queue_destroy(), hsa_shut_down() = SUCCESS" \
		eval 'has $T/$mode queue_destroy 0 && has $T/$mode shut_down 0'
	ints=$(( $(kstat event_interrupts) - ints0 ))
	if [ $mode = polled ]; then
		tap_check "polled: no KFD event ioctl, no event signalled by the CP" \
			test "$(delta CREATE_EVENT)$(delta WAIT_EVENTS)$ints" = 000
	else
		tap_check "interrupt: the CP signalled an event for each of the 34 completions ($ints)" \
			test "$ints" = 34
		tap_check "interrupt: ROCr created events and destroyed each one ($(delta CREATE_EVENT))" \
			eval 'test "$(delta CREATE_EVENT)" -gt 34 && test "$(delta CREATE_EVENT)" = "$(delta DESTROY_EVENT)"'
		tap_check "interrupt: ROCr blocked in WAIT_EVENTS ($(delta WAIT_EVENTS)) and set events from the CPU ($(delta SET_EVENT))" \
			eval 'test "$(delta WAIT_EVENTS)" -gt 0 && test "$(delta SET_EVENT)" -gt 0'
	fi
	tap_check "$mode: ROCr made 2 queues (its own and ours) and destroyed both" \
		test "$(delta CREATE_QUEUE) $(delta DESTROY_QUEUE)" = "2 2"
	tap_diag "KFD ioctls of ROCr ($mode, rocr-client check): $(deltas)"
	tap_check "$mode: the ROCr process is gone" wait_for 5 ks_idle
done

# --- the event ioctls' own semantics, from a client of ours --------------------
cat >$T/ev.py <<'EOF'
import ctypes, fcntl, os, struct
def ioc(d, nr, size):
    return (d << 30) | (size << 16) | (ord('K') << 8) | nr
CREATE, DESTROY = ioc(3, 0x08, 32), ioc(1, 0x09, 8)
SET, RESET, WAIT = ioc(1, 0x0A, 8), ioc(1, 0x0B, 8), ioc(3, 0x0C, 24)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long)
kfd = os.open('/dev/kfd', os.O_RDWR)
def call(cmd, buf):
    try:
        fcntl.ioctl(kfd, cmd, buf)
        return 0
    except OSError as e:
        return e.errno
def create(etype, auto_reset=1):
    b = bytearray(struct.pack('QIIIIII', 0, 0, etype, auto_reset, 0, 0, 0))
    r = call(CREATE, b)
    off, trig, _, _, _, eid, slot = struct.unpack('QIIIIII', b)
    return r, off, eid, slot
def ev(cmd, eid):
    return call(cmd, struct.pack('II', eid, 0))
def wait(ids, ms, all_=0):
    """(errno, wait_result) of WAIT_EVENTS on ids"""
    data = (ctypes.c_char * (48 * len(ids)))()
    for i, e in enumerate(ids):
        struct.pack_into('I', data, 48 * i + 40, e)
    b = bytearray(struct.pack('QIIII', ctypes.addressof(data), len(ids), all_, ms, 0))
    r = call(WAIT, b)
    return r, struct.unpack('QIIII', b)[4]
r, off, a, slot = create(0)
print('create_signal', r, a, slot, '0x%x' % off)
# 4096 slots of 8 bytes, at the (negative as off_t) offset CREATE_EVENT gave
page = libc.mmap(None, 4096 * 8, 3, 1, kfd, ctypes.c_long(off).value)
print('slot_unsignaled', '%x' % ctypes.c_uint64.from_address(page + 8 * slot).value
      if page not in (None, ctypes.c_void_p(-1).value) else 'mmap_failed')
print('wait_timeout', *wait([a], 20))
print('set', ev(SET, a))
print('wait_set', *wait([a], 20))
print('wait_auto_reset', *wait([a], 20))
r, _, m, _ = create(0, 0)
print('manual_set', ev(SET, m), *wait([m], 20), *wait([m], 20))
print('reset', ev(RESET, m), *wait([m], 20))
ev(SET, m)
print('wait_any', *wait([a, m], 20, 0))
print('wait_all', *wait([a, m], 20, 1))
r, off2, hw, _ = create(3)
print('create_hw_exception', r, hw >= 1 << 30, off2)
print('set_hw_exception', ev(SET, hw))
print('destroy', ev(DESTROY, a), ev(DESTROY, a))
print('wait_destroyed', wait([a], 20)[0])
EOF
python3 $T/ev.py >$T/ev 2>&1
sed 's/^/# /' $T/ev | grep -v '^# [a-z_]* [0-9]' | head -5
tap_check "CREATE_EVENT (signal): id 1 in slot 1, event page offset KFD_MMAP_TYPE_EVENTS" \
	has $T/ev create_signal "0 1 1 0x8000000000000000"
tap_check "the event page, mmapped through /dev/kfd: the slot is UNSIGNALED (all ones)" \
	has $T/ev slot_unsignaled ffffffffffffffff
tap_check "WAIT_EVENTS on an unsignalled event: result TIMEOUT after its 20 ms" \
	has $T/ev wait_timeout "0 1"
tap_check "SET_EVENT, then WAIT_EVENTS: COMPLETE; auto-reset: the next wait times out" \
	eval 'has $T/ev set 0 && has $T/ev wait_set "0 0" && has $T/ev wait_auto_reset "0 1"'
tap_check "a manual-reset event stays set until RESET_EVENT" \
	eval 'has $T/ev manual_set "0 0 0 0 0" && has $T/ev reset "0 0 1"'
tap_check "WAIT_EVENTS any: one set is enough; all: not" \
	eval 'has $T/ev wait_any "0 0" && has $T/ev wait_all "0 1"'
tap_check "CREATE_EVENT (HW exception): an id from 2^30, no slot; SET_EVENT on it: EINVAL" \
	eval 'has $T/ev create_hw_exception "0 True 0" && has $T/ev set_hw_exception 22'
tap_check "DESTROY_EVENT, twice: EINVAL the second time; waiting on it: EINVAL" \
	eval 'has $T/ev destroy "0 22" && has $T/ev wait_destroyed 22'
tap_check "the event client's process is gone" wait_for 5 ks_idle

# --- stage 4: gpreempt on ROCr's queues ---------------------------------------
# LC: 40 requests of one dispatch of 8 workgroups x 2 ms, one every 20 ms
# on average; BE: dispatches of 8 workgroups x 20 ms, 2 in flight.  Both at
# ROCr's priority (NORMAL: KFD 7); LC's cgroup has the rule "high" (12).
# stage4 GPREEMPT_ARGS: the whole stage with gpreempt loaded with these.
stage4() {
	CG=/sys/fs/cgroup/rocr-lc
	# shellcheck disable=SC2086
	tap_check "insmod gpreempt $1" insmod $OBJ/module/gpreempt.ko $1
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	mkdir -p $CG
	tap_check "gpreemptctl set cgroup $CG high" $CTL set cgroup $CG high
	snapshot
	rm -f $T/stop $T/release
	$ROCR be 8 20000000 2 $T/stop >$T/be 2>&1 &
	be=$!
	tap_check "BE (ROCr, root cgroup): its queue runs packets" wait_for 30 grep -qx be_ready $T/be
	ROCR_CLIENT_HOLD=$T/release sh -c "echo \$\$ > $CG/cgroup.procs && exec $ROCR lc 40 8 2000000 20000" \
		>$T/lc 2>&1 &
	lc=$!
	tap_check "LC (ROCr, in $CG): started" wait_for 30 grep -qx lc_ready $T/lc
	# ROCr's queues as gpreempt has them: tgid qid priority source kfd_priority
	rocr_queues() {
		$CTL --json status 2>/dev/null |
			jq -r --argjson t "$1" '.queues[] | select(.tgid == $t) | "\(.qid) \(.priority) \(.source) \(.kfd_priority)"' |
			sort
	}
	two_queues() {	# two_queues TGID PRIO SOURCE: both of its queues at PRIO from SOURCE, KFD's 7
		local q
		q=$(rocr_queues "$1")
		[ "$(printf '%s\n' "$q" | grep -c " $2 $3 7$")" = 2 ] || { echo "$q"; return 1; }
	}
	tap_check "gpreempt sees both of LC's queues (ROCr's own and the client's) at 12 from the cgroup rule" \
		wait_for 10 two_queues $lc 12 cgroup
	tap_check "gpreempt sees both of BE's queues at ROCr's KFD priority 7" \
		wait_for 10 two_queues $be 7 kfd
	tap_diag "gpreempt's queues: $($CTL --json status | jq -c '[.queues[] | {tgid, qid, priority, source, state, ptr_path, rptr, wptr}]')"
	tap_diag "kfdsim's queues: $(awk '{print $2, $3, $4, $10, $11, $12, $14}' $DBG/queues | tr '\n' ';')"
	tap_check "LC: its 40 requests done" wait_for 120 grep -qx lc_done $T/lc
	lc_ms=$(field $T/lc lat_p99)
	pre=$(psum $be preempts)
	res=$(psum $be resumes)
	# LC still holds its two queues, idle: BE must run again.
	tap_check "BE (both queues) runs again while LC's idle queues remain" wait_for 10 all_running $be
	tap_check "LC's two queues are still there, idle" two_queues $lc 12 cgroup
	touch $T/release
	wait $lc
	lc_rc=$?
	touch $T/stop
	wait $be
	be_rc=$?
	show_err $T/lc
	show_err $T/be
	be_cycled "$pre" "$res"
	tap_check "LC: every ROCr call succeeded, 40 requests, each signal 0 exactly once" \
		eval 'test $lc_rc = 0 && has $T/lc lc_requests 40 && has $T/lc signals_zero 40/40'
	be_n=$(field $T/be be_completed)
	tap_check "BE: every ROCr call succeeded, each of its $be_n signals 0 exactly once" \
		eval 'test $be_rc = 0 && test "${be_n:-0}" -gt 0 && has $T/be signals_zero "$be_n/$be_n"'
	tap_diag "LC latency (simulation numbers; a request alone is one round of 2 ms workgroups): p50 $(field $T/lc lat_p50) us, p99 $lc_ms us, max $(field $T/lc lat_max) us; BE completed $be_n dispatches; gpreempt: $(gstat preempts) parks, $(gstat resumes) unparks"
	tap_check "the ROCr processes are gone, from kfdsim and gpreempt" \
		eval 'wait_for 10 ks_idle && wait_for 5 eval "[ \"\$(gstat queues)\" = 0 ]"'
	tap_diag "KFD ioctls of ROCr (LC + BE under gpreempt): $(deltas)"
	tap_check "LC + BE: 4 CREATE_QUEUE, 4 DESTROY_QUEUE" \
		test "$(delta CREATE_QUEUE) $(delta DESTROY_QUEUE)" = "4 4"
	$CTL unset cgroup $CG
	rmdir $CG
	tap_check "rmmod gpreempt" rmmod gpreempt
}
# The default backend, then evict (6.1's only one; parks whole processes,
# and ROCr keeps an idle queue of its own in each: it must go along).
# GP_ROCR_GPREEMPT_ARGS: module parameters for a by-hand run.
stage4 "${GP_ROCR_GPREEMPT_ARGS:-}"
[ -n "${GP_ROCR_GPREEMPT_ARGS:-}" ] || stage4 backend=evict

# --- shrink on a mask ROCr set (issue 19) ---------------------------------------
# BE's client sets a 6-CU mask through hsa_amd_queue_cu_set_mask (SET_CU_MASK);
# with shrink_pct=50 gpreempt shrinks that queue to 3 of them while LC has
# work, then gives it exactly ROCr's mask back, and again at rmmod.
if [ -z "${GP_ROCR_GPREEMPT_ARGS:-}" ]; then
	CG=/sys/fs/cgroup/rocr-lc
	# bq: kfdsim's line of BE's queue that runs packets (ROCr's mask is on it)
	bq() { grep " pasid=$bpasid " $DBG/queues | grep -v ' packets=0 ' | head -n 1; }
	bfield() { linefield "$(bq)" "$1"; }
	be_cus_is() { [ "$(bfield cu_mask_cus)" = "$1" ]; }
	be_mask_is() { [ "$(bfield se_mask)" = "$1" ]; }
	be_shrunk() {
		$CTL --json status | jq -e --argjson t "$be" \
			'[.queues[] | select(.tgid == $t) | .state] | index("shrunk")' >/dev/null
	}
	tap_check "insmod gpreempt shrink_pct=50 hysteresis_us=200000" \
		insmod $OBJ/module/gpreempt.ko shrink_pct=50 hysteresis_us=200000
	mkdir -p $CG
	$CTL set cgroup $CG high >/dev/null
	rm -f $T/stop $T/release
	ROCR_CLIENT_CUS=6 $ROCR be 8 20000000 2 $T/stop >$T/be 2>&1 &
	be=$!
	wait_for 30 grep -qx be_ready $T/be
	bpasid=$($CTL --json status | jq -r --argjson t $be '[.queues[] | select(.tgid == $t)][0].pasid')
	tap_check "shrink: ROCr set BE's mask: 6 CUs (kfdsim)" wait_for 10 be_cus_is 6
	rocr_mask=$(bfield se_mask)
	# 200 requests every 20 ms: BE stays shrunk for about 4 s, longer than
	# two polls of status take in a loaded memory-debugging guest.
	ROCR_CLIENT_HOLD=$T/release sh -c "echo \$\$ > $CG/cgroup.procs && exec $ROCR lc 200 8 2000000 20000" \
		>$T/lc 2>&1 &
	lc=$!
	tap_check "shrink: BE's queue keeps 3 of ROCr's 6 CUs while LC has work" wait_for 30 be_cus_is 3
	tap_check "shrink: BE's state is shrunk" wait_for 10 be_shrunk
	tap_check "shrink: LC's 200 requests done" wait_for 120 grep -qx lc_done $T/lc
	tap_check "shrink: LC idle, BE has exactly ROCr's mask back ($rocr_mask)" \
		wait_for 10 be_mask_is "$rocr_mask"
	touch $T/release
	wait $lc
	lc_rc=$?
	# Again, and unloaded while shrunk.
	rm -f $T/release
	sh -c "echo \$\$ > $CG/cgroup.procs && exec $ROCR lc 40 8 2000000 20000" >$T/lc2 2>&1 &
	lc2=$!
	tap_check "shrink: shrunk again under a second LC" wait_for 30 be_cus_is 3
	tap_check "shrink: rmmod while shrunk" rmmod gpreempt
	tap_check "shrink: rmmod gave BE exactly ROCr's mask back" be_mask_is "$rocr_mask"
	wait $lc2
	lc2_rc=$?
	touch $T/stop
	wait $be
	be_rc=$?
	be_n=$(field $T/be be_completed)
	tap_check "shrink: LC and BE: every ROCr call succeeded, each signal 0 exactly once" \
		eval 'test $lc_rc = 0 -a $lc2_rc = 0 && has $T/lc signals_zero 200/200 &&
		      has $T/lc2 signals_zero 40/40 && has $T/be signals_zero "$be_n/$be_n"'
	$CTL unset cgroup $CG 2>/dev/null
	rmdir $CG
fi

tap_diag "KFD ioctls since kfdsim was loaded (all of the above): $(tr '\n' ' ' <$DBG/kfd_ioctls)"
tap_check "rmmod kfdsim" eval 'wait_for 5 ks_idle && rmmod kfdsim'
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
