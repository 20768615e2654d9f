// SPDX-License-Identifier: GPL-2.0
/*
 * test_policy - unit tests of module/policy/ (user space; TAP output and exit
 * status of test/unit/tap.h).
 *
 *   make build/test_policy && build/test_policy
 *   gcc -O2 -g -Wall -Wextra -Werror -fsanitize=address,undefined -I module \
 *       -o build/test_policy test/unit/test_policy.c module/policy/policy.c module/policy/rate.c module/policy/sleep.c module/backends/cumask.c
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "policy/policy.h"
#include "backends/cumask.h"
#include "tap.h"

#define US 1000ULL
#define MS 1000000ULL
#define T0 (10 * MS)		/* the monotonic clock never reads 0 */

/* Defaults of module/params.c, in ns. */
static const struct gp_policy_params P = {
	.hysteresis_ns = 2 * MS, .max_suspend_ns = 1000 * MS, .min_slice_ns = 20 * MS,
	.max_actions = 8, .enabled = true, .yield_max_prio = 7,
};

static void qinit(struct gp_pq *q, int prio, bool pending)
{
	memset(q, 0, sizeof(*q));
	q->prio = prio;
	q->hw_prio = prio;	/* no rule: the hardware ranks it at its own */
	q->pending = pending;
	q->parkable = true;
	q->action = (enum gp_action)0x5a;	/* decide() must overwrite stale output */
	q->reason = (enum gp_reason)0x5a;
	q->granted = true;
}

static void qparked(struct gp_pq *q, int prio, bool pending, u64 since)
{
	qinit(q, prio, pending);
	q->state = GP_PS_PARKED;
	q->state_since_ns = since;
}

/* One tick in which the backend applies every action successfully. */
static struct gp_policy_result tick(const struct gp_policy_params *pp, struct gp_pq *q, u32 n,
				    u64 now)
{
	struct gp_policy_result r;
	u32 i;

	memset(&r, 0xa5, sizeof(r));
	gp_policy_decide(pp, q, n, now, &r);
	for (i = 0; i < n; i++)
		gp_policy_commit(pp, &q[i], true, now);
	return r;
}

static u32 nparked(const struct gp_pq *q, u32 n)
{
	u32 i, k = 0;

	for (i = 0; i < n; i++)
		k += q[i].state == GP_PS_PARKED;
	return k;
}

/* ------------------------------------------------------------------------- */

static void t_single_level(void)
{
	struct gp_pq q[4];
	struct gp_policy_result r;
	u64 t;
	int i;

	for (i = 0; i < 4; i++)
		qinit(&q[i], 5, i != 3);
	for (t = T0; t < T0 + 3000 * MS; t += 7 * MS) {
		r = tick(&P, q, 4, t);
		EXPECT(nparked(q, 4) == 0);
		EXPECT(r.parks == 0 && r.unparks == 0 && r.deferred == 0 && !r.inversion);
		EXPECT((r.top_valid & 1) && r.top_prio[0] == 5);
	}
	for (i = 0; i < 4; i++)
		EXPECT(q[i].action == GP_ACT_NONE && q[i].reason == GP_WHY_NONE && !q[i].granted);
}

static void t_lc_parks_be(void)
{
	struct gp_pq q[2];
	struct gp_policy_result r;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	gp_policy_decide(&P, q, 2, T0, &r);
	EXPECT(q[1].action == GP_ACT_PARK && q[1].reason == GP_WHY_HIGHER_PENDING);
	EXPECT(q[0].action == GP_ACT_NONE && q[0].reason == GP_WHY_NONE);
	EXPECT((r.top_valid & 1) && r.top_prio[0] == 12 && r.inversion);
	EXPECT(r.parks == 1 && r.unparks == 0 && r.deferred == 0);
	gp_policy_commit(&P, &q[0], true, T0);
	gp_policy_commit(&P, &q[1], true, T0 + 5 * US);
	EXPECT(q[0].state == GP_PS_RUNNING && q[0].state_since_ns == 0);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].state_since_ns == T0 + 5 * US);
}

static void t_be_stays_parked(void)
{
	struct gp_pq q[2];
	struct gp_policy_result r;
	u64 t;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	tick(&P, q, 2, T0);
	for (t = T0 + MS; t < T0 + 900 * MS; t += MS) {
		r = tick(&P, q, 2, t);
		EXPECT(q[1].state == GP_PS_PARKED && q[1].action == GP_ACT_NONE);
		EXPECT(!r.inversion && r.parks == 0 && r.unparks == 0);
		q[1].pending = (t / MS) % 3 == 0;	/* with or without work */
	}
	EXPECT(q[1].state_since_ns == T0);
}

static void t_hysteresis(void)
{
	struct gp_pq q[2];
	struct gp_policy_result r;
	const u64 idle = T0 + 10 * MS;	/* last scan that saw LC pending */

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	tick(&P, q, 2, T0);
	tick(&P, q, 2, idle);
	q[0].pending = false;
	r = tick(&P, q, 2, idle + MS);
	EXPECT(q[1].state == GP_PS_PARKED && r.top_prio[0] == 12);
	r = tick(&P, q, 2, idle + P.hysteresis_ns - 1);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].action == GP_ACT_NONE);
	EXPECT((r.top_valid & 1) && r.top_prio[0] == 12 && r.unparks == 0);
}

static void t_past_hysteresis(void)
{
	struct gp_pq q[2];
	struct gp_policy_result r;
	const u64 idle = T0 + 10 * MS;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	tick(&P, q, 2, T0);
	tick(&P, q, 2, idle);
	q[0].pending = false;
	gp_policy_decide(&P, q, 2, idle + P.hysteresis_ns, &r);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_HIGHER_IDLE);
	EXPECT((r.top_valid & 1) && r.top_prio[0] == 3 && r.unparks == 1 && r.parks == 0);
	gp_policy_commit(&P, &q[1], true, idle + P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].state_since_ns == idle + P.hysteresis_ns);
	EXPECT(q[1].slice_until_ns == 0);	/* not a starvation slice */
	r = tick(&P, q, 2, idle + P.hysteresis_ns + MS);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0);
	/* LC has work again: BE is parked at once. */
	q[0].pending = true;
	r = tick(&P, q, 2, idle + P.hysteresis_ns + 2 * MS);
	EXPECT(q[1].state == GP_PS_PARKED && r.parks == 1);
}

static void t_zero_hysteresis(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[2];
	struct gp_policy_result r;

	pp.hysteresis_ns = 0;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	tick(&pp, q, 2, T0);
	EXPECT(q[1].state == GP_PS_PARKED);
	q[0].pending = false;
	r = tick(&pp, q, 2, T0 + 1);
	EXPECT(q[1].state == GP_PS_RUNNING && r.unparks == 1 && r.top_prio[0] == 3);
}

/*
 * S3 F11, long kernels: on early-rptr firmware a BE queue running one long
 * kernel shows no work; its read index moved when the dispatch started.
 * Outside the hysteresis it is parked only within dispatch_window_ns.
 */
static void t_dispatch_window(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[2];

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);
	tick(&pp, q, 2, T0);
	q[1].pending = false;
	q[1].progressed = true;			/* dispatched: rptr == wptr */
	tick(&pp, q, 2, T0 + MS);
	q[1].progressed = false;
	q[0].pending = true;			/* LC, 20 ms into BE's kernel */
	tick(&pp, q, 2, T0 + 21 * MS);
	EXPECT(q[1].state == GP_PS_RUNNING);
	pp.dispatch_window_ns = 100 * MS;
	tick(&pp, q, 2, T0 + 22 * MS);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].reason == GP_WHY_HIGHER_PENDING);
	/* Past the window, an idle BE is not parked again after a release. */
	qinit(&q[1], 3, false);
	q[1].last_progress_ns = T0 + MS;
	tick(&pp, q, 2, T0 + 200 * MS);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].action == GP_ACT_NONE);
}

static void t_three_levels(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;
	const u64 t1 = T0 + 50 * MS;

	qinit(&q[0], 3, true);		/* in no particular order */
	qinit(&q[1], 12, true);
	qinit(&q[2], 7, true);
	r = tick(&P, q, 3, T0);
	EXPECT(q[1].state == GP_PS_RUNNING);
	EXPECT(q[0].state == GP_PS_PARKED && q[2].state == GP_PS_PARKED);
	EXPECT(r.parks == 2 && r.top_prio[0] == 12);
	tick(&P, q, 3, t1);
	q[1].pending = false;		/* the top drains */
	r = tick(&P, q, 3, t1 + MS);
	EXPECT(nparked(q, 3) == 2 && r.top_prio[0] == 12);
	r = tick(&P, q, 3, t1 + P.hysteresis_ns);
	EXPECT((r.top_valid & 1) && r.top_prio[0] == 7 && r.unparks == 1 && r.parks == 0);
	EXPECT(q[2].state == GP_PS_RUNNING && q[2].reason == GP_WHY_HIGHER_IDLE);
	EXPECT(q[0].state == GP_PS_PARKED && q[0].action == GP_ACT_NONE);
	EXPECT(q[1].state == GP_PS_RUNNING);
	r = tick(&P, q, 3, t1 + 100 * MS);
	EXPECT(q[0].state == GP_PS_PARKED && q[2].state == GP_PS_RUNNING && !r.inversion);
	/* The middle drains too: the lowest runs. */
	q[2].pending = false;
	tick(&P, q, 3, t1 + 101 * MS);
	r = tick(&P, q, 3, t1 + 101 * MS + P.hysteresis_ns);
	EXPECT(nparked(q, 3) == 0 && r.top_prio[0] == 3);
}

static void t_idle_lower_not_parked(void)
{
	struct gp_pq q[2];
	struct gp_policy_result r;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, false);
	r = tick(&P, q, 2, T0);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].action == GP_ACT_NONE);
	EXPECT(r.parks == 0 && !r.inversion && r.top_prio[0] == 12);
	r = tick(&P, q, 2, T0 + MS);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0);
	q[1].pending = true;		/* work arrives: now it is parked */
	r = tick(&P, q, 2, T0 + 2 * MS);
	EXPECT(q[1].state == GP_PS_PARKED && r.parks == 1);
	q[1].pending = false;		/* parked and idle: stays parked */
	r = tick(&P, q, 2, T0 + 3 * MS);
	EXPECT(q[1].state == GP_PS_PARKED && r.unparks == 0);
}

/*
 * S3 F11: on CP firmware that advances the read index when a dispatch
 * starts, a queue whose one long kernel runs shows no work.  Seen pending
 * within the hysteresis, it is still parked when a higher level gets work;
 * an idle queue past the hysteresis is not.
 */
static void t_recently_pending_parked(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);		/* its one kernel dispatched... */
	qinit(&q[2], 3, true);
	r = tick(&P, q, 3, T0);
	EXPECT(r.parks == 0);
	q[1].pending = false;		/* ...and the read index already moved */
	q[2].pending = false;
	r = tick(&P, q, 3, T0 + P.hysteresis_ns + 1);	/* q[2]: idle too long */
	q[0].pending = true;
	q[1].last_pending_ns = T0 + P.hysteresis_ns;	/* q[1]: seen just now */
	r = tick(&P, q, 3, T0 + P.hysteresis_ns + 2);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].reason == GP_WHY_HIGHER_PENDING);
	EXPECT(q[2].state == GP_PS_RUNNING && r.parks == 1);
}

/*
 * S3 F10, S4-3: an LC queue that waits at a barrier keeps its level busy
 * for the hysteresis (a short wait costs no unpark and park below it), then
 * releases it for one slice, time for a provider in another process; a
 * barrier that still holds makes the level busy again.
 */
static void t_blocked_releases_level(void)
{
	struct gp_pq q[2];
	struct gp_policy_result r;
	u64 b;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	q[0].group = 1;
	q[1].group = 2;
	r = tick(&P, q, 2, T0);
	EXPECT(q[1].state == GP_PS_PARKED && r.parks == 1);
	q[0].pending = false;		/* its kernels done; now at a barrier */
	q[0].blocked = true;
	b = T0 + 100 * US;
	r = tick(&P, q, 2, b);
	EXPECT(q[1].state == GP_PS_PARKED && r.unparks == 0);
	r = tick(&P, q, 2, b + P.hysteresis_ns / 2);
	EXPECT(q[1].state == GP_PS_PARKED && r.unparks == 0);
	r = tick(&P, q, 2, b + P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].reason == GP_WHY_HIGHER_IDLE);
	EXPECT(!(r.top_valid & 1) || r.top_prio[0] == 3);
	r = tick(&P, q, 2, b + P.hysteresis_ns + P.min_slice_ns - 1);
	EXPECT(q[1].state == GP_PS_RUNNING);
	r = tick(&P, q, 2, b + P.hysteresis_ns + P.min_slice_ns);
	EXPECT(q[1].state == GP_PS_PARKED && r.top_prio[0] == 12);
	q[0].blocked = false;		/* the barrier passed: its kernels again */
	q[0].pending = true;
	r = tick(&P, q, 2, b + P.hysteresis_ns + P.min_slice_ns + 100 * US);
	EXPECT(q[1].state == GP_PS_PARKED && r.releases == 1);
}

