// SPDX-License-Identifier: GPL-2.0
/*
 * reap.c - the monitor's side of the registry: the snapshot it scans, the
 * entries it frees once the hooks marked them gone (only the monitor frees,
 * so it may use its snapshot without the lock), the pins a deferred action
 * holds, and the free of everything at unload.  The lock story is
 * registry.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "testing.h"
#include "core/registry.h"
#include "kfd/kfd.h"
#include "core/registry_int.h"

/**
 * gp_registry_snapshot() - the queues to scan this tick
 * @out: array to fill
 * @max: its size
 *
 * Entries stay valid until the caller (the monitor) reaps them.
 * Return: number of entries written.
 */
int gp_registry_snapshot(struct gp_queue **out, int max)
{
	struct gp_queue *e;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(e, &gp_reg.queues, node) {
		if (n == max)
			break;
		out[n++] = e;
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	return n;
}

/**
 * gp_registry_reap() - free gone queues and finished processes
 * @release: called (unlocked, may sleep) for each queue before it is freed;
 *	     may be NULL
 *
 * Monitor thread only (or module unload once the monitor has stopped).  A
 * process entry is freed once no queue entry points at it any more (gone
 * or not: @nrefs) and gpreempt holds no eviction on it (or it is dead: its
 * evictions died with it).  A queue that goes gone between the two phases
 * keeps its process alive until a later reap frees the queue first.
 */
void gp_registry_reap(void (*release)(struct gp_queue *e))
{
	struct gp_queue *e, *tmp;
	struct gp_proc *pr, *ptmp;
	unsigned long flags;
	LIST_HEAD(dead);
	LIST_HEAD(dead_procs);

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry_safe(e, tmp, &gp_reg.queues, node) {
		/* A deferred action uses it: freed once its result is in. */
		if (e->gone && !e->pinned) {
			gp_proc_untail_locked(e);
			list_move(&e->node, &dead);
			gp_reg.nqueues--;
		}
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);

	list_for_each_entry_safe(e, tmp, &dead, node) {
		if (release)
			release(e);
		spin_lock_irqsave(&gp_reg.lock, flags);
		e->proc->nrefs--;
		spin_unlock_irqrestore(&gp_reg.lock, flags);
		kfree(e);
	}

	gp_test_window(GP_TEST_REAP);
	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry_safe(pr, ptmp, &gp_reg.procs, node) {
		if (!pr->nrefs && (pr->dead || !pr->evicted)) {
			list_move(&pr->node, &dead_procs);
			gp_reg.nprocs--;
			if (pr->restore_owed)
				gp_reg.nowed--;
		}
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	list_for_each_entry_safe(pr, ptmp, &dead_procs, node) {
		gp_reg_ops->proc_freed(pr);
		if (pr->lead)
			put_task_struct(pr->lead);
		kfree(pr);
	}
}

/**
 * gp_registry_pin() - keep @pr (and @e) allocated while a deferred action uses them
 * @pr: the process
 * @e: its queue, or NULL
 * @pin: take (true) or drop the pin
 *
 * A pin is one more reference in @pr->nrefs, and @e->pinned keeps a gone
 * @e from the reap.  Unpinning a gone queue counts as a change: the next
 * tick reaps it.
 */
void gp_registry_pin(struct gp_proc *pr, struct gp_queue *e, bool pin)
{
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	pr->nrefs += pin ? 1 : -1;
	if (e)
		e->pinned = pin;
	if (!pin)
		gp_reg.gen++;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
}

/**
 * gp_registry_free_all() - mark everything gone and free it (module exit)
 * @release: as for gp_registry_reap()
 */
void gp_registry_free_all(void (*release)(struct gp_queue *e))
{
	struct gp_queue *e;
	struct gp_proc *pr;
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(e, &gp_reg.queues, node)
		if (!e->gone)
			gp_mark_gone_locked(e);
	list_for_each_entry(pr, &gp_reg.procs, node)
		pr->dead = true;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	gp_registry_reap(release);
}
