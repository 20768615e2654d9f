// SPDX-License-Identifier: GPL-2.0
/*
 * monitor.c - gpreempt's kthread and its tick: reap, scan every managed
 * queue's dispatch ids (scan.c), ask the policy what to park, have the
 * backends do it (apply.c), publish the state (publish.c).
 *
 * Tick period: gp_param.tick_us while something could need preempting (a
 * queue is parked, or a queue has work while a higher-priority queue exists);
 * otherwise it spins down to idle_us.  Deep idle: while no queue has work,
 * none is parked or held and no eviction is held or owed, each tick doubles
 * the period, up to idle_max_us.  Hooks wake it at once on queue creation,
 * priority change and teardown, and parameter writes do; each such kick, a
 * changed gp_config and any work end deep idle.  Only this thread calls into
 * KFD (besides module unload, after it has stopped) and only it frees
 * registry entries.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/freezer.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include "monitor/monitor_int.h"
#include "params.h"
#include "core/registry.h"
#include "core/rules.h"
#include "monitor/monitor.h"
#include "backends/defer.h"

const struct gp_probe_ops *gp_probes;
static struct task_struct *gp_monitor_task;
static DECLARE_WAIT_QUEUE_HEAD(gp_monitor_wq);
static atomic_t gp_kicked = ATOMIC_INIT(0);
struct gp_policy_result gp_res;
static unsigned long gp_last_gen = ~0UL;
static u64 gp_last_scan_ns;
/* Deep idle: the period after the last calm tick; 0 when not backing off. */
static unsigned int gp_backoff_us;
/* The last period was stretched to a hold's end (gp_hold_period()). */
static bool gp_slept;

/**
 * gp_monitor_kick() - wake the monitor now (safe from kprobe context)
 */
void gp_monitor_kick(void)
{
	atomic_set(&gp_kicked, 1);
	wake_up(&gp_monitor_wq);
}

/*
 * The period after a tick of @kind, in microseconds.  A calm tick (nothing
 * pending, parked or held anywhere) after a calm tick doubles the period,
 * from idle_us up to idle_max_us; any other tick ends the back-off.
 */
static unsigned int gp_period(enum gp_tick_kind kind, unsigned int tick_us)
{
	unsigned int idle = READ_ONCE(gp_param.idle_us);
	unsigned int max = max(READ_ONCE(gp_param.idle_max_us), idle);

	if (kind != GP_TICK_CALM) {
		gp_backoff_us = 0;
		return kind == GP_TICK_FAST ? tick_us : idle;
	}
	gp_backoff_us = gp_backoff_us ? min_t(u64, 2ULL * gp_backoff_us, max) : idle;
	gp_backoff_us = max(gp_backoff_us, idle);
	return gp_backoff_us;
}

/* One scan; returns the period until the next one in microseconds. */
static unsigned int gp_tick(void)
{
	struct gp_policy_result *res = &gp_res;
	struct gp_policy_params pp;
	enum gp_tick_kind kind;
	unsigned int tick_us, period;
	bool cfg_changed;
	int i, n;
	u64 t0 = ktime_get_ns(), t1, since_last, wait_devs;

	if (READ_ONCE(gp_reg.gen) != gp_last_gen) {
		gp_last_gen = READ_ONCE(gp_reg.gen);
		gp_registry_reap(gp_release_queue);
	}
	/* What insmod skipped, adopted once its p->mutex is free. */
	gp_registry_adopt_skipped();
	gp_restore_owed();
	cfg_changed = gp_effective_params(&pp, &tick_us, t0);
	pp.slept = gp_slept;
	gp_rules_tick(t0);
	n = gp_registry_snapshot(gp_snap, gp_snap_fit());
	/* What the helper did is the state the policy starts from. */
	gp_defer_collect(n);
	gp_defer_tick(t0);
	since_last = gp_last_scan_ns ? t0 - gp_last_scan_ns : 0;
	gp_last_scan_ns = t0;
	gp_scan(n, t0, gp_backoff_us != 0);

	/* The policy works on a dense array. */
	for (i = 0; i < n; i++)
		gp_pqs[i] = gp_snap[i]->pq;
	gp_dev_budgets(&pp, t0);
	gp_policy_decide(&pp, gp_pqs, n, t0, res);
	gp_stats.throttled += res->throttled;
	gp_stats.dep_releases += res->releases;
	if (res->inheriting)
		gp_stats.dep_provider_ticks++;
	for (i = 0; i < n; i++) {
		gp_snap[i]->pq = gp_pqs[i];
		if (gp_snap[i]->gone)
			gp_snap[i]->pq.action = GP_ACT_NONE;
	}

	if (res->inversion) {
		gp_stats.inversions++;
		/*
		 * Detection: the work appeared at most one tick before this
		 * scan, at the top of a device with an inversion.
		 */
		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];
			u32 d = gp_pq_dev(&e->pq);

			if (e->gone || !(res->inversion_devs & (1ULL << d)))
				continue;
			if (e->pq.prio == res->top_prio[d] && e->pq.pending &&
			    e->pending_since_ns == t0) {
				gp_hist_add(gp_stats.detect_hist, since_last);
				gp_lat_sample(&gp_stats.detect_lat, since_last);
			}
		}
	}
	wait_devs = gp_lc_wait_account(res, since_last);
	gp_shadow_tick(n, &pp, t0);
	gp_apply(n, &pp);
	gp_cgroups_charge(n, res, wait_devs, since_last, ktime_get_ns());

	kind = gp_next_tick_kind(n, t0);
	/* Nor calm while an eviction is held or owed a restore, or gp_config just changed. */
	if (kind == GP_TICK_CALM &&
	    (cfg_changed || READ_ONCE(gp_reg.nowed) || gp_stats.evicts_outstanding ||
	     gp_defer_pending()))
		kind = GP_TICK_IDLE;
	period = gp_period(kind, tick_us);
	gp_slept = false;
	if (kind == GP_TICK_FAST) {
		unsigned int fast = period;

		period = gp_hold_period(n, &pp, t0, fast);
		gp_slept = period > fast;
	}

	t1 = ktime_get_ns();
	gp_stats.ticks++;
	gp_stats.last_tick_ns = t1;
	if (kind == GP_TICK_FAST)
		gp_stats.busy_ticks++;
	if (period > READ_ONCE(gp_param.idle_us))
		gp_stats.deep_idle_ticks++;
	gp_stats.idle_backoff_us = gp_backoff_us;
	gp_stats.scan_ns_last = t1 - t0;
	gp_stats.scan_ns_total += t1 - t0;
	gp_stats.scan_ns_max = max(gp_stats.scan_ns_max, t1 - t0);
	gp_stats.queues = n;
	gp_stats.processes = READ_ONCE(gp_reg.nprocs);
	gp_stats.queues_untracked = READ_ONCE(gp_reg.untracked);
	gp_stats.queues_over_limit = READ_ONCE(gp_reg.over_limit);
	gp_stats.queues_unseen = READ_ONCE(gp_reg.unseen);
	gp_publish(n, t1);
	return period;
}

