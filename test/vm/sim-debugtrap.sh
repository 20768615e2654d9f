#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S5 S5-1 and S5-2: a process (uid 65534) undoes or escapes its own
# park through KFD's debugger paths and its queue layout.
#  - efault: parked by its queue's is_suspended flag under a busy LC, the BE
#    calls DBG_TRAP_ENABLE on itself with an unmapped runtime-info address:
#    KFD resumes every suspended queue of the process, then fails with
#    EFAULT (6.12 kfd_debug.c:817-827, :595).  gpreempt must find its park
#    undone at its next ticks, count it (gp_stats.suspend_lost) and park the
#    BE again, by eviction (which KFD's debugger paths never undo).  Before,
#    KFD ran the BE beside the LC while gp_queues said suspended.
#  - flip: the same with an enable and a disable back to back (one p->mutex
#    hold in kfdsim: no tick between them; the disable resumes every queue,
#    kfd_debug.c:667-677).
#  - idle queue: a BE parked by process (debugged; then backend=evict) keeps
#    one idle queue at KFD priority 7 above its working queue at 3.  Its
#    process must be parked all the same.  Before, the idle queue kept the
#    working queue running for ever (no park at all).
# Every wait polls for a state; no wall-clock time is asserted.  Runs inside
# the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 22	# escape: 6 lines each, idle: 4 each
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
P=/sys/module/gpreempt/parameters
LAYOUT=$OBJ/build/gp_layout.h
T=$(mktemp -d)
chmod 0711 "$T"
have() { grep -q "^#define GP_HAVE_$1 1\$" "$LAYOUT"; }
# kq PASID PRIO KEY: a field of kfdsim's line for that process's queue at PRIO.
kq() { linefield "$(grep "^queue pasid=$1 .* prio=$2 " /sys/kernel/debug/kfdsim/queues | head -1)" "$3"; }
# gq TGID PRIO FIELD: a gp_queues field of that process's queue at KFD PRIO.
gq() {
	bpftool -j map dump name gp_queues 2>/dev/null |
		jq -r --argjson t "$1" --argjson p "$2" \
			"[.[].formatted.value | select(.tgid == \$t and .kfd_priority == \$p)][0].$3 // empty"
}
# BE's queue at prio 3 parked by its flag (gpreempt and kfdsim agree).
suspend_parked() { [ "$(gq "$1" 3 state)" = 2 ] && [ "$(kq "$2" 3 suspended)" = 1 ] && [ "$(kq "$2" 3 active)" = 0 ]; }
off_hw() { [ "$(kq "$1" 3 active)" = 0 ]; }
evicted() { [ "$(kq "$1" 3 evicted)" = 1 ] && [ "$(kq "$1" 3 active)" = 0 ]; }
pasid_of() { wait_for 20 eval '[ -n "$(qf '"$1"' pasid)" ]'; qf "$1" pasid; }
be_start() {
	setpriv --reuid 65534 --regid 65534 --clear-groups $GPLOAD be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 300 "$@" \
		>"$T/be.out" 2>&1 &
	be=$!
	pasid=$(pasid_of $be)
}

if ! have kfd_dbg_trap_disable || ! have queue_properties__is_suspended; then
	tap_skip "S5-1: debug trap escapes" "no debugger API or queue suspend in this KFD"
	tap_skip_rest "no debugger API or queue suspend in this KFD"
	tap_done
	exit
fi
dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "kfdsim loads"; tap_bail; }
# The starvation guard at 60 s: its slices are not what this is about.
# LC at KFD priority 12 ranks at 12 (user_max_priority: no user cap).
gp_insmod backend=suspend max_suspend_ms=60000 user_max_priority=15 ||
	{ tap_not_ok "gpreempt loads"; rmmod kfdsim; tap_bail; }
