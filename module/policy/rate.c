// SPDX-License-Identifier: GPL-2.0
/*
 * rate.c - what a state change costs the policy: the per-device token
 * bucket that bounds parks and unparks a second (max_rate), with its
 * back-off after failures.  Pure C, as policy.c, and built in user space by
 * the unit tests.
 */
#include "policy.h"

#define GP_NS_PER_SEC 1000000000ULL

/**
 * gp_bucket_burst() - the most actions a device may take at once
 * @rate: allowed state changes per second (0 is treated as 1)
 *
 * Return: a tenth of a second's worth, at least 1.
 */
u32 gp_bucket_burst(u32 rate)
{
	return rate >= 20 ? rate / 10 : 1;
}

static u64 gp_bucket_cost(u32 rate)
{
	return GP_NS_PER_SEC / (rate ? rate : 1);
}

/**
 * gp_bucket_avail() - refill @b and tell how many actions it allows now
 * @b: the device's bucket
 * @rate: allowed state changes per second
 * @now: monotonic time in ns
 *
 * Return: 0 while the device backs off, else the whole actions in the bucket.
 */
u32 gp_bucket_avail(struct gp_bucket *b, u32 rate, u64 now)
{
	u64 cost = gp_bucket_cost(rate), cap = cost * gp_bucket_burst(rate);

	if (!b->last_ns || now - b->last_ns >= cap)
		b->credit_ns = cap;
	else if (now > b->last_ns)
		b->credit_ns = b->credit_ns + (now - b->last_ns) < cap ?
			       b->credit_ns + (now - b->last_ns) : cap;
	b->last_ns = now;
	if (b->credit_ns > cap)
		b->credit_ns = cap;	/* the rate was raised or lowered */
	if (now < b->blocked_until_ns)
		return 0;
	return (u32)(b->credit_ns / cost);
}

/**
 * gp_bucket_take() - charge @n actions to @b
 * @b: the device's bucket
 * @rate: allowed state changes per second
 * @n: actions made (backend calls, whatever their outcome)
 */
void gp_bucket_take(struct gp_bucket *b, u32 rate, u32 n)
{
	u64 c = gp_bucket_cost(rate) * n;

	b->credit_ns = b->credit_ns > c ? b->credit_ns - c : 0;
}

/**
 * gp_bucket_result() - record an action's outcome for the back-off
 * @b: the device's bucket
 * @ok: the action succeeded (or failed for a reason that is not the device's)
 * @now: monotonic time in ns
 *
 * Return: true when a failure started or lengthened a back-off.
 */
bool gp_bucket_result(struct gp_bucket *b, bool ok, u64 now)
{
	if (ok) {
		b->backoff_ns = 0;
		return false;
	}
	b->backoff_ns = b->backoff_ns ? b->backoff_ns * 2 : GP_BACKOFF_MIN_NS;
	if (b->backoff_ns > GP_BACKOFF_MAX_NS)
		b->backoff_ns = GP_BACKOFF_MAX_NS;
	b->blocked_until_ns = now + b->backoff_ns;
	return true;
}

#define GP_BUDGET_WINDOW_NS (60 * GP_NS_PER_SEC)

static u64 gp_budget_cost(u32 per_min)
{
	return GP_BUDGET_WINDOW_NS / (per_min ? per_min : 1);
}

/**
 * gp_budget_avail() - refill @b and tell how many calls its remap budget allows now
 * @b: the device's remap budget
 * @per_min: allowed calls per minute (remap_budget)
 * @now: monotonic time in ns
 *
 * Over any minute a device gets at most two minutes' worth (a full bucket
 * and its refill); sustained, @per_min.
 *
 * Return: the whole calls in the bucket.
 */
u32 gp_budget_avail(struct gp_budget *b, u32 per_min, u64 now)
{
	u64 n;

	if (!b->last_ns)
		b->credit_ns = GP_BUDGET_WINDOW_NS;
	else if (now > b->last_ns)
		b->credit_ns = b->credit_ns + (now - b->last_ns) < GP_BUDGET_WINDOW_NS ?
			       b->credit_ns + (now - b->last_ns) : GP_BUDGET_WINDOW_NS;
	b->last_ns = now;
	n = b->credit_ns / gp_budget_cost(per_min);
	return n > 0xffffffffULL ? 0xffffffffU : (u32)n;
}

/**
 * gp_budget_take() - charge @n calls to @b
 * @b: the device's remap budget
 * @per_min: allowed calls per minute
 * @n: calls made, whatever their outcome
 */
void gp_budget_take(struct gp_budget *b, u32 per_min, u32 n)
{
	u64 c = gp_budget_cost(per_min) * n;

	b->credit_ns = b->credit_ns > c ? b->credit_ns - c : 0;
}
