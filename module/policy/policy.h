/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h - gpreempt's preemption policy: pure C, no kernel calls, so the
 * same file builds into the module and into user-space unit/fuzz tests.
 */
#ifndef GP_POLICY_H
#define GP_POLICY_H

#include <linux/types.h>
#ifndef __KERNEL__
/* User-space build (unit and fuzz tests): the kernel's names for the UAPI types. */
#include <stdbool.h>
#include <stddef.h>
#define u64 __u64
#define u32 __u32
#endif

/*
 * Defences a test may switch off, to show that its check fails without
 * them (test/run-defences).  Only the GP_TESTING build (module/testing.c's
 * test_defence_off=, or the host's policy build for run-defences) has the
 * switch; everywhere else gp_test_defence_off() is false.
 */
enum gp_defence {
	GP_DEF_UNKNOWN,		/* unknown work is parked below a busy level */
	GP_DEF_PROGRESS,	/* a moving read index counts as work */
	GP_DEF_BARRIER,		/* a barrier wait past hysteresis + slice is parked */
	GP_DEF_GROUP,		/* providers come from the waiter's own process */
	GP_DEF_BARRIER_RELEASE,	/* a barrier nothing feeds releases its level */
	GP_DEF_YIELD_CAP,	/* a slice parks no LC level above it */
	GP_DEF_GOES_ALONG,	/* idle queues go along with their process's park */
	GP_DEF_NOT_AQL,		/* a PM4 queue is unknown work */
	GP_DEF_IDS_PAGE,	/* the ids' page is the one noted at creation */
	GP_DEF_PARK_RECHECK,	/* a park by the suspend flag is re-read each tick */
	GP_DEF_COUNT
};

#ifdef GP_TESTING
extern const char * const gp_defence_names[GP_DEF_COUNT];	/* policy/defences.c */
bool gp_test_defence_off(enum gp_defence d);
#else
static inline bool gp_test_defence_off(enum gp_defence d)
{
	(void)d;	/* the host's unit build warns of an unused parameter */
	return false;
}
#endif

enum gp_pstate {
	GP_PS_RUNNING = 0,	/* on the GPU */
	GP_PS_PARKED = 1,	/* taken off by gpreempt */
	GP_PS_SHRUNK = 2,	/* running on the CUs the higher levels leave it */
};

/*
 * Devices arbitrate independently (each has its own hardware scheduler), so
 * the policy compares a queue only with queues of the same device.  Device
 * indexes are small and dense; an index >= GP_POLICY_MAX_DEVS shares the last
 * slot (arbitrated together: conservative, never wrong about LC).
 */
#define GP_POLICY_MAX_DEVS 64

/*
 * Idle gaps a queue's learned hold is drawn from (gp_policy_hold()), and
 * how many it needs first: fewer are no evidence for a shorter hold.
 */
#define GP_HOLD_GAPS 16
#define GP_HOLD_MIN_GAPS 8
/* Gaps past a shorter hold it needs: one long gap among short ones is no pattern. */
#define GP_HOLD_MIN_LONGER 4

enum gp_action {
	GP_ACT_NONE = 0,
	GP_ACT_PARK = 1,
	GP_ACT_UNPARK = 2,	/* from parked or shrunk back to running */
	GP_ACT_SHRINK = 3,	/* instead of a park, where the queue is @shrinkable */
};

enum gp_reason {
	GP_WHY_NONE = 0,
	GP_WHY_HIGHER_PENDING,	/* park: a higher level has (recent) work */
	GP_WHY_HIGHER_IDLE,	/* unpark: higher levels idle past hysteresis */
	GP_WHY_STARVING,	/* unpark: starvation guard slice */
	GP_WHY_UNMANAGED,	/* unpark: queue no longer parkable */
	GP_WHY_DISABLED,	/* unpark: gpreempt disabled */
	GP_WHY_HELD,		/* park: held by hand (gpreemptctl park) */
	GP_WHY_YIELD,		/* park: the hardware runs it before a starvation slice */
};

