// SPDX-License-Identifier: GPL-2.0
/*
 * defer.c - a helper thread for actions whose process keeps p->mutex busy.
 *
 * The monitor only tries p->mutex, so a process whose threads keep it busy
 * could evade a park, or delay its unpark, for ever.  After
 * GP_DEFER_AFTER_BUSY busy tries in a row, the monitor hands the action to
 * a freezable kthread_worker that waits for the mutex as a waiter (a mutex
 * is handed to a waiter, so a stream of lockers cannot starve it), acts
 * through the backends (blocking) and reports; the monitor commits the
 * result at the start of its next tick, before the policy decides again.
 *
 * Invariants:
 * - The monitor never waits for a p->mutex.  The helper's wait is killable
 *   and killed after GP_DEFER_WAIT_MS; the action then counts as busy.
 * - A process whose mutex was busy at every try for GP_HELD_MS is "held"
 *   (gp_proc.lock_held): parked by eviction, which needs no p->mutex, and
 *   not deferred, until a try gets its mutex.
 * - The helper takes gp_act_lock once it has p->mutex and keeps it until
 *   it drops p->mutex (plock.c), so its action is part of a tick as far as
 *   the backends' state is concerned.  Lock order: p->mutex -> gp_act_lock.
 * - While an action is with the helper, the monitor leaves its process
 *   alone, and the process and queue stay pinned in the registry until
 *   the result is committed.
 * - At unload the helper is stopped after the monitor, and its results
 *   are committed before every park is released; gp_defer_call() lets the
 *   unload wait, bounded, for a mutex its tries found busy.
 *
 * Layering: calls only the backends and plock.c; reports to the monitor
 * through struct gp_defer_ops (wired by monitor.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include "backends/backend.h"
#include "backends/plock.h"
#include "core/registry.h"
#include "monitor/monitor.h"
#include "backends/defer.h"

/* Actions in a row that found the process's p->mutex busy before deferring. */
#define GP_DEFER_AFTER_BUSY 4
/* The longest the helper waits for a p->mutex. */
#define GP_DEFER_WAIT_MS 500
/* Processes with an action at the helper at once; more wait for a slot. */
#define GP_DEFER_MAX 16
/* Busy at every attempt for this long: the process holds its p->mutex. */
#define GP_HELD_MS 1000
/* Busy attempts further apart than this are not one run. */
#define GP_HELD_GAP_MS 1000

enum gp_defer_state {
	GP_DEFER_IDLE = 0,
	GP_DEFER_QUEUED,	/* the helper has it */
	GP_DEFER_DONE,		/* the result is in: the monitor commits it */
};

static struct kthread_worker *gp_defer_worker;
static const struct gp_defer_ops *gp_defer_ops;
/* Monitor-owned: processes whose action is with the helper. */
static struct gp_proc *gp_deferred[GP_DEFER_MAX];
static unsigned int gp_ndeferred;
static bool gp_defer_stopping;

static void gp_defer_fn(struct kthread_work *work)
{
	struct gp_defer *d = container_of(work, struct gp_defer, work);
	struct gp_proc *pr = container_of(d, struct gp_proc, defer);
	bool park = d->act != GP_ACT_UNPARK;
	int ret = -EBUSY;

	d->t0 = ktime_get_ns();
	if (READ_ONCE(gp_defer_stopping))
		goto out;
	if (d->kind == GP_BACKEND_EVICT)
		ret = gp_evict_process_blocking(pr, d->dev, park);
	else if (d->kind == GP_BACKEND_SHRINK)
		ret = gp_shrink_queue(d->e, park, d->has_avoid ? d->avoid : NULL, d->dev_cus,
				      true);
	else
		ret = gp_suspend_queue(d->e, park, true);
out:
	d->ret = ret;
	d->t1 = ktime_get_ns();
	/* Pairs with gp_defer_collect(): the result is seen before DONE. */
	smp_store_release(&d->state, GP_DEFER_DONE);
	gp_defer_ops->done();
}

/*
 * Monitor: an attempt on @pr's p->mutex found it @busy (or got it).  Busy
 * at every attempt for GP_HELD_MS: the process holds it (counted once per
 * run, and shown in its queues' gp_queue_info.mutex_held).
 */
