// SPDX-License-Identifier: GPL-2.0
/*
 * counts.c - the registry's lookups and counts under gp_reg.lock: a
 * process's live entry, its user's queues, a device's slot and live
 * queues, what a queue's end takes off them, and the changes KFD made to
 * queues gpreempt never saw created.  Called by registry.c and procs.c;
 * calls nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include "core/registry.h"
#include "monitor/monitor.h"
#include "core/registry_int.h"

/**
 * gp_proc_find_locked() - @p's live entry
 * @p: process
 *
 * Return: the entry, or NULL.
 */
struct gp_proc *gp_proc_find_locked(struct kfd_process *p)
{
	struct gp_proc *pr;

	list_for_each_entry(pr, &gp_reg.procs, node)
		if (pr->p == p && !pr->dead)
			return pr;
	return NULL;
}

/**
 * gp_proc_find_user_locked() - gp_proc_find_locked(), and what @uid has
 * @p: process
 * @uid: its owner
 * @user_n: out: the live queues of @uid's processes
 *
 * One walk of the processes, which creation does anyway.
 * Return: @p's live entry, or NULL.
 */
struct gp_proc *gp_proc_find_user_locked(struct kfd_process *p, uid_t uid,
					 unsigned int *user_n)
{
	struct gp_proc *pr, *found = NULL;

	*user_n = 0;
	list_for_each_entry(pr, &gp_reg.procs, node) {
		if (pr->uid == uid)
			*user_n += pr->nqueues;
		if (pr->p == p && !pr->dead)
			found = pr;
	}
	return found;
}

/**
 * gp_dev_slot_locked() - @dev's slot in gp_reg.devq
 * @dev: device
 *
 * Return: its own slot, a free one taken for it, or the last one, shared.
 */
unsigned int gp_dev_slot_locked(struct kfd_node *dev)
{
	unsigned int i;

	for (i = 0; i < GP_MAX_DEVS; i++) {
		if (gp_reg.devq[i].dev == dev)
			return i;
		if (!gp_reg.devq[i].dev) {
			gp_reg.devq[i].dev = dev;
			return i;
		}
	}
	return GP_MAX_DEVS - 1;
}

/**
 * gp_mark_gone_locked() - @e's queue is destroyed (or its process is)
 * @e: queue
 *
 * Out of the hash and off the counts; the monitor reaps the entry.
 */
void gp_mark_gone_locked(struct gp_queue *e)
{
	WRITE_ONCE(e->gone, true);
	hash_del(&e->hnode);
	e->proc->nqueues--;
	gp_reg.devq[e->dev_slot].n--;
	if (e->over_limit)
		gp_reg.over_limit--;
	gp_reg.gen++;
}

/**
 * gp_proc_untail_locked() - @e leaves gp_reg.queues: its process's tail follows
 * @e: queue, still on the list
 */
void gp_proc_untail_locked(struct gp_queue *e)
{
	struct gp_queue *prev;

	if (e->proc->tail != e)
		return;
	prev = list_prev_entry(e, node);
	e->proc->tail = &prev->node != &gp_reg.queues && prev->proc == e->proc ? prev : NULL;
}

/**
 * gp_proc_queues_gone_locked() - mark every live queue of @pr gone
 * @pr: process
 *
 * Its entries are one run of gp_reg.queues ending at @pr->tail: only they
 * are visited.
 */
void gp_proc_queues_gone_locked(struct gp_proc *pr)
{
	struct gp_queue *e = pr->tail;

	while (e) {
		if (!e->gone)
			gp_mark_gone_locked(e);
		if (list_is_first(&e->node, &gp_reg.queues))
			break;
		e = list_prev_entry(e, node);
		if (e->proc != pr)
			break;
	}
}

/**
 * gp_unseen_locked() - count a change of a queue no creation probe reported
 *
 * KFD changed or destroyed a queue which no creation probe reported.  Once
 * every queue KFD had at load was adopted and none was left untracked,
 * that means the creation probe does
 * not fire: on an LTO kernel kfd_procfs_add_queue() can be inlined into
 * pqm_create_queue(), and its out-of-line copy, where the probe sits, is
 * never called.  Counted; the caller warns on the first.
 *
 * Return: true for the first such change.
 */
bool gp_unseen_locked(void)
{
	if (!gp_reg.complete || gp_reg.untracked)
		return false;
	return ++gp_reg.unseen == 1;
}

/**
 * gp_warn_unseen() - say that the creation probe does not fire
 * @qid: the queue KFD changed
 */
void gp_warn_unseen(u32 qid)
{
	pr_warn("KFD changed queue %u, which gpreempt never saw created: the kfd_procfs_add_queue probe does not fire (inlined by LTO?); queues created from now on are not managed (gp_stats.queues_unseen)\n",
		qid);
}
