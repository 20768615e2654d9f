// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_policy - property test of module/policy/policy.c.
 *
 * A seeded PRNG drives many ticks of random scenarios: 1..64 queues, random
 * (also negative and extreme) priorities, random pending patterns, some
 * queues not parkable, some shrinkable (shrunk where they would be parked,
 * no starvation bound for them), random parameter sets (changed now and then within a
 * scenario too), random backend failures (gp_policy_commit(ok=false)) and
 * random tick lengths, queues whose dispatch ids are unreadable (S4-12:
 * never pending, parked below a busy level) and queues whose read index
 * moves without pending work (S4-12: work for a park, not for a level),
 * hardware priorities that differ from the levels now and then (a queue the
 * hardware runs before a starving one is parked for its slice).
 * Every tick is checked against a model written from
 * the rule in policy.c's file-top comment, kept independently of the
 * policy-owned fields, plus the invariants below.  Each invariant family is
 * one TAP line with the number of checks made; the first violation stops
 * the run and prints the seed, the tick and the queues.
 *
 *   fuzz_policy [seed] [ticks]        (defaults: 20261122, 200000)
 *
 * Build (without make):
 *   gcc -O2 -g -Wall -Wextra -Werror -fsanitize=address,undefined -I module \
 *       -o build/fuzz_policy test/unit/fuzz_policy.c module/policy/policy.c module/policy/rate.c
 * Coverage-guided, with libFuzzer (the input bytes drive the random choices):
 *   clang -O1 -g -fsanitize=fuzzer,address,undefined -DGP_LIBFUZZER -I module \
 *       -o build/fuzz_policy_lf test/unit/fuzz_policy.c module/policy/policy.c module/policy/rate.c
 *   build/fuzz_policy_lf -max_total_time=60
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "tap.h"

#define MAXQ 64
#define MAXDEV 4		/* devices per scenario: 1..MAXDEV (plus an out-of-range index) */
#define US 1000ULL
#define MS 1000000ULL

/* ---- random source: PRNG, or the fuzzer's bytes first ------------------- */

static unsigned long long rng;
static const uint8_t *fz_data;
static size_t fz_left;

static unsigned int rnd(unsigned int n)
{
	unsigned int v;

	if (fz_left >= 2) {
		v = (unsigned int)fz_data[0] << 8 | fz_data[1];
		fz_data += 2;
		fz_left -= 2;
		return n ? v % n : 0;
	}
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	v = (unsigned int)(rng >> 33);
	return n ? v % n : 0;
}

/* ---- invariant families ------------------------------------------------- */

enum fam {
	F_TOP,		/* top level and inversion as the rule defines them */
	F_PARK_TOP,	/* no new park at or above the top busy level */
	F_PARK_WHO,	/* park only busy (pending or within hysteresis), progressed within it or unknown; parkable, running, below-top, enabled */
	F_UNPARK_WHO,	/* unparks: only parked queues, with the rule's reason */
	F_WANTED,	/* every wanted action is emitted or counted as deferred */
	F_BUDGET,	/* actions <= max_actions; parks/unparks/deferred counts */
	F_ORDER,	/* budget order: owed unparks, parks, idle unparks; low prio first */
	F_COMMIT,	/* commit flips state on success, changes nothing on failure */
	F_SLICE,	/* no park within min_slice after a starvation unpark */
	F_STARVE,	/* parked at most max_suspend + one tick (successful backend) */
	F_QUIET,	/* all idle past hysteresis (+ budget ticks): nothing parked */
	F_DISABLED,	/* disabled: no park; parked queues back within budget ticks */
	F_YIELD,	/* a slice has no lower, hardware-first queue with work running beside it */
	F_NR
};

static const char *const fam_name[F_NR] = {
	[F_TOP] = "top level and inversion follow the rule",
	[F_PARK_TOP] = "no queue at or above the top busy level is parked",
	[F_PARK_WHO] = "park only busy (pending or recently), progressing or unknown, parkable, running, below-top queues, when enabled",
	[F_UNPARK_WHO] = "unpark only parked queues, with the rule's reason",
	[F_WANTED] = "every action the rule wants is emitted or deferred",
	[F_BUDGET] = "actions <= max_actions; parks, unparks, deferred counted right",
	[F_ORDER] = "budget order: owed unparks, parks, idle unparks; lowest priority first",
	[F_COMMIT] = "commit: state flips on success, nothing changes on failure",
	[F_SLICE] = "no park within min_slice after a starvation unpark",
	[F_STARVE] = "starvation bound: parked at most max_suspend + one tick",
	[F_QUIET] = "idle past hysteresis + budget ticks: nothing stays parked",
	[F_DISABLED] = "disabled: nothing parked, parked queues come back",
	[F_YIELD] = "a queue in its starvation slice has no queue at or below its level that the hardware runs first running with work beside it",
};

