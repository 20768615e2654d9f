// SPDX-License-Identifier: GPL-2.0
/*
 * policy.c - which queues run and which are parked.
 *
 * over 400 lines: one rule whose parts (levels, dependencies, tiers, the
 * guard, the budget) decide together in one pass; split, they would share
 * the per-tick result across files.
 *
 * The rule, in plain words (each device on its own: its hardware scheduler
 * arbitrates only its own queues, so a queue competes only with queues of
 * the same device):
 *   - A priority level is *busy* while one of its queues has pending work,
 *     and for a hysteresis interval (hysteresis_us) after the last time it
 *     had some.
 *   - The highest busy level runs.  A queue below it that has work (or is
 *     already parked) is parked; a parked queue is unparked once no level
 *     above it is busy any more.  Queues at or above the top are never parked.
 *   - Tiers (params->tiers): only the device's lowest busy level (the
 *     best-effort work) is parked.  Levels between it and the top (lower LC
 *     tiers, short requests) are left to the hardware's own priority
 *     arbitration: under HWS a park remaps the whole device and CWSR-saves
 *     the top tier's waves too, which costs the top more than a lower
 *     tier's short waves delay it.  Except a queue above a busy provider
 *     (below): the hardware knows only the provider's own priority, so
 *     left to it, that queue would run first and hold the provider back.
 *   - A held queue (parked by hand) is parked whatever the levels say, and
 *     stays parked until the hold is released; only "disabled" and "not
 *     parkable" take it back.  A hold for a disabled gpreempt too (the
 *     self-test's, on its own queues) is not taken back by "disabled".
 *   - Dependencies: a queue waiting at a barrier packet
 *     keeps its level busy for the hold, like pending work (a short wait
 *     costs no park and unpark below it); then its level is released for
 *     one slice (min_slice), time for a provider in another process (an
 *     IPC event's owner) to run; a barrier that still holds makes the level
 *     busy again for the longer of the hold and a slice, then releases it
 *     for another slice, and so on until it passes.  Providers
 *     come only from the waiting queue's own process (its group): while it
 *     waits, its lower queues on the device inherit its priority (the
 *     producer stream of a hipStreamWaitEvent), and when its barrier passes
 *     those whose work completed since it was last seen blocked keep it, so
 *     they are not parked for it, nor for its level, while it stays busy or
 *     blocked.  A provider that did not progress at the queue's next
 *     barrier is not its provider any more.  A queue of another process is
 *     never a provider: running while a higher queue waits is no evidence
 *     (a best-effort queue with a backlog always runs then).
 *   - Unknown fails closed: a queue whose dispatch ids cannot be
 *     read is never pending, so it never makes its level busy; below a busy
 *     level it is parked like a queue with work.  Read-index progress since
 *     the last scan also counts as work of a lower queue for the
 *     hysteresis: the write index is the client's to forge.
 *   - Starvation guard: a queue parked for max_suspend gets a min_slice of run
 *     time before it may be parked again, so best-effort work always moves.
 *     The hardware hands free CUs to the queue with the highest hardware
 *     (KFD) priority first, whatever gpreempt's levels are, so for its slice
 *     to be run time, the queues the hardware would run before it (as in
 *     tiers, below) that have work are parked with it on its device
 *     (GP_WHY_YIELD): those at or below yield_max_prio (best-effort, even
 *     the top level when it is that low) or at or below the starving queue's
 *     own level.  Never an LC level above both, nor a provider.  When the
 *     slice ends they are unparked as usual;
 *     a queue parked so in its own slice is then unparked for the rest of
 *     it (two slices that began together run one after the other).
 *     At most a park and an unpark each per guard cycle (max_suspend +
 *     min_slice).
 *   - Shrink (a queue marked shrinkable): where the rule parks a queue, it is
 *     shrunk instead: it keeps running on the CUs the levels above leave it,
 *     so it needs no starvation guard and is no inversion while shrunk.  It
 *     grows back when no level above is busy, when it stops being
 *     shrinkable (then a park may follow), held, unmanaged or disabled.
 *   - Every state change may cost a full preempt/remap of the device (HWS),
 *     so at most max_actions changes are made per tick.  Order: unparks that
 *     the guarantees demand (starvation, unmanaged, disabled) first, so no
 *     stream of parks can starve them; then parks (what the latency-critical
 *     work waits for), lowest priority first; then ordinary unparks.  The
 *     rest wait for the next tick.
 *
 * Pure C: no kernel calls, no allocation; the caller owns the array.  The
 * same file is compiled into test/unit/ for unit and property tests.
 */
