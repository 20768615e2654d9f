// SPDX-License-Identifier: GPL-2.0
/*
 * evict.c - KFD's own evictions of a process, with the real timelines
 * (debugfs kfd_evict, README "KFD's own evictions").  All cited from 6.12.117:
 *
 *   ttm:     kgd2kfd_schedule_evict_and_restore_process() (kfd_device.c:1160-1199)
 *	      delays the eviction so that the process runs for at least
 *	      PROCESS_ACTIVE_TIME_MS = 10 ms after its last restore;
 *	      evict_process_worker() (kfd_process.c:1987-2014) evicts and
 *	      schedules the restore in PROCESS_RESTORE_TIME_MS = 100 ms
 *	      (kfd_priv.h:729-733); restore_process_worker() (:2038-2072)
 *	      revalidates the BOs first and, when that fails, leaves the
 *	      queues evicted and tries again 100 ms later.
 *   userptr: amdgpu_amdkfd_evict_userptr() (amdgpu_amdkfd_gpuvm.c:2512-2541):
 *	      the first invalidation quiesces the queues at once
 *	      (kgd2kfd_quiesce_mm(), kfd_device.c:1113), later ones while
 *	      evicted only count; the restore runs
 *	      AMDGPU_USERPTR_RESTORE_DELAY_MS = 1 ms later (:46), through
 *	      kgd2kfd_resume_mm() (kfd_device.c:1133).
 *   fault:   a VM fault without a debugger: kfd_dqm_evict_pasid()
 *	      (kfd_device_queue_manager.c:3042-3062, from kfd_debug.c:241,
 *	      :279) evicts on the faulting device; nothing restores it.
 *   reset:   a GPU reset evicts every process (kfd_suspend_all_processes(),
 *	      kfd_process.c:2074-2086) and nothing resumes them
 *	      (kfd_device.c:970-975, "KFD won't be able to resume existing
 *	      process"): this process stays evicted until it exits.
 *
 * Like the real workers, none of these takes p->mutex: the dqm's lock is
 * the only one (kfd_process_evict_queues() -> evict_process_queues).  The
 * evictions nest with every other one in qpd->evicted.  The process's
 * teardown cancels the pending ones (kfd_process_notifier_release_internal(),
 * kfd_process.c:1232-1233) and process_termination drops what is left of the
 * count, so nothing leaks; a pending restore holds a process reference, and
 * with it the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kfdsim.h"

#define KS_PROCESS_RESTORE_TIME_MS 100	/* PROCESS_RESTORE_TIME_MS */
#define KS_PROCESS_ACTIVE_TIME_MS 10	/* PROCESS_ACTIVE_TIME_MS */
#define KS_USERPTR_RESTORE_DELAY_MS 1	/* AMDGPU_USERPTR_RESTORE_DELAY_MS */
#define KS_EVICT_MAX_MS 600000

static struct workqueue_struct *ks_evict_wq;

static struct {
	atomic64_t ttm, ttm_restores, ttm_retries, ttm_busy;
	atomic64_t userptr, userptr_restores, userptr_merged;
	atomic64_t fault, reset, cancelled;
} ks_ev_stats;

static struct kfd_process *ks_ev_process(struct ks_kfd_evict *ev)
{
	return container_of(ev, struct kfd_process, ks_evict);
}

/* evict_process_worker() */
static void ks_ttm_evict_worker(struct work_struct *work)
{
	struct ks_kfd_evict *ev = container_of(to_delayed_work(work), struct ks_kfd_evict,
					       eviction_work);
	struct kfd_process *p = ks_ev_process(ev);
	int ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_TRIGGER_TTM);

	/* -EIO (HWS hang): counted as evicted, a restore must follow. */
	if (ret && ret != -EIO) {
		pr_err_ratelimited("failed to evict queues of pasid 0x%x\n", p->pasid);
		mutex_lock(&ev->lock);
		ev->ttm = false;
		mutex_unlock(&ev->lock);
		kfd_unref_process(p);
		return;
	}
	atomic64_inc(&ks_ev_stats.ttm);
	queue_delayed_work(ks_evict_wq, &ev->restore_work, msecs_to_jiffies(ev->ttm_restore_ms));
}

