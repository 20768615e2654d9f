#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The container hook (gpreemptctl hook, docs/containers.md) with Debian's
# podman and crun, on kfdsim: the hooks.d files of etc/oci-hooks.d, a
# busybox-static image.  With gpreempt not loaded an annotated container
# still starts and the hook says why nothing was set; the annotation is a
# cgroup rule on the container's own cgroup before its command runs (the
# container lists the rules itself); an annotated LC container parks an
# unannotated BE one, both running kfdsim loads; an invalid value refuses
# the container with one line; the admin cap (container max_priority)
# lowers it; an administrator's cgroup rule above a container caps its
# rule, and an administrator's high LC parks an annotated-high container
# (S4-4); hook resync restores the rules after a reload (S4-6); apply keeps
# container rules; no rule is left after a loop of
# containers (GP_OCI_LOOP: 8 in make check, 100 in make soak); a missed poststop is cleaned up by
# hook gc; podman kube play with the annotation in the pod YAML.  Runs
# inside the test guest (test/run-vm oci; scripts/vm -a maxcpus=1).
. test/lib/tap.sh
. test/lib/sim.sh
# scripts/soak runs this directly, not through guest-run: drm.ko for kfdsim.
. test/lib/drm.sh
ks_drm_guest
. test/lib/podman.sh
GP_OBJ=${GP_OBJ:-.}
CTL=$PWD/build/gpreemptctl
GPLOAD=$PWD/build/gpload
LOOP=${GP_OCI_LOOP:-8}
W=/tmp/oci
LOG=$W/hook.log
CONF=$W/gpreempt.conf
RUNDIR=/run/gpreempt/containers
LOAD_ARGS="--mode be --wg 8 --wg-us 2000 --inflight 4 --duration 1800 --quiet"
# Annotation values set as rules, and refused: a line each.
values=(low 0 15 normal)
refused=(bogus HIGH 16 -1 "1 2" "")
tap_plan $((49 + ${#values[@]} + ${#refused[@]}))

command -v podman >/dev/null && command -v crun >/dev/null ||
	{ tap_not_ok "podman and crun are installed (scripts/setup)"; tap_bail; }

# --- podman in the read-only guest (test/lib/podman.sh) ---------------------
mkdir -p $W
: >$CONF
# The installed hooks.d files, with this build's gpreemptctl, $CONF and a log.
podman_setup $W --config $CONF --log $LOG
tap_check "podman imports a busybox-static rootfs" "${P[@]}" import -q $W/rootfs.tar gpbb
ANN=gpreempt.io/priority

# 1. gpreempt not loaded: the container starts, the hook says why.
out=$("${RUN[@]}" --rm --annotation $ANN=high gpbb echo started 2>&1)
if [ "$out" = started ]; then tap_ok "gpreempt not loaded: an annotated container starts"
else tap_not_ok "gpreempt not loaded: an annotated container starts"; printf '# %s\n' "$out"; fi
if grep -q 'no rule set on .*libpod-.*: gpreempt is not loaded' $LOG; then
	tap_ok "gpreempt not loaded: the hook logs why nothing was set"
else
	tap_not_ok "gpreempt not loaded: the hook logs why nothing was set"; sed 's/^/# /' $LOG
fi
tap_diag "$(tail -n 1 $LOG)"

dmesg -C
insmod $GP_OBJ/test/kfdsim/kfdsim.ko && insmod $GP_OBJ/module/gpreempt.ko max_suspend_ms=60000 ||
	{ tap_not_ok "insmod kfdsim and gpreempt"; tap_bail; }

ct_rules() { $CTL --json list | jq '[.[] | select(.kind == "container")] | length'; }
records() { ls $RUNDIR 2>/dev/null | wc -l; }

# 2. The rule is there before the command runs: the container lists the
# rules itself (privileged: CAP_SYS_ADMIN for the maps); in its own cgroup
# namespace its cgroup is /sys/fs/cgroup.
out=$("${RUN[@]}" --rm --privileged --annotation $ANN=high gpbb /gp/gpreemptctl --json list 2>&1)
if echo "$out" | jq -e '.[] | select(.kind == "container" and .target == "/sys/fs/cgroup" and .priority == 11)' >/dev/null 2>&1; then
	tap_ok "high: the container sees a rule at 11 (the default cap) on its own cgroup when its command starts"
else
	tap_not_ok "high: the container sees a rule at 11 (the default cap) on its own cgroup when its command starts"
	printf '# %s\n' "$out"
fi
tap_check "the hook logged the rule on libpod-<id> and removed it at poststop" \
	sh -c "grep -q 'cgroup rule /sys/fs/cgroup/libpod_parent/libpod-[0-9a-f]* priority 11' $LOG &&
	       grep -q 'cgroup rule /sys/fs/cgroup/libpod_parent/libpod-[0-9a-f]* removed' $LOG"
tap_check "after --rm: no container rule and no record left" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ -z \"\$(ls $RUNDIR)\" ]"
for v in "${values[@]}"; do
	want=$(case $v in low) echo 3 ;; normal) echo 7 ;; 15) echo 11 ;; *) echo $v ;; esac)
	out=$("${RUN[@]}" --rm --privileged --annotation $ANN=$v gpbb /gp/gpreemptctl --json list 2>/dev/null |
		jq -r '.[] | select(.kind == "container" and .target == "/sys/fs/cgroup") | .priority')
	note=
	[ "$v" = 15 ] && note=" (above the default cap, 11)"
	tap_check "$ANN=$v: rule at $want$note" test "$out" = "$want"
