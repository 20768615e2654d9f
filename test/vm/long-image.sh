#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DaemonSet image on a node (test/run-vm long, after test/run-image).
# The guest is the node; the image is the file system test/run-image built
# and exported (build/image/root), with DKMS's state of its build of
# gpreempt for this kernel (build/image/node: the compile ran on the host,
# ~50x faster than in this TCG guest, with the image's own toolchain).
# Here, as the DaemonSet's pod: the image's root (an overlay on top of it:
# the container's writable layer) with the node's paths mounted as
# deploy/base/gpreempt.yaml mounts them (/lib/modules, /usr/src, /var/lib/dkms,
# /host/etc, /host/opt/gpreempt, /host/opt/nri, hooks.d, /host/usr/lib, the
# ConfigMap at /config), hostPID: the node is a mount and pid namespace of
# its own whose pid 1 holds writable copies of /etc, /opt and /run.  The
# image's `gpreempt-node run` installs gpreempt with the image's DKMS,
# loads it with the node's modprobe (nsenter), applies the ConfigMap, and
# starts the NRI v2 plugin on the node's NRI socket (build/nri-runtime: the
# runtime side of NRI v2 containerd links; containerd itself is the cluster
# test's).  On SIGTERM (the pod deleted) it uninstalls: module unloaded,
# DKMS build removed, plugin stopped, the node's files gone.
. test/lib/tap.sh
. test/lib/amdgpu.sh
# shellcheck source=/dev/null
[ -f "${GP_VM_SCRATCH:-}/kernel.env" ] && . "$GP_VM_SCRATCH/kernel.env"
kver=$(uname -r)
top=$PWD
img=$top/build/image
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)-ds

# The plan is printed once: by the node (this script again, GP_NODE=1), or
# here when there is no node to run.
PLAN=14
if [ -z "${GP_NODE:-}" ]; then
	if [ ! -d "$img/root/usr/lib/gpreempt/src" ] || [ ! -d "$img/node/dkms/gpreempt/$ver/$kver" ]; then
		tap_plan $PLAN
		tap_not_ok "image (node): the image and its DKMS build for $kver in build/image (run test/run-image first)"
		tap_bail "no image"
	fi
	if [ ! -x build/nri-runtime ]; then
		tap_plan $PLAN
		tap_not_ok "image (node): build/nri-runtime (make nri)"
		tap_bail "no nri-runtime"
	fi
	# The node: a mount and pid namespace, this script again as its pid 1.
	GP_NODE=1 exec unshare --mount --pid --fork --propagation private bash "$0"
fi
tap_plan $PLAN

# --- the node (pid 1 of its namespace) ---------------------------------------
mount -t proc proc /proc
n=$(mktemp -d /tmp/node.XXXXXX)
mount -t tmpfs tmpfs "$n"
mkdir -p "$n/etc" "$n/src" "$n/ctr/up" "$n/ctr/work" "$n/ctr/root" "$n/nri"
cp -a /etc/. "$n/etc/" && mount --bind "$n/etc" /etc
mount -t tmpfs tmpfs /opt
mount -t tmpfs tmpfs /run
mkdir -p /run/nri /usr/share/containers/oci 2>/dev/null
mount -t tmpfs tmpfs /usr/share/containers/oci 2>/dev/null || mount -t tmpfs tmpfs /usr/share/containers
mount -t tmpfs tmpfs /var/lib/dkms 2>/dev/null ||
	{ tap_not_ok "image (node): a tmpfs on /var/lib/dkms"; tap_bail; }
cp -a "$img/node/dkms/." /var/lib/dkms/
# /usr/src: the headers, writable around them (DKMS copies its tree there).
mount --bind /usr/src "$n/src"
mount -t tmpfs tmpfs /usr/src
for e in "$n"/src/linux-headers-"${kver%-*}"-*; do
	mkdir -p "/usr/src/${e##*/}" && mount --bind "$e" "/usr/src/${e##*/}"
done
cp -a "$img/node/usr-src/gpreempt-$ver" /usr/src/
# /lib/modules/KVER: amdgpu and its dependencies, and the headers' link.
mount -t tmpfs tmpfs /lib/modules && amdgpu_modules "$kver" &&
	ln -s "/usr/src/linux-headers-$kver" "/lib/modules/$kver/build"
# A GPU node has amdgpu loaded (its BTF is the layout's source).
modprobe amdgpu || { tap_not_ok "image (node): modprobe amdgpu"; tap_bail; }

# The NRI runtime side on the node's socket (containerd 1.7's path).
mkfifo "$n/nri/cmd"
build/nri-runtime --socket /var/run/nri/nri.sock --plugin-dir "$n/nri" <"$n/nri/cmd" \
	>"$n/nri/out" 2>"$n/nri/runtime.log" &
rt=$!
exec 7>"$n/nri/cmd"

# The pod: the image's root with a writable layer, the DaemonSet's mounts.
R=$n/ctr/root
mount -t overlay overlay -o "lowerdir=$img/root,upperdir=$n/ctr/up,workdir=$n/ctr/work" "$R" ||
	{ tap_not_ok "image (node): the image's root as an overlay"; tap_bail; }
