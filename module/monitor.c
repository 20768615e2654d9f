// SPDX-License-Identifier: GPL-2.0
/*
 * monitor.c - gpreempt's kthread: scan every managed queue's dispatch ids,
 * ask the policy what to park, have the backends do it, publish the state.
 *
 * Tick period: gp_param.tick_us while something could need preempting (a
 * queue is parked, or a queue has work while a higher-priority queue exists);
 * otherwise it spins down to idle_us.  Hooks wake it at once on queue
 * creation, priority change and teardown.  Only this thread calls into KFD
 * (besides module unload, after it has stopped) and only it frees registry
 * entries.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/freezer.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include "backend.h"
#include "gpreempt.h"
#include "kfd.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

struct gp_stats gp_stats;

static struct task_struct *gp_monitor_task;
static DECLARE_WAIT_QUEUE_HEAD(gp_monitor_wq);
static atomic_t gp_kicked = ATOMIC_INIT(0);
static struct gp_queue **gp_snap;
static struct gp_pq *gp_pqs;
static unsigned long gp_last_gen = ~0UL;
static u64 gp_last_scan_ns, gp_last_publish_ns, gp_last_stats_ns;

/* Every queue's map entry at least this often; gp_stats and gp_config this often. */
#define GP_PUBLISH_NS (100 * NSEC_PER_MSEC)
#define GP_STATS_NS (10 * NSEC_PER_MSEC)

/**
 * gp_monitor_kick() - wake the monitor now (safe from kprobe context)
 */
void gp_monitor_kick(void)
{
	atomic_set(&gp_kicked, 1);
	wake_up(&gp_monitor_wq);
}

static void gp_hist_add(u64 *hist, u64 ns)
{
	u64 us = ns / NSEC_PER_USEC;
	int b = us ? ilog2(us) + 1 : 0;

	hist[min(b, GP_HIST_BUCKETS - 1)]++;
}

static void gp_set_state(struct gp_queue *e, enum gp_qstate st)
{
	if (e->info.state != st) {
		e->info.state = st;
		gp_stats.state_transitions[st]++;
		e->dirty = true;
	}
}

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

