// SPDX-License-Identifier: GPL-2.0
/*
 * apply.c - the policy's decisions carried out: parks, shrinks and unparks
 * through the backends (per queue: suspend or shrink; per process: evict),
 * each committed to the policy's state, the maps and the tracepoints, within
 * the per-device budgets of devices.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "backends/backend.h"
#include "monitor/monitor_int.h"
#include "kfd/kfd.h"

#define CREATE_TRACE_POINTS
#include "monitor/trace.h"
#include "params.h"
#include "core/registry.h"
#include "monitor/monitor.h"
#include "backends/defer.h"

/**
 * gp_must_evict() - must a park of @e be an eviction of its process on its device?
 * @e: queue
 *
 * Process granularity is forced: the evict backend, a kernel or device that
 * cannot suspend one queue, a debugged process (the debugger owns the
 * queues' is_suspended flag; KFD evicts debugged processes itself), one
 * whose park by that flag KFD undid, or that may have been debugged unseen
 * (gp_proc.evict_only: KFD's debugger paths never touch evictions), or a
 * secondary context (7.2+: its file's close frees its queues at any moment,
 * without p->mutex, and nothing holds that off; eviction touches only its
 * qpd), or one with a reset queue on the device (update_queue() unmaps the
 * device, then refuses with -EACCES, 6.12 kfd_device_queue_manager.c:964-967;
 * KFD evicts such processes itself, :1179-1245 has no such check).
 *
 * Return: true when only an eviction may park it.
 */
bool gp_must_evict(const struct gp_queue *e)
{
	return READ_ONCE(gp_param.backend) == GP_BACKEND_EVICT || !kfd_have_queue_suspend() ||
	       gp_backend_needs_evict(e->dev) || READ_ONCE(e->proc->debugged) || e->proc->ctx ||
	       READ_ONCE(e->proc->evict_only) || e->reset;
}

/**
 * gp_all_go_along() - would an eviction of @e's process on its device park
 * only what the policy lets go?
 * @e: the queue the park is for
 * @n: queues in gp_snap
 * @pp: this tick's parameters
 * @res: the decision's summary
 * @shadow: judge the shadow copies (shadow.c) instead of the real states
 * @now: the tick's time
 *
 * Process granularity only when every live queue of the process on the
 * device goes.  What the policy wanted, not what the budget granted: one
 * evict parks them all, and a max_actions below the process's queue count
 * must not keep it from ever being parked.  Its idle queues below the
 * device's busy top go along (gp_policy_goes_along()): ROCr keeps an idle
 * queue of its own in every process, and one idle queue above the working
 * one must not keep the process running.
 *
 * Return: true when every one of them goes.
 */
bool gp_all_go_along(const struct gp_queue *e, int n, const struct gp_policy_params *pp,
		     const struct gp_policy_result *res, bool shadow, u64 now)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct gp_queue *x = gp_snap[i];
		const struct gp_pq *q = shadow ? &x->shadow : &x->pq;
		int backend = shadow ? x->shadow_backend : x->backend;

		if (x->proc != e->proc || x->dev != e->dev || x->gone || x->sdma)
			continue;
		if (!gp_policy_goes_along(pp, res, q, now))
			return false;
		if (q->state == GP_PS_PARKED && backend != GP_BACKEND_EVICT)
			return false;
	}
	return true;
}

static bool gp_wants_evict(struct gp_queue *e, int n, const struct gp_policy_params *pp,
			   u64 now)
{
	return gp_must_evict(e) && gp_all_go_along(e, n, pp, &gp_res, false, now);
}

static void gp_commit(struct gp_queue *e, const struct gp_policy_params *pp, int ret,
		      int backend, u64 t0, u64 t1)
{
	bool park = e->pq.action != GP_ACT_UNPARK;
	bool ok = !ret;

	if (park)
		trace_preempt(e->proc->tgid, e->qid, e->pq.prio, backend, e->pq.reason, ret,
			      t1 - t0);
	else
		trace_resume(e->proc->tgid, e->qid, e->pq.prio, backend, e->pq.reason, ret,
			     t1 - t0);

	/*
	 * A queue that is gone is not coming back, and one a debugger may
	 * own now is not gpreempt's any more: treat unpark as done.  A
	 * lookup that failed (-ESRCH) means gone only for a process known to
	 * be dead: else the queue is still parked, and the unpark is
	 * tried again.
	 */
	if (!park && (ret == -ENOENT || ret == -EPERM ||
		      (ret == -ESRCH && (READ_ONCE(e->proc->dead) || READ_ONCE(e->gone)))))
		ok = true;
	if (!ok) {
		gp_set_state(e, park ? GP_Q_RUNNING :
			     e->pq.state == GP_PS_SHRUNK ? GP_Q_SHRUNK : GP_Q_SUSPENDED);
		/* -EAGAIN: a reset process's eviction refused, backing off. */
		if (ret != -EBUSY && ret != -EAGAIN) {
			e->info.errors++;
			e->dirty = true;
		}
		return;
	}
	gp_policy_commit(pp, &e->pq, true, t1);
	e->dirty = true;
	if (park) {
		e->backend = backend;
		e->info.backend = backend;
		e->info.preempts++;
		e->info.last_preempt_ns = t1 - t0;
		gp_stats.preempts++;
		gp_hist_add(gp_stats.preempt_hist, t1 - t0);
		gp_lat_sample(&gp_stats.park_lat, t1 - t0);
		if (e->pq.reason == GP_WHY_YIELD)
			gp_stats.yield_parks++;
		gp_set_state(e, e->pq.state == GP_PS_SHRUNK ? GP_Q_SHRUNK : GP_Q_SUSPENDED);
	} else {
		e->info.resumes++;
		e->info.suspended_ns += t1 - e->info_parked_at;
		gp_stats.resumes++;
		gp_lat_sample(&gp_stats.unpark_lat, t1 - t0);
		if (e->pq.reason == GP_WHY_STARVING)
			gp_stats.starvation_slices++;
		gp_set_state(e, GP_Q_RUNNING);
	}
	if (park)
		e->info_parked_at = t1;
}

