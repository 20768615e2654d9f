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