/* Parameters for this tick: module params, overridden by valid gp_config fields. */
static void gp_effective_params(struct gp_policy_params *pp, unsigned int *tick_us, u64 now)
{
	static struct gp_config cfg;
	static u64 cfg_read_ns;
	static bool have_cfg;
	unsigned int hyst = READ_ONCE(gp_param.hysteresis_us);
	unsigned int max_susp = READ_ONCE(gp_param.max_suspend_ms);
	unsigned int slice = READ_ONCE(gp_param.min_slice_ms);
	bool enable = READ_ONCE(gp_param.enable);
	static struct gp_config last_bad;

	*tick_us = READ_ONCE(gp_param.tick_us);
	/* gp_config is a map lookup: re-read it every GP_STATS_NS, not every tick. */
	if (!cfg_read_ns || now - cfg_read_ns >= GP_STATS_NS) {
		have_cfg = gp_maps_config(&cfg);
		cfg_read_ns = now;
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
	pp->max_suspend_ns = (u64)max_susp * NSEC_PER_MSEC;
	pp->min_slice_ns = (u64)slice * NSEC_PER_MSEC;
	pp->max_actions = READ_ONCE(gp_param.max_actions);
	pp->enabled = enable;
	pp->tiers = READ_ONCE(gp_param.tiers);
}

/*
 * Has the thread group @tgid ended (every thread exited: KFD tears a process
 * down after its last thread's exit_mm(), when signal->live is already 0)?
 * An exec or a process that only closed /dev/kfd has not.
 */
static bool gp_tgid_ended(pid_t tgid)
{
	struct pid *pid = find_get_pid(tgid);
	struct task_struct *t;
	bool ended = true;

	if (!pid)
		return true;
	t = get_pid_task(pid, PIDTYPE_TGID);
	put_pid(pid);
	if (t) {
		ended = !atomic_read(&t->signal->live);
		put_task_struct(t);
	}
	return ended;
}

/* Called for each reaped queue. */
static void gp_release_queue(struct gp_queue *e)
{
	struct gp_queue_key key = { .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
	struct gp_proc *pr = e->proc;

	gp_ptr_release(e);
	gp_maps_del_queue(&key);
	gp_set_state(e, GP_Q_GONE);
	/* S3 F7: pid rules and holds end with their process. */
	if (READ_ONCE(pr->dead) && !READ_ONCE(pr->nqueues) && pr->tgid && !pr->rules_dropped &&
	    !gp_registry_tgid_managed(pr->tgid, pr) && gp_tgid_ended(pr->tgid)) {
		gp_maps_forget_tgid(pr->tgid);
		pr->rules_dropped = true;
	}
	if (!pr->evicted)
		return;
	if (READ_ONCE(pr->dead)) {
		/* Its evictions died with it: KFD freed the qpd. */
		if (!READ_ONCE(pr->nqueues))
			gp_evict_forget_all(pr);
	} else {
		/* Maybe its last compute queue on a device it is evicted on. */
		gp_registry_set_owed(pr, true);
	}
}

/*
 * S3 F13: an eviction gpreempt holds on a device where the process has no
 * compute queue left has nothing to unpark it any more: restore it.  Tried
 * every tick until it is done (p->mutex is only tried), so a contended
 * mutex at the destroy does not leave the device evicted.
 */
static void gp_restore_owed(void)
{
	static struct gp_proc *owed[16];
	int n, k, i;

	n = gp_registry_restores_owed(owed, ARRAY_SIZE(owed));
	for (k = 0; k < n; k++) {
		struct gp_proc *pr = owed[k];
		bool again = false;

		if (READ_ONCE(pr->dead)) {
			/* Its evictions die with it (gp_release_queue). */
			gp_registry_set_owed(pr, false);
			continue;
		}
		for (i = 0; i < GP_MAX_DEVS && pr->evicted; i++) {
			struct kfd_node *dev = pr->ev[i].dev;
			int ret;

			if (!pr->ev[i].evicted || gp_registry_dev_has_compute(pr, dev))
				continue;
			ret = gp_evict_process(pr, dev, false);
			if (ret && gp_evict_held(pr, dev))
				again = true;
		}
		gp_registry_set_owed(pr, again);
	}
}

/*
 * Per-device arbitration: each tick maps every queue's kfd_node to a small
 * dense index (the policy compares only queues of one device).  Monitor-only
 * state, static to keep it off the kthread's stack.
 */
static struct kfd_node *gp_devs[GP_POLICY_MAX_DEVS];
static int gp_dev_maxprio[GP_POLICY_MAX_DEVS];
static u32 gp_ndevs;
static struct gp_policy_result gp_res;
/* M3: each device's allowance of state changes, and its count this second. */
static struct gp_bucket gp_bkt[GP_POLICY_MAX_DEVS];
static u32 gp_dev_budget[GP_POLICY_MAX_DEVS];
static u32 gp_dev_changes[GP_POLICY_MAX_DEVS];
static u64 gp_rate_window_ns;

/*
 * Charge a backend call on device slot @d to its bucket, and back off on a
 * device error.  -EIO (fenced device, reset queue) is paced by the device
 * fence's own back-off, not here.
 */
static void gp_dev_charge(u32 d, int ret, u64 now)
{
	bool ok = !ret || ret == -EBUSY || ret == -ESRCH || ret == -ENOENT || ret == -EPERM ||
		  ret == -EIO;

	gp_bucket_take(&gp_bkt[d], READ_ONCE(gp_param.max_rate), 1);
	gp_dev_changes[d]++;
	if (gp_bucket_result(&gp_bkt[d], ok, now))
		gp_stats.backoffs++;
}

/* Per-device allowances for this tick, and the rate of the last full second. */
static void gp_dev_budgets(struct gp_policy_params *pp, u64 now)
{
	u32 d, rate = READ_ONCE(gp_param.max_rate), busiest = 0;

	for (d = 0; d < gp_ndevs; d++)
		gp_dev_budget[d] = gp_bucket_avail(&gp_bkt[d], rate, now);
	pp->dev_budget = gp_dev_budget;
	gp_stats.rate_limit = rate;
	if (now - gp_rate_window_ns < NSEC_PER_SEC)
		return;
	for (d = 0; d < gp_ndevs; d++) {
		busiest = max(busiest, gp_dev_changes[d]);
		gp_dev_changes[d] = 0;
	}
	gp_stats.rate_last_sec = busiest;
	gp_rate_window_ns = now;
}

static u32 gp_dev_index(struct kfd_node *dev)
{
	u32 d;

	for (d = 0; d < gp_ndevs; d++)
		if (gp_devs[d] == dev)
			return d;
	if (gp_ndevs == GP_POLICY_MAX_DEVS) {
		pr_warn_once("more than %d devices: the rest are arbitrated together\n",
			     GP_POLICY_MAX_DEVS);
		return GP_POLICY_MAX_DEVS - 1;
	}
	gp_devs[gp_ndevs] = dev;
	return gp_ndevs++;
}

static bool gp_wants_evict(struct gp_queue *e, int n)
{
	int i;

	if (READ_ONCE(gp_param.backend) == GP_BACKEND_SUSPEND && !gp_backend_needs_evict(e->dev))
		return false;
	/*
	 * Process granularity only when every live queue of the process on the
	 * device goes.  What the policy wanted, not what the budget granted:
	 * one evict parks them all, and a max_actions below the process's
	 * queue count must not keep it from ever being parked.
	 */
	for (i = 0; i < n; i++) {
		struct gp_queue *x = gp_snap[i];

		if (x->proc != e->proc || x->dev != e->dev || x->gone || x->sdma)
			continue;
		if (x->pq.state != GP_PS_PARKED && x->pq.wanted != GP_ACT_PARK)
			return false;
		if (x->pq.state == GP_PS_PARKED && x->backend != GP_BACKEND_EVICT)
			return false;
	}
	return true;
}

static void gp_commit(struct gp_queue *e, const struct gp_policy_params *pp, int ret,
		      int backend, u64 t0, u64 t1)
{
	bool park = e->pq.action == GP_ACT_PARK;
	bool ok = !ret;

	if (park)
		trace_preempt(e->proc->tgid, e->qid, e->pq.prio, backend, e->pq.reason, ret,
			      t1 - t0);
	else
		trace_resume(e->proc->tgid, e->qid, e->pq.prio, backend, e->pq.reason, ret,
			     t1 - t0);

	/*
	 * A queue that is gone is not coming back, and one a debugger may
	 * own now is not gpreempt's any more: treat unpark as done.  A
	 * lookup that failed (-ESRCH) means gone only for a process known to
	 * be dead (S3 F9): else the queue is still parked, and the unpark is
	 * tried again.
	 */
	if (!park && (ret == -ENOENT || ret == -EPERM ||
		      (ret == -ESRCH && (READ_ONCE(e->proc->dead) || READ_ONCE(e->gone)))))
		ok = true;
	if (!ok) {
		gp_set_state(e, park ? GP_Q_RUNNING : GP_Q_SUSPENDED);
		if (ret != -EBUSY) {
			e->info.errors++;
			e->dirty = true;
		}
		return;
	}
	gp_policy_commit(pp, &e->pq, true, t1);
	e->dirty = true;
	if (park) {
		e->backend = backend;
		e->info.backend = backend;
		e->info.preempts++;
		e->info.last_preempt_ns = t1 - t0;
		gp_stats.preempts++;
		gp_hist_add(gp_stats.preempt_hist, t1 - t0);
		gp_set_state(e, GP_Q_SUSPENDED);
	} else {
		e->info.resumes++;
		e->info.suspended_ns += t1 - e->info_parked_at;
		gp_stats.resumes++;
		if (e->pq.reason == GP_WHY_STARVING)
			gp_stats.starvation_slices++;
		gp_set_state(e, GP_Q_RUNNING);
	}
	if (park)
		e->info_parked_at = t1;
}

/*
 * S3 F21: under HWS a park or unpark unmaps and remaps the whole device, so
 * a higher level with work there is preempted too, for the whole call.
 */
static void gp_count_lc_preempt(const struct gp_queue *e, u64 ns)
{
	u32 d = gp_pq_dev(&e->pq);

	if (!(gp_res.pend_valid & (1ULL << d)) || gp_res.pend_top[d] <= e->pq.prio)
		return;
	gp_stats.lc_preempts++;
	gp_stats.lc_preempt_ns += ns;
}

/* Apply the policy's actions; evictions are per process, suspends per queue. */
static void gp_apply(int n, const struct gp_policy_params *pp)
{
	int i, j, pass;

	for (pass = 0; pass < 2; pass++) {
		enum gp_action act = pass ? GP_ACT_UNPARK : GP_ACT_PARK;

		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];
			bool by_proc;
			u64 t0, t1;
			int ret;

			if (e->pq.action != act || e->acted)
				continue;
			gp_set_state(e, act == GP_ACT_PARK ? GP_Q_PREEMPTING : GP_Q_RESUMING);
			by_proc = act == GP_ACT_PARK ? gp_wants_evict(e, n) :
				  e->backend == GP_BACKEND_EVICT;
			if (!by_proc && act == GP_ACT_PARK &&
			    (READ_ONCE(gp_param.backend) == GP_BACKEND_EVICT ||
			     !kfd_have_queue_suspend() || gp_backend_needs_evict(e->dev))) {
				/* Forced process granularity, but not all its queues go. */
				gp_set_state(e, GP_Q_RUNNING);
				continue;
			}
			t0 = ktime_get_ns();
			if (by_proc)
				ret = gp_evict_process(e->proc, e->dev, act == GP_ACT_PARK);
			else
				ret = gp_suspend_queue(e, act == GP_ACT_PARK, false);
			t1 = ktime_get_ns();
			gp_dev_charge(gp_pq_dev(&e->pq), ret, t1);
			gp_count_lc_preempt(e, t1 - t0);
			if (!by_proc) {
				gp_commit(e, pp, ret, GP_BACKEND_SUSPEND, t0, t1);
				continue;
			}
			/* The whole process moved: commit each of its queues. */
			for (j = 0; j < n; j++) {
				struct gp_queue *x = gp_snap[j];

				if (x->proc != e->proc || x->dev != e->dev || x->gone)
					continue;
				if (act == GP_ACT_UNPARK && x->backend != GP_BACKEND_EVICT)
					continue;
				if (act == GP_ACT_UNPARK && x->pq.state != GP_PS_PARKED)
					continue;
				if (act == GP_ACT_PARK && x->pq.state == GP_PS_PARKED)
					continue;
				x->pq.action = act;
				x->pq.reason = e->pq.reason;
				x->acted = true;
				gp_commit(x, pp, ret, GP_BACKEND_EVICT, t0, t1);
			}
		}
	}
}

