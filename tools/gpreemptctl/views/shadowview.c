// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shadowview.c - what status and stats print of shadow mode (what gpreempt
 * would do while disabled: per device and per process), of the queues it
 * cannot park, and of the time each level's work waited beside lower work.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpreemptctl.h"

static const char * const um_names[] = { "-", "copy_queue", "reset", "device", "exiting",
					 "debugger" };

/** unmanaged_name() - a gp_queue_info.unmanaged value as status prints it */
const char *unmanaged_name(unsigned int u)
{
	return u < sizeof(um_names) / sizeof(um_names[0]) ? um_names[u] : "?";
}

static double per_sec(unsigned long long n, unsigned long long ns)
{
	return ns ? n * 1e9 / ns : 0.0;
}

struct proc_sum {
	unsigned int tgid;
	char comm[GP_COMM_LEN + 1];
	unsigned long long parks, unparks, parked_ns;
};

/* The live queues' shadow counts, summed per process (tgid), busiest first. */
static int proc_sums(const struct gp_queue_info *q, int n, struct proc_sum **out)
{
	struct proc_sum *p = calloc(n ? n : 1, sizeof(*p));
	int i, j, np = 0;

	if (!p)
		return -1;
	for (i = 0; i < n; i++) {
		if (!q[i].shadow_parks && !q[i].shadow_unparks)
			continue;
		for (j = 0; j < np && p[j].tgid != q[i].tgid; j++)
			;
		if (j == np) {
			p[np].tgid = q[i].tgid;
			memcpy(p[np].comm, q[i].comm, GP_COMM_LEN);
			np++;
		}
		p[j].parks += q[i].shadow_parks;
		p[j].unparks += q[i].shadow_unparks;
		p[j].parked_ns += q[i].shadow_parked_ns;
	}
	for (i = 1; i < np; i++)
		for (j = i; j > 0 && p[j].parks > p[j - 1].parks; j--) {
			struct proc_sum t = p[j];

			p[j] = p[j - 1];
			p[j - 1] = t;
		}
	*out = p;
	return np;
}

/**
 * shadow_text() - status's shadow-mode block: totals, per device, per process
 * @st: gp_stats
 * @q: the live queues
 * @n: their count
 *
 * Printed while shadow mode is on, or after it ran (its counters stay).
 */
void shadow_text(const struct gp_stats *st, const struct gp_queue_info *q, int n)
{
	unsigned long long ns = st->shadow_ns;
	struct proc_sum *p = NULL;
	int i, np;

	if (!st->shadow_active && !ns)
		return;
	printf("shadow mode%s: in %.1f s gpreempt would have made %llu parks (%.1f/s) and %llu unparks, %llu backend calls (%.1f/s; %llu while a higher level had work: under HWS each one remaps the device, that work included)\n",
	       st->shadow_active ? " (on: enable=0, nothing is parked)" : " (off now; its last run)",
	       ns / 1e9, st->shadow_parks, per_sec(st->shadow_parks, ns), st->shadow_unparks,
	       st->shadow_remaps, per_sec(st->shadow_remaps, ns), st->shadow_lc_remaps);
	for (i = 0; i < GP_DEV_STATS; i++)
		if (st->shadow_dev_remaps[i])
			printf("  device %d: %llu calls (%.1f/s)\n", i, st->shadow_dev_remaps[i],
			       per_sec(st->shadow_dev_remaps[i], ns));
	np = proc_sums(q, n, &p);
	for (i = 0; i < np; i++)
		printf("  pid %u (%s): %llu parks (%.1f/s), would have been parked %.1f s\n",
		       p[i].tgid, p[i].comm, p[i].parks, per_sec(p[i].parks, ns),
		       p[i].parked_ns / 1e9);
	free(p);
}

/**
 * wait_text() - status's line of the time each level waited beside lower work
 * @st: gp_stats
 */
void wait_text(const struct gp_stats *st)
{
	const char *sep = "";
	int l;

	for (l = GP_PRIO_MAX; l >= 0; l--) {
		if (!st->lc_wait_ns[l])
			continue;
		if (!*sep)
			printf("waited beside lower work (per level, %s):",
			       st->shadow_active ? "what parks would win back" :
			       "what parks did not save");
		printf("%s level %d %.3f s", sep, l, st->lc_wait_ns[l] / 1e9);
		sep = ",";
	}
	if (*sep)
		putchar('\n');
}

/**
 * shadow_json() - the per-device and per-level arrays of gp_stats, as JSON members
 * @st: gp_stats
 *
 * Printed after other members (a leading comma).
 */
void shadow_json(const struct gp_stats *st)
{
	int i;

	printf(",\"shadow_dev_remaps\":[");
	for (i = 0; i < GP_DEV_STATS; i++)
		printf("%s%llu", i ? "," : "", st->shadow_dev_remaps[i]);
	printf("],\"lc_wait_ns\":[");
	for (i = 0; i <= GP_PRIO_MAX; i++)
		printf("%s%llu", i ? "," : "", st->lc_wait_ns[i]);
	putchar(']');
}