#include "policy/policy.h"

/*
 * A queue at a barrier is busy for @hold from the start of its wait,
 * then, until the barrier passes, in turn not busy for one slice (a provider
 * in another process may run) and busy for the longer of @hold and a slice.
 * One slice alone is not enough: a provider that needs more than one (a
 * long production, a park and an unpark that cost more on a loaded device)
 * would otherwise wait for the starvation guard, and the queue with it.
 * After the first cycle the turns go on only while a lower queue of its own
 * group completed work within the last cycle: a wait nothing on the device
 * feeds (a host signal, an event that comes late) releases the level until
 * the barrier passes, instead of parking everything below for half the time
 * and remapping the device twice a cycle for nothing.  Its own provider
 * progressing again brings the turns back; another process's never does.
 */
static bool blocked_busy(const struct gp_pq *q, const struct gp_policy_params *pp, u64 hold,
			 u64 now)
{
	u64 t = now - q->blocked_since_ns;
	u64 s = pp->min_slice_ns;
	u64 cycle = s + (hold > s ? hold : s);

	if (t < hold || !s)
		return true;
	if (t - hold >= cycle && (!q->provider_ns || now - q->provider_ns >= cycle) &&
	    !gp_test_defence_off(GP_DEF_BARRIER_RELEASE))
		return false;
	return (t - hold) % cycle >= s;
}

static bool busy_within(const struct gp_pq *q, const struct gp_policy_params *pp, u64 hold,
			u64 now)
{
	if (q->blocked)
		return blocked_busy(q, pp, hold, now);
	return q->pending || (q->last_pending_ns && now - q->last_pending_ns < hold);
}

/*
 * May lower queue @q still run work a park would stop?  Unknown (it
 * fails closed); pending now or within the hysteresis; its read index moved
 * within the hysteresis (the write index is the client's to forge) or, for
 * early-rptr firmware, within the dispatch window: a dispatch
 * started then may still run.  A queue at a barrier may not, until the wait
 * outlasts the hysteresis and a slice (a barrier header read through the
 * client's mapping is the client's to forge too).
 */
static bool may_run(const struct gp_pq *q, const struct gp_policy_params *pp, u64 now)
{
	u64 win = pp->dispatch_window_ns > pp->hysteresis_ns ? pp->dispatch_window_ns :
							       pp->hysteresis_ns;

	if (q->unknown)
		return !gp_test_defence_off(GP_DEF_UNKNOWN);
	if (q->blocked)
		return !gp_test_defence_off(GP_DEF_BARRIER) &&
		       now - q->blocked_since_ns >= pp->hysteresis_ns &&
		       now - q->blocked_since_ns - pp->hysteresis_ns >= pp->min_slice_ns;
	if (busy_within(q, pp, pp->hysteresis_ns, now))
		return true;
	return q->last_progress_ns && now - q->last_progress_ns < win &&
	       !gp_test_defence_off(GP_DEF_PROGRESS);
}

/**
 * gp_policy_hold() - how long @q's level stays busy after its last work
 * @pp: parameters
 * @q: the queue
 *
 * Return: the hold learned from @q's own idle gaps (gp_policy_learn()), or
 * @pp->hysteresis_ns when learning is off or has found no shorter hold that
 * pays.
 */
u64 gp_policy_hold(const struct gp_policy_params *pp, const struct gp_pq *q)
{
	return pp->hold_payback_ns && q->hold_ns ? q->hold_ns : pp->hysteresis_ns;
}

