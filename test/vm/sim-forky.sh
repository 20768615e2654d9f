#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The forky root: ROCm 6.4 and llama.cpp on kfdsim.  The root
# (.cache/root-forky, or GP_FORKY_ROOT) is opt-in: GP_SETUP_FORKY=1
# scripts/setup, or make setup-forky; without it every check is skipped,
# with the reason.  Checks the versions setup recorded; the gfx908 code
# objects kfdsim's GPU needs (every offload bundle of libggml-hip.so holds
# one, rocBLAS keeps its gfx908 Tensile files) and that the other targets'
# Tensile files are gone (setup's dpkg excludes); runs, chrooted (a mount
# namespace with the guest's /dev, /proc, /sys and /tmp bound in,
# HOME=/tmp), test-llama-archs to write the random-weight llama model and
# llama-completion on it on the guest CPU (-ngl 0: no kfdsim loaded, so
# HIP finds no device), with their times.  Then against kfdsim: rocminfo
# 7.2.4 lists its gfx908 agent (with a stand-in /sys/module/amdgpu), ggml's
# HIP backend lists the GPU with its VRAM (AVAILABLE_MEMORY), and
# llama-completion -ngl 99 runs every layer on kfdsim to the end (its
# kernels modelled, its tokens garbage); the kernels kfdsim named from the
# code objects are printed.  Runs inside
# the test guest from the repository root (test/run-vm sim).
. test/lib/tap.sh
. test/lib/kfdclient.sh
tap_plan 13
kfdclient_begin forky
R=$(readlink -f "${GP_FORKY_ROOT:-.cache/root-forky}")
LIB=$R/usr/lib/x86_64-linux-gnu
TESTS=/usr/libexec/x86_64-linux-gnu/llama.cpp-tests

if [ ! -f "$R/.complete" ]; then
	tap_skip_rest "no forky root at $R (opt-in: GP_SETUP_FORKY=1 scripts/setup, or make setup-forky)"
	exit 0
fi

# in_forky COMMAND...: COMMAND chrooted into the root, in a mount namespace
# of its own with the guest's /dev, /proc, /sys and /tmp (the root itself
# is read-only here: the host's file system over 9p).
in_forky() {
	unshare -m --propagation private sh -c 'R=$1; shift
		mount --rbind /dev "$R/dev" && mount --rbind /proc "$R/proc" &&
		mount --rbind /sys "$R/sys" && mount --bind /tmp "$R/tmp" &&
		exec chroot "$R" env HOME=/tmp "$@"' sh "$R" "$@"
}
# in_forky_amdgpu COMMAND...: in_forky, with a stand-in /sys/module that
# has amdgpu/initstate "live": rocminfo reads it before it starts ROCr, and
# only amdgpu has it (kfdsim cannot: its own check for amdgpu reads the same
# path).  The stand-in is seen by COMMAND alone.
in_forky_amdgpu() {
	mkdir -p $T/module/amdgpu && echo live >$T/module/amdgpu/initstate
	unshare -m --propagation private sh -c 'R=$1 M=$2; shift 2
		mount --rbind /dev "$R/dev" && mount --rbind /proc "$R/proc" &&
		mount --rbind /sys "$R/sys" && mount --bind "$M" "$R/sys/module" &&
		mount --bind /tmp "$R/tmp" &&
		exec chroot "$R" env HOME=/tmp "$@"' sh "$R" $T/module "$@"
}
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# --- what setup installed ----------------------------------------------------
sed 's/^/# VERSIONS: /' "$R/VERSIONS"
tap_check "VERSIONS records llama.cpp, ggml's HIP backend, HIP, ROCr, rocBLAS and rocminfo" \
	eval 'for p in llama.cpp-tools llama.cpp-tests libggml0-backend-hip libamdhip64-6 \
		libhsa-runtime64-1 librocblas4 rocminfo; do
		grep -q "^$p [0-9]" "$R/VERSIONS" || { echo "no $p"; exit 1; }; done'

# --- the gfx908 code objects ---------------------------------------------------
arch=$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${X-Rocm-Gpu-Architecture}' \
	libggml0-backend-hip 2>&1)
tap_diag "libggml0-backend-hip X-Rocm-Gpu-Architecture: $arch"
tap_check "libggml0-backend-hip was built for gfx908 (its X-Rocm-Gpu-Architecture)" \
	eval 'grep -qw gfx908 <<<"$arch"'