done

# 3. LC (annotated high) parks BE (no annotation); both run gpload on kfdsim.
DEV=(--device /dev/kfdsim)
lcid=$("${RUN[@]}" -d "${DEV[@]}" --annotation $ANN=high gpbb /gp/gpload $LOAD_ARGS --prio 5)
beid=$("${RUN[@]}" -d "${DEV[@]}" gpbb /gp/gpload $LOAD_ARGS --prio 5)
lc=$("${P[@]}" inspect -f '{{.State.Pid}}' "$lcid")
be=$("${P[@]}" inspect -f '{{.State.Pid}}' "$beid")
tap_diag "LC container ${lcid:0:12} pid $lc, BE container ${beid:0:12} pid $be"
wait_for 30 is "$lc" source cgroup && wait_for 10 is "$lc" priority 11
tap_check "LC container: its queue at 11 from cgroup (gpreemptctl status)" \
	sh -c "[ '$(qf "$lc" priority) $(qf "$lc" source)' = '11 cgroup' ]"
lcg=$(sed -n 's/^0:://p' /proc/$lc/cgroup)
tap_check "the LC rule is on the container's cgroup (gpreemptctl list: /sys/fs/cgroup$lcg)" \
	sh -c "$CTL --json list | jq -e --arg t /sys/fs/cgroup$lcg '.[] | select(.kind == \"container\" and .target == \$t and .priority == 11)'"
tap_check "BE container: no rule, its KFD priority" sh -c "[ '$(qf "$be" source)' = kfd ]"
if wait_for 30 is "$be" state parked; then tap_ok "BE container parked while LC has work"
else tap_not_ok "BE container parked while LC has work # state $(qf "$be" state)"; fi
$CTL status | sed -n '1,12p' | sed 's/^/#   /'
"${P[@]}" stop -t 5 "$lcid" >/dev/null
if wait_for 30 is "$be" state running; then tap_ok "LC stopped: BE running again"
else tap_not_ok "LC stopped: BE running again # state $(qf "$be" state)"; fi
tap_check "LC stopped: its rule is gone (poststop of a detached container)" \
	sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ]"
"${P[@]}" stop -t 5 "$beid" >/dev/null
tap_check "both loads completed every packet exactly once" \
	sh -c "[ \"\$(${P[*]} inspect -f '{{.State.ExitCode}}' $lcid $beid | sort -u)\" = 0 ]"
