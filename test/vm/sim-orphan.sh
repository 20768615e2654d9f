#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F13: gpreempt evicts a best-effort process on one device; the
# process then destroys its only queue there but keeps working on another
# device.  Nothing would unpark that eviction (no queue of it is left on
# the device), and the old code restored only when the whole process had no
# queue left: qpd->evicted stayed 1, so any queue it created there later was
# born evicted.  Now the eviction is restored once the device has no
# compute queue of the process.  Runs inside the test guest.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 6
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
refs_ge1() { [ "$(kstat evicted_refs)" -ge 1 ] 2>/dev/null; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" ndev=2 || { tap_not_ok "F13: kfdsim ndev=2 loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 backend=evict ||
	{ tap_not_ok "F13: gpreempt loads"; rmmod kfdsim; tap_bail; }
# BE: a queue on each device; its device-1 queue goes after 8 s (a loaded
# guest can take seconds to start each load: LC must be running by then).
$GPLOAD be --prio 3 --queues 2 --gpu 0,1 --wg 8 --wg-us 2000 --inflight 4 --duration 600 \
	--destroy-ms 8000 --quiet &
be=$!
# LC on device 1 only, for 12 s: BE is evicted there, and loses that queue meanwhile.
$GPLOAD lc --prio 12 --gpu 1 --wg 8 --wg-us 3000 --period-us 2000 --duration 12 --quiet &
lc=$!
tap_check "F13: BE evicted on device 1 for LC" wait_for 20 refs_ge1
wait $lc
lrc=$?
if wait_for 20 refs_zero; then
	tap_ok "F13: its queue there gone and LC done, the eviction is restored (evicted_refs 0)"
else
	tap_not_ok "F13: its queue there gone and LC done, the eviction is restored # evicted_refs $(kstat evicted_refs)"
fi
tap_check "F13: BE still runs on device 0" kill -0 $be
kill -TERM $be
wait $be
brc=$?
tap_check "F13: LC and BE's remaining queue ran every packet exactly once" test $lrc = 0 -a $brc = 0
tap_check "F13: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "F13: kernel log clean"
tap_done
