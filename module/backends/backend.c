// SPDX-License-Identifier: GPL-2.0
/*
 * backend.c - the safe action pattern around every KFD call gpreempt makes:
 *
 *   kfd_lookup_process_by_pasid() (+1 reference; the process cannot be
 *   freed) -> identity check -> p->mutex (trylock on the monitor's path: a
 *   contended mutex means an ioctl is running; retry next tick, and after a
 *   few busy ticks in a row the helper thread waits for it, defer.c) -> a
 *   reference on the users of its mm (its teardown cannot start) -> the
 *   queue still exists (walk of pqm->queues) and the registry entry is not
 *   gone (its generation) -> checks (mm, debugger, has_reset_queue, CWSR,
 *   device health) -> act -> unlock -> mmput_async() -> kfd_unref_process().
 *
 * The mm reference is what keeps the queue on 7.x and ROCm's DKMS tree:
 * there KFD dequeues and frees a process's queues in its mm's notifier
 * release (exit_mmap()), without p->mutex, however many references others
 * hold; an update_queue() on a queue it dequeued counts it out of the
 * device's active queues a second time and writes its freed MQD.  No
 * per-queue action is made without it, on any kernel.  A secondary context
 * (7.2+) is torn down when its file is closed, which nothing here can hold
 * off: its queues are never acted on one by one (parked by eviction only,
 * and their properties are the probes').
 *
 * A device whose preemption failed with -EIO/-ETIME (HWS hang: KFD is
 * resetting the GPU) gets no parks for a back-off; unparks always go on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include "backends/backend.h"
#include "kfd/kfd.h"
#include "testing.h"
#include "kfd/ksyms.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "monitor/monitor.h"

/**
 * gp_backend_get_process() - reference the KFD process of @pr
 * @pr: registry process
 *
 * Return: the process with a reference (drop with gp_kfd_unref()), or NULL
 * when it is gone (or its PASID now belongs to another process).
 */
struct kfd_process *gp_backend_get_process(struct gp_proc *pr)
{
	struct kfd_process *p;

	/*
	 * No KFD call with a process's mm installed in the monitor
	 * (ptr_access.c ends its use first): KFD's own kthread_use_mm() (the
	 * NO_HWS restore's read_user_wptr()) would WARN or read the wrong mm.
	 */
	WARN_ON_ONCE((current->flags & PF_KTHREAD) && current->mm);
	if (READ_ONCE(pr->dead))
		return NULL;
	p = gp_kfd_lookup_pasid(pr->pasid);
	if (p && p != pr->p) {
		gp_kfd_unref(p);
		return NULL;
	}
	return p;
}

/**
 * gp_backend_pdd() - the per-device data of @p on @dev
 * @p: referenced process
 * @dev: device
 *
 * Return: the pdd or NULL.
 */
struct kfd_process_device *gp_backend_pdd(struct kfd_process *p, struct kfd_node *dev)
{
	u32 i, n = min_t(u32, kfd_p_n_pdds(p), GP_SZ_kfd_process__pdds / sizeof(void *));

	for (i = 0; i < n; i++) {
		struct kfd_process_device *pdd = kfd_p_pdd(p, i);

		if (pdd && kfd_pdd_dev(pdd) == dev)
			return pdd;
	}
	return NULL;
}

/**
 * gp_backend_find_queue() - KFD's queue @qid of @p (pqm_get_user_queue())
 * @p: referenced process, p->mutex held
 * @qid: queue id
 *
 * Walks pqm->queues with the BTF offsets instead of calling KFD's
 * pqm_get_user_queue(), which is not address-taken (IBT seals its ENDBR).
 *
 * Return: the queue or NULL.
 */
struct queue *gp_backend_find_queue(struct kfd_process *p, u32 qid)
{
	struct list_head *head, *pos;

