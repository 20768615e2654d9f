// SPDX-License-Identifier: GPL-2.0
/*
 * adopt.c - the KFD processes that existed before gpreempt was loaded.
 *
 * At insmod every process is checked against the built-in layout and, with
 * adopt_existing, its queues are registered, under its p->mutex (the lock
 * KFD's ioctls hold while they create and destroy queues).  A process can
 * hold its own p->mutex for as long as it likes (S4-2: an ioctl faulting a
 * page of a FUSE file that never answers), so the load waits a bounded time
 * for each and skips one still busy.  A skipped process is not let off:
 * the monitor tries its mutex again on every tick (gp_registry_adopt_skipped())
 * and adopts its queues the first time it is free.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include "gpreempt.h"
#include "kfd/kfd.h"

/* insmod's wait for one process's p->mutex, and for all of them (S4-2). */
#define GP_LOAD_WAIT_MS 1000
#define GP_LOAD_DEADLINE_MS 10000
/* Skipped processes remembered for a later adoption; more are only counted. */
#define GP_SKIPPED_MAX 64

/*
 * The processes insmod skipped: PASID and identity (compared, never
 * dereferenced without a reference).  Written by insmod before the monitor
 * starts, then by the monitor thread only.
 */
static struct {
	u32 pasid;
	struct kfd_process *p;
} gp_skipped[GP_SKIPPED_MAX];
static int gp_nskipped;
static bool gp_skipped_lost;	/* more than GP_SKIPPED_MAX were skipped */

/* Register every queue of @p; p->mutex held. */
static int gp_adopt_locked(struct kfd_process *p)
{
	struct process_queue_manager *pqm = kfd_p_pqm(p);
	struct list_head *head, *pos;
	int n = 0;

	head = (struct list_head *)((char *)pqm + GP_OFF_process_queue_manager__queues);
	list_for_each(pos, head) {
		char *pqn = (char *)pos - GP_OFF_process_queue_node__process_queue_list;
		struct queue *q = *(struct queue **)(pqn + GP_OFF_process_queue_node__q);

		if (q && !gp_registry_adopt_queue(q))
			n++;
	}
	return n;
}

/* Every KFD queue is known from here: a queue no probe reported is a missed creation (F15). */
static void gp_adopt_complete(void)
{
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	gp_reg.complete = true;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
}

static void gp_skip(struct kfd_process *p, u32 pasid)
{
	if (gp_nskipped == GP_SKIPPED_MAX) {
		gp_skipped_lost = true;
		return;
	}
	gp_skipped[gp_nskipped].pasid = pasid;
	gp_skipped[gp_nskipped].p = p;
	gp_nskipped++;
}

static void gp_skip_drop(int i)
{
	gp_skipped[i] = gp_skipped[--gp_nskipped];
}

/**
 * gp_registry_walk_existing() - the KFD processes that existed before load
 * @adopt: register their queues (adopt_existing)
 *
 * Walks every PASID through kfd_lookup_process_by_pasid() (KFD's own
 * SRCU-protected lookup, +1 reference).  Each process is first checked
 * against the built-in layout (gp_layout_live_process()): one that does not
 * match fails the walk, and insmod.  Then, with @adopt, its queue list is
 * walked under p->mutex.  Runs after the probes are registered, so no queue
 * slips between the two; a queue the creation probe registered already is a
 * duplicate, ignored by gp_add().
 *
 * S4-2: each p->mutex is waited for GP_LOAD_WAIT_MS at most, all of them
 * within GP_LOAD_DEADLINE_MS (then only tried); a process still busy is
 * skipped, counted (gp_stats.load_skipped_busy) and named, and the monitor
 * adopts it later (gp_registry_adopt_skipped()).  Queues it creates
 * meanwhile are managed as any new queue.
 *
 * Return: number of queues adopted, or -ENOEXEC (the layout is wrong).
 */