# LC: a backlog of 8 dispatches of 50 ms, busy throughout (root, prio 12)
# while its own process waits for a CPU in a loaded guest.  Its CU mask
# leaves CUs 4-7 (of kfdsim's 8) to the BE: a BE back on the hardware
# completes work there, which a BE on all CUs behind LC's backlog never
# would (kfdsim gives a free CU to the highest priority first).
lc_start() {
	$GPLOAD be --prio 12 --wg 8 --wg-us 50000 --inflight 8 --cu-mask 0-3 --duration 300 --quiet &
	lc=$!
}
# lc_packets_ge N: LC's queue has completed at least N packets.
lc_packets_ge() { [ "$(kq "$(qf $lc pasid)" 12 packets)" -ge "$1" ] 2>/dev/null; }
# LC first (BE is then unparked and drains), then BE: each packet exactly once.
both_stop() {
	local name=$1 lrc
	kill -TERM $lc
	wait $lc
	lrc=$?
	stop_be $be
	tap_check "$name: LC's and BE's packets completed exactly once ($lrc, $be_rc)" \
		test "$lrc" = 0 -a "$be_rc" = 0
}

# escape NAME: a BE parked by suspend undoes its park with --dbg-escape NAME.
escape() {
	local name=$1 l0 p0 p1 lost lp0
	lc_start
	be_start --dbg-escape "$name"
	tap_check "S5-1 $name: BE (uid 65534) parked by its queue's flag under LC" \
		wait_for 30 suspended_parked_be
	l0=$(gstat suspend_lost)
	kill -USR2 $be
	wait_for 10 grep -q "dbg-escape $name:" "$T/be.out"
	tap_diag "$name: $(grep "dbg-escape" "$T/be.out")"
	# Within a few ticks KFD's resume is found and the BE parked again.
	ticks_pass 30
	tap_check "S5-1 $name: BE off the hardware again after its own resume" off_hw $pasid
	tap_check "S5-1 $name: ... parked by eviction (the debugger's paths cannot undo it)" \
		evicted $pasid
	lost=$(gstat suspend_lost)
	tap_check "S5-1 $name: the undone park counted (suspend_lost ${l0:-none} -> ${lost:-none})" \
		test "${lost:-0}" -gt "${l0:-0}"
	# Over 50 scans with LC busy, and while LC completes 4 packets, the BE
	# completes nothing (on its CUs it would complete some in that time).
	p0=$(kq $pasid 3 packets)
	lp0=$(kq "$(qf $lc pasid)" 12 packets)
	ticks_pass 50
	wait_for 60 lc_packets_ge $((${lp0:-0} + 4))
	p1=$(kq $pasid 3 packets)
	tap_check "S5-1 $name: BE completes no work beside LC afterwards (packets $p0 -> $p1, LC's ${lp0:-none} -> $(kq "$(qf $lc pasid)" 12 packets))" \
		test "$p0" = "$p1"
	tap_diag "$name: kfdsim: $(grep "^queue pasid=$pasid " /sys/kernel/debug/kfdsim/queues | cut -d' ' -f2-8)"
	both_stop "S5-1 $name"
}
suspended_parked_be() { suspend_parked $be $pasid; }
escape efault
escape flip

# idle NAME ARGS: a BE with an idle queue at 7 above its working queue at 3.
idle() {
	local name=$1 r0 r1
	shift
	lc_start
	be_start --idle-queue-prio 7 "$@"
	tap_check "S5-2 $name: BE's working queue parked by eviction under LC, its idle queue at 7 along" \
		wait_for 20 evicted $pasid
	# Parked once, it stays parked while LC is busy: no unpark in 50 scans.
	r0=$(gq $be 3 resumes)
	ticks_pass 50
	r1=$(gq $be 3 resumes)
	tap_check "S5-2 $name: BE's process stays parked while LC is busy (unparks ${r0:-none} -> ${r1:-none} over 50 scans)" \
		test -n "$r0" -a "$r0" = "$r1"
	tap_check "S5-2 $name: ... and off the hardware" evicted $pasid
	tap_diag "$name: kfdsim: $(grep "^queue pasid=$pasid " /sys/kernel/debug/kfdsim/queues | cut -d' ' -f2-8 | tr '\n' ' ')"
	both_stop "S5-2 $name"
}
idle debugged --debug
echo evict >$P/backend
idle backend=evict

tap_check "every eviction balanced" wait_for 30 refs_zero
sim_unload
tap_dmesg_clean "S5-1/S5-2: kernel log clean"
rm -rf "$T"
tap_done
