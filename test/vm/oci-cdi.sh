#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two pods share the GPU without privilege, as on a cluster: Debian trixie's
# containerd 1.7 (test/lib/containerd.sh) with CDI enabled and the NRI v2
# plugin, pods made through CRI by build/cri-client as the kubelet makes
# them, and Debian's Prometheus server (test/lib/prometheus.sh) scraping
# gpreemptctl's metrics endpoint meanwhile.
#  - The GPU reaches each pod only by CDI: a spec of kind amd.com/gpu
#    (cdi_spec_kfd, as AMD's container toolkit writes one) and the CRI
#    field CDIDevices, which the kubelet fills for a DRA claim.  No
#    privileged container, no hostPath, no device list.
#  - Both pods are Burstable and run as uid 1000 with Pod Security's
#    "restricted" settings (no privilege escalation, no capability, the
#    runtime's seccomp profile); each runs Debian's HIP 5.2.3
#    (build/hip-work) on /dev/kfd and its render node.
#  - The LC pod is annotated gpreempt.io/priority=high; the BE pod is not.
# Checks that the BE pod's process has no privilege and sees /dev/kfd and
# one render node only; that LC parks BE while LC has work and BE runs again
# after; that every LC request came back; then, in PromQL, that the BE
# pod's parked seconds (by its pod_uid label, read from the kubelet's
# cgroup path) rose with no counter reset, that the LC pod's wait stayed
# below a tenth of them, and that the series name the BE container's CRI id.
# Skipped, with the reason, without containerd, the plugin, hip-work or
# Prometheus.  Runs inside the test guest (test/run-vm oci).
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/containerd.sh
. test/lib/nri.sh
. test/lib/kfdclient.sh
. test/lib/prometheus.sh
tap_plan 20
GP_OBJ=${GP_OBJ:-.}
CTL=$PWD/build/gpreemptctl
W=/tmp/cdi
LOG=$W/hook.log
CONF=$W/gpreempt.conf
RUNDIR=/run/gpreempt/containers
NRI_SOCK=/run/nri/nri.sock
ANN=gpreempt.io/priority
PORT=9466
LCUID=5b1f0c3e-8a2d-4e6f-9b7c-1d2e3f4a5b6c
BEUID=9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b

why=
containerd_setup $W >/tmp/cdi.why || why=$(cat /tmp/cdi.why)
[ -n "$why" ] || [ -x build/hip-work ] || why="no build/hip-work (hipcc: scripts/setup)"
[ -n "$why" ] || [ -x "$PROM" ] || why="no Prometheus at $PROM (scripts/setup unpacks Debian's)"
if [ -n "$why" ]; then
	tap_skip_rest "$why"
	tap_done
	exit 0
fi
: >$CONF
mkdir -p $W/logs $W/prom
plugin_insmod
tap_check "a CDI spec of kind amd.com/gpu for kfdsim's GPU (/dev/kfd and its render node)" cdi_spec_kfd $W/cdi
tap_diag "CDI: $(jq -c '.devices[0].containerEdits.deviceNodes | map(.path)' $W/cdi/amd.com-gpu.json)"
if containerd_start >$W/start.out; then
	tap_ok "containerd starts with CDI enabled, answers on CRI and imports the local image"
else
	tap_not_ok "containerd starts with CDI enabled, answers on CRI and imports the local image"
	sed 's/^/# /' $W/start.out
	tap_bail "containerd did not start"
fi
plugin_start
tap_check "the NRI v2 plugin registers on containerd and is synchronized" \
	wait_for 60 grep -q 'synchronized 0 of 0 containers' $W/plugin.log
$CTL metrics --listen 127.0.0.1:$PORT &
exporter=$!
prom_start $W/prom 127.0.0.1:$PORT 9092
tap_check "prometheus: the gpreempt target is up" prom_up

# pod NAME UID [CRI-CLIENT OPTION...] -- CMD...: a Burstable pod of uid 1000
# with GPU 0 by CDI only; "POD CONTAINER MS" on stdout.
pod() {
	local name=$1 uid=$2
	shift 2
	"${CRI[@]}" run "$name" --uid "$uid" --qos burstable --user 1000 --cdi amd.com/gpu=0 \
		--log $W/logs --mount /mnt/usr:/usr --mount "/mnt$PWD/build:/gp" \
		--env HSA_ENABLE_SDMA=0 "$@"
}
# said NAME LINE: the pod's container printed LINE (CRI's log format).
said() { grep -q " stdout [FP] $2\$" $W/logs/$1.log 2>/dev/null; }

read -r bepod beid _ < <(pod be $BEUID -- /gp/hip-work be 8 20000000 4 /tmp/stop 2>$W/be.err)
be=$([ -n "$beid" ] && "${CRI[@]}" pid "$beid")
if [ -z "$be" ]; then
	tap_not_ok "BE pod runs (RunPodSandbox, CreateContainer with CDIDevices, StartContainer)"
	sed 's/^/# /' $W/be.err
	tail -n 20 $CTD_DIR/containerd.log | sed 's/^/# /'
	tap_bail "no BE pod"
fi
tap_ok "BE pod runs (RunPodSandbox, CreateContainer with CDIDevices, StartContainer)"
st=/proc/$be/status
tap_diag "BE: $(grep -E '^(Uid|CapEff|NoNewPrivs|Seccomp):' $st | tr -s '\t\n' '  ')"
tap_check "BE pod unprivileged: uid 1000, no capability, no privilege escalation, seccomp on" \
	sh -c "grep -qE '^Uid:\s+1000\s+1000\s+1000\s+1000$' $st && grep -qE '^CapEff:\s+0+$' $st &&
		grep -qE '^NoNewPrivs:\s+1$' $st && grep -qE '^Seccomp:\s+2$' $st"
