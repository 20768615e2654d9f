// SPDX-License-Identifier: GPL-2.0
/*
 * adopt.c - the KFD processes that existed before gpreempt was loaded.
 *
 * At insmod every process is checked against the built-in layout and, with
 * adopt_existing, its queues are registered, under its p->mutex (the lock
 * KFD's ioctls hold while they create and destroy queues).  A process can
 * hold its own p->mutex for as long as it likes (an ioctl faulting a
 * page of a FUSE file that never answers), so the load waits a bounded time
 * for each and skips one still busy.  A skipped process is not let off: a
 * waiter thread (gpreempt-adopt) waits for its mutex, as a waiter of the
 * mutex, which a process whose threads keep it owned at every instant
 * hands over, and adopts its queues; a wait that runs GP_ADOPT_WAIT_MS is
 * ended (SIGKILL, from the monitor) and the next skipped process gets its
 * turn.  Neither insmod nor the monitor ever wait for a process's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "kfd/ksyms.h"
#include "kfd/layout_check.h"
#include "core/registry.h"
#include "monitor/monitor.h"
#include "kfd/kfd.h"

/* insmod's wait for one process's p->mutex, and for all of them. */
#define GP_LOAD_WAIT_MS 1000
#define GP_LOAD_DEADLINE_MS 10000
/* The waiter's longest wait for one skipped process's p->mutex. */
#define GP_ADOPT_WAIT_MS 1000

/*
 * A process insmod skipped: PASID and identity (compared, never
 * dereferenced without a reference).  The list is written by insmod before
 * the monitor starts, then by the monitor thread only; the entry in
 * gp_adopt_cur is the waiter's until its result is in.
 */
struct gp_skipped {
	struct list_head node;
	u32 pasid;
	struct kfd_process *p;
};

static LIST_HEAD(gp_skipped_list);
static int gp_nskipped;
static bool gp_skipped_lost;	/* one could not be remembered (out of memory) */

/* The waiter: one skipped process at a time. */
static struct kthread_worker *gp_adopt_worker;
static struct kthread_work gp_adopt_work;
static struct gp_skipped *gp_adopt_cur;	/* handed to the waiter (monitor-owned) */
static unsigned long gp_adopt_since;	/* jiffies: when it was handed */
static int gp_adopt_ret;		/* its result: queues adopted, or -errno */
static bool gp_adopt_done;		/* the result is in (gp_adopt_lock) */
static bool gp_adopt_waiting;		/* the waiter waits for a p->mutex (gp_adopt_lock) */
static bool gp_adopt_stopping;
static DEFINE_SPINLOCK(gp_adopt_lock);

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

/* Every KFD queue is known from here: a queue no probe reported is a missed creation. */
static void gp_adopt_complete(void)
{
	unsigned long flags;

	spin_lock_irqsave(&gp_reg.lock, flags);
	gp_reg.complete = true;
	spin_unlock_irqrestore(&gp_reg.lock, flags);
}

static void gp_skip(struct kfd_process *p, u32 pasid)
{
	struct gp_skipped *sk = kzalloc(sizeof(*sk), GFP_KERNEL);

	if (!sk) {
		gp_skipped_lost = true;
		return;
	}
	sk->pasid = pasid;
	sk->p = p;
	list_add_tail(&sk->node, &gp_skipped_list);
	gp_nskipped++;
}

static void gp_skip_drop(struct gp_skipped *sk)
{
	list_del(&sk->node);
	kfree(sk);
	gp_nskipped--;
}

