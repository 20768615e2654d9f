# SPDX-License-Identifier: GPL-2.0
# test/lib/kfdclient.sh - helpers of the VM tests that run a real KFD client
# (libhsakmt, ROCr) on kfdsim's /dev/kfd.  The client prints "key value"
# lines; kfdsim counts every KFD ioctl in $DBG/kfd_ioctls.

# field FILE KEY: the value of a "key value" line.
field() { awk -v k="$2" '$1 == k {sub(/^[^ ]* /, ""); print; exit}' "$1"; }
# has FILE KEY VALUE: the client printed KEY VALUE (else say what, and its errors).
has() {
	local v
	v=$(field "$1" "$2")
	[ "$v" = "$3" ] || { echo "$2: '$v', expected '$3'"; grep '^error' "$1"; return 1; }
}
# calls NAME: how many times KFD ioctl NAME was issued since kfdsim was loaded.
calls() { awk -v k="$1" '$1 == k {print $2}' $DBG/kfd_ioctls; }

# kfdclient_begin NAME: a client test's start: OBJ (GP_OBJ), KO (kfdsim.ko),
# DBG (kfdsim's debugfs), T (a new /tmp/NAME.XXXXXX); the kernel log cleared,
# gpreempt and kfdsim unloaded.
kfdclient_begin() {
	OBJ=${GP_OBJ:-.}
	KO=$OBJ/test/kfdsim/kfdsim.ko
	DBG=/sys/kernel/debug/kfdsim
	T=$(mktemp -d "/tmp/$1.XXXXXX")
	dmesg -C
	rmmod gpreempt 2>/dev/null
	rmmod kfdsim 2>/dev/null
}
# kfdclient_need PROGRAM skip|fail LINE: without PROGRAM (not built), the
# test ends with LINE as ok (a "# SKIP" line) or as not ok, then each other
# check of its plan skipped or failed (tap_skip_rest, tap_bail).
kfdclient_need() {
	[ -x "$1" ] && return 0
	if [ "$2" = skip ]; then
		tap_ok "$3"
		tap_skip_rest "$1 not built"
	else
		tap_not_ok "$3"
		tap_bail "$1 not built"
	fi
	tap_done
	exit
}

# snapshot: the KFD ioctl counts and kfdsim's stats now, for delta, deltas, sdelta.
snapshot() { cp $DBG/kfd_ioctls $T/calls0; cp $DBG/stats $T/stats0; }
# delta NAME [COUNT]: calls of ioctl NAME since the snapshot (up to now, or to COUNT).
delta() {
	local before
	before=$(awk -v k="$1" '$1 == k {print $2}' $T/calls0)
	echo $(( ${2:-$(calls "$1")} - ${before:-0} ))
}
# deltas: "NAME N ..." of every ioctl issued since the snapshot.
deltas() {
	local c d
	for c in $(awk '{print $1}' $DBG/kfd_ioctls); do
		d=$(delta "$c")
		[ "$d" != 0 ] && printf '%s %s ' "$c" "$d"
	done
}
# sdelta KEY: kfdsim's stats counter KEY since the snapshot.
sdelta() { echo $(( $(kstat "$1") - $(awk -v k="$1" '$1 == k {print $2}' $T/stats0) )); }

# psum TGID FIELD: the sum of FIELD over the process's queues (gpreemptctl).
psum() {
	$CTL --json status 2>/dev/null |
		jq -r --argjson t "$1" "[.queues[] | select(.tgid == \$t) | .$2] | add // 0"
}
# all_running TGID: the process has queues, every one running.
all_running() {
	$CTL --json status 2>/dev/null |
		jq -e --argjson t "$1" '[.queues[] | select(.tgid == $t) | .state] | length > 0 and all(. == "running")' >/dev/null
}
# be_cycled PREEMPTS RESUMES: BE's queues' counts (psum), read while LC had work: both above 0.
be_cycled() {
	if [ "${1:-0}" -gt 0 ] && [ "${2:-0}" -gt 0 ]; then
		tap_ok "BE parked and unparked while LC had work ($1/$2)"
	else
		tap_not_ok "BE parked and unparked while LC had work (${1:-none}/${2:-none})"
	fi
}
