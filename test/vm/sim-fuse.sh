#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F6: nothing a user maps can stop the monitor.  An unprivileged
# process (uid 65534) maps a file of a FUSE mount that never answers reads
# over the CPU page holding its queue's dispatch ids.  The GPU's view is
# unchanged (kfdsim keeps its pinned page, as the GPU VM keeps the BO).  The
# monitor must keep ticking, keep parking and resuming a BE queue for an LC
# process (made LC by an administrator's cgroup rule), show the hostile
# queue as unknown (ptr_path none, not pending), and rmmod must return.  On
# the faulting read path (a06be8c) the monitor slept in fuse_read_folio,
# its ticks stopped and rmmod blocked.  REVIEW-S4 S4-12: unknown fails
# closed: the hostile queue, below the busy LC, is parked (it was left
# running as "not pending"), without a read ever reaching the FUSE page;
# and a BE of uid 65534 that makes its dispatch ids' page PROT_NONE after
# creation (gpload --hide-ids) while its work goes on through another view
# is parked for the LC too, and its work still completes exactly once.
# Runs inside the test guest.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 13
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
STALL=build/fuse-stall
CG=/sys/fs/cgroup
MNT=/tmp/fuse-stall
T=$(mktemp -d)
stalled() { grep -q 'read stalled' "$T/fuse.out"; }
remapped() { grep -q remapped "$T/evil.out"; }
gone() { ! kill -0 "$1" 2>/dev/null; }

dmesg -C
modprobe -d "${GP_KROOT:-/}" fuse 2>/dev/null || modprobe fuse 2>/dev/null
mountpoint -q $CG || mount -t cgroup2 none $CG
mkdir -p $MNT $CG/gp-lc
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F6: kfdsim loads"; tap_bail; }
chmod 0666 /dev/kfdsim
insmod "$OBJ/module/gpreempt.ko" || { tap_not_ok "F6: gpreempt loads"; rmmod kfdsim; tap_bail; }
$CTL set cgroup $CG/gp-lc high >/dev/null

$STALL --user 65534 $MNT >"$T/fuse.out" 2>&1 &
fuse=$!
wait_for 10 grep -q ready "$T/fuse.out"
tap_check "F6: an unprivileged FUSE server is mounted" grep -q ready "$T/fuse.out"

# BE (ROCr's priority 7, no rule) and LC (the administrator's cgroup rule).
$GPLOAD be --wg 8 --wg-us 2000 --inflight 4 --duration 120 --quiet --json "$T/be.json" &
be=$!
sh -c "echo \$\$ > $CG/gp-lc/cgroup.procs && exec $GPLOAD lc --wg 4 --wg-us 1000 \
	--period-us 20000 --duration 120 --quiet --json $T/lc.json" &
lc=$!
# The hostile process: a queue with work queued, then the FUSE file over its ids.
setpriv --reuid 65534 --regid 65534 --clear-groups \
	$GPLOAD idle --queues 1 --duration 120 --remap-ids $MNT/f >"$T/evil.out" 2>&1 &
evil=$!
# A BE whose dispatch ids are unreadable on the CPU from creation on.
chmod 0711 "$T"
install -m 0666 /dev/null "$T/hid.json"
setpriv --reuid 65534 --regid 65534 --clear-groups \
	$GPLOAD be --hide-ids --wg 8 --wg-us 2000 --inflight 4 --duration 120 --quiet \
	--json "$T/hid.json" &
hid=$!
wait_for 20 remapped
tap_check "F6: uid 65534 mapped the FUSE file over its queue's dispatch ids" remapped
sleep 1
p1=$(gstat preempts) r1=$(gstat resumes) t1=$(gstat ticks)
sleep 3
# One snapshot of gp_stats: counters read one by one move in between (CI saw
# lc_preempts, read last, above the park/unpark total read before it).
read -r p2 r2 t2 lp < <(bpftool -j map dump name gp_stats |
	jq -r '.[0].formatted.value | "\(.preempts) \(.resumes) \(.ticks) \(.lc_preempts)"')
tap_diag "ticks $t1 -> $t2, parks $p1 -> $p2, resumes $r1 -> $r2 in 3 s; fuse: $(tr '\n' ' ' <"$T/fuse.out")"
tap_diag "hostile queue: ptr_path $(qfield "$evil" ptr_path) pending $(qfield "$evil" pending)"
tap_check "F6: the monitor keeps ticking" test "$t2" -gt "$t1"
tap_check "F6: BE is still parked and resumed for LC" \
	test "$p2" -gt "$p1" -a "$r2" -gt "$r1"
tap_diag "F21: $lp of $((p2 + r2)) park/unpark calls came while LC had work ($(( $(gstat lc_preempt_ns) / 1000 )) us)"
tap_check "F21: gp_stats.lc_preempts counts parks made while LC had work" \
	test "$lp" -gt 0 -a "$lp" -le $((p2 + r2))
tap_check "F6: the hostile queue is unknown (ptr_path none, not pending)" \
	test "$(qfield "$evil" ptr_path)" = 0 -a "$(qfield "$evil" pending)" = 0
ep=$(qfield "$evil" preempts) hp=$(qfield "$hid" preempts)
tap_diag "S4-12: parks of the FUSE-mapped queue $ep, of the PROT_NONE-ids BE $hp (ptr_path $(qfield "$hid" ptr_path), state $(qfield "$hid" state))"
tap_check "S4-12: the queue with FUSE-mapped ids is parked for LC (parks ${ep:-none})" \
	test "${ep:-0}" -gt 0
tap_check "S4-12: the BE whose ids page is PROT_NONE is parked for LC (parks ${hp:-none})" \
	test "${hp:-0}" -gt 0
tap_check "F6: nothing ever faulted the FUSE page (no read reached the server)" \
	bash -c "! grep -q 'read stalled' '$T/fuse.out'"

kill -TERM $lc $be $hid
wait $lc
lrc=$?
wait $be
brc=$?
wait $hid
hrc=$?
tap_check "F6: LC and BE: every packet ran exactly once" test $lrc = 0 -a $brc = 0
tap_check "S4-12: the PROT_NONE-ids BE: every packet ran exactly once (exit $hrc)" \
	test $hrc = 0 -a "$(jq -r .lost "$T/hid.json")" = 0
rmmod gpreempt &
rm_pid=$!
if wait_for 30 gone $rm_pid; then
	wait $rm_pid
	tap_check "F6: rmmod gpreempt returns" test $? = 0
else
	tap_not_ok "F6: rmmod gpreempt returns # still blocked after 30 s"
fi
# Ending the FUSE server aborts any stalled read, so a wedged run ends too.
kill -TERM $fuse $evil 2>/dev/null
wait $fuse $evil 2>/dev/null
wait $rm_pid 2>/dev/null
umount -l $MNT 2>/dev/null
rmdir $CG/gp-lc 2>/dev/null
rmmod kfdsim
tap_dmesg_clean "F6: kernel log clean"
rm -rf "$T"
tap_done
