// SPDX-License-Identifier: GPL-2.0
/*
 * process.c - simulated KFD process lifetime, after amdkfd's kfd_process.c:
 * creation on open, the process table (SRCU, lookups take a reference),
 * teardown from the mm's notifier release, final free from a workqueue on
 * the last reference, and process-wide eviction with KFD's nesting count.
 *
 * 7.2+ layouts (GP_HAVE_kfd_process__context_id): one mm can own several
 * KFD processes.  The one open() creates is the primary; the
 * AMDKFD_IOC_CREATE_PROCESS ioctl replaces a file's primary by a new
 * secondary context (own context_id and PASID, no mm notifier), which
 * kfd_process_notifier_release_internal() tears down when its file is
 * closed, as in amdkfd's kfd_release().  There, as in 7.x, the teardown
 * also dequeues the process's queues (it is not safe for the GPU to touch
 * the process's memory after it) and frees them in pqm_uninit(), without
 * p->mutex, however many references others still hold.
 *
 * 6.17+ layouts (GP_HAVE_kfd_process_device__pasid): PASIDs are per process
 * device, set only when the process first uses that device (ACQUIRE_VM on
 * /dev/kfd, its first queue there on /dev/kfdsim, ks_pdd_bind()); a device
 * it never used keeps PASID 0, and the lookup matches any pdd's.
 *
 * Who runs the mm notifier's release is recorded (S3 F5): the last
 * mmput() of the process's mm runs exit_mmap() and so this teardown, and a
 * task outside the process that held a reference (a kernel thread reading
 * the process's memory) pays for it.  stats: notifier_releases,
 * notifier_releases_foreign; release_tasks: the kernel threads, by name.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kfdsim.h"

static LIST_HEAD(ks_processes);
static DEFINE_MUTEX(ks_table_lock);
DEFINE_STATIC_SRCU(ks_processes_srcu);
static DEFINE_IDA(ks_pasid_ida);
#if GP_HAVE_kfd_process__context_id
static DEFINE_IDA(ks_context_ida);	/* secondary context ids */
#endif
static struct workqueue_struct *ks_process_wq;

/* Kernel threads that ran a notifier release, by comm up to a '/' (S3 F5). */
#define KS_REL_TASKS 8
static struct {
	char comm[TASK_COMM_LEN];
	u64 count;
} ks_rel_tasks[KS_REL_TASKS];
static u64 ks_rel_tasks_other;	/* names past KS_REL_TASKS */
static DEFINE_SPINLOCK(ks_rel_lock);

static void ks_release_record(struct kfd_process *p)
{
	char comm[TASK_COMM_LEN];
	int i;

	atomic64_inc(&ks_stats.notifier_releases);
	if (!p->lead_thread || same_thread_group(current, p->lead_thread))
		return;
	atomic64_inc(&ks_stats.notifier_releases_foreign);
	if (!(current->flags & PF_KTHREAD))
		return;
	get_task_comm(comm, current);
	comm[strcspn(comm, "/")] = 0;	/* kworker/u8:1 -> kworker */
	spin_lock(&ks_rel_lock);
	for (i = 0; i < KS_REL_TASKS; i++) {
		if (!ks_rel_tasks[i].count)
			strscpy(ks_rel_tasks[i].comm, comm, TASK_COMM_LEN);
		if (!strcmp(ks_rel_tasks[i].comm, comm)) {
			ks_rel_tasks[i].count++;
			break;
		}
	}
	if (i == KS_REL_TASKS)
		ks_rel_tasks_other++;
	spin_unlock(&ks_rel_lock);
}

/**
 * ks_release_tasks_show() - debugfs release_tasks: "COMM COUNT" per kernel
 * thread that ran a process's notifier release ("other": names past the table)
 * @m: seq_file
 */
