#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# gpreemptctl doctor on the host, on fake machines: GP_DOCTOR_ROOT points it
# at a tree of /proc, /sys, /boot, /lib/modules, /usr/src, /etc files, and
# PATH at fake modinfo, dkms, mokutil, dmesg, podman and containerd.  A good
# machine passes every check (exit 0); then each failing check on its own
# (exit 7, that check 'fail' with its reason and a fix), warnings (exit 0),
# what an unprivileged user cannot read ('unknown (needs root)', never a
# crash), an empty root, -j output, and the check names in the man page.
# Nothing is loaded.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 65
CTL=${GP_CTL:-$PWD/build/gpreemptctl}
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
[ -x "$CTL" ] || { tap_not_ok "doctor: $CTL built (make tools)"; tap_bail; }
NOBODY=
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	NOBODY="$(command -v setpriv) --reuid 65534 --regid 65534 --clear-groups"

REL=6.12.57+deb13-amd64
R=$tmp/root
BIN=$tmp/bin
KO=/lib/modules/$REL/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko
GP=/lib/modules/$REL/updates/dkms/gpreempt.ko
# Two ELF files with different GNU build ids, for amdgpu.ko and its note.
elf1=$(readlink -f /bin/true) elf2=$(readlink -f /bin/false)
note() { objcopy -O binary --only-section=.note.gnu.build-id "$1" "$2"; }

# fake NAME SCRIPT: a command on the fake PATH (shell, reads $R/fake/*)
fake() { printf '#!/bin/sh\nPATH=/usr/bin:/bin\nF=%s/fake\n%s\n' "$R" "$2" >"$BIN/$1"; chmod 755 "$BIN/$1"; }
put() { mkdir -p "$(dirname "$R$1")" && printf '%b' "$2" >"$R$1"; }

# A machine where every check is ok (Debian 6.12, in-tree amdgpu with BTF,
# one gfx11 GPU (MES), Secure Boot on and gpreempt signed, podman with the hook).
good() {
	rm -rf "$R" "$BIN"
	mkdir -p "$R/fake" "$BIN" "$R/lib/modules/$REL/build" "$R/sys/firmware/efi"
	put /proc/sys/kernel/osrelease "$REL\n"
	put /proc/cpuinfo "processor : 0\nflags : fpu sse ibt\n"
	put /proc/self/mounts "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\nbpf /sys/fs/bpf bpf rw 0 0\n"
	put /proc/kallsyms "0000000000000000 T register_kprobe\n"
	put /proc/modules "amdgpu 16384 0 - Live 0x0000000000000000\n"
	put /proc/sys/kernel/modules_disabled "0\n"
	put /proc/cmdline "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n"
	put /boot/config-$REL "CONFIG_KPROBES=y\n"
	put /sys/kernel/btf/vmlinux ""
	put /sys/kernel/btf/amdgpu ""
	put /sys/kernel/security/lockdown "none [integrity] confidentiality\n"
	put /sys/module/amdgpu/parameters/cwsr_enable "1\n"
	put /sys/module/amdgpu/parameters/sched_policy "0\n"
	put /sys/module/amdgpu/parameters/mes "0\n"
	mkdir -p "$R/sys/module/amdgpu/notes" "$(dirname "$R$KO")"
	note "$elf1" "$R/sys/module/amdgpu/notes/.note.gnu.build-id"
	cp "$elf1" "$R$KO"
	put /sys/class/kfd/kfd/topology/nodes/0/properties "cpu_cores_count 4\ngfx_target_version 0\n"
	put /sys/class/kfd/kfd/topology/nodes/1/properties "simd_count 440\ngfx_target_version 110000\n"
	put /sys/module/gpreempt/initstate "live\n"
	put /sys/module/gpreempt/parameters/tick_us "100\n"
	put /sys/module/gpreempt/parameters/backend "auto\n"
	put /usr/share/containers/oci/hooks.d/gpreempt-create.json \
		'{"version":"1.0.0","hook":{"path":"/usr/sbin/gpreemptctl","args":["gpreemptctl","hook","create"]},"when":{"annotations":{"^gpreempt\\\\.io/priority$":".*"}},"stages":["createRuntime"]}\n'
	put /usr/sbin/gpreemptctl ""
	put /fake/modinfo-gpreempt "filename:       $GP\nsigner:         DKMS module signing key\nsig_id:         PKCS#7\n"
	put /fake/mokutil-sb "SecureBoot enabled\n"
	put /fake/dmesg "[    0.9] gpreempt: module verification failed: signature and/or required key missing - tainting kernel\n[    1.0] gpreempt: loaded, backend auto\n"
	fake modinfo 'case "$*" in
*"-n amdgpu") echo '"$KO"' ;;
*gpreempt) cat $F/modinfo-gpreempt 2>/dev/null || { echo "modinfo: ERROR: Module gpreempt not found." >&2; exit 1; } ;;
*) exit 1 ;; esac'
	fake mokutil 'case "$1" in --sb-state) cat $F/mokutil-sb ;; --test-key) cat $F/mokutil-key 2>/dev/null || echo "$3 is already enrolled" ;; esac'
	fake dmesg '[ -f $F/dmesg-denied ] && { echo "dmesg: read kernel buffer failed: Operation not permitted" >&2; exit 1; }; cat $F/dmesg'
	fake podman 'echo "podman version 4.3.1"'
}

