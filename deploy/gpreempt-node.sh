#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# deploy/gpreempt-node.sh - what the gpreempt DaemonSet (deploy/base/gpreempt.yaml)
# runs on every GPU node, in its privileged, hostPID container
# (deploy/Containerfile).  docs/containers.md, "Kubernetes".
#
#   gpreempt-node.sh install     build and install the module with DKMS, load
#                                it, install gpreemptctl, /etc/gpreempt.conf
#                                (from the ConfigMap) and apply it, the
#                                hooks.d files (CRI-O, podman), the NRI v0.1
#                                plugin (containerd 1.6) and the NRI v2 plugin
#                                (containerd 1.7+; run starts it).  Idempotent.
#   gpreempt-node.sh build       only the DKMS build and install of install,
#                                nothing loaded: the init container of a
#                                DaemonSet whose runtime container has no
#                                compiler (GPREEMPT_MODULE=init there; the
#                                overlay deploy/overlays/init-build)
#   gpreempt-node.sh uninstall   undo it all (GPREEMPT_ON_STOP says how much)
#   gpreempt-node.sh run         install, then re-apply the ConfigMap when it
#                                changes, keep the NFD feature file
#                                (/etc/kubernetes/node-feature-discovery/
#                                features.d/gpreempt) while healthy; on SIGTERM
#                                remove that file and uninstall as
#                                GPREEMPT_ON_STOP says (by default keep)
#   gpreempt-node.sh health      exit 0 if gpreempt is loaded and its monitor
#                                thread ticks, else 1 with one line saying why
#                                (the DaemonSet's probes; see health_check)
#   gpreempt-node.sh features    write the NFD feature file if healthy, else
#                                remove it (run does so every GPREEMPT_RESYNC_S)
#   gpreempt-node.sh src-id      the id of the module's inputs in GPREEMPT_SRC
#                                (the image build writes it: a new image
#                                rebuilds the module only when it changes)
#
# Where things are (the DaemonSet mounts each host path at GPREEMPT_ROOT +
# the same path, except /lib/modules, /usr/src and /var/lib/dkms, which DKMS
# and kbuild need at their own paths):
#   GPREEMPT_ROOT=/host          the host's /etc, /opt/gpreempt, /opt/nri,
#                                /usr/share/containers/oci/hooks.d
#   GPREEMPT_PREFIX=/opt/gpreempt  host path: sbin/gpreemptctl (a static
#                                binary: the runtime runs the hook on the host)
#   GPREEMPT_CONFIG_DIR=/config  the ConfigMap: gpreempt.conf, module-params
#   GPREEMPT_SRC=/usr/lib/gpreempt/src  the gpreempt source in the image
#   GPREEMPT_CTL=/usr/local/sbin/gpreemptctl  the image's static gpreemptctl
#   GPREEMPT_MODULE=dkms|init|skip
#                                dkms: build (DKMS) and load; init: load the
#                                build an init container's "build" made (a
#                                runtime image without compilers); skip: the
#                                node image ships the module
#   GPREEMPT_ON_STOP=keep|unload|uninstall
#                                keep (the default): leave the node as it is,
#                                module, rules, hooks and /etc files, so a
#                                rolling update never leaves it unprotected;
#                                unload: not the DKMS build nor /etc files (a
#                                new pod loads the same build without compiling);
#                                uninstall: everything, DKMS build included (to
#                                clean a node: docs/containers.md)
#   GPREEMPT_RESYNC_S=30         how often run checks the ConfigMap
#   GPREEMPT_HEALTH_SLACK_S=10   health: how long past two idle_max_us a
#                                monitor tick may be late
# For tests: GPREEMPT_USRSRC=/usr/src, GPREEMPT_MODULES=/lib/modules,
# GPREEMPT_SYS=/sys, GPREEMPT_KVER=$(uname -r), GPREEMPT_USRLIB=/usr/lib.
#
# Commands on the host (modprobe with the host's modprobe.d; gpreemptctl
# apply, which resolves cgroup paths in the host's cgroup2 mount) run through
# "nsenter --target 1 --mount" (hostPID).  Every file written to the host's
# /etc starts with the MARK line, so uninstall removes only its own files.
set -eu

ROOT=${GPREEMPT_ROOT:-/host}
PREFIX=${GPREEMPT_PREFIX:-/opt/gpreempt}
CONFIG_DIR=${GPREEMPT_CONFIG_DIR:-/config}
SRC=${GPREEMPT_SRC:-/usr/lib/gpreempt/src}
CTL_IMAGE=${GPREEMPT_CTL:-/usr/local/sbin/gpreemptctl}
MODULE=${GPREEMPT_MODULE:-dkms}
ON_STOP=${GPREEMPT_ON_STOP:-keep}
RESYNC_S=${GPREEMPT_RESYNC_S:-30}
USRSRC=${GPREEMPT_USRSRC:-/usr/src}
MODULES=${GPREEMPT_MODULES:-/lib/modules}
SYS=${GPREEMPT_SYS:-/sys}
KVER=${GPREEMPT_KVER:-$(uname -r)}
USRLIB=${GPREEMPT_USRLIB:-/usr/lib}

HOOKS_DIR=/usr/share/containers/oci/hooks.d	# podman and CRI-O read it
NRI_CONF=/etc/nri/conf.json			# containerd 1.6, NRI v0.1
NRI_BIN=/opt/nri/bin				# NRI v0.1 plugins: NRI_BIN/<type>
HOST_CTL=$PREFIX/sbin/gpreemptctl		# host path
NRI2_IMAGE=${GPREEMPT_NRI:-/usr/local/sbin/gpreempt-nri}	# the NRI v2 plugin, if the image has it
HOST_NRI2=$PREFIX/sbin/gpreempt-nri		# host path
NRI2_SOCK=/var/run/nri/nri.sock			# containerd 1.7+, CRI-O 1.26+ (host path)
MARK="# Written by the gpreempt DaemonSet (deploy/gpreempt-node.sh); edit its ConfigMap instead."
BACKUP_SUFFIX=.before-gpreempt-daemonset
CONFIG_APPLIED=0

say() { printf 'gpreempt-node: %s\n' "$*"; }
warn() { printf 'gpreempt-node: warning: %s\n' "$*" >&2; }
die() { printf 'gpreempt-node: error: %s\n' "$*" >&2; exit 1; }

# on_host CMD...: run CMD in the host's mount namespace (pid 1's: hostPID).
on_host() { nsenter --target 1 --mount -- "$@"; }

# put FILE DEST MODE: install FILE as DEST (a path inside this container)
# unless DEST already has that content; atomic (runtimes watch hooks.d).
put() {
	local file=$1 dest=$2 mode=$3
	if [ -f "$dest" ] && cmp -s "$file" "$dest"; then
		say "${dest#"$ROOT"} is up to date"
		return 0
	fi
	mkdir -p "$(dirname "$dest")"
	cp "$file" "$dest.gpreempt-tmp"
	chmod "$mode" "$dest.gpreempt-tmp"
	mv -f "$dest.gpreempt-tmp" "$dest"
	say "installed ${dest#"$ROOT"}"
}

# ours FILE: FILE was written by this script.
ours() { [ -f "$1" ] && [ "$(head -n 1 "$1")" = "$MARK" ]; }