/* What one park or unpark call costs, lately: an average over about 8. */
static u64 gp_remap_avg_ns;

static void gp_remap_sample(u64 ns)
{
	gp_remap_avg_ns = gp_remap_avg_ns ? gp_remap_avg_ns - gp_remap_avg_ns / 8 + ns / 8 : ns;
}

/**
 * gp_remap_cost_ns() - what a park or unpark call took lately
 *
 * Calls made in the monitor's own tick that succeeded, whatever the
 * backend; not the helper's, whose time includes waiting for p->mutex.
 *
 * Return: their moving average in ns (0: none yet).
 */
u64 gp_remap_cost_ns(void)
{
	return gp_remap_avg_ns;
}

/*
 * Under HWS a park or unpark unmaps and remaps the whole device, so
 * a higher level with work there is preempted too, for the whole call.
 */
static void gp_count_lc_preempt(const struct gp_queue *e, u64 ns)
{
	u32 d = gp_pq_dev(&e->pq);

	if (!(gp_res.pend_valid & (1ULL << d)) || gp_res.pend_top[d] <= e->pq.prio)
		return;
	gp_stats.lc_preempts++;
	gp_stats.lc_preempt_ns += ns;
}

/*
 * The CUs the busy queues above @e on its device may use, when every one of
 * them has a mask of its owner's (else NULL: one of them may use any CU).
 */
static const u32 *gp_avoid_mask(const struct gp_queue *e, int n)
{
	static u32 avoid[GP_CU_MASK_WORDS];
	u32 d = gp_pq_dev(&e->pq);
	bool any = false;
	int i, w;

	memset(avoid, 0, sizeof(avoid));
	for (i = 0; i < n; i++) {
		const struct gp_queue *x = gp_snap[i];
		u32 bits;

		if (x->gone || gp_pq_dev(&x->pq) != d || x->pq.prio <= e->pq.prio || x->sdma ||
		    !(x->pq.pending || x->pq.last_pending_ns))
			continue;
		bits = READ_ONCE(x->cu_mask_bits);
		if (!bits || READ_ONCE(x->cu_mask_unknown))
			return NULL;
		for (w = 0; w < DIV_ROUND_UP(bits, 32); w++)
			avoid[w] |= READ_ONCE(x->cu_mask[w]);
		any = true;
	}
	return any ? avoid : NULL;
}

/* A shrink, or the grow-back of a shrunk queue: per queue, with a CU mask. */
static void gp_apply_shrink(struct gp_queue *e, int n, const struct gp_policy_params *pp)
{
	bool shrink = e->pq.action == GP_ACT_SHRINK;
	const u32 *avoid = shrink ? gp_avoid_mask(e, n) : NULL;
	u32 d = gp_pq_dev(&e->pq);
	u64 t0, t1;
	int ret;

	if (gp_defer_inflight(e->proc))
		return;
	gp_set_state(e, shrink ? GP_Q_PREEMPTING : GP_Q_RESUMING);
	t0 = ktime_get_ns();
	ret = gp_shrink_queue(e, shrink, avoid, gp_dev_cus[d], false);
	t1 = ktime_get_ns();
	gp_dev_charge(d, ret, t1);
	gp_count_lc_preempt(e, t1 - t0);
	if (!ret)
		gp_remap_sample(t1 - t0);
	/* The device takes no mask from gpreempt: parked from now on. */
	if (ret == -EOPNOTSUPP && shrink)
		e->no_shrink = true;
	gp_commit(e, pp, ret, GP_BACKEND_SHRINK, t0, t1);
	if (gp_defer_busy(e->proc, ret)) {
		struct gp_defer req = {
			.kind = GP_BACKEND_SHRINK, .act = e->pq.action, .reason = e->pq.reason,
			.e = e, .has_avoid = !!avoid, .dev_cus = gp_dev_cus[d], .pp = *pp,
		};

		if (avoid)
			memcpy(req.avoid, avoid, sizeof(req.avoid));
		gp_defer_queue(e->proc, &req);
	}
}

/*
 * The process-granular (evict) backend moved every queue of @e's process on
 * its device: commit each of them as @e's action @act.
 */
