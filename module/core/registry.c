// SPDX-License-Identifier: GPL-2.0
/*
 * registry.c - the KFD processes and compute queues gpreempt manages: the
 * lists, the (process, qid) hash and what the hooks tell of queues.  Also
 * core/: procs.c (processes), counts.c (lookups and counts), reap.c (the
 * monitor's side: snapshot, reap, pins), adopt.c (what existed before the
 * load).
 *
 * Lock story:
 *   gp_reg.lock (spinlock, taken in kprobe handlers and by the monitor)
 *   protects the queue and process lists, the (process, qid) hash, and the
 *   fields the hooks write (gp_queue.kfd_priority/.queue_percent/.gone,
 *   gp_proc.dead/.debugged/.nqueues).  It is never held across a KFD call or
 *   a user-memory access.
 *
 * Lifetime: hooks create entries (GFP_ATOMIC) and mark them gone when KFD
 * destroys the queue or the process, synchronously, before KFD frees
 * anything; only the monitor thread frees entries (gp_registry_reap()), so
 * the monitor may use entries of its snapshot without the lock.  Entries
 * hold no reference on KFD objects: the kfd_process and queue pointers are
 * identities, dereferenced only inside the backends' safe pattern (KFD
 * process reference + p->mutex + gp_backend_find_queue(), a walk of pqm->queues).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "params.h"
#include "testing.h"
#include "kfd/layout_check.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "core/rules.h"
#include "monitor/monitor.h"
#include "kfd/kfd.h"
#include "core/registry_int.h"

struct gp_registry gp_reg;
static DEFINE_HASHTABLE(gp_queue_hash, 10);
static u64 gp_queue_gen;	/* under gp_reg.lock */

static u32 gp_key(struct kfd_process *p, u32 qid)
{
	return hash_ptr(p, 32) ^ hash_32(qid, 32);
}

const struct gp_registry_ops *gp_reg_ops;

/**
 * gp_registry_init() - empty registry
 * @ops: what the registry tells its user (the monitor, wired in main.c);
 *	the registry itself names neither the monitor nor a backend
 */
void gp_registry_init(const struct gp_registry_ops *ops)
{
	gp_reg_ops = ops;
	spin_lock_init(&gp_reg.lock);
	INIT_LIST_HEAD(&gp_reg.queues);
	INIT_LIST_HEAD(&gp_reg.procs);
	hash_init(gp_queue_hash);
}

static struct gp_queue *gp_find_locked(struct kfd_process *p, u32 qid)
{
	struct gp_queue *e;

	hash_for_each_possible(gp_queue_hash, e, hnode, gp_key(p, qid))
		if (e->proc->p == p && e->qid == qid)
			return e;
	return NULL;
}

/*
 * Keep each process's queues together in the scan order: the monitor reads
 * them under one mm switch per run of queues of the same process, so with
 * processes creating queues concurrently an interleaved list costs one
 * switch per queue instead of one per process.  After the process's last
 * entry (gp_proc.tail), so no list walk in the probe's context, and a
 * process's entries stay one run (gp_registry_proc_dead() walks only it).
 */
static void gp_list_add_grouped_locked(struct gp_queue *e)
{
	struct gp_proc *pr = e->proc;

	if (pr->tail)
		list_add(&e->node, &pr->tail->node);
	else
		list_add_tail(&e->node, &gp_reg.queues);
	pr->tail = e;
}

/**
 * gp_add() - register a KFD queue
 * @q: the queue, complete; its process's mutex is held by the caller
 * @from_probe: reported by the creation probe (kfd_procfs_add_queue), which
 *	fires once per new KFD queue: an entry for the same (process, qid) is
 *	then always a dead queue's whose destroy gpreempt missed, even with the
 *	same @q (the slab recycled the dead queue's memory), and is replaced.
 *	False for gp_registry_walk_existing(), which may meet a queue the
 *	probe has registered already: the same @q is then a duplicate.
 * @gfp: allocation flags
 *
 * Return: 0 (registered, ignored type or duplicate), -ENOMEM, -ENOSPC or
 * -ESRCH (its process is ending).
 */