# keep_backup FILE [OURS-TEST]: a FILE of the administrator's is saved once,
# before the first one of ours replaces it; uninstall puts it back.
# OURS-TEST (default: ours) tells our files from theirs.
keep_backup() {
	if [ -f "$1" ] && ! "${2:-ours}" "$1" && [ ! -e "$1$BACKUP_SUFFIX" ]; then
		cp -p "$1" "$1$BACKUP_SUFFIX"
		say "saved the node's own ${1#"$ROOT"} as ${1#"$ROOT"}$BACKUP_SUFFIX"
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pkg_version() { sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$SRC/dkms.conf"; }

# The module's inputs: what its DKMS build reads (dkms.conf's MAKE,
# scripts/dkms-build and the scripts it runs, the Makefile's layout, BPF and
# modules recipes with GP_DKMS=1, the Kbuild files and the sources they
# compile).  Only these make the source id: an image that changes docs,
# tools or tests must not rebuild and reload gpreempt on every node.
# test/unit/image-tools.py --src-id checks that the list covers that path.
SRC_ID_PATHS="dkms.conf Makefile Kbuild module hooks bpf scripts/dkms-build
scripts/extract-vmlinux scripts/amdgpu-dkms-src scripts/kfd-src-layout
scripts/btf-layout.c scripts/layout.spec scripts/ibt-check scripts/ibt-indirect.list"

# src_hash DIR: the sha256 of the module's inputs in the source tree DIR
# (each file's path and content).
src_hash() {
	local p
	(cd "$1" && for p in $SRC_ID_PATHS; do [ ! -e "$p" ] || find "$p" -type f -print0; done |
		sort -z | xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1)
}

# src_id: identifies the module source the image carries (written at image
# build by "gpreempt-node.sh src-id", deploy/Containerfile).
src_id() {
	if [ -f "$SRC/.gpreempt-src-id" ]; then
		cat "$SRC/.gpreempt-src-id"
	else
		src_hash "$SRC"
	fi
}

loaded() { [ -d "$SYS/module/$1" ]; }

# --- the module --------------------------------------------------------------
# The DaemonSet's DKMS build is gpreempt/VERSION-ds, from the tree
# /usr/src/gpreempt-VERSION-ds (with the image's id file).  A node's own
# gpreempt DKMS build (make dkms-install, a package: gpreempt/VERSION) is
# another DKMS version: never removed, moved or changed.  DKMS installs one
# gpreempt.ko per kernel, so on a kernel the node's own build is installed
# for, the install stops and says to choose (GPREEMPT_MODULE=skip: the
# node's module, loaded by the node; or dkms remove the node's build); for
# its other kernels both stay registered.  So a kernel has one gpreempt.ko
# and modprobe loads it: the DaemonSet's, or with GPREEMPT_MODULE=skip the
# node's.  (A make install's gpreempt.ko in extra/ is not DKMS's: dkms 3.0
# declines to install over a module of the same version, and modprobe
# loads the node's.)
ds_version() { printf '%s-ds\n' "$(pkg_version)"; }

# dkms_versions [KVER]: the gpreempt versions DKMS knows [installed for KVER]
# (dkms 3 status lines: "gpreempt/V, KVER, ARCH: state", "gpreempt/V: added").
dkms_versions() {
	if [ $# = 0 ]; then
		dkms status -m gpreempt 2>/dev/null
	else
		dkms status -m gpreempt -k "$1" 2>/dev/null | grep ": installed" || true
	fi | sed -n 's|^gpreempt/\([^,:]*\)[,:].*|\1|p' | sort -u
}

# ds_build V: DKMS version V is a DaemonSet's: VERSION-ds, or the plain
# VERSION of a DaemonSet before the -ds name, whose tree has the id file.
ds_build() {
	case $1 in *-ds) return 0 ;; esac
	[ -f "$USRSRC/gpreempt-$1/.gpreempt-src-id" ]
}

# kbuild_links: Debian's kernel headers link their scripts/ and tools/ to
# /usr/lib/linux-kbuild-<version>, outside the /usr/src the DaemonSet
# mounts: link each of the host's (GPREEMPT_ROOT/usr/lib, read-only) into
# this container's /usr/lib, or kbuild finds no scripts/Makefile.build.
kbuild_links() {
	local k
	for k in "$ROOT"/usr/lib/linux-kbuild-*; do
		[ -d "$k" ] || continue
		[ -e "$USRLIB/${k##*/}" ] || ln -sfn "$k" "$USRLIB/${k##*/}"
	done
}

# module_build: DKMS-build the image's source for KVER; sets REBUILT.
module_build() {
	local ver dst id status v own=
	REBUILT=
	[ -f "$SRC/dkms.conf" ] || die "no gpreempt source at $SRC (GPREEMPT_SRC; the image puts it there)"
	[ -n "$(pkg_version)" ] || die "$SRC/dkms.conf has no PACKAGE_VERSION"
	[ -e "$MODULES/$KVER/build" ] ||
		die "no kernel headers for $KVER on this node ($MODULES/$KVER/build is missing): install linux-headers-$KVER on the node, then delete this pod"
	command -v dkms >/dev/null || die "dkms is not installed in this image (deploy/Containerfile installs it)"
	kbuild_links
	ver=$(ds_version)
	dst=$USRSRC/gpreempt-$ver
	id=$(src_id)

	# Earlier DaemonSets' builds under another version: removed (DKMS
	# installs one gpreempt per kernel).  The node's own are left alone.
	for v in $(dkms_versions); do
		if [ "$v" = "$ver" ] || ! ds_build "$v"; then continue; fi
		say "removing an earlier DaemonSet's gpreempt/$v build (dkms remove)"
		dkms remove -m gpreempt -v "$v" --all >"$tmp/dkms.log" 2>&1 ||
			{ cat "$tmp/dkms.log" >&2; die "dkms remove gpreempt/$v failed"; }
		rm -rf "$USRSRC/gpreempt-$v"
	done
	for v in $(dkms_versions "$KVER"); do
		ds_build "$v" || own="$own${own:+, }gpreempt/$v"
	done
	[ -z "$own" ] ||
		die "the node has its own gpreempt DKMS build for $KVER ($own): the DaemonSet does not replace it (DKMS installs one gpreempt per kernel). To use the node's module (the node loads it), set GPREEMPT_MODULE=skip in deploy/base/gpreempt.yaml; to build the image's, remove the node's on the node (dkms remove ${own%%,*} --all) and delete this pod"

	# Our tree from another image: rebuild.
	if [ "$(cat "$dst/.gpreempt-src-id" 2>/dev/null || true)" != "$id" ]; then
		if [ -n "$(dkms status -m gpreempt -v "$ver" 2>/dev/null)" ]; then
			say "the node has another image's gpreempt/$ver build: removing it (dkms remove)"
			dkms remove -m gpreempt -v "$ver" --all >"$tmp/dkms.log" 2>&1 ||
				{ cat "$tmp/dkms.log" >&2; die "dkms remove gpreempt/$ver failed"; }
		fi
		rm -rf "$dst"
		mkdir -p "$USRSRC"
		cp -a "$SRC" "$dst"
		# dkms.conf's CLEAN names the build directory by PACKAGE_VERSION.
		sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$dst/dkms.conf"
		printf '%s\n' "$id" >"$dst/.gpreempt-src-id"
		say "copied the gpreempt source to ${dst}"
	fi
	if [ -z "$(dkms status -m gpreempt -v "$ver" 2>/dev/null)" ]; then
		dkms add -m gpreempt -v "$ver" >"$tmp/dkms.log" 2>&1 ||
			{ cat "$tmp/dkms.log" >&2; die "dkms add gpreempt/$ver failed"; }
		say "dkms add gpreempt/$ver"
	fi
	status=$(dkms status -m gpreempt -v "$ver" -k "$KVER" 2>/dev/null || true)
	if [[ $status != *": installed"* ]]; then
		say "building gpreempt/$ver for $KVER with DKMS (a minute or two)"
		if ! dkms install -m gpreempt -v "$ver" -k "$KVER" >"$tmp/dkms.log" 2>&1; then
			tail -n 40 "$tmp/dkms.log" >&2
			die "dkms install gpreempt/$ver -k $KVER failed (above; the full log is /var/lib/dkms/gpreempt/$ver/build/make.log on the node). Is amdgpu loaded, with BTF? docs/kernels.md"
		fi
		say "dkms install gpreempt/$ver for $KVER: done"
		REBUILT=1
		amdgpu_ids
		printf '%s\n' "$AMDGPU_PIN" >"$(amdgpu_record)"
		return 0
	fi
	# A loaded gpreempt was taken next to the loaded amdgpu, which cannot
	# change under it (gpreempt holds a reference on amdgpu).
	amdgpu_ids
	if ! loaded gpreempt && [ -n "$(amdgpu_built)" ] && rebuild_helps; then
		say "amdgpu is not the one gpreempt/$ver was built for on $KVER (build id $AMDGPU_NOW, built for $(amdgpu_built): an amdgpu-dkms upgrade): rebuilding it"
		module_rebuild
		return 0
	fi
	say "gpreempt/$ver is installed for $KVER (DKMS)"
}

# --- which amdgpu a build is for ----------------------------------------------
# Without BTF, insmod accepts gpreempt only next to the very amdgpu binary
# its layout was made from, by GNU build id (module/kfd/layout_check.c,
# docs/kernels.md "At insmod"), and DKMS never rebuilds gpreempt when
# amdgpu-dkms is upgraded on the same kernel.  The build pins the build id of
# the amdgpu.ko modprobe loads for the kernel (scripts/dkms-build: modinfo
# -k KVER -n amdgpu; the loaded amdgpu's only when there is no such file),
# so each build records that id beside its tree, and the next start
# compares it with the amdgpu there now.

# amdgpu_record: the file that holds the amdgpu build id KVER's build pinned.
amdgpu_record() { printf '%s/gpreempt-%s/.gpreempt-amdgpu-%s\n' "$USRSRC" "$(ds_version)" "$KVER"; }
amdgpu_built() { cat "$(amdgpu_record)" 2>/dev/null || true; }
# reload_record: the file by which "build" (an init container) tells the
# runtime container's install that it built anew, so gpreempt is reloaded.
reload_record() { printf '%s/gpreempt-%s/.gpreempt-reload-%s\n' "$USRSRC" "$(ds_version)" "$KVER"; }

# amdgpu_ids: AMDGPU_RUN, the loaded amdgpu's build id; AMDGPU_DISK, that of
# the amdgpu.ko modprobe loads for KVER; AMDGPU_NOW, the one insmod checks
# (the loaded one, else the file's); AMDGPU_PIN, the one a build pins now
# (the file's, else the loaded one).  "" when unknown.
amdgpu_ids() {
	local ko
	AMDGPU_RUN=$(od -An -v -tx1 -j16 "$SYS/module/amdgpu/notes/.note.gnu.build-id" 2>/dev/null | tr -d ' \n')
	AMDGPU_DISK=
	ko=$(modinfo -k "$KVER" -n amdgpu 2>/dev/null | grep '^/' || true)
	case $ko in
	*.xz) xz -dc "$ko" >"$tmp/amdgpu.ko" 2>/dev/null || rm -f "$tmp/amdgpu.ko"; ko=$tmp/amdgpu.ko ;;
	*.zst) zstd -qdc "$ko" >"$tmp/amdgpu.ko" 2>/dev/null || rm -f "$tmp/amdgpu.ko"; ko=$tmp/amdgpu.ko ;;
	esac
	if [ -n "$ko" ] && [ -f "$ko" ]; then
		AMDGPU_DISK=$(readelf -n "$ko" 2>/dev/null | awk '/Build ID:/ { print $3; exit }')
	fi
	rm -f "$tmp/amdgpu.ko"
	AMDGPU_NOW=${AMDGPU_RUN:-$AMDGPU_DISK}
	AMDGPU_PIN=${AMDGPU_DISK:-$AMDGPU_RUN}
}