/**
 * struct gp_policy_params - knobs of the policy (all times in ns)
 * @hysteresis_ns: a level counts as busy this long after its last pending work
 * @max_suspend_ns: starvation guard, longest continuous park
 * @min_slice_ns: run time granted to a starving queue before it may be parked again
 * @max_actions: state changes allowed per tick (each one may remap the device)
 * @enabled: false: unpark everything, park nothing
 * @tiers: tier-aware: only the device's lowest busy level is parked; levels
 *	   between it and the top (lower LC tiers) are never parked
 * @hold_payback_ns: 0: every level's hold is @hysteresis_ns.  Else the run
 *		     time an unpark of the levels below must promise them
 *		     before the queue's next work, for its park and unpark
 *		     to pay: each queue's hold is then learned from its own
 *		     idle gaps (gp_policy_hold()), never above @hysteresis_ns.
 *		     A lower queue's own recent work always counts for
 *		     @hysteresis_ns.
 * @dispatch_window_ns: 0, or how long after its read index last moved a
 *			lower queue may still run a kernel: CP firmware that
 *			advances the read index when a dispatch starts
 *			shows a queue running one long kernel as empty;
 *			within this window it is parked all the same.  Set,
 *			a read index that moved since the last scan also
 *			counts as work seen at this scan (such firmware shows
 *			work as pending only until the CP fetches it)
 * @dev_budget: NULL, or per device slot the actions still allowed (from its
 *		gp_bucket); decremented as actions are granted
 * @slept: the monitor slept through a hold before this scan (nothing below
 *	   the top ran): a read index that moved since the last scan counts
 *	   as work seen at this scan, as with @dispatch_window_ns, so work the
 *	   top started and finished in that sleep still extends its hold
 * @yield_max_prio: the highest level (best-effort: the module's normal) a
 *		    starving queue's slice may park beside it; queues above it
 *		    are parked for a slice only when not above the starving
 *		    queue itself (gp_policy_decide(), "Starvation guard")
 */
struct gp_policy_params {
	u64 hysteresis_ns;
	u64 max_suspend_ns;
	u64 min_slice_ns;
	u32 max_actions;
	bool enabled;
	bool tiers;
	u64 hold_payback_ns;
	u64 dispatch_window_ns;
	u32 *dev_budget;
	bool slept;
	int yield_max_prio;
};

/**
 * struct gp_pq - one queue as the policy sees it
 * @dev: device index (0..GP_POLICY_MAX_DEVS-1); only queues of one device compete
 * @prio: effective priority (higher runs first); any int range
 * @hw_prio: the priority the hardware ranks the queue by (its KFD priority:
 *	     neither rules nor inheritance reach it); free CUs go to the
 *	     highest one with work first
 * @pending: the queue has work (wptr != rptr) at this scan
 * @blocked: it has work but waits at a barrier packet (not @pending), and
 *	     its read index did not move since the previous scan: its level
 *	     stays busy for the hold, is then released for one slice
 *	     (@min_slice_ns: a provider in another process may run), then
 *	     busy again for the longer of the hold and a slice, released
 *	     again, and so on while the barrier holds and a provider of its
 *	     own group progresses; with none, it is released until
 *	     the barrier passes
 * @progressed: its read index moved since the previous scan (it completed
 *		work): with @blocked, how the policy finds whom a queue waits
 *		on; for a lower queue, work it may still be doing
 * @unknown: its dispatch ids could not be read at this scan: never
 *	     @pending, so it never makes its level busy, but below a busy
 *	     level it is parked like a queue with work (fails closed)
 * @id: the caller's stable identity of the queue (0: none; queues with the
 *	same id are taken for one)
 * @group: the queue's trust domain, its process (0: none): a queue waiting
 *	   at a barrier has providers only in its own group
 * @parkable: gpreempt may park it (compute, not debugged, device healthy)
 * @signal_only: a copy (SDMA) queue: its pending work makes its level busy,
 *		 but it is never parked nor counted as an inversion
 * @hold: parked by hand: parked while parkable and enabled, whatever the
 *	  priorities say; the starvation guard and the rule never unpark it
 * @hold_disabled: with @hold: parked while disabled too (shadow mode): the
 *		   self-test's own queues, parked while gpreempt parks nothing
 *		   else
 * @shrinkable: where the policy would park it, it shrinks it instead: the
 *		queue keeps running on part of its CUs (shrink mode, and its
 *		CU mask is known); a shrunk queue needs no starvation guard
 * @state: current state, updated by the caller from the backend's result
 * @state_since_ns: when @state was entered
 * @last_pending_ns: policy-owned: last time @pending was seen
 * @slice_until_ns: policy-owned: starvation slice, no park before this
 *		    (but GP_WHY_YIELD, for another queue's slice)
 * @slice_left_ns: policy-owned: what a GP_WHY_YIELD park left of the
 *		   queue's own slice: it is unparked for it (GP_WHY_STARVING)
 *		   once nothing needs it parked for another slice
 * @was_blocked: policy-owned: @blocked at the previous decision
 * @last_blocked_ns: policy-owned: last time @blocked was seen
 * @blocked_since_ns: policy-owned: when its current wait at a barrier began
 * @last_progress_ns: policy-owned: last time @progressed was seen
 * @provider_ns: policy-owned: last time a lower queue of its group on its
 *		 device completed work during its current wait at a barrier
 *		 (0: none yet); after the wait's first cycle its level stays
 *		 busy in turns only while that was within the last cycle
 * @dependent: policy-owned: its work came through a barrier in its current
 *	       busy period (it waits on other queues' work)
 * @inherited: policy-owned: a provider: a higher queue of its own group
 *	       waits at a barrier, or its barrier passed when this queue's
 *	       work completed, so the higher queue waits on it; it is not
 *	       parked below @inherit_prio while a dependent queue that high
 *	       stays busy or blocked on its device
 * @inherit_prio: policy-owned: the priority it inherits (valid if @inherited)
 * @inherit_from: policy-owned: @id of the dependent queue it inherits from
 * @was_seen: policy-owned: @last_pending_ns was set at the previous decision
 * @gaps_us: policy-owned: its last GP_HOLD_GAPS idle gaps, from its last
 *	     work seen to its next (us), oldest overwritten first
 * @ngaps: policy-owned: gaps recorded (at most GP_HOLD_GAPS)
 * @gap_next: policy-owned: where the next gap goes in @gaps_us
 * @hold_ns: policy-owned: the hold learned from @gaps_us (0: none yet, or
 *	     no shorter hold pays: @hysteresis_ns)
 * @granted: policy-owned scratch (action within the tick's budget)
 * @action: output of gp_policy_decide()
 * @reason: why (enum gp_reason)
 * @wanted: output: the action before the budget (GP_ACT_NONE in @action
 *	    when deferred); a process-granular backend parks a whole process
 *	    when every queue of it wants to go, in one call, whatever the budget
 */
