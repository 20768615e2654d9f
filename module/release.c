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
#include "backend.h"
#include "monitor_int.h"

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
 * Its map entry goes; pid rules and holds end with their thread group
 * (S3 F7); an eviction its process still holds is forgotten with a dead
 * process, or owed a restore (S3 F13).
 */
void gp_release_queue(struct gp_queue *e)
{
	struct gp_queue_key key = { .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
	struct gp_proc *pr = e->proc;

	gp_ptr_release(e);
	gp_maps_del_queue(&key);
	gp_set_state(e, GP_Q_GONE);
	/* S3 F7: pid rules and holds end with their process. */
	if (READ_ONCE(pr->dead) && !READ_ONCE(pr->nqueues) && pr->tgid && !pr->rules_dropped &&
	    !gp_registry_tgid_managed(pr->tgid, pr) && gp_tgid_ended(pr->tgid)) {
		gp_maps_forget_tgid(pr->tgid);
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
 * S3 F13: an eviction gpreempt holds on a device where the process has no
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
			/* S3 F20: p->mutex busy again and again: the helper waits for it. */
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

/* Rounds of the unload's restores and resumes, and the pause between them. */
#define GP_UNLOAD_ROUNDS 6
#define GP_UNLOAD_PAUSE_MS 300

/*
 * Unload: restore every eviction gpreempt holds, waiting for each process's
 * mutex.  Returns the processes still holding one (KFD kept its count, or
 * the lookup failed): they are tried again in the next round.  An error
 * after which KFD dropped the count cleared the slot: nothing to retry.
 */
static int gp_restore_evictions(void)
{
	struct gp_proc *pr = NULL;
	int failed = 0;

	while ((pr = gp_registry_next_evicted(pr))) {
		gp_evict_restore_all(pr);
		if (pr->evicted)
			failed++;
	}
	return failed;
}

/* Unload: resume the queues parked one by one.  Returns those left parked. */
static int gp_resume_queues(int n)
{
	int i, left = 0;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];
		int ret;

		if (e->gone || e->pq.state == GP_PS_RUNNING)
			continue;
		if (e->pq.state == GP_PS_PARKED && e->backend == GP_BACKEND_EVICT) {
			/* Its process's eviction: gp_restore_evictions(). */
			e->pq.state = GP_PS_RUNNING;
			continue;
		}
		if (e->pq.state == GP_PS_SHRUNK)
			ret = gp_shrink_queue(e, false, NULL, 0, true);
		else
			ret = gp_suspend_queue(e, false, true);
		if (ret && ret != -ESRCH && ret != -ENOENT && ret != -EPERM) {
			left++;
			continue;
		}
		e->pq.state = GP_PS_RUNNING;
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

/**
 * gp_monitor_release_all() - unpark everything gpreempt parked
 *
 * Module unload, after gp_monitor_stop() (the monitor and the helper
 * stopped; the helper's last results are committed first): waits for
 * p->mutex where needed, so it returns only when every parked queue is back
 * (or gone with its process) and every eviction is balanced.  A KFD call
 * that failed (an MES add_queue that keeps the process evicted, a device
 * that hung for a moment) is tried again, GP_UNLOAD_ROUNDS times in all.
 */
void gp_monitor_release_all(void)
{
	int n, round, left = 0, failed = 0;

	if (!gp_snap)
		return;
	/* What the helper did last (it stopped after the monitor), first. */
	gp_defer_collect(gp_registry_snapshot(gp_snap, GP_MAX_QUEUES));
	gp_registry_reap(gp_release_queue);
	n = gp_registry_snapshot(gp_snap, GP_MAX_QUEUES);
	for (round = 0; round < GP_UNLOAD_ROUNDS; round++) {
		if (round)
			msleep(GP_UNLOAD_PAUSE_MS);
		/* Evictions first, before anything can be marked dead (C7). */
		failed = gp_restore_evictions();
		left = gp_resume_queues(n);
		if (!failed && !left)
			break;
	}
	failed = gp_forget_evictions();
	if (failed)
		pr_err("%d process(es) left evicted at unload: KFD refused every restore\n",
		       failed);
	if (left)
		pr_err("%d queue(s) could not be resumed at unload\n", left);
}

/**
 * gp_monitor_free() - free the registry and the scan arrays
 *
 * Module unload, after the probes are gone (nothing can add entries).
 */
void gp_monitor_free(void)
{
	gp_registry_free_all(gp_release_queue);
	kvfree(gp_pqs);
	kvfree(gp_snap);
	gp_pqs = NULL;
	gp_snap = NULL;
}
