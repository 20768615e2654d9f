// SPDX-License-Identifier: GPL-2.0
/*
 * qstate.c - a queue's state as the maps show it, set by the scan, the
 * actions (apply.c) and the release of queues that went (release.c).
 */
#include "monitor/monitor_int.h"
#include "core/registry.h"
#include "monitor/monitor.h"

/**
 * gp_set_state() - a queue's state as the maps show it (counted per state)
 * @e: queue
 * @st: new state
 */
void gp_set_state(struct gp_queue *e, enum gp_qstate st)
{
	if (e->info.state != st) {
		e->info.state = st;
		gp_stats.state_transitions[st]++;
		e->dirty = true;
	}
}
