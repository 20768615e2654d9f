// SPDX-License-Identifier: GPL-2.0
/*
 * preempt_evict.c - park a whole process: kfd_process_evict_queues() /
 * kfd_process_restore_queues().
 *
 * KFD refcounts evictions per device (qpd->evicted), so these nest with its
 * own memory evictions and never conflict with ROCr.  Every evict gpreempt
 * makes is balanced by exactly one restore: also when evict returned -EIO
 * (KFD keeps the count then), on errors and at module unload.  A process
 * that exits while evicted needs no restore: KFD frees its queues.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <uapi/linux/kfd_ioctl.h>
#include "backend.h"
#include "kfd.h"

/**
 * gp_evict_process() - evict or restore the queues of @pr
 * @pr: registry process
 * @evict: true to evict
 *
 * Return: 0, -ESRCH (gone), -EPERM (debugged) or KFD's error.
 */
int gp_evict_process(struct gp_proc *pr, bool evict)
{
	struct kfd_process *p;
	int ret;

	if (evict && pr->evicted)
		return 0;
	if (!evict && !pr->evicted)
		return 0;
	p = gp_backend_get_process(pr);
	if (!p) {
		/* Gone (KFD no longer finds it): its queues died with it. */
		if (!evict) {
			pr->evicted = 0;
			gp_stats.evicts_outstanding--;
		}
		return -ESRCH;
	}
	if (evict) {
		if (kfd_p_debugged(p)) {
			gp_stats.skipped_debugged++;
			ret = -EPERM;
			goto out;
		}
		ret = kfd_call_evict(gp_kfd.evict, p, KFD_QUEUE_EVICTION_TRIGGER_SUSPEND);
		/* On -EIO KFD keeps the eviction counted: it must be restored. */
		if (!ret || ret == -EIO) {
			pr->evicted = 1;
			gp_stats.evicts_outstanding++;
		}
		if (ret)
			gp_backend_note_error(NULL, ret, "kfd_process_evict_queues");
	} else {
		ret = gp_kfd.restore(p);
		pr->evicted = 0;	/* one restore balances one evict, whatever it returned */
		gp_stats.evicts_outstanding--;
		if (ret)
			gp_backend_note_error(NULL, ret, "kfd_process_restore_queues");
	}
out:
	gp_kfd.unref(p);
	return ret;
}
