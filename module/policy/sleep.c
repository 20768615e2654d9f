// SPDX-License-Identifier: GPL-2.0
/*
 * sleep.c - the end of a hold the monitor may sleep through, in one pass
 * over the queues (the monitor's gp_hold_until() feeds it).  Pure C, as
 * policy.c, and built in user space by the unit tests, which compare it
 * with a plain reference on random queues.
 */
#include "policy.h"

/**
 * gp_sleep_init() - start a pass
 * @s: the pass
 * @maxprio: per device slot, the highest level of its queues
 */
void gp_sleep_init(struct gp_sleep *s, const int *maxprio)
{
	u32 d;

	s->maxprio = maxprio;
	s->parked = 0;
	s->busy_top = 0;
	s->group_hit = 0;
	s->group = 0;
	s->group_top = 0;
	s->group_parked = 0;
	s->busy = false;
	s->until = ~0ULL;
	for (d = 0; d < GP_POLICY_MAX_DEVS; d++)
		s->dev_end[d] = 0;
}

/* The group that ended: devices where a top queue has a parked sibling. */
static void gp_sleep_group_end(struct gp_sleep *s)
{
	s->group_hit |= s->group_top & s->group_parked;
	s->group_top = 0;
	s->group_parked = 0;
}

/**
 * gp_sleep_add() - one queue of the pass
 * @s: the pass
 * @pp: this tick's parameters
 * @q: the queue, after this tick's actions
 * @gone: it went (only its group's parked state still counts)
 *
 * The queues of a group must come one after the other (the registry keeps
 * each process's queues together), in any order of groups.
 */
void gp_sleep_add(struct gp_sleep *s, const struct gp_policy_params *pp,
		  const struct gp_pq *q, bool gone)
{
	u64 bit = 1ULL << q->dev, end;

	if (q->group != s->group) {
		gp_sleep_group_end(s);
		s->group = q->group;
	}
	if (q->state != GP_PS_RUNNING)
		s->group_parked |= bit;
	if (gone)
		return;
	if (q->state != GP_PS_RUNNING) {
		s->parked |= bit;
		if (q->state == GP_PS_PARKED && !q->hold) {
			end = q->state_since_ns + pp->max_suspend_ns;
			if (end < s->until)
				s->until = end;
		}
		return;
	}
	if (q->prio < s->maxprio[q->dev]) {
		/* Below the top: must be idle. */
		if (q->pending || q->blocked || q->unknown || q->progressed)
			s->busy = true;
		return;
	}
	/* At the top: idle where the device has a parked queue. */
	if (q->pending || q->blocked || q->unknown || q->hold)
		s->busy_top |= bit;
	if (!q->last_pending_ns)
		return;
	/* A top queue: its level is busy until the last of its holds ends. */
	end = q->last_pending_ns + gp_policy_hold(pp, q);
	if (end > s->dev_end[q->dev])
		s->dev_end[q->dev] = end;
	if (q->group)
		s->group_top |= bit;
}

/**
 * gp_sleep_until() - the end of the pass
 * @s: the pass, after every queue
 * @t0: the tick's time
 *
 * Return: the earliest end of a hold of a device with a parked queue, or of
 * a parked queue's max_suspend; 0 when no queue is parked, a queue below its
 * top has work, a top queue of a device with a parked queue has work, is at
 * a barrier, unreadable or held, or has a parked queue of its own group on
 * its device, or such a device's hold is over.
 */
u64 gp_sleep_until(struct gp_sleep *s, u64 t0)
{
	u64 until = s->until;
	u32 d;

	gp_sleep_group_end(s);
	if (!s->parked || s->busy || (s->busy_top & s->parked) || (s->group_hit & s->parked))
		return 0;
	for (d = 0; d < GP_POLICY_MAX_DEVS; d++) {
		if (!(s->parked & (1ULL << d)))
			continue;
		if (s->dev_end[d] <= t0)
			return 0;
		if (s->dev_end[d] < until)
			until = s->dev_end[d];
	}
	return until;
}