void ks_release_tasks_show(struct seq_file *m)
{
	int i;

	spin_lock(&ks_rel_lock);
	for (i = 0; i < KS_REL_TASKS && ks_rel_tasks[i].count; i++)
		seq_printf(m, "%s %llu\n", ks_rel_tasks[i].comm, ks_rel_tasks[i].count);
	if (ks_rel_tasks_other)
		seq_printf(m, "other %llu\n", ks_rel_tasks_other);
	spin_unlock(&ks_rel_lock);
}

/*
 * The PASIDs of @p's process devices but its own (6.17+ layouts): freed
 * with the process.
 */
static void ks_free_pdd_pasids(struct kfd_process *p)
{
#if GP_HAVE_kfd_process_device__pasid
	u32 i;

	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->pasid && p->pdds[i]->pasid != p->pasid)
			ida_free(&ks_pasid_ida, p->pdds[i]->pasid);
#endif
}

/**
 * ks_pdd_bind() - the process starts using @pdd's device (6.17+: its PASID)
 * @pdd: process device, p->mutex held
 *
 * As 6.17+'s kfd_process_device_init_vm(): a PASID per process device, set
 * when the device's VM is acquired.  The first device a process uses gets
 * the PASID kfdsim names the process by (kfd_process.pasid on older
 * layouts), every other one a new PASID.  Nothing to do where the PASID is
 * the process's.
 *
 * Return: 0 or -ENOSPC (no PASID left).
 */
int ks_pdd_bind(struct kfd_process_device *pdd)
{
#if GP_HAVE_kfd_process_device__pasid
	struct kfd_process *p = pdd->process;
	bool first = true;
	int ret;
	u32 i;

	lockdep_assert_held(&p->mutex);
	if (pdd->pasid)
		return 0;
	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->pasid == p->pasid)
			first = false;
	if (first) {
		WRITE_ONCE(pdd->pasid, p->pasid);
		return 0;
	}
	ret = ida_alloc_range(&ks_pasid_ida, 1, 0xffff, GFP_KERNEL);
	if (ret < 0)
		return -ENOSPC;
	WRITE_ONCE(pdd->pasid, ret);
#endif
	return 0;
}

/* kfd_process_dequeue_from_all_devices() */
static void ks_process_dequeue_all(struct kfd_process *p)
{
	u32 i;

	for (i = 0; i < p->n_pdds; i++)
		ks_dqm_process_termination(&p->pdds[i]->qpd);
}

/* kfd_process_wq_release(): the last reference is gone. */
static void ks_process_wq_release(struct work_struct *work)
{
	struct kfd_process *p = container_of(work, struct kfd_process, release_work);
	u32 i;

	/* 7.x: dequeued and freed at the teardown already. */
	if (!KS_DEQUEUE_AT_TEARDOWN) {
		ks_process_dequeue_all(p);
		pqm_uninit(&p->pqm);
	}
	/* Its qpds go: their evictions stop counting (a late restore counted down). */
	for (i = 0; i < p->n_pdds; i++)
		atomic_sub(p->pdds[i]->qpd.evicted, &ks_stats.evicted_refs);
	ks_kfd_process_free(p);
	put_task_struct(p->lead_thread);
	ks_free_pdd_pasids(p);
	ida_free(&ks_pasid_ida, p->pasid);
#if GP_HAVE_kfd_process__context_id
	if (p->context_id != KS_CONTEXT_ID_PRIMARY)
		ida_free(&ks_context_ida, p->context_id);
#endif
	mutex_destroy(&p->mutex);
	atomic_dec(&ks_stats.processes);
	kfree(p);
	module_put(THIS_MODULE);
}

static void ks_process_ref_release(struct kref *ref)
{
	struct kfd_process *p = container_of(ref, struct kfd_process, ref);

	INIT_WORK(&p->release_work, ks_process_wq_release);
	queue_work(ks_process_wq, &p->release_work);
}

/**
 * kfd_unref_process() - drop a process reference
 * @p: process
 */
KS_KFD_ENTRY void kfd_unref_process(struct kfd_process *p)
{
	ks_fault_unref_delay(_RET_IP_);
	kref_put(&p->ref, ks_process_ref_release);
}

