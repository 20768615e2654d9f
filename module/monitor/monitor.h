/* SPDX-License-Identifier: GPL-2.0 */
/*
 * monitor.h - the monitor thread as main.c starts and stops it, and the
 * attach layer's services it is wired to (struct gp_probe_ops).
 */
#ifndef GP_MONITOR_H
#define GP_MONITOR_H

#include <linux/types.h>
#include "gp_maps.h"

extern struct gp_stats gp_stats;	/* the map value: stats.c, written by the monitor thread */

/**
 * struct gp_probe_ops - what the monitor asks of the attach layer (hooks/)
 * @missed: probe hits lost so far, all probes (gp_stats.probe_missed)
 * @lost: GP_LOST_* since the previous call; monitor thread only
 *
 * Wired by main.c: the monitor sits below the hooks and calls nothing of
 * theirs directly.
 */
struct gp_probe_ops {
	u64 (*missed)(void);
	u32 (*lost)(void);
};

/* What gp_probe_ops.lost reports (hooks/probes.c sets them). */
#define GP_LOST_CU_MASK 1	/* a SET_CU_MASK call ran unseen */
#define GP_LOST_PROPS 2		/* a queue property update ran unseen */
#define GP_LOST_DEBUG 4		/* a debugger enable, disable or suspend ran unseen */

int gp_monitor_start(const struct gp_probe_ops *probes);
void gp_monitor_stop(void);
void gp_monitor_kick(void);
void gp_monitor_release_all(void);
void gp_monitor_free(void);

#endif /* GP_MONITOR_H */