/*
 * The end of either restore: the queues back, the eviction of that kind over,
 * and the process reference its scheduling took dropped.
 */
static void ks_ev_restore_done(struct ks_kfd_evict *ev, struct kfd_process *p,
			       atomic64_t *restores, bool *pending)
{
	if (kfd_process_restore_queues(p))
		pr_err_ratelimited("failed to restore queues of pasid 0x%x\n", p->pasid);
	atomic64_inc(restores);
	mutex_lock(&ev->lock);
	*pending = false;
	mutex_unlock(&ev->lock);
	kfd_unref_process(p);
}

/* restore_process_worker(): the BOs first, the queues only once they validate. */
static void ks_ttm_restore_worker(struct work_struct *work)
{
	struct ks_kfd_evict *ev = container_of(to_delayed_work(work), struct ks_kfd_evict,
					       restore_work);
	struct kfd_process *p = ks_ev_process(ev);

	WRITE_ONCE(ev->last_restore, get_jiffies_64());
	if (ev->ttm_fails) {
		ev->ttm_fails--;
		atomic64_inc(&ks_ev_stats.ttm_retries);
		queue_delayed_work(ks_evict_wq, &ev->restore_work,
				   msecs_to_jiffies(KS_PROCESS_RESTORE_TIME_MS));
		return;
	}
	ks_ev_restore_done(ev, p, &ks_ev_stats.ttm_restores, &ev->ttm);
}

/* amdgpu_amdkfd_restore_userptr_worker() -> kgd2kfd_resume_mm() */
static void ks_userptr_restore_worker(struct work_struct *work)
{
	struct ks_kfd_evict *ev = container_of(to_delayed_work(work), struct ks_kfd_evict,
					       userptr_work);
	struct kfd_process *p = ks_ev_process(ev);

	ks_ev_restore_done(ev, p, &ks_ev_stats.userptr_restores, &ev->userptr);
}

/**
 * ks_kfd_evict_init() - a new process's eviction state (process creation)
 * @p: process
 */
void ks_kfd_evict_init(struct kfd_process *p)
{
	struct ks_kfd_evict *ev = &p->ks_evict;

	mutex_init(&ev->lock);
	INIT_DELAYED_WORK(&ev->eviction_work, ks_ttm_evict_worker);
	INIT_DELAYED_WORK(&ev->restore_work, ks_ttm_restore_worker);
	INIT_DELAYED_WORK(&ev->userptr_work, ks_userptr_restore_worker);
}

/**
 * ks_kfd_evict_cancel() - the process is torn down: no eviction or restore
 * runs any more (kfd_process_notifier_release_internal(), kfd_process.c:1232-1233)
 * @p: process, referenced by the caller
 *
 * What stays evicted is dropped with the queues by process_termination.
 */
void ks_kfd_evict_cancel(struct kfd_process *p)
{
	struct ks_kfd_evict *ev = &p->ks_evict;
	int refs = 0;

	mutex_lock(&ev->lock);
	ev->dead = true;
	mutex_unlock(&ev->lock);
	/* The eviction worker queues the restore: cancel it first, as KFD. */
	cancel_delayed_work_sync(&ev->eviction_work);
	cancel_delayed_work_sync(&ev->restore_work);
	cancel_delayed_work_sync(&ev->userptr_work);
	mutex_lock(&ev->lock);
	refs = ev->ttm + ev->userptr;
	ev->ttm = false;
	ev->userptr = false;
	mutex_unlock(&ev->lock);
	atomic64_add(refs, &ks_ev_stats.cancelled);
	while (refs--)
		kfd_unref_process(p);
}