int gp_registry_walk_existing(bool adopt)
{
	unsigned long end = jiffies + msecs_to_jiffies(GP_LOAD_DEADLINE_MS);
	unsigned int nproc = 0, nq = 0, pnq;
	ktime_t t0 = ktime_get();
	int n = 0, ret;
	u32 pasid;

	for (pasid = 1; pasid < (1U << 16); pasid++) {
		struct kfd_process *p = gp_kfd_lookup_pasid(pasid);
		unsigned long dl = jiffies + msecs_to_jiffies(GP_LOAD_WAIT_MS);

		if (!p)
			continue;
		if (time_after(dl, end))
			dl = end;
		pnq = 0;
		ret = gp_layout_live_process(p, pasid, &pnq, dl);
		if (!ret && adopt && kfd_p_pasid(p) == pasid && gp_kfd_lock_until(p, dl))
			ret = -EBUSY;
		if (ret == -EBUSY) {
			/* 6.17+: one PASID per device; count each process once. */
			if (kfd_p_pasid(p) == pasid) {
				gp_skip(p, pasid);
				gp_stats.load_skipped_busy++;
				pr_warn("pasid %u: its p->mutex stayed busy: left alone at load (its queues not checked%s; tried again from the monitor)\n",
					pasid, adopt ? ", not adopted" : "");
			}
			gp_kfd_unref(p);
			continue;
		}
		if (ret) {
			gp_kfd_unref(p);
			return ret;
		}
		/* 6.17+: one PASID per device; visit each process once. */
		if (kfd_p_pasid(p) != pasid) {
			gp_kfd_unref(p);
			continue;
		}
		nproc++;
		nq += pnq;
		if (!adopt) {
			gp_kfd_unref(p);
			continue;
		}
		/* p->mutex taken above, within the same bound. */
		n += gp_adopt_locked(p);
		mutex_unlock(kfd_p_mutex(p));
		gp_kfd_unref(p);
		cond_resched();
	}
	gp_layout_live_passed(nproc, nq, t0);
	/* Without adopt_existing there is nothing to adopt later. */
	if (!adopt)
		gp_nskipped = 0;
	if (adopt && !gp_nskipped && !gp_skipped_lost)
		gp_adopt_complete();
	return n;
}

/**
 * gp_registry_adopt_skipped() - adopt the processes insmod skipped, once free
 *
 * Monitor thread only, with no mm installed.  Each skipped process's
 * p->mutex is only tried (the monitor never waits for a process's lock);
 * the first time it is free, the process is checked against the layout
 * and its queues are registered.  One that ended, or whose PASID now names
 * another process, is forgotten.
 *
 * Return: queues adopted.
 */
int gp_registry_adopt_skipped(void)
{
	int i = 0, n = 0, ret, q;
	unsigned int pnq;

	if (!gp_nskipped)
		return 0;
	while (i < gp_nskipped) {
		u32 pasid = gp_skipped[i].pasid;
		struct kfd_process *p = gp_kfd_lookup_pasid(pasid);

		if (!p || p != gp_skipped[i].p || kfd_p_pasid(p) != pasid) {
			if (p)
				gp_kfd_unref(p);
			gp_skip_drop(i);
			continue;
		}
		pnq = 0;
		/* A deadline already passed: the mutex is tried once. */
		ret = gp_layout_live_process(p, pasid, &pnq, jiffies - 1);
		if (!ret && mutex_trylock(kfd_p_mutex(p))) {
			q = gp_adopt_locked(p);
			mutex_unlock(kfd_p_mutex(p));
			n += q;
			pr_info("pasid %u: its p->mutex is free again: %d queue(s) adopted\n",
				pasid, q);
			gp_skip_drop(i);
		} else if (ret && ret != -EBUSY) {
			pr_err_ratelimited("pasid %u: does not match the KFD layout: left unmanaged\n",
					   pasid);
			gp_skip_drop(i);
		} else {
			i++;
		}
		gp_kfd_unref(p);
	}
	if (!gp_nskipped && !gp_skipped_lost)
		gp_adopt_complete();
	return n;
}