cm() {   # cm SRC DST [ro]: bind SRC at DST in the pod
	mkdir -p "$R$2" && mount --rbind "$1" "$R$2" && { [ -z "${3:-}" ] || mount -o remount,bind,ro "$R$2"; }
}
mount -t proc proc "$R/proc"
cm /sys /sys && cm /dev /dev
cm /lib/modules /lib/modules && cm /usr/src /usr/src && cm /var/lib/dkms /var/lib/dkms
# amdgpu_modules' links point into the cached kernel: the pod's depmod
# (dkms install) follows them there.
cm "$GP_KROOT" "$GP_KROOT" ro
mkdir -p /opt/gpreempt /opt/nri /usr/share/containers/oci/hooks.d
cm /etc /host/etc && cm /usr/share/containers/oci/hooks.d /host/usr/share/containers/oci/hooks.d
cm /opt/gpreempt /host/opt/gpreempt && cm /opt/nri /host/opt/nri && cm /usr/lib /host/usr/lib ro
# The ConfigMap of deploy/base/gpreempt.yaml, as the kubelet mounts it.
mkdir -p "$R/config"
python3 - "$R/config" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open("deploy/base/gpreempt.yaml")):
    if d and d["kind"] == "ConfigMap":
        for k, v in d["data"].items():
            open("%s/%s" % (sys.argv[1], k), "w").write(v)
PY
LOG=$n/pod.log
# GPREEMPT_ON_STOP=uninstall: the default keeps everything at SIGTERM, and
# this test checks the node cleaned.
chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root GPREEMPT_RESYNC_S=2 GPREEMPT_ON_STOP=uninstall /usr/local/sbin/gpreempt-node run >"$LOG" 2>&1 &
pod=$!

wait_for() { local t=$1 i; shift; for ((i = 0; i < t * 2; i++)); do "$@" && return 0; sleep 0.5; done; return 1; }
logged() { grep -qF "$1" "$LOG"; }
show() { sed 's/^/# /' "$LOG" | tail -n 25; }
if wait_for 600 sh -c "grep -qF 'gpreempt-node: ready' '$LOG' || ! kill -0 $pod 2>/dev/null" &&
	logged "gpreempt-node: ready"; then
	tap_ok "image (node): gpreempt-node run installs ($(grep -c . "$LOG") log lines)"
else
	show
	tap_not_ok "image (node): gpreempt-node run installs"
fi
tap_check "image (node): DKMS in the image installs its build gpreempt/$ver for $kver" \
	logged "dkms install gpreempt/$ver for $kver: done"
tap_check "image (node): gpreempt is loaded, from DKMS's updates/dkms" \
	sh -c "[ -d /sys/module/gpreempt ] && modinfo -n gpreempt | grep -q '/updates/dkms/gpreempt.ko'"
tap_check "image (node): its layout was checked against the running amdgpu at insmod" \
	sh -c "dmesg | grep -q 'amdgpu has the layout gpreempt was built for'"
tap_check "image (node): the node's /etc/gpreempt.conf is the ConfigMap's, applied" \
	sh -c "head -n 1 /etc/gpreempt.conf | grep -q 'gpreempt DaemonSet' && grep -q 'applied /etc/gpreempt.conf' '$LOG'"
tap_check "image (node): the static gpreemptctl on the node's path runs (status)" \
	/opt/gpreempt/sbin/gpreemptctl status
tap_check "image (node): the hooks.d files are installed" \
	sh -c "ls /usr/share/containers/oci/hooks.d/gpreempt-*.json"
if kill -0 "$pod" 2>/dev/null && wait_for 60 logged "started the NRI v2 plugin" &&
	wait_for 60 grep -q '^sync 0$' "$n/nri/out"; then
	tap_ok "image (node): the NRI v2 plugin started on /var/run/nri/nri.sock and synchronized"
else
	show
	sed 's/^/# runtime: /' "$n/nri/runtime.log" | tail -n 5
	tap_not_ok "image (node): the NRI v2 plugin started on /var/run/nri/nri.sock and synchronized"
fi

# The pod deleted: SIGTERM, uninstall.
kill -TERM "$pod"
if wait_for 180 sh -c "! kill -0 $pod 2>/dev/null"; then
	tap_ok "image (node): SIGTERM ends gpreempt-node run"
else
	tap_not_ok "image (node): SIGTERM ends gpreempt-node run"
	kill -KILL "$pod"
fi
tap_check "image (node): uninstall unloads gpreempt" sh -c "[ ! -d /sys/module/gpreempt ]"
tap_check "image (node): uninstall removes the DKMS build" \
	sh -c "! chroot '$R' dkms status -m gpreempt | grep -q ."
tap_check "image (node): uninstall removes gpreemptctl, the plugin, hooks.d files, /etc/gpreempt.conf" \
	sh -c "[ ! -e /opt/gpreempt/sbin/gpreemptctl ] && [ ! -e /opt/gpreempt/sbin/gpreempt-nri ] &&
		! ls /usr/share/containers/oci/hooks.d/gpreempt-*.json 2>/dev/null && [ ! -e /etc/gpreempt.conf ]"
tap_check "image (node): the NRI v2 plugin stopped" sh -c "! pgrep -f '^/opt/gpreempt/sbin/gpreempt-nri '"
exec 7>&-
kill "$rt" 2>/dev/null
grep -q . "$LOG" && sed 's/^/# pod: /' "$LOG" | grep -E "dkms|loaded|plugin|error|warning" | head -n 12
modprobe -r amdgpu 2>/dev/null
tap_check "image (node): amdgpu unloaded again (the next test loads kfdsim)" sh -c "[ ! -d /sys/module/amdgpu ]"
