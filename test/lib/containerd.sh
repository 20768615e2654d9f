# SPDX-License-Identifier: GPL-2.0
# test/lib/containerd.sh - a real containerd 1.7 in the read-only test guest,
# with NRI enabled, for the NRI v2 plugin (sourced by test/vm/oci-containerd.sh
# and scripts/containerd-demo).  Debian trixie's containerd and runc link
# trixie's glibc, so they run in the trixie root scripts/setup makes
# (.cache/root-trixie, or GP_TRIXIE_ROOT): in a mount namespace whose root
# it is (pivot_root: runc needs its root to be a mount, which a bare chroot
# is not), with the guest's /proc, /sys, /dev, /run and /tmp bound in, a
# writable copy of its /etc, and the guest's / at /mnt.  Pods are made
# through CRI by build/cri-client (crictl is not packaged in Debian); the
# sandbox image is local (no registry): busybox-static with cri-client as
# its /pause, imported with ctr.

# containerd_setup DIR: containerd's config, state and image under DIR;
# CDI enabled, its specs in DIR/cdi (cdi_spec_kfd writes one).
# Sets
#   CTD_ROOT  the trixie root
#   CRI       the CRI client's command line
#   WORK      cri-client run options for a GPU load: the guest's /usr
#             read-only (gpload is dynamically linked), build/ at /gp,
#             /dev/kfdsim
# Prints why and returns 1 when something is missing.
containerd_setup() {
	local w=$1 a diff cfg
	CTD_ROOT=$(readlink -f "${GP_TRIXIE_ROOT:-.cache/root-trixie}")
	CTD_DIR=$w
	CRI=("$PWD/build/cri-client" --socket /run/containerd/containerd.sock)
	WORK=(--mount /mnt/usr:/usr --mount "/mnt$PWD/build:/gp" --device /dev/kfdsim)
	if [ ! -x build/gpreempt-nri ] || [ ! -x build/cri-client ] ||
		[ ! -x "$CTD_ROOT/usr/bin/containerd" ] || [ ! -x "$CTD_ROOT/usr/sbin/runc" ]; then
		echo "no build/gpreempt-nri, build/cri-client or containerd and runc in $CTD_ROOT (scripts/setup, make nri)"
		return 1
	fi
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	rm -rf "$w" && mkdir -p "$w/state" "$w/cdi" "$w"/img/rootfs/{bin,proc,sys,dev,etc,tmp,usr,run,gp}
	chmod 1777 "$w/img/rootfs/tmp"
	# CRI copies /etc/hosts into every pod; the root has none
	cp -a "$CTD_ROOT/etc" "$w/etc"
	printf '127.0.0.1 localhost\n::1 localhost\n' >"$w/etc/hosts"
	mkdir -p "$w/etc/containerd"
	cat >"$w/etc/containerd/config.toml" <<CONFIG
version = 2
root = "$w/state"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[plugins."io.containerd.nri.v1.nri"]
  disable = false
  disable_connections = false
  socket_path = "/run/nri/nri.sock"
  plugin_path = "$w/nri-plugins"
  plugin_config_path = "$w/nri-conf"
  plugin_registration_timeout = "30s"
  plugin_request_timeout = "30s"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "gp.local/bb:1"
  disable_apparmor = true
  enable_cdi = true
  cdi_spec_dirs = ["$w/cdi"]
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    conf_dir = "$w/cni"
CONFIG
	# the image, a docker archive: busybox-static, cri-client as /pause
	cp /bin/busybox "$w/img/rootfs/bin/"
	for a in sh sleep cat; do ln -sfn busybox "$w/img/rootfs/bin/$a"; done
	ln -sfn usr/lib "$w/img/rootfs/lib"
	ln -sfn usr/lib64 "$w/img/rootfs/lib64"
	cp build/cri-client "$w/img/rootfs/pause"
	tar -C "$w/img/rootfs" -cf "$w/img/layer.tar" .
	diff=$(sha256sum <"$w/img/layer.tar" | cut -d' ' -f1)
	jq -n --arg d "sha256:$diff" '{architecture: "amd64", os: "linux",
		config: {Entrypoint: ["/pause", "pause"], Env: ["PATH=/bin"]},
		rootfs: {type: "layers", diff_ids: [$d]}}' >"$w/img/config.json"
	cfg=$(sha256sum <"$w/img/config.json" | cut -d' ' -f1)
	mv "$w/img/config.json" "$w/img/$cfg.json"
	jq -n --arg c "$cfg.json" '[{Config: $c, RepoTags: ["gp.local/bb:1"], Layers: ["layer.tar"]}]' \
		>"$w/img/manifest.json"
	tar -C "$w/img" -cf "$w/bb.tar" manifest.json "$cfg.json" layer.tar
}