/*
 * S3 F10, S4-3: an LC queue (12) waits at a barrier on a producer stream
 * of its own process (3) that keeps a backlog; the barrier passes as the
 * producer completes its production.  The producer is its provider: not
 * parked while the LC waits, nor for the LC's kernels, nor in the
 * hysteresis after them.  A BE of another process (3 too) with a backlog,
 * which completes work whenever it runs, is parked on every request.
 */
static void t_provider_not_parked(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;
	u64 t = T0;
	int req;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);
	qinit(&q[2], 3, true);
	q[0].id = 1;
	q[1].id = 2;
	q[2].id = 3;
	q[0].group = 1;
	q[1].group = 1;
	q[2].group = 2;
	for (req = 0; req < 3; req++) {
		q[0].pending = false;		/* request: barrier, kernels */
		q[0].blocked = true;
		q[1].progressed = false;
		q[2].progressed = q[2].state == GP_PS_RUNNING;
		r = tick(&P, q, 3, t += 100 * US);
		EXPECT(q[1].state == GP_PS_RUNNING && q[1].inherited);
		q[1].progressed = true;		/* the production completes */
		q[2].progressed = q[2].state == GP_PS_RUNNING;
		r = tick(&P, q, 3, t += 100 * US);
		EXPECT(q[1].state == GP_PS_RUNNING);
		q[1].progressed = false;
		q[2].progressed = q[2].state == GP_PS_RUNNING;
		q[0].blocked = false;		/* the barrier passes */
		q[0].pending = true;
		r = tick(&P, q, 3, t += 100 * US);
		EXPECT(r.releases == 1 && r.inheriting == 1 && q[1].inherited);
		EXPECT(q[1].state == GP_PS_RUNNING && q[1].action == GP_ACT_NONE);
		EXPECT(q[2].state == GP_PS_PARKED && !q[2].inherited);
		q[2].progressed = q[2].state == GP_PS_RUNNING;
		r = tick(&P, q, 3, t += 100 * US);
		EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_PARKED);
		q[0].pending = false;		/* its kernels done: the hysteresis */
		r = tick(&P, q, 3, t += P.hysteresis_ns / 2);
		EXPECT(q[1].state == GP_PS_RUNNING && q[1].inherited);
		EXPECT(q[2].state == GP_PS_PARKED);
	}
	/* The LC goes idle past the hysteresis: no dependent, no provider. */
	r = tick(&P, q, 3, t += 2 * P.hysteresis_ns);
	EXPECT(!q[1].inherited && !q[0].dependent && r.inheriting == 0);
	EXPECT(q[2].state == GP_PS_RUNNING);
	/* Plain LC work without a barrier parks the former provider again. */
	q[0].pending = true;
	r = tick(&P, q, 3, t += 100 * US);
	EXPECT(q[1].state == GP_PS_PARKED && q[2].state == GP_PS_PARKED);
}

/*
 * S4-3 (the review's harness): a BE of another process with a backlog
 * completes work whenever it runs.  The LC waits at a barrier (1 ms: within
 * the hysteresis; 5 ms: past it, so the level is released for a while and
 * the BE runs and progresses), then runs 5 ms of kernels.  The BE is never
 * made a provider and is parked within one tick after every barrier passes.
 */
static void t_other_process_not_provider(void)
{
	static const int block_ticks[] = { 10, 50 };
	struct gp_pq q[2];
	u64 t = T0;
	int b, req, k, late = 0, inherited = 0, ran = 0;

	for (b = 0; b < 2; b++) {
		qinit(&q[0], 12, true);
		qinit(&q[1], 7, true);
		q[0].id = 1;
		q[1].id = 2;
		q[0].group = 1;
		q[1].group = 2;
		tick(&P, q, 2, t += 100 * US);
		EXPECT(q[1].state == GP_PS_PARKED);
		for (req = 0; req < 5; req++) {
			q[0].pending = false;
			q[0].blocked = true;
			for (k = 0; k < block_ticks[b]; k++) {
				q[1].progressed = q[1].state == GP_PS_RUNNING;
				ran += q[1].progressed;
				tick(&P, q, 2, t += 100 * US);
			}
			q[0].blocked = false;
			q[0].pending = true;
			for (k = 0; k < 50; k++) {
				q[1].progressed = q[1].state == GP_PS_RUNNING;
				tick(&P, q, 2, t += 100 * US);
				inherited += q[1].inherited;
				late += k >= 1 && q[1].state != GP_PS_PARKED;
			}
		}
	}
	EXPECT(late == 0 && inherited == 0);
	EXPECT(ran > 0);	/* the long waits released the level */
	if (late || inherited)
		printf("# BE running beside the busy LC after the pass: %d ticks, inherited %d ticks\n",
		       late, inherited);
}

/*
 * S4-3: a barrier that holds past the hysteresis and a slice makes the
 * level busy again: a BE of another process is parked, the waiter's own
 * producer stream (its provider while it waits) is not.
 */
static void t_blocked_long(void)
{
	struct gp_pq q[3];
	u64 b = T0 + 100 * US;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);		/* its producer stream */
	qinit(&q[2], 3, true);		/* another process */
	q[0].id = 1;
	q[1].id = 2;
	q[2].id = 3;
	q[0].group = 1;
	q[1].group = 1;
	q[2].group = 2;
	q[0].blocked = true;
	tick(&P, q, 3, b);
	EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_PARKED);
	tick(&P, q, 3, b + P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_RUNNING);
	tick(&P, q, 3, b + P.hysteresis_ns + P.min_slice_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_PARKED);
	q[1].progressed = true;		/* the producer completes work */
	tick(&P, q, 3, b + P.hysteresis_ns + 2 * P.min_slice_ns - 1);
	q[1].progressed = false;
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].inherited && q[2].state == GP_PS_PARKED);
	/* Released again for a slice, and so on: never the starvation guard. */
	tick(&P, q, 3, b + P.hysteresis_ns + 2 * P.min_slice_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_RUNNING);
	EXPECT(q[2].reason == GP_WHY_HIGHER_IDLE);
	tick(&P, q, 3, b + P.hysteresis_ns + 3 * P.min_slice_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_PARKED);
}

/*
 * A barrier nothing on the device feeds (an LC stream waiting on a host
 * signal for a second): after the hold and one cycle its level is released
 * until the barrier passes.  A BE of another process with a backlog is
 * parked at most twice, not once every cycle (a remap of the device each),
 * and parked again within one tick when the barrier passes.  The waiter's
 * own provider completing work brings the turns back.
 */
static void t_blocked_unfed_releases(void)
{
	struct gp_pq q[3];
	u64 b = T0 + 100 * US, t, end = b + 1000 * MS;
	int parks = 0, unparks = 0;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);		/* another process, a backlog */
	qinit(&q[2], 3, false);		/* the waiter's own idle stream */
	q[0].id = 1;
	q[1].id = 2;
	q[2].id = 3;
	q[0].group = 1;
	q[1].group = 2;
	q[2].group = 1;
	q[0].blocked = true;
	for (t = b; t < end; t += 100 * US) {
		enum gp_pstate was = q[1].state;

		tick(&P, q, 3, t);
		parks += was == GP_PS_RUNNING && q[1].state == GP_PS_PARKED;
		unparks += was == GP_PS_PARKED && q[1].state == GP_PS_RUNNING;
	}
	EXPECT(parks <= 2 && unparks <= 2);
	EXPECT(q[1].state == GP_PS_RUNNING);
	if (parks > 2 || unparks > 2)
		printf("# %d parks, %d unparks in 1 s\n", parks, unparks);
	/* Its own stream completes work: the turns come back. */
	q[2].progressed = true;
	q[2].pending = false;
	for (parks = 0; t < end + 2 * P.max_suspend_ns && !parks; t += 100 * US) {
		enum gp_pstate was = q[1].state;

		tick(&P, q, 3, t);
		q[2].progressed = false;
		parks += was == GP_PS_RUNNING && q[1].state == GP_PS_PARKED;
	}
	EXPECT(parks == 1);
	/* The barrier passes: parked within one tick. */
	while (q[1].state == GP_PS_PARKED)
		tick(&P, q, 3, t += 100 * US);
	q[0].blocked = false;
	q[0].pending = true;
	tick(&P, q, 3, t += 100 * US);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].reason == GP_WHY_HIGHER_PENDING);
}

/*
 * S4-3: an LC queue waits at a barrier on a producer in another process for
 * far longer than one slice (a long production, or parks and unparks slowed
 * by a loaded host).  The producer is parked for the LC's level only in
 * turns: in every cycle of the hold and two slices it runs for at least one
 * slice (after the first cycle for all of it: no provider of the LC's own
 * process feeds the wait), so the LC never waits for the starvation guard.
 */
static void t_blocked_releases_again(void)
{
	struct gp_pq q[2];
	u64 b = T0 + 100 * US, t, end = b + 3 * P.max_suspend_ns;
	u64 cycle = P.min_slice_ns + (P.hysteresis_ns > P.min_slice_ns ? P.hysteresis_ns :
				      P.min_slice_ns);
	u64 run = 0, ran_from = 0, longest_park = 0, parked_from = b;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);
	q[0].group = 1;
	q[1].group = 2;
	q[0].blocked = true;
	for (t = b; t < end; t += 100 * US) {
		tick(&P, q, 2, t);
		EXPECT(q[1].reason != GP_WHY_STARVING);
		if (q[1].state == GP_PS_RUNNING && !ran_from) {
			if (t - parked_from > longest_park)
				longest_park = t - parked_from;
			ran_from = t;
		} else if (q[1].state == GP_PS_PARKED && ran_from) {
			run += t - ran_from;
			ran_from = 0;
			parked_from = t;
		}
	}
	if (ran_from)
		run += t - ran_from;
	EXPECT(longest_park <= cycle);
	EXPECT(run >= (end - b) / cycle * P.min_slice_ns - P.min_slice_ns);
	if (longest_park > cycle)
		printf("# longest park %llu ns, cycle %llu ns\n",
		       (unsigned long long)longest_park, (unsigned long long)cycle);
}

/*
 * F10: a lower queue that completed nothing while the LC queue was blocked
 * is not what it waited on: at the next barrier that passes without it, a
 * former provider loses the inheritance, and is parked like any BE.
 */
static void t_provider_dropped(void)
{
	struct gp_pq q[2];
	u64 t = T0;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);
	q[0].id = 1;
	q[1].id = 2;
	q[0].group = 1;
	q[1].group = 1;
	q[0].blocked = true;
	tick(&P, q, 2, t += 100 * US);
	q[1].progressed = true;
	q[0].blocked = false;
	q[0].pending = true;
	tick(&P, q, 2, t += 100 * US);
	EXPECT(q[1].inherited && q[1].state == GP_PS_RUNNING);
	q[1].progressed = false;
	q[0].pending = false;		/* next request: at a barrier again */
	q[0].blocked = true;
	tick(&P, q, 2, t += 100 * US);
	tick(&P, q, 2, t += 100 * US);
	EXPECT(q[1].inherited && q[1].state == GP_PS_RUNNING);
	q[0].blocked = false;		/* passed, the BE completed nothing */
	q[0].pending = true;
	tick(&P, q, 2, t += 100 * US);
	EXPECT(!q[1].inherited);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].reason == GP_WHY_HIGHER_PENDING);
}

/*
 * F10, S4-3: a provider inherits only below the dependent's priority, only
 * on its device and only in its process; a queue at or above the
 * dependent, on another device or of another process (or with no process
 * known) is never made its provider.
 */