"${P[@]}" rm -f "$lcid" "$beid" >/dev/null

# 3b. S4-4: no pod author outranks or ties an administrator.  An admin's
# "low" on the container's parent caps its annotation (high) at 3; an
# admin's "high" (12) LC cgroup parks an annotated-high container (11).
mkdir -p /sys/fs/cgroup/gpbe
$CTL set cgroup /sys/fs/cgroup/gpbe low
cid=$("${RUN[@]}" -d "${DEV[@]}" --cgroup-parent /gpbe --annotation $ANN=high gpbb /gp/gpload $LOAD_ARGS --prio 5)
cp_=$("${P[@]}" inspect -f '{{.State.Pid}}' "$cid")
wait_for 30 is "$cp_" source cgroup && wait_for 10 is "$cp_" priority 3
tap_check "S4-4: admin low on the parent: the annotated-high container's queue at 3 from cgroup" \
	sh -c "[ '$(qf "$cp_" priority) $(qf "$cp_" source)' = '3 cgroup' ]"
tap_check "S4-4: list shows the container rule at 11, capped to 3 by the parent" sh -c "$CTL --json list | jq -e \
	'any(.[]; .kind == \"container\" and .priority == 11 and .effective == 3 and .capped_by == \"/sys/fs/cgroup/gpbe\")'"
$CTL list | sed 's/^/#   /'
$CTL unset cgroup /sys/fs/cgroup/gpbe
mkdir -p /sys/fs/cgroup/gplc
$CTL set cgroup /sys/fs/cgroup/gplc high
sh -c "echo \$\$ > /sys/fs/cgroup/gplc/cgroup.procs && exec $GPLOAD $LOAD_ARGS --prio 5" &
lcp=$!
wait_for 30 is "$lcp" priority 12 && wait_for 30 is "$cp_" priority 11
tap_check "S4-4: admin LC at 12, annotated-high BE container at 11" \
	sh -c "[ '$(qf "$lcp" priority) $(qf "$cp_" priority)' = '12 11' ]"
if wait_for 30 is "$cp_" state parked; then tap_ok "S4-4: the annotated container is parked while the admin's LC is busy"
else tap_not_ok "S4-4: the annotated container is parked while the admin's LC is busy # state $(qf "$cp_" state)"; fi

# 3c. S4-6: a reload loses the container rules; hook resync brings them back.
tap_check "reload gpreempt under the running containers" \
	sh -c "rmmod gpreempt && insmod $GP_OBJ/module/gpreempt.ko max_suspend_ms=60000"
wait_for 30 is "$cp_" source kfd
tap_check "S4-6: after the reload the container's queue is at its KFD priority" sh -c "[ '$(qf "$cp_" source)' = kfd ]"
$CTL set cgroup /sys/fs/cgroup/gplc high
out=$($CTL hook resync 2>&1)
tap_check "S4-6: hook resync restores the running container's rule ($out)" grep -q '^1 container rule restored' <<<"$out"
wait_for 30 is "$cp_" source cgroup && wait_for 10 is "$cp_" priority 11
tap_check "S4-6: after resync the container's queue is at 11 from cgroup again" \
	sh -c "[ '$(qf "$cp_" priority) $(qf "$cp_" source)' = '11 cgroup' ]"
if wait_for 30 is "$cp_" state parked; then tap_ok "S4-6: after resync it is parked under the admin's LC again"
else tap_not_ok "S4-6: after resync it is parked under the admin's LC again # state $(qf "$cp_" state)"; fi
kill -TERM $lcp; wait $lcp
tap_check "the admin's LC load completed every packet exactly once" test $? -eq 0
"${P[@]}" stop -t 5 "$cid" >/dev/null
tap_check "the annotated container's load completed every packet exactly once" \
	sh -c "[ \"\$(${P[*]} inspect -f '{{.State.ExitCode}}' $cid)\" = 0 ]"
