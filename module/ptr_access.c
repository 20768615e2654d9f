// SPDX-License-Identifier: GPL-2.0
/*
 * ptr_access.c - read a queue's read/write dispatch ids from user memory.
 *
 * KFD's own pattern (as kfd_process_restore_queues' nocpsch path and
 * amdgpu_amdkfd's user-memory reads do): take the process's mm, switch the
 * monitor kthread onto it with kthread_use_mm(), and read with __get_user()
 * under pagefault_disable().  Nothing is pinned and no mm reference is kept
 * between ticks (M5).
 *
 * Paths (enum gp_ptr_path, shown per queue in gp_queues.ptr_path):
 *   GP_PTR_USE_MM:    the above, batched: consecutive queues of one process
 *                     in a scan share one mm switch, undone by
 *                     gp_ptr_read_end() at the end of the scan.
 *   GP_PTR_ACCESS_VM: a read with faults disabled failed (page not present,
 *                     or a VM_IO/VM_PFNMAP mapping without a present PTE):
 *                     access_process_vm() goes through the fault path and
 *                     vm_ops->access.  The queue stays on this path.
 *
 *   GP_PTR_NOT_AQL:   a PM4 queue: its read/write pointers are dword ring
 *                     offsets, not 64-bit dispatch ids; never read.
 *
 * "Unknown is not pending" (M6): a read that fails (no live thread has the
 * mm, the page is gone) makes the queue not pending for this scan, and the
 * next read waits a back-off of 1 ms doubling to 1 s, so an unreadable
 * queue neither triggers parks nor costs a lookup per tick.
 *
 * The mm is found through the KFD process (a reference held while it is
 * taken): the lead thread's, or, when the leader has exited while other
 * threads run (its mm is NULL then), any live thread's whose mm is still
 * p->mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/uaccess.h>
#include "gpreempt.h"
#include "kfd.h"

/* The mm the monitor thread is using in this scan (monitor thread only). */
static struct {
	struct gp_proc *pr;
	struct mm_struct *mm;
	struct task_struct *task;	/* a thread that has @mm (referenced) */
} gp_cur;

/* A referenced thread of @leader's group whose mm is @want (NULL if none). */
static struct task_struct *gp_thread_with_mm(struct task_struct *leader, void *want,
					     struct mm_struct **mmp)
{
	struct task_struct *t, *found = NULL;
	struct mm_struct *mm;

	rcu_read_lock();
	for_each_thread(leader, t) {
		task_lock(t);
		mm = t->mm;
		if (mm && mm == want && mmget_not_zero(mm)) {
			get_task_struct(t);
			found = t;
			*mmp = mm;
		}
		task_unlock(t);
		if (found)
			break;
	}
	rcu_read_unlock();
	return found;
}

static int gp_ptr_use(struct gp_proc *pr)
{
	struct task_struct *task;
	struct kfd_process *p;
	struct mm_struct *mm = NULL;

	if (gp_cur.pr == pr)
		return gp_cur.mm ? 0 : -ESRCH;
	gp_ptr_read_end();
	gp_cur.pr = pr;
	p = gp_kfd_lookup_pasid(pr->pasid);
	if (!p)
		return -ESRCH;
	task = NULL;
	if (p == pr->p && kfd_p_lead_thread(p))
		task = gp_thread_with_mm(kfd_p_lead_thread(p), kfd_p_mm(p), &mm);
	gp_kfd_unref(p);
	if (!task)
		return -ESRCH;
	kthread_use_mm(mm);
	gp_cur.mm = mm;
	gp_cur.task = task;
	return 0;
}

/**
 * gp_ptr_read_end() - leave the mm gp_ptr_read() switched to
 *
 * Called by the monitor after each scan, before it acts: no mm stays in use
 * or referenced between ticks.
 */
void gp_ptr_read_end(void)
{
	if (gp_cur.mm) {
		kthread_unuse_mm(gp_cur.mm);
		mmput(gp_cur.mm);
		put_task_struct(gp_cur.task);
	}
	gp_cur.pr = NULL;
	gp_cur.mm = NULL;
	gp_cur.task = NULL;
}

