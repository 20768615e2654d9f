// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_policy - property test of module/policy.c: random queues, priorities,
 * pending patterns, parameters and backend failures over many ticks; checks
 * the policy's invariants after every decision.  Usage: fuzz_policy [seed] [ticks]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy.h"

#define MAXQ 64
#define MS 1000000ULL

static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned int)(rng >> 33) % n;
}

static int fail(const char *what, unsigned long long seed, long tick)
{
	printf("not ok - %s # seed %llu tick %ld\n", what, seed, tick);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261122;
	long ticks = argc > 2 ? atol(argv[2]) : 200000, t;
	struct gp_policy_params pp;
	struct gp_pq q[MAXQ];
	u64 now = MS, last_tick = 0;
	long parks = 0, unparks = 0, starving = 0, scenarios = 0;
	u32 n = 0, i;
	int quiet = 0;

	rng = seed;
	printf("# seed %llu, %ld ticks\n", seed, ticks);
	for (t = 0; t < ticks; t++) {
		struct gp_policy_result r;
		u32 actions = 0;
		u64 dt;

		if (t % 5000 == 0) {	/* new scenario */
			scenarios++;
			n = 1 + rnd(MAXQ);
			memset(q, 0, sizeof(q));
			for (i = 0; i < n; i++) {
				q[i].prio = (int)rnd(16) - (rnd(10) ? 0 : 20);
				q[i].parkable = rnd(8) != 0;
				q[i].state_since_ns = now;
			}
			pp.hysteresis_ns = rnd(5) * MS;
			pp.max_suspend_ns = (1 + rnd(200)) * MS;
			pp.min_slice_ns = rnd(30) * MS;
			pp.max_actions = 1 + rnd(8);
			pp.enabled = rnd(10) != 0;
			quiet = 0;
		}
		/* Last quarter of each scenario: all quiet, nothing may stay parked. */
		if (t % 5000 == 3750)
			quiet = 1;
		for (i = 0; i < n; i++) {
			if (quiet)
				q[i].pending = 0;
			else if (rnd(10) == 0)
				q[i].pending = !q[i].pending;
			if (rnd(500) == 0)
				q[i].parkable = !q[i].parkable;
		}
		dt = (50 + rnd(2000)) * 1000;
		now += dt;
		gp_policy_decide(&pp, q, n, now, &r);

		for (i = 0; i < n; i++) {
			struct gp_pq *x = &q[i];

			if (x->action == GP_ACT_NONE)
				continue;
			actions++;
			if (x->action == GP_ACT_PARK) {
				if (!r.top_valid || x->prio >= r.top_prio)
					return fail("never park a queue at or above the top level", seed, t);
				if (!x->pending || !x->parkable || !pp.enabled)
					return fail("park only pending, parkable queues, when enabled", seed, t);
				if (x->state != GP_PS_RUNNING)
					return fail("park only running queues", seed, t);
				parks++;
			} else {
				if (x->state != GP_PS_PARKED)
					return fail("unpark only parked queues", seed, t);
				unparks++;
				starving += x->reason == GP_WHY_STARVING;
			}
		}
		if (actions > pp.max_actions)
			return fail("at most max_actions per tick", seed, t);
		for (i = 0; i < n; i++) {
			/* The backend fails now and then: nothing changes then. */
			gp_policy_commit(&pp, &q[i], rnd(20) != 0, now);
		}
		for (i = 0; i < n; i++) {
			/* Starvation bound, with slack for failures and the action budget. */
			if (q[i].state == GP_PS_PARKED &&
			    now - q[i].state_since_ns > pp.max_suspend_ns + 200 * MS)
			{ printf("# q%u prio %d parkable %d pending %d since %llu now %llu max %llu actions %u top %d/%d\n", i, q[i].prio, q[i].parkable, q[i].pending, (unsigned long long)q[i].state_since_ns, (unsigned long long)now, (unsigned long long)pp.max_suspend_ns, pp.max_actions, r.top_valid, r.top_prio); return fail("no queue parked much longer than max_suspend", seed, t); }
			if (!pp.enabled && q[i].state == GP_PS_PARKED &&
			    now - q[i].state_since_ns > 100 * MS)
				return fail("disabled: parked queues come back", seed, t);
		}
		if (t % 5000 == 4999) {
			for (i = 0; i < n; i++)
				if (q[i].state == GP_PS_PARKED)
					return fail("quiet for long: nothing stays parked", seed, t);
		}
		last_tick = now;
	}
	(void)last_tick;
	printf("ok - never park a queue at or above the top level\n");
	printf("ok - park only pending, parkable, running queues, when enabled\n");
	printf("ok - unpark only parked queues\n");
	printf("ok - at most max_actions per tick\n");
	printf("ok - no queue parked much longer than max_suspend (%ld starvation unparks)\n",
	       starving);
	printf("ok - disabled: parked queues come back\n");
	printf("ok - quiet for long: nothing stays parked (%ld scenarios, %ld parks, %ld unparks)\n",
	       scenarios, parks, unparks);
	return 0;
}