/**
 * ks_lookup_pasid() - kfd_lookup_process_by_pasid() whatever its prototype
 * @pasid: PASID
 *
 * For kfdsim's own debugfs files.
 *
 * Return: the process with a reference, or NULL.
 */
struct kfd_process *ks_lookup_pasid(u32 pasid)
{
#if GP_HAVE_kfd_lookup_process_by_pasid__pdd
	return kfd_lookup_process_by_pasid(pasid, NULL);
#else
	return kfd_lookup_process_by_pasid(pasid);
#endif
}

/**
 * kfd_lookup_process_by_pasid() - find a live process by PASID
 * @pasid: PASID
 * @pdd: out, 6.17+ (may be NULL): the process device with that PASID
 *
 * 6.17+: any process device's PASID finds the process, as in KFD; 0 (a
 * device the process never used) finds nothing.
 *
 * Return: the process with a reference, or NULL.
 */
#if GP_HAVE_kfd_lookup_process_by_pasid__pdd
KS_KFD_ENTRY struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid,
							     struct kfd_process_device **pdd)
#else
KS_KFD_ENTRY struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid)
#endif
{
	struct kfd_process *p, *ret = NULL;
	int idx;

	/* Injected: not found, as for a process past its notifier release. */
	if (pasid && pasid == READ_ONCE(ks_fault_knobs.lookup_fail_pasid)) {
		atomic64_inc(&ks_fault_counts.lookup_fails);
		return NULL;
	}
	if (!pasid)
		return NULL;
	idx = srcu_read_lock(&ks_processes_srcu);
	list_for_each_entry_srcu(p, &ks_processes, table_node,
				 srcu_read_lock_held(&ks_processes_srcu)) {
#if GP_HAVE_kfd_process_device__pasid
		u32 i;

		for (i = 0; i < p->n_pdds; i++)
			if (READ_ONCE(p->pdds[i]->pasid) == pasid)
				break;
		if (i == p->n_pdds)
			continue;
#if GP_HAVE_kfd_lookup_process_by_pasid__pdd
		if (pdd)
			*pdd = p->pdds[i];
#endif
#else
		if (p->pasid != pasid)
			continue;
#endif
		kref_get(&p->ref);
		ret = p;
		break;
	}
	srcu_read_unlock(&ks_processes_srcu, idx);
	if (ret)
		ks_fault_lookup_delay();
	return ret;
}

static void ks_free_notifier(struct mmu_notifier *mn)
{
	kfd_unref_process(container_of(mn, struct kfd_process, mmu_notifier));
}

/**
 * ks_process_is_primary() - is @p the KFD process open() made for its mm?
 * @p: process
 *
 * Return: true but for a 7.2+ secondary context.
 */
bool ks_process_is_primary(struct kfd_process *p)
{
#if GP_HAVE_kfd_process__context_id
	return p->context_id == KS_CONTEXT_ID_PRIMARY;
#else
	return true;
#endif
}

/**
 * kfd_process_notifier_release_internal() - a KFD process is torn down
 * @p: process, referenced by the caller
 *
 * As in KFD: no lookup finds the process any more and p->mm is cleared.
 * Before 7.x the queues stay until the last reference.  On 7.x layouts,
 * as 7.3 kfd_process.c:1398-1451 (and ROCm's DKMS tree), the queues are
 * dequeued here (kfd_process_dequeue_from_all_devices(), :1416) and freed
 * (pqm_uninit(), :1417), and only then is p->mm cleared (:1428), all
 * without p->mutex: a reference to the process no longer keeps its queues
 * or their MQDs.  Only the primary has a notifier to drop.
 */
