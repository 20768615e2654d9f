#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F7: rules keyed on a pid end with their process.  A pid rule
# and a hold (gpreemptctl park) on a process outlived it, so the next
# process to get that pid would have been parked with no starvation guard.
# Now the module deletes gp_prio[tgid] and gp_queue_ctl[tgid:*] once the
# process has ended; a live process keeps them.
#
# A pid rule names its process's start time too.  A rule on
# a process that ended before it opened /dev/kfd (so no release dropped it)
# used to give its level to the next process to get the pid: any user can
# cycle pids to one.  Here the next process is made to get it (ns_last_pid)
# and must stay at its own level, 7, not the rule's 13; the module deletes
# the rule.  The control: a rule on a live process that then opens kfdsim
# (exec keeps its pid and start) applies.  Runs inside the test guest.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 15
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
rules_of() { $CTL --json list | jq -r --arg p "$1" '[.[] | select(.target == $p or (.target | startswith($p + ":")))] | length'; }
no_rules() { [ "$(rules_of "$1")" = 0 ]; }
has_queue() { [ -n "$(qf "$1" qid)" ]; }

dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F7: kfdsim loads"; tap_bail; }
insmod "$OBJ/module/gpreempt.ko" || { tap_not_ok "F7: gpreempt loads"; rmmod kfdsim; tap_bail; }
$GPLOAD be --wg 4 --wg-us 1000 --inflight 2 --duration 600 --quiet &
a=$!
$GPLOAD be --wg 4 --wg-us 1000 --inflight 2 --duration 600 --quiet &
b=$!
wait_for 20 has_queue $a && wait_for 20 has_queue $b
for p in $a $b; do
	$CTL set pid $p high >/dev/null
	$CTL park queue "$p:$(qf $p qid)" >/dev/null
done
tap_check "F7: a pid rule and a hold on each of two processes" \
	test "$(rules_of $a)" = 2 -a "$(rules_of $b)" = 2
# Held parked, it would never drain: it ends the hard way.
kill -KILL $a
wait $a 2>/dev/null
wait_for 30 sh -c "! kill -0 $a 2>/dev/null"
if wait_for 20 no_rules $a; then
	tap_ok "F7: the ended process's pid rule and hold are gone"
else
	tap_not_ok "F7: the ended process's pid rule and hold are gone # $($CTL list | grep -w "$a")"
fi
sleep 0.5
tap_check "F7: the live process keeps its pid rule and hold" test "$(rules_of $b)" = 2
$CTL unpark queue "$b:$(qf $b qid)" >/dev/null
kill -TERM $b
wait $b
brc=$?
tap_check "F7: the live process, released, ran every packet exactly once" test $brc = 0
wait_for 20 no_rules $b
# A hold ends after max_hold_s, in the map too.
# 8 s: a loaded guest can take seconds between the park and its check.
echo 8 >/sys/module/gpreempt/parameters/max_hold_s
$GPLOAD be --wg 4 --wg-us 1000 --inflight 2 --duration 600 --quiet &
c=$!
wait_for 20 has_queue $c
$CTL park queue "$c:$(qf $c qid)" >/dev/null
held() { $CTL --json list | jq -e --arg t "$c:$(qf $c qid)" 'any(.[]; .target == $t and .hold == true)' >/dev/null; }
tap_check "F7: a hold is set" held
if wait_for 30 sh -c "! $CTL --json list | jq -e --arg t '$c:' 'any(.[]; (.target | startswith(\$t)) and .hold == true)' >/dev/null"; then
	tap_ok "F7: the hold is released after max_hold_s (8 s)"
else
	tap_not_ok "F7: the hold is released after max_hold_s (8 s) # $($CTL list | grep -w "$c")"
fi
tap_check "F7: ... and the queue runs again" wait_for 20 sh -c "[ \"\$($CTL --json status | jq -r '[.queues[] | select(.tgid == $c)][0].state')\" = running ]"
kill -TERM $c
wait $c
tap_check "F7: the released process ran every packet exactly once" test $? = 0

prio_src() { is "$1" priority "$2" && is "$1" source "$3"; }
check_prio() {	# NAME tgid prio source
	if wait_for 20 prio_src "$2" "$3" "$4"; then
		tap_ok "$1"
	else
		tap_not_ok "$1 # saw $(qf "$2" priority) from $(qf "$2" source), want $3 from $4"
	fi
}
BE="$GPLOAD be --wg 4 --wg-us 1000 --inflight 2 --duration 600 --quiet"
t0=$SECONDS
# Control: the rule is set while the process is still a shell; exec keeps its pid and start.
sh -c "sleep 1; exec $BE" &
d=$!
$CTL set pid $d 13 >/dev/null
wait_for 20 has_queue $d
check_prio "pid reuse: a pid rule set on a live process applies once it opens kfdsim" $d 13 pid
kill -TERM $d
wait $d
wait_for 20 no_rules $d
# A rule on a process that ends before it opens kfdsim; the next process gets its pid.
sleep 1000 &
s=$!
$CTL set pid $s 13 >/dev/null
tap_check "pid reuse: a pid rule on a process that never opens kfdsim" test "$(rules_of $s)" = 1
kill -KILL $s
wait $s 2>/dev/null
if [ -w /proc/sys/kernel/ns_last_pid ]; then
	echo $((s - 1)) >/proc/sys/kernel/ns_last_pid
	$BE &
	n=$!
	tap_diag "ended process $s, next process $n"
	tap_check "pid reuse: the next process got the ended process's pid" test $n = $s
	wait_for 20 has_queue $n
	# Several resolves (every tick after a rules change, every 100 ms anyway).
	ticks_pass 20
	check_prio "pid reuse: the process that got the pid is at its own level, 7, not the rule's 13" \
		$n 7 kfd
	if wait_for 5 no_rules $s; then
		tap_ok "pid reuse: the rule of the ended process is deleted"
	else
		tap_not_ok "pid reuse: the rule of the ended process is deleted # $($CTL list | grep -w "$s")"
	fi
	kill -TERM $n
	wait $n
else
	tap_skip_n 3 "pid reuse: the next process gets the pid" "no /proc/sys/kernel/ns_last_pid"
fi
tap_diag "pid reuse checks: $((SECONDS - t0)) s"
tap_check "F7: rmmod gpreempt" rmmod gpreempt
wait_for 30 ks_idle
rmmod kfdsim
tap_dmesg_clean "F7: kernel log clean"
tap_done