"${P[@]}" rm -f "$cid" >/dev/null
$CTL unset cgroup /sys/fs/cgroup/gplc
rmdir /sys/fs/cgroup/gplc /sys/fs/cgroup/gpbe 2>/dev/null
left=$(ct_rules)
tap_check "no container rule and no record left ($left rules)" sh -c "[ '$left' = 0 ] && [ -z \"\$(ls $RUNDIR)\" ]"

# 4. An invalid value refuses the container with one line.
for v in "${refused[@]}"; do
	: >$W/hook.err
	out=$("${RUN[@]}" --rm --annotation "$ANN=$v" --annotation run.oci.hooks.stderr=$W/hook.err \
		gpbb echo started 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ "$out" = "${out/started/}" ] && [ "$(wc -l <$W/hook.err)" = 1 ] &&
	   grep -q "annotation $ANN=\"$v\" refused: expected low, normal, high or 0..15" $W/hook.err; then
		tap_ok "$ANN=\"$v\" refused (podman exit $rc) with one line"
	else
		tap_not_ok "$ANN=\"$v\" refused (podman exit $rc) with one line"
		printf '# %s\n' "$out" "stderr of the hook:" "$(cat $W/hook.err)"
	fi
done
tap_diag "podman says: $(echo "$out" | tail -n 1)"
tap_diag "the hook says: $(cat $W/hook.err)"
tap_check "no rule and no record after the refusals" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ -z \"\$(ls $RUNDIR)\" ]"

# 5. No annotation: the hook does not run (hooks.d matches the annotation)
# and, run anyway, does nothing.
n=$(wc -l <$LOG)
out=$("${RUN[@]}" --rm --privileged gpbb /gp/gpreemptctl --json list 2>&1)
tap_check "no annotation: no rule, no log line" sh -c "[ '$(echo "$out" | jq length)' = 0 ] && [ \$(wc -l <$LOG) = $n ]"
tap_check "no annotation: hook create on its state exits 0 and records nothing" sh -c \
	"echo '{\"ociVersion\":\"1.0\",\"id\":\"plain1\",\"pid\":$$,\"status\":\"created\",\"annotations\":{}}' |
	 $CTL hook create && [ ! -e $RUNDIR/plain1 ]"

# 6. The admin cap: container max_priority in gpreempt.conf.
echo "container max_priority=normal" >$CONF
out=$("${RUN[@]}" --rm --privileged --annotation $ANN=high gpbb /gp/gpreemptctl --json list 2>/dev/null |
	jq -r '.[] | select(.kind == "container" and .target == "/sys/fs/cgroup") | .priority')
tap_check "container max_priority=normal: high lowered to 7" test "$out" = 7
tap_check "the hook logged the lowering" grep -q "$ANN=high lowered to 7" $LOG
echo "container max_priority=15" >$CONF
out=$("${RUN[@]}" --rm --privileged --annotation $ANN=15 gpbb /gp/gpreemptctl --json list 2>/dev/null |
	jq -r '.[] | select(.kind == "container" and .target == "/sys/fs/cgroup") | .priority')
tap_check "container max_priority=15: 15 granted" test "$out" = 15
echo "container max_priority=urgent" >$CONF
out=$("${RUN[@]}" --rm --annotation $ANN=high gpbb echo started 2>&1)
tap_check "a bad container line in gpreempt.conf refuses annotated containers" \
	sh -c "[ '${out/started/}' = '$out' ] && grep -q 'gpreempt.conf:1: container max_priority=urgent out of range' $LOG"
tap_check_fails "apply refuses the bad container line" $CTL apply $CONF
printf 'container max_priority=high\n' >$CONF
# apply does not remove a running container's rule.
sid=$("${RUN[@]}" -d --annotation $ANN=high gpbb sleep 600)
tap_check "apply accepts 'container max_priority=high'" $CTL apply $CONF
tap_check "apply keeps a running container's rule" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 1 ]"
"${P[@]}" rm -f -t 0 "$sid" >/dev/null
tap_check "podman rm -f: the rule is gone" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ -z \"\$(ls $RUNDIR)\" ]"

