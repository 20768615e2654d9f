#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreemptctl metrics: OpenMetrics text that Prometheus's own parser
# (python3-prometheus-client's strict OpenMetrics parser) accepts, with the
# counts gp_stats has, after an LC/BE round: parks, the park call histogram,
# BE's queue with its labels; per cgroup, BE's parked time and LC's wait,
# counters that outlive BE's queue and its cgroup.  Served (--listen): GET /metrics answers with
# the OpenMetrics content type, another path 404; a client that connects and
# sends nothing does not keep the next scrape from being answered; gpreempt
# unloaded reads gpreempt_up 0 and loaded again 1 (its new maps), shadow
# mode shows as mode="shadow"; SIGTERM ends it with exit 0.
. test/lib/tap.sh
. test/lib/sim.sh
tap_plan 19
OBJ=${GP_OBJ:-.}
GPLOAD=$OBJ/build/gpload
PY=/usr/bin/python3
PORT=9464

# parse FILE: every family as "name type samples", or the parser's error.
parse() {
	$PY - "$1" <<'EOF'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    print(f.name, f.type, len(f.samples))
EOF
}
# samples FILE: every sample the parser read, one a line: name, its labels
# as sorted JSON, value (FILE.samples; python starts once a file, not once
# a value: a second of TCG time each).
samples() {
	$PY - "$1" >"$1.samples" <<'EOF'
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
for f in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in f.samples:
        v = s.value if s.value != int(s.value) else int(s.value)
        print("%s\t%s\t%s" % (s.name, json.dumps(s.labels, sort_keys=True), v))
EOF
	cksum <"$1" >"$1.sum"
}
# value FILE SAMPLE [LABEL=VALUE]...: the first sample of that name (and labels).
value() {
	local f=$1 name=$2 want=() a
	shift 2
	[ -e "$f.sum" ] && [ "$(cksum <"$f")" = "$(cat "$f.sum")" ] || samples "$f"
	for a in "$@"; do want+=("\"${a%%=*}\": \"${a#*=}\""); done
	awk -F'\t' -v n="$name" -v w="$(printf '%s\n' "${want[@]}")" '
		BEGIN { k = split(w, ws, "\n") }
		$1 == n { for (i = 1; i <= k; i++) if (ws[i] != "" && index($2, ws[i]) == 0) next
			  print $3; exit }' "$f.samples"
}
# get PATH: "STATUS CONTENT-TYPE" of a GET, the body in /tmp/m.http.
get() {
	$PY - "$1" $PORT <<'EOF'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[2], sys.argv[1]), timeout=10)
    open("/tmp/m.http", "wb").write(r.read())
    print(r.status, r.headers.get("Content-Type"))
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("Content-Type"))
EOF
}

dmesg -C
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
CGB=/sys/fs/cgroup/gpm-be CGL=/sys/fs/cgroup/gpm-lc
rmdir $CGB $CGL 2>/dev/null
mkdir $CGB $CGL
cgb_id=$(stat -c %i $CGB)
insmod "$OBJ/test/kfdsim/kfdsim.ko"
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 hysteresis_us=20000
sh -c "echo \$\$ > $CGB/cgroup.procs && exec $GPLOAD --mode be --prio 3 --wg 8 --wg-us 2000 --inflight 4 --duration 60 --quiet" &
be=$!
sleep 0.5
sh -c "echo \$\$ > $CGL/cgroup.procs && exec $GPLOAD --mode lc --prio 12 --wg 4 --wg-us 2000 --period-us 50000 --duration 2 --quiet"
lc_rc=$?
# The cgroups' counters go out every 100 ms, a queue's with each change.
cg_caught_up() {
	$CTL metrics >/tmp/m.txt || return 1
	cp=$(value /tmp/m.txt gpreempt_cgroup_parks_total cgroup=/gpm-be cgroup_id=$cgb_id)
	qp=$(value /tmp/m.txt gpreempt_queue_parks_total pid=$be)
	[ -n "$cp" ] && [ -n "$qp" ] && [ "$qp" -ge 1 ] && [ "$cp" -ge "$qp" ]
}
wait_for 10 cg_caught_up
$CTL metrics >/tmp/m.txt
rc=$?
parks=$(gstat preempts) calls=$(gstat park_lat.count)
stop_be $be
wait_for 10 eval '$CTL metrics >/tmp/m2.txt && [ -z "$(value /tmp/m2.txt gpreempt_queue_parks_total pid=$be)" ]'
out=$(parse /tmp/m.txt 2>&1)
tap_check "metrics: exit 0, Prometheus's OpenMetrics parser accepts it ($(wc -l </tmp/m.txt) lines, rc $rc)" \
	test "$rc" = 0 -a -n "$out" -a "$(grep -c '^Traceback\|Error' <<<"$out")" = 0