struct stats {
	unsigned long checks[F_NR];
	const char *fail_what;
	enum fam fail_fam;
	unsigned long long fail_seed;
	long fail_tick;
	unsigned long parks, unparks, starving, idle, failures, excused, scenarios;
	u64 max_overshoot;	/* longest park past max_suspend, % of that tick */
};

/* ---- the model: the rule, kept apart from the policy-owned fields ------- */

enum want { W_NONE, W_OWED, W_PARK, W_IDLE };	/* budget rank order */

struct mq {
	bool seen;		/* pending was seen at some scan */
	u64 last_pending;
	u64 slice_until;	/* after a starvation unpark */
	u64 slice_left;		/* of its slice, when parked for another's */
	int pattern;		/* pending pattern */
	unsigned int period, phase, p_on, p_off;
	enum want want;
	enum gp_reason why;	/* expected reason; GP_WHY_NONE: either unpark reason */
	unsigned int deferrals;	/* ticks the wanted owed unpark was not granted */
	int unk;		/* 0: readable, 1: never readable, 2: now and then */
	int prog;		/* read index: 0 still, 1 moves when pending, 2 random, 3 when running */
	bool pseen;		/* progress was seen at some scan */
	u64 last_progress;
};

struct sim {
	struct gp_policy_params pp;
	struct gp_pq q[MAXQ];
	struct mq m[MAXQ];
	u32 n;
	u64 now;
	unsigned int fail_rate;	/* 1/fail_rate commits fail; 0: none */
	bool quiet;		/* no pending work, backend always succeeds */
	bool params_changed;	/* at this tick */
	u64 quiet_since;
	unsigned int quiet_ticks, disabled_ticks;
};

static int rand_prio(void)
{
	static const int extreme[] = { INT_MIN, INT_MIN + 1, -1000000, 1000000, INT_MAX - 1,
				       INT_MAX };

	switch (rnd(10)) {
	case 0:
		return extreme[rnd(6)];
	case 1:
		return (int)rnd(200) - 100;
	default:
		return (int)rnd(6) * 3 - 4;	/* few levels, many ties */
	}
}

static void rand_params(struct gp_policy_params *pp)
{
	static const u64 hyst[] = { 0, 1, 500 * US, 2 * MS, 5 * MS, 20 * MS };
	static const u32 acts[] = { 1, 1, 2, 3, 8, 64 };

	pp->hysteresis_ns = hyst[rnd(6)];
	pp->max_suspend_ns = rnd(4) ? (1 + rnd(100)) * MS : 1 + rnd(3000) * US;
	pp->min_slice_ns = rnd(5) ? rnd(30) * MS : 0;
	pp->max_actions = acts[rnd(6)];
	pp->enabled = rnd(8) != 0;
	pp->tiers = rnd(2);
	pp->yield_max_prio = rnd(4) ? (int)rnd(6) * 3 - 4 : rand_prio();
}

