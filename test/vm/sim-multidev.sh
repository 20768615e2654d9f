#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreempt on a two-device kfdsim (ndev=2: two kfd_nodes, each with its own
# dqm, command processor, CUs and CWSR; one pdd per device per process).
# The hardware arbitrates per device, and so must gpreempt (issue 8,
# target 0):
#   1. LC on device 0 never parks BE on device 1 (and LC on device 1 does);
#   2. a BE process with a queue on each device is parked only where LC
#      runs: its queue on the other device keeps running and progressing
#      (both backends: suspend, and evict through that pdd's qpd);
#   3. an HWS hang on device 0 leaves device 1 managed (parks go on there).
# Every packet must complete exactly once (gpload's exit status).  Runs
# inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
backends="suspend evict"
tap_plan $((2 + 11 * $(wc -w <<<"$backends") + 4 + 9 + 1))	# 11 lines a backend, 9 for 20 devices
GPLOAD=build/gpload
LC_ARGS="--mode lc --prio 12 --wg 4 --wg-us 200 --period-us 1000"
BE_ARGS="--mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4"
KSQ=/sys/kernel/debug/kfdsim/queues

qfield() {	# tgid qid field -> value from gp_queues
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" --argjson q "$2" \
			"[.[].formatted.value | select(.tgid == \$t and .qid == \$q)][0].$3 // empty"
}
qfields() {	# tgid -> "qid state preempts pasid" lines, one map dump
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" '.[].formatted.value | select(.tgid == $t) |
			"\(.qid) \(.state) \(.preempts) \(.pasid)"'
}
ksline() {	# tgid qid -> kfdsim's line of that queue
	local pasid
	pasid=$(qfield "$1" "$2" pasid)
	[ -n "$pasid" ] && grep "^queue pasid=$pasid qid=$2 " $KSQ | head -n 1
}
ksfield() {	# tgid qid field -> value from kfdsim's line
	ksline "$1" "$2" | tr ' ' '\n' | sed -n "s/^$3=//p"
}
state_is() { [ "$(qfield "$1" "$2" state)" = "$3" ]; }
on_dev() { [ "$(ksfield "$1" "$2" dev)" = "$3" ]; }
ks_idle() { grep -q '^queues 0' /sys/kernel/debug/kfdsim/stats && grep -q '^processes 0' /sys/kernel/debug/kfdsim/stats; }
load() {	# kfdsim args | gpreempt args
	insmod test/kfdsim/kfdsim.ko "ndev=2 $1" && insmod module/gpreempt.ko user_max_priority=15 $2
}
unload() {
	rmmod gpreempt 2>/dev/null
	wait_for 30 ks_idle
	rmmod kfdsim
}
stop() {	# pids: SIGTERM (drain + verify); 0 if all completed exactly once
	local p rc=0

	kill -TERM "$@" 2>/dev/null
	for p in "$@"; do wait "$p" || rc=1; done
	return $rc
}
dmesg -C

# 0. kfdsim: a queue goes on the device it asks for; an unknown one is refused.
load "" ""
$GPLOAD $BE_ARGS --gpu 64 --duration 1 --quiet 2>/dev/null
tap_check "gpload: --gpu 64 is refused (usage)" test $? -eq 2
$GPLOAD $BE_ARGS --gpu 2 --duration 1 --quiet 2>/dev/null
tap_check "kfdsim ndev=2: a queue on device 2 is refused" test $? -eq 1
unload

