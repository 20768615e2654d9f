// SPDX-License-Identifier: GPL-2.0
/*
 * preempt_suspend.c - park one queue: q->properties.is_suspended +
 * dqm->ops.update_queue(dqm, q, NULL), and back (6.12+).
 *
 * QUEUE_IS_ACTIVE() includes !is_suspended, update_queue() recomputes
 * is_active and unmaps (HWS: whole runlist preempt with CWSR; MES: this
 * queue) or maps.  The user's UPDATE_QUEUE ioctl never writes the flag, so
 * ROCr's percent/priority updates cannot undo a park; KFD's evict/restore
 * honour it.  Debugged processes are skipped (the debugger owns the flag).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include "backend.h"
#include "kfd.h"

#if GP_HAVE_queue_properties__is_suspended
/**
 * gp_suspend_queue() - park or unpark one queue
 * @e: queue
 * @park: true to park
 * @blocking: may wait for p->mutex
 *
 * Return: 0, -EBUSY (retry next tick), -ESRCH/-ENOENT (gone), -EPERM
 * (debugged), -EIO (device unusable) or KFD's error.
 */
int gp_suspend_queue(struct gp_queue *e, bool park, bool blocking)
{
	struct kfd_process_device *pdd;
	struct device_queue_manager *dqm;
	struct kfd_process *p;
	struct queue *q;
	bool *flag;
	int ret;

	p = gp_backend_get_process(e->proc);
	if (!p)
		return -ESRCH;
	ret = gp_backend_trylock(p, blocking);
	if (ret)
		goto out_unref;

	q = gp_kfd.get_user_queue(kfd_p_pqm(p), e->qid);
	if (!q || q != e->q) {
		ret = -ENOENT;
		goto out_unlock;
	}
	flag = kfd_q_suspended_flag(q);
	if (!flag) {
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	if (!kfd_p_mm(p)) {
		ret = -ESRCH;
		goto out_unlock;
	}
	if (park && kfd_p_debugged(p)) {
		gp_stats.skipped_debugged++;
		ret = -EPERM;
		goto out_unlock;
	}
	dqm = kfd_node_dqm(kfd_q_device(q));
	pdd = gp_backend_pdd(p, kfd_q_device(q));
	if (!pdd || kfd_pdd_has_reset_queue(pdd) || kfd_q_is_reset(q) ||
	    gp_backend_dev_failed(dqm)) {
		gp_stats.skipped_reset++;
		ret = -EIO;
		goto out_unlock;
	}
	if (READ_ONCE(*flag) == park)
		goto out_unlock;	/* already there */

	WRITE_ONCE(*flag, park);
	ret = kfd_dqm_update_queue(dqm)(dqm, q, NULL);
	if (ret) {
		/* Never leave a half-done park behind: the flag goes back. */
		if (park)
			WRITE_ONCE(*flag, false);
		gp_backend_note_error(dqm, ret, park ? "update_queue (park)" :
					     "update_queue (unpark)");
	}
out_unlock:
	mutex_unlock(kfd_p_mutex(p));
out_unref:
	gp_kfd.unref(p);
	return ret;
}
#else
int gp_suspend_queue(struct gp_queue *e, bool park, bool blocking)
{
	return -EOPNOTSUPP;
}
#endif