/**
 * gp_ptr_setup() - choose the read path of a new queue
 * @e: queue (monitor-owned fields are written)
 *
 * A PM4 queue gets GP_PTR_NOT_AQL; on a bad pointer the path stays
 * GP_PTR_NONE.  Neither is ever read, nor counted as pending.
 */
void gp_ptr_setup(struct gp_queue *e)
{
	/* SDMA rptr/wptr are byte offsets: wptr != rptr still means work. */
	if (!e->aql && !e->sdma) {
		e->ptr_path = GP_PTR_NOT_AQL;
		return;
	}
	if ((e->rptr_uva | e->wptr_uva) & 7 || !e->rptr_uva || !e->wptr_uva) {
		pr_warn_ratelimited("queue %u of %d: unaligned/NULL rptr/wptr\n", e->qid,
				    e->proc->tgid);
		e->ptr_path = GP_PTR_NONE;
		return;
	}
	e->ptr_path = GP_PTR_USE_MM;
}

/**
 * gp_ptr_release() - forget the read path chosen by gp_ptr_setup()
 * @e: queue
 *
 * Nothing is pinned or referenced between ticks, so there is nothing to drop.
 */
void gp_ptr_release(struct gp_queue *e)
{
	e->ptr_path = GP_PTR_NONE;
}

/* One read through the queue's path: 0, -ESRCH (no mm) or -EFAULT. */
static int gp_ptr_read_once(struct gp_queue *e, u64 *rptr, u64 *wptr)
{
	u64 __user *ur = u64_to_user_ptr(e->rptr_uva);
	u64 __user *uw = u64_to_user_ptr(e->wptr_uva);
	int ret;

	ret = gp_ptr_use(e->proc);
	if (ret)
		return ret;
	if (e->ptr_path == GP_PTR_USE_MM) {
		pagefault_disable();
		/* The read index never passes the write index: read it second. */
		ret = __get_user(*wptr, uw);
		if (!ret)
			ret = __get_user(*rptr, ur);
		pagefault_enable();
		if (!ret)
			return 0;
		e->ptr_path = GP_PTR_ACCESS_VM;
		e->dirty = true;
	}
	if (access_process_vm(gp_cur.task, e->wptr_uva, wptr, 8, 0) != 8 ||
	    access_process_vm(gp_cur.task, e->rptr_uva, rptr, 8, 0) != 8)
		return -EFAULT;
	return 0;
}

/**
 * gp_ptr_read() - read a queue's dispatch ids
 * @e: queue
 * @rptr: read index (packets)
 * @wptr: write index (packets)
 *
 * Monitor thread only; call gp_ptr_read_end() after the last read of a scan.
 *
 * Return: 0, or a negative errno when unknown (the caller then counts the
 * queue as not pending): -ENODATA (never readable), -EAGAIN (backing off
 * after a failure), -ESRCH or -EFAULT (this read failed; back-off starts).
 */
int gp_ptr_read(struct gp_queue *e, u64 *rptr, u64 *wptr)
{
	int ret;

	if (e->ptr_path != GP_PTR_USE_MM && e->ptr_path != GP_PTR_ACCESS_VM)
		return -ENODATA;
	if (e->ptr_retry_ns && ktime_get_ns() < e->ptr_retry_ns)
		return -EAGAIN;
	ret = gp_ptr_read_once(e, rptr, wptr);
	if (!ret) {
		e->ptr_retry_ns = 0;
		e->ptr_backoff_ms = 0;
		return 0;
	}
	e->ptr_backoff_ms = clamp(e->ptr_backoff_ms * 2, 1U, 1000U);
	e->ptr_retry_ns = ktime_get_ns() + (u64)e->ptr_backoff_ms * NSEC_PER_MSEC;
	pr_debug("queue %u of %d: dispatch ids unreadable (%d), retry in %u ms\n", e->qid,
		 e->proc->tgid, ret, e->ptr_backoff_ms);
	return ret;
}