/*
 * The hold that pays (@pp->hold_payback_ns set).  A level stays busy after
 * its last work so that work coming back soon costs the levels below no
 * park and unpark (under HWS each is a remap of the whole device), but only
 * until the queue's own gaps say the wait will last long enough for the run
 * an unpark gives them to pay for both.  From the queue's last GP_HOLD_GAPS
 * idle gaps: the shortest wait h (none, or a quarter past one of the gaps,
 * so that gap is bridged) after which at least half of the gaps longer than
 * h, and at least GP_HOLD_MIN_LONGER of them, went on for hold_payback_ns
 * more.  (A submitter the CPU left waiting once in a while is no request
 * pattern: an LC that keeps the GPU busy but for that would have lower
 * queues unparked at every gap a little longer than its usual ones.)
 * Arrivals without memory (a Poisson stream) give all or nothing: unpark at
 * once when their gaps pay, else wait the whole hysteresis.  Launches a few hundred us apart within
 * requests tens of ms apart give a hold just past the launches' gaps.
 * Where none pays, @hysteresis_ns, as without learning; never longer, so a
 * queue's owner can shape its gaps to shorten the parks below it, never to
 * lengthen them.
 */
static void gp_policy_learn(const struct gp_policy_params *pp, struct gp_pq *q, u64 gap)
{
	u64 pay_us = pp->hold_payback_ns / 1000, best = ~0ULL, g = gap / 1000;
	u32 i, j;

	q->gaps_us[q->gap_next] = g > 0xffffffffULL ? 0xffffffffU : (u32)g;
	q->gap_next = (q->gap_next + 1) % GP_HOLD_GAPS;
	if (q->ngaps < GP_HOLD_GAPS)
		q->ngaps++;
	q->hold_ns = 0;
	if (q->ngaps < GP_HOLD_MIN_GAPS)
		return;
	for (i = 0; i <= q->ngaps; i++) {
		u64 h = i == q->ngaps ? 0 : q->gaps_us[i] + q->gaps_us[i] / 4 + 1;
		u32 longer = 0, pays = 0;

		if (h >= best)
			continue;
		for (j = 0; j < q->ngaps; j++) {
			longer += q->gaps_us[j] > h;
			pays += q->gaps_us[j] >= h + pay_us;
		}
		if (longer >= GP_HOLD_MIN_LONGER && 2 * pays >= longer)
			best = h;
	}
	/* 1 ns, not 0 (none learned): unpark at the first scan that is idle. */
	if (best != ~0ULL && best * 1000 < pp->hysteresis_ns)
		q->hold_ns = best ? best * 1000 : 1;
}

/* Is @q's level busy: pending, at a barrier, or within its hold? */
static bool level_busy(const struct gp_pq *q, const struct gp_policy_params *pp, u64 now)
{
	return busy_within(q, pp, q->blocked ? pp->hysteresis_ns : gp_policy_hold(pp, q), now);
}

/* Is @y a lower queue of @x's group (and device) that may provide for it? */
static bool gp_policy_same_group(const struct gp_pq *x, const struct gp_pq *y)
{
	return x->group && (y->group == x->group || gp_test_defence_off(GP_DEF_GROUP)) &&
	       y->prio < x->prio && !y->signal_only;
}

/* @y inherits @x's priority (the higher of two it inherits). */
static void gp_policy_inherit(const struct gp_pq *x, struct gp_pq *y)
{
	if (!y->inherited || y->inherit_prio <= x->prio) {
		y->inherited = true;
		y->inherit_prio = x->prio;
		y->inherit_from = x->id;
	}
}

/*
 * @x's barrier passed: @y (same device and group) is its provider if it
 * completed work since @x was last seen blocked; a former provider of @x
 * that did not is not any more.
 */
static void gp_policy_provider(const struct gp_pq *x, struct gp_pq *y)
{
	if (!gp_policy_same_group(x, y))
		return;
	if (y->last_progress_ns && y->last_progress_ns >= x->last_blocked_ns)
		gp_policy_inherit(x, y);
	else if (y->inherited && y->inherit_from == x->id)
		y->inherited = false;
}

/*
 * A queue waiting at a barrier makes providers of its own
 * group's lower queues while it waits; when it passes, of those that
 * completed work meanwhile.  A provider keeps its inherited priority while
 * a dependent queue at least that high is busy or blocked on its device.
 */
static void gp_policy_deps(const struct gp_policy_params *pp, struct gp_pq *q, u32 n, u64 now,
			   struct gp_policy_result *r)
{
	u32 i, j;