static void new_scenario(struct sim *s)
{
	static const unsigned int rates[] = { 0, 0, 50, 20, 3 };
	u32 i, ndev;

	memset(s->q, 0, sizeof(s->q));
	memset(s->m, 0, sizeof(s->m));
	s->n = rnd(8) ? 1 + rnd(MAXQ) : 1 + rnd(4);
	ndev = rnd(3) ? 1 + rnd(MAXDEV) : 1;
	for (i = 0; i < s->n; i++) {
		struct gp_pq *x = &s->q[i];
		struct mq *m = &s->m[i];

		x->dev = rnd(ndev);
		/* Rarely an index past the table: it shares the last slot. */
		if (rnd(50) == 0)
			x->dev = GP_POLICY_MAX_DEVS + rnd(3);
		x->prio = rand_prio();
		/* Mostly its own level (no rule), else a KFD priority of its own. */
		x->hw_prio = rnd(2) ? x->prio : (int)rnd(16);
		x->parkable = rnd(6) != 0;
		/* Shrink mode, with a known CU mask: shrunk where it would be parked. */
		x->shrinkable = rnd(4) == 0;
		/* Some unparkable queues are copy (SDMA) queues: signals only. */
		x->signal_only = !x->parkable && x->state == GP_PS_RUNNING && rnd(2);
		m->pattern = rnd(5);
		m->period = 1 + rnd(40);
		m->phase = rnd(m->period);
		m->p_on = 1 + rnd(20);
		m->p_off = 1 + rnd(20);
		m->unk = rnd(8) ? 0 : 1 + rnd(2);
		m->prog = rnd(4);
		/* Some queues start out parked by an earlier scenario. */
		if (rnd(10) == 0) {
			x->state = x->shrinkable && rnd(2) ? GP_PS_SHRUNK : GP_PS_PARKED;
			x->state_since_ns = s->now - rnd(50) * MS;
			x->signal_only = false;	/* a copy queue is never parked */
		}
	}
	rand_params(&s->pp);
	s->fail_rate = rates[rnd(5)];
	s->quiet = false;
	s->disabled_ticks = 0;
	s->params_changed = true;
}

static bool next_pending(struct mq *m, bool cur, long tick)
{
	switch (m->pattern) {
	case 0:
		return true;
	case 1:
		return false;
	case 2:		/* periodic bursts */
		return (tick + m->phase) % (2 * m->period) < m->period;
	case 3:		/* random on/off runs */
		return cur ? rnd(m->p_off) != 0 : rnd(m->p_on) == 0;
	default:	/* noise */
		return rnd(2);
	}
}

/* Mid-scenario changes: what the monitor may see between two ticks. */
static void perturb(struct sim *s)
{
	u32 i = rnd(s->n);

	switch (rnd(400)) {
	case 0:
		if (!s->q[i].signal_only)
			s->q[i].parkable = !s->q[i].parkable;
		break;
	case 1:
		s->q[i].prio = rand_prio();
		break;
	case 2:
		s->pp.enabled = !s->pp.enabled;
		break;
	case 3:
		rand_params(&s->pp);
		s->params_changed = true;
		break;
	case 4:
		s->m[i].pattern = rnd(5);
		break;
	case 5:
		s->q[i].shrinkable = !s->q[i].shrinkable;
		break;
	}
}

static bool busy(const struct sim *s, u32 i)
{
	return s->q[i].pending ||
	       (s->m[i].seen && s->now - s->m[i].last_pending < s->pp.hysteresis_ns);
}

/* A lower queue a park would stop: busy, progressed recently, or unknown (S4-12). */
static bool may_run(const struct sim *s, u32 i)
{
	return busy(s, i) || s->q[i].unknown ||
	       (s->m[i].pseen && s->now - s->m[i].last_progress < s->pp.hysteresis_ns);
}

/* Is queue @i in its starvation slice, running below its top (with work if @work)? */
static bool in_slice(const struct sim *s, u32 i, const bool *top_valid, const int *top, u32 d,
		     bool work)
{
	const struct gp_pq *x = &s->q[i];

	return x->state == GP_PS_RUNNING && s->now < s->m[i].slice_until && x->parkable &&
	       !x->signal_only && top_valid[d] && x->prio < top[d] && (!work || may_run(s, i));
}

/* The model's device slot: its own clamp, not gp_pq_dev(). */
static u32 mdev(const struct gp_pq *x)
{
	return x->dev >= GP_POLICY_MAX_DEVS ? GP_POLICY_MAX_DEVS - 1 : x->dev;
}

static bool key_less(const struct sim *s, u32 a, u32 b)
{
	if (s->m[a].want != s->m[b].want)
		return s->m[a].want < s->m[b].want;
	return s->q[a].prio < s->q[b].prio;
}

