// SPDX-License-Identifier: GPL-2.0
/*
 * params.c - module parameters, each validated by its setter so a bad value
 * fails insmod (or the sysfs write) with a message naming the parameter.
 * All of them can also be changed at run time through
 * /sys/module/gpreempt/parameters/; gp_config overrides them per field.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "params.h"
#include "core/registry.h"
#include "monitor/monitor.h"
#include "kfd/kfd.h"

struct gp_params gp_param = {
	.tick_us = 100,
	.idle_us = 5000,
	.idle_max_us = 500000,
	.hysteresis_us = 500,
	.hold_payback_pct = 0,
	.max_suspend_ms = 1000,
	.min_slice_ms = 20,
	.max_actions = 8,
	.max_rate = 1000,
	.remap_budget = 6000,
	.sdma_hint = true,
	.tiers = true,
	.backend = GP_BACKEND_AUTO,
	.enable = true,
	.adopt_existing = true,
	.env_priority = false,
	.env_max_priority = GP_PRIO_NORMAL,
	.user_max_priority = GP_PRIO_NORMAL,
	.max_hold_s = 3600,
	.max_user_queues = GP_USER_QUEUES_DEFAULT,
};

struct gp_uint_range {
	unsigned int *val;
	unsigned int min, max;
	const char *name;
};

/*
 * The starvation guard parks and unparks a queue once per max_suspend_ms +
 * min_slice_ms; under HWS each is a full-device preempt.  Below 10 ms the
 * guard alone would drive more than 200 preempts per second per queue.
 */
/* @v is the new value of @r: would the guard's cycle thrash the device? */
static bool gp_guard_thrashes(const struct gp_uint_range *r, unsigned int v)
{
	unsigned int other;

	if (r->val == &gp_param.max_suspend_ms)
		other = READ_ONCE(gp_param.min_slice_ms);
	else if (r->val == &gp_param.min_slice_ms)
		other = READ_ONCE(gp_param.max_suspend_ms);
	else
		return false;
	return v + other < GP_MIN_GUARD_CYCLE_MS;
}

/*
 * m6: the periods are ordered, tick_us <= idle_us <= idle_max_us: the idle
 * period is never shorter than the busy one, and deep idle never sleeps less
 * than idle_us.
 */
static const struct {
	unsigned int *lo, *hi;
	const char *lo_name, *hi_name;
} gp_period_order[] = {
	{ &gp_param.tick_us, &gp_param.idle_us, "tick_us", "idle_us" },
	{ &gp_param.idle_us, &gp_param.idle_max_us, "idle_us", "idle_max_us" },
};

/* @v is the new value of @r: does it break the order?  Says so and how to fix it. */
static bool gp_periods_unordered(const struct gp_uint_range *r, unsigned int v)
{
	unsigned int lo, hi;
	int i;

	for (i = 0; i < ARRAY_SIZE(gp_period_order); i++) {
		const char *lo_name = gp_period_order[i].lo_name;
		const char *hi_name = gp_period_order[i].hi_name;

		lo = READ_ONCE(*gp_period_order[i].lo);
		hi = READ_ONCE(*gp_period_order[i].hi);
		if (r->val == gp_period_order[i].lo && v > hi) {
			pr_err("%s=%u rejected: %s must be >= %s (now %s=%u); raise %s first\n",
			       r->name, v, hi_name, lo_name, hi_name, hi, hi_name);
			return true;
		}
		if (r->val == gp_period_order[i].hi && v < lo) {
			pr_err("%s=%u rejected: %s must be >= %s (now %s=%u); lower %s first\n",
			       r->name, v, hi_name, lo_name, lo_name, lo, lo_name);
			return true;
		}
	}
	return false;
}

static int gp_set_uint(const char *val, const struct kernel_param *kp)
{
	const struct gp_uint_range *r = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret || v < r->min || v > r->max) {
		pr_err("%s=%s: expected an integer in %u..%u\n", r->name, val, r->min, r->max);
		return -EINVAL;
	}
	if (gp_guard_thrashes(r, v)) {
		pr_err("%s=%u rejected: max_suspend_ms + min_slice_ms below %u ms makes the starvation guard thrash the device\n",
		       r->name, v, GP_MIN_GUARD_CYCLE_MS);
		return -EINVAL;
	}
	if (gp_periods_unordered(r, v))
		return -EINVAL;
	WRITE_ONCE(*r->val, v);
	gp_monitor_kick();
	return 0;
}

