// SPDX-License-Identifier: GPL-2.0
/*
 * preempt_evict.c - park a process's queues on one device:
 * dqm->ops.evict_process_queues() / dqm->ops.restore_process_queues().
 *
 * The ops table is KFD's own, address-taken entry (IBT-safe), and calling
 * it per device parks only the device that has the contention.  It emits
 * no SMI eviction event: amd-smi users do not see a stream of "suspend"
 * evictions.  KFD refcounts evictions per device (qpd->evicted), so these
 * nest with its own memory evictions.  gpreempt holds at most one eviction
 * per (process, device), and every evict is balanced by exactly one
 * restore: also when evict returned an error (KFD keeps the count then),
 * on errors and at module unload.  A process that exits while evicted
 * needs no restore: KFD frees its qpd.
 *
 * Without p->mutex.  KFD evicts and restores without it:
 * evict_process_worker(), restore_process_worker() and the userptr and
 * suspend paths call kfd_process_evict_queues()/restore_queues() on a
 * process they only hold a reference to, walking p->pdds[0..n_pdds);
 * the dqm lock, taken inside the ops, guards the qpd's queue list.  The
 * pdds are only added (under p->mutex, n_pdds after the slot) and only
 * freed when the last reference goes.  So when p->mutex is busy a
 * restore is done without it (a process's own lock never delays giving
 * it back, at unload either), and so is an evict of a process that holds
 * its mutex (gp_proc.lock_held), which could otherwise never be parked.
 *
 * A process KFD tears down: on 7.x (and ROCm's DKMS tree) its termination
 * leaves each dequeued queue's is_active set, and keeps the ones whose MQD
 * it has not freed yet on the qpd's list while it drops the dqm lock around
 * each free_mqd(): an evict or restore that gets the lock in between counts
 * them out of (or into) the device's active queues a second time.  For a
 * primary the mm's users are held across the call, so its teardown cannot
 * start (backend.c).  A secondary context's teardown (its file's close)
 * cannot be held off: only its pr->dead, set by the release probe before
 * KFD's table removal and SRCU grace period, keeps the call out, a window
 * of the time between that check and the dqm lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/mutex.h>
#include "backends/backend.h"
#include "kfd/kfd.h"
#include "testing.h"
#include "kfd/ksyms.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "monitor/monitor.h"

/* The slot of @dev in @pr->ev, or a free one when @add; NULL otherwise. */
static int gp_ev_slot(struct gp_proc *pr, struct kfd_node *dev, bool add)
{
	int i, free = -1;

	for (i = 0; i < GP_MAX_DEVS; i++) {
		if (pr->ev[i].dev == dev)
			return i;
		if (!pr->ev[i].dev && free < 0)
			free = i;
	}
	return add ? free : -1;
}

/**
 * gp_evict_held() - does gpreempt hold an eviction of @pr on @dev?
 * @pr: registry process
 * @dev: device
 *
 * Return: true if so.
 */
bool gp_evict_held(struct gp_proc *pr, struct kfd_node *dev)
{
	int i = gp_ev_slot(pr, dev, false);

	return i >= 0 && pr->ev[i].evicted;
}

static void gp_ev_set(struct gp_proc *pr, int i, int evicted)
{
	if (pr->ev[i].evicted == evicted)
		return;
	pr->ev[i].evicted = evicted;
	pr->evicted += evicted ? 1 : -1;
	if (evicted)
		gp_stats.evicts_outstanding++;
	else
		gp_stats.evicts_outstanding--;
	if (!evicted)
		pr->ev[i].dev = NULL;
}

/* Does @p's lead thread still have its mm?  (lead_thread is set for @p's life) */
static bool gp_lead_has_mm(struct kfd_process *p)
{
	struct task_struct *lead = kfd_p_lead_thread(p);
	bool ret;

	if (!lead)
		return false;
	task_lock(lead);
	ret = !!lead->mm;
	task_unlock(lead);
	return ret;
}

