// SPDX-License-Identifier: GPL-2.0
/*
 * publish.c - the monitor's state out to the BPF maps: each queue's
 * gp_queues value when it changed (when only its dispatch ids moved, every
 * GP_PUBLISH_NS), gp_stats with every change and every GP_STATS_NS.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "monitor/monitor_int.h"
#include "core/registry.h"
#include "core/maps.h"
#include "monitor/monitor.h"

static u64 gp_last_publish_ns, gp_last_stats_ns;

/**
 * gp_publish() - the maps: changed queues now, moved dispatch ids every GP_PUBLISH_NS
 * @n: queues in gp_snap
 * @now: the tick's end
 *
 * A queue whose value did not change since its last put is not put again:
 * in idle, a tick puts no queue.  gp_stats goes out with any change, and at
 * least every GP_STATS_NS.
 */
void gp_publish(int n, u64 now)
{
	bool force = now - gp_last_publish_ns >= GP_PUBLISH_NS, changed = false;
	int i;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];
		struct gp_queue_key key;

		if (e->gone)
			continue;
		if (e->info.mutex_held != READ_ONCE(e->proc->held_count)) {
			e->info.mutex_held = READ_ONCE(e->proc->held_count);
			e->dirty = true;
		}
		if (!(e->dirty || (force && e->refresh)))
			continue;
		key = (struct gp_queue_key){ .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
		e->dirty = false;
		changed = true;
		/* A failed put is tried again with the next periodic ones. */
		e->refresh = gp_maps_put_queue(&key, &e->info) != 0;
	}
	if (force || changed || now - gp_last_stats_ns >= GP_STATS_NS) {
		gp_stats.probe_missed = gp_probes->missed();
		gp_maps_put_stats(&gp_stats);
		gp_last_stats_ns = now;
	}
	if (force) {
		gp_cgroups_publish();
		gp_last_publish_ns = now;
	}
}