KS_KFD_ENTRY void kfd_process_notifier_release_internal(struct kfd_process *p)
{
	ks_kfd_evict_cancel(p);
	mutex_lock(&ks_table_lock);
	list_del_rcu(&p->table_node);
	mutex_unlock(&ks_table_lock);
	synchronize_srcu(&ks_processes_srcu);
	if (KS_DEQUEUE_AT_TEARDOWN) {
		ks_process_dequeue_all(p);
		/* Injected: the dequeued queues outlive their MQDs longer. */
		ks_fault_sleep(&ks_fault_knobs.teardown_delay_us,
			       &ks_fault_counts.teardown_delays);
		pqm_uninit(&p->pqm);
	}
	WRITE_ONCE(p->mm, NULL);
	if (ks_process_is_primary(p))
		mmu_notifier_put(&p->mmu_notifier);
}

/**
 * kfd_process_notifier_release() - the process's mm is going away
 * @mn: the primary's notifier (secondaries have none)
 * @mm: its mm
 */
KS_KFD_ENTRY void kfd_process_notifier_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct kfd_process *p = container_of(mn, struct kfd_process, mmu_notifier);

	ks_release_record(p);
	kfd_process_notifier_release_internal(p);
}

static const struct mmu_notifier_ops ks_mn_ops = {
	.release = kfd_process_notifier_release,
	.free_notifier = ks_free_notifier,
};

/*
 * create_process(): a new KFD process for the caller's mm, with the file's
 * reference; the primary also registers the mm notifier (and its reference).
 * ks_table_lock held.
 */
static struct kfd_process *ks_create_process(bool primary)
{
	struct kfd_process *p;
	unsigned int i;
	int ret;

	if (!try_module_get(THIS_MODULE))
		return ERR_PTR(-ENODEV);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		ret = -ENOMEM;
		goto err_put_module;
	}
	ret = ida_alloc_range(&ks_pasid_ida, 1, 0xffff, GFP_KERNEL);
	if (ret < 0)
		goto err_free;
	p->pasid = ret;
	kref_init(&p->ref);		/* the file's reference */
	mutex_init(&p->mutex);
	p->lead_thread = current->group_leader;
	get_task_struct(p->lead_thread);
	p->mm = current->mm;
	p->ks_mm = current->mm;
	p->pqm.process = p;
	INIT_LIST_HEAD(&p->pqm.queues);
	p->pqm.queue_slot_bitmap = p->qid_bitmap;
	ks_kfd_process_init(p);
	ks_kfd_evict_init(p);
	for (i = 0; i < ks_param.ndev; i++) {
		struct kfd_process_device *pdd = &p->pdd[i];

		pdd->dev = &ks_devs[i].node;
		pdd->process = p;
		pdd->qpd.dqm = &ks_devs[i].dqm;
		pdd->qpd.pqm = &p->pqm;
		INIT_LIST_HEAD(&pdd->qpd.queues_list);
		p->pdds[i] = pdd;
	}
	p->n_pdds = ks_param.ndev;
#if GP_HAVE_kfd_process__context_id
	p->context_id = KS_CONTEXT_ID_PRIMARY;
	if (!primary) {
		ret = ida_alloc_range(&ks_context_ida, 0, KS_CONTEXT_ID_PRIMARY - 1, GFP_KERNEL);
		if (ret < 0)
			goto err_put_task;
		p->context_id = ret;
	}
#endif
	if (primary) {
		kref_get(&p->ref);	/* the notifier's reference */
		p->mmu_notifier.ops = &ks_mn_ops;
		ret = mmu_notifier_register(&p->mmu_notifier, current->mm);
		if (ret)
			goto err_put_task;
	}
	list_add_tail_rcu(&p->table_node, &ks_processes);
	atomic_inc(&ks_stats.processes);
	return p;

err_put_task:
	put_task_struct(p->lead_thread);
	ida_free(&ks_pasid_ida, p->pasid);
err_free:
	kfree(p);
err_put_module:
	module_put(THIS_MODULE);
	return ERR_PTR(ret);
}