	for (i = 0; i < n; i++) {
		struct gp_pq *x = &q[i];
		u32 d = gp_pq_dev(x);

		if (x->was_blocked && !x->blocked) {
			r->releases++;
			x->dependent = true;
			for (j = 0; j < n; j++)
				if (j != i && gp_pq_dev(&q[j]) == d)
					gp_policy_provider(x, &q[j]);
		}
		if (x->blocked) {
			x->last_blocked_ns = now;
			x->dependent = true;
			for (j = 0; j < n; j++) {
				struct gp_pq *y = &q[j];

				if (j != i && gp_pq_dev(y) == d && gp_policy_same_group(x, y))
					gp_policy_inherit(x, y);
			}
		}
		x->was_blocked = x->blocked;
		if (!x->blocked && !level_busy(x, pp, now))
			x->dependent = false;
		if (x->dependent &&
		    (!(r->dep_valid & (1ULL << d)) || x->prio > r->dep_top[d])) {
			r->dep_valid |= 1ULL << d;
			r->dep_top[d] = x->prio;
		}
	}
	for (i = 0; i < n; i++) {
		struct gp_pq *y = &q[i];
		u32 d = gp_pq_dev(y);

		if (!y->inherited)
			continue;
		if (!(r->dep_valid & (1ULL << d)) || r->dep_top[d] < y->inherit_prio)
			y->inherited = false;
		else
			r->inheriting++;
	}
}

/*
 * Before any level is judged: each queue's progress, the start of each wait
 * at a barrier, and the last time a lower queue of the waiter's own group
 * (a provider, on its device) completed work during that wait.
 */
static void gp_policy_providers(struct gp_pq *q, u32 n, u64 now)
{
	u32 i, j;

	for (i = 0; i < n; i++) {
		if (q[i].progressed)
			q[i].last_progress_ns = now;
		if (q[i].blocked && !q[i].was_blocked) {
			q[i].blocked_since_ns = now;
			q[i].provider_ns = 0;
		}
	}
	for (i = 0; i < n; i++) {
		struct gp_pq *x = &q[i];

		if (!x->blocked)
			continue;
		for (j = 0; j < n; j++) {
			const struct gp_pq *y = &q[j];

			if (j != i && gp_pq_dev(y) == gp_pq_dev(x) && gp_policy_same_group(x, y) &&
			    y->last_progress_ns >= x->blocked_since_ns &&
			    y->last_progress_ns > x->provider_ns)
				x->provider_ns = y->last_progress_ns;
		}
	}
}

/* The priority @q counts at for parking: its own, or what it inherits. */
static int eff_prio(const struct gp_pq *q)
{
	return q->inherited && q->inherit_prio > q->prio ? q->inherit_prio : q->prio;
}

/*
 * Would the hardware hand free CUs to @x before @y (on one device)?  It ranks
 * queues by their hardware (KFD) priority only: neither gpreempt's rules nor
 * an inherited level reach it.
 */
static bool hw_first(const struct gp_pq *x, const struct gp_pq *y)
{
	return x->hw_prio > y->hw_prio;
}

/*
 * Tiers: would @x, left to the hardware's arbitration, hold back a busy
 * provider on its device?  The hardware knows only a provider's own (KFD)
 * priority: a queue above it gets the CUs first, though the provider runs at
 * the level of the queue that waits on it (a KFD-0 producer stream beside a
 * BE at 7 would wait behind the BE for as long as it has work).  Only an
 * inheriting queue can be such a provider (its level is above its own
 * priority): the caller skips the scan when no queue inherits.
 */
static bool gp_policy_holds_provider(const struct gp_policy_params *pp, const struct gp_pq *q,
				     u32 n, const struct gp_pq *x, u64 now)
{
	u32 j;

	for (j = 0; j < n; j++) {
		const struct gp_pq *y = &q[j];

		if (y != x && gp_pq_dev(y) == gp_pq_dev(x) && hw_first(x, y) &&
		    eff_prio(y) > eff_prio(x) && level_busy(y, pp, now))
			return true;
	}
	return false;
}

/*
 * Is @s in its starvation slice (running, below its device's top), with work
 * when @work?
 */