static void gp_publish(int n, u64 now, bool force)
{
	bool changed = false;
	int i;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];
		struct gp_queue_key key;

		if (e->gone || (!e->dirty && !force))
			continue;
		key = (struct gp_queue_key){ .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
		e->dirty = false;
		changed = true;
		gp_maps_put_queue(&key, &e->info);
	}
	if (force || changed || now - gp_last_stats_ns >= GP_STATS_NS) {
		gp_stats.probe_missed = gp_hooks_missed();
		gp_maps_put_stats(&gp_stats);
		gp_last_stats_ns = now;
	}
	if (force)
		gp_last_publish_ns = now;
}

/* S3 F7: a hold older than max_hold_s is released, in the map too. */
static void gp_hold_expire(struct gp_queue *e, u64 now)
{
	u64 max = (u64)READ_ONCE(gp_param.max_hold_s) * NSEC_PER_SEC;
	struct gp_queue_key key;

	if (!e->hold || !max || e->pq.state != GP_PS_PARKED || now - e->pq.state_since_ns < max)
		return;
	key = (struct gp_queue_key){ .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
	gp_maps_release_hold(&key);
	e->hold = false;
	e->info.held = false;
	e->dirty = true;
	pr_info_ratelimited("queue %u of %d: held parked for max_hold_s (%u s): released\n",
			    e->qid, e->proc->tgid, READ_ONCE(gp_param.max_hold_s));
}

/* First sight of a queue: pointers, identity fields of the map value. */
static void gp_first_sight(struct gp_queue *e, u64 now)
{
	struct gp_queue_info *in = &e->info;

	gp_ptr_setup(e);
	in->tgid = e->proc->tgid;
	in->pasid = e->proc->pasid;
	in->qid = e->qid;
	memcpy(in->comm, e->proc->comm, sizeof(in->comm));
	in->ptr_path = e->ptr_path;
	e->pq.state = GP_PS_RUNNING;
	e->pq.state_since_ns = now;
	if (e->leftover) {
		pr_info("queue %u of %d: left parked by an earlier gpreempt, taken over\n", e->qid,
			e->proc->tgid);
		e->pq.state = GP_PS_PARKED;
		e->backend = GP_BACKEND_SUSPEND;
		e->info_parked_at = now;
		in->state = GP_Q_SUSPENDED;
	} else if (gp_evict_held(e->proc, e->dev)) {
		/* Created while gpreempt holds its process evicted: KFD made it inactive. */
		e->pq.state = GP_PS_PARKED;
		e->backend = GP_BACKEND_EVICT;
		e->info_parked_at = now;
		in->state = GP_Q_SUSPENDED;
	}
	e->seen = true;
	e->dirty = true;
	gp_stats.queues_seen++;
}

/* One scan; returns the period until the next one in microseconds. */
static unsigned int gp_tick(void)
{
	struct gp_policy_result *res = &gp_res;
	struct gp_policy_params pp;
	unsigned int tick_us;
	bool fast = false;
	int i, n;
	u64 t0 = ktime_get_ns(), t1, since_last;

	if (READ_ONCE(gp_reg.gen) != gp_last_gen) {
		gp_last_gen = READ_ONCE(gp_reg.gen);
		gp_registry_reap(gp_release_queue);
	}
	gp_restore_owed();
	gp_effective_params(&pp, &tick_us, t0);
	gp_rules_tick(t0);
	n = gp_registry_snapshot(gp_snap, GP_MAX_QUEUES);
	since_last = gp_last_scan_ns ? t0 - gp_last_scan_ns : 0;
	gp_last_scan_ns = t0;
	/* Device slots persist (their buckets do); levels are per tick. */
	for (i = 0; i < GP_POLICY_MAX_DEVS; i++)
		gp_dev_maxprio[i] = INT_MIN;

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];
		struct gp_queue_info *in = &e->info;
		u64 rptr = 0, wptr = 0;
		bool pending, blocked;
		int prio, rd;
		u32 src;

		e->acted = false;
		if (e->gone) {
			e->pq.action = GP_ACT_NONE;
			e->pq.pending = false;
			continue;
		}
		if (!e->seen)
			gp_first_sight(e, t0);
		/* M6: unknown is not pending, so it never triggers or holds a park. */
		rd = gp_ptr_read(e, &rptr, &wptr);
		pending = !rd && wptr != rptr;
		/* F10: waiting at a barrier is not pending: it may wait on a lower queue. */
		blocked = pending && gp_ptr_head_blocked(e, rptr);
		if (blocked)
			pending = false;
		if (e->sdma && !READ_ONCE(gp_param.sdma_hint))
			pending = false;
		if (READ_ONCE(e->props_stale)) {
			/* S3 F16: no foreign mm installed during a KFD call. */
			gp_ptr_read_end();
			gp_backend_read_props(e);
		}
		prio = READ_ONCE(e->kfd_priority);
		src = gp_rules_apply(e, &prio);
		gp_hold_expire(e, t0);
		e->pq.hold = e->hold;

		if (pending && !e->pq.pending)
			e->pending_since_ns = t0;
		e->pq.pending = pending;
		e->pq.blocked = blocked;
		e->pq.prio = prio;
		e->pq.dev = gp_dev_index(e->dev);
		e->pq.signal_only = e->sdma;
		e->pq.parkable = e->aql && !e->sdma && !e->reset && !READ_ONCE(e->proc->debugged) &&
				 !READ_ONCE(e->proc->dead) && gp_backend_dev_usable(e->dev);
		/* Pointers alone are refreshed by the periodic publish, not per tick. */
		if (pending != in->pending || blocked != in->blocked ||
		    prio != in->eff_priority || src != in->prio_source ||
		    READ_ONCE(e->kfd_priority) != in->kfd_priority)
			e->dirty = true;
		in->rptr = rptr;
		in->wptr = wptr;
		in->pending = pending;
		in->blocked = blocked;
		in->eff_priority = prio;
		in->prio_source = src;
		in->kfd_priority = READ_ONCE(e->kfd_priority);
		in->queue_percent = READ_ONCE(e->queue_percent);
		in->ptr_path = rd && rd != -ENODATA ? GP_PTR_NONE : e->ptr_path;
		gp_dev_maxprio[e->pq.dev] = max(gp_dev_maxprio[e->pq.dev], prio);
	}
	gp_ptr_read_end();

	/* The policy works on a dense array. */
	for (i = 0; i < n; i++)
		gp_pqs[i] = gp_snap[i]->pq;
	gp_dev_budgets(&pp, t0);
	gp_policy_decide(&pp, gp_pqs, n, t0, res);
	gp_stats.throttled += res->throttled;
	for (i = 0; i < n; i++) {
		gp_snap[i]->pq = gp_pqs[i];
		if (gp_snap[i]->gone)
			gp_snap[i]->pq.action = GP_ACT_NONE;
	}

	if (res->inversion) {
		gp_stats.inversions++;
		/*
		 * Detection: the work appeared at most one tick before this
		 * scan, at the top of a device with an inversion.
		 */
		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];
			u32 d = gp_pq_dev(&e->pq);

			if (e->gone || !(res->inversion_devs & (1ULL << d)))
				continue;
			if (e->pq.prio == res->top_prio[d] && e->pq.pending &&
			    e->pending_since_ns == t0)
				gp_hist_add(gp_stats.detect_hist, since_last);
		}
	}
	gp_apply(n, &pp);

	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];

		if (e->gone)
			continue;
		if (e->pq.state == GP_PS_PARKED ||
		    (e->pq.pending && e->pq.prio < gp_dev_maxprio[e->pq.dev]) ||
		    e->pq.last_pending_ns == t0)
			fast = true;
	}

	t1 = ktime_get_ns();
	gp_stats.ticks++;
	if (fast)
		gp_stats.busy_ticks++;
	gp_stats.scan_ns_last = t1 - t0;
	gp_stats.scan_ns_total += t1 - t0;
	gp_stats.scan_ns_max = max(gp_stats.scan_ns_max, t1 - t0);
	gp_stats.queues = n;
	gp_stats.processes = READ_ONCE(gp_reg.nprocs);
	gp_stats.queues_untracked = READ_ONCE(gp_reg.untracked);
	gp_publish(n, t1, t1 - gp_last_publish_ns >= GP_PUBLISH_NS);
	return fast ? tick_us : READ_ONCE(gp_param.idle_us);
}

