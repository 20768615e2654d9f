// SPDX-License-Identifier: GPL-2.0
/* Fixture: definitions kfd-src-layout reads prototypes from (never built). */
#include "kfd_debug.h"

int kfd_dbg_trap_enable(struct kfd_process *target, uint32_t fd,
			void __user *runtime_info, uint32_t *runtime_size)
{
	return 0;
}

int kfd_dbg_trap_disable(struct kfd_process *target)
{
	return 0;
}
