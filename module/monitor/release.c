// SPDX-License-Identifier: GPL-2.0
/*
 * release.c - what the monitor gives back: the entries of queues that
 * went (maps, rules, evictions), evictions owed a restore, and at unload
 * everything gpreempt parked.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include "backends/backend.h"
#include "monitor/monitor_int.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "core/maps.h"
#include "monitor/monitor.h"
#include "backends/defer.h"

/*
 * Has the thread group @tgid ended (every thread exited: KFD tears a process
 * down after its last thread's exit_mm(), when signal->live is already 0)?
 * An exec or a process that only closed /dev/kfd has not.
 */
static bool gp_tgid_ended(pid_t tgid)
{
	struct pid *pid = find_get_pid(tgid);
	struct task_struct *t;
	bool ended = true;

	if (!pid)
		return true;
	t = get_pid_task(pid, PIDTYPE_TGID);
	put_pid(pid);
	if (t) {
		ended = !atomic_read(&t->signal->live);
		put_task_struct(t);
	}
	return ended;
}

/**
 * gp_release_queue() - a queue left the registry (reap callback)
 * @e: the entry, gone, about to be freed
 *
 * Its map entry goes; pid rules and holds end with their thread group;
 * an eviction its process still holds is forgotten with a dead
 * process, or owed a restore.
 */
