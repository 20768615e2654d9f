#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F20: kick storms.  Every UPDATE_QUEUE kicks the monitor; a
# process looping on it (any user can) used to make the monitor scan back to
# back, one full tick per ioctl.  Now a kick starts the next tick no sooner
# than tick_us after the last one began.  With tick_us=20000 and an update
# every millisecond, the ticks must stay well below the updates (counts, not
# times).  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
T=$(mktemp -d)

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F20: kfdsim loads"; exit 1; }
insmod "$OBJ/module/gpreempt.ko" idle_us=50000 tick_us=20000 ||
	{ tap_not_ok "F20: gpreempt loads"; rmmod kfdsim; exit 1; }
sleep 0.5
t1=$(gstat ticks)
$GPLOAD be --wg 1 --wg-us 100 --inflight 1 --update-ms 1 --duration 4 --quiet --json "$T/up.json"
rc=$?
t2=$(gstat ticks)
ups=$(jq -r .updates "$T/up.json")
tap_diag "F20: $ups UPDATE_QUEUE calls, $((t2 - t1)) ticks (tick_us 20000)"
tap_check "F20: the update loop ran (at least 400 updates)" test "$ups" -ge 400
tap_check "F20: ticks stay below half the kicks ($((t2 - t1)) ticks for $ups updates)" \
	test $((2 * (t2 - t1))) -lt "$ups"
tap_check "F20: every packet ran exactly once" test $rc = 0
tap_check "F20: rmmod gpreempt" rmmod gpreempt
for _ in $(seq 100); do ks_idle && break; sleep 0.1; done
rmmod kfdsim
tap_dmesg_clean "F20: kernel log clean"
rm -rf "$T"
tap_done