static void gp_held_note(struct gp_proc *pr, bool busy)
{
	u64 now = ktime_get_ns();

	if (!busy) {
		pr->busy_since = 0;
		WRITE_ONCE(pr->lock_held, false);
		return;
	}
	if (!pr->busy_since || now - pr->busy_last > GP_HELD_GAP_MS * NSEC_PER_MSEC)
		pr->busy_since = now;
	pr->busy_last = now;
	if (pr->lock_held || now - pr->busy_since < GP_HELD_MS * NSEC_PER_MSEC)
		return;
	WRITE_ONCE(pr->lock_held, true);
	WRITE_ONCE(pr->held_count, pr->held_count + 1);
	gp_stats.mutex_held++;
	pr_warn_ratelimited("pasid %u (tgid %d, %s) holds its own KFD p->mutex for more than %d ms: parked by eviction without it while it does\n",
			    pr->pasid, pr->tgid, pr->comm, GP_HELD_MS);
}

/**
 * gp_defer_busy() - count an action's p->mutex result on @pr
 * @pr: the process acted on
 * @ret: the backend's result
 *
 * Return: true when the action found the mutex busy for the
 * GP_DEFER_AFTER_BUSY-th time in a row, and the process is not known to
 * hold it: hand it to gp_defer_queue().
 */
bool gp_defer_busy(struct gp_proc *pr, int ret)
{
	/* Done without the mutex (preempt_evict.c): it was busy all the same. */
	gp_held_note(pr, ret == -EBUSY || pr->lockless);
	pr->lockless = false;
	if (ret != -EBUSY) {
		pr->busy_streak = 0;
		return false;
	}
	if (pr->busy_streak < GP_DEFER_AFTER_BUSY)
		pr->busy_streak++;
	return pr->busy_streak >= GP_DEFER_AFTER_BUSY && gp_defer_worker &&
	       gp_ndeferred < GP_DEFER_MAX && !pr->lock_held;
}

/**
 * gp_defer_inflight() - is an action of @pr with the helper?
 * @pr: registry process
 *
 * Return: true if so: the monitor acts on nothing of @pr until its result is in.
 */
bool gp_defer_inflight(const struct gp_proc *pr)
{
	return READ_ONCE(pr->defer.state) != GP_DEFER_IDLE;
}

/**
 * gp_defer_pending() - is any action with the helper? (no deep idle then)
 *
 * Return: true if so.
 */
bool gp_defer_pending(void)
{
	return gp_ndeferred;
}

/**
 * gp_defer_queue() - hand an action that found p->mutex busy to the helper
 * @pr: the process
 * @req: the action (@req->e, @req->kind, @req->act, ...; see struct gp_defer)
 *
 * Monitor only, after gp_defer_busy() said so.  @pr and @req->e are pinned
 * until gp_defer_collect() has committed the result.
 */
void gp_defer_queue(struct gp_proc *pr, const struct gp_defer *req)
{
	struct gp_defer *d = &pr->defer;

	if (gp_defer_inflight(pr) || gp_ndeferred >= GP_DEFER_MAX)
		return;
	d->kind = req->kind;
	d->act = req->act;
	d->reason = req->reason;
	d->e = req->e;
	d->dev = req->dev;
	d->has_avoid = req->has_avoid;
	if (req->has_avoid)
		memcpy(d->avoid, req->avoid, sizeof(d->avoid));
	d->dev_cus = req->dev_cus;
	d->pp = req->pp;
	d->pp.dev_budget = NULL;
	d->ret = -EBUSY;
	gp_registry_pin(pr, d->e, true);
	gp_deferred[gp_ndeferred++] = pr;
	gp_stats.busy_deferred++;
	WRITE_ONCE(d->state, GP_DEFER_QUEUED);
	kthread_init_work(&d->work, gp_defer_fn);
	kthread_queue_work(gp_defer_worker, &d->work);
}

/**
 * gp_defer_collect() - commit the results the helper has
 * @n: queues in gp_snap (this tick's snapshot)
 *
 * Monitor (under gp_act_lock), before the policy decides, or at unload
 * after the helper stopped.
 */
void gp_defer_collect(int n)
{
	unsigned int k = 0;

	while (k < gp_ndeferred) {
		struct gp_proc *pr = gp_deferred[k];
		struct gp_defer *d = &pr->defer;

		/* Pairs with gp_defer_fn(): DONE, then the result it wrote. */
		if (smp_load_acquire(&d->state) != GP_DEFER_DONE) {
			k++;
			continue;
		}
		/* No queue: an owed restore, still owed (gp_restore_owed() checks). */
		if (d->e)
			gp_defer_ops->commit(d, n);
		/* A deferred action that got the mutex ends the busy streak. */
		if (d->ret != -EBUSY)
			pr->busy_streak = 0;
		gp_held_note(pr, d->ret == -EBUSY);
		WRITE_ONCE(d->state, GP_DEFER_IDLE);
		gp_registry_pin(pr, d->e, false);
		gp_deferred[k] = gp_deferred[--gp_ndeferred];
	}
}