/*
 * Sleep until @len ns after @t0, or until a kick if @kicks.  The monitor is
 * freezable: during system suspend or hibernation it sleeps frozen
 * instead of calling update_queue on a device going down.  No
 * wait_event_freezable_hrtimeout() exists, so this is the hrtimeout wait in
 * the state wait_event_freezable() uses.  Returns true if a kick woke it.
 */
static bool gp_monitor_sleep(u64 t0, u64 len, bool kicks)
{
	u64 now = ktime_get_ns();
	bool kicked = false;

	if (now - t0 >= len || kthread_should_stop())
		return false;
	__wait_event_hrtimeout(gp_monitor_wq,
			       (kicks && (kicked = atomic_xchg(&gp_kicked, 0))) ||
			       kthread_should_stop(),
			       ns_to_ktime(t0 + len - now), (TASK_INTERRUPTIBLE | TASK_FREEZABLE));
	return kicked;
}

static int gp_monitor_fn(void *unused)
{
	set_freezable();
	while (!kthread_should_stop()) {
		u64 t0 = ktime_get_ns(), ns;
		u64 floor = (u64)READ_ONCE(gp_param.tick_us) * NSEC_PER_USEC;

		/*
		 * A kick starts the next tick early, but never sooner than
		 * tick_us after this one started: a process looping
		 * on UPDATE_QUEUE kicks as fast as it likes and still cannot
		 * make the monitor scan back to back.  That holds for a kick
		 * that came during the tick and for one that wakes the sleep
		 * after it; kicks during the floor's wait are kept for the
		 * tick after it.
		 */
		mutex_lock(&gp_act_lock);
		ns = (u64)gp_tick() * NSEC_PER_USEC;
		mutex_unlock(&gp_act_lock);
		if (atomic_xchg(&gp_kicked, 0)) {
			gp_backoff_us = 0;
			gp_monitor_sleep(t0, floor, false);
			continue;
		}
		if (gp_monitor_sleep(t0, ns, true)) {
			/* A kick ends deep idle: the next calm tick starts at idle_us. */
			gp_backoff_us = 0;
			gp_monitor_sleep(t0, floor, false);
		}
	}
	return 0;
}

/* The helper's results: a wake-up, then committed by apply.c at the next tick. */
static const struct gp_defer_ops gp_defer_reports = {
	.done = gp_monitor_kick,
	.commit = gp_commit_deferred,
};

/**
 * gp_monitor_start() - allocate the scan arrays and start the kthread
 * @probes: the attach layer's miss counters (hooks/probes.c)
 *
 * Return: 0 or a negative errno.
 */
int gp_monitor_start(const struct gp_probe_ops *probes)
{
	int ret = -ENOMEM;

	gp_probes = probes;
	if (!gp_snap_fit())
		goto err_free;
	ret = gp_defer_start(&gp_defer_reports);
	if (ret) {
		pr_err("cannot start the helper thread: %d\n", ret);
		goto err_free;
	}
	gp_monitor_task = kthread_run(gp_monitor_fn, NULL, "gpreempt");
	if (IS_ERR(gp_monitor_task)) {
		pr_err("cannot start the monitor thread: %ld\n", PTR_ERR(gp_monitor_task));
		gp_monitor_task = NULL;
		ret = -ENOMEM;
		goto err_defer;
	}
	/* A tick that a CPU-bound load cannot stretch to milliseconds. */
	if (gp_param.sched_fifo)
		sched_set_fifo_low(gp_monitor_task);
	return 0;

err_defer:
	gp_defer_stop();
	gp_defer_exit();
err_free:
	gp_snap_free();
	return ret;
}

/**
 * gp_monitor_stop() - stop the kthread, then the helper's deferred actions
 *
 * The helper's results not yet committed are committed by
 * gp_monitor_release_all(), which ends the helper thread when it is done
 * with it.
 */
void gp_monitor_stop(void)
{
	if (gp_monitor_task)
		kthread_stop(gp_monitor_task);
	gp_monitor_task = NULL;
	gp_defer_stop();
}
