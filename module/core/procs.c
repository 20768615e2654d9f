// SPDX-License-Identifier: GPL-2.0
/*
 * procs.c - the registry's processes: what the hooks tell of them (dying,
 * a debugger attached or detached, the debugger's queue suspend) and what
 * the monitor and the backends ask of them (restores owed, devices, tgids,
 * evictions held).  The lock story is registry.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/spinlock.h>
#include "core/registry.h"
#include "monitor/monitor.h"
#include "kfd/kfd.h"
#include "core/registry_int.h"

/*
 * Does @p still have a queue in its pqm list?  One read of the list head:
 * at the mm's release no ioctl of @p runs any more, and a stale answer only
 * miscounts gp_stats.queues_unseen.
 */
static bool gp_pqm_has_queues(struct kfd_process *p)
{
	struct list_head *head = (struct list_head *)((char *)kfd_p_pqm(p) +
						      GP_OFF_process_queue_manager__queues);

	return READ_ONCE(head->next) != head;
}

/**
 * gp_registry_proc_dead() - a KFD process is being torn down
 * @p: process
 * @first: the first teardown call for @p (its mm's release), where its
 *	queues are all still in its pqm list
 *
 * Every queue of @p is marked gone; gpreempt will not call KFD for it again.
 * Evictions gpreempt made die with the process (KFD frees its qpd).  At
 * @first, a process with queues that gpreempt never knew means the creation
 * probe did not fire (see gp_unseen_locked()).
 */
void gp_registry_proc_dead(struct kfd_process *p, bool first)
{
	struct gp_proc *pr;
	unsigned long flags;
	bool found = false, known = false, unseen = false;

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(pr, &gp_reg.procs, node) {
		if (pr->p != p)
			continue;
		gp_proc_queues_gone_locked(pr);
		known = true;
		if (!pr->dead) {
			WRITE_ONCE(pr->dead, true);
			found = true;
		}
	}
	if (first && !known && gp_pqm_has_queues(p))
		unseen = gp_unseen_locked();
	gp_reg.gen++;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	if (found)
		gp_reg_ops->changed();
	if (unseen)
		pr_warn("KFD process %d has queues gpreempt never saw created: the kfd_procfs_add_queue probe does not fire (inlined by LTO?); new queues are not managed (gp_stats.queues_unseen)\n",
			kfd_p_lead_thread(p)->tgid);
}

/**
 * gp_registry_proc_dbg() - what a debugger call did to @p
 * @p: KFD process (compared, never dereferenced)
 * @ev: %GP_DBG_ATTACH: its queues are left alone (an unpark then only drops
 *      gpreempt's ownership, the debugger may own is_suspended now);
 *      %GP_DBG_DETACH: KFD resumed every suspended queue, gpreempt manages
 *      it again;
 *      %GP_DBG_SUSPEND (p->mutex held): from now until the detach a queue
 *      gpreempt parked counts as the debugger's, gp_suspend_queue() no
 *      longer unparks it;
 *      %GP_DBG_FAILED: a failing DBG_TRAP_ENABLE can have resumed every
 *      queue of @p before it returned (kfd_dbg_trap_enable()'s unwind), and
 *      the process can make it fail at will: it is parked by eviction only
 *      from now on (KFD's debugger paths never touch its eviction count).
 */
void gp_registry_proc_dbg(struct kfd_process *p, enum gp_dbg_event ev)
{
	struct gp_proc *pr;
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(pr, &gp_reg.procs, node) {
		if (pr->p != p)
			continue;
		switch (ev) {
		case GP_DBG_ATTACH:
			WRITE_ONCE(pr->debugged, true);
			break;
		case GP_DBG_DETACH:
			WRITE_ONCE(pr->debugged, false);
			WRITE_ONCE(pr->dbg_suspended, false);
			break;
		case GP_DBG_SUSPEND:
			WRITE_ONCE(pr->dbg_suspended, true);
			break;
		case GP_DBG_FAILED:
			WRITE_ONCE(pr->evict_only, true);
			break;
		}
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	/* A suspend changes no park: the monitor need not look again now. */
	if (ev != GP_DBG_SUSPEND)
		gp_reg_ops->changed();
}

/**
 * gp_registry_restores_owed() - live processes owed an eviction check
 * @out: array to fill
 * @max: its size
 *
 * Entries stay valid: only the monitor, the caller, frees processes.
 * Return: number written (those with @restore_owed; dead ones too, for
 * the caller to clear).
 */
int gp_registry_restores_owed(struct gp_proc **out, int max)
{
	struct gp_proc *pr;
	unsigned long flags;
	int n = 0;

	if (!READ_ONCE(gp_reg.nowed))
		return 0;	/* the common case: no list walk per tick */
	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(pr, &gp_reg.procs, node) {
		if (n == max)
			break;
		if (pr->restore_owed)
			out[n++] = pr;
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	return n;
}

/**
 * gp_registry_set_owed() - set or clear @pr's restore_owed
 * @pr: process
 * @owed: the new value
 */
void gp_registry_set_owed(struct gp_proc *pr, bool owed)
{
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	if (pr->restore_owed != owed)
		gp_reg.nowed += owed ? 1 : -1;
	pr->restore_owed = owed;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
}

/**
 * gp_registry_dev_has_compute() - has @pr a live compute queue on @dev?
 * @pr: process
 * @dev: device
 *
 * Return: true if so.
 */
bool gp_registry_dev_has_compute(struct gp_proc *pr, struct kfd_node *dev)
{
	struct gp_queue *e;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(e, &gp_reg.queues, node) {
		if (e->proc == pr && e->dev == dev && !e->gone && !e->sdma) {
			found = true;
			break;
		}
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	return found;
}

/**
 * gp_registry_tgid_managed() - does another live KFD process have @tgid?
 * @tgid: thread group id
 * @except: the process to leave out (may be NULL)
 *
 * 7.2+ gives one tgid several KFD processes (contexts); after an exec the
 * new one can be registered before the old one is reaped.
 *
 * Return: true when a process other than @except, not dead, has @tgid.
 */
bool gp_registry_tgid_managed(pid_t tgid, const struct gp_proc *except)
{
	struct gp_proc *pr;
	unsigned long flags;
	bool found = false;

	spin_lock_irqsave(&gp_reg.lock, flags);
	list_for_each_entry(pr, &gp_reg.procs, node) {
		if (pr != except && pr->tgid == tgid && !pr->dead) {
			found = true;
			break;
		}
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	return found;
}

/**
 * gp_registry_next_evicted() - the next process gpreempt holds evicted
 * @prev: the process returned last, or NULL to start
 *
 * Module unload, after the monitor stopped (only that thread frees procs,
 * so the results stay valid unlocked, and a cursor stays on the list).
 * Processes are in list order, so one pass visits each once, whether its
 * restore cleared pr->evicted or failed.
 *
 * Return: a live process after @prev with evictions held, or NULL.
 */
struct gp_proc *gp_registry_next_evicted(struct gp_proc *prev)
{
	struct gp_proc *pr = prev, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	if (!pr)
		pr = list_entry(&gp_reg.procs, struct gp_proc, node);
	list_for_each_entry_continue(pr, &gp_reg.procs, node) {
		if (pr->evicted && !pr->dead) {
			found = pr;
			break;
		}
	}
	spin_unlock_irqrestore(&gp_reg.lock, flags);
	return found;
}
