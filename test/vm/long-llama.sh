#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# llama.cpp under gpreempt on kfdsim (issue 42): llama-server (LC, a cgroup
# with a `high` rule) and llama-finetune (BE, another cgroup, no rule), both
# unmodified from the forky root (ROCm 6.4, HIP, every layer on the GPU:
# -ngl 99) on the random-weight llama model test-llama-archs writes; both
# at ROCr's KFD priority 7, so the hardware cannot tell them apart.  ggml's
# kernels cost what test/kfdsim/costs-ggml-mi100 models (MI100 bandwidth
# and fp32 rate, scaled: see that file).  gpreempt is loaded before either
# starts, so it learns every queue at its creation.  The same Poisson
# requests (test/lib/llama-load.py: greedy, a fixed number of tokens,
# loopback) run twice beside the fine-tuning: gpreempt in shadow mode
# (enable=off: it parks nothing, the hardware's round-robin of equal
# priorities alone) and enabled.  Checked: every request answered in both;
# both processes' queues, ROCr's and HIP's internal ones included, in
# gpreemptctl's status and top; BE never parked in shadow mode, parked and
# unparked while LC had work with gpreempt, and running again after; LC's
# p99 time to first token below shadow mode's; then, with BE stopped
# (SIGSTOP) and its queues drained, every packet of every queue of both
# processes retired exactly once (kfdsim's per-queue counts) and no
# workgroup dropped.  Latencies and BE's steps a second are printed, not
# bounded (make bench-llama has them).  Skipped, with the reason,
# without the forky root (GP_SETUP_FORKY=1 scripts/setup) or in a guest
# of less than 5 GiB.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
tap_plan 19
kfdclient_begin llama
N=${GP_LLAMA_REQUESTS:-20}
NP=4
GAP=4
S=${GP_LLAMA_COST_SCALE:-1000}
CGL=/sys/fs/cgroup/llama-lc CGB=/sys/fs/cgroup/llama-be
. test/lib/llama.sh

if [ ! -f "$R/.complete" ]; then
	tap_skip_rest "no forky root at $R (opt-in: GP_SETUP_FORKY=1 scripts/setup, or make setup-forky)"
	exit 0
fi
# Two ROCm processes with ggml's HIP backend: 4 GiB are not enough.
mem=$(awk '$1 == "MemTotal:" {print int($2 / 1024)}' /proc/meminfo)
if [ "$mem" -lt 5000 ]; then
	tap_skip_rest "the guest has $mem MiB; the test needs 6 GiB (GP_VM_MEM=6G)"
	exit 0
fi

secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
steps() { llama_steps $T/ft; }
# kq PASID: kfdsim's queue lines of a process.
kq() { grep " pasid=$1 " $DBG/queues; }
pasid_of() {
	$CTL --json status 2>/dev/null | jq -r --argjson t "$1" '[.queues[] | select(.tgid == $t)][0].pasid // empty'
}
nq_gp() { $CTL --json status 2>/dev/null | jq --argjson t "$1" '[.queues[] | select(.tgid == $t)] | length'; }
nq_top() { $CTL top -n 1 2>/dev/null | awk -v p="$1" '$1 == p' | wc -l; }
# drained PASID: every queue of the process has retired what was written.
drained() {
	kq "$1" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["rptr"] != v["wptr"] || v["running"] != 0) bad = 1 } END { exit bad }'
}
# once PASID: each queue of the process fetched each packet once and retired
# it once: rptr = wptr = packets retired = kernel dispatches + barriers +
# vendor packets (SDMA queues: rptr = wptr, no packet stopped at an error);
# every CWSR save restored.  Prints the queues that fail.
once() {
	kq "$1" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		ok = v["rptr"] == v["wptr"] && v["saves"] == v["restores"]
		if (v["type"] == "compute")
			ok = ok && v["packets"] == v["rptr"] &&
				v["dispatches"] + v["barriers"] + v["vendor"] == v["packets"]
		else
			ok = ok && v["sdma_error"] == 0
		if (!ok) { print; bad = 1 } } END { exit bad }'
}
# give_up WHY: the programs killed, the modules unloaded, each check left failed.
give_up() {
	kill -KILL $srv ${ft:-} 2>/dev/null
	wait $srv ${ft:-} 2>/dev/null
	rmmod gpreempt
	wait_for 30 ks_idle
	rmmod kfdsim
	rmdir $CGL $CGB 2>/dev/null
	tap_bail "$1"
}
# load NAME: the Poisson requests, their summary in $T/NAME.
load() { llama_load $T/$1 "$N" $GAP $NP; }