/**
 * ks_process_create() - the /dev/kfdsim open path (kfd_create_process)
 * @out: the calling process's primary kfd_process, with a reference for
 *	 the file
 *
 * As in KFD there is one primary kfd_process per mm: a second open shares it.
 *
 * Return: 0 or a negative errno.
 */
int ks_process_create(struct kfd_process **out)
{
	struct kfd_process *p;
	int ret = 0;

	if (!current->mm || current->mm != current->group_leader->mm)
		return -EINVAL;
	/* kfd_processes_mutex: find-or-create is atomic, as in KFD. */
	mutex_lock(&ks_table_lock);
	list_for_each_entry(p, &ks_processes, table_node) {
		if (p->ks_mm == current->mm && ks_process_is_primary(p)) {
			/* A prior open by this process created it: share it. */
			kref_get(&p->ref);
			*out = p;
			goto out_unlock;
		}
	}
	p = ks_create_process(true);
	if (IS_ERR(p))
		ret = PTR_ERR(p);
	else
		*out = p;
out_unlock:
	mutex_unlock(&ks_table_lock);
	return ret;
}

/**
 * ks_process_create_secondary() - AMDKFD_IOC_CREATE_PROCESS (7.2+ layouts)
 * @filp: a /dev/kfdsim file whose process is still the primary
 *
 * As kfd_ioctl_create_process(): a new secondary context for the caller's
 * mm replaces the primary as the file's process, and the file's reference
 * on the primary is dropped.
 *
 * Return: 0, -EINVAL (the file has a secondary already), -ENOTTY (layout
 * without contexts) or an allocation error.
 */
int ks_process_create_secondary(struct file *filp)
{
#if GP_HAVE_kfd_process__context_id
	struct kfd_process *p, *primary;

	mutex_lock(&ks_table_lock);
	primary = filp->private_data;
	/* Each file owns one process; a secondary's file has one already. */
	if (!ks_process_is_primary(primary) || primary->lead_thread != current->group_leader ||
	    primary->ks_mm != current->mm) {
		mutex_unlock(&ks_table_lock);
		return -EINVAL;
	}
	p = ks_create_process(false);
	if (IS_ERR(p)) {
		mutex_unlock(&ks_table_lock);
		return PTR_ERR(p);
	}
	filp->private_data = p;
	mutex_unlock(&ks_table_lock);
	kfd_unref_process(primary);
	return 0;
#else
	return -ENOTTY;
#endif
}

/**
 * ks_process_file_release() - the /dev/kfdsim file is closed (kfd_release)
 * @p: the file's process
 *
 * A secondary context lives as long as its file: it is torn down here.
 */
void ks_process_file_release(struct kfd_process *p)
{
	if (!ks_process_is_primary(p))
		kfd_process_notifier_release_internal(p);
	kfd_unref_process(p);
}

static void ks_hold_work(struct work_struct *work)
{
	struct kfd_process *p = container_of(to_delayed_work(work), struct kfd_process,
					     hold_work);

	atomic_set(&p->holding, 0);
	kfd_unref_process(p);
}

/**
 * ks_test_hold() - KFDSIM_TEST_HOLD_REF: someone else keeps a reference
 * @p: process
 * @ms: for this long (1..600000)
 *
 * Models another holder of a kfd_process reference (a debugger's target,
 * an in-flight ioctl of another thread, SVM work): the process, and its
 * pqm_uninit(), outlive its teardown by @ms.
 *
 * Return: 0, -EINVAL for a bad @ms, -EBUSY while a hold runs.
 */
int ks_test_hold(struct kfd_process *p, u64 ms)
{
	if (!ms || ms > 600000)
		return -EINVAL;
	if (atomic_cmpxchg(&p->holding, 0, 1))
		return -EBUSY;
	kref_get(&p->ref);
	INIT_DELAYED_WORK(&p->hold_work, ks_hold_work);
	queue_delayed_work(ks_process_wq, &p->hold_work, msecs_to_jiffies(ms));
	return 0;
}