/*
 * The monitor is freezable (M7): during system suspend or hibernation it
 * sleeps frozen instead of calling update_queue on a device going down.  No
 * wait_event_freezable_hrtimeout() exists, so this is the hrtimeout wait in
 * the state wait_event_freezable() uses.
 */
static int gp_monitor_fn(void *unused)
{
	set_freezable();
	while (!kthread_should_stop()) {
		u64 t0 = ktime_get_ns();
		u64 ns = (u64)gp_tick() * NSEC_PER_USEC;
		u64 floor = (u64)READ_ONCE(gp_param.tick_us) * NSEC_PER_USEC;
		u64 spent = ktime_get_ns() - t0;
		bool kicked = atomic_xchg(&gp_kicked, 0);

		/*
		 * A kick starts the next tick early, but never sooner than
		 * tick_us after this one started (S3 F20): a process looping
		 * on UPDATE_QUEUE kicks as fast as it likes and still cannot
		 * make the monitor scan back to back.  Kicks during that wait
		 * are kept for the tick after it.
		 */
		if (kicked) {
			if (spent >= floor)
				continue;
			ns = floor - spent;
		}
		if (kthread_should_stop())
			break;
		__wait_event_hrtimeout(gp_monitor_wq,
				       (!kicked && atomic_xchg(&gp_kicked, 0)) ||
				       kthread_should_stop(),
				       ns_to_ktime(ns), (TASK_INTERRUPTIBLE | TASK_FREEZABLE));
	}
	return 0;
}