# rebuild_helps: a build now would be for the amdgpu insmod checks, and the
# installed one was not (or says not what it was for).  After amdgpu_ids.
rebuild_helps() {
	[ -n "$AMDGPU_NOW" ] && [ "$AMDGPU_PIN" = "$AMDGPU_NOW" ] && [ "$(amdgpu_built)" != "$AMDGPU_NOW" ]
}

# module_rebuild: dkms remove the DaemonSet's build for KVER, then build it
# as on a first start.  Not in a runtime container (GPREEMPT_MODULE=init):
# its init container builds, at the pod's next start.
module_rebuild() {
	local ver
	[ "$MODULE" != init ] ||
		die "gpreempt/$(ds_version) was refused next to amdgpu build id $AMDGPU_NOW (${LOAD_WHY#gpreempt: }) and this container cannot build (GPREEMPT_MODULE=init): delete this pod; its init container rebuilds gpreempt for the amdgpu now loaded"
	ver=$(ds_version)
	dkms remove -m gpreempt -v "$ver" -k "$KVER" >"$tmp/dkms.log" 2>&1 ||
		{ cat "$tmp/dkms.log" >&2; die "dkms remove gpreempt/$ver -k $KVER failed"; }
	rm -f "$(amdgpu_record)"
	module_build
}

# modprobe_gpreempt: modprobe gpreempt.  On a refusal, LOAD_REFUSED is
# mismatch (gpreempt's own refusal of an amdgpu it was not built for,
# module/kfd/layout_check.c and layout_live.c), signature (the kernel's
# module_sig_check() or lockdown, or modprobe's "Key was rejected") or "",
# LOAD_WHY the kernel's line that says so and LOAD_ERR modprobe's error.
# Only the kernel lines this modprobe added count: those after the last
# line before it.  "module verification failed" is no refusal: the kernel
# logs it when it does not enforce signatures, and the load goes on.
modprobe_gpreempt() {
	local last
	LOAD_REFUSED='' LOAD_WHY='' LOAD_ERR=''
	last=$(on_host dmesg 2>/dev/null | tail -n 1)
	if LOAD_ERR=$(on_host modprobe gpreempt 2>&1); then
		return 0
	fi
	[ -z "$LOAD_ERR" ] || printf '%s\n' "$LOAD_ERR" >&2
	LOAD_ERR=$(printf '%s\n' "$LOAD_ERR" | tail -n 1)
	on_host dmesg 2>/dev/null |
		LAST=$last awk '$0 == ENVIRON["LAST"] { n = 0; next } { l[n++] = $0 } END { for (i = 0; i < n; i++) print l[i] }' |
		sed 's/^\[[^]]*\] *//' >"$tmp/dmesg"
	LOAD_WHY=$(grep -E '^gpreempt: .*rebuild gpreempt against' "$tmp/dmesg" | tail -n 1)
	if [ -n "$LOAD_WHY" ]; then
		LOAD_REFUSED=mismatch
		return 1
	fi
	LOAD_WHY=$(grep -E 'Loading of .* is rejected|Lockdown: .*unsigned module loading is restricted' "$tmp/dmesg" | tail -n 1)
	if [ -n "$LOAD_WHY" ] || [[ $LOAD_ERR == *"Key was rejected by service"* ]] ||
	   [[ $LOAD_ERR == *"Required key not available"* ]]; then
		LOAD_REFUSED=signature
	fi
	return 1
}

