// SPDX-License-Identifier: GPL-2.0
/*
 * snap.c - the monitor's scan arrays: each tick's snapshot of the registry
 * (gp_snap) and the policy's dense copy of it (gp_pqs), sized to the
 * registry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/slab.h>
#include "monitor/monitor_int.h"
#include "testing.h"
#include "core/registry.h"

struct gp_queue **gp_snap;
struct gp_pq *gp_pqs;
static unsigned int gp_snap_cap;	/* entries of each */

/**
 * gp_snap_fit() - make the scan arrays hold every registered queue
 *
 * Monitor start, its thread, or unload once it stopped.  The registry grows
 * with KFD's queues (up to GP_MAX_TRACKED) and the arrays follow, in powers
 * of two from GP_MAX_QUEUES (the GP_TESTING build's test_max_queues, so
 * that a test with a few queues makes them grow).  A failed allocation keeps the old ones: the
 * snapshot then holds the first queues of the list, and the next tick tries
 * again.
 *
 * Return: the arrays' capacity (0: none allocated).
 */
int gp_snap_fit(void)
{
	unsigned int base = gp_test_max_queues() ?: GP_MAX_QUEUES, cap;
	unsigned int want = max(READ_ONCE(gp_reg.nqueues), base);
	struct gp_queue **snap;
	struct gp_pq *pqs;

	if (want <= gp_snap_cap)
		return gp_snap_cap;
	cap = roundup_pow_of_two(want);
	snap = kvcalloc(cap, sizeof(*snap), GFP_KERNEL);
	pqs = kvcalloc(cap, sizeof(*pqs), GFP_KERNEL);
	if (!snap || !pqs) {
		kvfree(snap);
		kvfree(pqs);
		pr_warn_ratelimited("no memory to scan %u queues: the first %u are scanned\n", want,
				    gp_snap_cap);
		return gp_snap_cap;
	}
	kvfree(gp_snap);
	kvfree(gp_pqs);
	gp_snap = snap;
	gp_pqs = pqs;
	gp_snap_cap = cap;
	return cap;
}

/**
 * gp_snap_free() - free the scan arrays
 */
void gp_snap_free(void)
{
	kvfree(gp_pqs);
	kvfree(gp_snap);
	gp_pqs = NULL;
	gp_snap = NULL;
	gp_snap_cap = 0;
}
