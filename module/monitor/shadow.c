// SPDX-License-Identifier: GPL-2.0
/*
 * shadow.c - what gpreempt would do while it is disabled (enable=0): the
 * policy, run on a copy of each queue's state with the same inputs, its
 * budgets and its process granularity, each action taken as done and
 * counted, none carried out.  So an operator sees, on the real workload
 * and before turning it on, the parks and unparks it would make and the
 * backend calls (device remaps under HWS) they would cost.  Also the time
 * each level's work waited beside lower work, in either mode.
 *
 * The copy cannot see the effect of its own parks: a queue it would have
 * parked keeps running and completing work, and the work above it runs
 * slower beside it.  Its counts are what the first park of each busy
 * period costs; the test that compares them with an enabled run on the
 * same workload gives the spread (docs/parking.md, "Shadow mode").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "monitor/monitor_int.h"
#include "params.h"
#include "core/registry.h"
#include "monitor/monitor.h"

static struct gp_allow gp_sh_allows[GP_POLICY_MAX_DEVS];
static u32 gp_sh_budget[GP_POLICY_MAX_DEVS];
static struct gp_policy_result gp_sh_res;
static bool gp_sh_on;
static u64 gp_sh_last_ns;
/* Devices whose inversion the last scan saw (lc_wait_ns). */
static u64 gp_wait_devs;

/* The scan's view of @in, kept beside the shadow's own state in @s. */
static void gp_shadow_inputs(struct gp_pq *s, const struct gp_pq *in)
{
	s->dev = in->dev;
	s->prio = in->prio;
	s->hw_prio = in->hw_prio;
	s->pending = in->pending;
	s->blocked = in->blocked;
	s->progressed = in->progressed;
	s->unknown = in->unknown;
	s->id = in->id;
	s->group = in->group;
	s->parkable = in->parkable;
	s->signal_only = in->signal_only;
	s->hold = in->hold;
	s->shrinkable = in->shrinkable;
}

/* Shadow mode starts: nothing is parked in it, every budget is full. */
static void gp_shadow_start(int n, u64 now)
{
	int i;

	memset(gp_sh_allows, 0, sizeof(gp_sh_allows));
	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];

		memset(&e->shadow, 0, sizeof(e->shadow));
		e->shadow.state_since_ns = now;
		e->shadow_backend = GP_BACKEND_AUTO;
	}
}

/* One backend call on device slot @d: its budgets, and what it would cost. */
static void gp_shadow_call(const struct gp_queue *e, u64 now)
{
	u32 d = gp_pq_dev(&e->shadow);

	gp_allow_charge(&gp_sh_allows[d], true, now);
	gp_stats.shadow_remaps++;
	if (d < GP_DEV_STATS)
		gp_stats.shadow_dev_remaps[d]++;
	if ((gp_sh_res.pend_valid & (1ULL << d)) && gp_sh_res.pend_top[d] > e->shadow.prio)
		gp_stats.shadow_lc_remaps++;
}

/* @x's shadow action @act, taken as done by @backend. */
static void gp_shadow_commit(struct gp_queue *x, const struct gp_policy_params *pp,
			     enum gp_action act, enum gp_reason why, int backend, u64 now)
{
	x->shadow.action = act;
	x->shadow.reason = why;
	gp_policy_commit(pp, &x->shadow, true, now);
	x->shadow.action = GP_ACT_NONE;
	x->shadow_acted = true;
	x->dirty = true;
	if (act == GP_ACT_UNPARK) {
		x->info.shadow_unparks++;
		x->info.shadow_parked_ns += now - x->shadow_parked_at;
		gp_stats.shadow_unparks++;
		return;
	}
	x->shadow_backend = backend;
	x->shadow_parked_at = now;
	x->info.shadow_parks++;
	gp_stats.shadow_parks++;
}

/* @e's process on its device, as one eviction or restore would move it. */
static void gp_shadow_proc(struct gp_queue *e, int n, const struct gp_policy_params *pp,
			   enum gp_action act, u64 now)
{
	enum gp_reason why = e->shadow.reason;
	int i;

	gp_shadow_call(e, now);
	for (i = 0; i < n; i++) {
		struct gp_queue *x = gp_snap[i];
		bool parked = x->shadow.state == GP_PS_PARKED;

		if (x->proc != e->proc || x->dev != e->dev || x->gone || x->sdma)
			continue;
		if (act == GP_ACT_UNPARK && (!parked || x->shadow_backend != GP_BACKEND_EVICT))
			continue;
		if (act == GP_ACT_PARK && parked)
			continue;
		gp_shadow_commit(x, pp, act, why, GP_BACKEND_EVICT, now);
	}
}

