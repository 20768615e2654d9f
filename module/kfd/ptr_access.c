// SPDX-License-Identifier: GPL-2.0
/*
 * ptr_access.c - read a queue's read/write dispatch ids from user memory.
 *
 * over 400 lines: the mm switch, the id pages' check and the reads it
 * guards are one discipline (no fault, no sleep, nothing held between
 * ticks); splitting them would split it.
 *
 * KFD's own pattern (as kfd_process_restore_queues' nocpsch path and
 * amdgpu_amdkfd's user-memory reads do): take the process's mm, switch the
 * monitor kthread onto it with kthread_use_mm(), and read what is present,
 * never faulting.  Nothing is pinned and no mm reference is kept between
 * ticks.
 *
 * Only from the pages the ids had when the queue was created: KFD
 * checks only the GPU VM mapping of the ids, and the CPU mapping is the
 * owner's, who could map a page of constants ("idle") over them while the
 * GPU goes on with the real ones.  The creation probe notes the present
 * page at each id's address (gp_ptr_ids_take()); each read takes the page
 * mapped there now with the lockless page-table walk, compares it, and
 * reads it through the kernel's mapping, so what is compared is what is
 * read.  A PFN mapping (a TTM-mmapped BO, no struct page) is noted and
 * compared as its file, object and offset, and read under the mm's read
 * lock, only if that is free at once.  Another page there is "unknown",
 * like an unreadable one (GP_PTR_MOVED).
 *
 * Paths (enum gp_ptr_path, shown per queue in gp_queues.ptr_path):
 *   GP_PTR_USE_MM:    the above, batched: consecutive queues of one process
 *                     in a scan share one mm switch, undone by
 *                     gp_ptr_read_end() at the end of the scan.
 *   GP_PTR_NOT_AQL:   a PM4 queue: its read/write pointers are dword ring
 *                     offsets, not 64-bit dispatch ids; never read, and
 *                     unknown (parked below a busy level).
 *
 * Never a fault.  The CPU mapping at a queue's dispatch ids is the
 * process's to choose: KFD checks only the GPU VM mapping.  A fault there
 * could sleep for ever (a file on a FUSE mount that never answers, the
 * process's own mmap_lock held for write, a reserved BO), and a kthread
 * cannot be killed: every queue gpreempt parked would stay parked and
 * rmmod would hang in kthread_stop().  So a read only ever takes what is
 * present: with page faults disabled, a missing page fails at once in the
 * fault handler, before mmap_lock.  The environment (gp_ptr_read_env()) is
 * read the same way.
 *
 * "Unknown is not pending": a read that fails (no live thread has the
 * mm, the page is not present) makes the queue not pending for this scan.
 * A not-present page is cheap to try again (the exception fixup only), so
 * the next read waits 1 ms doubling to GP_PTR_FAULT_BACKOFF_MS; the page
 * is back as soon as the process touches it (ROCr writes the write index
 * on every submission).  A process with no mm costs a KFD lookup, so that
 * back-off goes to 1 s.  Either way the queue stays on its path and
 * returns to normal at the first read that works.
 *
 * The mm is found through the KFD process (a reference held while it is
 * taken): the lead thread's, or, when the leader has exited while other
 * threads run (its mm is NULL then), any live thread's whose mm is still
 * p->mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/uaccess.h>
#include "kfd/ksyms.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "kfd/kfd.h"

/* Longest wait between reads of a queue whose page is not present. */
#define GP_PTR_FAULT_BACKOFF_MS 8
/* Longest wait between reads of a queue whose process has no mm. */
#define GP_PTR_NOMM_BACKOFF_MS 1000

/* The mm the monitor thread is using in this scan (monitor thread only). */
static struct {
	struct gp_proc *pr;
	struct mm_struct *mm;
	struct task_struct *task;	/* a thread that has @mm (referenced) */
	struct kfd_process *p;	/* a primary's KFD process (referenced), or NULL */
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
	/*
	 * A primary keeps its reference for gp_ptr_window(): while the
	 * monitor holds its mm, exit_mmap() and with it KFD's notifier
	 * release (which frees the queues on 7.x, without p->mutex) cannot
	 * run.  A secondary context (7.2+) is torn down when its file is
	 * closed, whatever the mm: its queues are never read.
	 */
	if (!task || pr->ctx) {
		gp_kfd_unref(p);
		p = NULL;
	}
	if (!task)
		return -ESRCH;
	kthread_use_mm(mm);
	gp_cur.mm = mm;
	gp_cur.task = task;
	gp_cur.p = p;
	return 0;
}