minor=$(jq -r '.devices[0].containerEdits.deviceNodes[1].path' $W/cdi/amd.com-gpu.json)
seen=$(cd /proc/$be/root/dev && ls -d kfd dri/* 2>/dev/null | tr '\n' ' ')
tap_check "BE pod sees /dev/kfd and ${minor#/dev/} only, both 0666 (the CDI spec's): $seen" \
	sh -c "[ '$seen' = '${minor#/dev/} kfd ' ] && [ \$(stat -c %a /proc/$be/root/dev/kfd /proc/$be/root$minor | sort -u) = 666 ]"
tap_check "BE pod: HIP runs kernels on /dev/kfd as uid 1000" wait_for 180 said be be_ready
grep -v ' stdout [FP] [a-z_]*\( [0-9.]*\)\?$' $W/logs/be.log 2>/dev/null | head -3 | sed 's/^/# be: /'

t0=$(q 'time()')
pre=$(psum $be preempts)
read -r lcpod lcid _ < <(pod lc $LCUID --pod-ann $ANN=high -- /gp/hip-work lc 100 8 2000000 50000 2>$W/lc.err)
lc=$([ -n "$lcid" ] && "${CRI[@]}" pid "$lcid")
tap_check "LC pod runs, annotated high" test -n "$lc"
sed 's/^/# lc: /' $W/lc.err
LCG=/sys/fs/cgroup/kubepods/burstable/pod$LCUID/$lcid
tap_check "LC: HIP started in the pod" wait_for 180 said lc lc_ready
tap_check "the LC rule: 11 (the default cap) on the container's cgroup" wait_for 30 rule_on "$LCG" 11
be_parked() { [ "$(psum $be preempts)" -gt "$pre" ]; }
tap_check "BE parked while LC has work" wait_for 60 be_parked
ok=0
# its exit (KFD's process teardown) takes tens of seconds in a 1-CPU TCG guest
wait_for 300 said lc lc_done && wait_for 180 sh -c "${CRI[*]} state $lcid | grep -q EXITED" && ok=1
tap_diag "LC: $(grep -oE 'stdout F (lc_requests|lat_p50|lat_p99) .*' $W/logs/lc.log | cut -d' ' -f3- | tr '\n' ' ')(us; TCG guest, never asserted)"
lst=$("${CRI[@]}" state $lcid)
tap_check "LC: 100 requests, every HIP call succeeded ($lst)" \
	test "$ok $(said lc 'lc_requests 100' && echo 100) $lst" = "1 100 CONTAINER_EXITED 0"
tap_check "LC exited: BE running again (its queues parked $(($(psum $be preempts) - pre)) times while LC ran)" \
	wait_for 30 all_running $be

# Two scrapes after LC ended, so the window's last samples are in.
sleep 3
w=$(awk -v a="$(q 'time()')" -v b="$t0" 'BEGIN { printf "%d", a - b + 1 }')
parked=$(q "sum(increase(gpreempt_cgroup_parked_seconds_total{pod_uid=\"$BEUID\"}[${w}s]))")
resets=$(q "sum(resets(gpreempt_cgroup_parked_seconds_total{pod_uid=\"$BEUID\"}[${w}s]))")
lcwait=$(q "sum(increase(gpreempt_cgroup_wait_seconds_total{pod_uid=\"$LCUID\"}[${w}s]))")
bectr=$(q "count(gpreempt_cgroup_parked_seconds_total{pod_uid=\"$BEUID\",container_id=\"$beid\"})")
tap_diag "window ${w}s: BE pod parked ${parked:-none} s (resets ${resets:-none}), LC pod waited ${lcwait:-none} s"
tap_check "prometheus: the BE pod's parked seconds rose (${parked:-none} s), no counter reset (${resets:-none})" \
	awk -v p="$parked" -v r="$resets" 'BEGIN { exit !(p != "" && p > 0 && r == 0) }'
tap_check "prometheus: the LC pod's wait (${lcwait:-none} s) is below a tenth of the BE pod's parked time" \
	awk -v l="$lcwait" -v p="$parked" 'BEGIN { exit !(l != "" && p > 0 && l < p / 10) }'
tap_check "prometheus: the BE pod's series name its CRI container id" test "$bectr" = 1

touch /proc/$be/root/tmp/stop
wait_for 120 sh -c "${CRI[*]} state $beid | grep -q EXITED"
bst=$("${CRI[@]}" state $beid)
tap_check "BE: stopped by its file, every HIP call succeeded ($bst)" test "$bst" = "CONTAINER_EXITED 0"
if [ "$bst" != "CONTAINER_EXITED 0" ]; then
	tap_diag "BE: stop file $(ls -l /proc/$be/root/tmp/stop 2>&1); queues $($CTL --json status | jq -c --argjson t $be '[.queues[] | select(.tgid == $t) | {qid, state, preempts}]')"
	tail -n 5 $W/logs/be.log | sed 's/^/# be: /'
fi
"${CRI[@]}" rm "$lcpod"
"${CRI[@]}" rm "$bepod"
tap_check "pods removed: no container, no rule and no record" \
	wait_for 30 no_pods_left
kill $pl $exporter 2>/dev/null
wait $pl $exporter 2>/dev/null
prom_stop $W/prom
containerd_stop
tap_check "rmmod gpreempt kfdsim" sim_unload
tap_done
