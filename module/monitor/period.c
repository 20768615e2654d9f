// SPDX-License-Identifier: GPL-2.0
/*
 * period.c - how long the monitor sleeps after a tick: tick_us while
 * something may need preempting, to the end of a hold when nothing can
 * change before it, idle_us, or the deep-idle back-off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/limits.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include "monitor/monitor_int.h"

/*
 * May the monitor sleep through a hold with @e as it is?  Parked or shrunk
 * (it cannot take CUs from the top).  Running below its device's top: idle
 * (no work, no progress since the last scan, readable dispatch ids), as in
 * any idle period: its work and the top's both starting within the sleep
 * is seen at its end.  At the top: no work, no barrier wait, readable ids
 * and no hold, when the device has a parked queue (@parked).
 */
static bool gp_hold_quiet(const struct gp_queue *e, bool parked)
{
	const struct gp_pq *q = &e->pq;

	if (q->state != GP_PS_RUNNING)
		return true;
	if (q->prio < gp_dev_maxprio[q->dev])
		return !(q->pending || q->blocked || q->unknown || q->progressed);
	return !parked || !(q->pending || q->blocked || q->unknown || q->hold);
}

/**
 * gp_hold_until() - the end of a hold the monitor may sleep through
 * @n: queues in gp_snap, after this tick's actions
 * @pp: this tick's parameters
 * @t0: the tick's time
 *
 * After a burst of a device's top level, the queues below it stay parked for
 * the hold (hysteresis_us).  While every queue below the top is parked and
 * the top has no work, no scan before the hold ends can change a decision:
 * new work of the top runs at once, as nothing below it runs, and work
 * below it cannot run.  So the monitor sleeps until the earliest end of
 * such a hold, or of a parked queue's max_suspend, instead of scanning
 * every tick_us; a kick (a queue created, a priority or rule changed) still
 * wakes it.  Work the top starts and finishes in that sleep still extends
 * the hold: the scan after it counts a read index that moved as work seen
 * then (gp_policy_params.slept).
 *
 * Return: that time; 0 when some device has a running queue below its top
 * with work, a top queue with work, at a barrier, unreadable or held while a
 * queue below is parked, a parked queue of the top's own process (it may become
 * the top's provider at its next barrier), or a hold already over.
 */
u64 gp_hold_until(int n, const struct gp_policy_params *pp, u64 t0)
{
	static u64 dev_end[GP_POLICY_MAX_DEVS];
	u64 parked = 0, until = U64_MAX, end;
	int i, j;
	u32 d;

	for (i = 0; i < n; i++)
		if (!gp_snap[i]->gone && gp_snap[i]->pq.state != GP_PS_RUNNING)
			parked |= 1ULL << gp_snap[i]->pq.dev;
	if (!parked)
		return 0;
	memset(dev_end, 0, sizeof(dev_end));
	for (i = 0; i < n; i++) {
		const struct gp_queue *e = gp_snap[i];

		d = e->pq.dev;
		if (e->gone)
			continue;
		if (!gp_hold_quiet(e, parked & (1ULL << d)))
			return 0;
		if (e->pq.state == GP_PS_PARKED && !e->pq.hold) {
			until = min(until, e->pq.state_since_ns + pp->max_suspend_ns);
			continue;
		}
		if (e->pq.state != GP_PS_RUNNING || !(parked & (1ULL << d)) ||
		    e->pq.prio < gp_dev_maxprio[d] || !e->pq.last_pending_ns)
			continue;
		/* A top queue: its level is busy until the last of its holds ends. */
		end = e->pq.last_pending_ns + pp->hysteresis_ns;
		dev_end[d] = max(dev_end[d], end);
		for (j = 0; j < n; j++)
			if (e->pq.group && gp_snap[j]->pq.group == e->pq.group &&
			    gp_snap[j]->pq.dev == d && gp_snap[j]->pq.state != GP_PS_RUNNING)
				return 0;
	}
	for (d = 0; d < GP_POLICY_MAX_DEVS; d++) {
		if (!(parked & (1ULL << d)))
			continue;
		if (dev_end[d] <= t0)
			return 0;
		until = min(until, dev_end[d]);
	}
	return until;
}

/**
 * gp_next_tick_kind() - how soon could something need preempting?
 * @n: queues in gp_snap, after this tick's actions
 * @t0: the tick's time
 *
 * Return: GP_TICK_FAST (tick at tick_us) if a queue is parked, a queue
 * below its device's level has work, or work drained in this tick;
 * GP_TICK_CALM (deep idle: the period may back off past idle_us) if no
 * queue has work, waits at a barrier, is held or is anything but running;
 * else GP_TICK_IDLE (idle_us).
 */
enum gp_tick_kind gp_next_tick_kind(int n, u64 t0)
{
	enum gp_tick_kind kind = GP_TICK_CALM;
	int i;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];

		if (e->gone)
			continue;
		if (e->pq.state != GP_PS_RUNNING ||
		    ((e->pq.pending || e->pq.unknown) && e->pq.prio < gp_dev_maxprio[e->pq.dev]) ||
		    e->pq.last_pending_ns == t0)
			return GP_TICK_FAST;
		if (e->pq.pending || e->pq.blocked || e->pq.hold || e->pq.state != GP_PS_RUNNING)
			kind = GP_TICK_IDLE;
	}
	return kind;
}

/**
 * gp_hold_period() - a fast tick's period, stretched to a hold's end
 * @n: queues in gp_snap, after this tick's actions
 * @pp: this tick's parameters
 * @t0: the tick's time
 * @period: the fast period, tick_us
 *
 * Towards the end of a hold nothing can cut short (gp_hold_until()), in
 * steps of at most a quarter of hysteresis_us and idle_us.  Not while the
 * policy held actions back (budget), a provider inherits, the helper has
 * actions in flight or restores are owed: those move before any hold ends.
 *
 * Return: the period in microseconds.
 */
unsigned int gp_hold_period(int n, const struct gp_policy_params *pp, u64 t0,
			    unsigned int period)
{
	u64 until, us;

	if (gp_res.throttled || gp_res.inheriting || gp_defer_pending() ||
	    READ_ONCE(gp_reg.nowed))
		return period;
	until = gp_hold_until(n, pp, t0);
	if (until <= t0)
		return period;
	/*
	 * In steps of a quarter of the hold: work the top did in a step
	 * extends the hold from the step's end (gp_policy_params.slept), at
	 * most a quarter late.
	 */
	us = min_t(u64, DIV_ROUND_UP(until - t0, NSEC_PER_USEC),
		   max_t(u64, pp->hysteresis_ns / 4 / NSEC_PER_USEC, period));
	us = min_t(u64, us, READ_ONCE(gp_param.idle_us));
	if (us <= period)
		return period;
	gp_stats.hold_sleeps++;
	return us;
}