/* Back-off of a refused eviction of a process with a reset queue. */
#define GP_RESET_RETRY_MIN_MS 1000
#define GP_RESET_RETRY_MAX_MS 64000

/* Forget the queues kept off on @dev (its eviction is given back). */
static void gp_keep_off_drop(struct gp_proc *pr, struct kfd_node *dev)
{
	unsigned int i, n = 0;

	for (i = 0; i < pr->nkeep; i++)
		if (pr->keep_off[i].dev != dev)
			pr->keep_off[n++] = pr->keep_off[i];
	pr->nkeep = n;
}

/*
 * A process with a reset queue on @dev (p->mutex held): KFD keeps that
 * queue off the hardware (set_queue_as_reset() clears is_active, 6.12
 * kfd_device_queue_manager.c:2149-2161, 7.3 :2412-2426), but its
 * restore_process_queues_cpsch() would map it again: it maps every queue
 * QUEUE_IS_ACTIVE() calls active (6.12 :1361-1366, 7.3 :1617-1622), and that
 * macro does not look at a reset (6.12 kfd_priv.h:554-558, 7.3 :564-568).  A
 * queue that hung once is a preemption that may fail again.  The queues off
 * now are noted, to stay off through gpreempt's restore.
 *
 * Return: true when noted; false when not known (an eviction is held on the
 * qpd: every queue is off then), too many, or no is_suspended flag to hold
 * them off by: not evicted.
 */
static bool gp_keep_off_note(struct gp_proc *pr, struct kfd_process *p, struct kfd_node *dev,
			     struct kfd_process_device *pdd)
{
	u32 qids[GP_KEEP_OFF];
	int i, n;

	gp_keep_off_drop(pr, dev);
	if (!kfd_have_queue_suspend())
		return false;
	n = gp_backend_kept_off(p, dev, pdd, qids, GP_KEEP_OFF - pr->nkeep);
	if (n < 0)
		return false;
	for (i = 0; i < n; i++) {
		pr->keep_off[pr->nkeep].dev = dev;
		pr->keep_off[pr->nkeep++].qid = qids[i];
	}
	return true;
}

/*
 * The eviction of a process with a reset queue refused, with no KFD call:
 * not tried again for a back-off (1 s, doubling to 64 s; its queues are
 * unmanaged meanwhile, scan.c), as each try spends the device's budget.
 */
static int gp_reset_refused(struct gp_proc *pr)
{
	u32 ms = READ_ONCE(pr->reset_backoff_ms);

	ms = ms ? min(ms * 2, GP_RESET_RETRY_MAX_MS) : GP_RESET_RETRY_MIN_MS;
	WRITE_ONCE(pr->reset_backoff_ms, ms);
	WRITE_ONCE(pr->reset_retry_ns, ktime_get_ns() + (u64)ms * NSEC_PER_MSEC);
	gp_stats.skipped_reset++;
	return -EAGAIN;
}

/*
 * Around gpreempt's restore (p->mutex held): the queues noted at its evict
 * get is_suspended, which QUEUE_IS_ACTIVE() reads, for the call only, so
 * the restore maps back what was mapped before the evict and nothing more.
 * @set: the entries this set (bits), to clear after.
 */
static void gp_keep_off_hold(struct gp_proc *pr, struct kfd_process *p, struct kfd_node *dev,
			     bool hold, unsigned long *set)
{
	unsigned int i;

	for (i = 0; i < pr->nkeep; i++) {
		struct queue *q;
		bool *flag;

		if (pr->keep_off[i].dev != dev || (!hold && !(*set & BIT(i))))
			continue;
		q = gp_backend_find_queue(p, pr->keep_off[i].qid);
		flag = q ? kfd_q_suspended_flag(q) : NULL;
		if (!flag || (hold && READ_ONCE(*flag)))
			continue;
		WRITE_ONCE(*flag, hold);
		*set |= hold ? BIT(i) : 0;
	}
}