# doctor [user]: run it on the fake machine; sets rc, so (stdout)
doctor() {
	local who=$1
	so=$(cd / && env -i PATH="$BIN" GP_DOCTOR_ROOT="$R" ${who:+$NOBODY} "$CTL" doctor 2>"$tmp/err")
	rc=$?
	js=$(cd / && env -i PATH="$BIN" GP_DOCTOR_ROOT="$R" ${who:+$NOBODY} "$CTL" -j doctor 2>>"$tmp/err")
	jrc=$?
}
# status CHECK: the status of CHECK in the last -j run
status() { printf '%s' "$js" | jq -r --arg n "$1" '.checks[] | select(.name == $n) | .status' 2>/dev/null; }
value() { printf '%s' "$js" | jq -r --arg n "$1" '.checks[] | select(.name == $n) | .value + " -> " + (.fix // "")' 2>/dev/null; }

# expect NAME CHECK STATUS WORDS RC [user]: after the setup the caller did
expect() {
	local name=$1 check=$2 want=$3 words=$4 wrc=$5 who=$6 got v
	doctor "$who"
	got=$(status "$check")
	v=$(value "$check")
	if [ "$got" = "$want" ] && [ "$rc" = "$wrc" ] && [ "$jrc" = "$wrc" ] &&
	   grep -qF -- "$words" <<<"$v" && [ ! -s "$tmp/err" ] &&
	   grep -qE "^$want +$check " <<<"$so"; then
		tap_ok "doctor: $name: $check $want, exit $wrc"
	else
		tap_not_ok "doctor: $name: $check $want, exit $wrc # got '$got', exit $rc/$jrc: $v; stderr $(head -c 300 "$tmp/err")"
	fi
}

good
doctor
fails=$(printf '%s' "$js" | jq -r '[.checks[] | select(.status != "ok") | .name + "=" + .status] | join(" ")')
n=$(printf '%s' "$js" | jq '.checks | length')
good_ok() { [ "$rc" = 0 ] && [ "$jrc" = 0 ] && [ -z "$fails" ] && [ ! -s "$tmp/err" ]; }
tap_check "doctor: a good machine: every check ok, exit 0, -j exit 0 # not ok: $fails" good_ok
json_ok() {
	printf '%s' "$js" | jq -e --arg rel "$REL" --argjson n "$n" '.kernel == $rel and
		(.root | type == "boolean") and .summary.ok == $n and .summary.fail == 0 and
		(.checks[] | select(.name == "parameters") | .parameters.tick_us == "100")' >/dev/null
}
tap_check "doctor: -j: JSON with kernel, root, $n checks, summary.ok = $n, the parameters" json_ok
words_ok() {
	[ "$(printf '%s\n' "$so" | grep -cE '^ok +[a-z0-9-]+ ')" = "$n" ] &&
		printf '%s\n' "$so" | grep -q "^$n ok, 0 warn, 0 fail, 0 unknown$"
}
tap_check "doctor: words: one line per check, a summary line" words_ok
tap_check "doctor: the GPU's line: gfx1100, MES" grep -q "node 1: gfx1100, MES" <<<"$(value scheduler)"

# Each failing check alone.
good; put /proc/sys/kernel/osrelease "5.15.0-91-generic\n"
expect "kernel 5.15" kernel fail "older than 6.1" 7
good; rm -rf "$R/sys/module/amdgpu"
expect "amdgpu not loaded" amdgpu fail "modprobe amdgpu" 7
good; rm -rf "$R/sys/class/kfd"
expect "amdgpu without KFD" kfd fail "CONFIG_HSA_AMD" 7
good; cp "$elf2" "$R$KO"
expect "amdgpu upgraded on disk, not rebooted" amdgpu-id fail "is not the one on disk" 7
if command -v xz >/dev/null; then
	good; xz -c "$elf1" >"$R$KO.xz"; rm "$R$KO"; ln -s "$(command -v xz)" "$BIN/xz"
	sed -i "s|echo $KO|echo $KO.xz|" "$BIN/modinfo"
	expect "amdgpu.ko.xz: its build id read through xz" amdgpu-id ok "the running amdgpu is $KO.xz" 0
	cp "$elf2" "$R$KO"; xz -fc "$R$KO" >"$R$KO.xz"
	expect "amdgpu.ko.xz of another build" amdgpu-id fail "is not the one on disk" 7
	rm "$BIN/xz"
	expect "amdgpu.ko.xz without xz" amdgpu-id unknown "cannot be read" 0