static void gp_commit_proc(struct gp_queue *e, int n, enum gp_action act,
			   const struct gp_policy_params *pp, int ret, u64 t0, u64 t1)
{
	int j;

	/*
	 * KFD evicts and counts before it can fail, and gpreempt
	 * then holds the eviction (the error is counted).  Committed as
	 * running, the process would stay evicted until the policy happened
	 * to park it again: it is parked, and restored when the policy says
	 * so.
	 */
	if (ret && act == GP_ACT_PARK && gp_evict_held(e->proc, e->dev))
		ret = 0;
	for (j = 0; j < n; j++) {
		struct gp_queue *x = gp_snap[j];

		if (x->proc != e->proc || x->dev != e->dev || x->gone)
			continue;
		/* Refused for a reset queue: all of them wait out its back-off (scan.c). */
		if (ret == -EAGAIN)
			x->reset = true;
		if (act == GP_ACT_UNPARK && x->backend != GP_BACKEND_EVICT)
			continue;
		if (act == GP_ACT_UNPARK && x->pq.state != GP_PS_PARKED)
			continue;
		if (act == GP_ACT_PARK && x->pq.state == GP_PS_PARKED)
			continue;
		x->pq.action = act;
		x->pq.reason = e->pq.reason;
		x->acted = true;
		gp_commit(x, pp, ret, GP_BACKEND_EVICT, t0, t1);
	}
}

/**
 * gp_commit_deferred() - commit the result of an action the helper did
 * @d: the action, done (its queue pinned)
 * @n: queues in gp_snap
 *
 * The policy's view of the queue (or of its process's queues on the
 * device) becomes what the helper did, before the policy decides again.
 */
void gp_commit_deferred(struct gp_defer *d, int n)
{
	struct gp_queue *e = d->e;

	e->pq.action = d->act;
	e->pq.reason = d->reason;
	if (d->kind == GP_BACKEND_EVICT) {
		gp_commit_proc(e, n, d->act, &d->pp, d->ret, d->t0, d->t1);
		return;
	}
	if (d->kind == GP_BACKEND_SHRINK && d->ret == -EOPNOTSUPP && d->act == GP_ACT_SHRINK)
		e->no_shrink = true;
	gp_commit(e, &d->pp, d->ret, d->kind, d->t0, d->t1);
}

/**
 * gp_apply() - carry out the policy's actions: evictions per process, suspends per queue
 * @n: queues in gp_snap
 * @pp: this tick's parameters
 */
void gp_apply(int n, const struct gp_policy_params *pp)
{
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		enum gp_action act = pass ? GP_ACT_UNPARK : GP_ACT_PARK;

		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];
			bool by_proc;
			u64 t0, t1;
			int ret;

			if (e->acted)
				continue;
			/* Shrinks go with the parks, grow-backs with the unparks. */
			if ((!pass && e->pq.action == GP_ACT_SHRINK) ||
			    (pass && act == e->pq.action && e->pq.state == GP_PS_SHRUNK)) {
				gp_apply_shrink(e, n, pp);
				continue;
			}
			if (e->pq.action != act)
				continue;
			/* The helper has an action of the process: its result first. */
			if (gp_defer_inflight(e->proc))
				continue;
			gp_set_state(e, act == GP_ACT_PARK ? GP_Q_PREEMPTING : GP_Q_RESUMING);
			t0 = ktime_get_ns();
			/*
			 * A process that holds its own p->mutex is
			 * parked by eviction, which needs none (all its
			 * queues on the device: its own lock harms only it).
			 */
			by_proc = act == GP_ACT_PARK ?
				  READ_ONCE(e->proc->lock_held) || gp_wants_evict(e, n, pp, t0) :
				  e->backend == GP_BACKEND_EVICT;
			if (!by_proc && act == GP_ACT_PARK && gp_must_evict(e)) {
				/* Forced process granularity, but not all its queues go. */
				gp_set_state(e, GP_Q_RUNNING);
				continue;
			}
			t0 = ktime_get_ns();
			if (by_proc)
				ret = gp_evict_process(e->proc, e->dev, act == GP_ACT_PARK);
			else
				ret = gp_suspend_queue(e, act == GP_ACT_PARK, false);
			t1 = ktime_get_ns();
			gp_dev_charge(gp_pq_dev(&e->pq), ret, t1);
			gp_count_lc_preempt(e, t1 - t0);
			if (!ret)
				gp_remap_sample(t1 - t0);
			if (by_proc)	/* The whole process moved: commit each of its queues. */
				gp_commit_proc(e, n, act, pp, ret, t0, t1);
			else
				gp_commit(e, pp, ret, GP_BACKEND_SUSPEND, t0, t1);
			/* p->mutex busy again and again: the helper waits for it. */
			if (gp_defer_busy(e->proc, ret)) {
				struct gp_defer req = {
					.kind = by_proc ? GP_BACKEND_EVICT : GP_BACKEND_SUSPEND,
					.act = act, .reason = e->pq.reason, .e = e, .dev = e->dev,
					.pp = *pp,
				};

				gp_defer_queue(e->proc, &req);
			}
		}
	}
}