static int gp_add(struct queue *q, bool from_probe, gfp_t gfp)
{
	struct kfd_process *p = kfd_q_process(q);
	struct task_struct *lead = kfd_p_lead_thread(p);
	struct gp_proc *pr, *new_pr;
	struct gp_queue *e, *old;
	unsigned int user_n, dev_n;
	unsigned long flags;
	u32 qid = *KFD_QP(q, queue_id, u32);
	bool known;
	uid_t uid;

	u32 type = *KFD_QP(q, type, u32);

	/*
	 * Compute queues are managed; SDMA (copy) queues are watched only: a
	 * latency-critical process's input copy shows its level busy before
	 * its kernels arrive (sdma_hint).  HIQ/DIQ are the driver's own.
	 */
	if (type != GP_ENUM_KFD_QUEUE_TYPE_COMPUTE && type != GP_ENUM_KFD_QUEUE_TYPE_SDMA &&
	    type != GP_ENUM_KFD_QUEUE_TYPE_SDMA_XGMI)
		return 0;

	uid = lead ? from_kuid(&init_user_ns, task_uid(lead)) : 0;
	/* A process's entry (over a KiB) only with its first queue. */
	spin_lock_irqsave(&gp_reg.lock, flags);
	known = gp_proc_find_locked(p);
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	e = kzalloc(sizeof(*e), gfp);
	new_pr = known ? NULL : kzalloc(sizeof(*new_pr), gfp);
	if (!e || (!known && !new_pr)) {
		kfree(e);
		kfree(new_pr);
		spin_lock_irqsave(&gp_reg.lock, flags);
		gp_reg.untracked++;
		spin_unlock_irqrestore(&gp_reg.lock, flags);
		pr_warn_ratelimited("queue %u not managed: out of memory\n", qid);
		return -ENOMEM;
	}
	e->q = q;
	e->dev = kfd_q_device(q);
	e->qid = qid;
	e->kfd_priority = READ_ONCE(*KFD_QP(q, priority, u32));
	e->queue_percent = READ_ONCE(*KFD_QP(q, queue_percent, u32));
	e->rptr_uva = (u64)(uintptr_t)READ_ONCE(*KFD_QP(q, read_ptr, void *));
	e->wptr_uva = (u64)(uintptr_t)READ_ONCE(*KFD_QP(q, write_ptr, void *));
	e->ring_uva = READ_ONCE(*KFD_QP(q, queue_address, u64));
	e->ring_size = READ_ONCE(*KFD_QP(q, queue_size, u64));
	e->ptr_path = GP_PTR_NONE;
	e->aql = READ_ONCE(*KFD_QP(q, format, u32)) == GP_ENUM_KFD_QUEUE_FORMAT_AQL;
	e->sdma = type != GP_ENUM_KFD_QUEUE_TYPE_COMPUTE;
	/* The pages of its ids, as the owner maps them while creating it. */
	if (from_probe && current->mm && current->mm == kfd_p_mm(p))
		gp_ptr_ids_take(e);
	/*
	 * Only KFD's debugger sets is_suspended besides gpreempt.  At
	 * load, such a queue of a process no debugger holds is one an earlier
	 * gpreempt could not resume at its unload: taken over as parked, so
	 * the policy releases it.
	 */
	e->leftover = !from_probe && !e->sdma && kfd_q_suspended_flag(q) &&
		      READ_ONCE(*kfd_q_suspended_flag(q)) && !kfd_p_debugged(p);
	/*
	 * Adopted at load: its owner may have set a CU mask gpreempt never
	 * saw, which a shrink could not give back.  Never shrunk (parked
	 * instead) until the owner sets one again.
	 */
	e->cu_mask_unknown = !from_probe;

	spin_lock_irqsave(&gp_reg.lock, flags);
	old = gp_find_locked(p, qid);
	if (old && old->q == q && !from_probe) {
		spin_unlock_irqrestore(&gp_reg.lock, flags);
		kfree(e);
		kfree(new_pr);
		return 0;	/* adopted and hooked at once */
	}
	if (old) {
		/*
		 * KFD reused the qid (and maybe the memory): the old queue is
		 * gone, its destroy was missed.  Nothing of its entry (state,
		 * pointers, priority, generation) belongs to the new queue.
		 */
		gp_mark_gone_locked(old);
	}
	if (gp_reg.nqueues >= GP_MAX_TRACKED) {
		/* Memory, not the scan, bounds this: say so, never drop silently. */
		unsigned int n = gp_reg.nqueues;

		gp_reg.untracked++;
		spin_unlock_irqrestore(&gp_reg.lock, flags);
		kfree(e);
		kfree(new_pr);
		pr_warn_ratelimited("queue %u not managed: %u queues tracked already (the limit)\n",
				    qid, n);
		return -ENOSPC;
	}
	pr = gp_proc_find_user_locked(p, uid, &user_n);
	if (!pr && !new_pr) {
		/* Its entry went since the look above: the process is ending. */
		gp_reg.untracked++;
		spin_unlock_irqrestore(&gp_reg.lock, flags);
		kfree(e);
		pr_warn_ratelimited("queue %u not managed: its process is ending\n", qid);
		return -ESRCH;
	}
	e->dev_slot = gp_dev_slot_locked(e->dev);
	dev_n = gp_reg.devq[e->dev_slot].n;
	/*
	 * Past its device's limit or its user's: managed all the same, as
	 * unknown work.  What cannot be read fails closed for the lower
	 * queue: it is parked below a busy level like an unreadable one,
	 * and one user's queues never decide whether another's are managed.
	 */
	if (dev_n >= (gp_test_max_queues() ?: GP_MAX_QUEUES) ||
	    user_n >= READ_ONCE(gp_param.max_user_queues)) {
		e->over_limit = true;
		gp_reg.over_limit++;
	}
	gp_reg.devq[e->dev_slot].n++;
	if (!pr) {
		pr = new_pr;
		new_pr = NULL;
		pr->p = p;
		pr->pasid = kfd_p_pasid_on(p, e->dev);
		pr->ctx = kfd_p_context_id(p) == GP_KFD_CONTEXT_PRIMARY ?
			  0 : kfd_p_context_id(p) + 1U;
		pr->tgid = lead ? lead->tgid : 0;
		if (lead) {
			/* KFD holds it as long as @p; gpreempt, as long as @pr. */
			get_task_struct(lead);
			pr->lead = lead;
			pr->start = gp_rules_task_start(lead);
			strscpy_pad(pr->comm, lead->comm, sizeof(pr->comm));
		}
		pr->debugged = kfd_p_debugged(p);
		pr->uid = uid;
		list_add_tail(&pr->node, &gp_reg.procs);
		gp_reg.nprocs++;
	}
	pr->nqueues++;
	pr->nrefs++;
	e->proc = pr;
	e->gen = ++gp_queue_gen;
	gp_list_add_grouped_locked(e);
	hash_add(gp_queue_hash, &e->hnode, gp_key(p, qid));
	gp_reg.nqueues++;
	gp_reg.gen++;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	kfree(new_pr);
	if (e->over_limit)
		pr_warn_ratelimited("queue %u of %d: past the limit of its device (%u queues) or its user (%u): its dispatch ids are not read, it is parked below any busy level (gp_stats.queues_over_limit)\n",
				    qid, lead ? lead->tgid : 0, dev_n, user_n);
	gp_reg_ops->changed();
	return 0;
}

