#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim itself: the simulated KFD + GPU that gpreempt's behaviour tests
# stand on.  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
stat() { awk -v k="$1" '$1 == k {print $2}' /sys/kernel/debug/kfdsim/stats; }
wait_idle() {	# processes and queues back to 0 (teardown runs from a workqueue)
	local i
	for i in $(seq 50); do
		[ "$(stat processes)" = 0 ] && [ "$(stat queues)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
dmesg -C
tap_check "insmod kfdsim" insmod test/kfdsim/kfdsim.ko
tap_check_fails "insmod kfdsim num_cu=0 refused" insmod test/kfdsim/kfdsim.ko num_cu=0
build/kfdsim_test || true
tap_check "all processes and queues gone after exit" wait_idle

# A process killed with queues mapped and busy, and one killed while evicted.
build/gpload --mode be --prio 3 --duration 30 --wg 8 --wg-us 2000 --quiet &
pid=$!
sleep 1
kill -9 $pid; wait $pid 2>/dev/null
tap_check "kill -9 with busy mapped queues leaves nothing behind" wait_idle

# rmmod while a process holds /dev/kfdsim is refused, then works.
build/gpload --mode idle --duration 30 --quiet &
pid=$!
sleep 0.5
tap_check_fails "rmmod kfdsim with a live user refused" rmmod kfdsim
kill $pid; wait $pid
tap_check "gpload exits cleanly on SIGTERM" test $? -eq 0
wait_idle
tap_check "rmmod kfdsim after the last user" rmmod kfdsim
if dmesg | grep -E 'BUG|WARNING|Oops|RIP:' >/tmp/bad.txt; then
	tap_not_ok "kfdsim: dmesg has no BUG/WARNING/Oops"
	sed 's/^/# /' /tmp/bad.txt | head
else
	tap_ok "kfdsim: dmesg has no BUG/WARNING/Oops"
fi
