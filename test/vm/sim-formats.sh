#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S5 S5-3, S5-4: what gpreempt cannot verify fails closed for the
# lower queue.  Beside a busy LC (an administrator's cgroup rule), two BEs
# of uid 65534:
# - one that dispatches through a PM4 compute queue (gpload --pm4; KFD's
#   KFD_IOC_QUEUE_TYPE_COMPUTE, open to any user): its pointers are not
#   dispatch ids, so it is unknown work and is parked like any BE;
# - one that maps a readable page of zeros over its dispatch ids after
#   creation (gpload --forge-ids; both ids read 0, "idle") while its work
#   goes on through a second view of the same memory, which the simulated
#   GPU keeps (as the GPU VM keeps the BO): gpreempt reads the ids only
#   from the pages they had at creation, so the queue shows as moved
#   (unknown) and is parked.
# Every packet of both still completes exactly once.  An honest BE whose
# ids are in a VM_PFNMAP buffer (--pfnmap, a TTM-mmapped BO) is shown in
# diagnostics: still read (use_mm) and parked.  Runs inside the test guest.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 3
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
CG=/sys/fs/cgroup
T=$(mktemp -d)
NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
BE="--wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet"

mountpoint -q $CG || mount -t cgroup2 none $CG
mkdir -p $CG/gp-lc
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "formats: kfdsim loads"; tap_bail; }
chmod 0666 /dev/kfdsim
gp_insmod || { tap_not_ok "formats: gpreempt loads"; rmmod kfdsim; tap_bail; }
$CTL set cgroup $CG/gp-lc high >/dev/null
chmod 0711 "$T"
install -m 0666 /dev/null "$T/pm4.json"
install -m 0666 /dev/null "$T/forge.json"

sh -c "echo \$\$ > $CG/gp-lc/cgroup.procs && exec $GPLOAD lc --wg 4 --wg-us 1000 \
	--period-us 20000 --duration 60 --quiet --json $T/lc.json" &
lc=$!
$NOBODY $GPLOAD be --pm4 $BE --json "$T/pm4.json" &
pm4=$!
$NOBODY $GPLOAD be --forge-ids $BE --json "$T/forge.json" &
forge=$!
$GPLOAD be --pfnmap $BE --json "$T/pfn.json" &
pfn=$!
# Long enough for many LC periods: each one parks every BE below it.
wait_for 20 eval '[ "$(qfield $pfn preempts)" -gt 3 ] 2>/dev/null'
sleep 2
pp=$(qfield $pm4 preempts) fp=$(qfield $forge preempts) xp=$(qfield $pfn preempts)
fpath=$(qfield $forge ptr_path) ppath=$(qfield $pm4 ptr_path) xpath=$(qfield $pfn ptr_path)
tap_diag "parks: PM4 BE ${pp:-none} (ptr_path $ppath), forged-ids BE ${fp:-none} (ptr_path $fpath, pending $(qfield $forge pending)), PFN-mapped BE ${xp:-none} (ptr_path $xpath)"
tap_diag "PFN-mapped BE: $(bpftool -j map dump name gp_queues | jq -c --argjson t $pfn '[.[].formatted.value | select(.tgid == $t)][0] | {ptr_path, pending, rptr, wptr, state}')"
tap_diag "gp_stats: parks $(gstat preempts), resumes $(gstat resumes), ticks $(gstat ticks)"
kill -TERM $lc $pm4 $forge $pfn
wait $lc
lrc=$?
wait $pm4
prc=$?
wait $forge
frc=$?
wait $pfn
xrc=$?
tap_diag "exit: LC $lrc, PM4 BE $prc, forged-ids BE $frc, PFN-mapped BE $xrc"
tap_check "S5-3: a PM4 BE below a busy LC is parked (parks ${pp:-none}), every packet once" \
	test "${pp:-0}" -gt 0 -a $prc = 0 -a "$(jq -r .lost "$T/pm4.json")" = 0
tap_check "S5-4: ids forged by a page of zeros show as moved (ptr_path ${fpath:-none})" \
	test "$fpath" = 5
tap_check "S5-4: the forged-ids BE below a busy LC is parked (parks ${fp:-none}), every packet once" \
	test "${fp:-0}" -gt 0 -a $frc = 0 -a "$(jq -r .lost "$T/forge.json")" = 0
sim_unload
tap_done