/**
 * gp_defer_tick() - end a helper's wait for a p->mutex that took too long
 * @now: the tick's time
 *
 * Monitor, under gp_act_lock.
 */
void gp_defer_tick(u64 now)
{
	u64 since = gp_plock_waiting();

	if (since && now - since > GP_DEFER_WAIT_MS * NSEC_PER_MSEC)
		send_sig(SIGKILL, gp_defer_worker->task, 1);
}

static void gp_defer_allow_kill(struct kthread_work *work)
{
	allow_signal(SIGKILL);
}

/**
 * gp_defer_start() - start the helper thread
 * @ops: what it reports to (the monitor): ->done() when a result is in,
 *	 ->commit() for each result gp_defer_collect() finds
 *
 * Return: 0 or a negative errno.
 */
int gp_defer_start(const struct gp_defer_ops *ops)
{
	struct kthread_work init;

	gp_defer_ops = ops;
	gp_defer_stopping = false;
	gp_defer_worker = kthread_create_worker(KTW_FREEZABLE, "gpreempt-defer");
	if (IS_ERR(gp_defer_worker)) {
		int ret = PTR_ERR(gp_defer_worker);

		gp_defer_worker = NULL;
		return ret;
	}
	kthread_init_work(&init, gp_defer_allow_kill);
	kthread_queue_work(gp_defer_worker, &init);
	kthread_flush_work(&init);
	return 0;
}

static int gp_defer_nop(void *arg)
{
	return 0;
}

/**
 * gp_defer_stop() - stop the helper's deferred actions (after the monitor)
 *
 * A wait for a p->mutex in progress is ended; actions not started yet end
 * as busy.  The caller commits the results with gp_defer_collect().  The
 * thread stays for gp_defer_call() until gp_defer_exit().
 */
void gp_defer_stop(void)
{
	if (!gp_defer_worker)
		return;
	WRITE_ONCE(gp_defer_stopping, true);
	/* Queued behind every deferred action: ends the wait of each. */
	gp_defer_call(gp_defer_nop, NULL, 0);
}

/**
 * gp_defer_exit() - end the helper thread (gp_defer_stop() first)
 */
void gp_defer_exit(void)
{
	if (!gp_defer_worker)
		return;
	kthread_destroy_worker(gp_defer_worker);
	gp_defer_worker = NULL;
}

struct gp_defer_call {
	struct kthread_work work;
	int (*fn)(void *arg);
	void *arg;
	int ret;
	struct completion done;
};

static void gp_defer_call_fn(struct kthread_work *work)
{
	struct gp_defer_call *c = container_of(work, struct gp_defer_call, work);

	/* A kill of gp_defer_stop() that found no wait to end. */
	flush_signals(current);
	c->ret = c->fn(c->arg);
	complete(&c->done);
}

/**
 * gp_defer_call() - run @fn in the helper, its p->mutex wait bounded by @ms
 * @fn: a backend action, blocking (it waits as gp_plock_wait() does)
 * @arg: its argument
 * @ms: the longest wait for the mutex
 *
 * Module unload, after gp_defer_stop() (the monitor is gone: this thread
 * ends the helper's wait).  The helper waits for the mutex as a waiter,
 * which a mutex kept owned at every instant hands itself over to; one held
 * for longer than @ms is given up, as -EBUSY.  The kill is sent under
 * gp_act_lock, only while the helper still waits, so it never lands
 * inside a KFD call.
 *
 * Return: what @fn returned, or -EBUSY.
 */
int gp_defer_call(int (*fn)(void *arg), void *arg, unsigned int ms)
{
	struct gp_defer_call c = { .fn = fn, .arg = arg, .ret = -EBUSY };
	unsigned long tmo = msecs_to_jiffies(ms);

	if (!gp_defer_worker)
		return -EBUSY;
	init_completion(&c.done);
	kthread_init_work(&c.work, gp_defer_call_fn);
	kthread_queue_work(gp_defer_worker, &c.work);
	/*
	 * Bounded: once it waits for the mutex, the next kill ends the wait.
	 * Sent only to a wait: a kill left pending would make the idle
	 * worker spin.
	 */
	while (!wait_for_completion_timeout(&c.done, tmo)) {
		mutex_lock(&gp_act_lock);
		if (gp_plock_waiting())
			send_sig(SIGKILL, gp_defer_worker->task, 1);
		mutex_unlock(&gp_act_lock);
		tmo = msecs_to_jiffies(20);
	}
	return c.ret;
}