void gp_release_queue(struct gp_queue *e)
{
	struct gp_queue_key key = { .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
	struct gp_proc *pr = e->proc;

	gp_ptr_release(e);
	gp_maps_del_queue(&key);
	gp_set_state(e, GP_Q_GONE);
	/* Pid rules and holds end with their process. */
	if (READ_ONCE(pr->dead) && !READ_ONCE(pr->nqueues) && pr->tgid && !pr->rules_dropped &&
	    !gp_registry_tgid_managed(pr->tgid, pr) && gp_tgid_ended(pr->tgid)) {
		gp_maps_forget_tgid(pr->tgid, pr->start);
		pr->rules_dropped = true;
	}
	if (!pr->evicted)
		return;
	if (READ_ONCE(pr->dead)) {
		/* Its evictions died with it: KFD freed the qpd. */
		if (!READ_ONCE(pr->nqueues))
			gp_evict_forget_all(pr);
	} else {
		/* Maybe its last compute queue on a device it is evicted on. */
		gp_registry_set_owed(pr, true);
	}
}

/**
 * gp_restore_owed() - restore evictions on devices where no compute queue is left
 *
 * An eviction gpreempt holds on a device where the process has no
 * compute queue left has nothing to unpark it any more: restore it.  Tried
 * every tick until it is done (p->mutex is only tried), so a contended
 * mutex at the destroy does not leave the device evicted.
 */
void gp_restore_owed(void)
{
	static struct gp_proc *owed[16];
	int n, k, i;

	n = gp_registry_restores_owed(owed, ARRAY_SIZE(owed));
	for (k = 0; k < n; k++) {
		struct gp_proc *pr = owed[k];
		bool again = false;

		if (READ_ONCE(pr->dead)) {
			/* Its evictions die with it (gp_release_queue). */
			gp_registry_set_owed(pr, false);
			continue;
		}
		/* The helper has an action of it: owed until its result is in. */
		if (gp_defer_inflight(pr))
			continue;
		for (i = 0; i < GP_MAX_DEVS && pr->evicted; i++) {
			struct kfd_node *dev = pr->ev[i].dev;
			int ret;

			if (!pr->ev[i].evicted || gp_registry_dev_has_compute(pr, dev))
				continue;
			ret = gp_evict_process(pr, dev, false);
			if (ret && gp_evict_held(pr, dev))
				again = true;
			/* p->mutex busy again and again: the helper waits for it. */
			if (gp_defer_busy(pr, ret)) {
				struct gp_defer req = {
					.kind = GP_BACKEND_EVICT, .act = GP_ACT_UNPARK, .dev = dev,
				};

				gp_defer_queue(pr, &req);
				break;
			}
		}
		gp_registry_set_owed(pr, again);
	}
}

/*
 * Unload: rounds for KFD's refusals (an MES add_queue that keeps the
 * process evicted, a device that hung for a moment), the pause between
 * them, the deadline for the waits for busy p->mutexes (over every
 * process), and the longest wait of one process in a round.
 */
#define GP_UNLOAD_ROUNDS 6
#define GP_UNLOAD_PAUSE_MS 300
#define GP_UNLOAD_DEADLINE_MS 10000
#define GP_UNLOAD_WAIT_MS 1000

/*
 * Unload: restore every eviction gpreempt holds.  Never waits: a busy
 * p->mutex is restored without (preempt_evict.c), and named.  Returns the
 * processes still holding one (KFD kept its count, or the lookup failed):
 * they are tried again in the next round.  An error after which KFD
 * dropped the count cleared the slot: nothing to retry.
 */
static int gp_restore_evictions(void)
{
	struct gp_proc *pr = NULL;
	int failed = 0;

	while ((pr = gp_registry_next_evicted(pr))) {
		pr->lockless = false;
		gp_evict_restore_all(pr);
		if (pr->lockless)
			pr_info("pasid %u (tgid %d, %s): its p->mutex was busy at unload: its eviction was restored without it\n",
				pr->pasid, pr->tgid, pr->comm);
		if (pr->evicted)
			failed++;
	}
	return failed;
}

/* Unload: give one queue back; the helper's blocking call (gp_defer_call()). */
static int gp_resume_one(struct gp_queue *e, bool blocking)
{
	if (e->pq.state == GP_PS_SHRUNK)
		return gp_shrink_queue(e, false, NULL, 0, blocking);
	return gp_suspend_queue(e, false, blocking);
}

static int gp_resume_blocking(void *arg)
{
	return gp_resume_one(arg, true);
}

/* Unload: nothing left to give back of @e, or the evict backend's. */
static bool gp_resume_skip(struct gp_queue *e)
{
	if (e->gone || e->pq.state == GP_PS_RUNNING)
		return true;
	if (e->pq.state == GP_PS_PARKED && e->backend == GP_BACKEND_EVICT) {
		/* Its process's eviction: gp_restore_evictions(). */
		e->pq.state = GP_PS_RUNNING;
		return true;
	}
	return false;
}

/* Unload: the result @ret of resuming @e, counted in @left and @busy. */
static void gp_resume_count(struct gp_queue *e, int ret, int *left, int *busy)
{
	if (ret && ret != -ESRCH && ret != -ENOENT && ret != -EPERM) {
		(*left)++;
		if (ret == -EBUSY)
			(*busy)++;
		return;
	}
	e->pq.state = GP_PS_RUNNING;
}

/*
 * Unload: resume @e, tried, then with its p->mutex busy waited for in the
 * helper, for what is left of its process's @share of this round.  A wait
 * that ran out spends the whole share: the other queues of a process that
 * keeps its mutex are only tried, so it never spends more than one share.
 */
static int gp_resume_wait(struct gp_queue *e, unsigned long share, unsigned long deadline)
{
	struct gp_proc *pr = e->proc;
	unsigned long t0, room;
	int ret = gp_resume_one(e, false);

	if (ret != -EBUSY || pr->unload_spent >= share || !time_before(jiffies, deadline))
		return ret;
	room = min(share - pr->unload_spent, deadline - jiffies);
	t0 = jiffies;
	ret = gp_defer_call(gp_resume_blocking, e, max(jiffies_to_msecs(room), 1U));
	pr->unload_spent = ret == -EBUSY ? share : pr->unload_spent + (jiffies - t0);
	return ret;
}

/*
 * Unload: resume the queues parked: only tried, or (@wait) waited for in
 * the helper.  A wait is bounded per process, not per queue: the processes
 * with a queue left share what is left of @deadline, GP_UNLOAD_WAIT_MS
 * each at most, so one process with many queues cannot spend another's
 * share.  The processes not known to hold their own p->mutex
 * (gp_proc.lock_held) are waited for first.  Returns the queues left
 * parked; @busy: of them, those whose p->mutex was busy.
 */
static int gp_resume_queues(int n, bool wait, unsigned long deadline, int *busy)
{
	unsigned long share = 0;
	int i, held, left = 0, nprocs = 0;

	*busy = 0;
	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];

		if (gp_resume_skip(e))
			continue;
		/* Not counted yet among the processes that share the round. */
		e->proc->unload_spent = ULONG_MAX;
		if (!wait)
			gp_resume_count(e, gp_resume_one(e, false), &left, busy);
	}
	if (!wait)
		return left;
	for (i = 0; i < n; i++) {
		struct gp_proc *pr = gp_snap[i]->proc;

		if (!gp_resume_skip(gp_snap[i]) && pr->unload_spent == ULONG_MAX) {
			pr->unload_spent = 0;
			nprocs++;
		}
	}
	if (nprocs && time_before(jiffies, deadline))
		share = min((deadline - jiffies) / nprocs,
			    msecs_to_jiffies(GP_UNLOAD_WAIT_MS));
	for (held = 0; held < 2; held++) {
		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];

			if (gp_resume_skip(e) || READ_ONCE(e->proc->lock_held) != !!held)
				continue;
			gp_resume_count(e, gp_resume_wait(e, share, deadline), &left, busy);
		}
	}
	return left;
}