static int gp_get_uint(char *buf, const struct kernel_param *kp)
{
	const struct gp_uint_range *r = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*r->val));
}

static const struct kernel_param_ops gp_uint_ops = {
	.set = gp_set_uint,
	.get = gp_get_uint,
};

static struct gp_uint_range gp_range_tick_us = {
	.val = &gp_param.tick_us, .min = 10, .max = 100000, .name = "tick_us",
};

module_param_cb(tick_us, &gp_uint_ops, &gp_range_tick_us, 0644);
MODULE_PARM_DESC(tick_us,
		 "Monitor scan period in microseconds while work is pending; bounds detection latency (default 100) [10..100000, <= idle_us]");

static struct gp_uint_range gp_range_idle_us = {
	.val = &gp_param.idle_us, .min = 100, .max = 1000000, .name = "idle_us",
};

module_param_cb(idle_us, &gp_uint_ops, &gp_range_idle_us, 0644);
MODULE_PARM_DESC(idle_us,
		 "Expert: Monitor scan period in microseconds when nothing can be preempted (default 5000) [100..1000000, >= tick_us, <= idle_max_us]");

/*
 * Deep idle (issue 19): no queue has work and none is parked.  Each such
 * tick doubles the period from idle_us up to this.  Work that starts in
 * such a sleep is seen up to idle_max_us late; that delays a park only when
 * a second, lower-priority queue starts work within the same window.  The
 * default, 500 ms (2 ticks a second), is what kept the idle scenario (2 x 5
 * idle queues) at 0.1 % of a CPU in the TCG guest; 250 ms cost about 0.16 %.
 */
static struct gp_uint_range gp_range_idle_max_us = {
	.val = &gp_param.idle_max_us, .min = 100, .max = 10000000, .name = "idle_max_us",
};

module_param_cb(idle_max_us, &gp_uint_ops, &gp_range_idle_max_us, 0644);
MODULE_PARM_DESC(idle_max_us,
		 "Expert: Longest monitor scan period in microseconds: while no queue has work and none is parked, the period doubles from idle_us up to this; work starting then is seen up to this late, which delays a park only if a lower-priority queue also starts work within it; queue create/update/destroy, process exit and parameter writes return to idle_us at once (default 500000) [100..10000000, >= idle_us]");

static struct gp_uint_range gp_range_hysteresis_us = {
	.val = &gp_param.hysteresis_us, .min = 0, .max = 10000000, .name = "hysteresis_us",
};

module_param_cb(hysteresis_us, &gp_uint_ops, &gp_range_hysteresis_us, 0644);
MODULE_PARM_DESC(hysteresis_us,
		 "Expert: Time in microseconds a level stays busy after its last pending work before lower queues resume (default 500) [0..10000000]");

static struct gp_uint_range gp_range_hold_payback_pct = {
	.val = &gp_param.hold_payback_pct, .min = 0, .max = 10000, .name = "hold_payback_pct",
};

module_param_cb(hold_payback_pct, &gp_uint_ops, &gp_range_hold_payback_pct, 0644);
MODULE_PARM_DESC(hold_payback_pct,
		 "Expert: Learn each queue's hold from its own idle gaps: its level stops holding lower queues parked once at least half of its past gaps that long went on for this percent of a measured park plus unpark more, never later than hysteresis_us; more BE, more remaps, a longer LC tail at light load (200 is the measured setting; default 0: always hysteresis_us) [0..10000]");

static struct gp_uint_range gp_range_dispatch_window_ms = {
	.val = &gp_param.dispatch_window_ms, .min = 0, .max = 600000,
	.name = "dispatch_window_ms",
};

module_param_cb(dispatch_window_ms, &gp_uint_ops, &gp_range_dispatch_window_ms, 0644);
MODULE_PARM_DESC(dispatch_window_ms,
		 "Expert: For CP firmware that advances the read index when a dispatch starts: a lower queue whose read index moved this recently may still run a kernel and is parked like a pending one; set it to the longest kernel expected (default 0: off) [0..600000]");

static struct gp_uint_range gp_range_max_suspend_ms = {
	.val = &gp_param.max_suspend_ms, .min = 1, .max = 600000, .name = "max_suspend_ms",
};