static bool in_slice(const struct gp_policy_params *pp, const struct gp_pq *s,
		     const struct gp_policy_result *r, bool work, u64 now)
{
	u32 d = gp_pq_dev(s);

	return s->state == GP_PS_RUNNING && now < s->slice_until_ns && s->parkable &&
	       !s->signal_only && !s->hold && !s->blocked && (r->top_valid & (1ULL << d)) &&
	       eff_prio(s) < r->top_prio[d] && (!work || may_run(s, pp, now));
}

/*
 * Starvation guard: is @y a queue the hardware would run before a queue in
 * its starvation slice on its device (hw_first(), as for a provider in
 * tiers), which the slice parks?  Left running, @y would take every CU it
 * has waves for first, and the slice would get none.  Only a queue at or
 * below yield_max_prio or the starving queue's own level that provides for
 * nobody: an LC level above both is never parked for a slice.  Both must
 * have work for the park; once parked, @y stays parked until the slice ends
 * (work that comes and goes costs no remaps beyond one park and one unpark).
 * The caller skips the scan when no queue has a slice.
 */
static bool gp_policy_yields(const struct gp_policy_params *pp, const struct gp_pq *q, u32 n,
			     const struct gp_pq *y, const struct gp_policy_result *r, u64 now)
{
	bool work = y->state == GP_PS_RUNNING;
	u32 j;

	if (y->signal_only || y->inherited || y->hold || (work && !may_run(y, pp, now)))
		return false;
	for (j = 0; j < n; j++) {
		const struct gp_pq *s = &q[j];

		if (s != y && gp_pq_dev(s) == gp_pq_dev(y) && hw_first(y, s) &&
		    (eff_prio(y) <= pp->yield_max_prio || eff_prio(y) <= eff_prio(s) ||
		     gp_test_defence_off(GP_DEF_YIELD_CAP)) &&
		    in_slice(pp, s, r, work, now))
			return true;
	}
	return false;
}

/* Budget order: 0 = owed unparks, 1 = parks, 2 = unparks after idle. */
static int rank(const struct gp_pq *q)
{
	if (q->action == GP_ACT_PARK || q->action == GP_ACT_SHRINK)
		return 1;
	return q->reason == GP_WHY_HIGHER_IDLE ? 2 : 0;
}

static void want(struct gp_pq *q, enum gp_action a, enum gp_reason why)
{
	q->action = a;
	q->wanted = a;
	q->reason = why;
}

/**
 * gp_policy_decide() - compute park/unpark actions for one tick
 * @pp: parameters
 * @q: all managed queues; @q[i].action/.reason are written
 * @n: number of queues
 * @now: monotonic time in ns
 * @res: summary (may be NULL)
 *
 * The caller applies the actions and reports each outcome with
 * gp_policy_commit().
 */
void gp_policy_decide(const struct gp_policy_params *pp, struct gp_pq *q, u32 n, u64 now,
		      struct gp_policy_result *res)
{
	struct gp_policy_result r = { 0 };
	u32 i, d, budget = pp->max_actions;

	gp_policy_providers(q, n, now);
	for (i = 0; i < n; i++) {
		bool seen;
		u64 bit;

		q[i].action = GP_ACT_NONE;
		q[i].wanted = GP_ACT_NONE;
		q[i].reason = GP_WHY_NONE;
		q[i].granted = false;
		/*
		 * Early-rptr firmware (dispatch window set): the read index
		 * moves when the CP fetches a dispatch, so work shows as
		 * pending only until then; a queue whose read index moved
		 * since the last scan had work in between.  So did
		 * one whose work fell in a sleep through a hold (@slept).
		 */
		seen = q[i].pending || ((pp->dispatch_window_ns || pp->slept) && q[i].progressed);
		if (seen) {
			/* A gap ends; one spent at a barrier is no idle gap. */
			if (!q[i].was_seen && q[i].last_pending_ns && pp->hold_payback_ns &&
			    q[i].last_blocked_ns <= q[i].last_pending_ns)
				gp_policy_learn(pp, &q[i], now - q[i].last_pending_ns);
			q[i].last_pending_ns = now;
		}
		q[i].was_seen = seen;
		d = gp_pq_dev(&q[i]);
		bit = 1ULL << d;
		if (q[i].pending && (!(r.pend_valid & bit) || q[i].prio > r.pend_top[d])) {
			r.pend_valid |= bit;
			r.pend_top[d] = q[i].prio;
		}
		if (q[i].state == GP_PS_RUNNING && now < q[i].slice_until_ns)
			r.slices++;
		if (!level_busy(&q[i], pp, now))
			continue;
		if (!(r.top_valid & bit) || q[i].prio > r.top_prio[d])
			r.top_prio[d] = q[i].prio;
		if (!(r.top_valid & bit) || q[i].prio < r.low_prio[d])
			r.low_prio[d] = q[i].prio;
		r.top_valid |= bit;
	}
	gp_policy_deps(pp, q, n, now, &r);