/**
 * gp_ptr_window() - the KFD process whose queues the monitor may read now
 * @e: a queue of this scan, just read by gp_ptr_read()
 *
 * Monitor thread only, before gp_ptr_read_end().  The process is
 * referenced and its mm is held (gp_ptr_use()), so neither it nor, for a
 * primary process, the queues KFD frees at its notifier release can go
 * until the scan ends.  A queue's destroy ioctl still can: only under
 * p->mutex, after checking that the queue is still in the process's pqm,
 * may its struct queue be read.
 *
 * Return: the process, or NULL when @e's process is not the one in use or
 * is a secondary context.
 */
struct kfd_process *gp_ptr_window(const struct gp_queue *e)
{
	if (gp_cur.pr != e->proc || !gp_cur.mm)
		return NULL;
	return gp_cur.p;
}

/**
 * gp_ptr_mm_pin() - hold off @p's teardown for one action on its queues
 * @p: referenced KFD process, a primary (its mm's notifier tears it down)
 *
 * 7.x and ROCm's DKMS tree tear a process down in its mm's notifier
 * release, without p->mutex: its queues are dequeued (their MQDs freed) and
 * freed there (kfd_process_notifier_release_internal()), so neither a
 * process reference nor p->mutex keeps a queue gpreempt acts on.  That
 * release runs in exit_mmap(), once mm_users has dropped to 0: a reference
 * on mm_users keeps it from starting.  The reference is taken from a live
 * thread whose mm is still p->mm (as gp_ptr_use(); mm_users cannot come
 * back from 0, so a teardown under way is never "pinned"), and never
 * installed (no kthread_use_mm(): KFD's calls see no mm of the caller's).
 * Harmless before 7.x, where the teardown waits for the last reference.
 *
 * Return: the mm, referenced (release with gp_ptr_mm_unpin()), or NULL: no
 * live thread has p->mm any more; its teardown may be running.
 */
struct mm_struct *gp_ptr_mm_pin(struct kfd_process *p)
{
	struct task_struct *lead = kfd_p_lead_thread(p), *task;
	struct mm_struct *mm = NULL;
	void *want = kfd_p_mm(p);

	if (!lead || !want)
		return NULL;
	task = gp_thread_with_mm(lead, want, &mm);
	if (!task)
		return NULL;
	put_task_struct(task);
	return mm;
}

/**
 * gp_ptr_mm_unpin() - release what gp_ptr_mm_pin() took
 * @mm: its mm, or NULL
 *
 * If the process exited meanwhile this is the last reference: exit_mmap()
 * and KFD's teardown then run from a workqueue (mmput_async()), not in the
 * caller, which may be the monitor.
 */
void gp_ptr_mm_unpin(struct mm_struct *mm)
{
	if (mm)
		mmput_async(mm);
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
		/*
		 * If every thread exited meanwhile, this is the last
		 * reference: exit_mmap() and KFD's notifier teardown then run
		 * from a workqueue, not in the monitor's tick.
		 */
		mmput_async(gp_cur.mm);
		put_task_struct(gp_cur.task);
	}
	/* After kthread_unuse_mm(): no KFD call with a foreign mm. */
	if (gp_cur.p)
		gp_kfd_unref(gp_cur.p);
	gp_cur.pr = NULL;
	gp_cur.mm = NULL;
	gp_cur.task = NULL;
	gp_cur.p = NULL;
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
	if (e->over_limit) {
		e->ptr_path = GP_PTR_OVER_LIMIT;
		return;
	}
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

/*
 * What backs the page at @uva in current->mm: a present page, through the
 * lockless page-table walk (no fault, no sleep, safe in the probe's
 * context, NMI-like or not); else, with @vmap (the monitor only) and the
 * mm's lock free at once, a VM_PFNMAP/VM_IO mapping's file, object and
 * offset (a TTM-mmapped BO has no struct page to take).  *@vmap is then
 * that mapping's VMA, the mm's read lock left held for the caller
 * (mmap_read_unlock()).  @pagep, if not NULL, receives the page,
 * referenced (put_page()).
 * Return: 0, -ESRCH (no mm), -EFAULT (neither: not present, not a PFN
 * mapping) or -EAGAIN (the mm's lock is busy).
 */