static int gp_evict_one(struct gp_proc *pr, struct kfd_node *dev, bool evict, bool blocking)
{
	struct kfd_process_device *pdd;
	struct device_queue_manager *dqm;
	struct mm_struct *mm = NULL;
	struct kfd_process *p;
	bool locked = true, had_reset;
	int i, ret;
	u64 t0;

	i = gp_ev_slot(pr, dev, evict);
	if (i < 0)
		return evict ? -ENOSPC : 0;
	if (!!pr->ev[i].evicted == evict)
		return 0;
	p = gp_backend_get_process(pr);
	if (!p) {
		/*
		 * Dead: its queues died with it, and the eviction with its
		 * qpd.  A lookup that failed for a live process (its PASID
		 * gone with a render node) keeps the eviction held, so
		 * the restore is retried rather than dropped while KFD still
		 * counts it.
		 */
		if (!evict && READ_ONCE(pr->dead))
			gp_ev_set(pr, i, 0);
		return -ESRCH;
	}
	gp_test_window(GP_TEST_ACTION);
	ret = gp_backend_trylock(p, blocking);
	/*
	 * Busy: a restore goes on without the mutex, and so does the evict
	 * of a process that holds it (not in the helper, which waited for
	 * it and was stopped: the monitor decides again).
	 */
	if (ret == -EBUSY && !blocking && (!evict || READ_ONCE(pr->lock_held))) {
		locked = false;
		pr->lockless = true;
		gp_stats.lockless_evicts++;
		ret = 0;
	}
	if (ret)
		goto out_unref;
	if (!kfd_p_secondary(p)) {
		mm = gp_ptr_mm_pin(p);
		if (!mm) {
			/* Its teardown may run: a restore is then owed to no one. */
			gp_stats.mm_gone++;
			ret = -ESRCH;
			goto out_unlock;
		}
	}
	ret = gp_backend_dev_parkable(p, dev, &pdd, evict, true);
	if (ret) {
		if (!evict) {
			/* No pdd: the process lost the device, and the qpd with it. */
			gp_ev_set(pr, i, 0);
			gp_keep_off_drop(pr, dev);
		}
		goto out_unlock;
	}
	/* A reset process: evicted only with p->mutex (gp_keep_off_note()'s walk). */
	had_reset = kfd_pdd_has_reset_queue(pdd);
	if (evict && had_reset) {
		if (!locked || !gp_keep_off_note(pr, p, dev, pdd)) {
			ret = gp_reset_refused(pr);
			goto out_unlock;
		}
		WRITE_ONCE(pr->reset_backoff_ms, 0);
	}
	dqm = kfd_node_dqm(dev);
	if (evict && kfd_dqm_no_hws(dqm) && !gp_lead_has_mm(p)) {
		/*
		 * restore_process_queues_nocpsch() takes the lead
		 * thread's mm and fails, leaving the process evicted, when
		 * the leader has exited: neither gpreempt nor KFD could ever
		 * restore what this evicts.
		 */
		ret = -EPERM;
		goto out_unlock;
	}
	if (evict) {
		pr->ev[i].dev = dev;
		t0 = ktime_get_ns();
		ret = kfd_dqm_evict_process_queues(dqm)(dqm, kfd_pdd_qpd(pdd));
		gp_backend_note_slow(dqm, t0, "evict_process_queues");
		/*
		 * evict_process_queues_cpsch() counts qpd->evicted before it
		 * touches the HWS: whatever it returned, a restore balances it.
		 */
		gp_ev_set(pr, i, 1);
		/*
		 * A reset queue now: this evict's unmap timed out.  One from
		 * before is none (a second in a reset process is not seen:
		 * 6.12 leaves no trace of it, the queue is inactive already).
		 */
		if (ret)
			gp_backend_note_error(dqm, ret, "evict_process_queues");
		else if (!had_reset && kfd_pdd_has_reset_queue(pdd))
			gp_backend_note_reset(dqm, "evict_process_queues");
	} else {
		struct qcm_process_device *qpd = kfd_pdd_qpd(pdd);
		u32 before = kfd_qpd_evicted(qpd);
		unsigned long held = 0;

		/*
		 * Without p->mutex the queue list cannot be walked: the
		 * restore maps a reset queue again, as KFD's own restores do.
		 */
		if (locked)
			gp_keep_off_hold(pr, p, dev, true, &held);
		t0 = ktime_get_ns();
		ret = kfd_dqm_restore_process_queues(dqm)(dqm, qpd);
		gp_backend_note_slow(dqm, t0, "restore_process_queues");
		if (locked)
			gp_keep_off_hold(pr, p, dev, false, &held);
		/*
		 * A restore balances the evict when KFD dropped its count,
		 * whatever it returned.  Two error paths keep the count (S3
		 * MES add_queue_mes() failing, NO_HWS without the lead
		 * thread's mm): then the eviction is still held, and the
		 * policy tries the unpark again.
		 */
		if (!ret || kfd_qpd_evicted(qpd) < before) {
			gp_ev_set(pr, i, 0);
			gp_keep_off_drop(pr, dev);
		} else {
			gp_stats.restore_retries++;
		}
		if (ret)
			gp_backend_note_error(dqm, ret, "restore_process_queues");
	}
out_unlock:
	if (locked)
		gp_backend_mutex_unlock(p);
	gp_ptr_mm_unpin(mm);
out_unref:
	gp_kfd_unref(p);
	return ret;
}

