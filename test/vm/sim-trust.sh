#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F3/F4: no unprivileged action outranks an administrator.  An
# administrator's cgroup rule makes one process "high"; an unprivileged
# process (uid 65534) gives its queue KFD priority 15 (what a HIP
# high-priority stream gets) and runs long kernels.  With the default
# user_max_priority (7) the administrator's process is never parked, and
# neither a comm rule nor GPREEMPT_PRIORITY lifts the user's queue above 7.
# With user_max_priority=15 (the old behaviour) the same user parks it: the
# check can fail.  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 14
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
CG=/sys/fs/cgroup
P=/sys/module/gpreempt/parameters
T=$(mktemp -d)
prio_src() { is "$1" priority "$2" && is "$1" source "$3"; }
check_prio() {	# NAME tgid prio source
	if wait_for 20 prio_src "$2" "$3" "$4"; then
		tap_ok "$1"
	else
		tap_not_ok "$1 # saw $(qf "$2" priority) from $(qf "$2" source), want $3 from $4"
	fi
}
parks() { qf "$1" preempts; }

dmesg -C
mountpoint -q $CG || mount -t cgroup2 none $CG
mkdir -p $CG/gp-admin
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F3: kfdsim loads"; tap_bail; }
chmod 0666 /dev/kfdsim
gp_insmod || { tap_not_ok "F3: gpreempt loads"; rmmod kfdsim; tap_bail; }
tap_check "F3: user_max_priority defaults to 7" test "$(cat $P/user_max_priority)" = 7
tap_check_fails "F3: user_max_priority=16 refused" sh -c "echo 16 > $P/user_max_priority"
$CTL set cgroup $CG/gp-admin high >/dev/null

# The administrator's service: work always pending, made high by the rule.
sh -c "echo \$\$ > $CG/gp-admin/cgroup.procs && exec $GPLOAD be --wg 8 --wg-us 2000 \
	--inflight 4 --duration 600 --quiet" &
adm=$!
# The user: KFD priority 15, long kernels every 20 ms; its environment asks
# for 15 too (honoured only once env is on).
setpriv --reuid 65534 --regid 65534 --clear-groups env GPREEMPT_PRIORITY=15 \
	$GPLOAD lc --prio 15 --wg 8 --wg-us 5000 --period-us 20000 --duration 600 --quiet &
usr=$!
check_prio "F3: the administrator's process is at 12 from its cgroup" $adm 12 cgroup
check_prio "F3: the user's KFD priority 15 counts as 7" $usr 7 kfd
a1=$(parks $adm)
sleep 5
a2=$(parks $adm)
tap_diag "administrator's parks over 5 s with the user at KFD 15: $a1 -> $a2"
tap_check "F3: the administrator's process is never parked by the user" \
	test "$a1" = 0 -a "$a2" = 0

# F4: a comm rule matches a name any user takes: capped too, and the CLI says so.
$CTL set comm gpload high 2>"$T/warn"
check_prio "F4: a comm rule 'high' gives the user's queue 7" $usr 7 comm
tap_check "F4: gpreemptctl set comm warns about the cap" grep -q "user_max_priority" "$T/warn"
$CTL unset comm gpload
# The environment, even with env_max_priority 15.
$CTL config env=on env_max_priority=15 >/dev/null
check_prio "F3: GPREEMPT_PRIORITY=15 with env_max_priority=15 gives 7" $usr 7 env
$CTL config env=default env_max_priority=default >/dev/null
a3=$(parks $adm)
tap_check "F3: still never parked ($a3 parks)" test "$a3" = 0

# The check can fail: a machine that trusts its users (the old behaviour).
echo 15 >$P/user_max_priority
check_prio "F3: user_max_priority=15: the user's queue is at 15 again" $usr 15 kfd
if wait_for 20 sh -c "[ \"\$($CTL --json status | jq -r '[.queues[] | select(.tgid == $adm)][0].preempts')\" -gt 0 ]"; then
	tap_ok "F3: user_max_priority=15: now the user parks the administrator's process ($(parks $adm) parks)"
else
	tap_not_ok "F3: user_max_priority=15: the user parks the administrator's process # $(parks $adm) parks"
fi
echo 7 >$P/user_max_priority

kill -TERM $adm $usr
wait $adm
arc=$?
wait $usr
urc=$?
tap_check "F3: both loads completed every packet exactly once" test $arc = 0 -a $urc = 0
tap_check "F3: rmmod gpreempt" rmmod gpreempt
rmmod kfdsim
rmdir $CG/gp-admin 2>/dev/null
tap_dmesg_clean "F3: kernel log clean"
rm -rf "$T"
tap_done