static int gp_ptr_id_of(unsigned long uva, struct gp_ptr_id *id, struct page **pagep,
			struct vm_area_struct **vmap)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct page *page;

	memset(id, 0, sizeof(*id));
	if (vmap)
		*vmap = NULL;
	if (!mm)
		return -ESRCH;
	if (get_user_page_fast_only(uva, 0, &page)) {
		id->page = (unsigned long)page;
		if (pagep)
			*pagep = page;
		else
			put_page(page);
		return 0;
	}
	if (!vmap)
		return -EFAULT;
	if (!mmap_read_trylock(mm))
		return -EAGAIN;
	vma = vma_lookup(mm, uva);
	if (!vma || !(vma->vm_flags & (VM_PFNMAP | VM_IO))) {
		mmap_read_unlock(mm);
		return -EFAULT;
	}
	id->file = (unsigned long)vma->vm_file;
	id->obj = (unsigned long)vma->vm_private_data;
	id->off = vma->vm_pgoff + ((uva - vma->vm_start) >> PAGE_SHIFT);
	*vmap = vma;
	return 0;
}

/* gp_ptr_ids_take(), from the probe (@probe) or the monitor. */
static void gp_ptr_ids_note(struct gp_queue *e, bool probe)
{
	u64 uva[2] = { e->rptr_uva, e->wptr_uva };
	struct vm_area_struct *vma = NULL;
	int i;

	for (i = 0; i < 2; i++) {
		if (gp_ptr_id_of(uva[i], &e->ids_at[i], NULL, probe ? NULL : &vma))
			return;
		if (vma)
			mmap_read_unlock(vma->vm_mm);
	}
	e->ids_fixed = true;
}

/**
 * gp_ptr_ids_take() - note the pages of a new queue's dispatch ids
 * @e: a queue not yet visible to the monitor
 *
 * Called by the creation probe (atomic context), in the creating thread,
 * whose mm is the owner's.  The CPU mapping at the ids is the owner's to
 * change at any time: from then on, the ids are read only from these pages
 * (gp_ptr_read()).  Ids that are not in a present page now (a PFN mapping:
 * a TTM-mmapped BO; nothing mapped yet) are noted at the monitor's first
 * read instead, as are those of a queue adopted at load.
 */
void gp_ptr_ids_take(struct gp_queue *e)
{
	gp_ptr_ids_note(e, true);
}

/*
 * One dispatch id, from the page noted at creation only: 0, -EFAULT (not
 * present), -EAGAIN (the mm's lock is busy) or -EXDEV (another page is
 * mapped there now).  A present page is read through the kernel's mapping
 * of the very page compared; a PFN mapping, under the mm's read lock that
 * keeps it from being replaced between the compare and the read.
 */
static int gp_ptr_read_id(struct gp_queue *e, int i, u64 uva, u64 *val)
{
	struct vm_area_struct *vma;
	struct page *page = NULL;
	struct gp_ptr_id now;
	void *k;
	int ret;

	ret = gp_ptr_id_of(uva, &now, &page, &vma);
	if (ret)
		return ret;
	if (memcmp(&now, &e->ids_at[i], sizeof(now)) && !gp_test_defence_off(GP_DEF_IDS_PAGE)) {
		ret = -EXDEV;
	} else if (page) {
		k = kmap_local_page(page);
		*val = READ_ONCE(*(u64 *)(k + offset_in_page(uva)));
		kunmap_local(k);
	} else {
		pagefault_disable();
		ret = __get_user(*val, (u64 __user *)u64_to_user_ptr(uva)) ? -EFAULT : 0;
		pagefault_enable();
	}
	if (page)
		put_page(page);
	if (vma)
		mmap_read_unlock(vma->vm_mm);
	return ret;
}

/*
 * One read, present pages only: 0, -ESRCH (no mm), -EFAULT (not present),
 * -EAGAIN (busy mm) or -EXDEV (not the ids' own page).
 */
static int gp_ptr_read_once(struct gp_queue *e, u64 *rptr, u64 *wptr)
{
	int ret;

	ret = gp_ptr_use(e->proc);
	if (ret)
		return ret;
	if (!e->ids_fixed)
		gp_ptr_ids_note(e, false);
	if (!e->ids_fixed)
		return -EFAULT;
	/* The read index never passes the write index: read it second. */
	ret = gp_ptr_read_id(e, 1, e->wptr_uva, wptr);
	if (!ret)
		ret = gp_ptr_read_id(e, 0, e->rptr_uva, rptr);
	e->ids_moved = ret == -EXDEV;
	return ret;
}

/**
 * gp_ptr_read() - read a queue's dispatch ids
 * @e: queue
 * @rptr: read index (packets)
 * @wptr: write index (packets)
 *
 * Monitor thread only; call gp_ptr_read_end() after the last read of a scan.
 *
 * Never faults and never sleeps on the process's state.
 *
 * Return: 0, or a negative errno when unknown (the caller then counts the
 * queue as not pending): -ENODATA (never readable), -EAGAIN (backing off
 * after a failure), -ESRCH (no mm) or -EFAULT (a page is not present).
 */
