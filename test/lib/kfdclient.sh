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