# 7. A missed poststop: the record's cgroup is gone; hook gc (and the next
# create) removes the rule.
mkdir /sys/fs/cgroup/gone.scope
sh -c 'echo $$ > /sys/fs/cgroup/gone.scope/cgroup.procs; exec sleep 60' &
sp=$!
sleep 0.2
echo "{\"ociVersion\":\"1.0\",\"id\":\"missed1\",\"pid\":$sp,\"status\":\"created\",\"annotations\":{\"$ANN\":\"high\"}}" |
	$CTL hook --log $LOG create
tap_check "a hook create on a scratch cgroup sets its rule" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 1 ]"
kill $sp; wait $sp 2>/dev/null
rmdir /sys/fs/cgroup/gone.scope
tap_check "hook gc removes the rule of a cgroup gone without poststop" \
	sh -c "$CTL hook gc | grep -q '^1 stale' && [ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ ! -e $RUNDIR/missed1 ]"

# A container created again under the same id in another cgroup (a restart
# whose poststop never ran): its earlier rule goes, the new one is set.
mkdir /sys/fs/cgroup/r1.scope /sys/fs/cgroup/r2.scope
for d in r1 r2; do
	sh -c "echo \$\$ > /sys/fs/cgroup/$d.scope/cgroup.procs; exec sleep 60" &
	eval "p_$d=\$!"
done
sleep 0.2
for d in r1 r2; do
	eval "pid=\$p_$d"
	echo "{\"id\":\"again1\",\"pid\":$pid,\"status\":\"created\",\"annotations\":{\"$ANN\":\"low\"}}" |
		$CTL hook --log $LOG create
done
tap_check "created again in another cgroup: only the new cgroup has a rule" \
	sh -c "$CTL --json list | jq -e '[.[] | select(.kind == \"container\")] | length == 1 and .[0].target == \"/sys/fs/cgroup/r2.scope\"'"
echo '{"id":"again1","status":"stopped"}' | $CTL hook --log $LOG poststop
tap_check "its poststop: no rule left" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ]"
kill $p_r1 $p_r2; wait $p_r1 $p_r2 2>/dev/null
rmdir /sys/fs/cgroup/r1.scope /sys/fs/cgroup/r2.scope

# 8. The loop: containers come and go, no rule is left.
: >$W/loop.log
t0=$(date +%s.%N)
fails=0
for i in $(seq "$LOOP"); do
	p=$(( i % 16 ))
	"${RUN[@]}" --rm --annotation $ANN=$p gpbb true >>$W/loop.log 2>&1 || fails=$((fails + 1))
done
t1=$(date +%s.%N)
tap_check "$LOOP annotated containers ran (podman run --rm)" test $fails = 0
left=$(ct_rules)
tap_check "after $LOOP containers: stale container rules = 0, records = 0" sh -c "[ '$left' = 0 ] && [ \$(ls $RUNDIR | wc -l) = 0 ]"
tap_diag "loop: $LOOP containers in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s (%.2f s each)", b - a, (b - a) / '"$LOOP"' }'), stale rules $left"
# What the hook costs a container start, exec included: create + poststop
# as the runtime runs them (hooks.d: no --log), on a scratch cgroup, against
# the exec of /bin/true.
COST=${GP_OCI_COST:-50}
mkdir /sys/fs/cgroup/cost.scope
sh -c 'echo $$ > /sys/fs/cgroup/cost.scope/cgroup.procs; exec sleep 600' &
cp=$!
sleep 0.2
st="{\"id\":\"cost1\",\"pid\":$cp,\"status\":\"created\",\"annotations\":{\"$ANN\":\"high\"}}"
t2=$(date +%s.%N)
for i in $(seq "$COST"); do
	echo "$st" | $CTL hook create && echo '{"id":"cost1","status":"stopped"}' | $CTL hook poststop