/**
 * kfd_process_evict_queues() - evict every queue of @p (all devices)
 * @p: referenced process
 * @trigger: KFD_QUEUE_EVICTION_TRIGGER_*
 *
 * Return: 0 or the dqm's error.
 */
KS_KFD_ENTRY int kfd_process_evict_queues(struct kfd_process *p, uint32_t trigger)
{
	unsigned int n_evicted = 0;
	int r = 0;
	u32 i;

	for (i = 0; i < p->n_pdds; i++) {
		struct kfd_process_device *pdd = p->pdds[i];
		struct device_queue_manager *dqm = pdd->dev->dqm;

		r = dqm->ops.evict_process_queues(dqm, &pdd->qpd);
		ks_reset_evicted(dqm);	/* 6.12+: is_hws_hang = false */
		/* -EIO (HWS hang): the queues count as evicted, restore balances. */
		if (r && r != -EIO) {
			pr_err_ratelimited("failed to evict process queues\n");
			goto fail;
		}
		n_evicted++;
	}
	return r;

fail:
	/* Roll back the partial eviction, as KFD does. */
	for (i = 0; i < p->n_pdds && n_evicted; i++, n_evicted--) {
		struct kfd_process_device *pdd = p->pdds[i];
		struct device_queue_manager *dqm = pdd->dev->dqm;

		if (dqm->ops.restore_process_queues(dqm, &pdd->qpd))
			pr_err_ratelimited("failed to restore queues\n");
	}
	return r;
}

/**
 * kfd_process_restore_queues() - undo one kfd_process_evict_queues()
 * @p: referenced process
 *
 * Return: 0 or the dqm's error.
 */
KS_KFD_ENTRY int kfd_process_restore_queues(struct kfd_process *p)
{
	int r, ret = 0;
	u32 i;

	for (i = 0; i < p->n_pdds; i++) {
		struct kfd_process_device *pdd = p->pdds[i];
		struct device_queue_manager *dqm = pdd->dev->dqm;

		r = dqm->ops.restore_process_queues(dqm, &pdd->qpd);
		if (r) {
			pr_err_ratelimited("failed to restore process queues\n");
			if (!ret)
				ret = r;
		}
	}
	return ret;
}

/**
 * ks_test_evict() - KFDSIM_TEST_EVICT: evict the caller's own queues
 * @p: process
 *
 * Like KFD's own callers (TTM, userptr, SVM), every eviction made here is
 * counted so that a restore without an eviction is refused instead of
 * reaching the dqm's WARN.
 *
 * Return: kfd_process_evict_queues()'s result.
 */
int ks_test_evict(struct kfd_process *p)
{
	int ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_TRIGGER_TTM);

	if (!ret || ret == -EIO)
		atomic_inc(&p->test_evictions);
	return ret;
}

/**
 * ks_test_restore() - KFDSIM_TEST_RESTORE: undo one ks_test_evict()
 * @p: process
 *
 * Return: 0, -EINVAL without a prior eviction, or the restore's error.
 */
int ks_test_restore(struct kfd_process *p)
{
	if (!atomic_add_unless(&p->test_evictions, -1, 0)) {
		pr_err_ratelimited("restore without a prior evict\n");
		return -EINVAL;
	}
	return kfd_process_restore_queues(p);
}

#if GP_HAVE_kfd_dbg_trap_enable
#if GP_HAVE_kfd_dbg_trap_disable && GP_HAVE_queue_properties__is_suspended
static int ks_dbg_suspend_all(struct kfd_process *p, bool suspend);
#else
static int ks_dbg_suspend_all(struct kfd_process *p, bool suspend) { return 0; }
#endif

/* What KFD copies back to the enabling caller (struct kfd_runtime_info). */
struct ks_runtime_info {
	u64 r_debug;
	u32 runtime_state;
	u32 ttmp_setup;
};