/**
 * gp_monitor_start() - allocate the scan arrays and start the kthread
 *
 * Return: 0 or a negative errno.
 */
int gp_monitor_start(void)
{
	gp_snap = kvcalloc(GP_MAX_QUEUES, sizeof(*gp_snap), GFP_KERNEL);
	gp_pqs = kvcalloc(GP_MAX_QUEUES, sizeof(*gp_pqs), GFP_KERNEL);
	if (!gp_snap || !gp_pqs)
		goto err_free;
	gp_monitor_task = kthread_run(gp_monitor_fn, NULL, "gpreempt");
	if (IS_ERR(gp_monitor_task)) {
		pr_err("cannot start the monitor thread: %ld\n", PTR_ERR(gp_monitor_task));
		gp_monitor_task = NULL;
		goto err_free;
	}
	/* M7: a tick that a CPU-bound load cannot stretch to milliseconds. */
	if (gp_param.sched_fifo)
		sched_set_fifo_low(gp_monitor_task);
	return 0;

err_free:
	kvfree(gp_pqs);
	kvfree(gp_snap);
	gp_pqs = NULL;
	gp_snap = NULL;
	return -ENOMEM;
}

/**
 * gp_monitor_stop() - stop the kthread (no KFD call happens after this)
 */
void gp_monitor_stop(void)
{
	if (gp_monitor_task)
		kthread_stop(gp_monitor_task);
	gp_monitor_task = NULL;
}