# load_failed: stop, with why the kernel refused gpreempt and what fixes it.
load_failed() {
	local why ver
	why=${LOAD_WHY:+" (the node's kernel log: $LOAD_WHY)"}
	why=${why:-${LOAD_ERR:+" ($LOAD_ERR)"}}
	ver=$(ds_version)
	case $LOAD_REFUSED in
	mismatch)
		if [ -n "$AMDGPU_RUN" ] && [ -n "$AMDGPU_DISK" ] && [ "$AMDGPU_RUN" != "$AMDGPU_DISK" ]; then
			die "modprobe gpreempt was refused: gpreempt/$ver is built for another amdgpu than the loaded one$why. The loaded amdgpu (build id $AMDGPU_RUN) is not the amdgpu.ko modprobe loads for $KVER (build id $AMDGPU_DISK), the one a build is made against: an amdgpu-dkms upgrade waits for a reboot. Reboot the node (or reload amdgpu); the pod then rebuilds gpreempt if it must"
		elif [ -n "$AMDGPU_NOW" ] && [ "$(amdgpu_built)" = "$AMDGPU_NOW" ]; then
			die "modprobe gpreempt was refused: gpreempt/$ver does not match the loaded amdgpu$why, though it was built for this very amdgpu (build id $AMDGPU_NOW), so another build would be refused too: the layout made from its source does not hold (docs/kernels.md, \"At insmod\"). Build amdgpu with BTF on the node (AMDGPU_BTF=1 dkms install --force amdgpu/<version>), then delete this pod"
		fi
		die "modprobe gpreempt was refused: gpreempt/$ver is built for another amdgpu than the loaded one$why, and the pod cannot tell which amdgpu it runs next to (no build id in $SYS/module/amdgpu/notes, nor of modinfo -k $KVER -n amdgpu). On the node: dkms remove gpreempt/$ver -k $KVER, then delete this pod" ;;
	signature)
		die "modprobe gpreempt was refused: the kernel rejected its signature$why. With Secure Boot, enrol DKMS's key on the node (mokutil --import /var/lib/dkms/mok.pub, reboot, confirm it in MokManager), or have DKMS sign with a key the node trusts (mok_signing_key, mok_certificate in /etc/dkms/framework.conf); then delete this pod" ;;
	esac
	die "modprobe gpreempt failed${LOAD_ERR:+ ($LOAD_ERR)}: the reason is in the node's kernel log (dmesg | grep gpreempt)"
}

# module_load: load the DKMS build (reload it after a rebuild).
module_load() {
	# Load: amdgpu first (gpreempt attaches to amdkfd's functions).
	if loaded gpreempt && [ -n "$REBUILT" ]; then
		say "reloading gpreempt (new build; rmmod resumes every parked queue)"
		on_host modprobe -r gpreempt || die "modprobe -r gpreempt failed"
	fi
	if ! loaded gpreempt; then
		loaded amdgpu || on_host modprobe amdgpu ||
			die "modprobe amdgpu failed: gpreempt needs amdgpu (amdkfd) loaded"
		if ! modprobe_gpreempt; then
			# Once: a build refused next to the amdgpu it was made
			# for is not helped by another.
			amdgpu_ids
			if [ "$LOAD_REFUSED" != mismatch ] || ! rebuild_helps; then load_failed; fi
			say "gpreempt/$(ds_version) was refused next to amdgpu build id $AMDGPU_NOW (${LOAD_WHY#gpreempt: }): rebuilding it once"
			module_rebuild
			modprobe_gpreempt || { amdgpu_ids; load_failed; }
		fi
		say "loaded gpreempt"
	else
		say "gpreempt is loaded"
	fi
}

module_remove() {
	local ver
	if loaded gpreempt; then
		if on_host modprobe -r gpreempt; then
			say "unloaded gpreempt (every parked queue resumed)"
		else
			warn "modprobe -r gpreempt failed; it stays loaded"
		fi
	fi
	[ "$ON_STOP" = uninstall ] && [ "$MODULE" != skip ] || return 0
	if [ "$MODULE" = init ]; then
		warn "GPREEMPT_MODULE=init: this container has no DKMS, so gpreempt/$(ds_version)'s build stays on the node (dkms remove -m gpreempt -v $(ds_version) --all on the node, or clean with the base DaemonSet: docs/containers.md)"
		return 0
	fi
	ver=$(ds_version)	# ours only: never the node's gpreempt/VERSION
	if [ -n "$(dkms status -m gpreempt -v "$ver" 2>/dev/null)" ]; then
		if dkms remove -m gpreempt -v "$ver" --all >/dev/null 2>&1; then
			say "dkms remove gpreempt/$ver"
		else
			warn "dkms remove gpreempt/$ver failed"
		fi
	fi
	if [ -f "$USRSRC/gpreempt-$ver/.gpreempt-src-id" ]; then
		rm -rf "$USRSRC/gpreempt-$ver"
		say "removed $USRSRC/gpreempt-$ver"
	fi
}

# --- gpreemptctl on the host ------------------------------------------------
# A stamp beside the binary holds the sha256 of the one a DaemonSet wrote, so
# a node's own $HOST_CTL (a make install with PREFIX=/opt/gpreempt) is saved
# before ours replaces it, and put back at uninstall.
CTL_STAMP=$PREFIX/sbin/.gpreemptctl.gpreempt-daemonset	# host path