for backend in $backends; do
	# 1. LC on device 0 never parks BE on device 1.
	load "" "backend=$backend max_suspend_ms=60000"
	$GPLOAD $BE_ARGS --gpu 1 --duration 600 --quiet &
	be=$!
	wait_for 30 state_is $be 0 0
	tap_check "$backend: BE's queue is on device 1" on_dev $be 0 1
	$GPLOAD $LC_ARGS --gpu 0 --duration 3 --json /tmp/lc.json --quiet
	lc_rc=$?
	pre=$(qfield $be 0 preempts)
	tap_check "$backend: LC on device 0 never parks BE on device 1 (preempts ${pre:-none})" \
		test "$pre" = 0
	# The same BE is parked by LC on its own device: the check above can fail.
	$GPLOAD $LC_ARGS --gpu 1 --duration 600 --quiet &
	lc=$!
	tap_check "$backend: LC on device 1 parks it" wait_for 60 state_is $be 0 2
	stop $lc
	lc1_rc=$?
	tap_check "$backend: BE on device 1 resumes after LC" wait_for 30 state_is $be 0 0
	stop $be
	tap_check "$backend: one-device LC/BE: exactly once" \
		test $? -eq 0 -a $lc_rc -eq 0 -a $lc1_rc -eq 0
	unload

	# 2. A BE process on both devices is parked only where LC runs.
	load "" "backend=$backend max_suspend_ms=60000"
	$GPLOAD $BE_ARGS --queues 2 --gpu 0,1 --duration 600 --json /tmp/be.json --quiet &
	be=$!
	wait_for 30 state_is $be 1 0
	tap_check "$backend: BE's queues are on devices 0 and 1" \
		eval "on_dev $be 0 0 && on_dev $be 1 1"
	$GPLOAD $LC_ARGS --gpu 0 --duration 600 --quiet &
	lc=$!
	if wait_for 60 state_is $be 0 2; then
		tap_ok "$backend: BE's queue on LC's device 0 is parked"
	else
		tap_not_ok "$backend: BE's queue on LC's device 0 is parked (state $(qfield $be 0 state))"
	fi
	# While LC runs: device 1's queue is never parked and keeps completing.
	pasid=$(qfield $be 1 pasid)
	p0=$(ksfield $be 1 packets)
	run=0 parked0=0 samples=0 pre1=
	for i in $(seq 10); do
		samples=$((samples + 1))
		grep -q "^queue pasid=$pasid qid=1 .*active=1 evicted=0 suspended=0" $KSQ &&
			run=$((run + 1))
		f=$(qfields $be)
		echo "$f" | grep -q '^0 2 ' && parked0=$((parked0 + 1))
		pre1=$(echo "$f" | awk '$1 == 1 { print $3 }')
		sleep 0.2
	done
	p1=$(ksfield $be 1 packets)
	if [ "$run" -eq "$samples" ] && [ "$pre1" = 0 ]; then
		tap_ok "$backend: BE's queue on device 1 keeps running ($run/$samples samples active)"
	else
		tap_not_ok "$backend: BE's queue on device 1 keeps running ($run/$samples samples active, preempts ${pre1:-none}: $(ksline $be 1))"
	fi
	if [ -n "$p0" ] && [ "${p1:-0}" -gt "$p0" ]; then
		tap_ok "$backend: BE's queue on device 1 progresses while device 0's is parked ($p0 -> $p1 packets; parked in $parked0/$samples samples)"
	else
		tap_not_ok "$backend: BE's queue on device 1 progresses while device 0's is parked (${p0:-?} -> ${p1:-?} packets)"
	fi
	stop $lc
	lc_rc=$?
	tap_check "$backend: both BE queues run after LC" \
		wait_for 30 eval "state_is $be 0 0 && state_is $be 1 0"
	stop $be
	tap_check "$backend: two-device BE and LC: exactly once" test $? -eq 0 -a $lc_rc -eq 0
	unload
done

# 3. An HWS hang on device 0 leaves device 1 managed.
load "" "max_suspend_ms=60000"
echo Y > /sys/kernel/debug/kfdsim/dev0/hws_hang
$GPLOAD $BE_ARGS --gpu 0 --duration 600 --quiet &
be0=$!
$GPLOAD $BE_ARGS --gpu 1 --duration 600 --quiet &
be1=$!
wait_for 30 eval "state_is $be0 0 0 && state_is $be1 0 0"
$GPLOAD $LC_ARGS --gpu 0 --duration 600 --quiet &
lc0=$!
$GPLOAD $LC_ARGS --gpu 1 --duration 600 --quiet &
lc1=$!
if wait_for 60 state_is $be1 0 2; then
	tap_ok "HWS hang on device 0: BE on device 1 is still parked by LC there"
else
	tap_not_ok "HWS hang on device 0: BE on device 1 is still parked by LC there (state $(qfield $be1 0 state))"
fi
sleep 1
pre0=$(qfield $be0 0 preempts)
tap_check "HWS hang on device 0: BE there is left alone (preempts ${pre0:-none})" test "$pre0" = 0
echo N > /sys/kernel/debug/kfdsim/dev0/hws_hang
stop $lc0 $lc1
lc_rc=$?
tap_check "HWS hang: BE on device 1 resumes after LC" wait_for 30 state_is $be1 0 0
stop $be0 $be1
tap_check "HWS hang on one device: exactly once on both" test $? -eq 0 -a $lc_rc -eq 0
unload

