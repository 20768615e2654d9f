/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: the debugger API gpreempt hooks. */
#ifndef KFD_DEBUG_H_INCLUDED
#define KFD_DEBUG_H_INCLUDED

#include "kfd_priv.h"

int kfd_dbg_trap_enable(struct kfd_process *target, uint32_t fd,
			void __user *runtime_info, uint32_t *runtime_size);
int kfd_dbg_trap_disable(struct kfd_process *target);

#endif
