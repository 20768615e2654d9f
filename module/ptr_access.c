// SPDX-License-Identifier: GPL-2.0
/*
 * ptr_access.c - read a queue's read/write dispatch ids from user memory.
 *
 * Paths, cheapest first (DESIGN.md section 3):
 *   GP_PTR_PINNED:    the page(s) holding rptr/wptr are pinned once
 *                     (FOLL_LONGTERM) and read through the direct map: a plain
 *                     load per tick.  The pin also keeps the page alive, so a
 *                     read after the process is gone is harmless.  Unpinned when
 *                     the queue is reaped.
 *   GP_PTR_ACCESS_VM: VM_IO/VM_PFNMAP mappings (TTM-mmapped BOs) cannot be
 *                     pinned; access_process_vm() goes through vm_ops->access.
 *                     It sleeps on mmap_lock and takes a transient mm reference.
 * Setup runs in the monitor thread (never in a probe), holding a KFD process
 * reference so lead_thread is valid.  No mm reference is kept between ticks.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>
#include "gpreempt.h"
#include "kfd.h"

static int gp_pin_one(struct gp_queue *e, struct mm_struct *mm, u64 uva, u64 **kva)
{
	unsigned long page_va = uva & PAGE_MASK;
	struct page *page;
	long got;
	int i;

	for (i = 0; i < e->npages; i++) {
		if (e->pin_va[i] == page_va) {
			*kva = page_address(e->pages[i]) + offset_in_page(uva);
			return 0;
		}
	}
	got = gp_pin_user_page_remote(mm, page_va, FOLL_WRITE | FOLL_LONGTERM, &page);
	if (got != 1)
		return got < 0 ? got : -EFAULT;
	e->pages[e->npages] = page;
	e->pin_va[e->npages++] = page_va;
	*kva = page_address(page) + offset_in_page(uva);
	return 0;
}

static bool gp_vma_pinnable(struct mm_struct *mm, u64 uva)
{
	struct vm_area_struct *vma = vma_lookup(mm, uva);

	return vma && !(vma->vm_flags & (VM_IO | VM_PFNMAP));
}

/**
 * gp_ptr_setup() - choose and prepare the read path of a new queue
 * @e: queue (monitor-owned fields are written)
 *
 * On failure the path stays GP_PTR_NONE and the queue counts as pending.
 */
void gp_ptr_setup(struct gp_queue *e)
{
	struct kfd_process *p;
	struct task_struct *task;
	struct mm_struct *mm;
	int ret = -ESRCH;

	if ((e->rptr_uva | e->wptr_uva) & 7 || !e->rptr_uva || !e->wptr_uva) {
		pr_warn_ratelimited("queue %u of %d: unaligned/NULL rptr/wptr\n", e->qid,
				    e->proc->tgid);
		e->ptr_path = GP_PTR_NONE;
		return;
	}
	p = gp_kfd_lookup_pasid(e->proc->pasid);
	if (!p)
		return;
	if (p != e->proc->p)
		goto out_unref;
	task = kfd_p_lead_thread(p);
	mm = task ? get_task_mm(task) : NULL;
	if (!mm)
		goto out_unref;

	mmap_read_lock(mm);
	if (gp_vma_pinnable(mm, e->rptr_uva) && gp_vma_pinnable(mm, e->wptr_uva)) {
		ret = gp_pin_one(e, mm, e->rptr_uva, &e->rptr);
		if (!ret)
			ret = gp_pin_one(e, mm, e->wptr_uva, &e->wptr);
	} else {
		ret = -EPERM;
	}
	mmap_read_unlock(mm);
	mmput(mm);

	if (!ret) {
		e->ptr_path = GP_PTR_PINNED;
	} else {
		gp_ptr_release(e);
		e->pid = get_task_pid(task, PIDTYPE_TGID);
		e->ptr_path = GP_PTR_ACCESS_VM;
	}
out_unref:
	gp_kfd_unref(p);
}

/**
 * gp_ptr_release() - unpin / drop what gp_ptr_setup() took
 * @e: queue
 */
void gp_ptr_release(struct gp_queue *e)
{
	if (e->npages)
		unpin_user_pages(e->pages, e->npages);
	e->npages = 0;
	e->rptr = NULL;
	e->wptr = NULL;
	put_pid(e->pid);
	e->pid = NULL;
	e->ptr_path = GP_PTR_NONE;
}

/**
 * gp_ptr_read() - read a queue's dispatch ids
 * @e: queue
 * @rptr: read index (packets)
 * @wptr: write index (packets)
 *
 * Return: 0, or a negative errno when unknown (the caller assumes pending).
 */
int gp_ptr_read(struct gp_queue *e, u64 *rptr, u64 *wptr)
{
	struct task_struct *task;
	int ok;

	switch (e->ptr_path) {
	case GP_PTR_PINNED:
		*wptr = READ_ONCE(*e->wptr);
		/* The read index never passes the write index: read it second. */
		*rptr = READ_ONCE(*e->rptr);
		return 0;
	case GP_PTR_ACCESS_VM:
		task = get_pid_task(e->pid, PIDTYPE_TGID);
		if (!task)
			return -ESRCH;
		ok = access_process_vm(task, e->wptr_uva, wptr, 8, 0) == 8 &&
		     access_process_vm(task, e->rptr_uva, rptr, 8, 0) == 8;
		put_task_struct(task);
		return ok ? 0 : -EFAULT;
	default:
		return -ENODATA;
	}
}