static void dump(const struct sim *s, const struct gp_policy_result *r)
{
	u32 i;

	printf("# now %llu n %u hyst %llu max_suspend %llu min_slice %llu max_actions %u enabled %d fail 1/%u\n",
	       (unsigned long long)s->now, s->n, (unsigned long long)s->pp.hysteresis_ns,
	       (unsigned long long)s->pp.max_suspend_ns, (unsigned long long)s->pp.min_slice_ns,
	       s->pp.max_actions, s->pp.enabled, s->fail_rate);
	if (r)
		printf("# result: top_valid %#llx top[0] %d inversion %d (devs %#llx) parks %u unparks %u deferred %u (want: 1 owed unpark, 2 park, 3 idle unpark)\n",
		       (unsigned long long)r->top_valid, r->top_prio[0], r->inversion,
		       (unsigned long long)r->inversion_devs, r->parks, r->unparks, r->deferred);
	for (i = 0; i < s->n; i++) {
		const struct gp_pq *x = &s->q[i];

		/* The queues that matter: parked, acted on, or wanted to be. */
		if (x->state == GP_PS_RUNNING && x->action == GP_ACT_NONE && s->m[i].want == W_NONE)
			continue;
		printf("#  q%-2u dev %u prio %11d pend %d parkable %d state %d since %llu (%lld ms ago) action %d reason %d want %d why %d\n",
		       i, x->dev, x->prio, x->pending, x->parkable, x->state,
		       (unsigned long long)x->state_since_ns,
		       (long long)((s->now - x->state_since_ns) / MS), x->action, x->reason,
		       s->m[i].want, s->m[i].why);
	}
}

#define CHECK(f, cond, what) do {						\
	st->checks[f]++;							\
	if (!(cond)) {								\
		st->fail_fam = f;						\
		st->fail_what = what;						\
		st->fail_tick = t;						\
		printf("# violation: %s: %s (queue %d)\n", fam_name[f], what, (int)(i_)); \
		dump(s, &r);							\
		return 1;							\
	}									\
} while (0)

