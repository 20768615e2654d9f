// SPDX-License-Identifier: GPL-2.0
/* Fixture: definitions kfd-src-layout reads prototypes from (never built). */
#include "kfd_device_queue_manager.h"

int suspend_queues(struct kfd_process *p, uint32_t num_queues,
		   uint32_t grace_period, uint64_t exception_clear_mask,
		   uint32_t *usr_queue_id_array)
{
	return 0;
}