done
t3=$(date +%s.%N)
for i in $(seq "$COST"); do /bin/true; /bin/true; done
t4=$(date +%s.%N)
kill $cp; wait $cp 2>/dev/null
rmdir /sys/fs/cgroup/cost.scope
tap_check "$COST hook create + poststop pairs: no rule left" \
	sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ ! -e $RUNDIR/cost1 ]"
awk -v a="$t2" -v b="$t3" -v c="$t4" -v n="$COST" 'BEGIN {
	printf "# hook cost per container (create + poststop, exec included): %.1f ms; two execs of /bin/true: %.1f ms\n",
		1000 * (b - a) / n, 1000 * (c - b) / n }'
grep -o 'in [0-9.]* ms' $LOG | tail -n $((2 * LOOP)) | awk '{ print $2 }' | sort -n |
	awk '{ v[NR] = $1; s += $1 } END { if (NR) printf "# hook latency over %d calls (create+poststop): mean %.2f ms, median %.2f ms, max %.2f ms\n", NR, s / NR, v[int((NR + 1) / 2)], v[NR] }'

# Concurrent starts and stops (records, rules_gen bumps): 4 at a time.
for w in 1 2 3 4; do
	( for i in 1 2 3 4 5; do "${RUN[@]}" --rm --annotation $ANN=$((w + i)) gpbb true >/dev/null 2>&1 || echo fail; done ) >$W/par.$w &
done
wait
tap_check "20 containers, 4 at a time: all ran, no stale rule, no record" \
	sh -c "! grep -q fail $W/par.* && [ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ] && [ -z \"\$(ls $RUNDIR)\" ]"

# 9. podman kube play: the annotation in the pod YAML.
cat >$W/pod.yaml <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: gp-infer
  annotations:
    $ANN: high
spec:
  restartPolicy: Never
  containers:
  - name: lc
    image: localhost/gpbb:latest
    command: ["sleep", "600"]
EOF
n=$(wc -l <$LOG)
kout=$("${P[@]}" kube play --network none $W/pod.yaml 2>&1)
krc=$?
c=$("${P[@]}" ps -a --format '{{.ID}}' --filter name=gp-infer-lc | head -n 1)
ann=$([ -n "$c" ] && "${P[@]}" inspect -f '{{json .Config.Annotations}}' "$c")
tap_check "podman kube play: the pod's annotation is in the container's OCI annotations" \
	sh -c "echo '$ann' | jq -e '.[\"$ANN\"] == \"high\"'"
tap_diag "annotations podman 4.3.1 passes from the pod YAML: $ann"
if [ $krc -eq 0 ]; then
	if wait_for 10 sh -c "tail -n +$((n + 1)) $LOG | grep -q 'cgroup rule .* priority 11'"; then
		tap_ok "podman kube play: the hook set the rule at 11"
	else
		tap_not_ok "podman kube play: the hook set the rule at 11"
		tail -n +$((n + 1)) $LOG | sed 's/^/#   /'
	fi
else
	# In this guest a pod's infra container does not start (crun: mknod
	# /dev/null: EPERM; the same with podman pod create), so the pod's
	# containers never reach createRuntime.
	tap_skip "podman kube play: the hook set the rule at 11" \
		"the pod did not start here (exit $krc): $(echo "$kout" | grep -m 1 -o 'crun: .*')"
fi
"${P[@]}" kube down $W/pod.yaml >/dev/null 2>&1 || "${P[@]}" pod rm -f gp-infer >/dev/null 2>&1
# Only a pod that started can leave a rule behind.
if [ $krc -eq 0 ]; then
	tap_check "kube down: no rule left" sh -c "[ \$($CTL --json list | jq '[.[] | select(.kind == \"container\")] | length') = 0 ]"
else
	tap_skip "kube down: no rule left" "the pod never started"
fi

tap_check "rmmod gpreempt kfdsim" sh -c "rmmod gpreempt && rmmod kfdsim"
tap_dmesg_clean "no kernel warnings"
tap_diag "hook log: $(wc -l <$LOG) lines; last: $(tail -n 1 $LOG)"
tap_done