/**
 * kfd_dbg_trap_enable() - a debugger attaches (test ioctl)
 * @target: process, p->mutex held
 * @fd: debugger event fd (unused)
 * @runtime_info: the caller's buffer for the runtime info (user memory)
 * @runtime_size: its size (in), the info's size (out); NULL: no copy (the
 *		  kfdsim debugfs and test shortcuts)
 *
 * As 6.12 kfd_dbg_trap_enable() (kfd_debug.c:786-832): the trap is enabled,
 * then the runtime info is copied to the caller.  When that copy fails the
 * trap is deactivated, which resumes every suspended queue of @target,
 * whoever suspended it (kfd_dbg_trap_deactivate(target, false, 0),
 * kfd_debug.c:817-827 and :595: resume_queues(target, 0, NULL)), and
 * -EFAULT is returned: any process can do this to itself with a bad
 * pointer.  The same in 7.3 (kfd_debug.c:833-842).
 *
 * Return: 0 or -EFAULT.
 */
KS_KFD_ENTRY int kfd_dbg_trap_enable(struct kfd_process *target, uint32_t fd,
				     void *runtime_info, uint32_t *runtime_size)
{
	struct ks_runtime_info rinfo = { .runtime_state = 1 };	/* ..._STATE_ENABLED */
	int r = 0;

	WRITE_ONCE(target->debug_trap_enabled, true);
	if (!runtime_size)
		return 0;
	if (copy_to_user((void __user *)runtime_info, &rinfo,
			 min_t(size_t, *runtime_size, sizeof(rinfo)))) {
		ks_dbg_suspend_all(target, false);
		WRITE_ONCE(target->debug_trap_enabled, false);
		r = -EFAULT;
	}
	*runtime_size = sizeof(rinfo);
	return r;
}
#endif

#if GP_HAVE_kfd_dbg_trap_disable && GP_HAVE_queue_properties__is_suspended
/*
 * The debugger's queue suspend and resume (6.12 kfd_device_queue_manager.c
 * suspend_queues()/resume_queues()), all queues of @p, p->mutex held.  A
 * queue already suspended (by gpreempt, say) is counted as suspended and
 * left as it is, as suspend_single_queue() does.  Return: queues suspended
 * (or resumed).
 */
static int ks_dbg_suspend_all(struct kfd_process *p, bool suspend)
{
	struct process_queue_node *pqn;
	int n = 0;

	list_for_each_entry(pqn, &p->pqm.queues, process_queue_list) {
		struct queue *q = pqn->q;

		if (!q)
			continue;
		n++;
		if (q->properties.is_suspended == suspend)
			continue;
		q->properties.is_suspended = suspend;
		if (ks_dqm.ops.update_queue(&ks_dqm, q, NULL))
			pr_warn_ratelimited("debugger %s of queue %u failed\n",
					    suspend ? "suspend" : "resume", q->properties.queue_id);
	}
	return n;
}

/**
 * suspend_queues() - the debugger's SUSPEND_QUEUES (6.6+)
 * @p: process, p->mutex held
 * @num_queues: unused (every queue of @p is suspended)
 * @grace_period: unused
 * @exception_clear_mask: unused
 * @usr_queue_id_array: unused
 *
 * Return: the number of queues counted as suspended.
 */
KS_KFD_ENTRY int suspend_queues(struct kfd_process *p, u32 num_queues, u32 grace_period,
				u64 exception_clear_mask, u32 *usr_queue_id_array)
{
	return ks_dbg_suspend_all(p, true);
}

/**
 * kfd_dbg_trap_disable() - the debugger detaches (6.6+)
 * @target: process, p->mutex held
 *
 * As KFD: the deactivation resumes every suspended queue, then
 * debug_trap_enabled is cleared.
 *
 * Return: 0.
 */
KS_KFD_ENTRY int kfd_dbg_trap_disable(struct kfd_process *target)
{
	if (!READ_ONCE(target->debug_trap_enabled))
		return 0;
	ks_dbg_suspend_all(target, false);
	WRITE_ONCE(target->debug_trap_enabled, false);
	return 0;
}