dmesg -C
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
rmdir $CGL $CGB 2>/dev/null
mkdir -p $CGL $CGB
M=$T/model
mkdir -p $M
llama_model $M
tap_check "test-llama-archs writes the random-weight llama model" \
	eval '[ -s $M/llama-dense.gguf ] || { tail -n 5 $M/archs; false; }'

insmod $KO num_cu=8 kname_default_wg_ns=$((100 * S)) || tap_bail "insmod kfdsim"
llama_costs $S
tap_check "kfdsim takes the modelled cost table ($(grep -c '^[^#]' $DBG/costs) rows)" \
	test "$(grep -c '^[^#]' $DBG/costs)" = "$(grep -c '^[^#]' $LLAMA_COSTS)"
gp_insmod || { rmmod kfdsim; tap_bail "insmod gpreempt"; }
$CTL config enable=off >/dev/null
$CTL set cgroup $CGL high >/dev/null

# --- LC: llama-server -----------------------------------------------------------
t0=$(date +%s.%N)
llama_server $CGL $M $T/srv
wait_for 600 llama_up
tap_check "llama-server (LC, -ngl 99) serves on loopback: $(secs "$t0") s" llama_up
llama_up || { tail -n 5 $T/srv | sed 's/^/# /'; give_up "llama-server did not start"; }
# The first request loads ggml's code objects: not timed.
echo >$DBG/kernels
llama_load $T/warm 1 0.01 $NP
tap_diag "warm-up request: $(tr '\n' ' ' <$T/warm)"
cat $DBG/kernels >$T/kernels.lc

# --- BE: llama-finetune -------------------------------------------------------------
t0=$(date +%s.%N)
llama_finetune $CGB $M $T/ft
be=$ft
wait_for 600 eval '[ "$(steps)" -ge 2 ]'
tap_check "llama-finetune (BE, -ngl 99) trains: $(steps) steps, $(secs "$t0") s" test "$(steps)" -ge 2
[ "$(steps)" -ge 2 ] || { tail -n 5 $T/ft | sed 's/^/# /'; give_up "llama-finetune did not train"; }
s0=$(steps) t0=$(date +%s.%N)
sleep 20
be_alone=$(awk -v n=$(($(steps) - s0)) -v t="$(secs "$t0")" 'BEGIN { printf "%.2f", n / t }')
tap_diag "BE alone: $be_alone steps/s (simulation, TCG guest)"
cat $DBG/kernels >$T/kernels.be
echo >$DBG/kernels

lp=$(pasid_of $srv) bp=$(pasid_of $be)
tap_diag "LC pid $srv pasid $lp: $(kq "$lp" | grep -o 'qid=[0-9]* prio=[0-9]*\|type=[a-z]*' | tr '\n' ' ')"
tap_diag "BE pid $be pasid $bp: $(kq "$bp" | grep -o 'qid=[0-9]* prio=[0-9]*\|type=[a-z]*' | tr '\n' ' ')"
tap_check "every queue of both processes, internal ones included, in gpreemptctl status and top (LC $(kq "$lp" | wc -l)/$(nq_gp $srv)/$(nq_top $srv), BE $(kq "$bp" | wc -l)/$(nq_gp $be)/$(nq_top $be))" \
	eval '[ -n "$lp" ] && [ -n "$bp" ] && n=$(kq "$lp" | wc -l) && [ "$n" -ge 1 ] &&
		[ "$(nq_gp $srv)" = "$n" ] && [ "$(nq_top $srv)" = "$n" ] &&
		n=$(kq "$bp" | wc -l) && [ "$n" -ge 1 ] &&
		[ "$(nq_gp $be)" = "$n" ] && [ "$(nq_top $be)" = "$n" ]'
tap_check "LC's queues at 12 from the cgroup rule, BE's at 7" \
	eval '$CTL --json status | jq -e --argjson l $srv --argjson b $be \
		"all(.queues[] | select(.tgid == \$l); .priority == 12 and .source == \"cgroup\") and
		 all(.queues[] | select(.tgid == \$b); .priority == 7)" >/dev/null'

# --- the requests: shadow mode (hardware only), then gpreempt -------------------------
pre0=$(psum $be preempts) sh0=$(psum $be shadow_parks)
s0=$(steps) t0=$(date +%s.%N)
load hw
hw_rc=$?
be_hw=$(awk -v n=$(($(steps) - s0)) -v t="$(secs "$t0")" 'BEGIN { printf "%.2f", n / t }')
pre1=$(psum $be preempts) sh1=$(psum $be shadow_parks)
tap_diag "shadow mode: LC $(tr '\n' ' ' <$T/hw); BE $be_hw steps/s; BE's would-be parks $((sh1 - sh0))"
tap_check "shadow mode (hardware only): all $N requests answered, $NP tokens each" \
	eval '[ $hw_rc = 0 ] || { cat $T/hw.err | head -n 5; false; }'