/**
 * gp_monitor_release_all() - unpark everything gpreempt parked
 *
 * Module unload, after gp_monitor_stop(): waits for p->mutex where needed,
 * so it returns only when every parked queue is back (or gone with its
 * process) and every eviction is balanced.
 */
void gp_monitor_release_all(void)
{
	int i, n, try, left = 0, failed;

	if (!gp_snap)
		return;
	gp_registry_reap(gp_release_queue);
	/* Evictions first, before anything can be marked dead (C7). */
	failed = gp_registry_restore_evictions();
	if (failed)
		pr_err("%d process(es): restore failed at unload (KFD error; count balanced)\n",
		       failed);
	n = gp_registry_snapshot(gp_snap, GP_MAX_QUEUES);
	/* A few rounds: a device that hung may come back meanwhile. */
	for (try = 0; try < 3; try++) {
		left = 0;
		for (i = 0; i < n; i++) {
			struct gp_queue *e = gp_snap[i];
			int ret;

			if (e->gone || e->pq.state != GP_PS_PARKED)
				continue;
			if (e->backend == GP_BACKEND_EVICT) {
				e->pq.state = GP_PS_RUNNING;	/* restored above */
				continue;
			}
			ret = gp_suspend_queue(e, false, true);
			if (ret && ret != -ESRCH && ret != -ENOENT && ret != -EPERM) {
				left++;
				continue;
			}
			e->pq.state = GP_PS_RUNNING;
		}
		if (!left)
			break;
		msleep(500);
	}
	if (left)
		pr_err("%d queue(s) could not be resumed at unload\n", left);
}

/**
 * gp_monitor_free() - free the registry and the scan arrays
 *
 * Module unload, after the probes are gone (nothing can add entries).
 */
void gp_monitor_free(void)
{
	gp_registry_free_all(gp_release_queue);
	kvfree(gp_pqs);
	kvfree(gp_snap);
	gp_pqs = NULL;
	gp_snap = NULL;
}
