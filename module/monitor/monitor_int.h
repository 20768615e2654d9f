/* SPDX-License-Identifier: GPL-2.0 */
/*
 * monitor_int.h - what the monitor's files share; no other file includes it.
 *
 * The monitor is one kthread (monitor.c) whose tick is:
 *   release.c  reap queues that went, restore evictions owed;
 *   snap.c     the arrays the tick's snapshot goes in, sized to the registry;
 *   config.c   this tick's parameters (module params + gp_config);
 *   scan.c     read every queue, build the policy input;
 *   policy.c   decide (pure C);
 *   apply.c    park and unpark through the backends;
 *   shadow.c   disabled: what the policy would do, counted, never done;
 *   devices.c  the per-device index, budgets (max_rate) and hold;
 *   publish.c  maps.
 * All of it runs in the monitor thread only (release.c also at unload,
 * after the thread stopped), so the state below needs no lock; defer.c's
 * helper thread acts only under gp_act_lock, which the monitor holds for
 * each tick.
 */
#ifndef GP_MONITOR_INT_H
#define GP_MONITOR_INT_H

#include <linux/ktime.h>
#include <linux/mutex.h>
#include "core/registry.h"
#include "backends/plock.h"

/* Every queue's map entry at least this often; gp_stats and gp_config this often. */
#define GP_PUBLISH_NS (100 * NSEC_PER_MSEC)
#define GP_STATS_NS (10 * NSEC_PER_MSEC)

/* snap.c: this tick's snapshot of the registry, and the policy's view. */
extern struct gp_queue **gp_snap;
extern const struct gp_probe_ops *gp_probes;
extern struct gp_pq *gp_pqs;
extern struct gp_policy_result gp_res;
int gp_snap_fit(void);
void gp_snap_free(void);

/* stats.c */
void gp_hist_add(u64 *hist, u64 ns);
void gp_lat_sample(struct gp_lat_hist *h, u64 ns);

/* config.c */
bool gp_effective_params(struct gp_policy_params *pp, unsigned int *tick_us, u64 now);

/* period.c: the period after a tick */
enum gp_tick_kind {
	GP_TICK_FAST,	/* tick_us: something may need preempting */
	GP_TICK_IDLE,	/* idle_us */
	GP_TICK_CALM,	/* nothing has work or is parked: may back off to idle_max_us */
};

extern u32 gp_dev_cus[GP_POLICY_MAX_DEVS];
extern int gp_dev_maxprio[GP_POLICY_MAX_DEVS];
void gp_scan(int n, u64 t0, bool deep);

/* period.c */
enum gp_tick_kind gp_next_tick_kind(int n, u64 t0);
u64 gp_hold_until(int n, const struct gp_policy_params *pp, u64 t0);
unsigned int gp_hold_period(int n, const struct gp_policy_params *pp, u64 t0,
			    unsigned int period);

/* qstate.c */
void gp_set_state(struct gp_queue *e, enum gp_qstate st);

/* devices.c */
/* One device's allowances: state changes per second (max_rate), remaps per minute. */
struct gp_allow {
	struct gp_bucket bkt;
	struct gp_budget remap;
};

u32 gp_allow_avail(struct gp_allow *a, u32 rate, u32 per_min, u64 now, bool *spent);
bool gp_allow_charge(struct gp_allow *a, bool ok, u64 now);
u32 gp_dev_index(struct kfd_node *dev);
void gp_dev_budgets(struct gp_policy_params *pp, u64 now);
void gp_dev_charge(u32 d, int ret, u64 now);

/* apply.c */
void gp_apply(int n, const struct gp_policy_params *pp);
u64 gp_remap_cost_ns(void);
bool gp_must_evict(const struct gp_queue *e);
bool gp_all_go_along(const struct gp_queue *e, int n, const struct gp_policy_params *pp,
		     const struct gp_policy_result *res, bool shadow, u64 now);

/* shadow.c: what gpreempt would do while disabled */
void gp_shadow_tick(int n, const struct gp_policy_params *pp, u64 now);
u64 gp_lc_wait_account(const struct gp_policy_result *res, u64 since_last);
void gp_cgroups_charge(int n, const struct gp_policy_result *res, u64 wait_devs,
		       u64 since_last, u64 now);
void gp_cgroups_publish(void);

void gp_commit_deferred(struct gp_defer *d, int n);

/* publish.c */
void gp_publish(int n, u64 now);

/* release.c */
void gp_release_queue(struct gp_queue *e);
void gp_restore_owed(void);

#endif
