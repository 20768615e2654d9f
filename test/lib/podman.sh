# SPDX-License-Identifier: GPL-2.0
# test/lib/podman.sh - Debian's podman in the read-only test guest (sourced
# by test/vm/oci-podman.sh and scripts/oci-demo).  What the guest needs:
# cgroup2 mounted, a writable /var/cache (podman's blob-info cache),
# TMPDIR=/tmp, podman's storage and network config under a writable
# directory, a busybox-static image, and a guest with one CPU (scripts/vm
# -a maxcpus=1: with two vCPUs a TCG guest sometimes oopses in text patching).

# podman_setup DIR [HOOK-OPTION...]: podman with its storage under DIR and
# the hooks.d files of etc/oci-hooks.d, running this build's gpreemptctl with
# the given "gpreemptctl hook" options (--config FILE, --log FILE).  Sets
#   P    the podman command line;
#   RUN  P run --network none, the guest's /usr read-only (gpreemptctl and
#        gpload are dynamically linked) and build/ at /gp;
# and leaves the image tarball in DIR/rootfs.tar: "${P[@]}" import -q
# DIR/rootfs.tar gpbb makes the image gpbb.
podman_setup() {
	local w=$1 h a opts
	shift
	export TMPDIR=/tmp
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup
	mountpoint -q /var/cache || mount -t tmpfs tmpfs /var/cache
	mkdir -p "$w/hooks" "$w/networks" "$w"/rootfs/{bin,proc,sys,dev,etc,tmp,usr,run,gp}
	opts='[]'
	[ $# = 0 ] || opts=$(printf '%s\n' "$@" | jq -R . | jq -s .)
	for h in create poststop; do
		jq --arg p "$PWD/build/gpreemptctl" --arg h "$h" --argjson o "$opts" \
			'.hook.path = $p | .hook.args = ["gpreemptctl", "hook"] + $o + [$h]' \
			"etc/oci-hooks.d/gpreempt-$h.json" >"$w/hooks/gpreempt-$h.json"
	done
	cp /bin/busybox "$w/rootfs/bin/"
	for a in sh cat sleep echo true grep; do ln -sfn busybox "$w/rootfs/bin/$a"; done
	ln -sfn usr/lib "$w/rootfs/lib"
	ln -sfn usr/lib64 "$w/rootfs/lib64"
	tar -C "$w/rootfs" -cf "$w/rootfs.tar" .
	P=(podman --root "$w/c" --runroot "/run/podman-${w//\//_}" --network-config-dir "$w/networks"
	   --storage-driver vfs --hooks-dir "$w/hooks")
	RUN=("${P[@]}" run --network none -v /usr:/usr:ro -v "$PWD/build:/gp:ro")
}
