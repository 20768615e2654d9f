// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - gp_stats, the monitor's copy of the gp_stats map value, and
 * its histogram helpers.  Written by the monitor thread and, for a few
 * counters, by the backends it calls (same thread); published by
 * publish.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/minmax.h>
#include "monitor/monitor_int.h"
#include "gp_lat.h"
#include "monitor/monitor.h"

struct gp_stats gp_stats;

/* Add @ns to a log2-of-microseconds histogram. */
void gp_hist_add(u64 *hist, u64 ns)
{
	u64 us = ns / NSEC_PER_USEC;
	int b = us ? ilog2(us) + 1 : 0;

	hist[min(b, GP_HIST_BUCKETS - 1)]++;
}

/**
 * gp_lat_sample() - count one latency sample in a gp_stats distribution
 * @h: &gp_stats.detect_lat, park_lat or unpark_lat
 * @ns: the sample
 *
 * Monitor thread only (gp_stats has one writer), so no lock.
 */
void gp_lat_sample(struct gp_lat_hist *h, u64 ns)
{
	gp_lat_add(h, ns);
}