tap_diag "families: $(awk '{print $1 "/" $2}' <<<"$out" | tr '\n' ' ' | head -c 600)"
tap_check "metrics: gpreempt_up 1, gpreempt_parks_total as gp_stats ($parks)" \
	test "$(value /tmp/m.txt gpreempt_up).$(value /tmp/m.txt gpreempt_parks_total)" = "1.$parks"
tap_check "metrics: the park call histogram counts each park call ($calls) in +Inf" \
	test "$(value /tmp/m.txt gpreempt_park_call_seconds_count).$(value /tmp/m.txt gpreempt_park_call_seconds_bucket le=+Inf)" = "$calls.$calls"
tap_check "metrics: BE's queue with its pid, comm and cgroup labels, parked at least once" \
	test "$(value /tmp/m.txt gpreempt_queue_parks_total pid=$be comm=gpload)" -ge 1
# The shipped Grafana dashboard asks only for series this scrape has.
missing=
for n in $(jq -r '.panels[].targets[].expr' deploy/grafana/gpreempt.json | grep -o 'gpreempt_[a-z_]*' | sort -u); do
	grep -q "^$n[{ ]" /tmp/m.txt || missing="$missing $n"
done
tap_check "metrics: every gpreempt series deploy/grafana/gpreempt.json queries is in the scrape (missing:${missing:- none})" \
	test -z "$missing" -a "$(jq '[.panels[].targets[]] | length' deploy/grafana/gpreempt.json)" -ge 10
# kfdsim's GPU (node 1 of the KFD topology): its gpu_id and PCI address
# name device slot 0, BE's queue's dev.
tn=/sys/class/kfd/kfd/topology/nodes/1
kid=$(cat $tn/gpu_id)
loc=$(awk '$1 == "location_id" {print $2}' $tn/properties)
bdf=$(printf '%04x:%02x:%02x.%x' "$(awk '$1 == "domain" {print $2}' $tn/properties)" \
	$((loc >> 8 & 255)) $((loc >> 3 & 31)) $((loc & 7)))
tap_check "metrics: gpreempt_device_info names BE's device slot by KFD gpu_id $kid, partition 0 and PCI address $bdf" \
	test "$(value /tmp/m.txt gpreempt_device_info dev=0 kfd_gpu_id=$kid gpu_partition_id=0 pci_bdf=$bdf).$(value /tmp/m.txt gpreempt_queue_parks_total pid=$be dev=0)" = "1.$(value /tmp/m.txt gpreempt_queue_parks_total pid=$be)"
# Enabled, a park follows the scan that saw LC's work: no two scans see the
# wait, so it is counted as 0 (sim-shadow counts it in shadow mode).
tap_check "metrics: the time each level waited, all 16 levels" \
	test "$(grep -c '^gpreempt_level_wait_seconds_total{level="[0-9]*"} ' /tmp/m.txt)" = 16