	lockdep_assert_held(kfd_p_mutex(p));
	head = (struct list_head *)((char *)kfd_p_pqm(p) +
				    GP_OFF_process_queue_manager__queues);
	list_for_each(pos, head) {
		char *pqn = (char *)pos - GP_OFF_process_queue_node__process_queue_list;
		struct queue *q = *(struct queue **)(pqn + GP_OFF_process_queue_node__q);

		if (q && kfd_q_qid(q) == qid)
			return q;
	}
	return NULL;
}

/**
 * gp_backend_kept_off() - @p's queues on @dev that KFD keeps off the hardware
 * @p: referenced process, p->mutex held
 * @dev: the device
 * @pdd: @p's data on @dev
 * @qids: out: their ids (kfd_q_kept_off(): a reset queue)
 * @max: room in @qids
 *
 * Return: their number, -EAGAIN (an eviction of KFD's or gpreempt's is
 * held on the qpd: every queue is off, which ones would stay off is not
 * known) or -E2BIG (more than @max).
 */
int gp_backend_kept_off(struct kfd_process *p, struct kfd_node *dev,
			struct kfd_process_device *pdd, u32 *qids, int max)
{
	struct list_head *head, *pos;
	int n = 0;

	lockdep_assert_held(kfd_p_mutex(p));
	if (kfd_qpd_evicted(kfd_pdd_qpd(pdd)))
		return -EAGAIN;
	head = (struct list_head *)((char *)kfd_p_pqm(p) +
				    GP_OFF_process_queue_manager__queues);
	list_for_each(pos, head) {
		char *pqn = (char *)pos - GP_OFF_process_queue_node__process_queue_list;
		struct queue *q = *(struct queue **)(pqn + GP_OFF_process_queue_node__q);

		if (!q || kfd_q_device(q) != dev || !kfd_q_kept_off(q))
			continue;
		if (n == max)
			return -E2BIG;
		qids[n++] = kfd_q_qid(q);
	}
	return n;
}

/**
 * gp_backend_pin_mm() - hold off @p's teardown (p->mutex held)
 * @p: referenced process
 * @mmp: out: the mm to release with gp_ptr_mm_unpin()
 *
 * Return: 0, -EOPNOTSUPP (a secondary context: nothing holds off its
 * teardown) or -ESRCH (no live thread has its mm: the teardown may run).
 */
static int gp_backend_pin_mm(struct kfd_process *p, struct mm_struct **mmp)
{
	if (kfd_p_secondary(p))
		return -EOPNOTSUPP;
	*mmp = gp_ptr_mm_pin(p);
	if (*mmp)
		return 0;
	gp_stats.mm_gone++;
	return -ESRCH;
}

/**
 * gp_backend_lock_queue() - @e's KFD process, referenced and locked, and its queue
 * @e: queue
 * @blocking: may wait for p->mutex (module unload) or only try (monitor tick)
 * @qp: out: KFD's queue, the very one @e was registered for
 * @mmp: out: the process's mm, referenced: its teardown cannot start
 *
 * The start of every per-queue action.  Under p->mutex the entry is
 * re-checked: destroy marks it gone under the same mutex, so a queue that
 * reuses the qid (and maybe the memory) of a destroyed one is never acted
 * on by the old entry's decision.  The mm's users are held before the queue
 * is looked for (7.x frees it at the mm's release, without p->mutex).
 *
 * Return: the process, p->mutex held (release with gp_backend_unlock()),
 * or an ERR_PTR: -ESRCH (the process or its mm is gone), -EBUSY (mutex
 * contended, not @blocking), -ENOENT (the queue is gone) or -EOPNOTSUPP
 * (a secondary context: parked by eviction only).
 */
struct kfd_process *gp_backend_lock_queue(struct gp_queue *e, bool blocking, struct queue **qp,
					  struct mm_struct **mmp)
{
	struct kfd_process *p = gp_backend_get_process(e->proc);
	struct mm_struct *mm = NULL;
	struct queue *q;
	int ret;

