// SPDX-License-Identifier: GPL-2.0
/*
 * config.c - the parameters of one tick: the module parameters, overridden
 * by the valid fields of the gp_config map (read every GP_STATS_NS).  A
 * rejected gp_config is counted once and named in the log.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>
#include <linux/stringify.h>
#include "monitor/monitor_int.h"
#include "params.h"
#include "core/maps.h"
#include "monitor/monitor.h"

static bool gp_config_valid(const struct gp_config *c)
{
	return c->enable <= 2 && (!c->tick_us || (c->tick_us >= 10 && c->tick_us <= 100000)) &&
	       c->hysteresis_us <= 10000000 && c->max_suspend_us <= 600000000 &&
	       c->min_slice_us <= 60000000 && c->env <= 2 && c->env_max_priority <= GP_PRIO_MAX;
}

/*
 * Why @c, over the module params, cannot be used (NULL: it can): the
 * starvation guard's cycle would be too short (M3), or the busy tick longer
 * than the idle one (m6; gp_config has no idle period, idle_us holds).
 */
static const char *gp_config_conflict(const struct gp_config *c, unsigned int max_susp,
				      unsigned int slice)
{
	if (c->max_suspend_us)
		max_susp = c->max_suspend_us / 1000 ?: 1;
	if (c->min_slice_us)
		slice = c->min_slice_us / 1000;
	if (max_susp + slice < GP_MIN_GUARD_CYCLE_MS)
		return "max_suspend + min_slice is below " __stringify(GP_MIN_GUARD_CYCLE_MS)
		       " ms (the starvation guard would thrash the device)";
	if (c->tick_us > READ_ONCE(gp_param.idle_us))
		return "tick_us is above the idle_us module parameter";
	return NULL;
}

/*
 * Parameters for this tick: module params, overridden by valid gp_config
 * fields.  Returns true when this tick's read found gp_config changed (a
 * rule written through gpreemptctl bumps its rules_gen).
 */
bool gp_effective_params(struct gp_policy_params *pp, unsigned int *tick_us, u64 now)
{
	static struct gp_config cfg;
	static u64 cfg_read_ns;
	static bool have_cfg;
	unsigned int hyst = READ_ONCE(gp_param.hysteresis_us);
	unsigned int max_susp = READ_ONCE(gp_param.max_suspend_ms);
	unsigned int slice = READ_ONCE(gp_param.min_slice_ms);
	bool enable = READ_ONCE(gp_param.enable);
	static struct gp_config last_bad;
	bool changed = false;

	*tick_us = READ_ONCE(gp_param.tick_us);
	/* gp_config is a map lookup: re-read it every GP_STATS_NS, not every tick. */
	if (!cfg_read_ns || now - cfg_read_ns >= GP_STATS_NS) {
		struct gp_config prev = cfg;
		bool had = have_cfg;

		have_cfg = gp_maps_config(&cfg);
		cfg_read_ns = now;
		changed = have_cfg != had || (have_cfg && memcmp(&cfg, &prev, sizeof(cfg)));
	}
	if (have_cfg) {
		const char *why = "a field is out of range";

		if (gp_config_valid(&cfg))
			why = gp_config_conflict(&cfg, max_susp, slice);

		if (why) {
			if (memcmp(&cfg, &last_bad, sizeof(cfg))) {
				gp_stats.bad_control++;
				last_bad = cfg;
				pr_warn_ratelimited("gp_config rejected: %s\n", why);
			}
		} else {
			if (cfg.enable)
				enable = cfg.enable == 1;
			if (cfg.tick_us)
				*tick_us = cfg.tick_us;
			if (cfg.hysteresis_us)
				hyst = cfg.hysteresis_us;
			if (cfg.max_suspend_us)
				max_susp = cfg.max_suspend_us / 1000 ?: 1;
			if (cfg.min_slice_us)
				slice = cfg.min_slice_us / 1000;
		}
	}
	pp->hysteresis_ns = (u64)hyst * NSEC_PER_USEC;
	/* An unpark pays when the run it gives promises pct % of a park plus an unpark. */
	pp->hold_payback_ns = div_u64(2 * gp_remap_cost_ns() * READ_ONCE(gp_param.hold_payback_pct),
				      100);
	pp->max_suspend_ns = (u64)max_susp * NSEC_PER_MSEC;
	pp->min_slice_ns = (u64)slice * NSEC_PER_MSEC;
	pp->max_actions = READ_ONCE(gp_param.max_actions);
	pp->enabled = enable;
	pp->tiers = READ_ONCE(gp_param.tiers);
	/* A starving queue's slice may park best-effort levels, never above normal. */
	pp->yield_max_prio = GP_PRIO_NORMAL;
	pp->dispatch_window_ns = (u64)READ_ONCE(gp_param.dispatch_window_ms) * NSEC_PER_MSEC;
	return changed;
}