static void t_provider_scope(void)
{
	struct gp_pq q[6];
	struct gp_policy_result r;
	u64 t = T0;
	u32 i;

	qinit(&q[0], 12, false);
	qinit(&q[1], 3, true);		/* same device and process: the provider */
	qinit(&q[2], 3, true);		/* device 1 */
	qinit(&q[3], 14, false);	/* above the dependent */
	qinit(&q[4], 3, true);		/* another process */
	qinit(&q[5], 3, true);		/* no process known */
	q[2].dev = 1;
	for (i = 0; i < 6; i++) {
		q[i].id = i + 1;
		q[i].group = 1;
	}
	q[4].group = 2;
	q[5].group = 0;
	q[0].blocked = true;
	tick(&P, q, 6, t += 100 * US);
	for (i = 1; i < 6; i++)
		q[i].progressed = true;
	q[0].blocked = false;
	q[0].pending = true;
	r = tick(&P, q, 6, t += 100 * US);
	EXPECT(q[1].inherited && !q[2].inherited && !q[3].inherited && !q[4].inherited &&
	       !q[5].inherited && r.inheriting == 1);
	EXPECT(q[1].state == GP_PS_RUNNING && q[2].state == GP_PS_RUNNING);
	EXPECT(q[4].state == GP_PS_PARKED && q[5].state == GP_PS_PARKED);
	/* A level above the dependent parks the provider all the same. */
	q[3].pending = true;
	tick(&P, q, 6, t += 100 * US);
	EXPECT(q[1].state == GP_PS_PARKED && q[0].state == GP_PS_PARKED);
}

/*
 * S4-12: unknown fails closed.  A lower queue whose dispatch ids cannot be
 * read is parked below a busy level (and stays parked while it is busy);
 * an unknown queue never makes its own level busy, so it parks nothing.
 */
static void t_unknown_parked(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;

	qinit(&q[0], 12, true);		/* LC */
	qinit(&q[1], 7, false);		/* hostile: ids unreadable */
	qinit(&q[2], 7, false);		/* idle, readable (ROCr's internal queue) */
	q[1].unknown = true;
	r = tick(&P, q, 3, T0);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].reason == GP_WHY_HIGHER_PENDING);
	EXPECT(q[2].state == GP_PS_RUNNING && r.parks == 1);
	r = tick(&P, q, 3, T0 + 100 * US);
	EXPECT(q[1].state == GP_PS_PARKED && r.unparks == 0);
	/* LC idle past the hysteresis: unparked, not parked again while unknown. */
	q[0].pending = false;
	r = tick(&P, q, 3, T0 + 2 * P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0);
	r = tick(&P, q, 3, T0 + 3 * P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0 && !(r.top_valid & 1));
	/* An unknown LC parks nothing: it is not pending. */
	qinit(&q[0], 12, false);
	qinit(&q[1], 7, true);
	q[0].unknown = true;
	r = tick(&P, q, 2, T0 + 10 * P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0 && r.top_prio[0] == 7);
}

/*
 * S4-12: the write index is the client's: a lower queue that never shows
 * work pending but whose read index moves (the CP completes its work) is
 * parked below a busy level, for the hysteresis after its last progress.
 */
static void t_progress_is_work(void)
{
	struct gp_pq q[2];

	qinit(&q[0], 12, true);
	qinit(&q[1], 7, false);
	q[1].progressed = true;
	tick(&P, q, 2, T0);
	EXPECT(q[1].state == GP_PS_PARKED && q[1].reason == GP_WHY_HIGHER_PENDING);
	/* Progress does not make its own level busy. */
	qinit(&q[0], 12, false);
	qinit(&q[1], 7, true);
	q[0].progressed = true;
	tick(&P, q, 2, T0);
	EXPECT(q[1].state == GP_PS_RUNNING);
	/* Past the hysteresis after its last progress: left running. */
	qinit(&q[0], 12, true);
	qinit(&q[1], 7, false);
	q[1].progressed = true;
	q[1].slice_until_ns = T0 + 1;
	tick(&P, q, 2, T0);
	EXPECT(q[1].state == GP_PS_RUNNING);
	q[1].progressed = false;
	tick(&P, q, 2, T0 + P.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING);
}

/*
 * S4-12: a lower queue that shows a barrier at its head is not parked
 * while it plausibly waits; if the wait outlasts the hysteresis and a
 * slice (a forged header over a long kernel), it is parked.
 */
static void t_blocked_lower_parked_late(void)
{
	struct gp_pq q[2];
	u64 b = T0;

	qinit(&q[0], 12, true);
	qinit(&q[1], 7, false);
	q[1].blocked = true;
	tick(&P, q, 2, b);
	EXPECT(q[1].state == GP_PS_RUNNING);
	tick(&P, q, 2, b + P.hysteresis_ns + P.min_slice_ns - 1);
	EXPECT(q[1].state == GP_PS_RUNNING);
	tick(&P, q, 2, b + P.hysteresis_ns + P.min_slice_ns);
	EXPECT(q[1].state == GP_PS_PARKED);
}

static void t_equal_priority_never_parked(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;

	qinit(&q[0], 12, true);
	qinit(&q[1], 12, false);
	qparked(&q[2], 12, true, T0);	/* parked at the top level: comes back */
	gp_policy_decide(&P, q, 3, T0 + MS, &r);
	EXPECT(q[0].action == GP_ACT_NONE && q[1].action == GP_ACT_NONE);
	EXPECT(q[2].action == GP_ACT_UNPARK && q[2].reason == GP_WHY_HIGHER_IDLE);
	EXPECT(r.top_prio[0] == 12 && !r.inversion && r.parks == 0);
}

static void t_non_parkable(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;
	u64 t;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	q[1].parkable = false;
	for (t = T0; t < T0 + 100 * MS; t += MS) {
		r = tick(&P, q, 2, t);
		EXPECT(q[1].state == GP_PS_RUNNING && q[1].action == GP_ACT_NONE);
		EXPECT(r.inversion && r.parks == 0);	/* reported, not acted on */
	}
	/* Parked while parkable, then no longer parkable: unparked although
	 * the higher level is still busy. */
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	qinit(&q[2], 2, false);
	tick(&P, q, 3, T0);
	EXPECT(q[1].state == GP_PS_PARKED);
	q[1].parkable = false;
	gp_policy_decide(&P, q, 3, T0 + MS, &r);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_UNMANAGED);
	EXPECT(r.unparks == 1 && r.parks == 0);
	gp_policy_commit(&P, &q[1], true, T0 + MS);
	r = tick(&P, q, 3, T0 + 2 * MS);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0);
}

static void t_disabled(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[4];
	struct gp_policy_result r;
	int i;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	qparked(&q[2], 2, true, T0);
	qparked(&q[3], 1, false, T0);
	q[3].parkable = false;		/* DISABLED wins over UNMANAGED */
	pp.enabled = false;
	gp_policy_decide(&pp, q, 4, T0 + MS, &r);
	EXPECT(q[0].action == GP_ACT_NONE && q[1].action == GP_ACT_NONE);
	EXPECT(q[2].action == GP_ACT_UNPARK && q[2].reason == GP_WHY_DISABLED);
	EXPECT(q[3].action == GP_ACT_UNPARK && q[3].reason == GP_WHY_DISABLED);
	EXPECT(r.parks == 0 && r.unparks == 2 && r.inversion);
	for (i = 0; i < 4; i++)
		gp_policy_commit(&pp, &q[i], true, T0 + MS);
	for (i = 0; i < 50; i++) {
		r = tick(&pp, q, 4, T0 + (2 + i) * MS);
		EXPECT(nparked(q, 4) == 0 && r.parks == 0 && r.unparks == 0);
	}
	pp.enabled = true;		/* enabled again: parks resume */
	r = tick(&pp, q, 4, T0 + 100 * MS);
	EXPECT(q[1].state == GP_PS_PARKED && q[2].state == GP_PS_PARKED && r.parks == 2);
}

static void t_starvation(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[2];
	struct gp_policy_result r;
	u64 t, t_unpark;

	pp.max_suspend_ns = 100 * MS;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	tick(&pp, q, 2, T0);
	EXPECT(q[1].state == GP_PS_PARKED);
	for (t = T0 + MS; t < T0 + pp.max_suspend_ns; t += MS) {
		tick(&pp, q, 2, t);
		EXPECT(q[1].state == GP_PS_PARKED);
	}
	gp_policy_decide(&pp, q, 2, T0 + pp.max_suspend_ns - 1, &r);
	EXPECT(q[1].action == GP_ACT_NONE);
	t_unpark = T0 + pp.max_suspend_ns;
	gp_policy_decide(&pp, q, 2, t_unpark, &r);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_STARVING);
	EXPECT(r.unparks == 1 && r.top_prio[0] == 12);
	gp_policy_commit(&pp, &q[1], true, t_unpark);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].state_since_ns == t_unpark);
	EXPECT(q[1].slice_until_ns == t_unpark + pp.min_slice_ns);
	/* The slice: LC still busy, BE runs with work, not parked. */
	for (t = t_unpark + MS; t < t_unpark + pp.min_slice_ns; t += MS) {
		r = tick(&pp, q, 2, t);
		EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0 && r.inversion);
	}
	r = tick(&pp, q, 2, t_unpark + pp.min_slice_ns - 1);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0);
	gp_policy_decide(&pp, q, 2, t_unpark + pp.min_slice_ns, &r);
	EXPECT(q[1].action == GP_ACT_PARK && q[1].reason == GP_WHY_HIGHER_PENDING);
}

static void t_starvation_unpark_fails(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[2], before;
	struct gp_policy_result r;
	const u64 t1 = T0 + 1000 * MS;

	qinit(&q[0], 12, true);
	qparked(&q[1], 3, true, T0);
	gp_policy_decide(&pp, q, 2, t1, &r);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_STARVING);
	before = q[1];
	gp_policy_commit(&pp, &q[1], false, t1);
	EXPECT(memcmp(&before, &q[1], sizeof(before)) == 0);
	EXPECT(q[1].slice_until_ns == 0);	/* no slice without the unpark */
	gp_policy_decide(&pp, q, 2, t1 + MS, &r);	/* asked again next tick */
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_STARVING);
}

static void t_budget(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[7];
	struct gp_policy_result r;
	int i;

	pp.max_actions = 2;
	qinit(&q[0], 12, true);
	qinit(&q[1], 5, true);		/* parks wanted: 5, 1, 9, 4 */
	qinit(&q[2], 1, true);
	qinit(&q[3], 9, true);
	qinit(&q[4], 4, true);
	qparked(&q[5], 15, false, T0);	/* above the top: ordinary unpark, last */
	qinit(&q[6], 2, false);		/* nothing to do */
	gp_policy_decide(&pp, q, 7, T0 + MS, &r);
	EXPECT(r.parks == 2 && r.unparks == 0 && r.deferred == 3);
	EXPECT(q[2].action == GP_ACT_PARK && q[4].action == GP_ACT_PARK);
	EXPECT(q[1].action == GP_ACT_NONE && q[3].action == GP_ACT_NONE);
	EXPECT(q[1].reason == GP_WHY_NONE && q[5].reason == GP_WHY_NONE);
	EXPECT(q[5].action == GP_ACT_NONE && q[6].action == GP_ACT_NONE);
	EXPECT(q[2].granted && q[4].granted && !q[1].granted && !q[5].granted);
	for (i = 0; i < 7; i++)
		gp_policy_commit(&pp, &q[i], true, T0 + MS);
	r = tick(&pp, q, 7, T0 + 2 * MS);
	EXPECT(r.parks == 2 && r.unparks == 0 && r.deferred == 1);
	EXPECT(q[1].state == GP_PS_PARKED && q[3].state == GP_PS_PARKED);
	r = tick(&pp, q, 7, T0 + 3 * MS);
	EXPECT(r.parks == 0 && r.unparks == 1 && r.deferred == 0);
	EXPECT(q[5].state == GP_PS_RUNNING && q[5].reason == GP_WHY_HIGHER_IDLE);
	r = tick(&pp, q, 7, T0 + 4 * MS);
	EXPECT(r.parks == 0 && r.unparks == 0 && r.deferred == 0 && nparked(q, 7) == 4);
}

