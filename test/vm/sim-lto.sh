#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Review S3 F15: on a kernel built with LTO, kfd_procfs_add_queue() can be
# inlined into pqm_create_queue().  Its out-of-line copy, where the creation
# kprobe sits, is then never called, and gpreempt would manage nothing,
# silently.  kfdsim's lto_inlined=1 creates queues that way.  gpreempt must
# notice at the first update or destroy of a queue it never saw created:
# counted in gp_stats.queues_unseen, one dmesg line, and a warning in
# `gpreemptctl status`.  The same run without lto_inlined counts nothing.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 8
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
CTL=$OBJ/build/gpreemptctl
run_one() {	# <kfdsim args>: one LC queue that ROCr-style updates, then exits
	dmesg -C
	insmod "$OBJ/test/kfdsim/kfdsim.ko" $1
	insmod "$OBJ/module/gpreempt.ko"
	$GPLOAD --mode lc --prio 7 --wg 2 --wg-us 200 --period-us 3000 --duration 1 --quiet
	rc=$?
	# The destroy's count is published in the monitor's next tick.
	ticks_pass 2
	seen=$(gstat queues_seen) unseen=$(gstat queues_unseen)
	status=$($CTL status 2>&1)
	rmmod gpreempt
	wait_for 30 ks_idle
	rmmod kfdsim
}

run_one "lto_inlined=1"
tap_check "F15: LTO-inlined creation: the queue ran, every packet once" test "$rc" = 0
tap_check "F15: LTO-inlined creation: no queue seen ($seen), its destroy counted unseen ($unseen)" \
	test "$seen" = 0 -a "${unseen:-0}" -ge 1
tap_check "F15: dmesg says the creation probe does not fire" \
	bash -c 'dmesg | grep -q "never saw created: the kfd_procfs_add_queue probe does not fire"'
tap_check "F15: gpreemptctl status warns" grep -q "^warning: KFD changed or destroyed $unseen queues" <<<"$status"
tap_dmesg_clean "F15: dmesg clean (LTO-inlined)"

run_one ""
tap_check "F15: normal creation: queue seen ($seen), nothing unseen ($unseen)" \
	test "$seen" -ge 1 -a "$unseen" = 0
tap_check "F15: normal creation: no warning in gpreemptctl status" bash -c '! grep -q "^warning:" <<<"$0"' "$status"
tap_dmesg_clean "F15: dmesg clean"
tap_done