	if (!p)
		return ERR_PTR(-ESRCH);
	gp_test_window(GP_TEST_ACTION);
	ret = gp_backend_trylock(p, blocking);
	if (ret)
		goto out_unref;
	ret = gp_backend_pin_mm(p, &mm);
	if (ret)
		goto out_unlock;
	q = gp_backend_find_queue(p, e->qid);
	if (READ_ONCE(e->gone) || !q || q != e->q)
		ret = -ENOENT;
	else if (!kfd_p_mm(p))
		ret = -ESRCH;
	if (!ret) {
		*qp = q;
		*mmp = mm;
		return p;
	}
	gp_ptr_mm_unpin(mm);
out_unlock:
	gp_backend_mutex_unlock(p);
out_unref:
	gp_kfd_unref(p);
	return ERR_PTR(ret);
}

/**
 * gp_backend_unlock() - release what gp_backend_lock_queue() took
 * @p: the process it returned
 * @mm: the mm it returned
 */
void gp_backend_unlock(struct kfd_process *p, struct mm_struct *mm)
{
	gp_backend_mutex_unlock(p);
	gp_ptr_mm_unpin(mm);
	gp_kfd_unref(p);
}

/**
 * gp_backend_mutex_unlock() - release the p->mutex gp_backend_trylock() took
 * @p: the process
 */
void gp_backend_mutex_unlock(struct kfd_process *p)
{
	gp_plock_unlock(kfd_p_mutex(p));
}

/**
 * gp_backend_read_props() - @e's priority and queue_percent, from KFD
 * @e: queue
 *
 * Read from q->properties under p->mutex (only tried) and the mm's users
 * (gp_backend_lock_queue()), KFD's own state: the update ioctl writes them
 * before update_queue(), which may fail.  A secondary context's queues are
 * not read: what the update probe recorded stays.
 *
 * Return: 0 (props_stale cleared), -EBUSY (retry next tick), -ENOENT or
 * -ESRCH (gone or going).
 */
int gp_backend_read_props(struct gp_queue *e)
{
	struct kfd_process *p = gp_backend_get_process(e->proc);
	struct mm_struct *mm = NULL;
	struct queue *q;
	int ret;

	if (!p)
		return -ENOENT;
	ret = gp_backend_trylock(p, false);
	if (ret)
		goto out_unref;
	WRITE_ONCE(e->props_stale, false);
	ret = gp_backend_pin_mm(p, &mm);
	if (ret == -EOPNOTSUPP)
		ret = 0;
	if (ret)
		goto out_unlock;
	q = gp_backend_find_queue(p, e->qid);
	if (READ_ONCE(e->gone) || !q || q != e->q) {
		ret = -ENOENT;
	} else {
		WRITE_ONCE(e->kfd_priority, READ_ONCE(*KFD_QP(q, priority, u32)));
		WRITE_ONCE(e->queue_percent, READ_ONCE(*KFD_QP(q, queue_percent, u32)));
		/* UPDATE_QUEUE can move the ring (ROCr never does; the ioctl can). */
		WRITE_ONCE(e->ring_uva, READ_ONCE(*KFD_QP(q, queue_address, u64)));
		WRITE_ONCE(e->ring_size, READ_ONCE(*KFD_QP(q, queue_size, u64)));
	}
	gp_ptr_mm_unpin(mm);
out_unlock:
	mutex_unlock(kfd_p_mutex(p));
out_unref:
	gp_kfd_unref(p);
	return ret;
}

/**
 * gp_backend_queue_flag() - one of KFD's flags of @e's queue
 * @p: @e's process, referenced, its mm held (gp_ptr_window())
 * @e: queue
 * @flag: %GP_QFLAG_ACTIVE: is_active, KFD has it on the hardware;
 *        %GP_QFLAG_SUSPENDED: is_suspended.  A queue gpreempt parked by
 *        this flag can have it cleared by KFD itself: the debugger's
 *        resume_queues() resumes every suspended queue of a process,
 *        whoever set the flag (6.12 kfd_device_queue_manager.c:3253-3291,
 *        :1097-1125), and a process can reach it on itself.
 * @val: out: the flag
 *
 * Read under p->mutex, only tried (the monitor never waits for it): the
 * destroy ioctl frees a queue under that mutex before its probe marks the
 * entry gone, so the queue must still be in the pqm and the entry not gone.
 * No KFD call, and nothing sleeps: callable with the process's mm in use.
 *
 * Return: 0, -EBUSY (the mutex is taken), -ENOENT (the queue is gone) or
 * -EOPNOTSUPP (no such flag in this KFD).
 */