else
	tap_skip_n 3 "doctor: amdgpu.ko.xz" "xz not installed"
fi
good; rm "$R/sys/kernel/btf/amdgpu"
expect "no BTF, no amdgpu-dkms" layout fail "none: the running amdgpu has no BTF" 7
good; rm "$R/sys/kernel/btf/amdgpu"
fake dkms 'echo "amdgpu/6.10.5-2109964.22.04, '"$REL"', x86_64: installed"'
mkdir -p "$R/usr/src/amdgpu-6.10.5-2109964.22.04/amd/dkms"
expect "amdgpu-dkms tree without configure step or config.h" layout fail "no configure step" 7
put /usr/src/amdgpu-6.10.5-2109964.22.04/amd/dkms/pre-build.sh "#!/bin/sh\n"
expect "amdgpu-dkms tree with its configure step" layout ok "amdgpu-dkms source /usr/src/amdgpu-6.10.5" 0
put /usr/src/amdgpu-6.10.5-2109964.22.04/amd/dkms/pre-build.sh "#!/bin/sh\n[ -n \"\$AMDGPU_BTF\" ]\n"
expect "amdgpu-dkms with the BTF opt-in" layout warn "AMDGPU_BTF=1 dkms install" 0
fake dkms 'echo "amdgpu, 6.9.9, '"$REL"', x86_64: installed"'
expect "dkms 2 status, tree gone" layout fail "/usr/src/amdgpu-6.9.9 is gone" 7
good; put /sys/module/amdgpu/parameters/cwsr_enable "0\n"
expect "CWSR off" cwsr fail "cwsr_enable=0" 7
good; rm -rf "$R/sys/class/kfd/kfd/topology/nodes/1"
expect "no GPU in KFD's topology" scheduler fail "no AMD GPU" 7
good; put /sys/class/kfd/kfd/topology/nodes/1/properties "gfx_target_version 90010\n"
expect "gfx90a under HWS: a park remaps the whole GPU, a warning" scheduler warn "every park and unpark unmaps and remaps every queue of that GPU" 0
# 8 x MI300X in CPX: 64 KFD nodes of gfx942 after two CPU nodes, every one listed, in order.
good; rm -rf "$R/sys/class/kfd/kfd/topology/nodes/1"
for i in $(seq 2 65); do put /sys/class/kfd/kfd/topology/nodes/$i/properties "gfx_target_version 90402\n"; done
put /sys/class/kfd/kfd/topology/nodes/1/properties "cpu_cores_count 96\ngfx_target_version 0\n"
expect "8 x MI300X CPX: 64 KFD nodes within the limit" gpus ok "64 GPUs and partitions" 0
nodes=$(printf '%s' "$js" | jq -r '.checks[] | select(.name == "scheduler") | .value' | sed -n 's/^node \([0-9]*\): gfx942, HWS.*/\1/p' | tr '\n' ' ')
tap_check "doctor: 64 KFD nodes: the scheduler lists all 64, sorted numerically (JSON through jq) # got: $nodes" \
	test "$nodes" = "$(seq -s ' ' 2 65) "
