// SPDX-License-Identifier: GPL-2.0
/*
 * cgroups.c - gp_cgroups: each cgroup's time parked and time waiting, as
 * counters that outlive its queues and processes, so that a pod's or a
 * service's parked seconds do not vanish with the queue they were counted
 * on (gpreemptctl metrics exports them per cgroup, with pod labels).
 *
 * Charged at the end of every tick with what changed in each queue since
 * the last charge, to the cgroup its process was in at the last rules
 * resolve (at most GP_RULES_RESCAN_MS ago).  The table is the monitor's
 * own, bounded at GP_MAX_CGROUPS: a slot is freed only GP_CGROUP_KEEP_S
 * after its last charge, so a user who can make cgroups (a delegated
 * subtree) cannot push out another's live counters, only lose their own
 * charges once the table is full (gp_stats.cgroups_dropped).  What the
 * last tick of a queue that ended was not charged is lost: at most one
 * tick of it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/ktime.h>
#include "monitor/monitor_int.h"
#include "core/registry.h"
#include "core/maps.h"
#include "monitor/monitor.h"

struct gp_cg {
	u64 id;			/* 0: free */
	struct hlist_node hnode;
	bool dirty;
	struct gp_cgroup_stats st;
};

static struct gp_cg gp_cgs[GP_MAX_CGROUPS];
static DEFINE_HASHTABLE(gp_cg_hash, 10);
static int gp_ncgs;
/* While full: no sweep for idle slots before this time. */
static u64 gp_cg_sweep_after;

static struct gp_cg *gp_cg_find(u64 id)
{
	struct gp_cg *c;

	hash_for_each_possible(gp_cg_hash, c, hnode, id)
		if (c->id == id)
			return c;
	return NULL;
}

/*
 * Full: free every slot idle for GP_CGROUP_KEEP_S, their map entries with
 * them.  At most once a second, so a table full of live cgroups costs a
 * walk of it a second, not one per charge.
 */
static void gp_cg_sweep(u64 now)
{
	u64 keep = (u64)GP_CGROUP_KEEP_S * NSEC_PER_SEC;
	int i;

	if (now < gp_cg_sweep_after)
		return;
	gp_cg_sweep_after = now + NSEC_PER_SEC;
	for (i = 0; i < ARRAY_SIZE(gp_cgs); i++) {
		struct gp_cg *c = &gp_cgs[i];

		if (!c->id || now - c->st.last_ns <= keep)
			continue;
		gp_maps_del_cgroup(c->id);
		hash_del(&c->hnode);
		c->id = 0;
		gp_ncgs--;
	}
}

/* Cgroup @id's slot, found or taken; NULL when the table is full. */
static struct gp_cg *gp_cg_get(u64 id, u64 now)
{
	struct gp_cg *c = gp_cg_find(id);
	int i;

	if (c)
		return c;
	if (gp_ncgs == ARRAY_SIZE(gp_cgs))
		gp_cg_sweep(now);
	if (gp_ncgs == ARRAY_SIZE(gp_cgs))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(gp_cgs); i++) {
		c = &gp_cgs[i];
		if (c->id)
			continue;
		memset(c, 0, sizeof(*c));
		c->id = id;
		hash_add(gp_cg_hash, &c->hnode, id);
		gp_ncgs++;
		return c;
	}
	return NULL;
}

/* Time @e spent parked or shrunk, to @now. */
static u64 gp_cg_parked_ns(const struct gp_queue *e, u64 now)
{
	u64 ns = e->info.suspended_ns;

	if (e->pq.state != GP_PS_RUNNING && now > e->info_parked_at)
		ns += now - e->info_parked_at;
	return ns;
}

/**
 * gp_cgroups_charge() - charge this tick's changes to each queue's cgroup
 * @n: queues in gp_snap
 * @res: this tick's decision
 * @wait_devs: devices where gp_lc_wait_account() counted a wait
 * @since_last: time since the previous scan
 * @now: after this tick's actions
 */
void gp_cgroups_charge(int n, const struct gp_policy_result *res, u64 wait_devs,
		       u64 since_last, u64 now)
{
	int i;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];
		u64 id = READ_ONCE(e->proc->cgid), parked = gp_cg_parked_ns(e, now), wait = 0;
		u32 d = gp_pq_dev(&e->pq);
		struct gp_cg *c;

		if (e->gone || !id)
			continue;
		if ((wait_devs & (1ULL << d)) && e->pq.pending && e->pq.prio == res->pend_top[d])
			wait = since_last;
		/* Every queue's cgroup has its entry, so an LC that never waited reads 0. */
		if (!wait && id == e->cg_id && parked == e->cg_parked_ns &&
		    e->info.preempts == e->cg_parks && e->info.resumes == e->cg_unparks)
			continue;
		c = gp_cg_get(id, now);
		if (!c) {
			gp_stats.cgroups_dropped++;
		} else {
			c->st.parked_ns += parked > e->cg_parked_ns ? parked - e->cg_parked_ns : 0;
			c->st.wait_ns += wait;
			c->st.parks += e->info.preempts - e->cg_parks;
			c->st.unparks += e->info.resumes - e->cg_unparks;
			c->st.last_ns = now;
			c->dirty = true;
		}
		e->cg_id = id;
		e->cg_parked_ns = parked;
		e->cg_parks = e->info.preempts;
		e->cg_unparks = e->info.resumes;
	}
	gp_stats.cgroups = gp_ncgs;
}

/**
 * gp_cgroups_publish() - put the cgroups charged since the last publish
 *
 * A failed put stays dirty and is tried at the next publish.
 */
void gp_cgroups_publish(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(gp_cgs); i++) {
		struct gp_cg *c = &gp_cgs[i];

		if (c->id && c->dirty)
			c->dirty = gp_maps_put_cgroup(c->id, &c->st) != 0;
	}
}