int gp_backend_queue_flag(struct kfd_process *p, struct gp_queue *e, enum gp_qflag flag,
			  bool *val)
{
	struct queue *q;
	int ret = 0;

	if (flag == GP_QFLAG_SUSPENDED && !kfd_have_queue_suspend())
		return -EOPNOTSUPP;
	if (!mutex_trylock(kfd_p_mutex(p)))
		return -EBUSY;
	q = gp_backend_find_queue(p, e->qid);
	if (READ_ONCE(e->gone) || !q || q != e->q)
		ret = -ENOENT;
	else if (flag == GP_QFLAG_ACTIVE)
		*val = READ_ONCE(*KFD_QP(q, is_active, bool));
	else
		*val = READ_ONCE(*kfd_q_suspended_flag(q));
	mutex_unlock(kfd_p_mutex(p));
	return ret;
}

/**
 * gp_backend_dev_parkable() - the health checks before any park or evict
 * @p: referenced process, p->mutex held
 * @dev: the device
 * @pdd: out: the process's data on @dev
 * @park: park/evict (all checks) or unpark/restore (only the pdd)
 * @reset_ok: a process with a reset queue on @dev may be parked: an
 *	      eviction, which KFD does to such processes too; not a
 *	      suspend or shrink (update_queue() unmaps the device, then
 *	      refuses: -EACCES, 6.12 kfd_device_queue_manager.c:964-967)
 *
 * Return: 0, -EIO (no pdd, queue reset or device fenced) or -EOPNOTSUPP
 * (CWSR off: an unmap would drain waves, and a long one resets the GPU).
 */
int gp_backend_dev_parkable(struct kfd_process *p, struct kfd_node *dev,
			    struct kfd_process_device **pdd, bool park, bool reset_ok)
{
	struct device_queue_manager *dqm = kfd_node_dqm(dev);

	*pdd = gp_backend_pdd(p, dev);
	if (!*pdd)
		return -EIO;
	if (!park)
		return 0;
	if (!gp_backend_dev_usable(dev))
		return -EOPNOTSUPP;
	if ((kfd_pdd_has_reset_queue(*pdd) && !reset_ok) || gp_backend_dev_failed(dqm)) {
		gp_stats.skipped_reset++;
		return -EIO;
	}
	return 0;
}

/**
 * gp_backend_trylock() - take p->mutex
 * @p: referenced process
 * @blocking: wait for it (gp_plock_wait(); only the helper thread does, its
 *	      wait bounded by the monitor or the unload, defer.c), or only try
 *
 * Nothing but the helper thread ever waits for a p->mutex: a process can
 * hold its own for as long as it likes (an ioctl that faults a page of a
 * FUSE file that never answers), and neither the monitor, nor insmod
 * (gp_backend_lock_until()), nor rmmod must wait on it for longer than a
 * bound.  The helper waits as a waiter of the mutex, so a process whose
 * threads keep it owned at every instant cannot keep it out, and
 * takes gp_act_lock with it (gp_plock_wait()).  Release with
 * gp_backend_mutex_unlock().
 *
 * Return: 0 with the mutex held, or -EBUSY.
 */
int gp_backend_trylock(struct kfd_process *p, bool blocking)
{
	if (blocking)
		return gp_plock_wait(kfd_p_mutex(p));
	if (mutex_trylock(kfd_p_mutex(p)))
		return 0;
	gp_stats.busy_retries++;
	return -EBUSY;
}