# ctd_root CMD...: CMD in the trixie root (containerd, ctr).
CTD_SH='R=$1 W=$2; shift 2
	mount --bind "$R" "$R" && mount --bind "$W/etc" "$R/etc" &&
	mount --rbind /proc "$R/proc" && mount --rbind /sys "$R/sys" &&
	mount --rbind /dev "$R/dev" && mount --bind /run "$R/run" &&
	mount --bind /tmp "$R/tmp" && cd "$R" && pivot_root . mnt &&
	exec chroot . "$@"'
ctd_root() {
	unshare -m --propagation private sh -c "$CTD_SH" sh "$CTD_ROOT" "$CTD_DIR" "$@"
}

# containerd_start: containerd in the background (CTD_PID is containerd's
# own pid: unshare, sh and chroot exec it; its log in DIR/containerd.log),
# up to 120 s for it to boot and answer on CRI, then the image imported.
# Prints why and returns 1 when it does not come up.
containerd_start() {
	unshare -m --propagation private sh -c "$CTD_SH" sh "$CTD_ROOT" "$CTD_DIR" \
		containerd --config /etc/containerd/config.toml >"$CTD_DIR/containerd.log" 2>&1 &
	CTD_PID=$!
	if ! wait_for 120 grep -q 'containerd successfully booted' "$CTD_DIR/containerd.log" ||
		! wait_for 60 "${CRI[@]}" version >/dev/null 2>&1; then
		echo "containerd did not boot and answer on its CRI socket in 180 s:"
		tail -n 20 "$CTD_DIR/containerd.log"
		return 1
	fi
	ctd_root ctr -n k8s.io images import --snapshotter native "$CTD_DIR/bb.tar" >/dev/null ||
		{ echo "ctr images import $CTD_DIR/bb.tar failed"; return 1; }
}

# no_pods_left: no container in containerd, no container rule and no
# record (no_container_state, test/lib/nri.sh).
no_pods_left() { [ -z "$("${CRI[@]}" ps)" ] && no_container_state; }

# containerd_stop: stops containerd (its shims end with their pods) and
# removes the pods' empty cgroups.
containerd_stop() {
	kill "$CTD_PID" 2>/dev/null
	wait "$CTD_PID" 2>/dev/null
	find /sys/fs/cgroup/kubepods -depth -type d -exec rmdir {} + 2>/dev/null
}

# cdi_spec_kfd DIR: a CDI spec in DIR for kfdsim's GPUs, as AMD's container
# toolkit writes one for a node's GPUs: kind amd.com/gpu, device N (the
# Nth GPU node of KFD's topology) = /dev/kfd and that GPU's render node.
# The modes are the ones ROCm's udev rules give the host's nodes (0666),
# which the guest, without udev, does not have.  Returns 1 without a GPU.
cdi_spec_kfd() {
	local t=/sys/devices/virtual/kfd/kfd/topology/nodes n minor devs= i=0
	for n in $(ls $t | sort -n); do
		[ "$(cat $t/$n/gpu_id)" != 0 ] || continue
		minor=$(awk '$1 == "drm_render_minor" {print $2}' $t/$n/properties)
		[ -n "$minor" ] && [ -c /dev/dri/renderD$minor ] || continue
		devs="$devs${devs:+,}{\"name\": \"$i\", \"containerEdits\": {\"deviceNodes\": [
			{\"path\": \"/dev/kfd\", \"permissions\": \"rw\", \"fileMode\": 438},
			{\"path\": \"/dev/dri/renderD$minor\", \"permissions\": \"rw\", \"fileMode\": 438}]}}"
		i=$((i + 1))
	done
	[ -n "$devs" ] || return 1
	jq . >"$1/amd.com-gpu.json" <<<"{\"cdiVersion\": \"0.5.0\", \"kind\": \"amd.com/gpu\", \"devices\": [$devs]}"
}