static void t_budget_owed_first(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[6];
	struct gp_policy_result r;

	pp.max_actions = 3;
	qinit(&q[0], 12, true);
	qparked(&q[1], 8, true, T0);		/* starving */
	qparked(&q[2], 9, true, T0 + 500 * MS);	/* turns non-parkable */
	q[2].parkable = false;
	qinit(&q[3], 2, true);			/* parks wanted */
	qinit(&q[4], 1, true);
	qparked(&q[5], 20, false, T0 + 900 * MS); /* ordinary unpark */
	gp_policy_decide(&pp, q, 6, T0 + 1000 * MS, &r);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_STARVING);
	EXPECT(q[2].action == GP_ACT_UNPARK && q[2].reason == GP_WHY_UNMANAGED);
	EXPECT(q[4].action == GP_ACT_PARK && q[3].action == GP_ACT_NONE);
	EXPECT(q[5].action == GP_ACT_NONE);
	EXPECT(r.unparks == 2 && r.parks == 1 && r.deferred == 2);
}

static void t_budget_one(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[4];
	struct gp_policy_result r;

	pp.max_actions = 1;
	qinit(&q[0], 12, true);
	qinit(&q[1], 7, true);
	qinit(&q[2], -3, true);
	qinit(&q[3], 0, true);
	r = tick(&pp, q, 4, T0);
	EXPECT(q[2].state == GP_PS_PARKED && nparked(q, 4) == 1 && r.deferred == 2);
	r = tick(&pp, q, 4, T0 + MS);
	EXPECT(q[3].state == GP_PS_PARKED && nparked(q, 4) == 2 && r.deferred == 1);
	r = tick(&pp, q, 4, T0 + 2 * MS);
	EXPECT(q[1].state == GP_PS_PARKED && nparked(q, 4) == 3 && r.deferred == 0);
}

/*
 * The starvation guard is owed to every queue parked for max_suspend, also
 * one whose higher levels went idle meanwhile: its unpark must not wait
 * behind parks (file-top comment of policy.c: "unparks that the guarantees
 * demand (starvation, ...) first, so no stream of parks can starve them").
 */
static void t_budget_starving_idle_above(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[3];
	struct gp_policy_result r;

	pp.max_actions = 1;
	qparked(&q[0], 10, true, T0);	/* parked long ago; now the top level */
	qinit(&q[1], 3, true);		/* a park is wanted below it */
	qinit(&q[2], 2, true);
	gp_policy_decide(&pp, q, 3, T0 + pp.max_suspend_ns, &r);
	EXPECT(r.top_prio[0] == 10);
	EXPECT(q[0].action == GP_ACT_UNPARK);
	EXPECT(q[1].action == GP_ACT_NONE && q[2].action == GP_ACT_NONE);
}

/* The same, over time: a stream of parks and starvation slices below the top
 * keeps the budget busy; the top-level queue must still come back within
 * max_suspend + one tick. */
static void t_stream_of_parks(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[31];
	u64 t, longest = 0;
	u32 i;

	pp.max_actions = 1;
	pp.max_suspend_ns = 10 * MS;
	pp.min_slice_ns = 0;
	qparked(&q[0], 10, true, T0);
	for (i = 1; i < 31; i++)
		qinit(&q[i], (int)i % 5, true);
	for (t = T0 + MS; t < T0 + 1000 * MS && q[0].state == GP_PS_PARKED; t += MS)
		tick(&pp, q, 31, t);
	longest = t - MS - q[0].state_since_ns;
	if (q[0].state == GP_PS_PARKED)
		printf("# top-level queue still parked after %llu ms\n",
		       (unsigned long long)(longest / MS));
	EXPECT(q[0].state == GP_PS_RUNNING);
	EXPECT(longest <= pp.max_suspend_ns + MS);
}

static void t_commit_failed(void)
{
	struct gp_pq q[3], before[3];
	struct gp_policy_result r;
	int i;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	qparked(&q[2], 2, true, T0);
	q[2].parkable = false;
	gp_policy_decide(&P, q, 3, T0 + MS, &r);
	EXPECT(q[1].action == GP_ACT_PARK && q[2].action == GP_ACT_UNPARK);
	memcpy(before, q, sizeof(q));
	for (i = 0; i < 3; i++)
		gp_policy_commit(&P, &q[i], false, T0 + 2 * MS);
	EXPECT(memcmp(before, q, sizeof(q)) == 0);
	/* Next tick decides again, the same. */
	gp_policy_decide(&P, q, 3, T0 + 3 * MS, &r);
	EXPECT(q[1].action == GP_ACT_PARK && q[2].action == GP_ACT_UNPARK);
	/* A commit of "no action" changes nothing either, even ok. */
	gp_policy_decide(&P, q, 3, T0 + 3 * MS, &r);
	memcpy(before, q, sizeof(q));
	gp_policy_commit(&P, &q[0], true, T0 + 4 * MS);
	EXPECT(memcmp(&before[0], &q[0], sizeof(q[0])) == 0);
}

static void t_priorities(void)
{
	struct gp_pq q[6];
	struct gp_policy_result r;

	qinit(&q[0], -100, true);
	qinit(&q[1], -200, true);
	qinit(&q[2], 1000000, false);	/* idle, never busy: not the top */
	gp_policy_decide(&P, q, 3, T0, &r);
	EXPECT((r.top_valid & 1) && r.top_prio[0] == -100);
	EXPECT(q[1].action == GP_ACT_PARK && q[0].action == GP_ACT_NONE);
	EXPECT(q[2].action == GP_ACT_NONE);

	qinit(&q[0], INT_MIN, true);
	qinit(&q[1], INT_MAX, true);
	qinit(&q[2], INT_MAX - 1, true);
	qinit(&q[3], 0, true);
	qinit(&q[4], INT_MIN + 1, true);
	qinit(&q[5], -1, true);
	r = tick(&P, q, 6, T0);
	EXPECT((r.top_valid & 1) && r.top_prio[0] == INT_MAX && r.parks == 5);
	EXPECT(q[1].state == GP_PS_RUNNING && nparked(q, 6) == 5);
	q[1].pending = false;
	r = tick(&P, q, 6, T0 + P.hysteresis_ns);
	EXPECT(r.top_prio[0] == INT_MAX - 1 && q[2].state == GP_PS_RUNNING && nparked(q, 6) == 4);
	/* Only INT_MIN queues busy: they run. */
	q[2].pending = q[3].pending = q[4].pending = q[5].pending = false;
	r = tick(&P, q, 6, T0 + 10 * P.hysteresis_ns);
	EXPECT(r.top_prio[0] == INT_MIN && nparked(q, 6) == 0);
}

static void t_empty(void)
{
	struct gp_pq dummy;
	struct gp_policy_result r;

	qinit(&dummy, 1, true);
	memset(&r, 0xa5, sizeof(r));
	gp_policy_decide(&P, &dummy, 0, T0, &r);
	EXPECT(!(r.top_valid & 1) && !r.inversion && !r.parks && !r.unparks && !r.deferred);
	EXPECT(dummy.action == (enum gp_action)0x5a);	/* untouched */
	gp_policy_decide(&P, NULL, 0, T0, NULL);	/* res may be NULL */
	qinit(&dummy, 1, true);
	gp_policy_decide(&P, &dummy, 1, T0, NULL);
	EXPECT(dummy.action == GP_ACT_NONE && dummy.last_pending_ns == T0);
}

static void t_no_busy_level(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;

	qinit(&q[0], 12, false);
	qparked(&q[1], 3, false, T0);
	qparked(&q[2], 5, true, T0);
	q[2].pending = false;
	gp_policy_decide(&P, q, 3, T0 + MS, &r);
	EXPECT(!(r.top_valid & 1) && !r.inversion);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_HIGHER_IDLE);
	EXPECT(q[2].action == GP_ACT_UNPARK && r.unparks == 2);
}

static void t_hold(void)
{
	struct gp_pq q[2];
	struct gp_policy_params pp = P;
	struct gp_policy_result r;
	u64 now = T0;

	/* Held, alone, idle: parked anyway (no level above it). */
	qinit(&q[0], 3, false);
	q[0].hold = true;
	r = tick(&P, q, 1, now);
	EXPECT(q[0].state == GP_PS_PARKED && q[0].reason == GP_WHY_HELD && r.parks == 1);
	/* Neither the top level nor the starvation guard unparks it. */
	now += 2000 * MS;
	r = tick(&P, q, 1, now);
	EXPECT(q[0].state == GP_PS_PARKED && q[0].action == GP_ACT_NONE && r.unparks == 0);
	/* A higher queue busy then idle: still parked. */
	qinit(&q[1], 12, true);
	tick(&P, q, 2, now += MS);
	q[1].pending = false;
	tick(&P, q, 2, now += 100 * MS);
	EXPECT(q[0].state == GP_PS_PARKED);
	/* Released: the rule takes it back (parked past max_suspend: STARVING). */
	q[0].hold = false;
	r = tick(&P, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING && q[0].reason == GP_WHY_STARVING && r.unparks == 1);
	/* Held but not parkable: unparked (UNMANAGED), never parked. */
	q[0].hold = true;
	tick(&P, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_PARKED);
	q[0].parkable = false;
	tick(&P, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING && q[0].reason == GP_WHY_UNMANAGED);
	tick(&P, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING && q[0].action == GP_ACT_NONE);
	/* Held while disabled: unparked (DISABLED), not parked again. */
	q[0].parkable = true;
	tick(&P, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_PARKED);
	pp.enabled = false;
	tick(&pp, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING && q[0].reason == GP_WHY_DISABLED);
	tick(&pp, q, 2, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING);
}

/*
 * A hold for a disabled gpreempt too (the self-test's own queues): parked
 * and kept parked while disabled, released by its hold only; the queue
 * beside it, below a busy level, is never parked while disabled.
 */
static void t_hold_disabled(void)
{
	struct gp_pq q[3];
	struct gp_policy_params pp = P;
	struct gp_policy_result r;
	u64 now = T0;

	pp.enabled = false;
	qinit(&q[0], 3, true);
	q[0].hold = true;
	q[0].hold_disabled = true;
	qinit(&q[1], 3, true);
	qinit(&q[2], 12, true);
	r = tick(&pp, q, 3, now);
	EXPECT(q[0].state == GP_PS_PARKED && q[0].reason == GP_WHY_HELD && r.parks == 1);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].action == GP_ACT_NONE);
	now += 2000 * MS;
	r = tick(&pp, q, 3, now);
	EXPECT(q[0].state == GP_PS_PARKED && r.unparks == 0 && q[1].state == GP_PS_RUNNING);
	/* hold_disabled without the hold is nothing. */
	q[0].hold = false;
	r = tick(&pp, q, 3, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING && q[0].reason == GP_WHY_DISABLED && r.unparks == 1);
	r = tick(&pp, q, 3, now += MS);
	EXPECT(q[0].state == GP_PS_RUNNING && r.parks == 0);
}

/* LC on device 0 never parks BE on device 1; each device has its own top. */
static void t_per_device(void)
{
	struct gp_policy_result r;
	struct gp_pq q[4];
	u64 now = T0;

	qinit(&q[0], 12, true);		/* LC, dev 0 */
	qinit(&q[1], 3, true);		/* BE, dev 1 */
	q[1].dev = 1;
	r = tick(&P, q, 2, now);
	EXPECT(q[1].state == GP_PS_RUNNING && r.parks == 0 && !r.inversion);
	EXPECT(r.top_valid == 3 && r.top_prio[0] == 12 && r.top_prio[1] == 3);
	EXPECT(r.inversion_devs == 0);

	/* BE of the same process spanning both devices: parked on dev 0 only. */
	qinit(&q[2], 3, true);		/* BE, dev 0 */
	qinit(&q[3], 5, true);		/* higher BE, dev 1: parks q[1] there */
	q[3].dev = 1;
	r = tick(&P, q, 4, now += MS);
	EXPECT(r.inversion && r.inversion_devs == 3 && r.parks == 2);
	EXPECT(q[2].state == GP_PS_PARKED && q[2].reason == GP_WHY_HIGHER_PENDING);
	EXPECT(q[1].state == GP_PS_PARKED && q[0].state == GP_PS_RUNNING &&
	       q[3].state == GP_PS_RUNNING);
	EXPECT(r.top_prio[0] == 12 && r.top_prio[1] == 5);

	/* Device 1's top goes idle past hysteresis: only device 1 unparks. */
	q[3].pending = false;
	tick(&P, q, 4, now += MS);
	r = tick(&P, q, 4, now += 3 * MS);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].reason == GP_WHY_HIGHER_IDLE);
	EXPECT(q[2].state == GP_PS_PARKED && r.unparks == 1 && r.top_prio[1] == 3);
}