# ours_ctl FILE: FILE is the gpreemptctl a DaemonSet wrote.
ours_ctl() {
	[ -f "$1" ] && [ -f "$ROOT$CTL_STAMP" ] &&
		[ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$(cat "$ROOT$CTL_STAMP")" ]
}

ctl_install() {
	[ -x "$CTL_IMAGE" ] || die "no gpreemptctl at $CTL_IMAGE (GPREEMPT_CTL)"
	keep_backup "$ROOT$HOST_CTL" ours_ctl
	put "$CTL_IMAGE" "$ROOT$HOST_CTL" 0755
	sha256sum <"$ROOT$HOST_CTL" | cut -d' ' -f1 >"$ROOT$CTL_STAMP"
	# The runtime execs it on the host: prove it runs there (noexec mount,
	# missing libraries).
	on_host "$HOST_CTL" --help >/dev/null 2>&1 ||
		die "$HOST_CTL does not run on the host (a noexec $PREFIX? a dynamically linked build?)"
}

ctl_remove() {
	local f=$ROOT$HOST_CTL
	if ours_ctl "$f"; then
		rm -f "$f"
		if [ -e "$f$BACKUP_SUFFIX" ]; then
			mv -f "$f$BACKUP_SUFFIX" "$f"
			say "restored the node's own $HOST_CTL"
		else
			say "removed $HOST_CTL"
		fi
	elif [ -e "$f" ]; then
		say "$HOST_CTL is not the one the DaemonSet wrote: left alone"
	fi
	rm -f "$ROOT$CTL_STAMP"
	rmdir "$ROOT$PREFIX/sbin" 2>/dev/null || true
}

# --- /etc/gpreempt.conf and /etc/modprobe.d/gpreempt.conf ---------------------
# with_mark FILE > OUT: the MARK line, then FILE.
with_mark() { printf '%s\n' "$MARK"; cat "$1"; }

# /etc/modprobe.d/gpreempt.conf is generated, never copied: a modprobe.d
# line such as "install MODULE CMD" runs CMD as root whenever MODULE loads.
# The ConfigMap's module-params gives the parameters, one KEY=VALUE a line
# (blank lines, # comments), KEY one of those of the gpreempt.ko modprobe
# loads (modinfo -p gpreempt on the host), VALUE of [A-Za-z0-9_,.-].  The
# file is the MARK, "softdep gpreempt pre: amdgpu" and one "options gpreempt
# KEY=VALUE..." line.  The old modprobe.conf key is converted when all its
# lines are "options gpreempt KEY=VALUE...", that softdep, comments or blank.
# On anything else the ConfigMap is refused, with the line and why, and the
# node's file stays as it was.

# printable TEXT: TEXT for the log, control characters as '?', cut short.
printable() { printf '%s' "$1" | tr -c '[:print:]' '?' | cut -c1-120; }

# param_add WORD WHERE: add WORD, a KEY=VALUE, to $tmp/params, or set REFUSED.
param_add() {
	local key
	if [[ ! $1 =~ ^([A-Za-z0-9_]+)=[A-Za-z0-9_,.-]+$ ]]; then
		REFUSED="$2: not KEY=VALUE (KEY a gpreempt parameter, VALUE letters, digits and _,.- only)"
		return 1
	fi
	key=${BASH_REMATCH[1]}
	if [ ! -f "$tmp/param-names" ]; then
		if ! on_host modinfo -p gpreempt 2>/dev/null | sed -n 's/^\([A-Za-z0-9_]*\):.*/\1/p' >"$tmp/param-names" ||
		   [ ! -s "$tmp/param-names" ]; then
			rm -f "$tmp/param-names"
			REFUSED="$2: no gpreempt module on the node to check the parameter against (modinfo -p gpreempt)"
			return 1
		fi
	fi
	if ! grep -qxF "$key" "$tmp/param-names"; then
		REFUSED="$2: gpreempt has no parameter $key (it has: $(tr '\n' ' ' <"$tmp/param-names" | sed 's/ $//'))"
		return 1
	fi
	if grep -q "^$key=" "$tmp/params"; then
		REFUSED="$2: $key is given twice"
		return 1
	fi
	printf '%s\n' "$1" >>"$tmp/params"
}

# module_params_read: the ConfigMap's parameters into $tmp/params, one
# KEY=VALUE a line.  Return 1 (REFUSED says why) on a line it refuses.
module_params_read() {
	local src=$CONFIG_DIR/module-params old=$CONFIG_DIR/modprobe.conf n=0 line
	: >"$tmp/params"
	rm -f "$tmp/param-names"
	if [ -f "$src" ] && [ -f "$old" ]; then
		REFUSED="the ConfigMap has module-params and the old modprobe.conf key: delete modprobe.conf"
		return 1
	fi
	if [ -f "$src" ]; then
		while IFS= read -r line || [ -n "$line" ]; do
			n=$((n + 1))
			line=${line#"${line%%[![:space:]]*}"}
			line=${line%"${line##*[![:space:]]}"}
			case $line in ''|'#'*) continue ;; esac
			param_add "$line" "module-params line $n \"$(printable "$line")\"" || {
				[[ $line != *[[:space:]]* ]] ||
					REFUSED="$REFUSED; module-params takes gpreempt's parameters only, no modprobe.d lines (install, options, blacklist, softdep)"
				return 1
			}
		done <"$src"
	elif [ -f "$old" ]; then
		modprobe_lines_read "$old" modprobe.conf || return 1
	fi
}

# modprobe_lines_read FILE NAME: FILE's "options gpreempt KEY=VALUE..." lines
# into $tmp/params; that softdep, comments and blank lines are skipped.
# Return 1 (REFUSED names NAME's line) on any other line.
modprobe_lines_read() {
	local n=0 line w
	local -a words
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		read -r -a words <<<"$line" || true
		case "${words[*]}" in ''|'#'*|'softdep gpreempt pre: amdgpu') continue ;; esac
		if [ "${#words[@]}" -lt 3 ] || [ "${words[0]}" != options ] || [ "${words[1]}" != gpreempt ]; then
			REFUSED="$2 line $n \"$(printable "$line")\": the ConfigMap's modprobe.conf key is no longer copied to the node; put gpreempt's parameters in the module-params key, one KEY=VALUE a line (docs/containers.md)"
			return 1
		fi
		for w in "${words[@]:2}"; do
			param_add "$w" "$2 line $n \"$(printable "$line")\"" || return 1
		done
	done <"$1"
}

# modprobe_conf_install: /etc/modprobe.d/gpreempt.conf from the ConfigMap's
# module-params.  Always returns 0: a refusal is a warning (run re-reads the
# ConfigMap when it changes), and gpreempt loads with the parameters it had.
modprobe_conf_install() {
	local dest=$ROOT/etc/modprobe.d/gpreempt.conf
	REFUSED=
	if [ ! -f "$CONFIG_DIR/module-params" ] && [ ! -f "$CONFIG_DIR/modprobe.conf" ] && [ -e "$dest" ]; then
		# The node's own file is the operator's.  One of ours may come
		# from a DaemonSet that copied its ConfigMap's modprobe.conf
		# verbatim, "install" lines and all, which run at each modprobe:
		# it is read as this script would read that key, and rewritten
		# with the parameters it may keep, or with none.
		ours "$dest" || return 0
		: >"$tmp/params"
		rm -f "$tmp/param-names"
		if ! modprobe_lines_read "$dest" /etc/modprobe.d/gpreempt.conf; then
			warn "an earlier DaemonSet's /etc/modprobe.d/gpreempt.conf was refused, rewritten without parameters: $REFUSED"
			: >"$tmp/params"
		fi
	elif ! module_params_read; then
		warn "the ConfigMap's module parameters were refused, /etc/modprobe.d/gpreempt.conf is unchanged: $REFUSED"
		return 0
	fi
	[ ! -f "$CONFIG_DIR/modprobe.conf" ] ||
		warn "the ConfigMap's modprobe.conf key is deprecated: its options gpreempt lines were converted; use module-params (KEY=VALUE lines, docs/containers.md)"
	{
		printf '%s\n' "$MARK" "# gpreempt's parameters: the ConfigMap's module-params (modinfo -p gpreempt)." \
			"softdep gpreempt pre: amdgpu"
		[ ! -s "$tmp/params" ] || printf 'options gpreempt %s\n' "$(tr '\n' ' ' <"$tmp/params" | sed 's/ $//')"
	} >"$tmp/modprobe.conf"
	keep_backup "$dest"
	put "$tmp/modprobe.conf" "$dest" 0644
}

