// SPDX-License-Identifier: GPL-2.0
/* Fixture: definitions kfd-src-layout reads prototypes from (never built). */
#include "kfd_priv.h"

int kfd_procfs_add_queue(struct queue *q)
{
	return 0;
}

static void kfd_process_notifier_release(struct mmu_notifier *mn,
					 struct mm_struct *mm)
{
}

int kfd_process_evict_queues(struct kfd_process *p, bool force, uint32_t trigger)
{
	return 0;
}

int kfd_process_restore_queues(struct kfd_process *p)
{
	return 0;
}

struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid,
						struct kfd_process_device **pdd)
{
	return NULL;
}

void kfd_unref_process(struct kfd_process *p)
{
}