/* Out-of-range device indexes share the last slot (arbitrated together). */
static void t_device_clamp(void)
{
	struct gp_policy_result r;
	struct gp_pq q[3];

	qinit(&q[0], 12, true);
	q[0].dev = GP_POLICY_MAX_DEVS - 1;
	qinit(&q[1], 3, true);
	q[1].dev = GP_POLICY_MAX_DEVS;
	qinit(&q[2], 3, true);
	q[2].dev = 0xffffffffu;
	r = tick(&P, q, 3, T0);
	EXPECT(r.parks == 2 && nparked(q, 3) == 2 && r.top_valid == 1ULL << 63);
	EXPECT(r.top_prio[GP_POLICY_MAX_DEVS - 1] == 12);
}

/* Token bucket: burst, refill at the rate, cap, back-off doubling and reset. */
static void t_bucket(void)
{
	struct gp_bucket b = { 0 };
	u64 now = T0;

	EXPECT(gp_bucket_burst(100) == 10 && gp_bucket_burst(5) == 1 && gp_bucket_burst(0) == 1);
	EXPECT(gp_bucket_avail(&b, 100, now) == 10);	/* starts full */
	gp_bucket_take(&b, 100, 10);
	EXPECT(gp_bucket_avail(&b, 100, now) == 0);
	EXPECT(gp_bucket_avail(&b, 100, now += 9 * MS) == 0);
	EXPECT(gp_bucket_avail(&b, 100, now += MS) == 1);	/* 10 ms per action */
	EXPECT(gp_bucket_avail(&b, 100, now += 10 * 1000 * MS) == 10);	/* capped */
	gp_bucket_take(&b, 100, 50);				/* over-charge: empty, no wrap */
	EXPECT(gp_bucket_avail(&b, 100, now) == 0);
	/* Lowering the rate caps the credit at the new burst. */
	EXPECT(gp_bucket_avail(&b, 20, now += 10 * 1000 * MS) == 2);
	/* Back-off: 1 ms, then 2 ms; a success ends it. */
	EXPECT(gp_bucket_result(&b, false, now));
	EXPECT(gp_bucket_avail(&b, 20, now + MS - 1) == 0);
	EXPECT(gp_bucket_avail(&b, 20, now + MS) == 2);
	now += MS;
	EXPECT(gp_bucket_result(&b, false, now) && b.backoff_ns == 2 * MS);
	EXPECT(gp_bucket_avail(&b, 20, now + 2 * MS - 1) == 0);
	EXPECT(!gp_bucket_result(&b, true, now) && b.backoff_ns == 0);
	for (int i = 0; i < 20; i++)
		gp_bucket_result(&b, false, now);
	EXPECT(b.backoff_ns == GP_BACKOFF_MAX_NS);
}

/* Remap budget: a minute's worth, refilled at per_min a minute, no wrap. */
static void t_remap_budget(void)
{
	struct gp_budget b = { 0 };
	u64 now = T0;

	EXPECT(gp_budget_avail(&b, 6000, now) == 6000);	/* starts full */
	gp_budget_take(&b, 6000, 6000);
	EXPECT(gp_budget_avail(&b, 6000, now) == 0);
	EXPECT(gp_budget_avail(&b, 6000, now += 9 * MS) == 0);
	EXPECT(gp_budget_avail(&b, 6000, now += MS) == 1);	/* 10 ms per call */
	EXPECT(gp_budget_avail(&b, 6000, now += 3600 * 1000 * MS) == 6000);	/* capped */
	gp_budget_take(&b, 6000, 100000);			/* over-charge: empty */
	EXPECT(gp_budget_avail(&b, 6000, now) == 0);
	/* 60 a minute: one a second. */
	EXPECT(gp_budget_avail(&b, 60, now += 1000 * MS) == 1);
}

/* Device budgets: each device spends only its own; the rest are throttled. */

/* Shrink: where a park would be, a shrinkable queue is shrunk; it grows back when LC idles. */
static void t_shrink(void)
{
	struct gp_pq q[3];
	struct gp_policy_result r;
	u64 t = T0;

	qinit(&q[0], 12, true);		/* LC */
	qinit(&q[1], 3, true);		/* BE, shrinkable */
	q[1].shrinkable = true;
	qinit(&q[2], 3, true);		/* BE, mask unknown: parked */
	r = tick(&P, q, 3, t);
	EXPECT(q[1].action == GP_ACT_SHRINK && q[1].state == GP_PS_SHRUNK);
	EXPECT(q[2].action == GP_ACT_PARK && q[2].state == GP_PS_PARKED);
	EXPECT(r.shrinks == 1 && r.parks == 1);
	/* Shrunk and pending below LC: no inversion, no action, no starvation guard. */
	t += 2 * P.max_suspend_ns;
	q[2].state_since_ns = t;
	r = tick(&P, q, 3, t);
	EXPECT(q[1].action == GP_ACT_NONE && q[1].state == GP_PS_SHRUNK);
	EXPECT(!r.inversion);
	/* LC idle past the hysteresis: grown back. */
	q[0].pending = false;
	t += P.hysteresis_ns;
	r = tick(&P, q, 3, t);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_HIGHER_IDLE);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].slice_until_ns == 0);
}

/* A shrunk queue that stops being shrinkable, is held, unmanaged or disabled grows back. */
static void t_shrink_exits(void)
{
	struct gp_pq q[2];

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	q[1].state = GP_PS_SHRUNK;
	q[1].state_since_ns = T0;
	tick(&P, q, 2, T0 + MS);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_UNMANAGED);
	/* Not shrinkable any more: the next tick parks it. */
	tick(&P, q, 2, T0 + 2 * MS);
	EXPECT(q[1].action == GP_ACT_PARK && q[1].state == GP_PS_PARKED);

	qinit(&q[1], 3, true);
	q[1].shrinkable = true;
	q[1].hold = true;
	q[1].state = GP_PS_SHRUNK;
	tick(&P, q, 2, T0 + 3 * MS);
	EXPECT(q[1].action == GP_ACT_UNPARK);
	tick(&P, q, 2, T0 + 4 * MS);
	EXPECT(q[1].action == GP_ACT_PARK && q[1].reason == GP_WHY_HELD);

	qinit(&q[1], 3, true);
	q[1].shrinkable = true;
	q[1].state = GP_PS_SHRUNK;
	{
		struct gp_policy_params off = P;

		off.enabled = false;
		tick(&off, q, 2, T0 + 5 * MS);
		EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_DISABLED);
	}
}

/* The CUs a shrunk queue keeps: a prefix of its own mask, or what the masked LC leaves. */
static void t_cu_shrink_mask(void)
{
	u32 base[GP_CU_MASK_WORDS] = { 0 }, avoid[GP_CU_MASK_WORDS] = { 0 };
	u32 out[GP_CU_MASK_WORDS];

	gp_cu_fill(base, 8);
	EXPECT(base[0] == 0xff && base[1] == 0);
	EXPECT(gp_cu_weight(base, 32) == 8);
	EXPECT(gp_cu_shrink_mask(base, 32, NULL, 50, out) == 4 && out[0] == 0x0f);
	EXPECT(gp_cu_shrink_mask(base, 32, NULL, 1, out) == 1 && out[0] == 0x01);
	EXPECT(gp_cu_shrink_mask(base, 32, NULL, 99, out) == 8 && out[0] == 0xff);
	/* Only the owner's CUs, never another: a prefix of its set bits. */
	base[0] = 0xf0;
	EXPECT(gp_cu_shrink_mask(base, 32, NULL, 50, out) == 2 && out[0] == 0x30);
	/* LC masked to 0-3: BE keeps exactly its CUs LC cannot use. */
	gp_cu_fill(base, 8);
	avoid[0] = 0x0f;
	EXPECT(gp_cu_shrink_mask(base, 32, avoid, 50, out) == 4 && out[0] == 0xf0);
	/* LC's mask covers BE's: the share rule. */
	avoid[0] = 0xff;
	EXPECT(gp_cu_shrink_mask(base, 32, avoid, 25, out) == 2 && out[0] == 0x03);
	/* 120 CUs over 4 words; bits past the length ignored. */
	gp_cu_fill(base, 120);
	EXPECT(gp_cu_weight(base, 128) == 120 && base[3] == 0x00ffffff);
	EXPECT(gp_cu_shrink_mask(base, 128, NULL, 50, out) == 60);
	EXPECT(out[0] == 0xffffffff && out[1] == 0x0fffffff && out[2] == 0 && out[3] == 0);
	base[4] = 0xffffffff;
	EXPECT(gp_cu_weight(base, 128) == 120);
	/* An empty mask keeps nothing. */
	memset(base, 0, sizeof(base));
	EXPECT(gp_cu_shrink_mask(base, 32, NULL, 50, out) == 0 && out[0] == 0);
}

static void t_dev_budget(void)
{
	u32 budget[GP_POLICY_MAX_DEVS] = { 1, 0 };
	struct gp_policy_params pp = P;
	struct gp_policy_result r;
	struct gp_pq q[5];
	u64 now = T0;

	pp.dev_budget = budget;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	qinit(&q[2], 2, true);
	qinit(&q[3], 12, true);
	q[3].dev = 1;
	qinit(&q[4], 3, true);
	q[4].dev = 1;
	r = tick(&pp, q, 5, now);
	EXPECT(r.parks == 1 && q[2].state == GP_PS_PARKED && q[1].state == GP_PS_RUNNING);
	EXPECT(q[4].state == GP_PS_RUNNING && r.deferred == 2 && r.throttled == 2);
	EXPECT(budget[0] == 0 && budget[1] == 0);
	/* Budgets back: the rest go; max_actions still applies on top. */
	budget[0] = 5;
	budget[1] = 5;
	pp.max_actions = 1;
	r = tick(&pp, q, 5, now += MS);
	EXPECT(r.parks == 1 && r.deferred == 1 && r.throttled == 0);
	r = tick(&pp, q, 5, now += MS);
	EXPECT(r.parks == 1 && nparked(q, 5) == 3 && budget[0] + budget[1] == 8);
}


/*
 * Tiers: with LC tiers 14/10/6 and BE 3 all busy, only BE (the lowest busy
 * level) is parked; the middle tiers are never parked, whatever the top
 * does, and BE is held across the top's hysteresis as without tiers.
 */
static void t_tiers(void)
{
	struct gp_policy_params pp = P;
	struct gp_policy_result r;
	struct gp_pq q[4];
	const u64 idle = T0 + MS;	/* tier 14 last seen pending */

	pp.tiers = true;
	qinit(&q[0], 14, true);
	qinit(&q[1], 10, true);
	qinit(&q[2], 6, true);
	qinit(&q[3], 3, true);
	r = tick(&pp, q, 4, T0);
	EXPECT(nparked(q, 4) == 1 && q[3].state == GP_PS_PARKED);
	EXPECT(r.top_prio[0] == 14 && r.pend_top[0] == 14 && r.low_prio[0] == 3);
	EXPECT(r.inversion);	/* 10 and 6 run below the top: counted, not parked */
	tick(&pp, q, 4, idle);
	/* 14 goes idle: within its hysteresis BE stays parked. */
	q[0].pending = false;
	tick(&pp, q, 4, idle + MS);
	EXPECT(nparked(q, 4) == 1 && q[3].state == GP_PS_PARKED);
	/* 10 and 6 done too, BE still held until 6's hysteresis ends. */
	q[1].pending = false;
	q[2].pending = false;
	tick(&pp, q, 4, idle + MS + 100 * US);
	EXPECT(q[3].state == GP_PS_PARKED);
	tick(&pp, q, 4, idle + MS + 100 * US + pp.hysteresis_ns);
	EXPECT(nparked(q, 4) == 0);
	/* A middle tier parked before tiers were switched on is given back. */
	qparked(&q[1], 10, true, T0);
	q[0].pending = true;
	gp_policy_decide(&pp, q, 4, idle + 5 * MS, &r);
	EXPECT(q[1].action == GP_ACT_UNPARK && q[1].reason == GP_WHY_HIGHER_IDLE);
	/* Without tiers the same start parks every level below the top. */
	pp.tiers = false;
	qinit(&q[0], 14, true);
	qinit(&q[1], 10, true);
	qinit(&q[2], 6, true);
	qinit(&q[3], 3, true);
	tick(&pp, q, 4, T0);
	EXPECT(nparked(q, 4) == 3 && q[1].state == GP_PS_PARKED);
}