# config_apply: make /etc/gpreempt.conf the ConfigMap's and apply it.  The
# file replaces the host's only after "gpreemptctl apply" took it (apply checks
# every line first and changes nothing on a bad one), so the hook's
# "container max_priority" always comes from a file that applied.
# Return: 0 applied (or nothing to do), 1 refused (retried by run).
config_apply() {
	local dest=$ROOT/etc/gpreempt.conf new=/etc/gpreempt.conf.gpreempt-new out
	if [ -f "$CONFIG_DIR/gpreempt.conf" ]; then
		with_mark "$CONFIG_DIR/gpreempt.conf" >"$tmp/gpreempt.conf"
	elif [ -e "$dest" ]; then
		cp "$dest" "$tmp/gpreempt.conf"	# no ConfigMap: the node's own
	else
		with_mark "$SRC/etc/gpreempt.conf" >"$tmp/gpreempt.conf"
	fi
	if ! loaded gpreempt; then
		cmp -s "$tmp/gpreempt.conf" "$dest" 2>/dev/null || keep_backup "$dest"
		put "$tmp/gpreempt.conf" "$dest" 0644
		warn "gpreempt is not loaded: /etc/gpreempt.conf installed, not applied"
		return 0
	fi
	cp "$tmp/gpreempt.conf" "$ROOT$new"
	if out=$(on_host "$HOST_CTL" apply "$new" 2>&1); then
		rm -f "$ROOT$new"
		cmp -s "$tmp/gpreempt.conf" "$dest" 2>/dev/null || keep_backup "$dest"
		put "$tmp/gpreempt.conf" "$dest" 0644
		say "applied /etc/gpreempt.conf${out:+: $out}"
		return 0
	fi
	rm -f "$ROOT$new"
	warn "the ConfigMap's gpreempt.conf was refused, /etc/gpreempt.conf is unchanged (retried every ${RESYNC_S} s): $out"
	return 1
}

config_remove() {
	local f
	for f in "$ROOT/etc/gpreempt.conf" "$ROOT/etc/modprobe.d/gpreempt.conf"; do
		ours "$f" || continue
		rm -f "$f"
		if [ -e "$f$BACKUP_SUFFIX" ]; then
			mv -f "$f$BACKUP_SUFFIX" "$f"
			say "restored the node's own ${f#"$ROOT"}"
		else
			say "removed ${f#"$ROOT"}"
		fi
	done
}

# --- the container hooks -----------------------------------------------------
# ours_hook FILE: a hooks.d file of ours runs our gpreemptctl (a make
# install's runs /usr/local/sbin/gpreemptctl).  podman and CRI-O read only
# *.json, so a backup beside it is not run.
ours_hook() { grep -qF "\"$HOST_CTL\"" "$1"; }

hooks_install() {
	local h
	for h in create poststop; do
		sed "s|@SBINDIR@|$PREFIX/sbin|" "$SRC/etc/oci-hooks.d/gpreempt-$h.json" >"$tmp/gpreempt-$h.json"
		keep_backup "$ROOT$HOOKS_DIR/gpreempt-$h.json" ours_hook
		put "$tmp/gpreempt-$h.json" "$ROOT$HOOKS_DIR/gpreempt-$h.json" 0644
	done
}

hooks_remove() {
	local f
	for f in "$ROOT$HOOKS_DIR"/gpreempt-create.json "$ROOT$HOOKS_DIR"/gpreempt-poststop.json; do
		if ! { [ -f "$f" ] && ours_hook "$f"; }; then continue; fi
		rm -f "$f"
		if [ -e "$f$BACKUP_SUFFIX" ]; then
			mv -f "$f$BACKUP_SUFFIX" "$f"
			say "restored the node's own ${f#"$ROOT"}"
		else
			say "removed ${f#"$ROOT"}"
		fi
	done
}

nri_install() {
	local conf=$ROOT$NRI_CONF link=$ROOT$NRI_BIN/gpreempt
	if [ ! -e "$conf" ]; then
		put "$SRC/etc/nri/conf.json" "$conf" 0644
	elif jq -e '.plugins[]? | select(.type == "gpreempt")' "$conf" >/dev/null 2>&1; then
		say "$NRI_CONF names the gpreempt plugin"
	elif jq '.plugins = ((.plugins // []) + [{"type": "gpreempt"}])' "$conf" >"$tmp/nri.json" 2>/dev/null; then
		keep_backup "$conf" false
		put "$tmp/nri.json" "$conf" 0644
		say "added the gpreempt plugin to the node's $NRI_CONF"
	else
		warn "$NRI_CONF is not valid JSON: left alone, containerd 1.6 will not run the gpreempt plugin"
	fi
	if [ "$(readlink "$link" 2>/dev/null || true)" != "$HOST_CTL" ]; then
		mkdir -p "$ROOT$NRI_BIN"
		ln -sfn "$HOST_CTL" "$link"
		say "linked $NRI_BIN/gpreempt -> $HOST_CTL"
	fi
}

nri_remove() {
	local conf=$ROOT$NRI_CONF link=$ROOT$NRI_BIN/gpreempt
	# The plugin is ours only if its link is (a make install's links to
	# /usr/local/sbin/gpreemptctl, and its conf.json stays then).
	[ "$(readlink "$link" 2>/dev/null || true)" = "$HOST_CTL" ] || return 0
	rm -f "$link"
	say "removed $NRI_BIN/gpreempt"
	if [ -f "$conf" ] && jq -e '.plugins[]? | select(.type == "gpreempt")' "$conf" >/dev/null 2>&1; then
		if jq -e '[.plugins[] | select(.type != "gpreempt")] | length == 0' "$conf" >/dev/null; then
			rm -f "$conf"
			say "removed $NRI_CONF (gpreempt was its only plugin)"
		else
			jq -S '.plugins |= map(select(.type != "gpreempt"))' "$conf" >"$tmp/nri.json"
			# The node's own file, byte for byte, if nothing else changed.
			if jq -S . "$conf$BACKUP_SUFFIX" 2>/dev/null | cmp -s - "$tmp/nri.json"; then
				cp "$conf$BACKUP_SUFFIX" "$tmp/nri.json"
			fi
			put "$tmp/nri.json" "$conf" 0644
			say "removed the gpreempt plugin from $NRI_CONF"
		fi
	fi
	rm -f "$conf$BACKUP_SUFFIX"
	rmdir "$ROOT$NRI_BIN" "$ROOT${NRI_CONF%/*}" 2>/dev/null || true	# if empty
}

# --- the NRI v2 plugin (containerd 1.7+, CRI-O with NRI) -------------------
# Copied to the host and run there (nsenter into the host's mount and cgroup
# namespaces: the hook finds cgroups as the runtime sees them) while "run"
# runs; started again when it exits (the runtime restarted and closed the
# connection: its Synchronize then rewrites every annotated container's rule).
NRI2_PID=
nri2_install() {
	[ -x "$NRI2_IMAGE" ] || { say "no NRI v2 plugin in this image ($NRI2_IMAGE)"; return 0; }
	put "$NRI2_IMAGE" "$ROOT$HOST_NRI2" 0755
}

nri2_start() {
	[ -x "$ROOT$HOST_NRI2" ] || return 0
	[ -n "$NRI2_PID" ] && kill -0 "$NRI2_PID" 2>/dev/null && return 0
	if ! on_host test -S "$NRI2_SOCK"; then
		[ -n "${NRI2_SAID:-}" ] || say "no $NRI2_SOCK on the host: NRI is off (containerd 1.7: [plugins.\"io.containerd.nri.v1.nri\"] disable = false); the NRI v2 plugin waits for it"
		NRI2_SAID=1
		return 0
	fi
	nsenter --target 1 --mount --cgroup -- "$HOST_NRI2" --gpreemptctl "$HOST_CTL" --socket "$NRI2_SOCK" &
	NRI2_PID=$!
	say "started the NRI v2 plugin $HOST_NRI2 (pid $NRI2_PID) on $NRI2_SOCK"
}