struct gp_pq {
	u32 dev;
	int prio;
	int hw_prio;
	bool pending;
	bool blocked;
	bool progressed;
	bool unknown;
	u64 id;
	u64 group;
	bool parkable;
	bool signal_only;
	bool hold;
	bool hold_disabled;
	bool shrinkable;
	enum gp_pstate state;
	u64 state_since_ns;
	u64 last_pending_ns;
	u64 slice_until_ns;
	u64 slice_left_ns;
	bool was_blocked;
	u64 last_blocked_ns;
	u64 blocked_since_ns;
	u64 last_progress_ns;
	u64 provider_ns;
	bool dependent;
	bool inherited;
	int inherit_prio;
	u64 inherit_from;
	bool was_seen;
	u32 gaps_us[GP_HOLD_GAPS];
	u32 ngaps;
	u32 gap_next;
	u64 hold_ns;
	bool granted;
	enum gp_action action;
	enum gp_reason reason;
	enum gp_action wanted;
};

/**
 * struct gp_policy_result - summary of one decision round
 * @top_valid: bit d set: some level of device d is busy
 * @top_prio: per device, the highest busy level (valid where @top_valid)
 * @pend_valid: bit d set: some queue of device d has pending work now
 * @pend_top: per device, the highest level with pending work (where @pend_valid)
 * @low_prio: per device, the lowest busy level (valid where @top_valid)
 * @dep_valid: bit d set: some dependent queue of device d is busy or blocked
 * @dep_top: per device, the highest such dependent queue (where @dep_valid)
 * @releases: barriers seen passing (a blocked queue no longer blocked)
 * @inheriting: queues that are providers (not parked for a dependent) now
 * @slices: queues in their starvation slice now
 * @inversion_devs: bit d set: on device d a queue below its top runs with work
 * @inversion: some device has an inversion
 * @parks: park actions emitted
 * @shrinks: shrink actions emitted
 * @unparks: unpark actions emitted (from parked or shrunk)
 * @deferred: actions held back by @max_actions or a device budget
 * @throttled: of @deferred, those held back by their device's budget
 */