/* Tiers change nothing for two levels: BE is the lowest busy level, held. */
static void t_tiers_two_levels(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[2];
	const u64 idle = T0 + 10 * MS;

	pp.tiers = true;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	tick(&pp, q, 2, T0);
	tick(&pp, q, 2, idle);
	q[0].pending = false;
	tick(&pp, q, 2, idle + pp.hysteresis_ns - 1);
	EXPECT(q[1].state == GP_PS_PARKED);
	tick(&pp, q, 2, idle + pp.hysteresis_ns);
	EXPECT(q[1].state == GP_PS_RUNNING);
}

/*
 * An LC process's copy (SDMA) queue with work makes level 12 busy: BE is
 * parked before LC's kernels arrive; the copy queue itself is never parked
 * nor an inversion, even below a busy level.
 */
static void t_signal_only(void)
{
	struct gp_policy_result r;
	struct gp_pq q[4];

	qinit(&q[0], 12, false);	/* LC compute: nothing yet */
	qinit(&q[1], 12, true);		/* LC copy: the input is on its way */
	q[1].signal_only = true;
	q[1].parkable = false;
	qinit(&q[2], 3, true);		/* BE compute */
	qinit(&q[3], 3, true);		/* BE copy */
	q[3].signal_only = true;
	q[3].parkable = false;
	r = tick(&P, q, 4, T0);
	EXPECT(q[2].state == GP_PS_PARKED && q[2].reason == GP_WHY_HIGHER_PENDING);
	EXPECT(q[0].state == GP_PS_RUNNING && q[1].state == GP_PS_RUNNING);
	EXPECT(q[3].state == GP_PS_RUNNING && q[3].action == GP_ACT_NONE);
	EXPECT(r.parks == 1 && r.top_prio[0] == 12);
	/* Parked BE, pending BE copy below the busy level: no inversion. */
	r = tick(&P, q, 4, T0 + 100 * US);
	EXPECT(!r.inversion && q[3].state == GP_PS_RUNNING);
}


/*
 * HIP streams (long-hip): a producer stream (KFD 0) and a consumer stream
 * (15) of one process that waits on it at a barrier, its null stream (7),
 * beside a BE of another process (7) with a backlog, tiers on (the
 * default).  Each round the producer's work arrives first (parked below
 * BE), then the consumer's barrier: the producer must run while the
 * consumer waits, and as the hardware runs KFD 7 before KFD 0, so must BE be
 * parked (within the hold; in the slice after it BE may run).
 */
static void t_hip_streams(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[4];
	u64 t = T0;
	int round, k, bad = 0, be_ran = 0;

	pp.tiers = true;		/* the module's default */

	qinit(&q[0], 15, false);	/* consumer */
	qinit(&q[1], 0, false);		/* producer */
	qinit(&q[2], 7, false);		/* null stream */
	qinit(&q[3], 7, true);		/* BE, another process */
	q[0].id = 1;
	q[1].id = 2;
	q[2].id = 3;
	q[3].id = 4;
	q[0].group = 1;
	q[1].group = 1;
	q[2].group = 1;
	q[3].group = 2;
	for (round = 0; round < 20; round++) {
		q[1].pending = true;		/* producer's 8 x 5 ms */
		q[3].progressed = q[3].state == GP_PS_RUNNING;
		tick(&pp, q, 4, t += 100 * US);
		q[0].blocked = true;		/* the consumer's barrier */
		for (k = 0; k < 400; k++) {	/* the producer needs 40 ms of run time */
			q[1].progressed = false;
			q[3].progressed = q[3].state == GP_PS_RUNNING;
			tick(&pp, q, 4, t += 100 * US);
			/*
			 * The producer runs at KFD 0 on the hardware: only
			 * with BE (KFD 7) parked does it get CUs.
			 */
			if (q[1].state == GP_PS_PARKED)
				bad++;
			if (k > 0 && k < 20 && q[3].state == GP_PS_RUNNING)
				be_ran++;
		}
		q[1].pending = false;		/* produced */
		q[1].progressed = true;
		tick(&pp, q, 4, t += 100 * US);
		q[1].progressed = false;
		q[0].blocked = false;		/* passed: its kernel */
		q[0].pending = true;
		tick(&pp, q, 4, t += 5 * MS);
		q[0].pending = false;
		q[2].pending = true;		/* the null stream's */
		tick(&pp, q, 4, t += 100 * US);
		q[2].pending = false;
		tick(&pp, q, 4, t += 1250 * US);
	}
	if (bad || be_ran)
		printf("# ticks of the consumer's waits with the producer parked: %d, with BE running (in the first 2 ms): %d\n",
		       bad, be_ran);
	EXPECT(bad == 0 && be_ran == 0);
}

/*
 * The starvation guard under hardware priority: a HIP process's low stream
 * (KFD 0) parked for a BE at the top (KFD 7).  Its slice is run time only with
 * BE parked: kfdsim's CP, like HWS, hands every CU BE has waves for to BE
 * first.  BE is parked for the slice (GP_WHY_YIELD), unparked when it ends.
 */
static void t_slice_yield(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[4];
	struct gp_policy_result r;
	u64 t, t_unpark = 0;
	int low_ran = 0, be_yields = 0, be_unparks = 0;

	pp.tiers = true;
	pp.max_suspend_ns = 100 * MS;
	qinit(&q[0], 7, true);		/* BE, another process: always a backlog */
	qinit(&q[1], 0, true);		/* the low stream's kernel */
	qinit(&q[2], 15, false);	/* the high stream: idle */
	qinit(&q[3], 7, false);		/* the null stream: idle */
	q[0].group = 2;
	q[1].group = q[2].group = q[3].group = 1;
	for (t = T0; t < T0 + 3 * pp.max_suspend_ns; t += MS) {
		/* The hardware: the low stream runs only with BE off the CUs. */
		bool ran = q[1].state == GP_PS_RUNNING && q[0].state != GP_PS_RUNNING;

		r = tick(&pp, q, 4, t);
		if (q[1].reason == GP_WHY_STARVING && !t_unpark)
			t_unpark = t;
		if (q[0].reason == GP_WHY_YIELD) {
			be_yields++;
			EXPECT(t_unpark && t < t_unpark + pp.min_slice_ns);
		}
		if (q[0].reason == GP_WHY_HIGHER_IDLE)
			be_unparks++;
		EXPECT(q[2].state == GP_PS_RUNNING && q[3].state == GP_PS_RUNNING);
		if (ran && q[1].pending && ++low_ran == 5)
			q[1].pending = false;	/* its kernel done */
	}
	if (!low_ran || be_yields != 1 || be_unparks != 1)
		printf("# starving low stream ran %d ticks; BE parked for it %d times, unparked %d\n",
		       low_ran, be_yields, be_unparks);
	EXPECT(low_ran == 5 && be_yields == 1 && be_unparks == 1);
	EXPECT(!q[1].pending && q[0].state == GP_PS_RUNNING && r.parks == 0);
}

/*
 * A slice parks only what is at or below yield_max_prio or the starving
 * queue's own level: never LC above both (its KFD priority above the starving
 * queue's too), nor a middle LC tier; a best-effort middle tier is parked,
 * and unparked when the slice ends.
 */
static void t_slice_spares_lc(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[5];
	u64 t, t_unpark;
	int i;

	pp.tiers = true;
	pp.max_suspend_ns = 100 * MS;
	qinit(&q[0], 12, true);		/* LC */
	qinit(&q[1], 3, true);		/* BE, parked, starving */
	qinit(&q[2], 10, true);		/* an LC tier, KFD 9 */
	qinit(&q[3], 5, true);		/* a best-effort tier, KFD 9 */
	qinit(&q[4], 2, false);		/* a lower BE at KFD 14: idle */
	q[2].hw_prio = 9;
	q[3].hw_prio = 9;
	q[4].hw_prio = 14;
	tick(&pp, q, 5, T0);
	EXPECT(q[1].state == GP_PS_PARKED && nparked(q, 5) == 1);
	for (t = T0 + MS; t < T0 + pp.max_suspend_ns; t += MS)
		tick(&pp, q, 5, t);
	t_unpark = t;
	tick(&pp, q, 5, t_unpark);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].reason == GP_WHY_STARVING);
	tick(&pp, q, 5, t_unpark + MS);
	EXPECT(q[3].state == GP_PS_PARKED && q[3].reason == GP_WHY_YIELD);
	for (t = t_unpark + 2 * MS; t < t_unpark + pp.min_slice_ns; t += MS) {
		if (t == t_unpark + 5 * MS)
			q[4].pending = true;	/* now it has work: parked too */
		tick(&pp, q, 5, t);
		EXPECT(q[0].state == GP_PS_RUNNING && q[2].state == GP_PS_RUNNING);
		EXPECT(q[1].state == GP_PS_RUNNING && q[3].state == GP_PS_PARKED);
		EXPECT(t <= t_unpark + 5 * MS || q[4].state == GP_PS_PARKED);
	}
	tick(&pp, q, 5, t_unpark + pp.min_slice_ns);
	EXPECT(q[3].state == GP_PS_RUNNING && q[3].reason == GP_WHY_HIGHER_IDLE);
	/* Tiers: the lowest busy level is now 2, held for LC; BE (3) a middle tier. */
	EXPECT(q[4].state == GP_PS_PARKED && q[1].state == GP_PS_RUNNING);
	for (i = 0; i < 5; i++)
		EXPECT(q[i].slice_left_ns == 0);
}

/*
 * Two slices that begin together (tiers off: both parked by one LC burst):
 * the one the hardware runs first is parked for the other's, then unparked
 * for the rest of its own; the next cycle's slices no longer overlap.
 */
static void t_slice_left(void)
{
	struct gp_policy_params pp = P;
	struct gp_pq q[3];
	u64 t, t1, t2 = 0;

	pp.max_suspend_ns = 100 * MS;
	qinit(&q[0], 12, true);		/* LC, busy throughout */
	qinit(&q[1], 3, true);		/* BE at KFD 0 */
	qinit(&q[2], 3, true);		/* BE at KFD 5 */
	q[2].hw_prio = 5;
	tick(&pp, q, 3, T0);
	EXPECT(nparked(q, 3) == 2);
	t1 = T0 + pp.max_suspend_ns;
	tick(&pp, q, 3, t1);
	EXPECT(q[1].reason == GP_WHY_STARVING && q[2].reason == GP_WHY_STARVING);
	tick(&pp, q, 3, t1 + MS);
	EXPECT(q[2].state == GP_PS_PARKED && q[2].reason == GP_WHY_YIELD);
	EXPECT(q[2].slice_left_ns == pp.min_slice_ns - MS && q[1].state == GP_PS_RUNNING);
	for (t = t1 + 2 * MS; t <= t1 + pp.min_slice_ns + MS; t += MS) {
		tick(&pp, q, 3, t);
		if (q[2].state == GP_PS_RUNNING && !t2) {
			t2 = t;
			EXPECT(q[2].reason == GP_WHY_STARVING);
			EXPECT(q[2].slice_until_ns == t + pp.min_slice_ns - MS);
			EXPECT(q[1].state == GP_PS_PARKED);
		}
	}
	EXPECT(t2 == t1 + pp.min_slice_ns);
	/* Its slice runs; it is parked when it ends. */
	for (t = t2 + MS; t < t2 + pp.min_slice_ns - MS; t += MS) {
		tick(&pp, q, 3, t);
		EXPECT(q[2].state == GP_PS_RUNNING && q[1].state == GP_PS_PARKED);
	}
	tick(&pp, q, 3, t2 + pp.min_slice_ns - MS);
	EXPECT(q[2].state == GP_PS_PARKED && nparked(q, 3) == 2);
}

static u32 rnd(u32 k);

/*
 * The learned hold.  LC (q[0]) and BE (q[1], with a backlog) on one device,
 * a scan every 100 us: LC has work for @busy_us, then none for each gap of
 * @gaps in turn.  Returns BE's unparks in the gaps; *@t is the clock.
 */
static int run_gaps(const struct gp_policy_params *pp, struct gp_pq *q, u64 *t,
		    const u32 *gaps_us, int n, u32 busy_us)
{
	int k, unparks = 0;
	u64 end;

	for (k = 0; k < n; k++) {
		q[0].pending = true;
		for (end = *t + busy_us * US; *t < end; *t += 100 * US)
			tick(pp, q, 2, *t);
		q[0].pending = false;
		for (end = *t + gaps_us[k] * US; *t < end; *t += 100 * US)
			unparks += tick(pp, q, 2, *t).unparks;
	}
	return unparks;
}