/* Unload, after the last round: what could not be given back is forgotten. */
static int gp_forget_evictions(void)
{
	struct gp_proc *pr = NULL;
	int n = 0;

	while ((pr = gp_registry_next_evicted(pr))) {
		gp_evict_forget_all(pr);
		n++;
	}
	return n;
}

/* Unload, at the end: name each process with queues left parked. */
static void gp_name_left(int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];
		struct gp_proc *pr = e->proc;
		int k = 0;

		if (e->gone || e->pq.state == GP_PS_RUNNING)
			continue;
		/* Once per process: at its first queue left. */
		for (j = 0; j < i; j++)
			if (gp_snap[j]->proc == pr && !gp_snap[j]->gone &&
			    gp_snap[j]->pq.state != GP_PS_RUNNING)
				break;
		if (j < i)
			continue;
		for (j = i; j < n; j++)
			if (gp_snap[j]->proc == pr && !gp_snap[j]->gone &&
			    gp_snap[j]->pq.state != GP_PS_RUNNING)
				k++;
		pr_err("pasid %u (tgid %d, %s): %d queue(s) left parked at unload: %s\n",
		       pr->pasid, pr->tgid, pr->comm, k,
		       READ_ONCE(pr->lock_held) ? "the process holds its own p->mutex" :
		       "its p->mutex stayed busy, or KFD refused");
	}
}

/**
 * gp_monitor_release_all() - unpark everything gpreempt parked
 *
 * Module unload, after gp_monitor_stop() (the monitor stopped, the helper
 * only for gp_defer_call(); its last results are committed first).  One
 * process's lock never holds up another's release: evictions are
 * restored without waiting for any p->mutex (a busy one: without it), the
 * other parks are first only tried, for every queue, and only then waited
 * for, each process's waits in a round bounded by its share of what is
 * left of GP_UNLOAD_DEADLINE_MS (gp_resume_queues()).  A KFD call that
 * failed, or a busy mutex past the deadline, is tried again,
 * GP_UNLOAD_ROUNDS times in all.  What is left
 * parked then belongs to a process that holds its own p->mutex (or that
 * KFD refused), and is named.
 */
void gp_monitor_release_all(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(GP_UNLOAD_DEADLINE_MS);
	int n, round, left = 0, failed = 0, busy = 0;

	if (!gp_snap)
		goto out;
	/* What the helper did last (its deferred actions stopped), first. */
	gp_defer_collect(gp_registry_snapshot(gp_snap, gp_snap_fit()));
	gp_registry_reap(gp_release_queue);
	n = gp_registry_snapshot(gp_snap, gp_snap_fit());
	for (round = 0; ; round++) {
		/* Evictions first, before anything can be marked dead (C7). */
		failed = gp_restore_evictions();
		left = gp_resume_queues(n, round > 0, deadline, &busy);
		if (!failed && !left)
			break;
		/*
		 * As many rounds as for KFD's refusals; busy mutexes get more
		 * until the deadline, and past it only these rounds' tries.
		 */
		if (round + 1 >= GP_UNLOAD_ROUNDS && (!busy || time_after(jiffies, deadline)))
			break;
		msleep(round ? GP_UNLOAD_PAUSE_MS : 20);
	}
	failed = gp_forget_evictions();
	if (failed)
		pr_err("%d process(es) left evicted at unload: KFD refused every restore\n",
		       failed);
	if (left) {
		pr_err("%d queue(s) could not be resumed at unload (%d: their process's p->mutex stayed busy for %d s)\n",
		       left, busy, GP_UNLOAD_DEADLINE_MS / 1000);
		gp_name_left(n);
	}
out:
	gp_defer_exit();
}

/**
 * gp_monitor_free() - free the registry and the scan arrays
 *
 * Module unload, after the probes are gone (nothing can add entries).
 */
void gp_monitor_free(void)
{
	gp_registry_free_all(gp_release_queue);
	gp_snap_free();
}