/* "ttm [RESTORE_MS [FAILS]]": the eviction worker, after the active guard. */
static int ks_evict_ttm(struct kfd_process *p, unsigned int ms, unsigned int fails)
{
	struct ks_kfd_evict *ev = &p->ks_evict;
	u64 active, delay = msecs_to_jiffies(KS_PROCESS_ACTIVE_TIME_MS);

	/* The eviction fence is signalled already: nothing new to schedule. */
	if (ev->ttm) {
		atomic64_inc(&ks_ev_stats.ttm_busy);
		return -EBUSY;
	}
	active = get_jiffies_64() - READ_ONCE(ev->last_restore);
	delay = delay > active ? delay - active : 0;
	ev->ttm = true;
	ev->ttm_restore_ms = ms ? ms : KS_PROCESS_RESTORE_TIME_MS;
	ev->ttm_fails = fails;
	kref_get(&p->ref);	/* dropped by the restore, or the teardown's cancel */
	queue_delayed_work(ks_evict_wq, &ev->eviction_work, delay);
	return 0;
}

/* "userptr [RESTORE_MS]": quiesce now (the notifier's context), restore later. */
static int ks_evict_userptr(struct kfd_process *p, unsigned int ms)
{
	struct ks_kfd_evict *ev = &p->ks_evict;
	int ret;

	if (ev->userptr) {
		/* ++evicted_bos != 1: the queues are stopped already. */
		atomic64_inc(&ks_ev_stats.userptr_merged);
		return 0;
	}
	ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_TRIGGER_USERPTR);
	if (ret && ret != -EIO)
		pr_err_ratelimited("failed to quiesce pasid 0x%x\n", p->pasid);
	/* As KFD: the restore is queued whatever the quiesce returned. */
	ev->userptr = true;
	atomic64_inc(&ks_ev_stats.userptr);
	kref_get(&p->ref);
	queue_delayed_work(ks_evict_wq, &ev->userptr_work,
			   msecs_to_jiffies(ms ? ms : KS_USERPTR_RESTORE_DELAY_MS));
	return ret == -EIO ? 0 : ret;
}

/**
 * ks_kfd_evict_userptr_notify() - a USERPTR range of @p was invalidated
 * @p: process, alive (its buffer objects and their notifiers outlive it)
 *
 * amdgpu_amdkfd_evict_userptr() (amdgpu_amdkfd_gpuvm.c:2512-2541; 7.3
 * :2544-2575), from amdgpu_hmm_invalidate_hsa() inside the MMU notifier:
 * under the notifier lock (ev->lock here) the first invalidation quiesces
 * the process through the dqm's lock and queues the 1 ms restore, later
 * ones while it is pending only count.  A process torn down already is
 * kgd2kfd_quiesce_mm()'s -ESRCH: nothing is evicted or queued.
 */
void ks_kfd_evict_userptr_notify(struct kfd_process *p)
{
	struct ks_kfd_evict *ev = &p->ks_evict;

	mutex_lock(&ev->lock);
	if (!ev->dead)
		ks_evict_userptr(p, 0);
	mutex_unlock(&ev->lock);
}

/* "fault [DEV]": kfd_dqm_evict_pasid() on the faulting device, for good. */
static int ks_evict_fault(struct kfd_process *p, unsigned int dev)
{
	struct kfd_process_device *pdd;
	struct device_queue_manager *dqm;
	int ret;

	if (dev >= ks_param.ndev)
		return -EINVAL;
	pdd = ks_pdd(p, &ks_devs[dev].node);
	if (!pdd)
		return -EINVAL;
	dqm = pdd->qpd.dqm;
	ret = dqm->ops.evict_process_queues(dqm, &pdd->qpd);
	if (!ret || ret == -EIO)
		atomic64_inc(&ks_ev_stats.fault);
	return ret == -EIO ? 0 : ret;
}