struct gp_policy_result {
	u64 top_valid;
	int top_prio[GP_POLICY_MAX_DEVS];
	u64 pend_valid;
	int pend_top[GP_POLICY_MAX_DEVS];
	int low_prio[GP_POLICY_MAX_DEVS];
	u64 dep_valid;
	int dep_top[GP_POLICY_MAX_DEVS];
	u32 releases;
	u32 inheriting;
	u32 slices;
	u64 inversion_devs;
	bool inversion;
	u32 parks;
	u32 shrinks;
	u32 unparks;
	u32 deferred;
	u32 throttled;
};

/**
 * struct gp_bucket - one device's allowance of state changes (token bucket)
 * @credit_ns: accrued time; one action costs NSEC_PER_SEC / rate
 * @last_ns: last refill (0: never: the bucket starts full)
 * @backoff_ns: current back-off after failed actions (0: none)
 * @blocked_until_ns: no action on the device before this
 *
 * Every park/unpark under HWS preempts and remaps the whole device, so each
 * device gets at most @rate state changes per second, in bursts of at most
 * gp_bucket_burst(@rate).  After a failed action the device backs off for
 * GP_BACKOFF_MIN_NS, doubling on each further failure up to
 * GP_BACKOFF_MAX_NS; a success ends the back-off.
 */
struct gp_bucket {
	u64 credit_ns;
	u64 last_ns;
	u64 backoff_ns;
	u64 blocked_until_ns;
};

/**
 * struct gp_budget - one device's remap budget: a token bucket of one
 * minute's worth of calls, refilled at remap_budget a minute
 * @credit_ns: accumulated credit, at most a minute
 * @last_ns: time of the last refill, 0: never
 */
struct gp_budget {
	u64 credit_ns;
	u64 last_ns;
};

u32 gp_budget_avail(struct gp_budget *b, u32 per_min, u64 now);
void gp_budget_take(struct gp_budget *b, u32 per_min, u32 n);

#define GP_BACKOFF_MIN_NS 1000000ULL		/* 1 ms */
#define GP_BACKOFF_MAX_NS 1000000000ULL		/* 1 s */

u32 gp_bucket_burst(u32 rate);
u32 gp_bucket_avail(struct gp_bucket *b, u32 rate, u64 now);
void gp_bucket_take(struct gp_bucket *b, u32 rate, u32 n);
bool gp_bucket_result(struct gp_bucket *b, bool ok, u64 now);

/**
 * gp_pq_dev() - the device slot the policy uses for @q
 * @q: queue
 *
 * Return: @q->dev, or the last slot when it is out of range.
 */
static inline u32 gp_pq_dev(const struct gp_pq *q)
{
	return q->dev < GP_POLICY_MAX_DEVS ? q->dev : GP_POLICY_MAX_DEVS - 1;
}

/**
 * struct gp_sleep - one pass of sleep.c over the queues
 * @maxprio: per device slot, the highest level of its queues
 * @parked: bit d set: device d has a parked or shrunk queue
 * @busy_top: bit d set: a top queue of device d has work, is at a barrier,
 *	      unreadable or held
 * @group_hit: bit d set: a top queue of device d (with work seen) has a
 *	       parked or shrunk queue of its own group on d
 * @group: the group of the queues being added
 * @group_top: @group's devices where it has a top queue with work seen
 * @group_parked: @group's devices where it has a queue not running (gone or not)
 * @busy: a running queue below its top has work
 * @until: the earliest end of a parked queue's max_suspend
 * @dev_end: per device, the end of its top level's hold
 */
struct gp_sleep {
	const int *maxprio;
	u64 parked;
	u64 busy_top;
	u64 group_hit;
	u64 group;
	u64 group_top;
	u64 group_parked;
	bool busy;
	u64 until;
	u64 dev_end[GP_POLICY_MAX_DEVS];
};

void gp_sleep_init(struct gp_sleep *s, const int *maxprio);
void gp_sleep_add(struct gp_sleep *s, const struct gp_policy_params *pp,
		  const struct gp_pq *q, bool gone);
u64 gp_sleep_until(struct gp_sleep *s, u64 t0);

u64 gp_policy_hold(const struct gp_policy_params *pp, const struct gp_pq *q);
void gp_policy_decide(const struct gp_policy_params *pp, struct gp_pq *q, u32 n, u64 now,
		      struct gp_policy_result *res);
void gp_policy_commit(const struct gp_policy_params *pp, struct gp_pq *q, bool ok, u64 now);
bool gp_policy_goes_along(const struct gp_policy_params *pp, const struct gp_policy_result *res,
			  const struct gp_pq *x, u64 now);

#endif /* GP_POLICY_H */