static void gp_skip_drop_all(void)
{
	struct gp_skipped *sk, *tmp;

	list_for_each_entry_safe(sk, tmp, &gp_skipped_list, node)
		gp_skip_drop(sk);
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
 * Each p->mutex is waited for GP_LOAD_WAIT_MS at most, all of them
 * within GP_LOAD_DEADLINE_MS (then only tried); a process still busy is
 * skipped, counted (gp_stats.load_skipped_busy) and named, and the waiter
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
				pr_warn("pasid %u: its p->mutex stayed busy: left alone at load (its queues not checked%s; a waiter tries again)\n",
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
		gp_skip_drop_all();
	if (gp_nskipped) {
		gp_adopt_worker = kthread_create_worker(0, "gpreempt-adopt");
		if (IS_ERR(gp_adopt_worker)) {
			gp_adopt_worker = NULL;
			gp_skipped_lost = true;
			gp_skip_drop_all();
			pr_err("no waiter thread: the processes skipped at load stay unmanaged\n");
		}
	}
	if (adopt && !gp_nskipped && !gp_skipped_lost)
		gp_adopt_complete();
	return n;
}

/*
 * The waiter: wait for the p->mutex of the skipped process @sk as a waiter
 * (killable: the monitor ends a wait that runs too long, the unload any),
 * check its queues against the layout and register them.  Returns the
 * queues adopted, -EBUSY (the wait was ended), or -ESRCH or -ENOEXEC
 * (forget it: it ended, its PASID names another process, or its layout is
 * wrong).
 */
static int gp_adopt_wait(struct gp_skipped *sk)
{
	struct kfd_process *p = gp_kfd_lookup_pasid(sk->pasid);
	unsigned int pnq = 0;
	int ret, q;

	if (!p)
		return -ESRCH;
	if (p != sk->p || kfd_p_pasid(p) != sk->pasid) {
		gp_kfd_unref(p);
		return -ESRCH;
	}
	/* The process itself, unlocked, and its mutex tried once. */
	ret = gp_layout_live_process(p, sk->pasid, &pnq, jiffies - 1);
	if (ret && ret != -EBUSY) {
		gp_kfd_unref(p);
		return -ENOEXEC;
	}
	spin_lock(&gp_adopt_lock);
	gp_adopt_waiting = !READ_ONCE(gp_adopt_stopping);
	spin_unlock(&gp_adopt_lock);
	q = gp_adopt_waiting ? mutex_lock_killable(kfd_p_mutex(p)) : -EINTR;
	/* The SIGKILL is sent under gp_adopt_lock, only while waiting. */
	spin_lock(&gp_adopt_lock);
	gp_adopt_waiting = false;
	spin_unlock(&gp_adopt_lock);
	flush_signals(current);
	if (q) {
		gp_kfd_unref(p);
		return -EBUSY;
	}
	/* Its queues were not checked with the mutex busy: now. */
	if (ret == -EBUSY && gp_layout_live_queues_locked(p, sk->pasid, &pnq)) {
		mutex_unlock(kfd_p_mutex(p));
		gp_kfd_unref(p);
		return -ENOEXEC;
	}
	q = gp_adopt_locked(p);
	mutex_unlock(kfd_p_mutex(p));
	gp_kfd_unref(p);
	return q;
}

static void gp_adopt_fn(struct kthread_work *work)
{
	int ret;

	/* The monitor's SIGKILL ends a wait (kthreads ignore signals). */
	allow_signal(SIGKILL);
	ret = gp_adopt_wait(gp_adopt_cur);

	spin_lock(&gp_adopt_lock);
	gp_adopt_ret = ret;
	gp_adopt_done = true;
	spin_unlock(&gp_adopt_lock);
}

/* The monitor: end the waiter's wait, if it waits. */
static void gp_adopt_kill(void)
{
	spin_lock(&gp_adopt_lock);
	if (gp_adopt_waiting)
		send_sig(SIGKILL, gp_adopt_worker->task, 1);
	spin_unlock(&gp_adopt_lock);
}

/*
 * The monitor: the waiter's result for gp_adopt_cur, once it is in.
 * Returns the queues adopted; false in *@busy while it still waits.
 */
static int gp_adopt_collect(bool *busy)
{
	struct gp_skipped *sk = gp_adopt_cur;
	bool done;
	int ret;

	spin_lock(&gp_adopt_lock);
	done = gp_adopt_done;
	ret = gp_adopt_ret;
	spin_unlock(&gp_adopt_lock);
	*busy = !done;
	if (!done) {
		if (time_after(jiffies, gp_adopt_since + msecs_to_jiffies(GP_ADOPT_WAIT_MS)))
			gp_adopt_kill();
		return 0;
	}
	gp_adopt_cur = NULL;
	if (ret == -EBUSY) {
		/* Its turn is over: the others' first. */
		list_move_tail(&sk->node, &gp_skipped_list);
		return 0;
	}
	if (ret >= 0)
		pr_info("pasid %u: its p->mutex is free again: %d queue(s) adopted\n",
			sk->pasid, ret);
	else if (ret == -ENOEXEC)
		pr_err_ratelimited("pasid %u: does not match the KFD layout: left unmanaged\n",
				   sk->pasid);
	gp_skip_drop(sk);
	return max(ret, 0);
}

/**
 * gp_registry_adopt_skipped() - adopt the processes insmod skipped
 *
 * Monitor thread only, with no mm installed; it never waits for a
 * process's lock.  The waiter thread waits for one skipped process's
 * p->mutex at a time, GP_ADOPT_WAIT_MS at most (the monitor ends a longer
 * wait), in turn: a process that holds its own mutex does not keep the
 * others from theirs.  Once it has the mutex, the process is checked
 * against the layout and its queues are registered.  One that ended, or
 * whose PASID now names another process, is forgotten.
 *
 * Return: queues adopted.
 */
int gp_registry_adopt_skipped(void)
{
	bool busy = false;
	int n = 0;

	if (!gp_adopt_worker)
		return 0;
	if (gp_adopt_cur)
		n = gp_adopt_collect(&busy);
	if (!busy && !gp_adopt_cur && gp_nskipped && !READ_ONCE(gp_adopt_stopping)) {
		gp_adopt_cur = list_first_entry(&gp_skipped_list, struct gp_skipped, node);
		gp_adopt_since = jiffies;
		spin_lock(&gp_adopt_lock);
		gp_adopt_done = false;
		spin_unlock(&gp_adopt_lock);
		kthread_init_work(&gp_adopt_work, gp_adopt_fn);
		kthread_queue_work(gp_adopt_worker, &gp_adopt_work);
	}
	if (!gp_nskipped && !gp_adopt_cur && !gp_skipped_lost)
		gp_adopt_complete();
	return n;
}

/**
 * gp_registry_adopt_stop() - end the waiter (unload, after the monitor stopped)
 *
 * A wait in progress is ended; the processes never adopted are forgotten.
 */
void gp_registry_adopt_stop(void)
{
	if (!gp_adopt_worker)
		return;
	WRITE_ONCE(gp_adopt_stopping, true);
	if (gp_adopt_cur) {
		bool done = false;

		while (!done) {
			gp_adopt_kill();
			spin_lock(&gp_adopt_lock);
			done = gp_adopt_done;
			spin_unlock(&gp_adopt_lock);
			if (!done)
				msleep(20);
		}
		gp_adopt_cur = NULL;
	}
	kthread_destroy_worker(gp_adopt_worker);
	gp_adopt_worker = NULL;
	gp_skip_drop_all();
}