/* @e's shadow action, if it belongs to this pass (@parks: the parks and shrinks). */
static void gp_shadow_act(struct gp_queue *e, int n, const struct gp_policy_params *pp,
			  bool parks, u64 now)
{
	enum gp_action a = e->shadow.action;
	bool shrink = a == GP_ACT_SHRINK, park = a == GP_ACT_PARK;
	bool by_proc;

	/* A shrink and its grow-back: per-queue calls, with the parks and the unparks. */
	if (shrink || (a == GP_ACT_UNPARK && e->shadow.state == GP_PS_SHRUNK)) {
		if (shrink != parks)
			return;
		gp_shadow_call(e, now);
		gp_shadow_commit(e, pp, a, e->shadow.reason, GP_BACKEND_SHRINK, now);
		return;
	}
	if (park != parks)
		return;
	if (park)
		by_proc = READ_ONCE(e->proc->lock_held) ||
			  (gp_must_evict(e) && gp_all_go_along(e, n, pp, &gp_sh_res, true, now));
	else
		by_proc = e->shadow_backend == GP_BACKEND_EVICT;
	if (by_proc) {
		gp_shadow_proc(e, n, pp, a, now);
		return;
	}
	/* Process granularity forced, but not all its queues go: no call. */
	if (park && gp_must_evict(e))
		return;
	gp_shadow_call(e, now);
	gp_shadow_commit(e, pp, a, e->shadow.reason, GP_BACKEND_SUSPEND, now);
}

/* The shadow's actions, as gp_apply() would carry them out: parks first. */
static void gp_shadow_apply(int n, const struct gp_policy_params *pp, u64 now)
{
	int i, pass;

	for (i = 0; i < n; i++)
		gp_snap[i]->shadow_acted = false;
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];

			if (!e->shadow_acted && !e->gone && e->shadow.action != GP_ACT_NONE)
				gp_shadow_act(e, n, pp, !pass, now);
		}
}

/**
 * gp_shadow_tick() - shadow mode's tick: decide, count, do nothing
 * @n: queues in gp_snap, scanned
 * @pp: this tick's parameters (the real policy's: disabled in shadow mode)
 * @now: the tick's time
 *
 * Runs after the real decision and before gp_apply(), only while gpreempt
 * is disabled; it touches no queue and no KFD state, only each queue's
 * shadow copy and the counters.  Shadow mode starts afresh each time it is
 * entered: nothing parked in it, full budgets.
 */
void gp_shadow_tick(int n, const struct gp_policy_params *pp, u64 now)
{
	struct gp_policy_params sp = *pp;
	u32 d, rate = READ_ONCE(gp_param.max_rate), per_min = READ_ONCE(gp_param.remap_budget);
	int i;

	if (pp->enabled) {
		gp_sh_on = false;
		gp_stats.shadow_active = 0;
		return;
	}
	if (!gp_sh_on) {
		gp_shadow_start(n, now);
		gp_sh_on = true;
	} else {
		gp_stats.shadow_ns += now - gp_sh_last_ns;
	}
	gp_sh_last_ns = now;
	gp_stats.shadow_active = 1;
	sp.enabled = true;
	for (d = 0; d < GP_POLICY_MAX_DEVS; d++)
		gp_sh_budget[d] = gp_allow_avail(&gp_sh_allows[d], rate, per_min, now, NULL);
	sp.dev_budget = gp_sh_budget;
	for (i = 0; i < n; i++) {
		gp_pqs[i] = gp_snap[i]->shadow;
		gp_shadow_inputs(&gp_pqs[i], &gp_snap[i]->pq);
	}
	gp_policy_decide(&sp, gp_pqs, n, now, &gp_sh_res);
	for (i = 0; i < n; i++)
		gp_snap[i]->shadow = gp_pqs[i];
	gp_shadow_apply(n, &sp, now);
}

/**
 * gp_lc_wait_account() - the time each level's work waited beside lower work
 * @res: this tick's decision (the real policy's)
 * @since_last: time since the previous scan
 *
 * A device where this scan and the previous one both found the highest
 * level with work below a lower queue running with work: that level waited
 * the time between them.  An inversion one scan saw counts nothing: a lower
 * bound.
 *
 * Return: the devices where a wait was counted (gp_cgroups charges the
 * queues that waited there).
 */
u64 gp_lc_wait_account(const struct gp_policy_result *res, u64 since_last)
{
	u64 devs = res->inversion_devs & res->pend_valid, counted = 0;
	u32 d;

	for (d = 0; d < GP_POLICY_MAX_DEVS; d++) {
		int lvl;

		if (!(devs & gp_wait_devs & (1ULL << d)))
			continue;
		lvl = clamp(res->pend_top[d], 0, GP_PRIO_MAX);
		gp_stats.lc_wait_ns[lvl] += since_last;
		counted |= 1ULL << d;
	}
	gp_wait_devs = devs;
	return counted;
}