/**
 * gp_registry_add_queue() - a queue was created (kprobe context)
 * @q: KFD's queue, complete, with its process's mutex held by the caller
 *
 * Return: 0, or -ENOMEM or -ENOSPC (GP_MAX_TRACKED): the queue stays
 * unmanaged, counted in gp_stats.queues_untracked; so does every queue once
 * the live layout check failed (gp_layout_live_admit(), returns 0).
 */
int gp_registry_add_queue(struct queue *q)
{
	unsigned long flags;

	if (gp_layout_live_admit(q))
		return gp_add(q, true, GFP_ATOMIC);
	/* The layout is wrong (logged once): disarmed, never managed. */
	spin_lock_irqsave(&gp_reg.lock, flags);
	gp_reg.untracked++;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	return 0;
}

/**
 * gp_registry_update_queue() - KFD changed a queue's priority/percent
 * @p: process
 * @qid: queue id
 * @priority: new priority, or U32_MAX when unknown (the update failed)
 * @percent: new queue_percent
 *
 * The monitor re-reads both from KFD under p->mutex (gp_backend_read_props()).
 */
void gp_registry_update_queue(struct kfd_process *p, u32 qid, u32 priority, u32 percent)
{
	struct gp_queue *e;
	unsigned long flags;

	bool unseen = false;

	spin_lock_irqsave(&gp_reg.lock, flags);
	e = gp_find_locked(p, qid);
	if (e) {
		if (priority != U32_MAX) {
			WRITE_ONCE(e->kfd_priority, priority);
			WRITE_ONCE(e->queue_percent, percent);
		}
		WRITE_ONCE(e->props_stale, true);
		gp_reg.gen++;
	} else if (priority != U32_MAX) {
		unseen = gp_unseen_locked();
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	if (e)
		gp_reg_ops->changed();
	if (unseen)
		gp_warn_unseen(qid);
}

/**
 * gp_registry_set_cu_mask() - the owner set a queue's CU mask (SET_CU_MASK succeeded)
 * @p: process
 * @qid: queue id
 * @mask: the mask, (@bits + 31) / 32 words
 * @bits: its length in bits, at most GP_CU_MASK_BITS
 *
 * Called with p->mutex held (the ioctl's), so a backend that reads the mask
 * under p->mutex sees the newest.  A shrunk queue now runs on the owner's
 * mask: the monitor counts it as running again (cu_mask_changed).
 */
void gp_registry_set_cu_mask(struct kfd_process *p, u32 qid, const u32 *mask, u32 bits)
{
	struct gp_queue *e;
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	e = gp_find_locked(p, qid);
	if (e) {
		memset(e->cu_mask, 0, sizeof(e->cu_mask));
		memcpy(e->cu_mask, mask, DIV_ROUND_UP(bits, 32) * sizeof(u32));
		WRITE_ONCE(e->cu_mask_bits, bits);
		WRITE_ONCE(e->cu_mask_unknown, false);
		WRITE_ONCE(e->cu_mask_changed, true);
		gp_reg.gen++;
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	if (e)
		gp_reg_ops->changed();
}

/**
 * gp_registry_del_queue() - KFD is destroying a queue
 * @p: process
 * @qid: queue id
 */
void gp_registry_del_queue(struct kfd_process *p, u32 qid)
{
	struct gp_queue *e;
	unsigned long flags;

	bool unseen = false;

	spin_lock_irqsave(&gp_reg.lock, flags);
	e = gp_find_locked(p, qid);
	if (e)
		gp_mark_gone_locked(e);
	else
		unseen = gp_unseen_locked();
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	if (e)
		gp_reg_ops->changed();
	if (unseen)
		gp_warn_unseen(qid);
}

/**
 * gp_registry_adopt_queue() - register a queue that existed before load
 * @q: the queue; its process's p->mutex is held by the caller
 *
 * Return: 0, or a negative errno (a duplicate: the creation probe has it).
 */
int gp_registry_adopt_queue(struct queue *q)
{
	return gp_add(q, false, GFP_KERNEL);
}