/* "reset": kfd_suspend_all_processes() for this process; no resume follows. */
static int ks_evict_reset(struct kfd_process *p)
{
	int ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_TRIGGER_SUSPEND);

	if (!ret || ret == -EIO)
		atomic64_inc(&ks_ev_stats.reset);
	return ret == -EIO ? 0 : ret;
}

/* "PASID ttm|userptr|fault|reset [N [M]]" */
static ssize_t ks_kfd_evict_write(struct file *file, const char __user *ubuf, size_t len,
				  loff_t *ppos)
{
	unsigned int pasid, n = 0, m = 0;
	struct kfd_process *p;
	char buf[48], kind[8];
	int ret, args;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	args = sscanf(buf, "%u %7s %u %u", &pasid, kind, &n, &m);
	if (args < 2 || n > KS_EVICT_MAX_MS || m > 1000)
		return -EINVAL;
	p = ks_lookup_pasid(pasid);
	if (!p)
		return -ESRCH;
	mutex_lock(&p->ks_evict.lock);
	if (p->ks_evict.dead)
		ret = -ESRCH;
	else if (!strcmp(kind, "ttm"))
		ret = ks_evict_ttm(p, n, m);
	else if (!strcmp(kind, "userptr") && args <= 3)
		ret = ks_evict_userptr(p, n);
	else if (!strcmp(kind, "fault") && args <= 3)
		ret = ks_evict_fault(p, n);
	else if (!strcmp(kind, "reset") && args == 2)
		ret = ks_evict_reset(p);
	else
		ret = -EINVAL;
	mutex_unlock(&p->ks_evict.lock);
	kfd_unref_process(p);
	return ret ? ret : len;
}

static const struct file_operations ks_kfd_evict_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ks_kfd_evict_write,
};

/**
 * ks_kfd_evict_stats_show() - the counters, in debugfs stats
 * @m: seq_file
 */
void ks_kfd_evict_stats_show(struct seq_file *m)
{
	seq_printf(m, "kfd_evict_ttm %lld\nkfd_restore_ttm %lld\nkfd_restore_ttm_retries %lld\nkfd_evict_ttm_busy %lld\n",
		   atomic64_read(&ks_ev_stats.ttm), atomic64_read(&ks_ev_stats.ttm_restores),
		   atomic64_read(&ks_ev_stats.ttm_retries), atomic64_read(&ks_ev_stats.ttm_busy));
	seq_printf(m, "kfd_evict_userptr %lld\nkfd_restore_userptr %lld\nkfd_evict_userptr_merged %lld\n",
		   atomic64_read(&ks_ev_stats.userptr),
		   atomic64_read(&ks_ev_stats.userptr_restores),
		   atomic64_read(&ks_ev_stats.userptr_merged));
	seq_printf(m, "kfd_evict_fault %lld\nkfd_evict_reset %lld\nkfd_evict_cancelled %lld\n",
		   atomic64_read(&ks_ev_stats.fault), atomic64_read(&ks_ev_stats.reset),
		   atomic64_read(&ks_ev_stats.cancelled));
}

/**
 * ks_kfd_evict_debugfs() - the workqueue and debugfs kfd_evict
 * @parent: kfdsim's debugfs directory
 *
 * Return: 0 or -ENOMEM.
 */
int ks_kfd_evict_debugfs(struct dentry *parent)
{
	/* kfd_restore_wq is freezable and ordered in KFD; ordering is all that matters here. */
	ks_evict_wq = alloc_ordered_workqueue("kfdsim_evict", 0);
	if (!ks_evict_wq)
		return -ENOMEM;
	debugfs_create_file("kfd_evict", 0200, parent, NULL, &ks_kfd_evict_fops);
	return 0;
}

/**
 * ks_kfd_evict_exit() - module unload, every process gone
 *
 * Each pending work holds a process reference, and each process the
 * module: none is left here, and destroy_workqueue() waits for the last
 * one to return.
 */
void ks_kfd_evict_exit(void)
{
	if (ks_evict_wq)
		destroy_workqueue(ks_evict_wq);
}