put /sys/class/kfd/kfd/topology/nodes/66/properties "gfx_target_version 90402\n"
expect "65 KFD nodes: past gpreempt's 64 devices" gpus warn "past gpreempt's limit of 64 devices" 0
good; put /sys/module/amdgpu/parameters/user_queue "1\n"
expect "amdgpu.user_queue=1: DRM user queues gpreempt does not see" userq warn "gpreempt neither sees nor parks them" 0
put /sys/module/amdgpu/parameters/user_queue "-1\n"
expect "amdgpu.user_queue=-1 (auto): no DRM user queues" userq ok "user_queue=-1: amdgpu creates no DRM user queues" 0
good; put /sys/module/amdgpu/parameters/sched_policy "2\n"
put /sys/class/kfd/kfd/topology/nodes/1/properties "gfx_target_version 90010\n"
expect "NO_HWS" scheduler warn "eviction only" 0
good; put /sys/class/kfd/kfd/topology/nodes/1/properties "gfx_target_version 110000\n"
expect "gfx1100" scheduler ok "node 1: gfx1100, MES" 0
good; put /fake/modinfo-gpreempt "filename:       $GP\n"
expect "Secure Boot on, gpreempt.ko unsigned" module-sig fail "is not signed" 7
put /fake/mokutil-sb "SecureBoot disabled\n"; put /sys/kernel/security/lockdown "[none] integrity confidentiality\n"
expect "Secure Boot off, no lockdown, unsigned" module-sig ok "not needed" 0
put /sys/kernel/security/lockdown "none [integrity] confidentiality\n"
expect "lockdown integrity, Secure Boot off, unsigned" module-sig fail "is not signed" 7
put /sys/kernel/security/lockdown "[none] integrity confidentiality\n"
put /sys/module/module/parameters/sig_enforce "Y\n"
expect "sig_enforce, unsigned" module-sig fail "is not signed" 7
good; put /var/lib/dkms/mok.pub "key"; put /fake/mokutil-key "$R/var/lib/dkms/mok.pub is not enrolled\n"
expect "signed, DKMS's key not enrolled" module-sig fail "mokutil --import /var/lib/dkms/mok.pub" 7
good; put /var/lib/shim-signed/mok/MOK.der "key"; put /fake/mokutil-key "$R/var/lib/shim-signed/mok/MOK.der is not enrolled\n"
expect "signed, Ubuntu's shim-signed MOK not enrolled" module-sig fail "mokutil --import /var/lib/shim-signed/mok/MOK.der" 7
good; put /var/lib/dkms/mok.pub "key"
expect "signed, DKMS's key enrolled" module-sig ok "signed by DKMS module signing key" 0
good; rm "$R/fake/modinfo-gpreempt"
expect "gpreempt.ko not installed" module-sig warn "not installed" 0
good; rm -rf "$R/sys/firmware/efi"; rm "$BIN/mokutil"
expect "not EFI" secureboot ok "not booted through EFI" 0
good; rm "$BIN/mokutil"; put /sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c '\x06\x00\x00\x00\x01'
put /fake/modinfo-gpreempt "filename:       $GP\n"
expect "Secure Boot from efivars, unsigned" module-sig fail "is not signed" 7
good; put /fake/modinfo-gpreempt "filename:       $GP\n"; put /fake/mokutil-sb "SecureBoot disabled\n"
put /sys/kernel/security/lockdown "[none] integrity confidentiality\n"
put /proc/cmdline "BOOT_IMAGE=/vmlinuz ro module.sig_enforce=1\n"
expect "module.sig_enforce=1 on the command line, unsigned" module-sig fail "is not signed" 7
good; put /proc/sys/kernel/modules_disabled "1\n"
expect "kernel.modules_disabled=1" modload fail "loads no module until reboot" 7
good; rm "$R/proc/sys/kernel/modules_disabled" "$R/proc/modules"
expect "a kernel without modules" modload fail "this kernel loads no modules" 7
good
expect "lockdown integrity and Secure Boot: modules load, signed only" modload ok "signed ones only (lockdown Secure-Boot)" 0
good; put /boot/config-$REL "# CONFIG_KPROBES is not set\n"
expect "kernel without kprobes" kprobes fail "no CONFIG_KPROBES=y" 7
good; rm "$R/boot/config-$REL"; put /proc/kallsyms "0000000000000000 T register_kprobe_foo\n"
expect "no config, no register_kprobe" kprobes fail "no register_kprobe" 7
good; put /sys/kernel/debug/kprobes/enabled "0\n"
expect "kprobes disabled at run time" kprobes fail "enabled is 0" 7
good; put /proc/self/mounts "cgroup /sys/fs/cgroup/cpu cgroup rw 0 0\n"
expect "cgroup v1 only" cgroup2 warn "no cgroup v2" 0
good; put /proc/self/mounts "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\ncgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw 0 0\n"
expect "hybrid cgroups (v1 and v2)" cgroup2 warn "hybrid: cgroup v2 on /sys/fs/cgroup/unified" 0
good; rm "$R/usr/sbin/gpreemptctl"
expect "hooks.d names a gpreemptctl that is not there (PREFIX)" oci-hook fail "which does not exist" 7
good; rm "$R/usr/share/containers/oci/hooks.d/gpreempt-create.json"
expect "podman without the hook" oci-hook warn "not installed" 0
good; fake containerd 'echo "containerd github.com/containerd/containerd v1.7.13 7c3aca7a"'
expect "containerd 1.7" containerd warn "1.7.13: runs no NRI v0.1 plugin" 0
fake containerd 'echo "containerd github.com/containerd/containerd v1.6.20 abc"'
put /opt/nri/bin/gpreempt ""; put /etc/nri/conf.json '{"plugins":[{"type":"gpreempt"}]}'
expect "containerd 1.6 with the plugin" containerd ok "1.6.20 (NRI v0.1)" 0
# NRI v2: the DaemonSet's gpreempt-nri running, containerd's NRI socket there.
good; fake containerd 'echo "containerd containerd.io 2.0.0 207ad711eabd375a01713109a8a197d197ff6542"'
put /opt/gpreempt/sbin/gpreempt-nri ""; put /var/run/nri/nri.sock ""; put /proc/4242/comm "gpreempt-nri\n"
expect "containerd 2.0 with gpreempt-nri running" containerd ok "2.0.0 (NRI v2)" 0
expect "containerd 2.0 with gpreempt-nri running" nri-v2 ok "gpreempt-nri (NRI v2) runs (pid 4242)" 0
rm "$R/var/run/nri/nri.sock"
expect "gpreempt-nri running, containerd's NRI off" nri-v2 warn "the runtime has NRI off" 0
rm -rf "$R/proc/4242"; put /var/run/nri/nri.sock ""
expect "gpreempt-nri installed, not running" nri-v2 warn "installed (/opt/gpreempt/sbin/gpreempt-nri) but not running" 0
expect "containerd 2.0, gpreempt-nri not running" containerd warn "gpreempt-nri (NRI v2) is not running" 0
good; rm -rf "$R/sys/module/gpreempt"
expect "module not loaded" module warn "not loaded" 0
good; put /fake/dmesg "[ 5.0] gpreempt: refusing amdgpu: layout mismatch (kfd_process.pqm at 680, BTF says 688)\n[ 6.0] other: fine\n"
expect "an error in the kernel log" dmesg warn "refusing amdgpu: layout mismatch" 0
good; printf '[ 5.0] gpreempt: cannot park pid 42 (ev\033[2Jil\a): error\n' >"$R/fake/dmesg"
doctor
tap_check "doctor: words: control bytes of a kernel log line (a process name) are printed as '?'" \
	grep -q 'pid 42 (ev?\[2Jil?): error' <<<"$so"