tap_check "shadow mode: BE never parked ($((pre1 - pre0)) parks), though gpreempt would have ($((sh1 - sh0)))" \
	test $((pre1 - pre0)) = 0 -a $((sh1 - sh0)) -gt 0
cat $DBG/kernels >$T/kernels.hw
echo >$DBG/kernels

$CTL config enable=on >/dev/null
pre=$(psum $be preempts) res=$(psum $be resumes)
s0=$(steps) t0=$(date +%s.%N)
load gp
gp_rc=$?
be_gp=$(awk -v n=$(($(steps) - s0)) -v t="$(secs "$t0")" 'BEGIN { printf "%.2f", n / t }')
pre=$(($(psum $be preempts) - pre)) res=$(($(psum $be resumes) - res))
tap_diag "gpreempt: LC $(tr '\n' ' ' <$T/gp); BE $be_gp steps/s, parked $pre, unparked $res"
tap_check "gpreempt: all $N requests answered, $NP tokens each" \
	eval '[ $gp_rc = 0 ] || { cat $T/gp.err | head -n 5; false; }'
be_cycled "$pre" "$res"
tap_check "BE running again after LC's requests" wait_for 30 all_running $be
s1=$(steps)
tap_check "BE trains again after LC's requests" wait_for 60 eval '[ "$(steps)" -gt $s1 ]'
hw99=$(field $T/hw ttft_p99) gp99=$(field $T/gp ttft_p99)
tap_check "LC's p99 time to first token with gpreempt ($gp99 ms) below shadow mode's ($hw99 ms)" \
	awk -v g="$gp99" -v h="$hw99" 'BEGIN { exit !(g > 0 && h > 0 && g < h) }'
tap_diag "LC per-token p99: gpreempt $(field $T/gp tpot_p99) ms, shadow $(field $T/hw tpot_p99) ms; BE steps/s alone $be_alone, beside LC: shadow $be_hw, gpreempt $be_gp (simulation, TCG guest)"
# Where the modelled time went (kfdsim's names, 63 characters at most).
for k in lc be hw; do
	sed 1d $T/kernels.$k | sed "s/^/#   kernels ($k): /"
done
# Tensile's K (SizesSum) is a u32 at 4 mod 8 in the kernarg: read, it
# gives every GEMM its modelled time; unread, the GEMMs cost nothing.
gemm=$(cat $T/kernels.be $T/kernels.hw | awk '$3 ~ /^Cijk_/ { n += $1; if ($2 > 0) t += $2 } END { printf "%d %d", n, t / 1e6 }')
tap_check "rocBLAS's GEMMs ran at their modelled cost (dispatches, ms: $gemm)" \
	eval 'set -- $gemm; [ "$1" -gt 0 ] && [ "$2" -gt 0 ]'

# --- exactly once ------------------------------------------------------------------
kill -STOP $be
tap_check "BE stopped (SIGSTOP) and every queue of both processes drained" \
	wait_for 60 eval 'drained $lp && drained $bp'
tap_check "every packet of LC's $(kq "$lp" | wc -l) queues fetched and retired exactly once" once "$lp"
tap_check "every packet of BE's $(kq "$bp" | wc -l) queues fetched and retired exactly once" once "$bp"
tap_check "no workgroup dropped or done twice ($(kstat cwsr_dropped) CWSR saves dropped, $(kstat workgroups_dropped) workgroups)" \
	eval '[ "$(kstat cwsr_dropped)" = 0 ] && [ "$(kstat workgroups_dropped)" = 0 ] && ! dmesg | grep -q "WARNING:"'
tap_diag "LC queues: $(kq "$lp" | grep -o 'qid=[0-9]* .*packets=[0-9]*\|dispatches=[0-9]* utility=[0-9]* barriers=[0-9]* vendor=[0-9]*\|type=[a-z]*' | tr '\n' ' ')"
tap_diag "BE queues: $(kq "$bp" | grep -o 'qid=[0-9]* .*packets=[0-9]*\|dispatches=[0-9]* utility=[0-9]* barriers=[0-9]* vendor=[0-9]*\|type=[a-z]*' | tr '\n' ' ')"
kill -KILL $be
kill -TERM $srv
wait $be $srv 2>/dev/null
$CTL unset cgroup $CGL >/dev/null 2>&1
rmdir $CGL $CGB 2>/dev/null
tap_check "rmmod gpreempt and kfdsim" eval 'rmmod gpreempt && wait_for 30 ks_idle && rmmod kfdsim'
rm -rf "$T"
tap_done