# Every __CLANG_OFFLOAD_BUNDLE__ the fat binary's wrappers (.hipFatBinSegment)
# point to, read from its header only: the file is 1.2 GB.
bundles() {
	python3 - "$1" <<'PY'
import struct, sys
f = open(sys.argv[1], 'rb')
eh = f.read(64)
shoff, = struct.unpack_from('<Q', eh, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', eh, 0x3a)
f.seek(shoff)
sh = [struct.unpack('<IIQQQQIIQQ', f.read(shentsize)) for _ in range(shnum)]
f.seek(sh[shstrndx][4])
strtab = f.read(sh[shstrndx][5])
sec = {strtab[s[0]:strtab.index(b'\0', s[0])].decode(): s for s in sh}
seg, fat = sec['.hipFatBinSegment'], sec['.hip_fatbin']
f.seek(seg[4])
wrappers = f.read(seg[5])
n = with908 = size908 = 0
targets = set()
for w in range(0, len(wrappers), 24):
    magic, _, ptr = struct.unpack_from('<IIQ', wrappers, w)
    if magic != 0x48495046:
        continue
    f.seek(ptr - fat[3] + fat[4])
    if f.read(24) != b'__CLANG_OFFLOAD_BUNDLE__':
        sys.exit('no offload bundle at 0x%x' % ptr)
    n += 1
    found = False
    for _ in range(struct.unpack('<Q', f.read(8))[0]):
        _, size, idlen = struct.unpack('<QQQ', f.read(24))
        tid = f.read(idlen).decode()
        if '--gfx' in tid:
            targets.add(tid.rsplit('-', 1)[-1])
        if tid.endswith('--gfx908') and size > 0:
            found = True
            size908 += size
    with908 += found
print('bundles %d with_gfx908 %d gfx908_mb %.0f targets %s' %
      (n, with908, size908 / 2**20, ' '.join(sorted(targets))))
PY
}
fb=$(bundles "$LIB/ggml/backends0/libggml-hip.so" 2>&1)
tap_diag "libggml-hip.so: $fb"
tap_check "libggml-hip.so: every offload bundle holds a gfx908 code object" \
	eval 'set -- $fb; [ "$1" = bundles ] && [ "$2" -gt 0 ] && [ "$4" = "$2" ]'
tensile=$(echo "$LIB"/rocblas/*/library)
n908=$(find "$tensile" -name '*gfx908*' | wc -l)
others=$(find "$tensile" -name '*gfx*' ! -name '*gfx908*' | wc -l)
tap_diag "rocBLAS Tensile ($tensile): $n908 gfx908 files, $(du -sh "$tensile" | cut -f1); $others of other targets"
tap_check "rocBLAS keeps its gfx908 Tensile files (the lazy library and code objects)" \
	eval '[ -f "$tensile/TensileLibrary_lazy_gfx908.dat" ] && [ "$n908" -gt 100 ] &&
		ls "$tensile" | grep -q "gfx908\.\(co\|hsaco\)$"'
tap_check "rocBLAS has no Tensile file for another target (setup's dpkg excludes)" \
	eval '[ "$others" = 0 ] || { find "$tensile" -name "*gfx*" ! -name "*gfx908*" | head -n 5; false; }'

# --- llama.cpp on the guest CPU ---------------------------------------------------
M=$T/model
mkdir -p $M
t0=$(date +%s.%N)
in_forky $TESTS/test-llama-archs -a '^llama$' -o $M >$T/archs 2>&1
rc=$?
tap_diag "test-llama-archs: exit $rc, $(secs "$t0") s"
tap_check "test-llama-archs (chrooted) writes the random-weight llama model" \
	eval '[ $rc = 0 ] && [ -s $M/llama-dense.gguf ] || { tail -n 5 $T/archs; false; }'
t0=$(date +%s.%N)
in_forky llama-completion -m $M/llama-dense.gguf -p hello -n 4 --temp 0 -ngl 0 -no-cnv \
	</dev/null >$T/completion 2>&1
rc=$?
tap_diag "llama-completion -n 4 -ngl 0: exit $rc, $(secs "$t0") s"
grep -E 'ggml_cuda_init|common_perf_print: +(load|eval|total) time' $T/completion | sed 's/^/# /'
tap_check "llama-completion (chrooted) generates 4 tokens on the CPU" \
	eval '[ $rc = 0 ] && grep -qE "eval time = .* / +4 runs" $T/completion ||
		{ tail -n 5 $T/completion; false; }'

# --- rocminfo against kfdsim -------------------------------------------------------
tap_check "insmod kfdsim" insmod "$KO"
t0=$(date +%s.%N)
in_forky_amdgpu timeout 300 rocminfo >$T/rocminfo 2>&1
rc=$?
tap_diag "rocminfo against kfdsim: exit $rc, $(secs "$t0") s, $(grep -c '' $T/rocminfo) lines:"
head -n 30 $T/rocminfo | sed 's/^/#   /'
tap_check "rocminfo (ROCm 6.4) lists kfdsim's gfx908 GPU agent (exit $rc)" \
	eval '[ $rc = 0 ] && grep -qE "^ *Name: +gfx908 *$" $T/rocminfo'
# rocminfo gives up before ROCr when /sys/module/amdgpu is absent (kfdsim is
# not amdgpu); ggml's HIP backend goes through HIP and ROCr to libhsakmt
# and libdrm: what it says is the next blocker (printed, not asserted).
t0=$(date +%s.%N)
in_forky timeout 300 llama-cli --list-devices >$T/devices 2>&1
rc=$?
tap_diag "llama-cli --list-devices against kfdsim: exit $rc, $(secs "$t0") s:"
grep -v '^$' $T/devices | head -n 20 | sed 's/^/#   /'
tap_check "llama.cpp's HIP backend (HIP 6.4) lists kfdsim's GPU with its VRAM (exit $rc)" \
	eval '[ $rc = 0 ] && grep -qE "ROCm0: AMD Instinct MI100 \(1024 MiB, [0-9]+ MiB free\)" $T/devices'
# llama.cpp on the simulated GPU: every layer offloaded (-ngl 99), HIP
# graphs off.  kfdsim runs each ggml kernel as a short modelled dispatch
# (no ISA runs), so the tokens are garbage; the run, its queues and its
# dispatches are real.
ks() { awk -v k="$1" '$1 == k {print $2}' /sys/kernel/debug/kfdsim/stats; }
d0=$(ks aql_dispatches) q0=$(awk '$1 == "CREATE_QUEUE" {print $2}' /sys/kernel/debug/kfdsim/kfd_ioctls 2>/dev/null)
t0=$(date +%s.%N)
echo >/sys/kernel/debug/kfdsim/kernels 2>/dev/null
# Every code object copied by the CPU (HSA_CO_DMACOPY_SIZE), so that its
# bytes are in VRAM for kfdsim to name the kernels from.
in_forky env GGML_CUDA_DISABLE_GRAPHS=1 HSA_CO_DMACOPY_SIZE=1000000000 timeout 600 \
	llama-completion -m $M/llama-dense.gguf \
	-p hello -n 4 --temp 0 -ngl 99 -no-cnv >$T/gpu 2>&1
rc=$?
tap_diag "llama-completion -ngl 99 on kfdsim: exit $rc, $(secs "$t0") s:"
grep -E 'offload|ROCm|error|fail|eval time|total time' $T/gpu | head -n 20 | sed 's/^/#   /'
cat /sys/kernel/debug/kfdsim/kernels >$T/kernels 2>/dev/null
head -n 12 $T/kernels | sed 's/^/#   kernels: /'
d1=$(ks aql_dispatches) q1=$(awk '$1 == "CREATE_QUEUE" {print $2}' /sys/kernel/debug/kfdsim/kfd_ioctls 2>/dev/null)
tap_check "llama-completion -ngl 99 (HIP 6.4) runs on kfdsim to the end: exit $rc, 4 tokens, $((d1 - d0)) kernels dispatched on $((${q1:-0} - ${q0:-0})) new queues" \
	eval '[ $rc = 0 ] && grep -q "eval time = .* / *4 runs" $T/gpu && [ $((d1 - d0)) -gt 100 ] && [ $((${q1:-0} - ${q0:-0})) -ge 1 ]'
tap_check "kfdsim named ggml's kernels from the code objects ROCm 6.4 loaded (rms_norm_f32, rope_norm; $(grep -c '^[0-9]' $T/kernels) names)" \
	eval 'grep -q " _ZL12rms_norm_f32" $T/kernels && grep -q " _ZL9rope_norm" $T/kernels'
tap_diag "KFD ioctls: $(tr '\n' ' ' </sys/kernel/debug/kfdsim/kfd_ioctls 2>/dev/null | head -c 600)"
tap_check "rmmod kfdsim" rmmod kfdsim
tap_done
