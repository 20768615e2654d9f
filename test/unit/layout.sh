#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of scripts/btf-layout against the Debian amdgpu.ko BTF the build
# used (build/base.btf + build/kfd.btf).  Expected offsets are the ones
# ../shared/KFD-FACTS.md measured independently with pahole.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
wants=("GP_OFF_kfd_process__mutex 64" "GP_OFF_kfd_process__lead_thread 96"
       "GP_OFF_kfd_process__pasid 160" "GP_OFF_kfd_process__n_pdds 680"
       "GP_OFF_kfd_process__pqm 688" "GP_OFF_queue__properties 40"
       "GP_OFF_queue_properties__is_suspended 70" "GP_OFF_queue_properties__is_active 72"
       "GP_OFF_kfd_node__dqm 128" "GP_OFF_device_queue_manager_ops__update_queue 16"
       "GP_ARG_pqm_create_queue__qid 4")
# A line for each wanted define, 7 generator refusals and 3 more.
tap_plan $((10 + ${#wants[@]}))
gen=build/btf-layout
base=build/base.btf
kfd=build/kfd.btf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x $gen ] || [ ! -s $base ] || [ ! -s $kfd ]; then
	tap_not_ok "btf-layout inputs built (run make first)"
	tap_bail "no btf-layout inputs"
fi

$gen $base $kfd scripts/layout.spec >"$tmp/h" 2>"$tmp/err"
tap_check "full spec generates" test $? -eq 0
for want in "${wants[@]}"; do
	tap_check "layout: $want" grep -qx "#define $want" "$tmp/h"
done

gen_fails_naming() {	# name, spec line, expected message fragment
	printf '%s\n' "$2" >"$tmp/spec"
	if $gen $base $kfd "$tmp/spec" >/dev/null 2>"$tmp/err"; then
		tap_not_ok "$1 # generator succeeded"
	elif grep -qF -- "$3" "$tmp/err"; then
		tap_ok "$1"
	else
		tap_not_ok "$1 # message: $(head -c 200 "$tmp/err")"
	fi
}
gen_fails_naming "missing field is named" "struct kfd_process mutex no_such_field" \
	"struct kfd_process has no field 'no_such_field'"
gen_fails_naming "missing struct is named" "struct no_such_struct x" "struct no_such_struct"
gen_fails_naming "missing function is named" "call no_such_function int(void)" "no_such_function"
gen_fails_naming "changed prototype is named" \
	"call kfd_process_evict_queues int(struct kfd_process *)" \
	"the kernel has 'int(struct kfd_process *, uint32_t)'"
gen_fails_naming "missing parameter is named" "hook pqm_destroy_queue pqm nope" "no parameter 'nope'"
gen_fails_naming "changed dqm->ops member type is named (issue 21)" \
	"optype device_queue_manager_ops.update_queue int(struct device_queue_manager *, struct queue *)" \
	"member update_queue: the kernel has 'int(struct device_queue_manager *, struct queue *, struct mqd_update_info *)'"
gen_fails_naming "a member that is not a function pointer is named" \
	"optype device_queue_manager_ops.nope int(void)" "has no field 'nope'"

printf 'struct queue_properties priority ?no_such_flag\n' >"$tmp/spec"
if $gen $base $kfd "$tmp/spec" >"$tmp/h2" 2>/dev/null &&
	grep -qx '#define GP_HAVE_queue_properties__no_such_flag 0' "$tmp/h2"; then
	tap_ok "optional field reported absent"
else
	tap_not_ok "optional field reported absent"
fi

printf '#include <stdint.h>\n#include <stdbool.h>\ntypedef uint32_t u32;\n#include "%s"\n' \
	"$tmp/h" >"$tmp/t.c"
tap_check "generated function typedefs compile" gcc -fsyntax-only -Wall -Werror "$tmp/t.c"
tap_done