nri2_remove() {
	if [ -n "$NRI2_PID" ]; then
		kill "$NRI2_PID" 2>/dev/null || true
		wait "$NRI2_PID" 2>/dev/null || true
		NRI2_PID=
	fi
	[ -e "$ROOT$HOST_NRI2" ] && rm -f "$ROOT$HOST_NRI2" && say "removed $HOST_NRI2"
	return 0
}

# --- what the runtimes need beyond these files (warnings only) ---------------
runtime_check() {
	local toml=$ROOT/etc/containerd/config.toml v
	if [ -f "$toml" ] && ! grep -qE 'pod_annotations *=.*gpreempt\.io/(priority|\*)|pod_annotations *=.*"\*"' "$toml"; then
		warn "containerd passes a pod's annotations to its containers only when its runtime lists them: add pod_annotations = [\"gpreempt.io/priority\"] to [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc] in /etc/containerd/config.toml and restart containerd (docs/containers.md)"
	fi
	if v=$(on_host containerd --version 2>/dev/null); then
		v=$(printf '%s\n' "$v" | grep -oE ' v?[0-9]+\.[0-9]+' | head -n 1 | tr -d ' v')
		case $v in
		1.[0-6]|'') ;;
		*) [ -x "$ROOT$HOST_NRI2" ] ||
			warn "containerd $v does not run NRI v0.1 plugins for containers and this image has no NRI v2 plugin: annotations have no effect on this node (docs/containers.md, \"containerd 1.7+\"); cgroup rules in the ConfigMap still work" ;;
		esac
	fi
	if grep -rqsE '^[[:space:]]*hooks_dir' "$ROOT/etc/crio/crio.conf" "$ROOT/etc/crio/crio.conf.d" &&
	   ! grep -rqsF "$HOOKS_DIR" "$ROOT/etc/crio/crio.conf" "$ROOT/etc/crio/crio.conf.d"; then
		warn "CRI-O's hooks_dir does not list $HOOKS_DIR: add it, or CRI-O will not run the hook"
	fi
}

install() {
	[ -d "$ROOT/etc" ] || die "the host's /etc is not at $ROOT/etc (GPREEMPT_ROOT; the DaemonSet's host-etc volume)"
	say "installing on $(cat "$ROOT/etc/hostname" 2>/dev/null || echo this node), kernel $KVER"
	# The parameters are checked against the module modprobe loads: the
	# DKMS build's, so /etc/modprobe.d comes between build and load.
	case $MODULE in
	dkms) module_build; modprobe_conf_install; module_load ;;
	init) init_built; modprobe_conf_install; module_load; rm -f "$(reload_record)" ;;
	skip) modprobe_conf_install
	      loaded gpreempt || warn "GPREEMPT_MODULE=skip and gpreempt is not loaded: the hooks will set nothing" ;;
	*) die "GPREEMPT_MODULE=$MODULE: expected dkms, init or skip" ;;
	esac
	ctl_install
	if config_apply; then CONFIG_APPLIED=1; else CONFIG_APPLIED=0; fi
	hooks_install
	nri_install
	nri2_install
	runtime_check
	if loaded gpreempt; then
		# After a (re)load the maps are empty: the running containers' rules
		# come back from their records (and stale records go).
		on_host "$HOST_CTL" hook resync || warn "gpreemptctl hook resync failed"
	fi
	say "ready: containers annotated gpreempt.io/priority get a cgroup rule (gpreemptctl list on the node)"
}

# build: the DKMS build of install, for an init container; a new build is
# recorded for the runtime container's install, which reloads gpreempt.
build() {
	[ "$MODULE" = dkms ] || die "build is for the init container, with GPREEMPT_MODULE=dkms (it is $MODULE)"
	module_build
	if [ -n "$REBUILT" ]; then
		: >"$(reload_record)"
		say "built anew: the runtime container reloads gpreempt"
	fi
}

# init_built: with GPREEMPT_MODULE=init, the init container's build is there
# and is of this image's source; sets REBUILT from its record.
init_built() {
	local dst
	[ -f "$SRC/dkms.conf" ] || die "no $SRC/dkms.conf in this image (GPREEMPT_SRC; the runtime image copies it)"
	dst=$USRSRC/gpreempt-$(ds_version)
	[ -f "$dst/.gpreempt-src-id" ] ||
		die "GPREEMPT_MODULE=init and no gpreempt/$(ds_version) build on the node ($dst): the pod's init container runs \"gpreempt-node build\" with the builder image (deploy/overlays/init-build)"
	[ "$(cat "$dst/.gpreempt-src-id")" = "$(src_id)" ] ||
		die "the node's gpreempt/$(ds_version) build is of another source than this image's: the init container and this one must be one release (the builder and runtime images of one build)"
	REBUILT=
	[ ! -e "$(reload_record)" ] || REBUILT=1
}

uninstall() {
	nfd_remove
	case $ON_STOP in
	uninstall|unload) ;;
	keep) say "GPREEMPT_ON_STOP=keep: the node keeps gpreempt and its hooks"; return 0 ;;
	*) die "GPREEMPT_ON_STOP=$ON_STOP: expected uninstall, unload or keep" ;;
	esac
	# Hooks first: a hooks.d file naming a removed binary would make the
	# runtime refuse every annotated container.
	hooks_remove
	nri_remove
	nri2_remove
	module_remove
	ctl_remove
	[ "$ON_STOP" = uninstall ] && config_remove
	say "uninstalled ($ON_STOP)"
}

# --- health (the DaemonSet's probes) -----------------------------------------
# Healthy: gpreempt is loaded and its monitor thread ticks.  The thread ticks
# at least every idle_max_us: while no queue has work the period doubles
# from idle_us up to it (deep idle, module/monitor/monitor.c), and it ticks
# the same in shadow mode (enable=0).  Each tick's count, gp_stats.ticks,
# reaches the map at least every 10 ms of ticks (module/monitor/publish.c);
# gpreemptctl --json status reads it, with how long ago the last tick was
# (stats.tick_age_ms, from gp_stats.last_tick_ns): health fails when that is
# longer than two idle_max_us and HEALTH_SLACK_S, from one reading.  A
# gpreemptctl or module without it (tick_age_ms null or absent): health keeps
# the count it last saw and when it changed in HEALTH_STATE (the
# container's /tmp, shared by the probes and run), and fails when it has not
# changed for that long; a first reading (a new container, or gpreempt
# reloaded) has nothing to compare with and passes: the next one decides.
HEALTH_STATE=${TMPDIR:-/tmp}/gpreempt-health
HEALTH_SLACK_S=${GPREEMPT_HEALTH_SLACK_S:-10}