/*
 * "attach|suspend|stop|detach PASID": what rocgdb's ioctls do to that
 * process; stop is attach then suspend in one p->mutex hold (gpreempt cannot
 * act in between).
 */
static ssize_t ks_dbg_write(struct file *file, const char __user *ubuf, size_t len,
			    loff_t *ppos)
{
	struct kfd_process *p;
	unsigned int pasid;
	char buf[32], op[8];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%7s %u", op, &pasid) != 2)
		return -EINVAL;
	p = ks_lookup_pasid(pasid);
	if (!p)
		return -ESRCH;
	mutex_lock(&p->mutex);
	if (!strcmp(op, "attach")) {
		ret = kfd_dbg_trap_enable(p, 0, NULL, NULL);
	} else if (!strcmp(op, "detach")) {
		ret = kfd_dbg_trap_disable(p);
	} else if (!strcmp(op, "suspend") || !strcmp(op, "stop")) {
		ret = !strcmp(op, "stop") ? kfd_dbg_trap_enable(p, 0, NULL, NULL) : 0;
		/* KFD refuses every op but enable on a process not debugged. */
		if (!ret && !READ_ONCE(p->debug_trap_enabled))
			ret = -EINVAL;
		if (!ret)
			suspend_queues(p, 0, 0, 0, NULL);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&p->mutex);
	kfd_unref_process(p);
	return ret ? ret : len;
}

const struct file_operations ks_dbg_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ks_dbg_write,
};
#endif

/**
 * ks_dbg_enable() - attach a debugger as the target kernel does
 * @p: process, p->mutex held
 * @rinfo: 0, or the caller's user address for the runtime info (a bad one
 *	   makes the enable fail after resuming every queue, as KFD's)
 *
 * kfd_dbg_trap_enable() (6.6+); 6.1 has no such call, its process devices
 * are marked qpd.is_debug.
 *
 * Return: 0, or kfd_dbg_trap_enable()'s error.
 */
int ks_dbg_enable(struct kfd_process *p, u64 rinfo)
{
#if GP_HAVE_kfd_dbg_trap_enable
	u32 size = sizeof(struct ks_runtime_info);

	return kfd_dbg_trap_enable(p, 0, (void *)(uintptr_t)rinfo, rinfo ? &size : NULL);
#else
	u32 i;

	WRITE_ONCE(p->debug_trap_enabled, true);
	for (i = 0; i < p->n_pdds; i++)
		WRITE_ONCE(p->pdds[i]->qpd.is_debug, true);
	return 0;
#endif
}

/**
 * ks_dbg_flip() - a process enables and disables the debug trap on itself
 * @p: process, p->mutex held
 *
 * Two AMDKFD_IOC_DBG_TRAP calls (ENABLE, DISABLE) back to back, with no
 * scan of gpreempt's between them.  The disable of a runtime-enabled
 * process resumes every suspended queue of it (6.12 kfd_debug.c:667-677).
 *
 * Return: 0, or -EOPNOTSUPP without the debugger API.
 */
int ks_dbg_flip(struct kfd_process *p)
{
#if GP_HAVE_kfd_dbg_trap_disable && GP_HAVE_queue_properties__is_suspended
	int ret = kfd_dbg_trap_enable(p, 0, NULL, NULL);

	return ret ? ret : kfd_dbg_trap_disable(p);
#else
	return -EOPNOTSUPP;
#endif
}

/**
 * ks_processes_init() - create the release workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int ks_processes_init(void)
{
	/* 7.x warns on a workqueue that is neither WQ_PERCPU nor WQ_UNBOUND. */
	ks_process_wq = alloc_workqueue("kfdsim_wq", WQ_UNBOUND, 0);
	return ks_process_wq ? 0 : -ENOMEM;
}

/**
 * ks_processes_exit() - wait for every release (module unload)
 */
void ks_processes_exit(void)
{
	mmu_notifier_synchronize();
	if (ks_process_wq)
		destroy_workqueue(ks_process_wq);
}
