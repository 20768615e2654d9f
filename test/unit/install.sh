#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install honours PREFIX everywhere: install-tools (and install, with
# gpreempt.ko, when module/gpreempt.ko is built) into a DESTDIR with
# PREFIX=/usr; no installed file or link names /usr/local, the unit, the
# hooks.d files and the NRI link name /usr/sbin/gpreemptctl, no @SBINDIR@
# is left; a refused load makes the unit's log name the fix (amdgpu build
# id: rebuild; signature: enrol the key); the default PREFIX gives
# /usr/local/sbin; uninstall removes what install put there and leaves the
# administrator's /etc files.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 20
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/dest

if [ -f module/gpreempt.ko ]; then target=install; else target=install-tools; fi
if ! make -s $target DESTDIR="$D" PREFIX=/usr NRI_V01=no >"$tmp/log" 2>&1; then
	tap_not_ok "install: make $target DESTDIR PREFIX=/usr"
	sed 's/^/# /' "$tmp/log" | tail -n 20
	tap_bail "make $target failed"
fi
tap_ok "install: make $target DESTDIR PREFIX=/usr"
local_refs=$( (grep -rIl /usr/local "$D"; find "$D" -type l -lname '/usr/local*') | sed "s|^$D||" | tr '\n' ' ')
tap_check "install: nothing installed with PREFIX=/usr names /usr/local # ${local_refs:-none}" test -z "$local_refs"
left=$(grep -rIl '@SBINDIR@' "$D" | sed "s|^$D||" | tr '\n' ' ')
tap_check "install: no @SBINDIR@ left # ${left:-none}" test -z "$left"
tap_check "install: gpreemptctl in /usr/sbin, its man page in /usr/share/man/man8" \
	test -x "$D/usr/sbin/gpreemptctl" -a -f "$D/usr/share/man/man8/gpreemptctl.8"
# doctor honours GP_DOCTOR_ROOT and PATH: safe only while it runs with its
# caller's own rights, never raised by a setuid or setgid bit.
setid=$(find "$D" -type f -perm /6000 | sed "s|^$D||" | tr '\n' ' ')
tap_check "install: no installed file is setuid or setgid (gpreemptctl runs with its caller's rights) # ${setid:-none}" \
	test -z "$setid" -a -x "$D/usr/sbin/gpreemptctl"
unit_ok() {
	local u=$D/etc/systemd/system/gpreempt.service
	[ "$(grep -c '^Exec.*=/usr/sbin/gpreemptctl ' "$u")" = 4 ] &&
		grep -qx 'ExecReload=/usr/sbin/gpreemptctl hook resync' "$u"
}
tap_check "install: the unit runs /usr/sbin/gpreemptctl (apply, resync; reload: apply, resync)" unit_ok
retry_ok() {
	local u=$D/etc/systemd/system
	grep -q '^Wants=gpreempt-retry.timer$' "$u/gpreempt.service" &&
		grep -qx 'ExecStart=/usr/sbin/gpreemptctl apply --if-pending /etc/gpreempt.conf' "$u/gpreempt-retry.service" &&
		grep -q '^OnUnitActiveSec=' "$u/gpreempt-retry.timer"
}
tap_check "install: gpreempt.service starts before the container runtimes (containerd, CRI-O, podman's restarts)" \
	grep -qx 'Before=containerd.service crio.service podman-restart.service' "$D/etc/systemd/system/gpreempt.service"
tap_check "install: gpreempt.service wants gpreempt-retry.timer, whose service runs /usr/sbin/gpreemptctl apply --if-pending (rules whose cgroup appears later)" retry_ok
tap_check "install: gpreempt-metrics.service serves gpreemptctl metrics on 127.0.0.1:9464, not enabled by install" \
	sh -c "grep -qx 'ExecStart=/usr/sbin/gpreemptctl metrics --listen 127.0.0.1:9464' '$D/etc/systemd/system/gpreempt-metrics.service' &&
		! find '$D/etc/systemd/system' -path '*.wants/*' -name gpreempt-metrics.service | grep -q ."
if [ -x build/gpreempt-nri ]; then
	tap_check "install: the NRI v2 plugin and gpreempt-nri.service (its socket, /usr/sbin/gpreemptctl)" \
		sh -c "[ -x '$D/usr/sbin/gpreempt-nri' ] && grep -qx 'ExecStart=/usr/sbin/gpreempt-nri --gpreemptctl /usr/sbin/gpreemptctl --socket /var/run/nri/nri.sock' '$D/etc/systemd/system/gpreempt-nri.service'"
else
	tap_skip "install: the NRI v2 plugin and gpreempt-nri.service" "build/gpreempt-nri not built (make nri)"