/* Defaults as in make bench x10: a 5 ms hysteresis, a 1 ms payback. */
static struct gp_policy_params learn_pp(void)
{
	struct gp_policy_params pp = P;

	pp.hysteresis_ns = 5 * MS;
	pp.hold_payback_ns = MS;
	return pp;
}

/*
 * LC requests 20 ms apart, each gap paying many times over for a park and
 * an unpark: after GP_HOLD_MIN_GAPS gaps BE is unparked at the first idle
 * scan; before, only after the whole hysteresis; and LC's next work still
 * parks it at once.
 */
static void t_hold_learn_long_gaps(void)
{
	struct gp_policy_params pp = learn_pp();
	u32 gaps[GP_HOLD_MIN_GAPS + 2];
	struct gp_pq q[2];
	u64 t = T0, idle;
	int k;

	for (k = 0; k < GP_HOLD_MIN_GAPS + 2; k++)
		gaps[k] = 20000;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	run_gaps(&pp, q, &t, gaps, GP_HOLD_MIN_GAPS - 1, 1000);
	EXPECT(q[0].ngaps == GP_HOLD_MIN_GAPS - 2 && q[0].hold_ns == 0);
	EXPECT(gp_policy_hold(&pp, &q[0]) == pp.hysteresis_ns);
	/* Still learning: the whole hysteresis. */
	q[0].pending = true;
	tick(&pp, q, 2, t);
	q[0].pending = false;
	idle = t;
	for (t += 100 * US; t < idle + pp.hysteresis_ns; t += 100 * US) {
		tick(&pp, q, 2, t);
		EXPECT(q[1].state == GP_PS_PARKED);
	}
	run_gaps(&pp, q, &t, gaps, 3, 1000);
	EXPECT(q[0].ngaps >= GP_HOLD_MIN_GAPS && q[0].hold_ns == 1);
	EXPECT(gp_policy_hold(&pp, &q[0]) == 1);
	/* Learned: BE runs from the first idle scan. */
	q[0].pending = true;
	tick(&pp, q, 2, t);
	EXPECT(q[1].state == GP_PS_PARKED);
	q[0].pending = false;
	t += 100 * US;
	tick(&pp, q, 2, t);
	EXPECT(q[1].state == GP_PS_RUNNING && q[1].reason == GP_WHY_HIGHER_IDLE);
	q[0].pending = true;
	t += 100 * US;
	tick(&pp, q, 2, t);
	EXPECT(q[1].state == GP_PS_PARKED);
}

/*
 * Requests of four launches 300 us apart (the CPU between dependent
 * launches), 30 ms between requests: the hold bridges the launches' gaps
 * and no more (BE parked through them, unparked within 0.6 ms of the end
 * of a request, where the hysteresis alone would take 5 ms).
 */
static void t_hold_learn_bimodal(void)
{
	static const u32 req[] = { 300, 300, 300, 30000 };
	struct gp_policy_params pp = learn_pp();
	struct gp_pq q[2];
	u64 t = T0, idle;
	int k, unparks = 0;

	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	for (k = 0; k < 6; k++)
		run_gaps(&pp, q, &t, req, 4, 500);
	/* A 300 us gap spans 400 us between the scans that see it. */
	EXPECT(q[0].hold_ns > 400 * US && q[0].hold_ns <= 600 * US);
	for (k = 0; k < 3; k++) {
		unparks += run_gaps(&pp, q, &t, req, 3, 500);
		run_gaps(&pp, q, &t, &req[3], 1, 500);
	}
	EXPECT(unparks == 0);
	q[0].pending = true;
	tick(&pp, q, 2, t);
	q[0].pending = false;
	idle = t;
	while (q[1].state == GP_PS_PARKED && t < idle + 10 * MS) {
		t += 100 * US;
		tick(&pp, q, 2, t);
	}
	EXPECT(q[1].state == GP_PS_RUNNING && t - idle <= 600 * US);
}

/*
 * Gaps that never pay (all under the payback), one long gap among short
 * ones, and learning off: the hold stays the hysteresis.  A gap spent at a
 * barrier is not learned.
 */
static void t_hold_learn_none(void)
{
	struct gp_policy_params pp = learn_pp(), off = learn_pp();
	u32 gaps[12];
	struct gp_pq q[2];
	u64 t = T0;
	int k;

	for (k = 0; k < 12; k++)
		gaps[k] = 400 + 50 * k;		/* 0.4 to 0.95 ms: under 1 ms */
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	run_gaps(&pp, q, &t, gaps, 12, 500);
	EXPECT(q[0].ngaps == 11 && q[0].hold_ns == 0);
	EXPECT(gp_policy_hold(&pp, &q[0]) == pp.hysteresis_ns);

	/* Short gaps and one long one (its submitter once waited for a CPU). */
	for (k = 0; k < 16; k++)
		gaps[k % 12] = k == 9 ? 30000 : 200;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	run_gaps(&pp, q, &t, gaps, 12, 500);
	run_gaps(&pp, q, &t, gaps, 4, 500);
	EXPECT(q[0].ngaps == 15 && q[0].hold_ns == 0);

	off.hold_payback_ns = 0;
	for (k = 0; k < 12; k++)
		gaps[k] = 20000;
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	run_gaps(&off, q, &t, gaps, 12, 500);
	EXPECT(q[0].ngaps == 0 && gp_policy_hold(&off, &q[0]) == off.hysteresis_ns);

	/* At a barrier (blocked, not pending) between its work: no gap. */
	qinit(&q[0], 12, true);
	qinit(&q[1], 3, true);
	for (k = 0; k < 12; k++) {
		q[0].pending = true;
		q[0].blocked = false;
		tick(&pp, q, 2, t);
		t += MS;
		q[0].pending = false;
		q[0].blocked = true;
		tick(&pp, q, 2, t);
		t += 20 * MS;
	}
	EXPECT(q[0].ngaps == 0 && q[0].hold_ns == 0);
}

/*
 * Property, on random gap streams: the learned hold is never above the
 * hysteresis; when set, at least half of the recorded gaps longer than it
 * went on for the payback more, and no shorter candidate (none, or a
 * quarter past a recorded gap) did.
 */
static void t_hold_learn_property(void)
{
	int round, bad = 0, learned = 0;

	for (round = 0; round < 3000; round++) {
		struct gp_policy_params pp = P;
		struct gp_pq q[2];
		u32 gaps[24];
		u64 t = T0, h, c;
		u32 j, i, longer, pays, n = 8 + rnd(17);

		pp.hysteresis_ns = (1 + rnd(8)) * MS;
		pp.hold_payback_ns = (1 + rnd(4)) * 500 * US;
		for (j = 0; j < n; j++)
			gaps[j] = rnd(4) ? 200 + rnd(1500) : 1000 + rnd(30000);
		qinit(&q[0], 12, true);
		qinit(&q[1], 3, true);
		run_gaps(&pp, q, &t, gaps, (int)n, 300);
		h = gp_policy_hold(&pp, &q[0]);
		if (h > pp.hysteresis_ns) {
			bad++;
			continue;
		}
		if (!q[0].hold_ns)
			continue;
		learned++;
		h = q[0].hold_ns == 1 ? 0 : q[0].hold_ns / US;
		for (i = 0; i <= q[0].ngaps; i++) {
			c = i == q[0].ngaps ? 0 : q[0].gaps_us[i] + q[0].gaps_us[i] / 4 + 1;
			if (c > h)
				continue;
			longer = pays = 0;
			for (j = 0; j < q[0].ngaps; j++) {
				longer += q[0].gaps_us[j] > c;
				pays += q[0].gaps_us[j] >= c + pp.hold_payback_ns / US;
			}
			if ((c == h) != (longer >= GP_HOLD_MIN_LONGER && 2 * pays >= longer))
				bad++;
		}
	}
	printf("# %d of 3000 random streams learned a shorter hold\n", learned);
	EXPECT(bad == 0 && learned > 300 && learned < 2950);
}

/*
 * gp_hold_until() as it was, a loop over the snapshot inside a loop over it:
 * the reference policy/sleep.c's one pass must match.
 */
static u64 sleep_reference(int n, const struct gp_pq *q, const bool *gone, const int *maxprio,
			   const struct gp_policy_params *pp, u64 t0)
{
	u64 dev_end[GP_POLICY_MAX_DEVS] = { 0 };
	u64 parked = 0, until = ~0ULL, end;
	int i, j;
	u32 d;

	for (i = 0; i < n; i++)
		if (!gone[i] && q[i].state != GP_PS_RUNNING)
			parked |= 1ULL << q[i].dev;
	if (!parked)
		return 0;
	for (i = 0; i < n; i++) {
		const struct gp_pq *e = &q[i];
		bool dp;

		d = e->dev;
		dp = parked & (1ULL << d);
		if (gone[i])
			continue;
		if (e->state == GP_PS_RUNNING &&
		    (e->prio < maxprio[d] ? (e->pending || e->blocked || e->unknown || e->progressed) :
		     dp && (e->pending || e->blocked || e->unknown || e->hold)))
			return 0;
		if (e->state == GP_PS_PARKED && !e->hold) {
			end = e->state_since_ns + pp->max_suspend_ns;
			until = end < until ? end : until;
			continue;
		}
		if (e->state != GP_PS_RUNNING || !dp || e->prio < maxprio[d] || !e->last_pending_ns)
			continue;
		end = e->last_pending_ns +
		      (pp->hold_payback_ns && e->hold_ns ? e->hold_ns : pp->hysteresis_ns);
		dev_end[d] = end > dev_end[d] ? end : dev_end[d];
		for (j = 0; j < n; j++)
			if (e->group && q[j].group == e->group && q[j].dev == d &&
			    q[j].state != GP_PS_RUNNING)
				return 0;
	}
	for (d = 0; d < GP_POLICY_MAX_DEVS; d++) {
		if (!(parked & (1ULL << d)))
			continue;
		if (dev_end[d] <= t0)
			return 0;
		until = dev_end[d] < until ? dev_end[d] : until;
	}
	return until;
}

static u64 rnd_state = 88172645463325252ULL;

static u32 rnd(u32 k)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (u32)(rnd_state >> 11) % k;
}

/*
 * Property: on random snapshots (each group's queues together, groups in
 * any order, gone queues among them), the one pass gives what the nested
 * loops gave; enough of them sleep, and the group rule decides some.
 */
static void t_sleep_matches_reference(void)
{
	static const enum gp_pstate st[] = { GP_PS_RUNNING, GP_PS_RUNNING, GP_PS_PARKED,
					     GP_PS_SHRUNK };
	u64 t0 = 100 * MS;
	int round, sleeps = 0, by_group = 0, bad = 0;

	for (round = 0; round < 200000; round++) {
		struct gp_policy_params pp = P;
		struct gp_pq q[16];
		bool gone[16];
		int maxprio[GP_POLICY_MAX_DEVS] = { 0 };
		int n = 0, g, k, i, ngroups = rnd(5);
		struct gp_sleep s;
		u64 want, got;

		pp.hysteresis_ns = (1 + rnd(4)) * MS;
		pp.hold_payback_ns = rnd(2) ? MS : 0;
		pp.max_suspend_ns = (1 + rnd(200)) * MS;
		for (i = 0; i < GP_POLICY_MAX_DEVS; i++)
			maxprio[i] = (int)rnd(3);
		for (g = 0; g < ngroups; g++) {
			u64 group = rnd(4) ? 0x1000 + (u64)g * 0x40 : 0;

			for (k = 1 + rnd(4); k > 0 && n < 16; k--, n++) {
				memset(&q[n], 0, sizeof(q[n]));
				q[n].group = group;
				q[n].dev = rnd(3);
				q[n].prio = (int)rnd(3);
				q[n].state = st[rnd(4)];
				q[n].pending = !rnd(16);
				q[n].blocked = !rnd(24);
				q[n].unknown = !rnd(24);
				q[n].progressed = !rnd(16);
				q[n].hold = !rnd(12);
				q[n].state_since_ns = t0 - rnd(150) * MS;
				q[n].last_pending_ns = rnd(4) ? t0 - rnd(5) * MS : 0;
				q[n].hold_ns = rnd(2) ? rnd(3) * MS : 0;
				gone[n] = !rnd(8);
			}
		}
		want = sleep_reference(n, q, gone, maxprio, &pp, t0);
		gp_sleep_init(&s, maxprio);
		for (i = 0; i < n; i++)
			gp_sleep_add(&s, &pp, &q[i], gone[i]);
		got = gp_sleep_until(&s, t0);
		if (got != want && bad++ < 5)
			tap_diag("round %d, %d queues: one pass %llu, reference %llu", round, n,
				 (unsigned long long)got, (unsigned long long)want);
		sleeps += want != 0;
		if (!want) {
			/* Would it sleep without the group rule? */
			for (i = 0; i < n; i++)
				q[i].group = 0;
			by_group += sleep_reference(n, q, gone, maxprio, &pp, t0) != 0;
		}
	}
	tap_diag("200000 snapshots: %d sleep, %d kept awake by the group rule, %d differ", sleeps,
		 by_group, bad);
	EXPECT(bad == 0);
	EXPECT(sleeps > 400 && by_group > 400);
}