# 4. S3 F17: more devices than gpreempt's old 16-entry tables (ndev=20,
#    the layout's kfd_process.pdds allowing).  One BE process with a queue
#    on each device, a higher-priority one likewise: with the evict backend gpreempt holds
#    an eviction of the BE process on all 20 devices at once (per-process
#    eviction slots; 16 gave -ENOSPC past the 16th).  The hold is 1 s so
#    that a pause of the high-priority load on a slow guest does not
#    restore BE on one device while the test counts the other 19.  Then
#    device 19's health: an evict that fails with -EIO there fences it
#    (parks refused for a back-off, logged), and parks resume after it.
ALL=$(seq -s, 0 19)
nparked() { bpftool -j map dump name gp_queues 2>/dev/null |
	jq --argjson t "$1" '[.[].formatted.value | select(.tgid == $t and .state == 2)] | length'; }
parked_is() { [ "$(nparked "$1")" = "$2" ]; }
if insmod test/kfdsim/kfdsim.ko ndev=20 2>/dev/null; then
	rmmod kfdsim
	load "ndev=20" "backend=evict max_suspend_ms=60000 hysteresis_us=1000000"
	$GPLOAD $BE_ARGS --queues 20 --gpu "$ALL" --duration 600 --quiet &
	be=$!
	# High priority on every device at once (gpload lc has one request out at a time).
	$GPLOAD --mode be --prio 12 --wg 8 --wg-us 2000 --inflight 2 --queues 20 --gpu "$ALL" \
		--duration 600 --quiet &
	lc=$!
	if wait_for 60 parked_is $be 20; then
		tap_ok "20 devices: BE evicted on all 20 at once (evictions held: $(gstat evicts_outstanding))"
	else
		tap_not_ok "20 devices: BE evicted on all 20 at once ($(nparked $be) parked, evictions held: $(gstat evicts_outstanding))"
	fi
	# Its own wait: the high-priority load can pause past the hysteresis
	# on a slow (memory-debugging) guest, and BE runs in the gap.
	tap_check "20 devices: BE's queue on device 19 is parked" wait_for 30 state_is $be 19 2
	stop $lc
	lc_rc=$?
	tap_check "20 devices: every BE queue runs again after LC" wait_for 60 parked_is $be 0
	# Device 19 alone: every evict fails with -EIO until a park is seen
	# refused.  LC sends a request every 50 ms with the default hold, so
	# BE is restored in each gap (restores go on while fenced) and each
	# request asks for a park again: one that comes inside a fence is
	# refused, one after it fails and fences the device again.
	echo 500 >/sys/module/gpreempt/parameters/hysteresis_us
	sk0=$(gstat skipped_reset)
	nf=$(dmesg | grep -c "preemption failed on a device (-5)")
	nr=$(dmesg | grep -c "device recovered")
	echo "EIO 1000 0" >/sys/kernel/debug/kfdsim/fault/evict_process_queues
	$GPLOAD --mode lc --prio 12 --wg 8 --wg-us 5000 --period-us 50000 --gpu 19 \
		--duration 600 --quiet &
	lc=$!
	if wait_for 30 eval '[ "$(dmesg | grep -c "preemption failed on a device (-5)")" -gt $nf ]'; then
		tap_ok "20 devices: -EIO on device 19 fences it (logged)"
	else
		tap_not_ok "20 devices: -EIO on device 19 fences it (no fence logged)"
	fi
	wait_for 60 eval '[ "$(gstat skipped_reset)" -gt "$sk0" ]'
	refused=$?
	echo off >/sys/kernel/debug/kfdsim/fault/evict_process_queues
	tap_check "20 devices: parks on device 19 refused while fenced (skipped_reset $sk0 -> $(gstat skipped_reset))" \
		test $refused -eq 0
	stop $lc
	lc19_rc=$?
	# Back to back: once the fence is over, BE stays parked.
	$GPLOAD --mode lc --prio 12 --wg 8 --wg-us 5000 --period-us 300 --gpu 19 \
		--duration 600 --quiet &
	lc=$!
	tap_check "20 devices: device 19 recovers, BE there parked again" \
		wait_for 60 eval '[ "$(dmesg | grep -c "device recovered")" -gt $nr ] && state_is $be 19 2'
	stop $lc
	lc19_rc=$((lc19_rc | $?))
	tap_check "20 devices: BE on device 19 resumes" wait_for 30 state_is $be 19 0
	stop $be
	tap_check "20 devices: exactly once" test $? -eq 0 -a $lc_rc -eq 0 -a $lc19_rc -eq 0
	tap_check "20 devices: no eviction held" test "$(gstat evicts_outstanding)" = 0
	unload
else
	tap_skip_n 9 "20 devices: every device's queues managed" "kfdsim has fewer than 20 devices on this layout (kfd_process.pdds)"
fi

tap_dmesg_clean "multi-device"
tap_done
