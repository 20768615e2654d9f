#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# REVIEW-S3 F15: gpreempt probes KFD functions by bare name.  Another module
# with a function of the same name, loaded after KFD, is what kallsyms finds
# first: a probe there never fires, and gpreempt would silently manage
# nothing.  gpreempt must refuse to load and name the function, and load
# once the decoy is gone.  Runs inside the test guest (test/run-vm sim).
. test/lib/tap.sh
tap_plan 4
OBJ=${GP_OBJ:-.}
dmesg -C
insmod "$OBJ/test/kfdsim/kfdsim.ko" || { tap_not_ok "F15: kfdsim loads"; tap_bail; }
insmod "$OBJ/test/kfdsim/ks_decoy.ko" || { tap_not_ok "F15: the decoy loads"; rmmod kfdsim; tap_bail; }
if insmod "$OBJ/module/gpreempt.ko" 2>/dev/null; then
	tap_not_ok "F15: insmod refused while another module's pqm_uninit comes first # it loaded"
	rmmod gpreempt
else
	tap_ok "F15: insmod refused while another module's pqm_uninit comes first"
fi
tap_check "F15: dmesg names the function and the module" \
	sh -c "dmesg | grep -q 'gpreempt: pqm_uninit resolved to .*ks_decoy.*outside kfdsim'"
rmmod ks_decoy
tap_check "F15: without the decoy, gpreempt loads" insmod "$OBJ/module/gpreempt.ko"
tap_check "F15: rmmod gpreempt" rmmod gpreempt
rmmod kfdsim
dmesg | grep -v 'resolved to' >/dev/null
tap_done
