/* SPDX-License-Identifier: GPL-2.0 */
/*
 * params.h - the module parameters (params.c), read by every layer.
 */
#ifndef GP_PARAMS_H
#define GP_PARAMS_H

#include <linux/types.h>

struct gp_params {
	unsigned int tick_us;
	unsigned int idle_us;
	unsigned int idle_max_us;	/* deep idle: longest period */
	unsigned int hysteresis_us;
	unsigned int hold_payback_pct;	/* 0: the hold is hysteresis_us */
	unsigned int max_suspend_ms;
	unsigned int min_slice_ms;
	unsigned int max_actions;
	unsigned int max_rate;	/* state changes per device per second */
	unsigned int remap_budget;	/* ... per device per minute, sustained */
	int backend;		/* enum gp_backend_kind */
	unsigned int shrink_pct;	/* 0: park; else shrink BE to this share of its CUs */
	bool enable;
	bool tiers;		/* tier-aware policy (gp_policy_params.tiers) */
	unsigned int dispatch_window_ms;	/* early-rptr firmware, 0: off */
	bool sdma_hint;		/* SDMA queues' pending copies make their level busy */
	bool adopt_existing;
	bool sched_fifo;	/* monitor kthread SCHED_FIFO, load time only */
	bool env_priority;
	unsigned int env_max_priority;
	unsigned int user_max_priority;	/* cap of user-controlled sources */
	unsigned int max_hold_s;	/* longest park by hand, 0: none */
	unsigned int max_user_queues;	/* queues of one user whose ids are read */
};

extern struct gp_params gp_param;

/* max_suspend + min_slice below this makes the starvation guard thrash. */
#define GP_MIN_GUARD_CYCLE_MS 10

#endif /* GP_PARAMS_H */