module_param_cb(max_suspend_ms, &gp_uint_ops, &gp_range_max_suspend_ms, 0644);
MODULE_PARM_DESC(max_suspend_ms,
		 "Starvation guard: longest continuous park of a queue in milliseconds (default 1000) [1..600000]");

static struct gp_uint_range gp_range_min_slice_ms = {
	.val = &gp_param.min_slice_ms, .min = 0, .max = 60000, .name = "min_slice_ms",
};

module_param_cb(min_slice_ms, &gp_uint_ops, &gp_range_min_slice_ms, 0644);
MODULE_PARM_DESC(min_slice_ms,
		 "Expert: Starvation guard: run time in milliseconds granted after max_suspend_ms (default 20) [0..60000]");

static struct gp_uint_range gp_range_max_actions = {
	.val = &gp_param.max_actions, .min = 1, .max = 64, .name = "max_actions",
};

module_param_cb(max_actions, &gp_uint_ops, &gp_range_max_actions, 0644);
MODULE_PARM_DESC(max_actions,
		 "Expert: Most park/unpark state changes per tick; each may remap the whole device (default 8) [1..64]");

static struct gp_uint_range gp_range_max_rate = {
	.val = &gp_param.max_rate, .min = 10, .max = 100000, .name = "max_rate",
};

module_param_cb(max_rate, &gp_uint_ops, &gp_range_max_rate, 0644);
MODULE_PARM_DESC(max_rate,
		 "Expert: Most park/unpark state changes per device per second, in bursts of a tenth of that, on top of max_actions; a device backs off 1 ms..1 s after a failed action (default 1000) [10..100000]");

static struct gp_uint_range gp_range_remap_budget = {
	.val = &gp_param.remap_budget, .min = 60, .max = 6000000, .name = "remap_budget",
};

module_param_cb(remap_budget, &gp_uint_ops, &gp_range_remap_budget, 0644);
MODULE_PARM_DESC(remap_budget,
		 "Expert: Most park/unpark/shrink calls per device per minute, sustained (a token bucket of one minute's worth beside max_rate): each HWS call preempts every queue of the device, and a wave that cannot be preempted turns one into a queue or GPU reset (default 6000) [60..6000000]");

static struct gp_uint_range gp_range_shrink_pct = {
	.val = &gp_param.shrink_pct, .min = 0, .max = 99, .name = "shrink_pct",
};

module_param_cb(shrink_pct, &gp_uint_ops, &gp_range_shrink_pct, 0644);
MODULE_PARM_DESC(shrink_pct,
		 "Expert: 0: park lower queues while higher ones have work; 1..99: shrink them instead to the CUs the higher queues' own CU masks leave, else to this percent of their CUs, and let them run there (default 0) [0..99]");

static const char * const gp_backend_names[] = {
	[GP_BACKEND_AUTO] = "auto",
	[GP_BACKEND_EVICT] = "evict",
	[GP_BACKEND_SUSPEND] = "suspend",
};

static int gp_set_backend(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(gp_backend_names, val);

	if (i < 0) {
		pr_err("backend=%s: expected auto, evict or suspend\n", val);
		return -EINVAL;
	}
	if (i == GP_BACKEND_SUSPEND && !kfd_have_queue_suspend()) {
		pr_err("backend=suspend: this KFD has no queue_properties.is_suspended (evict only)\n");
		return -EINVAL;
	}
	WRITE_ONCE(gp_param.backend, i);
	gp_monitor_kick();
	return 0;
}

static int gp_get_backend(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", gp_backend_names[READ_ONCE(gp_param.backend)]);
}

static const struct kernel_param_ops gp_backend_ops = {
	.set = gp_set_backend,
	.get = gp_get_backend,
};

module_param_cb(backend, &gp_backend_ops, NULL, 0644);
MODULE_PARM_DESC(backend,
		 "Expert: How to park: auto (evict whole processes when all their queues are parked, else suspend the queue), evict, suspend (default auto)");

/* A bool parameter that takes effect at the next tick: it wakes the monitor. */
static int gp_set_bool(const char *val, const struct kernel_param *kp)
{
	bool v;

	if (kstrtobool(val, &v)) {
		pr_err("%s=%s: expected 0 or 1\n", kp->name, val);
		return -EINVAL;
	}
	WRITE_ONCE(*(bool *)kp->arg, v);
	gp_monitor_kick();
	return 0;
}

static const struct kernel_param_ops gp_bool_ops = {
	.set = gp_set_bool,
	.get = param_get_bool,
};

