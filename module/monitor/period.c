// SPDX-License-Identifier: GPL-2.0
/*
 * period.c - how long the monitor sleeps after a tick: tick_us while
 * something may need preempting, to the end of a hold when nothing can
 * change before it, idle_us, or the deep-idle back-off.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math.h>
#include <linux/minmax.h>
#include "monitor/monitor_int.h"
#include "params.h"
#include "core/registry.h"
#include "monitor/monitor.h"
#include "backends/defer.h"

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
 * then (gp_policy_params.slept).  One pass over the snapshot (policy/sleep.c):
 * the registry keeps each process's queues together.
 *
 * Return: that time; 0 when some device has a running queue below its top
 * with work, a top queue with work, at a barrier, unreadable or held while a
 * queue below is parked, a parked queue of the top's own process (it may become
 * the top's provider at its next barrier), or a hold already over.
 */
u64 gp_hold_until(int n, const struct gp_policy_params *pp, u64 t0)
{
	static struct gp_sleep s;	/* monitor thread only; too big for the stack */
	int i;

	gp_sleep_init(&s, gp_dev_maxprio);
	for (i = 0; i < n; i++)
		gp_sleep_add(&s, pp, &gp_snap[i]->pq, gp_snap[i]->gone);
	return gp_sleep_until(&s, t0);
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
