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
 * Not used under NO_HWS, where update_queue() must run in the owner's mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "backends/backend.h"
#include "kfd/kfd.h"
#include "core/registry.h"
#include "monitor/monitor.h"

#if GP_HAVE_queue_properties__is_suspended
/*
 * Is the queue where @park wants it?  From KFD's is_active, not from the
 * flag alone: a failed update_queue can leave the two apart.
 */
static bool gp_already_there(struct queue *q, bool park)
{
	bool flag = READ_ONCE(*kfd_q_suspended_flag(q));
	bool active = READ_ONCE(*KFD_QP(q, is_active, bool));

	if (park)
		return flag && !active;
	/* Inactive for KFD's own reason (an eviction): ours is undone. */
	return !flag && (active || READ_ONCE(*KFD_QP(q, is_evicted, bool)));
}

/**
 * gp_suspend_queue() - park or unpark one queue
 * @e: queue
 * @park: true to park
 * @blocking: may wait for p->mutex
 *
 * The queue is looked up again under p->mutex (gp_backend_lock_queue()), so
 * a queue reusing a destroyed one's qid is never acted on by its decision.
 *
 * Return: 0, -EBUSY (retry next tick), -ESRCH/-ENOENT (gone), -EPERM
 * (debugged; for an unpark: the debugger suspended queues, the flag is its
 * own now), -EOPNOTSUPP
 * (NO_HWS or CWSR off: use evict or leave alone), -EIO (device fenced) or
 * KFD's error.  On any error the flag is as it was; a KFD error after the
 * queue moved (is_active as @park wants it) is counted and returns 0.
 */
int gp_suspend_queue(struct gp_queue *e, bool park, bool blocking)
{
	struct kfd_process_device *pdd = NULL;
	struct device_queue_manager *dqm;
	struct kfd_process *p;
	struct mm_struct *mm;
	struct queue *q;
	bool *flag, prev, reset;
	u64 t0;
	int ret;

	p = gp_backend_lock_queue(e, blocking, &q, &mm);
	if (IS_ERR(p))
		return PTR_ERR(p);
	flag = kfd_q_suspended_flag(q);
	/*
	 * A debugged process is never parked.  A queue gpreempt parked is
	 * unparked only until the debugger suspends queues: suspend_queues()
	 * runs under this mutex and counts an already suspended queue as its
	 * own, so from then on the flag is the debugger's.
	 */
	if (kfd_p_debugged(p) && (park || READ_ONCE(e->proc->dbg_suspended))) {
		/*
		 * KFD says debugged where no probe did (an enable probe found
		 * no free instance; a failed enable that left the flag set):
		 * the next park is an eviction, not -EPERM for ever.
		 */
		if (park && !READ_ONCE(e->proc->debugged))
			WRITE_ONCE(e->proc->evict_only, true);
		gp_stats.skipped_debugged++;
		ret = -EPERM;
		goto out_unlock;
	}
	dqm = kfd_node_dqm(kfd_q_device(q));
	if (kfd_dqm_no_hws(dqm)) {
		/* update_queue() would load the MQD in the kthread's (no) mm. */
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	ret = gp_backend_dev_parkable(p, kfd_q_device(q), &pdd, park, false);
	reset = pdd && (kfd_q_is_reset(q) || kfd_pdd_has_reset_queue(pdd));
	if (!ret && park && kfd_q_is_reset(q)) {
		gp_stats.skipped_reset++;
		ret = -EIO;
	}
	/* A reset queue is never mapped again: never try to park it again. */
	if (reset)
		e->reset = true;
	if (ret)
		goto out_unlock;
	if (!park && reset) {
		/*
		 * KFD maps no queue of a process with a reset queue
		 * again, and update_queue() would unmap the whole device
		 * before refusing (-EACCES), on every retry.  The flag goes,
		 * with no KFD call: nothing is left parked by gpreempt.
		 */
		WRITE_ONCE(*flag, false);
		goto out_unlock;
	}
	/*
	 * An unpark that finds the flag already clear: KFD undid the park
	 * (the debugger's resume, between the tick's check and now, e.g. while
	 * this action waited for p->mutex): the process is parked by eviction
	 * from now on, as when the tick's check finds it (scan.c).
	 */
	if (!park && !READ_ONCE(*flag)) {
		gp_stats.suspend_lost++;
		WRITE_ONCE(e->proc->evict_only, true);
	}
	if (gp_already_there(q, park))
		goto out_unlock;

	prev = READ_ONCE(*flag);
	WRITE_ONCE(*flag, park);
	t0 = ktime_get_ns();
	ret = kfd_dqm_update_queue(dqm)(dqm, q, NULL);
	gp_backend_note_slow(dqm, t0, park ? "update_queue (park)" : "update_queue (unpark)");
	/* A park whose unmap timed out: KFD reset a queue of this process. */
	if (!ret && park && (kfd_q_is_reset(q) || kfd_pdd_has_reset_queue(pdd))) {
		e->reset = true;
		gp_backend_note_reset(dqm, "update_queue (park)");
	}
	if (ret) {
		gp_backend_note_error(dqm, ret, park ? "update_queue (park)" :
					     "update_queue (unpark)");
		/*
		 * KFD can fail after update_mqd() recomputed is_active
		 * (a failed map_queues_cpsch()): the queue has moved, and the
		 * flag stays with it, the action done.  Put back, the flag
		 * would leave the queue off the runlist while everyone thinks
		 * it runs.  Only if nothing moved does the flag go back.
		 */
		if (gp_already_there(q, park))
			ret = 0;
		else
			WRITE_ONCE(*flag, prev);
	}
out_unlock:
	gp_backend_unlock(p, mm);
	return ret;
}
#else
int gp_suspend_queue(struct gp_queue *e, bool park, bool blocking)
{
	return -EOPNOTSUPP;
}
#endif