/**
 * gp_evict_process() - evict or restore the queues of @pr on @dev
 * @pr: registry process
 * @dev: the device
 * @evict: true to evict
 *
 * Monitor path: p->mutex is only tried; a busy one is done without it for
 * a restore, and for an evict of a process that holds it (lock_held).
 *
 * Return: 0, -EBUSY (retry), -ESRCH (gone), -EPERM (NO_HWS without the lead
 * thread's mm), -EIO (device fenced or reset), -EOPNOTSUPP (CWSR off),
 * -ENOSPC (too many devices) or KFD's error.  After an error of KFD's the eviction still
 * counts as held: the next restore balances it.
 */
int gp_evict_process(struct gp_proc *pr, struct kfd_node *dev, bool evict)
{
	return gp_evict_one(pr, dev, evict, false);
}

/**
 * gp_evict_process_blocking() - gp_evict_process(), waiting for p->mutex
 * @pr: registry process
 * @dev: the device
 * @evict: true to evict
 *
 * Return: as gp_evict_process(), never -EBUSY.
 */
int gp_evict_process_blocking(struct gp_proc *pr, struct kfd_node *dev, bool evict)
{
	return gp_evict_one(pr, dev, evict, true);
}

/**
 * gp_evict_restore_all() - restore every eviction gpreempt holds on @pr
 * @pr: registry process
 *
 * Module unload: never waits for p->mutex (a busy one: restored without
 * it, pr->lockless set).  A restore KFD refused while keeping its count,
 * or whose lookup failed for a live process, stays held in @pr
 * (pr->evicted): the caller tries again or forgets it.
 */
void gp_evict_restore_all(struct gp_proc *pr)
{
	int i;

	for (i = 0; i < GP_MAX_DEVS && pr->evicted; i++)
		if (pr->ev[i].evicted)
			gp_evict_one(pr, pr->ev[i].dev, false, false);
}

/**
 * gp_evict_forget_all() - the process died: its evictions died with it
 * @pr: registry process, dead
 */
void gp_evict_forget_all(struct gp_proc *pr)
{
	int i;

	for (i = 0; i < GP_MAX_DEVS; i++)
		if (pr->ev[i].evicted)
			gp_ev_set(pr, i, 0);
}