# health_check: 0 if healthy, else 1 with HEALTH_WHY, one line saying why.
health_check() {
	local out why ticks now max_us limit age last_ticks='' last_t=''
	HEALTH_WHY=
	if ! loaded gpreempt; then
		HEALTH_WHY="gpreempt is not loaded"
		return 1
	fi
	if ! out=$("$CTL_IMAGE" --json status 2>&1); then
		why=$(printf '%s\n' "$out" | jq -r '.error // empty' 2>/dev/null || true)
		[ -n "$why" ] || why=$(printf '%s\n' "$out" | tail -n 1)
		HEALTH_WHY="gpreemptctl status failed: $(printable "$why")"
		return 1
	fi
	ticks=$(printf '%s\n' "$out" | jq -r '.stats.ticks // empty' 2>/dev/null || true)
	if [[ ! $ticks =~ ^[0-9]+$ ]]; then
		HEALTH_WHY="gpreemptctl --json status has no stats.ticks"
		return 1
	fi
	now=$(date +%s)
	max_us=$(cat "$SYS/module/gpreempt/parameters/idle_max_us" 2>/dev/null || true)
	[[ $max_us =~ ^[0-9]+$ ]] || max_us=10000000	# the parameter's maximum
	limit=$(((2 * max_us + 999999) / 1000000 + HEALTH_SLACK_S))
	age=$(printf '%s\n' "$out" | jq -r '.stats.tick_age_ms // empty' 2>/dev/null || true)
	if [[ $age =~ ^[0-9]+$ ]]; then
		if [ "$age" -gt $((limit * 1000)) ]; then
			HEALTH_WHY="gpreempt's monitor thread has not ticked for $((age / 1000)) s (gp_stats.ticks stays $ticks; it ticks at least every idle_max_us, $max_us us): dmesg | grep gpreempt on the node"
			return 1
		fi
		return 0
	fi
	if [ -f "$HEALTH_STATE" ]; then read -r last_ticks last_t <"$HEALTH_STATE" || true; fi
	if [[ ! $last_t =~ ^[0-9]+$ ]] || [ "$last_ticks" != "$ticks" ]; then
		printf '%s %s\n' "$ticks" "$now" >"$HEALTH_STATE.$$"
		mv -f "$HEALTH_STATE.$$" "$HEALTH_STATE"
		return 0
	fi
	if [ $((now - last_t)) -gt "$limit" ]; then
		HEALTH_WHY="gpreempt's monitor thread has not ticked for $((now - last_t)) s (gp_stats.ticks stays $ticks; it ticks at least every idle_max_us, $max_us us): dmesg | grep gpreempt on the node"
		return 1
	fi
}

health() {
	if health_check; then
		say "healthy"
	else
		say "unhealthy: $HEALTH_WHY"
		exit 1
	fi
}

# --- Node Feature Discovery --------------------------------------------------
# While gpreempt is healthy, run keeps a feature file for NFD's local source
# (nfd-worker reads the host's features.d: key=value lines, each a node
# label), so LC pods can select nodes where gpreempt protects them.  It goes
# when gpreempt is unhealthy and whenever the pod stops, whatever
# GPREEMPT_ON_STOP says: a stopped pod can no longer vouch for the node.
# The directories are NFD's: created if missing, never removed.
NFD_FILE=/etc/kubernetes/node-feature-discovery/features.d/gpreempt	# host path

# park_mode: how gpreempt parks on this node's GPUs, by gpreemptctl
# doctor's rule (tools/gpreemptctl/doctor_gpu.c, check_sched): mes for a
# GPU of gfx11 or later (one queue unmapped), else hws (the whole device
# remapped) or, with amdgpu.sched_policy=2, nohws (eviction only).  The
# node's costliest GPU decides; "" without a GPU in KFD's topology.
park_mode() {
	local props gfx policy mode=''
	policy=$(cat "$SYS/module/amdgpu/parameters/sched_policy" 2>/dev/null || true)
	for props in "$SYS"/class/kfd/kfd/topology/nodes/*/properties; do
		gfx=$(awk '$1 == "gfx_target_version" { print $2; exit }' "$props" 2>/dev/null || true)
		if [[ ! $gfx =~ ^[0-9]+$ ]] || [ "$gfx" = 0 ]; then continue; fi	# a CPU node: 0
		if [ "$gfx" -lt 110000 ]; then
			if [ "$policy" = 2 ]; then mode=nohws; else mode=hws; fi
			break
		fi
		mode=mes
	done
	printf '%s\n' "$mode"
}

# nfd_update: the feature file if gpreempt is healthy, else none.  Says so
# when that changes.  Returns health_check's status.
nfd_update() {
	local f=$ROOT$NFD_FILE park
	if ! health_check; then
		if [ -e "$f" ]; then
			rm -f "$f"
			warn "unhealthy ($HEALTH_WHY): removed ${NFD_FILE}"
		fi
		return 1
	fi
	park=$(park_mode)
	{
		echo "gpreempt.io/active=true"
		[ -z "$park" ] || echo "gpreempt.io/park=$park"
	} >"$tmp/nfd"
	cmp -s "$tmp/nfd" "$f" 2>/dev/null && return 0
	mkdir -p "${f%/*}"
	cp "$tmp/nfd" "$f.gpreempt-tmp"
	mv -f "$f.gpreempt-tmp" "$f"
	say "NFD feature file $NFD_FILE: $(tr '\n' ' ' <"$f" | sed 's/ $//')"
}

nfd_remove() {
	[ -e "$ROOT$NFD_FILE" ] || return 0
	rm -f "$ROOT$NFD_FILE"
	say "removed $NFD_FILE"
}

conf_sum() { cat "$CONFIG_DIR/gpreempt.conf" "$CONFIG_DIR/module-params" "$CONFIG_DIR/modprobe.conf" 2>/dev/null | sha256sum; }

run() {
	local sum sleeper=
	stop() {
		[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null || true
		say "stopping (GPREEMPT_ON_STOP=$ON_STOP)"
		uninstall
		exit 0
	}
	trap stop TERM INT
	install
	nri2_start
	nfd_update || true
	sum=$(conf_sum)
	while :; do
		sleep "$RESYNC_S" &
		sleeper=$!
		wait "$sleeper" || true
		sleeper=
		nri2_start
		if [ "$(conf_sum)" != "$sum" ] || [ "$CONFIG_APPLIED" = 0 ]; then
			sum=$(conf_sum)
			say "re-applying the ConfigMap"
			modprobe_conf_install
			if config_apply; then
				CONFIG_APPLIED=1
				# A lowered "container max_priority" reaches the
				# running containers' rules (the hook reads it from
				# /etc/gpreempt.conf, just written).
				! loaded gpreempt || on_host "$HOST_CTL" hook resync >/dev/null ||
					warn "gpreemptctl hook resync failed"
			else
				CONFIG_APPLIED=0
			fi
		elif [ -e "$ROOT/run/gpreempt/pending" ] && loaded gpreempt; then
			# Rules whose cgroup did not exist yet (kubelet creates the
			# QoS slices after boot): applied once it does.
			on_host "$HOST_CTL" apply --if-pending /etc/gpreempt.conf >/dev/null 2>&1 ||
				warn "gpreemptctl apply --if-pending failed"
			[ -e "$ROOT/run/gpreempt/pending" ] || say "the pending cgroup rules are applied"
		fi
		nfd_update || true
	done
}

case ${1:-} in
install) install ;;
build) build ;;
uninstall) uninstall ;;
run) run ;;
src-id) src_hash "$SRC" ;;
health) health ;;
features) nfd_update ;;
*) echo "usage: $0 install|build|uninstall|run|health|features|src-id (see the top of this file)" >&2; exit 2 ;;
esac
