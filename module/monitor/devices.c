// SPDX-License-Identifier: GPL-2.0
/*
 * devices.c - the monitor's view of each device: a small dense index per
 * kfd_node (the policy compares only queues of one device), its budget of
 * state changes (max_rate, max_actions).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "backends/backend.h"
#include "monitor/monitor_int.h"
#include "kfd/kfd.h"
#include "params.h"
#include "monitor/monitor.h"

/*
 * Per-device arbitration: each tick maps every queue's kfd_node to a small
 * dense index (the policy compares only queues of one device).  Monitor-only
 * state, static to keep it off the kthread's stack.
 */
static struct kfd_node *gp_devs[GP_POLICY_MAX_DEVS];
static u32 gp_ndevs;
/* Each device's allowances, and its count of state changes this second. */
static struct gp_allow gp_allows[GP_POLICY_MAX_DEVS];
static u32 gp_dev_budget[GP_POLICY_MAX_DEVS];
static u32 gp_dev_changes[GP_POLICY_MAX_DEVS];
static bool gp_dev_oversub[GP_POLICY_MAX_DEVS];
static u64 gp_rate_window_ns;

/**
 * gp_allow_avail() - the state changes a device's allowances let through now
 * @a: the device's allowances
 * @rate: max_rate, as read for this tick
 * @per_min: remap_budget, as read for this tick
 * @now: the tick's time
 * @spent: if not NULL, set when the remap budget, not max_rate, binds and is
 *	   used up
 *
 * The shadow (shadow.c) keeps its own allowances and counts them here too,
 * so both paths bound a tick the same way.
 */
u32 gp_allow_avail(struct gp_allow *a, u32 rate, u32 per_min, u64 now, bool *spent)
{
	u32 n = gp_bucket_avail(&a->bkt, rate, now);
	u32 remaps = gp_budget_avail(&a->remap, per_min, now);

	if (spent)
		*spent = remaps < n && !remaps;
	return min(n, remaps);
}

/**
 * gp_allow_charge() - charge one backend call to a device's allowances
 * @a: the device's allowances
 * @ok: the call did not fail on the device (a failure backs its bucket off)
 * @now: the time of the call
 *
 * Return: true when the call started a back-off.
 */
bool gp_allow_charge(struct gp_allow *a, bool ok, u64 now)
{
	gp_bucket_take(&a->bkt, READ_ONCE(gp_param.max_rate), 1);
	gp_budget_take(&a->remap, READ_ONCE(gp_param.remap_budget), 1);
	return gp_bucket_result(&a->bkt, ok, now);
}

/*
 * Charge a backend call on device slot @d to its allowances, and back off
 * on a device error.  -EIO (fenced device, reset queue) is paced by the device
 * fence's own back-off, not here; -EAGAIN (a reset process's eviction
 * refused) by the process's (preempt_evict.c).
 */
void gp_dev_charge(u32 d, int ret, u64 now)
{
	bool ok = !ret || ret == -EBUSY || ret == -ESRCH || ret == -ENOENT || ret == -EPERM ||
		  ret == -EIO || ret == -EAGAIN;

	gp_dev_changes[d]++;
	if (gp_allow_charge(&gp_allows[d], ok, now))
		gp_stats.backoffs++;
}

/*
 * pm_calc_rlib_size(): more processes with queues on a device than the HWS
 * maps at once oversubscribe its runlist, and the HWS time-slices them.
 * Parking cannot undo that (a parked process keeps its place), so it is
 * reported: gp_stats, and one line when a device becomes so.
 */
static void gp_dev_oversub_check(u32 d)
{
	struct kfd_node *dev = gp_devs[d];
	u32 procs = kfd_dqm_processes_count(kfd_node_dqm(dev));
	u32 max = kfd_node_max_procs(dev);
	bool over = max && procs > max;

	if (d < GP_DEV_STATS) {
		gp_stats.dev_procs[d] = procs;
		gp_stats.dev_max_procs[d] = max;
	}
	if (over == gp_dev_oversub[d])
		return;
	gp_dev_oversub[d] = over;
	if (over) {
		gp_stats.dev_oversub++;
		gp_stats.oversub_events++;
		pr_warn_ratelimited("gpu_id %u: %u KFD processes, over the %u the hardware scheduler maps at once: it time-slices them, parked ones included\n",
				    kfd_node_gpu_id(dev), procs, max);
	} else if (gp_stats.dev_oversub) {
		gp_stats.dev_oversub--;
	}
}

/**
 * gp_dev_budgets() - per-device allowances for this tick, and the rate of the last full second
 * @pp: this tick's parameters: gets the budgets
 * @now: the tick's time
 */
void gp_dev_budgets(struct gp_policy_params *pp, u64 now)
{
	u32 d, rate = READ_ONCE(gp_param.max_rate), busiest = 0;
	u32 per_min = READ_ONCE(gp_param.remap_budget);

	for (d = 0; d < gp_ndevs; d++) {
		bool spent;

		gp_dev_budget[d] = gp_allow_avail(&gp_allows[d], rate, per_min, now, &spent);
		if (spent)
			gp_stats.remap_throttled++;
		gp_dev_oversub_check(d);
	}
	pp->dev_budget = gp_dev_budget;
	gp_stats.hold_us = pp->hysteresis_ns / NSEC_PER_USEC;
	gp_stats.hold_payback_us = pp->hold_payback_ns / NSEC_PER_USEC;
	gp_stats.rate_limit = rate;
	if (now - gp_rate_window_ns < NSEC_PER_SEC)
		return;
	for (d = 0; d < gp_ndevs; d++) {
		busiest = max(busiest, gp_dev_changes[d]);
		gp_dev_changes[d] = 0;
	}
	gp_stats.rate_last_sec = busiest;
	gp_stats.rate_peak_sec = max_t(u64, gp_stats.rate_peak_sec, busiest);
	gp_rate_window_ns = now;
}

/**
 * gp_dev_index() - the dense slot of device @dev (the policy compares only queues of one slot)
 * @dev: a queue's device
 *
 * Return: its slot; past GP_POLICY_MAX_DEVS devices, the last one.
 */
u32 gp_dev_index(struct kfd_node *dev)
{
	u32 d;

	for (d = 0; d < gp_ndevs; d++)
		if (gp_devs[d] == dev)
			return d;
	if (gp_ndevs == GP_POLICY_MAX_DEVS) {
		pr_warn_once("more than %d devices: the rest are arbitrated together\n",
			     GP_POLICY_MAX_DEVS);
		return GP_POLICY_MAX_DEVS - 1;
	}
	gp_devs[gp_ndevs] = dev;
	gp_stats.dev_gpu_id[gp_ndevs] = kfd_node_gpu_id(dev);
	gp_stats.dev_partition[gp_ndevs] = kfd_node_partition(dev);
	return gp_ndevs++;
}