/* Simulate; returns 0, or 1 at the first violation (recorded in st). */
static int run(unsigned long long seed, long ticks, struct stats *st)
{
	static struct sim sim;
	struct sim *s = &sim;
	long t, scen_len = 0, scen_t = 0;

	memset(s, 0, sizeof(*s));
	s->now = 1000 * MS;
	st->fail_seed = seed;
	for (t = 0; t < ticks; t++) {
		struct gp_policy_result r = { 0 };
		struct gp_pq before[MAXQ];
		bool ok[MAXQ], top_valid[GP_POLICY_MAX_DEVS] = { false }, inversion = false;
		int top[GP_POLICY_MAX_DEVS] = { 0 }, low[GP_POLICY_MAX_DEVS] = { 0 };
		int ptop[GP_POLICY_MAX_DEVS] = { 0 };
		bool ptop_valid[GP_POLICY_MAX_DEVS] = { false };
		u64 inv_devs = 0, valid_mask = 0;
		u32 i, i_ = 0, wanted = 0, granted = 0, gparks = 0, gshrinks = 0, gunparks = 0;
		u32 owed_granted = 0;
		u64 dt;

		s->params_changed = false;
		if (scen_t++ >= scen_len) {
			new_scenario(s);
			st->scenarios++;
			scen_len = 500 + rnd(6000);
			scen_t = 0;
		}
		/* Last fifth of a scenario: no pending work, reliable backend. */
		if (!s->quiet && scen_t >= scen_len - scen_len / 5) {
			s->quiet = true;
			s->quiet_since = s->now;
			s->quiet_ticks = 0;
		}
		if (!s->quiet)
			perturb(s);
		for (i = 0; i < s->n; i++) {
			struct gp_pq *x = &s->q[i];
			struct mq *m = &s->m[i];

			x->pending = !s->quiet && next_pending(m, x->pending, t);
			/* S4-12: unreadable ids: never pending, never progressing. */
			x->unknown = m->unk == 1 || (m->unk == 2 && rnd(3) == 0);
			if (x->unknown)
				x->pending = false;
			x->progressed = !x->unknown &&
					(m->prog == 1 ? x->pending : m->prog == 2 ? rnd(2) == 0 :
					 m->prog == 3 ? x->state == GP_PS_RUNNING : false);
		}

		switch (rnd(20)) {
		case 0:
			dt = 1 + rnd(100);			/* back to back */
			break;
		case 1:
			dt = (10 + rnd(300)) * MS;		/* a long gap */
			break;
		default:
			dt = (20 + rnd(3000)) * US;
		}
		s->now += dt;

		/* The model: seen work, top level, wanted actions. */
		for (i = 0; i < s->n; i++) {
			if (s->q[i].pending) {
				s->m[i].seen = true;
				s->m[i].last_pending = s->now;
			}
			if (s->q[i].progressed) {
				s->m[i].pseen = true;
				s->m[i].last_progress = s->now;
			}
			u32 d = mdev(&s->q[i]);

			if (s->q[i].pending && (!ptop_valid[d] || s->q[i].prio > ptop[d])) {
				ptop_valid[d] = true;
				ptop[d] = s->q[i].prio;
			}
			if (busy(s, i) && (!top_valid[d] || s->q[i].prio < low[d]))
				low[d] = s->q[i].prio;
			if (busy(s, i) && (!top_valid[d] || s->q[i].prio > top[d])) {
				top_valid[d] = true;
				top[d] = s->q[i].prio;
			}
		}
		for (i = 0; i < s->n; i++) {
			const struct gp_pq *x = &s->q[i];
			struct mq *m = &s->m[i];
			u32 d = mdev(x);
			bool below = top_valid[d] && x->prio < top[d];
			bool yield = false;
			u32 j;

			/* Starvation guard: parked for a slice the hardware would
			 * starve (both with work); parked, kept so until it ends. */
			bool work = x->state == GP_PS_RUNNING;

			for (j = 0; j < s->n && !x->signal_only && (!work || may_run(s, i)); j++)
				if (j != i && mdev(&s->q[j]) == d && x->hw_prio > s->q[j].hw_prio &&
				    (x->prio <= s->pp.yield_max_prio || x->prio <= s->q[j].prio) &&
				    in_slice(s, j, top_valid, top, d, work))
					yield = true;
			m->want = W_NONE;
			m->why = GP_WHY_NONE;
			if (below && x->pending && x->state == GP_PS_RUNNING && !x->signal_only) {
				inversion = true;
				inv_devs |= 1ULL << d;
			}
			/*
			 * Tiers: only the lowest busy level is held below the
			 * top; a parked queue without work is no tier.
			 */
			if (below && s->pp.tiers && x->prio > low[d] &&
			    (x->state != GP_PS_PARKED || may_run(s, i)))
				below = false;
			if (x->state == GP_PS_SHRUNK) {
				/* Runs on fewer CUs: no starvation guard. */
				if (!s->pp.enabled) {
					m->want = W_OWED;
					m->why = GP_WHY_DISABLED;
				} else if (!x->parkable || !x->shrinkable) {
					m->want = W_OWED;
					m->why = GP_WHY_UNMANAGED;
				} else if (!below && !yield) {
					m->want = W_IDLE;
					m->why = GP_WHY_HIGHER_IDLE;
				}
			} else if (x->state == GP_PS_PARKED) {
				if (!s->pp.enabled) {
					m->want = W_OWED;
					m->why = GP_WHY_DISABLED;
				} else if (!x->parkable) {
					m->want = W_OWED;
					m->why = GP_WHY_UNMANAGED;
				} else if (s->now - x->state_since_ns >= s->pp.max_suspend_ns) {
					/* Owed: the starvation guard.  Above an idle
					 * level either reason will do. */
					m->want = W_OWED;
					m->why = below ? GP_WHY_STARVING : GP_WHY_NONE;
				} else if (m->slice_left && !yield) {
					/* The rest of a slice cut by another's. */
					m->want = W_OWED;
					m->why = GP_WHY_STARVING;
				} else if (!below && !yield) {
					m->want = W_IDLE;
					m->why = GP_WHY_HIGHER_IDLE;
				}
			} else if (s->pp.enabled && x->parkable && below && may_run(s, i) &&
				   s->now >= m->slice_until) {
				m->want = W_PARK;
				m->why = GP_WHY_HIGHER_PENDING;
			} else if (s->pp.enabled && x->parkable && yield) {
				m->want = W_PARK;
				m->why = GP_WHY_YIELD;
			}
			wanted += m->want != W_NONE;
		}
		if (!s->pp.enabled)
			s->disabled_ticks++;
		else
			s->disabled_ticks = 0;

		memset(&r, 0xa5, sizeof(r));
		gp_policy_decide(&s->pp, s->q, s->n, s->now, &r);

		i_ = -1;
		for (i = 0; i < GP_POLICY_MAX_DEVS; i++) {
			if (top_valid[i])
				valid_mask |= 1ULL << i;
			CHECK(F_TOP, !top_valid[i] || r.top_prio[i] == top[i], "top level of a device");
			CHECK(F_TOP, !top_valid[i] || r.low_prio[i] == low[i], "lowest busy level");
			CHECK(F_TOP, !ptop_valid[i] || r.pend_top[i] == ptop[i], "top pending level");
			CHECK(F_TOP, !!(r.pend_valid & (1ULL << i)) == ptop_valid[i], "pending devices");
		}
		CHECK(F_TOP, r.top_valid == valid_mask, "busy devices");
		CHECK(F_TOP, r.inversion == inversion && r.inversion_devs == inv_devs,
		      "inversion flags");
		/* No queue the hardware runs before a slice, at or below its level, runs on. */
		for (i_ = 0; i_ < s->n; i_++) {
			const struct gp_pq *x = &s->q[i_];
			u32 j, d = mdev(x);

			if (!s->pp.enabled || !in_slice(s, i_, top_valid, top, d, true))
				continue;
			for (j = 0; j < s->n; j++) {
				const struct gp_pq *y = &s->q[j];

				if (j == i_ || mdev(y) != d || y->hw_prio <= x->hw_prio ||
				    y->prio > x->prio || y->state != GP_PS_RUNNING || !y->parkable ||
				    y->signal_only || !may_run(s, j))
					continue;
				CHECK(F_YIELD, y->wanted == GP_ACT_PARK || y->wanted == GP_ACT_SHRINK,
				      "a lower queue the hardware runs first left running beside a slice");
			}
		}
		for (i_ = 0; i_ < s->n; i_++) {
			const struct gp_pq *x = &s->q[i_];
			const struct mq *m = &s->m[i_];

			/* But for a slice, at or below yield_max_prio. */
			if ((!top_valid[mdev(x)] || x->prio >= top[mdev(x)]) &&
			    !(x->reason == GP_WHY_YIELD && x->prio <= s->pp.yield_max_prio))
				CHECK(F_PARK_TOP, x->action != GP_ACT_PARK && x->action != GP_ACT_SHRINK,
				      "park at or above the top busy level of its device");
			if (!s->pp.enabled)
				CHECK(F_DISABLED, x->action != GP_ACT_PARK && x->action != GP_ACT_SHRINK,
				      "park while disabled");
			if (x->action == GP_ACT_PARK || x->action == GP_ACT_SHRINK) {
				CHECK(F_PARK_WHO, (x->action == GP_ACT_SHRINK) == x->shrinkable,
				      "shrink exactly where the queue is shrinkable");
				CHECK(F_PARK_WHO, !x->signal_only, "park of a signal-only (SDMA) queue");
				CHECK(F_PARK_WHO, s->pp.enabled, "park while disabled");
				/* S3 F11: pending now or within the hysteresis;
				 * S4-12: progressed within it, or unknown. */
				CHECK(F_PARK_WHO, (x->pending || x->unknown || (x->last_pending_ns &&
				      s->now - x->last_pending_ns < s->pp.hysteresis_ns) ||
				      (x->last_progress_ns &&
				       s->now - x->last_progress_ns < s->pp.hysteresis_ns)) &&
				      x->parkable && x->state == GP_PS_RUNNING,
				      "park of an idle, unparkable or parked queue");
				CHECK(F_PARK_WHO, x->reason == m->why, "park reason");
				CHECK(F_SLICE, s->now >= m->slice_until || x->reason == GP_WHY_YIELD,
				      "park within min_slice");
				CHECK(F_WANTED, m->want == W_PARK, "park the rule does not want");
				granted++;
				if (x->action == GP_ACT_PARK)
					gparks++;
				else
					gshrinks++;
			} else if (x->action == GP_ACT_UNPARK) {
				CHECK(F_UNPARK_WHO, x->state != GP_PS_RUNNING, "unpark of a running queue");
				CHECK(F_UNPARK_WHO, m->want == W_OWED || m->want == W_IDLE,
				      "unpark the rule does not want");
				CHECK(F_UNPARK_WHO, m->why != GP_WHY_NONE ? x->reason == m->why :
				      (x->reason == GP_WHY_STARVING || x->reason == GP_WHY_HIGHER_IDLE),
				      "unpark reason");
				granted++;
				gunparks++;
				owed_granted += m->want == W_OWED;
			} else {
				CHECK(F_BUDGET, x->action == GP_ACT_NONE && x->reason == GP_WHY_NONE,
				      "no action, no reason");
			}
			CHECK(F_BUDGET, x->granted == (x->action != GP_ACT_NONE), "granted flag");
			/* What a process-granular backend evicts by: granted or not. */
			CHECK(F_WANTED, (x->wanted == GP_ACT_PARK || x->wanted == GP_ACT_SHRINK) ==
			      (m->want == W_PARK) &&
			      (x->wanted == GP_ACT_UNPARK) == (m->want == W_OWED || m->want == W_IDLE) &&
			      (x->action == GP_ACT_NONE || x->action == x->wanted),
			      "wanted is the action before the budget");
		}
		i_ = -1;
		CHECK(F_BUDGET, granted <= s->pp.max_actions, "more actions than max_actions");
		CHECK(F_BUDGET, r.parks == gparks && r.shrinks == gshrinks && r.unparks == gunparks,
		      "parks/shrinks/unparks counts");
		CHECK(F_BUDGET, r.deferred == wanted - granted, "deferred count");
		CHECK(F_WANTED, granted == (wanted < s->pp.max_actions ? wanted : s->pp.max_actions),
		      "wanted actions left undone with budget to spare");
		for (i_ = 0; i_ < s->n; i_++) {
			u32 j;

			if (s->m[i_].want == W_NONE || s->q[i_].action != GP_ACT_NONE)
				continue;
			for (j = 0; j < s->n; j++) {
				if (s->q[j].action == GP_ACT_NONE)
					continue;
				CHECK(F_ORDER, !key_less(s, i_, j),
				      "a deferred action ranks before a granted one");
			}
		}

		/* Apply: the backend fails now and then. */
		memcpy(before, s->q, sizeof(before));
		for (i = 0; i < s->n; i++) {
			ok[i] = s->quiet || !s->fail_rate || rnd(s->fail_rate) != 0;
			if (s->q[i].action != GP_ACT_NONE && !ok[i])
				st->failures++;
			if ((s->q[i].action == GP_ACT_PARK || s->q[i].action == GP_ACT_SHRINK) && ok[i])
				st->parks++;
			if (s->q[i].action == GP_ACT_UNPARK && ok[i]) {
				st->unparks++;
				st->starving += s->q[i].reason == GP_WHY_STARVING;
				st->idle += s->q[i].reason == GP_WHY_HIGHER_IDLE;
				/* A shrunk queue runs: no starvation bound. */
				if (before[i].state == GP_PS_PARKED &&
				    before[i].state_since_ns + s->pp.max_suspend_ns < s->now &&
				    !s->m[i].deferrals && !s->params_changed && s->pp.enabled &&
				    s->q[i].parkable) {
					u64 over = s->now - before[i].state_since_ns -
						   s->pp.max_suspend_ns;

					st->checks[F_STARVE]++;
					if (over >= dt) {
						printf("# violation: q%u parked %llu ns past max_suspend, tick %llu ns\n",
						       i, (unsigned long long)over, (unsigned long long)dt);
						st->fail_fam = F_STARVE;
						st->fail_what = "parked longer than max_suspend + one tick";
						st->fail_tick = t;
						dump(s, &r);
						return 1;
					}
					if (over * 100 / dt > st->max_overshoot)
						st->max_overshoot = over * 100 / dt;
				}
			}
			gp_policy_commit(&s->pp, &s->q[i], ok[i], s->now);
		}
		for (i_ = 0; i_ < s->n; i_++) {
			const struct gp_pq *x = &s->q[i_], *b = &before[i_];
			struct mq *m = &s->m[i_];

			if (b->action == GP_ACT_NONE || !ok[i_]) {
				CHECK(F_COMMIT, !memcmp(x, b, sizeof(*x)), "commit changed a queue");
			} else {
				CHECK(F_COMMIT, x->state == (b->action == GP_ACT_PARK ? GP_PS_PARKED :
							     b->action == GP_ACT_SHRINK ? GP_PS_SHRUNK :
							     GP_PS_RUNNING) && x->state_since_ns == s->now,
				      "commit did not flip the state");
				if (b->action == GP_ACT_UNPARK) {
					if (m->slice_left)
						m->slice_until = s->now + m->slice_left;
					else if (b->reason == GP_WHY_STARVING)
						m->slice_until = s->now + s->pp.min_slice_ns;
					m->slice_left = 0;
				} else if (b->reason == GP_WHY_YIELD && s->now < m->slice_until) {
					/* The rest of its own slice, at its unpark. */
					m->slice_left = m->slice_until - s->now;
					m->slice_until = 0;
				}
			}
			/* Starvation bound: a queue owed an unpark at this tick
			 * (parked max_suspend, unparkable, or disabled) is back
			 * now, unless its unpark failed or the whole budget went
			 * to other owed unparks.  With neither, no queue is
			 * parked longer than max_suspend + one tick. */
			if (m->want == W_OWED && x->state != GP_PS_RUNNING) {
				bool excused = (b->action != GP_ACT_NONE && !ok[i_]) ||
					       owed_granted == s->pp.max_actions;

				CHECK(b->reason == GP_WHY_DISABLED || m->why == GP_WHY_DISABLED ?
				      F_DISABLED : F_STARVE, excused,
				      "owed unpark neither done, failed, nor crowded out by owed unparks");
				m->deferrals++;
				st->excused++;
			} else if (x->state == GP_PS_RUNNING) {
				m->deferrals = 0;
			}
			if (x->state == GP_PS_PARKED && !m->deferrals && s->pp.enabled && x->parkable)
				CHECK(F_STARVE, s->now - x->state_since_ns < s->pp.max_suspend_ns,
				      "parked for max_suspend after the tick");
		}

		/* Quiet: once hysteresis has passed, ceil(parked / max_actions)
		 * ticks of successful commits unpark everything. */
		if (s->quiet && s->now - s->quiet_since >= s->pp.hysteresis_ns + dt)
			s->quiet_ticks++;
		i_ = -1;
		if (s->quiet && s->quiet_ticks > 1 + (u32)MAXQ / s->pp.max_actions) {
			for (i_ = 0; i_ < s->n; i_++)
				CHECK(F_QUIET, s->q[i_].state == GP_PS_RUNNING, "still parked");
		}
		if (s->disabled_ticks > 1 + (u32)MAXQ / s->pp.max_actions &&
		    (s->quiet || !s->fail_rate)) {
			for (i_ = 0; i_ < s->n; i_++)
				CHECK(F_DISABLED, s->q[i_].state == GP_PS_RUNNING,
				      "still parked while disabled");
		}
	}
	return 0;
}