int gp_ptr_read(struct gp_queue *e, u64 *rptr, u64 *wptr)
{
	int ret;

	if (e->ptr_path != GP_PTR_USE_MM)
		return -ENODATA;
	if (e->ptr_retry_ns && ktime_get_ns() < e->ptr_retry_ns)
		return -EAGAIN;
	ret = gp_ptr_read_once(e, rptr, wptr);
	if (!ret) {
		e->ptr_retry_ns = 0;
		e->ptr_backoff_ms = 0;
		return 0;
	}
	e->ptr_backoff_ms = clamp(e->ptr_backoff_ms * 2, 1U,
				  ret == -ESRCH ? GP_PTR_NOMM_BACKOFF_MS : GP_PTR_FAULT_BACKOFF_MS);
	e->ptr_retry_ns = ktime_get_ns() + (u64)e->ptr_backoff_ms * NSEC_PER_MSEC;
	pr_debug("queue %u of %d: dispatch ids unreadable (%d), retry in %u ms\n", e->qid,
		 e->proc->tgid, ret, e->ptr_backoff_ms);
	return ret;
}

/* AQL packet types (hsa_packet_type_t): the header's low 8 bits. */
#define GP_AQL_PKT_SIZE 64
#define GP_AQL_TYPE_BARRIER_AND 3
#define GP_AQL_TYPE_BARRIER_OR 5

/**
 * gp_ptr_head_blocked() - is an AQL queue waiting at a barrier packet?
 * @e: queue, just read by gp_ptr_read() with work queued
 * @rptr: the read index it returned
 *
 * The command processor does not pass a BARRIER_AND/OR packet whose
 * dependency signals are not satisfied; it stays at the read index with its
 * header intact.  Such a queue has work but cannot make progress: it is
 * waiting on other queues (hipStreamWaitEvent, an IPC event), possibly on
 * the very ones a park would stop.  The header is read like the dispatch
 * ids: only if present, never faulting.  Call before gp_ptr_read_end().
 *
 * Return: true when the packet at @rptr is a barrier-AND or barrier-OR.
 */
bool gp_ptr_head_blocked(struct gp_queue *e, u64 rptr)
{
	u64 ring = READ_ONCE(e->ring_uva), size = READ_ONCE(e->ring_size);
	u16 __user *uh;
	u16 hdr;
	int ret;

	if (!e->aql || e->sdma || !ring || (ring & (GP_AQL_PKT_SIZE - 1)) ||
	    size < GP_AQL_PKT_SIZE || !is_power_of_2(size) || gp_cur.pr != e->proc ||
	    !gp_cur.mm)
		return false;
	uh = u64_to_user_ptr(ring + (rptr % (size / GP_AQL_PKT_SIZE)) * GP_AQL_PKT_SIZE);
	pagefault_disable();
	ret = __get_user(hdr, uh);
	pagefault_enable();
	if (ret)
		return false;
	hdr &= 0xff;
	return hdr == GP_AQL_TYPE_BARRIER_AND || hdr == GP_AQL_TYPE_BARRIER_OR;
}

/**
 * gp_ptr_read_env() - copy the present part of a process's environment
 * @pr: process
 * @buf: destination
 * @max: size of @buf; at most @max - 1 bytes are copied, then a NUL
 * @partial: set when a page was not present: the copy stopped before it
 *
 * Monitor thread only, like gp_ptr_read(), and like it never faults: the
 * copy goes page by page and stops at the first page that is not present.
 *
 * Return: bytes copied (0: an empty environment, or nothing present), or
 * -ESRCH when the process has no mm.
 */
int gp_ptr_read_env(struct gp_proc *pr, char *buf, size_t max, bool *partial)
{
	unsigned long start, end, len, done = 0;
	struct mm_struct *mm;
	int ret;

	buf[0] = '\0';
	*partial = false;
	ret = gp_ptr_use(pr);
	if (ret)
		return ret;
	mm = gp_cur.mm;
	spin_lock(&mm->arg_lock);
	start = mm->env_start;
	end = mm->env_end;
	spin_unlock(&mm->arg_lock);
	if (end <= start || !max)
		return 0;
	len = min_t(unsigned long, end - start, max - 1);
	while (done < len) {
		unsigned long n = min(len - done, PAGE_SIZE - offset_in_page(start + done));

		if (copy_from_user_nofault(buf + done, (void __user *)(start + done), n)) {
			*partial = true;
			break;
		}
		done += n;
	}
	buf[done] = '\0';
	return done;
}