	/* Desired actions, without the budget. */
	for (i = 0; i < n; i++) {
		struct gp_pq *x = &q[i];
		u32 xd = gp_pq_dev(x);
		/* A provider is not below the queue that waits on it. */
		bool below = (r.top_valid & (1ULL << xd)) && eff_prio(x) < r.top_prio[xd];
		bool yield;

		if (below && x->pending && x->state == GP_PS_RUNNING && !x->signal_only) {
			r.inversion_devs |= (1ULL << xd);
			r.inversion = true;
		}
		/*
		 * Tiers: only the lowest busy level is held below the top, and
		 * a queue the hardware would run before a busy provider.  A
		 * parked queue without work is no tier (nothing of it would
		 * run): it stays held, as an idle queue its process's park
		 * took along (gp_policy_goes_along()), until it has work.
		 */
		if (below && pp->tiers && x->prio > r.low_prio[xd] &&
		    (x->state != GP_PS_PARKED || may_run(x, pp, now)) &&
		    !(r.inheriting && gp_policy_holds_provider(pp, q, n, x, now)))
			below = false;
		/* Starvation guard: what the hardware would run before a slice. */
		yield = r.slices && gp_policy_yields(pp, q, n, x, &r, now);

		if (x->state == GP_PS_SHRUNK) {
			if (!pp->enabled)
				want(x, GP_ACT_UNPARK, GP_WHY_DISABLED);
			else if (!x->parkable || !x->shrinkable || x->hold)
				want(x, GP_ACT_UNPARK, GP_WHY_UNMANAGED);
			else if (!below && !yield)
				want(x, GP_ACT_UNPARK, GP_WHY_HIGHER_IDLE);
		} else if (x->state == GP_PS_PARKED) {
			if (!pp->enabled && !(x->hold && x->hold_disabled))
				want(x, GP_ACT_UNPARK, GP_WHY_DISABLED);
			else if (!x->parkable)
				want(x, GP_ACT_UNPARK, GP_WHY_UNMANAGED);
			else if (x->hold)
				continue;	/* parked until released */
			else if (now - x->state_since_ns >= pp->max_suspend_ns)
				want(x, GP_ACT_UNPARK, GP_WHY_STARVING);
			else if (x->slice_left_ns && !yield)
				want(x, GP_ACT_UNPARK, GP_WHY_STARVING);	/* the rest */
			else if (!below && !yield)
				want(x, GP_ACT_UNPARK, GP_WHY_HIGHER_IDLE);
		} else if ((pp->enabled || x->hold_disabled) && x->parkable && x->hold) {
			want(x, GP_ACT_PARK, GP_WHY_HELD);
		} else if (pp->enabled && x->parkable && below && may_run(x, pp, now) &&
			   now >= x->slice_until_ns) {
			/*
			 * Pending now, within the hysteresis, progressed
			 * within it or the dispatch window (CP
			 * firmware that advances the read index when a
			 * dispatch starts shows a queue whose one long kernel
			 * still runs as empty), or unknown.
			 */
			want(x, x->shrinkable ? GP_ACT_SHRINK : GP_ACT_PARK, GP_WHY_HIGHER_PENDING);
		} else if (pp->enabled && x->parkable && yield) {
			/* Also within its own slice: it gets the rest at its unpark. */
			want(x, x->shrinkable ? GP_ACT_SHRINK : GP_ACT_PARK, GP_WHY_YIELD);
		}
	}