p1=$(value /tmp/m.txt gpreempt_cgroup_parked_seconds_total cgroup=/gpm-be)
qp=$(value /tmp/m.txt gpreempt_queue_parks_total pid=$be)
cp=$(value /tmp/m.txt gpreempt_cgroup_parks_total cgroup=/gpm-be cgroup_id=$cgb_id)
tap_check "metrics: BE's cgroup (/gpm-be, id $cgb_id): parked ${p1:-none} s, its parks as its queue's (${cp:-none}/${qp:-none})" \
	eval "[ -n \"\$cp\" ] && [ \"\$cp\" -ge 1 ] && [ \"\$cp\" -ge \"\$qp\" ] && awk -v p=\"\$p1\" 'BEGIN { exit !(p > 0) }'"
lw=$(value /tmp/m.txt gpreempt_cgroup_wait_seconds_total cgroup=/gpm-lc)
tap_check "metrics: LC's cgroup (/gpm-lc) has its wait series (${lw:-none} s), and no park" \
	test -n "$lw" -a "$(value /tmp/m.txt gpreempt_cgroup_parks_total cgroup=/gpm-lc)" = 0
p2=$(value /tmp/m2.txt gpreempt_cgroup_parked_seconds_total cgroup=/gpm-be)
tap_check "metrics: BE exited: its queue's series are gone, its cgroup's stay (parked ${p1:-none} -> ${p2:-none} s)" \
	eval "[ -z \"\$(value /tmp/m2.txt gpreempt_queue_parks_total pid=\$be)\" ] && awk -v a=\"\$p1\" -v b=\"\$p2\" 'BEGIN { exit !(a > 0 && b >= a) }'"
rmdir $CGB $CGL
$CTL metrics >/tmp/m3.txt
p3=$(value /tmp/m3.txt gpreempt_cgroup_parked_seconds_total cgroup_id=$cgb_id cgroup=)
tap_check "metrics: BE's cgroup removed: its counters stay under its id, with an empty path (${p3:-none} s)" \
	awk -v a="$p2" -v b="$p3" 'BEGIN { exit !(b != "" && b >= a && a > 0) }'

$CTL metrics --listen 127.0.0.1:$PORT &
srv=$!
wait_for 10 eval '[ "$(get /metrics | cut -d" " -f1)" = 200 ]'
r=$(get /metrics)
pr=$(parse /tmp/m.http 2>&1)
tap_check "served: GET /metrics is 200 OpenMetrics ($r), parsed" \
	bash -c '[[ "$0" == "200 application/openmetrics-text; version=1.0.0"* ]] && grep -q "^gpreempt_parks counter" <<<"$1"' "$r" "$pr"
tap_check "served: another path is 404 ($(get /))" test "$(get / | cut -d' ' -f1)" = 404
# A client that connects and sends nothing: the next scrape is answered all the same.
$PY -c "import socket, time; s = socket.create_connection(('127.0.0.1', $PORT)); time.sleep(8)" &
idle=$!
sleep 0.5
tap_check "served: a silent client does not keep the next scrape from an answer" \
	test "$(get /metrics | cut -d' ' -f1)" = 200
kill $idle 2>/dev/null
wait $idle 2>/dev/null
rmmod gpreempt
get /metrics >/dev/null
tap_check "served: gpreempt unloaded reads gpreempt_up 0" test "$(value /tmp/m.http gpreempt_up)" = 0
insmod "$OBJ/module/gpreempt.ko" user_max_priority=15 enable=0
ticks_pass 3
get /metrics >/dev/null
tap_check "served: loaded again (enable=0): gpreempt_up 1, mode shadow" \
	test "$(value /tmp/m.http gpreempt_up).$(value /tmp/m.http gpreempt_info mode=shadow)" = 1.1
kill -TERM $srv
wait $srv
tap_check "served: SIGTERM ends it, exit 0" test $? = 0
tap_check "LC and BE packets exactly once" test "$lc_rc.$be_rc" = 0.0
sim_unload
tap_dmesg_clean "sim-metrics"
tap_done
