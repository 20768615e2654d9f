#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The limits on the queues whose dispatch ids gpreempt reads, and what it
# does past them.  The limit is per device (KFD's own is per device) and per
# user (max_user_queues), so one user's queues on one GPU never decide how
# another GPU's queues, or another user's, are managed.  A queue past a
# limit is still managed: its ids are not read, so it is unknown work,
# parked below a busy level like an unreadable one (fails closed for the
# lower queue), and counted in gp_stats.queues_over_limit.
#
# test_max_queues lowers the per-device limit to 3 so that a few queues
# reach it, and makes the monitor's scan arrays start with 3 entries, so
# that every queue counted in gp_stats.queues (the tick's snapshot) shows
# them grown with the registry; it exists only in the GP_TESTING build
# (module/testing.c, build/testing/).  kfdsim has two devices.
. test/lib/tap.sh
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
. test/lib/sim.sh
tap_plan 11
CG=/sys/fs/cgroup
NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
BE="--wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet"
T=$(mktemp -d)
chmod 0711 "$T"
PARAM=/sys/module/gpreempt/parameters/max_user_queues

dmesg -C
mountpoint -q $CG || mount -t cgroup2 none $CG
mkdir -p $CG/gp-lc
insmod "$OBJ/test/kfdsim/kfdsim.ko" ndev=2 || { tap_not_ok "limits: kfdsim ndev=2 loads"; tap_bail; }
chmod 0666 /dev/kfdsim
if ! insmod "$OBJ/build/testing/module/gpreempt.ko" user_max_priority=15 test_max_queues=3; then
	tap_not_ok "limits: gpreempt loads"
	rmmod kfdsim
	tap_bail
fi

# 1. One process, four queues on device 0, limit 3: all four managed, the
# fourth past the limit (its ids not read), nothing left unmanaged.
$GPLOAD --mode lc --prio 12 --queues 4 --wg 2 --wg-us 200 --period-us 3000 --duration 60 \
	--gpu 0 --quiet &
pid=$!
ks_queues() { [ "$(kstat queues)" = 4 ]; }
wait_for 30 ks_queues
ticks_pass 2
queues=$(gstat queues) over=$(gstat queues_over_limit) untracked=$(gstat queues_untracked)
kill -TERM $pid
wait $pid
rc=$?
tap_check "limit 3 a device, 4 queues: 4 managed and scanned, 1 over the limit, none untracked (queues $queues, over $over, untracked $untracked)" \
	test "$queues.$over.$untracked" = 4.1.0
tap_check "dmesg names the queue past the limit" \
	bash -c 'dmesg | grep -q "past the limit of its device (3 queues)"'
tap_check "every packet ran exactly once" test "$rc" = 0
tap_check_fails "max_user_queues=0 is refused" sh -c "echo 0 > $PARAM"

# 2. A busy LC on device 1 (an administrator's cgroup rule), then user
# nobody fills device 0 with idle queues, then starts a BE on device 1.
$CTL set cgroup $CG/gp-lc high >/dev/null
sh -c "echo \$\$ > $CG/gp-lc/cgroup.procs && exec $GPLOAD lc --gpu 1 --wg 4 --wg-us 1000 \
	--period-us 20000 --duration 60 --quiet" &
lc=$!
$NOBODY $GPLOAD idle --queues 3 --gpu 0 --duration 60 --quiet &
idle=$!
ks_four() { [ "$(kstat queues)" = 4 ]; }
wait_for 30 ks_four
install -m 0666 /dev/null "$T/be1.json"
$NOBODY $GPLOAD be --gpu 1 $BE --json "$T/be1.json" &
be1=$!
wait_for 20 eval '[ "$(qfield $be1 preempts)" -gt 2 ] 2>/dev/null'
p1=$(qfield $be1 preempts) path1=$(qfield $be1 ptr_path)
tap_check "a BE on device 1 is managed, its ids read, though device 0 is full (ptr_path ${path1:-none})" \
	test "$path1" = 2
tap_check "and it is parked below the busy LC on device 1 (parks ${p1:-none})" \
	test "${p1:-0}" -gt 0

# 3. nobody now has 4 queues; max_user_queues 4: its next queue is past its
# user's limit (device 1 has room), still managed, parked below the LC.
echo 4 > $PARAM
install -m 0666 /dev/null "$T/be2.json"
$NOBODY $GPLOAD be --gpu 1 $BE --json "$T/be2.json" &
be2=$!
wait_for 20 eval '[ "$(qfield $be2 preempts)" -gt 2 ] 2>/dev/null'
p2=$(qfield $be2 preempts) path2=$(qfield $be2 ptr_path) lpath=$(qfield $lc ptr_path)
over=$(gstat queues_over_limit) scanned=$(gstat queues) kq=$(kstat queues)
tap_diag "over limit: $over; BE1 parks $(qfield $be1 preempts), BE2 parks ${p2:-none}, LC ptr_path ${lpath:-none}"
tap_check "a queue past its user's max_user_queues is unknown work (ptr_path ${path2:-none}, over $over), the LC's ids still read" \
	test "$path2.$over.$lpath" = 6.1.2
tap_check "and it is parked below the busy LC (parks ${p2:-none})" test "${p2:-0}" -gt 0
tap_check "the scan arrays grew from 3 entries: every queue scanned ($scanned of kfdsim's $kq)" \
	test "$scanned" = "$kq" -a "${kq:-0}" -ge 6
kill -TERM $lc $idle $be1 $be2
wait $lc $idle
wait $be1
r1=$?
wait $be2
r2=$?
tap_check "every packet of both BEs ran exactly once (exit $r1 $r2)" \
	test "$r1.$r2.$(jq -r .lost "$T/be1.json").$(jq -r .lost "$T/be2.json")" = 0.0.0.0
sim_unload
tap_dmesg_clean "limits: dmesg clean"
tap_done