#ifdef GP_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stats st;

	memset(&st, 0, sizeof(st));
	fz_data = data;
	fz_left = size;
	rng = size;
	if (run(size, 1000, &st))
		abort();
	return 0;
}
#else
int main(int argc, char **argv)
{
	unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261122;
	long ticks = argc > 2 ? atol(argv[2]) : 200000;
	struct stats st;
	int f, failed;

	memset(&st, 0, sizeof(st));
	rng = seed;
	tap_start(F_NR);
	tap_diag("seed %llu, %ld ticks", seed, ticks);
	failed = run(seed, ticks, &st);
	for (f = 0; f < F_NR; f++) {
		if (failed && (enum fam)f == st.fail_fam)
			tap_ok(false, "%s # seed %llu tick %ld: %s", fam_name[f], seed,
			       st.fail_tick, st.fail_what);
		else
			tap_ok(true, "%s (%lu checks%s)", fam_name[f], st.checks[f],
			       failed ? ", run stopped early" : "");
	}
	tap_diag("%lu scenarios, %lu parks, %lu unparks (%lu starvation, %lu higher idle), %lu failed actions, %lu excused deferrals, longest park past max_suspend %llu%% of a tick",
		 st.scenarios, st.parks, st.unparks, st.starving, st.idle, st.failures, st.excused,
		 (unsigned long long)st.max_overshoot);
	if (failed)
		tap_diag("reproduce: %s %llu %ld", argv[0], seed, ticks);
	tap_done();
	return failed;
}
#endif