# What a user cannot read: unknown, never an error.
if [ -n "$NOBODY" ]; then
	good; chmod 000 "$R/sys/module/amdgpu/parameters/cwsr_enable"; touch "$R/fake/dmesg-denied"
	chmod 700 "$R/sys/module/amdgpu/notes"
	expect "as nobody, cwsr_enable unreadable" cwsr unknown "needs root" 0 nobody
	expect "as nobody, dmesg_restrict" dmesg unknown "needs root" 0 nobody
	expect "as nobody, the build id unreadable" amdgpu-id unknown "needs root" 0 nobody
	tap_check "doctor: as nobody: 'not root' in the first line" grep -q "not root" <<<"$(head -n 1 <<<"$so")"
else
	tap_skip_n 4 "doctor: as nobody, the 'needs root' cases" "not root: they need setpriv as root"
fi
# Nothing there at all: every check still reported, no crash.
doctor_empty() { cd / && env -i PATH=/nonexistent GP_DOCTOR_ROOT=/nonexistent "$CTL" -j doctor; }
out=$(doctor_empty 2>"$tmp/err"); erc=$?
empty_ok() { [ "$erc" = 7 ] && printf '%s' "$out" | jq -e '.summary.fail > 0' >/dev/null && [ ! -s "$tmp/err" ]; }
tap_check "doctor: an empty root: exit 7, JSON, no stderr" empty_ok
# Arguments, help.
"$CTL" doctor extra >/dev/null 2>"$tmp/err"; erc=$?
tap_check "doctor: 'doctor extra': exit 2" sh -c "[ $erc = 2 ] && grep -q 'takes no arguments' '$tmp/err'"
tap_check "doctor: 'doctor --help' exits 0 and names exit 7" sh -c "'$CTL' doctor --help | grep -q '7 when one did'"
# Every check is in the man page.
good; doctor
missing=
for c in $(printf '%s' "$js" | jq -r '.checks[].name') kfd amdgpu-id containerd cri-o; do
	grep -qxF ".B ${c//-/\\-}" tools/gpreemptctl/gpreemptctl.8 || missing="$missing $c"
done
tap_check "doctor: every check is in gpreemptctl.8 # missing:${missing:- none}" test -z "$missing"
tap_done
