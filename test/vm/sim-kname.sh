#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel names and the modelled cost table (threat-model row 68).
# build/hip-work kname (Debian's HIP 5.2.3, unmodified) launches its `work`
# kernel and a second one, scale(n, out), whose first kernarg is a count.
# ROCr copies the code object into VRAM with its blit kernel (kfdsim does
# the copy); kfdsim reads each dispatch's kernel name from that image
# (test/kfdsim/kname.c) and debugfs kernels counts dispatches and modelled
# ns per name.  `work` keeps the first-kernarg rule (ns per workgroup);
# scale, named but in no row of debugfs costs, costs kname_default_wg_ns
# per workgroup; with a row "_Z5scale a b 0" it costs a + b * n.  A
# malformed table write is refused and leaves the table as it was.
# Runs inside the test guest from the repository root; ends with kfdsim
# unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
HIP=build/hip-work
tap_plan 13

kfdclient_begin kname
kfdclient_need $HIP skip "build/hip-work # SKIP hipcc missing (Debian's hipcc, libamdhip64-dev: run scripts/setup)"

N=4 WGS=16 NS=50000 SN=2000
# kstat NAME FIELD: dispatches (1) or ns (2) of NAME in debugfs kernels.
kstat() { awk -v k="$1" -v f="$2" '$3 == k {print $f; found=1} END {if (!found) print 0}' $DBG/kernels; }
# run: hip-work kname from zeroed counters, its output in $T/out.
run() {
	echo 0 >$DBG/kernels
	HSA_ENABLE_SDMA=0 run_bounded 120 $HIP kname $N $WGS $NS $SN >$T/out 2>$T/err
	grep -v 'amdgpu_get_auth' $T/err | head -5 | sed 's/^/# /'
	sed 's/^/# kernels: /' $DBG/kernels
}

tap_check "insmod kfdsim num_cu=8 kname_default_wg_ns=3000" insmod $KO num_cu=8 kname_default_wg_ns=3000
tap_check "debugfs costs: labelled modelled, empty" eval "grep -q '^# modelled' $DBG/costs && ! grep -qv '^#' $DBG/costs"

# --- no table row: scale is named, costs the default ------------------------
run
tap_check "hip-work kname: every HIP call succeeds, $N + $N launches (exit $rc)" \
	eval "test $rc = 0 && has $T/out launched_work $N && has $T/out launched_scale $N"
tap_check "row 68: the work kernel is named _Z4workyyPi from the loaded code object, $N dispatches" \
	test "$(kstat _Z4workyyPi 1)" = $N
tap_check "row 68: work keeps its kernarg's duration: $N x $WGS x $NS ns = $(kstat _Z4workyyPi 2)" \
	test "$(kstat _Z4workyyPi 2)" = $((N * WGS * NS))
tap_check "row 68: the second kernel is named _Z5scalejPi, $N dispatches" \
	test "$(kstat _Z5scalejPi 1)" = $N
tap_check "row 68: in no row, scale costs kname_default_wg_ns (3000), not its first kernarg ($SN): $(kstat _Z5scalejPi 2) ns" \
	test "$(kstat _Z5scalejPi 2)" = $((N * WGS * 3000))

# --- a row for scale: a + b * u32(kernarg + 0) -------------------------------
tap_check "debugfs costs takes a table, longest prefix first" \
	eval "printf '# a comment\n_Z5 1 1 0\n_Z5scale 1000 3 0\n' >$DBG/costs && sed -n 3p $DBG/costs | grep -qx '_Z5scale 1000 3 0'"
run
tap_check "row 68: with the row, scale costs 1000 + 3 x $SN per workgroup: $(kstat _Z5scalejPi 2) ns" \
	test "$(kstat _Z5scalejPi 2)" = $((N * WGS * (1000 + 3 * SN)))
tap_check "row 68: work still follows its kernarg (the _Z5 row is not for it): $(kstat _Z4workyyPi 2) ns" \
	test "$(kstat _Z4workyyPi 2)" = $((N * WGS * NS))
tap_check "row 68: a malformed costs line is refused, the table kept" \
	eval "! printf '_Z5scale 1 2\n' >$DBG/costs 2>/dev/null && grep -qx '_Z5scale 1000 3 0' $DBG/costs"
tap_check "kfdsim idle, rmmod kfdsim" eval "wait_for 10 ks_idle && rmmod kfdsim"
tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
