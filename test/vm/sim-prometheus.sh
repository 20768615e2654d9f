#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian's Prometheus server (2.42, unpacked by scripts/setup into
# .cache/prometheus) scrapes gpreemptctl's metrics endpoint every second
# while an LC and a BE process, each in a cgroup of its own (as a pod's
# container is), share kfdsim's GPU under gpreempt.  PromQL through its
# HTTP API then shows what an operator's dashboard would:
#  - the target is up (Prometheus's own parser took the exposition);
#  - BE's cgroup's parked seconds rose while LC ran, and never reset;
#  - LC's cgroup's wait (pending while something below ran) stayed below a
#    tenth of BE's parked time: the ratio of two counters of one run, not
#    a time bound;
#  - gpreempt's parks are all BE's cgroup's.
# Skipped, with the reason, when setup has not unpacked Prometheus.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/prometheus.sh
tap_plan 6
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
PORT=9465
if [ ! -x "$PROM" ]; then
	tap_skip_rest "no Prometheus at $PROM (scripts/setup unpacks Debian's)"
	tap_done
	exit 0
fi

dmesg -C
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
CGB=/sys/fs/cgroup/gpp-be CGL=/sys/fs/cgroup/gpp-lc
rmdir $CGB $CGL 2>/dev/null
mkdir $CGB $CGL
tmp=$(mktemp -d)
insmod "$OBJ/test/kfdsim/kfdsim.ko"
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 hysteresis_us=20000
$CTL metrics --listen 127.0.0.1:$PORT &
exporter=$!
prom_start "$tmp" 127.0.0.1:$PORT 9091
tap_check "prometheus: the gpreempt target is up (its parser took the exposition)" prom_up

sh -c "echo \$\$ > $CGB/cgroup.procs && exec $GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 120 --quiet" &
be=$!
sleep 2
t0=$(q 'time()')
sh -c "echo \$\$ > $CGL/cgroup.procs && exec $GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 50000 --duration 8 --quiet"
lc_rc=$?
# Two scrapes after LC ended, so the window's last samples are in.
sleep 3
w=$(awk -v a="$(q 'time()')" -v b="$t0" 'BEGIN { printf "%d", a - b + 1 }')
parked=$(q "increase(gpreempt_cgroup_parked_seconds_total{cgroup=\"/gpp-be\"}[${w}s])")
resets=$(q "resets(gpreempt_cgroup_parked_seconds_total{cgroup=\"/gpp-be\"}[${w}s])")
lcwait=$(q "increase(gpreempt_cgroup_wait_seconds_total{cgroup=\"/gpp-lc\"}[${w}s])")
cgparks=$(q 'gpreempt_cgroup_parks_total{cgroup="/gpp-be"}')
parks=$(q 'gpreempt_parks_total')
tap_diag "window ${w}s: BE parked ${parked:-none} s (${cgparks:-none} parks, resets ${resets:-none}), LC waited ${lcwait:-none} s; gpreempt parks ${parks:-none}"
tap_check "prometheus: LC packets exactly once" test "$lc_rc" = 0
tap_check "prometheus: BE's cgroup's parked seconds rose over LC's run (${parked:-none} s), no counter reset (${resets:-none})" \
	awk -v p="$parked" -v r="$resets" 'BEGIN { exit !(p != "" && p > 0 && r == 0) }'
tap_check "prometheus: LC's cgroup's wait (${lcwait:-none} s) is below a tenth of BE's parked time" \
	awk -v l="$lcwait" -v p="$parked" 'BEGIN { exit !(l != "" && p > 0 && l < p / 10) }'
tap_check "prometheus: BE's cgroup's parks (${cgparks:-none}) are all of gpreempt's parks (${parks:-none}), at least one" \
	awk -v c="$cgparks" -v g="$parks" 'BEGIN { exit !(c != "" && c >= 1 && c == g) }'
stop_be $be
tap_check "prometheus: BE packets exactly once" test "$be_rc" = 0
kill -TERM $exporter
wait $exporter 2>/dev/null
prom_stop "$tmp"
rm -rf "$tmp"
rmdir $CGB $CGL
sim_unload
tap_done