fi
# A refused load: the unit's ExecStopPost (run as systemd runs it: lines
# joined, the words split, $$ unescaped) names the fix for the reason the
# kernel log gives, and says nothing after a start that worked.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\ncat "%s/kmsg"\n' "$tmp" >"$tmp/bin/dmesg"
printf '#!/bin/sh\necho 0.1\n' >"$tmp/bin/modinfo"
printf '#!/bin/sh\necho 6.12.0-test\n' >"$tmp/bin/uname"
chmod +x "$tmp/bin/dmesg" "$tmp/bin/modinfo" "$tmp/bin/uname"
stop_post() {	# stop_post SERVICE_RESULT KERNEL-LINE: the ExecStopPost's output
	printf '[   12.345678] %s\n' "$2" >"$tmp/kmsg"
	python3 - "$D/etc/systemd/system/gpreempt.service" <<'EOF' >"$tmp/stop-post" || return 1
import re, shlex, sys
text = re.sub(r"\\\n", " ", open(sys.argv[1]).read())
cmd = [l for l in text.splitlines() if l.startswith("ExecStopPost=")][0].split("=", 1)[1]
print("\n".join(w.replace("$$", "$") for w in shlex.split(cmd.lstrip("-"))))
EOF
	[ "$(sed -n 1,2p "$tmp/stop-post" | tr '\n' ' ')" = "/bin/sh -c " ] || return 1
	SERVICE_RESULT=$1 PATH=$tmp/bin:$PATH sh -c "$(tail -n +3 "$tmp/stop-post")"
}
mismatch_ok() {
	stop_post exit-code "gpreempt: amdgpu is not the binary gpreempt was built for: no BTF, build id bb; built for /usr/src/amdgpu-6.10.5, build id aa; rebuild gpreempt against it" |
		grep -q '^gpreempt was built for another amdgpu (gpreempt: amdgpu is not the binary.*): run dkms install --force gpreempt/0.1 -k 6.12.0-test, then systemctl restart gpreempt' &&
		[ -z "$(stop_post success "gpreempt: amdgpu is not the binary gpreempt was built for: rebuild gpreempt against it")" ]
}
tap_check "install: gpreempt.service refused for amdgpu's build id: its log says dkms install --force gpreempt/0.1 -k <kver> (nothing after a start that worked)" mismatch_ok
signature_ok() {
	stop_post exit-code "Loading of unsigned module is rejected" |
		grep -q '^the kernel rejected the signature of gpreempt (Loading of unsigned module is rejected): enrol the DKMS key (mokutil --import /var/lib/dkms/mok.pub'
}
tap_check "install: gpreempt.service refused for its signature: its log says mokutil --import" signature_ok
hooks_ok() {
	local h
	for h in create poststop; do
		jq -e '.hook.path == "/usr/sbin/gpreemptctl"' \
			"$D/usr/share/containers/oci/hooks.d/gpreempt-$h.json" >/dev/null || return 1
	done
}
tap_check "install: the hooks.d files run /usr/sbin/gpreemptctl" hooks_ok
tap_check "install: /opt/nri/bin/gpreempt -> /usr/sbin/gpreemptctl" \
	test "$(readlink "$D/opt/nri/bin/gpreempt")" = /usr/sbin/gpreemptctl
if [ $target = install ]; then
	tap_check "install: gpreempt.ko in /lib/modules/<kver>/extra" \
		sh -c "ls '$D'/lib/modules/*/extra/gpreempt.ko >/dev/null"
else
	tap_skip "install: gpreempt.ko in /lib/modules/<kver>/extra" "module/gpreempt.ko is not built"
fi

tap_check "install: no /etc/nri/conf.json without containerd 1.6 (containerd 1.7+ would fail every container start on it)" \
	test ! -e "$D/etc/nri/conf.json" -a -f "$D/usr/share/gpreempt/nri-conf.json"
make -s uninstall DESTDIR="$D" PREFIX=/usr >"$tmp/log" 2>&1
rest=$(cd "$D" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')
tap_check "install: uninstall leaves only the administrator's /etc files # $rest" \
	test "$rest" = "./etc/gpreempt.conf ./etc/modprobe.d/gpreempt.conf "

# containerd 1.6 (NRI v0.1): install writes conf.json, uninstall takes it
# back as written; one the administrator changed keeps its other plugins.
rm -rf "$D"
make -s install-tools DESTDIR="$D" PREFIX=/usr NRI_V01=yes >"$tmp/log" 2>&1
had=$(jq -c '.plugins' "$D/etc/nri/conf.json" 2>&1)
make -s uninstall DESTDIR="$D" PREFIX=/usr >"$tmp/log" 2>&1
tap_check "install: with containerd 1.6 conf.json names gpreempt ($had), uninstall removes it as written" \
	test "$had" = '[{"type":"gpreempt"}]' -a ! -e "$D/etc/nri/conf.json"
rm -rf "$D"
mkdir -p "$D/etc/nri"
printf '{"version": "0.1", "plugins": [{"type": "other"}, {"type": "gpreempt"}]}\n' >"$D/etc/nri/conf.json"
make -s install-tools DESTDIR="$D" PREFIX=/usr NRI_V01=yes >"$tmp/log" 2>&1
make -s uninstall DESTDIR="$D" PREFIX=/usr >"$tmp/log" 2>&1
tap_check "install: uninstall takes only gpreempt's entry out of an administrator's conf.json ($(jq -c . "$D/etc/nri/conf.json" 2>&1))" \
	jq -e '.version == "0.1" and .plugins == [{"type": "other"}]' "$D/etc/nri/conf.json"

rm -rf "$D"
make -s install-tools DESTDIR="$D" >"$tmp/log" 2>&1
tap_check "install: the default PREFIX is /usr/local (unit and gpreemptctl)" \
	sh -c "[ -x '$D/usr/local/sbin/gpreemptctl' ] && grep -q '^ExecStart=/usr/local/sbin/gpreemptctl apply' '$D/etc/systemd/system/gpreempt.service'"
tap_done
