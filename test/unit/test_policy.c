// SPDX-License-Identifier: GPL-2.0
/*
 * test_policy - unit tests of module/policy.c (user space, KTAP output).
 */
#include <stdio.h>
#include <string.h>
#include "policy.h"

#define MS 1000000ULL
static int n_tests, n_failed;

#define CHECK(cond, name) do {						\
	n_tests++;							\
	if (cond) {							\
		printf("ok %d - %s\n", n_tests, name);			\
	} else {							\
		n_failed++;						\
		printf("not ok %d - %s\n", n_tests, name);		\
		printf("# %s:%d: %s\n", __FILE__, __LINE__, #cond);	\
	}								\
} while (0)

static struct gp_policy_params P = {
	.hysteresis_ns = 2 * MS, .max_suspend_ns = 1000 * MS, .min_slice_ns = 20 * MS,
	.max_actions = 8, .enabled = true,
};

static void qinit(struct gp_pq *q, int prio, int pending)
{
	memset(q, 0, sizeof(*q));
	q->prio = prio;
	q->pending = pending;
	q->parkable = true;
}

/* One tick where every action succeeds. */
static struct gp_policy_result tick(const struct gp_policy_params *pp, struct gp_pq *q, u32 n,
				    u64 now)
{
	struct gp_policy_result r;
	u32 i;

	gp_policy_decide(pp, q, n, now, &r);
	for (i = 0; i < n; i++)
		gp_policy_commit(pp, &q[i], true, now);
	return r;
}

int main(void)
{
	struct gp_pq q[8];
	struct gp_policy_result r;
	struct gp_policy_params pp;
	u64 t = 10 * MS;
	int i;

	printf("TAP version 13\n");

	qinit(&q[0], 5, 1);
	qinit(&q[1], 5, 1);
	r = tick(&P, q, 2, t);
	CHECK(q[0].state == GP_PS_RUNNING && q[1].state == GP_PS_RUNNING && !r.inversion,
	      "one level: nothing parked");

	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 1);
	gp_policy_decide(&P, q, 2, t, &r);
	CHECK(q[1].action == GP_ACT_PARK && q[1].reason == GP_WHY_HIGHER_PENDING &&
	      q[0].action == GP_ACT_NONE && r.inversion && r.top_prio == 12,
	      "LC pending + BE pending: BE parked, LC not");
	gp_policy_commit(&P, &q[1], true, t);
	r = tick(&P, q, 2, t + MS / 10);
	CHECK(q[1].state == GP_PS_PARKED && q[1].action == GP_ACT_NONE && !r.inversion,
	      "BE stays parked while LC is busy");
	q[0].pending = 0;
	tick(&P, q, 2, t + MS);
	CHECK(q[1].state == GP_PS_PARKED, "LC idle less than the hysteresis: BE still parked");
	gp_policy_decide(&P, q, 2, t + 3 * MS, &r);
	CHECK(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_HIGHER_IDLE,
	      "LC idle past the hysteresis: BE unparked");

	qinit(&q[0], 12, 1);
	qinit(&q[1], 7, 1);
	qinit(&q[2], 3, 1);
	tick(&P, q, 3, t);
	CHECK(q[0].state == GP_PS_RUNNING && q[1].state == GP_PS_PARKED &&
	      q[2].state == GP_PS_PARKED, "three levels: the top runs, both lower parked");
	q[0].pending = 0;
	tick(&P, q, 3, t + 5 * MS);
	CHECK(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_PARKED,
	      "three levels: the top drains, the middle runs, the lowest stays parked");

	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 0);
	gp_policy_decide(&P, q, 2, t, &r);
	CHECK(q[1].action == GP_ACT_NONE, "an idle lower queue is not parked");

	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 1);
	q[1].parkable = false;
	gp_policy_decide(&P, q, 2, t, &r);
	CHECK(q[1].action == GP_ACT_NONE, "a non-parkable queue is never parked");
	q[1].state = GP_PS_PARKED;
	gp_policy_decide(&P, q, 2, t, &r);
	CHECK(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_UNMANAGED,
	      "a parked queue that became non-parkable is unparked");

	pp = P;
	pp.enabled = false;
	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 1);
	qinit(&q[2], 2, 1);
	q[2].state = GP_PS_PARKED;
	gp_policy_decide(&pp, q, 3, t, &r);
	CHECK(q[1].action == GP_ACT_NONE && q[2].action == GP_ACT_UNPARK &&
	      q[2].reason == GP_WHY_DISABLED, "disabled: park none, unpark all");

	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 1);
	tick(&P, q, 2, t);
	gp_policy_decide(&P, q, 2, t + 999 * MS, &r);
	CHECK(q[1].action == GP_ACT_NONE, "starvation guard: not before max_suspend");
	gp_policy_decide(&P, q, 2, t + 1000 * MS, &r);
	CHECK(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_STARVING,
	      "starvation guard: unparked after max_suspend");
	gp_policy_commit(&P, &q[1], true, t + 1000 * MS);
	gp_policy_decide(&P, q, 2, t + 1010 * MS, &r);
	CHECK(q[1].action == GP_ACT_NONE, "starvation slice: not parked again within min_slice");
	gp_policy_decide(&P, q, 2, t + 1021 * MS, &r);
	CHECK(q[1].action == GP_ACT_PARK, "starvation slice over: parked again");

	pp = P;
	pp.max_actions = 2;
	qinit(&q[0], 12, 1);
	for (i = 1; i < 5; i++)
		qinit(&q[i], i, 1);
	q[4].prio = 11;
	q[4].state = GP_PS_PARKED;
	q[4].pending = 0;
	q[4].last_pending_ns = 0;
	qinit(&q[5], 15, 0);
	q[5].state = GP_PS_PARKED;	/* above the top: wants unpark */
	gp_policy_decide(&pp, q, 6, t, &r);
	CHECK(r.parks == 2 && r.unparks == 0 && r.deferred == 2 &&
	      q[1].action == GP_ACT_PARK && q[2].action == GP_ACT_PARK &&
	      q[3].action == GP_ACT_NONE && q[5].action == GP_ACT_NONE,
	      "budget: parks first, lowest priority first, the rest deferred");

	/* Found by fuzz_policy: a steady stream of parks starved a starvation unpark. */
	pp = P;
	pp.max_actions = 1;
	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 1);
	q[1].state = GP_PS_PARKED;
	q[1].state_since_ns = t;
	qinit(&q[2], 2, 1);
	gp_policy_decide(&pp, q, 3, t + 1000 * MS, &r);
	CHECK(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_STARVING &&
	      q[2].action == GP_ACT_NONE, "budget: a starvation unpark goes before parks");

	qinit(&q[0], 12, 1);
	qinit(&q[1], 3, 1);
	gp_policy_decide(&P, q, 2, t, &r);
	gp_policy_commit(&P, &q[1], false, t);
	CHECK(q[1].state == GP_PS_RUNNING && q[1].state_since_ns == 0,
	      "a failed action changes nothing");

	qinit(&q[0], -100, 1);
	qinit(&q[1], -200, 1);
	qinit(&q[2], 1000000, 0);
	gp_policy_decide(&P, q, 3, t, &r);
	CHECK(q[1].action == GP_ACT_PARK && r.top_prio == -100,
	      "negative priorities order like any others; an idle high queue is not busy");

	gp_policy_decide(&P, q, 0, t, &r);
	CHECK(!r.top_valid && !r.parks && !r.unparks, "no queues: nothing to do");

	printf("1..%d\n", n_tests);
	return n_failed ? 1 : 0;
}