	/*
	 * Spend the budget in rank order, lowest priority first within a rank;
	 * an action also needs its device's budget (when there is one).
	 */
	while (budget) {
		struct gp_pq *best = NULL;

		for (i = 0; i < n; i++) {
			struct gp_pq *x = &q[i];

			if (x->action == GP_ACT_NONE || x->granted)
				continue;
			if (pp->dev_budget && !pp->dev_budget[gp_pq_dev(x)])
				continue;
			if (!best || rank(x) < rank(best) ||
			    (rank(x) == rank(best) && x->prio < best->prio))
				best = x;
		}
		if (!best)
			break;
		budget--;
		if (pp->dev_budget)
			pp->dev_budget[gp_pq_dev(best)]--;
		best->granted = true;
		if (best->action == GP_ACT_PARK)
			r.parks++;
		else if (best->action == GP_ACT_SHRINK)
			r.shrinks++;
		else
			r.unparks++;
	}
	for (i = 0; i < n; i++) {
		if (q[i].action != GP_ACT_NONE && !q[i].granted) {
			q[i].action = GP_ACT_NONE;
			q[i].reason = GP_WHY_NONE;
			r.deferred++;
			if (pp->dev_budget && !pp->dev_budget[gp_pq_dev(&q[i])])
				r.throttled++;
		}
	}

	if (res)
		*res = r;
}

/**
 * gp_policy_goes_along() - may a park of @x's whole process take @x along?
 * @pp: parameters
 * @res: this tick's gp_policy_decide() summary
 * @x: a queue of the process, on the device of the queue the park is for,
 *     after gp_policy_decide() of this tick
 * @now: the tick's time
 *
 * Where only a whole process can be parked on a device (an eviction), the
 * process's level there is that of its queues with work: pending, within
 * the hysteresis, progressed, unknown or at a barrier.  An idle queue below
 * its device's busy top runs nothing: it goes along, and the policy unparks
 * it (with its process) once it has work above what parked it.  Counting
 * its level would let any process keep its working queue running beside
 * the work above it with one idle queue at a higher priority.
 * An idle queue at or above the top does not go: the policy would
 * unpark it, and its process with it, at the next tick.
 *
 * Return: true when the policy wants @x parked, or keeps it parked, or @x
 * is idle below its device's busy top and provides for nobody; false when
 * it has work the policy keeps running (at or above the top, a provider, in
 * its starvation slice, not parkable) or the policy unparks it.
 */
bool gp_policy_goes_along(const struct gp_policy_params *pp, const struct gp_policy_result *res,
			  const struct gp_pq *x, u64 now)
{
	u32 d = gp_pq_dev(x);

	if (x->wanted == GP_ACT_PARK)
		return true;
	if (x->state == GP_PS_PARKED)
		return x->wanted != GP_ACT_UNPARK;
	if (x->inherited || x->pending || x->blocked || x->unknown || may_run(x, pp, now) ||
	    gp_test_defence_off(GP_DEF_GOES_ALONG))
		return false;
	return (res->top_valid & (1ULL << d)) && eff_prio(x) < res->top_prio[d];
}

/**
 * gp_policy_commit() - record the outcome of a queue's action
 * @pp: parameters
 * @q: the queue whose action was applied
 * @ok: the backend succeeded
 * @now: monotonic time in ns
 *
 * On success the state flips; an unpark for starvation opens a slice during
 * which the queue is not parked again (but for another queue's slice:
 * GP_WHY_YIELD, which keeps the rest of the slice for its next unpark).  On
 * failure nothing changes and the next tick decides again.
 */
void gp_policy_commit(const struct gp_policy_params *pp, struct gp_pq *q, bool ok, u64 now)
{
	if (!ok || q->action == GP_ACT_NONE)
		return;
	if (q->action == GP_ACT_PARK || q->action == GP_ACT_SHRINK) {
		q->state = q->action == GP_ACT_PARK ? GP_PS_PARKED : GP_PS_SHRUNK;
		if (q->reason == GP_WHY_YIELD && now < q->slice_until_ns) {
			q->slice_left_ns = q->slice_until_ns - now;
			q->slice_until_ns = 0;
		}
	} else {
		q->state = GP_PS_RUNNING;
		if (q->slice_left_ns)
			q->slice_until_ns = now + q->slice_left_ns;
		else if (q->reason == GP_WHY_STARVING)
			q->slice_until_ns = now + pp->min_slice_ns;
		q->slice_left_ns = 0;
	}
	q->state_since_ns = now;
}