module_param_cb(enable, &gp_bool_ops, &gp_param.enable, 0644);
MODULE_PARM_DESC(enable, "Preempt (1) or only observe (0); 0 resumes everything parked (default 1)");

module_param_cb(tiers, &gp_bool_ops, &gp_param.tiers, 0644);
MODULE_PARM_DESC(tiers,
		 "Expert: Tier-aware parking: only a device's lowest busy level (best-effort) is parked; LC tiers between it and the top are left to the hardware's priority arbitration (default 1; 0: every level below the top is parked)");

module_param_cb(sdma_hint, &gp_bool_ops, &gp_param.sdma_hint, 0644);
MODULE_PARM_DESC(sdma_hint,
		 "Expert: A pending copy on a process's SDMA queue makes its priority level busy, so lower compute queues are parked before its kernels arrive (default 1)");

module_param_named(sched_fifo, gp_param.sched_fifo, bool, 0444);
MODULE_PARM_DESC(sched_fifo,
		 "Expert: Run the monitor thread as SCHED_FIFO (lowest RT priority) so CPU load does not stretch its tick (default off)");

module_param_named(adopt_existing, gp_param.adopt_existing, bool, 0444);
MODULE_PARM_DESC(adopt_existing,
		 "Expert: At load, find queues that already exist by walking KFD's processes (default 1)");

module_param_cb(env_priority, &gp_bool_ops, &gp_param.env_priority, 0644);
MODULE_PARM_DESC(env_priority,
		 "Trust: Honour GPREEMPT_PRIORITY in a process's environment, below cgroup rules and capped by env_max_priority; any user sets their own environment (default 0: off)");

static struct gp_uint_range gp_range_env_max = {
	.val = &gp_param.env_max_priority, .min = 0, .max = GP_PRIO_MAX,
	.name = "env_max_priority",
};

module_param_cb(env_max_priority, &gp_uint_ops, &gp_range_env_max, 0644);
MODULE_PARM_DESC(env_max_priority,
		 "Trust: Highest priority GPREEMPT_PRIORITY may grant; higher requests are lowered to it (default 7) [0..15]");
/*
 * The sources any user controls (the queue's KFD priority, which any
 * user with /dev/kfd sets to 0..15; comm, which prctl sets; the
 * environment) never rank above this.  The default, normal (7), is below
 * gpreemptctl's "high" (12): only a rule root sets (queue, pid, cgroup) can
 * make a queue latency-critical over other users' work.
 */
static struct gp_uint_range gp_range_user_max = {
	.val = &gp_param.user_max_priority, .min = 0, .max = GP_PRIO_MAX,
	.name = "user_max_priority",
};

module_param_cb(user_max_priority, &gp_uint_ops, &gp_range_user_max, 0644);
MODULE_PARM_DESC(user_max_priority,
		 "Trust: Highest priority a source users control may give: the queue's KFD priority, comm rules, GPREEMPT_PRIORITY (default 7: only root's queue, pid and cgroup rules rank above normal) [0..15]");

/*
 * A hold (gpreemptctl park) has no starvation guard; it ends after
 * this long, so a forgotten one cannot starve a job for ever.
 */
static struct gp_uint_range gp_range_max_hold = {
	.val = &gp_param.max_hold_s, .min = 0, .max = 7 * 24 * 3600,
	.name = "max_hold_s",
};

module_param_cb(max_hold_s, &gp_uint_ops, &gp_range_max_hold, 0644);
MODULE_PARM_DESC(max_hold_s,
		 "Trust: Longest a queue stays parked by hand (gpreemptctl park); then the hold is released (default 3600, 0: no limit) [0..604800]");

/*
 * Each managed queue's ids are read every tick, so one user's thousands of
 * idle queues would slow every other user's parks.  Queues of a user past
 * this many (all devices together) are still managed, without reading
 * their ids: unknown work, parked below a busy level.  Applies to queues
 * created from then on.
 */
static struct gp_uint_range gp_range_user_queues = {
	.val = &gp_param.max_user_queues, .min = 1, .max = GP_MAX_QUEUES,
	.name = "max_user_queues",
};

module_param_cb(max_user_queues, &gp_uint_ops, &gp_range_user_queues, 0644);
MODULE_PARM_DESC(max_user_queues,
		 "Trust: Queues of one user whose dispatch ids are read; past it, a queue is unknown work, parked below a busy level (default 1024) [1..4096]");