/*
 * S5-2: a process parked only as a whole (eviction): BE's working queue at 3
 * is wanted parked below LC at 12; its idle queue above it (at 4 or 11) is
 * not (it has no work) and must not keep the process running.  A queue of
 * it with work the policy keeps running (at the top, a provider) does, and
 * so does an idle one at or above the top (the policy would unpark it, and
 * the process, at the next tick).
 */
static void t_proc_park_idle_above(void)
{
	struct gp_policy_result r;
	struct gp_pq q[3];
	int prio;

	for (prio = 4; prio <= 15; prio++) {
		qinit(&q[0], 12, true);
		q[0].group = 1;
		qinit(&q[1], 3, true);
		q[1].group = 2;
		qinit(&q[2], prio, false);	/* idle, above the working queue */
		q[2].group = 2;
		gp_policy_decide(&P, q, 3, T0, &r);
		EXPECT(q[1].wanted == GP_ACT_PARK);
		EXPECT(q[2].wanted == GP_ACT_NONE);
		EXPECT(gp_policy_goes_along(&P, &r, &q[1], T0));
		EXPECT(gp_policy_goes_along(&P, &r, &q[2], T0) == (prio < 12));
	}
	/* With work at LC's level it is not parked, and keeps its process. */
	qinit(&q[2], 12, true);
	q[2].group = 2;
	gp_policy_decide(&P, q, 3, T0, &r);
	EXPECT(q[1].wanted == GP_ACT_PARK && q[2].wanted == GP_ACT_NONE);
	EXPECT(!gp_policy_goes_along(&P, &r, &q[2], T0));
	/* Work at a lower level, not yet parked (its wait at a barrier): kept. */
	qinit(&q[2], 7, false);
	q[2].group = 2;
	q[2].blocked = true;
	gp_policy_decide(&P, q, 3, T0, &r);
	EXPECT(q[2].wanted == GP_ACT_NONE && !gp_policy_goes_along(&P, &r, &q[2], T0));
	/* Unreadable ids at 7: parked like work below the top, so it goes. */
	qinit(&q[2], 7, false);
	q[2].group = 2;
	q[2].unknown = true;
	gp_policy_decide(&P, q, 3, T0, &r);
	EXPECT(q[2].wanted == GP_ACT_PARK && gp_policy_goes_along(&P, &r, &q[2], T0));
	/* Parked and kept parked: goes; parked at the top (unparked now): not. */
	qparked(&q[2], 7, false, T0);
	q[2].group = 2;
	gp_policy_decide(&P, q, 3, T0, &r);
	EXPECT(q[2].wanted == GP_ACT_NONE && gp_policy_goes_along(&P, &r, &q[2], T0));
	qparked(&q[2], 12, false, T0);
	q[2].group = 2;
	gp_policy_decide(&P, q, 3, T0, &r);
	EXPECT(q[2].wanted == GP_ACT_UNPARK && !gp_policy_goes_along(&P, &r, &q[2], T0));
	/* A provider (idle now): kept. */
	qinit(&q[2], 7, false);
	q[2].inherited = true;
	q[2].inherit_prio = 12;
	EXPECT(!gp_policy_goes_along(&P, &r, &q[2], T0));
}

/*
 * S5-2 with tiers (the default): the idle queue at 7 sits between the
 * lowest busy level (BE's working queue at 3) and LC at 12.  Taken along by
 * its process's park, it stays parked while idle (else its unpark restores
 * the process at the next tick: a park and an unpark per tick), and is
 * unparked, as a tier, once it has work.
 */
static void t_proc_park_idle_tier(void)
{
	struct gp_policy_params pp = P;
	struct gp_policy_result r;
	struct gp_pq q[3];
	u64 t = T0;
	int i;

	pp.tiers = true;
	qinit(&q[0], 12, true);
	q[0].group = 1;
	qinit(&q[1], 3, true);
	q[1].group = 2;
	qinit(&q[2], 7, false);
	q[2].group = 2;
	gp_policy_decide(&pp, q, 3, t, &r);
	EXPECT(q[1].wanted == GP_ACT_PARK && q[2].wanted == GP_ACT_NONE);
	EXPECT(gp_policy_goes_along(&pp, &r, &q[1], t) && gp_policy_goes_along(&pp, &r, &q[2], t));
	/* The eviction parked both (as apply.c commits a process's queues). */
	q[2].action = GP_ACT_PARK;
	for (i = 1; i < 3; i++)
		gp_policy_commit(&pp, &q[i], true, t);
	for (i = 0; i < 50; i++) {
		t += 1 * MS;
		gp_policy_decide(&pp, q, 3, t, &r);
		EXPECT(q[1].wanted == GP_ACT_NONE && q[2].wanted == GP_ACT_NONE);
	}
	EXPECT(nparked(q, 3) == 2);
	/* Work at 7: a middle tier, unparked (its process with it). */
	q[2].pending = true;
	t += 1 * MS;
	gp_policy_decide(&pp, q, 3, t, &r);
	EXPECT(q[2].wanted == GP_ACT_UNPARK);
}

static const struct tap_test tests[] = {
	{ "single level: never parked", t_single_level },
	{ "LC(12) + BE(3) pending: BE parked (HIGHER_PENDING), LC not", t_lc_parks_be },
	{ "BE parked stays parked while LC busy", t_be_stays_parked },
	{ "LC idle less than hysteresis: BE still parked", t_hysteresis },
	{ "LC idle past hysteresis: BE unparked (HIGHER_IDLE)", t_past_hysteresis },
	{ "hysteresis 0: unparked on the first idle scan", t_zero_hysteresis },
	{ "F11: a BE running one long kernel on early-rptr firmware is parked within dispatch_window_ns", t_dispatch_window },
	{ "three levels: top runs, both lower parked; top drains, middle runs", t_three_levels },
	{ "idle lower queue not parked (parked once it has work)", t_idle_lower_not_parked },
	{ "S4-3: a queue at a barrier holds its level for the hysteresis, releases it for one slice, then holds it again", t_blocked_releases_level },
	{ "F10: the producer a barrier waited on (same process) is not parked for it; another process's BE is", t_provider_not_parked },
	{ "S4-3: a BE of another process that runs during LC's barrier waits is parked within one tick after each pass", t_other_process_not_provider },
	{ "S4-3: a barrier past hysteresis + slice: other processes parked, the waiter's own producer not", t_blocked_long },
	{ "S4-3: a barrier that holds for seconds releases its level for a slice in every cycle, never only through the starvation guard", t_blocked_releases_again },
	{ "a barrier no provider of its own process feeds: its level is released after one cycle (BE parked at most twice in 1 s), parked again within a tick once it passes", t_blocked_unfed_releases },
	{ "F10: a provider that completed nothing at the next barrier is dropped", t_provider_dropped },
	{ "tiers, HIP streams: a BE above the waiter's producer in hardware (7 > its KFD 0) is parked while the consumer waits", t_hip_streams },
	{ "F10: providers only below the dependent, on its device, in its process", t_provider_scope },
	{ "S4-12: a queue with unreadable dispatch ids is parked below a busy level, never makes its level busy", t_unknown_parked },
	{ "S4-12: a lower queue whose read index moves is parked, without pending work", t_progress_is_work },
	{ "S4-12: a lower queue at a barrier is parked once the wait outlasts hysteresis + slice", t_blocked_lower_parked_late },
	{ "F11: a lower queue pending within the hysteresis is parked (early-rptr firmware)",
	  t_recently_pending_parked },
	{ "queues at the top level never parked, unparked if parked", t_equal_priority_never_parked },
	{ "parkable=false: never parked, unparked if parked (UNMANAGED)", t_non_parkable },
	{ "enabled=false: unpark all (DISABLED), park none", t_disabled },
	{ "starvation guard: unpark at max_suspend (STARVING), no park within min_slice", t_starvation },
	{ "starvation unpark failed: no slice, asked again", t_starvation_unpark_fails },
	{ "starvation guard, HIP streams: a BE at the top that the hardware runs first (KFD 7 > the low stream's 0) is parked for the slice (YIELD), unparked after", t_slice_yield },
	{ "starvation guard: a slice parks best-effort queues the hardware runs first, never LC or an LC tier above it", t_slice_spares_lc },
	{ "starvation guard: of two slices begun together, the one parked for the other gets the rest of its own after", t_slice_left },
	{ "budget: parks before unparks, lowest priority first, deferred count", t_budget },
	{ "budget: owed unparks (STARVING, UNMANAGED) before parks", t_budget_owed_first },
	{ "budget 1: one park per tick, lowest priority first", t_budget_one },
	{ "budget: starving queue above an idle level goes before parks", t_budget_starving_idle_above },
	{ "budget: stream of parks does not starve a parked top-level queue", t_stream_of_parks },
	{ "commit ok=false (and no action) changes nothing", t_commit_failed },
	{ "negative, INT_MIN and INT_MAX priorities", t_priorities },
	{ "n=0: nothing to do, res may be NULL", t_empty },
	{ "no busy level: every parked queue unparked", t_no_busy_level },
	{ "per device: LC on dev 0 never parks BE on dev 1; spanning BE parked where contended", t_per_device },
	{ "device index past GP_POLICY_MAX_DEVS shares the last slot", t_device_clamp },
	{ "token bucket: burst, refill, cap, back-off doubles to its cap and ends on success", t_bucket },
	{ "remap budget: a minute's worth, refilled at remap_budget a minute, capped, no wrap", t_remap_budget },
	{ "device budgets: spent per device, the rest throttled; max_actions on top", t_dev_budget },
	{ "hold: parked until released (not by levels or starvation); disabled/unparkable win", t_hold },
	{ "hold for a disabled gpreempt too: parked and kept while disabled, nothing else parked", t_hold_disabled },
	{ "tiers: only the lowest busy level (BE) is parked; middle tiers never", t_tiers },
	{ "tiers: with two levels BE is held across the hysteresis as before", t_tiers_two_levels },
	{ "signal-only (SDMA) queue: its copy makes its level busy; never parked, no inversion", t_signal_only },
	{ "shrink: shrinkable BE shrunk (no guard, no inversion), grown back when LC idles", t_shrink },
	{ "shrink: not shrinkable, held or disabled: grown back (then parked if wanted)", t_shrink_exits },
	{ "CU masks: shrink keeps a prefix of the owner's CUs, or what a masked LC leaves", t_cu_shrink_mask },
	{ "learned hold: gaps that pay: BE unparked at the first idle scan (after GP_HOLD_MIN_GAPS), parked again at LC's work", t_hold_learn_long_gaps },
	{ "learned hold: launches 300 us apart within requests 30 ms apart: bridged, and unparked within 0.6 ms of a request's end", t_hold_learn_bimodal },
	{ "learned hold: gaps under the payback, one long gap among short ones, learning off, gaps at a barrier: the hysteresis", t_hold_learn_none },
	{ "learned hold, random gaps: never above the hysteresis, the shortest candidate that pays", t_hold_learn_property },
	{ "sleep through a hold: one pass over the snapshot equals the nested loops on random snapshots", t_sleep_matches_reference },
	{ "S5-2: a whole-process park takes the process's idle queues below the busy top along, whatever their level; a queue with work kept running keeps it", t_proc_park_idle_above },
	{ "S5-2, tiers: an idle queue between the lowest busy level and the top, taken along, stays parked while idle; unparked once it has work", t_proc_park_idle_tier },
};

int main(void)
{
	return tap_run(tests, (int)(sizeof(tests) / sizeof(tests[0])));
}
