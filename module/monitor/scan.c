// SPDX-License-Identifier: GPL-2.0
/*
 * scan.c - the monitor's read of every managed queue, once per tick: its
 * read/write dispatch ids, whether its head packet waits at a barrier, its
 * KFD properties when a hook changed them, its effective priority (rules)
 * and hold, and the device level it counts towards.  Builds the policy's
 * input (e->pq) and the map value (e->info).
 * over 400 lines: one read of each queue per tick, with the checks of
 * KFD's own state that must run while the scan holds the process's mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include "backends/backend.h"
#include "monitor/monitor_int.h"
#include "params.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "core/maps.h"
#include "core/rules.h"
#include "monitor/monitor.h"
#include "backends/defer.h"

/*
 * Per-tick level of each device slot: the highest effective priority among
 * its queues (period.c reads it too).  Monitor-only state, off the kthread's stack.
 */
int gp_dev_maxprio[GP_POLICY_MAX_DEVS];
/*
 * Per device slot, the CUs of the widest mask an owner set there: ROCr sets
 * one on every queue it creates (every CU, or HSA_CU_MASK), so this is the
 * device's CU count as its clients see it; 0: not known.
 */
u32 gp_dev_cus[GP_POLICY_MAX_DEVS];
/*
 * gp_backend_dev_usable() of each device slot's device, once per tick (its
 * dqm->ops checks are the same for every queue of the device).
 */
static struct kfd_node *gp_dev_checked[GP_POLICY_MAX_DEVS];
static bool gp_dev_usable[GP_POLICY_MAX_DEVS];

/*
 * Scans since the last SET_CU_MASK call gpreempt missed (0: one
 * missed before this scan's snapshot was taken; large: none lately).
 */
static unsigned int gp_cu_lost_age = UINT_MAX;

/* gp_backend_dev_usable(@e->dev), asked once per device and tick. */
static bool gp_scan_dev_usable(const struct gp_queue *e)
{
	u32 d = e->pq.dev;

	/* Past GP_POLICY_MAX_DEVS devices, a slot holds several: ask each one. */
	if (gp_dev_checked[d] != e->dev) {
		gp_dev_checked[d] = e->dev;
		gp_dev_usable[d] = gp_backend_dev_usable(e->dev);
	}
	return gp_dev_usable[d];
}

/*
 * Why gpreempt cannot park @e now (GP_UM_NONE: it can).  A debugged process
 * stays parkable: any process may enable KFD's debug trap on itself, so
 * exempting it would be an evasion.  apply.c parks it by eviction only,
 * which the debugger's queue suspend composes with (QUEUE_IS_ACTIVE() needs
 * both cleared).  Its is_suspended flag is the debugger's: a park by that
 * flag is given back (unmanaged for one tick), and the next park is an
 * eviction.  So is a process with a reset queue (apply.c); one whose
 * eviction was refused for it (KFD holds an eviction of its own, or
 * p->mutex was busy) waits out gp_proc.reset_retry_ns unmanaged: each try
 * would spend the device's budget, every tick.
 */
static enum gp_unmanaged gp_scan_unmanaged(const struct gp_queue *e, u64 now)
{
	if (e->sdma)
		return GP_UM_COPY;
	if (e->reset && now < READ_ONCE(e->proc->reset_retry_ns))
		return GP_UM_RESET;
	if (READ_ONCE(e->proc->dead))
		return GP_UM_EXITING;
	if (!gp_scan_dev_usable(e))
		return GP_UM_DEVICE;
	if (READ_ONCE(e->proc->debugged) && e->pq.state == GP_PS_PARKED &&
	    e->backend == GP_BACKEND_SUSPEND)
		return GP_UM_DEBUGGER;
	return GP_UM_NONE;
}

/*
 * The owner's CU mask changed (SET_CU_MASK): its weight, and a shrunk queue
 * runs on the owner's mask now, so it counts as running again.
 */
static void gp_scan_cu_mask(struct gp_queue *e, u64 t0)
{
	if (!READ_ONCE(e->cu_mask_changed))
		return;
	WRITE_ONCE(e->cu_mask_changed, false);
	e->cu_count = gp_cu_weight(e->cu_mask, READ_ONCE(e->cu_mask_bits));
	if (e->pq.state != GP_PS_SHRUNK)
		return;
	e->pq.state = GP_PS_RUNNING;
	e->pq.state_since_ns = t0;
	e->info.suspended_ns += t0 - e->info_parked_at;
	gp_set_state(e, GP_Q_RUNNING);
}

/*
 * Shrink where a park would be: shrink mode, a mask gpreempt can give back
 * and knows the size of (the owner's; or none, every CU, on a device where
 * some owner's mask tells how many that is), of at least 2 CUs, on a device
 * that takes one.  Else the queue is parked.  A shrink needs p->mutex and
 * the debugger's leave: a debugged process, or one that holds its own
 * mutex, is parked by eviction instead (a shrink it could refuse for ever
 * would let it run beside the work above it), and so is a secondary context
 * (7.2+), whose queues are never acted on one by one (backend.c).
 */
static bool gp_shrinkable(const struct gp_queue *e)
{
	u32 cus = READ_ONCE(e->cu_mask_bits) ? e->cu_count : gp_dev_cus[e->pq.dev];

	return READ_ONCE(gp_param.shrink_pct) && READ_ONCE(gp_reg.have_cu_masks) &&
	       e->pq.parkable && !e->no_shrink && !READ_ONCE(e->cu_mask_unknown) && cus > 1 &&
	       !READ_ONCE(e->proc->debugged) && !READ_ONCE(e->proc->lock_held) && !e->proc->ctx &&
	       !READ_ONCE(e->proc->evict_only) && !e->reset;
}

/* A hold older than max_hold_s is released, in the map too. */
static void gp_hold_expire(struct gp_queue *e, u64 now)
{
	u64 max = (u64)READ_ONCE(gp_param.max_hold_s) * NSEC_PER_SEC;
	struct gp_queue_key key;

	if (!e->hold || !max || e->pq.state != GP_PS_PARKED || now - e->pq.state_since_ns < max)
		return;
	key = (struct gp_queue_key){ .tgid = e->proc->tgid, .qid = gp_map_qid(e) };
	gp_maps_release_hold(&key);
	e->hold = false;
	e->hold_disabled = false;
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
	/*
	 * Created just before a missed SET_CU_MASK was noticed, it was
	 * not in that scan's snapshot: its mask may be the one missed.
	 */
	if (gp_cu_lost_age <= 1)
		WRITE_ONCE(e->cu_mask_unknown, true);
	e->seen = true;
	e->dirty = true;
	gp_stats.queues_seen++;
}

/*
 * A SET_CU_MASK or property update ran in KFD unseen (no kretprobe
 * instance was free): no queue's recorded mask can be trusted to give back
 * (unknown: parked instead of shrunk, until its owner sets one gpreempt
 * sees), and every queue's properties are read again.
 */
static void gp_scan_lost(int n)
{
	u32 lost = gp_probes->lost();
	int i, shrunk = 0;

	if (gp_cu_lost_age < UINT_MAX)
		gp_cu_lost_age++;
	if (!lost)
		return;
	if (lost & GP_LOST_CU_MASK)
		gp_cu_lost_age = 0;
	if (lost & GP_LOST_DEBUG)
		gp_stats.dbg_lost++;
	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];

		if (lost & GP_LOST_PROPS)
			WRITE_ONCE(e->props_stale, true);
		/*
		 * A debugger call ran unseen: any process may be debugged now
		 * (the flag of its queues the debugger's) or resumed.  Which
		 * one is not known: every process is parked by eviction only.
		 */
		if (lost & GP_LOST_DEBUG)
			WRITE_ONCE(e->proc->evict_only, true);
		if (!(lost & GP_LOST_CU_MASK))
			continue;
		WRITE_ONCE(e->cu_mask_unknown, true);
		shrunk += e->pq.state == GP_PS_SHRUNK;
	}
	if (lost & GP_LOST_DEBUG)
		pr_warn_ratelimited("missed a debugger call in KFD: every process is parked by eviction only\n");
	if (!(lost & (GP_LOST_CU_MASK | GP_LOST_PROPS)))
		return;
	pr_warn_ratelimited("missed a%s%s call in KFD: %s%s\n",
			    lost & GP_LOST_CU_MASK ? " SET_CU_MASK" : "",
			    lost & GP_LOST_PROPS ? " queue update" : "",
			    lost & GP_LOST_CU_MASK ?
			    "no queue is shrunk until its owner sets its CU mask again" :
			    "queue properties are read again",
			    shrunk ? "; a shrunk queue grows back to the last mask seen" : "");
}

/*
 * Is @e's work held off the hardware by KFD itself?  KFD deactivates
 * queues without touching their dispatch ids: its own evictions (TTM,
 * userptr, SVM), a VM fault and a GPU reset (evicted until the process
 * exits), ROCr's suspend (queue_percent 0), the debugger's.  Their work
 * runs nothing, so it is no reason to park anything.  Only a queue
 * gpreempt has not taken off itself: one it parked, or whose process it
 * holds evicted, or that a deferred action of its process is using, reads
 * as before.  Only where KFD's state can be read safely (the process's mm
 * held, p->mutex free): else, as before too (unknown fails closed).
 */
static bool gp_scan_off_hw(struct gp_queue *e)
{
	struct kfd_process *p;
	bool active;

	if (e->pq.state == GP_PS_PARKED || READ_ONCE(e->pinned) ||
	    gp_evict_held(e->proc, e->dev))
		return false;
	p = gp_ptr_window(e);
	if (!p || gp_backend_queue_flag(p, e, GP_QFLAG_ACTIVE, &active))
		return false;
	return !active;
}

/*
 * Trust, but verify: is a park of @e by its is_suspended flag still there?
 * KFD's debugger paths clear that flag on every queue of a process, whoever
 * set it: kfd_dbg_trap_deactivate() runs resume_queues(p, 0, NULL) (6.12
 * kfd_debug.c:595), reached from a DBG_TRAP_ENABLE that fails its copy to
 * the caller (kfd_debug.c:817-827) and from a disable (:667-677), which
 * any process may call on itself.  No probe outcome tells gpreempt which
 * of them ran, so each tick re-reads the flag of every such park, under
 * the scan's discipline (the process's mm held, p->mutex only tried: busy,
 * it is read at the next tick).  A park KFD undid is counted, and the
 * queue is running again for the policy, which parks it in this tick by
 * eviction: its process is parked by eviction only from now on, and KFD's
 * debugger paths never touch the eviction count.
 */
static void gp_scan_verify_park(struct gp_queue *e, u64 t0)
{
	struct kfd_process *p;
	bool suspended;

	if (e->pq.state != GP_PS_PARKED || e->backend != GP_BACKEND_SUSPEND ||
	    READ_ONCE(e->pinned) || gp_defer_inflight(e->proc) ||
	    gp_test_defence_off(GP_DEF_PARK_RECHECK))
		return;
	p = gp_ptr_window(e);
	if (!p || gp_backend_queue_flag(p, e, GP_QFLAG_SUSPENDED, &suspended) || suspended)
		return;
	gp_stats.suspend_lost++;
	WRITE_ONCE(e->proc->evict_only, true);
	pr_warn_ratelimited("queue %u of %d: KFD resumed a queue gpreempt parked (a debugger call): its process is parked by eviction from now on\n",
			    e->qid, e->proc->tgid);
	e->pq.state = GP_PS_RUNNING;
	e->pq.state_since_ns = t0;
	e->info.suspended_ns += t0 - e->info_parked_at;
	gp_set_state(e, GP_Q_RUNNING);
	e->dirty = true;
}

/*
 * One queue: its dispatch ids, KFD properties and rules, into e->pq and
 * e->info.  @deep: the monitor is in deep idle.  Return: it had work that
 * KFD holds off the hardware.
 */
static bool gp_scan_queue(struct gp_queue *e, u64 t0, bool deep)
{
	struct gp_queue_info *in = &e->info;
	u64 rptr = 0, wptr = 0;
	bool pending, blocked, progressed, off_hw;
	u32 src, path, percent, um;
	int prio, rd;

	e->acted = false;
	if (e->gone) {
		e->pq.action = GP_ACT_NONE;
		e->pq.pending = false;
		return false;
	}
	if (!e->seen)
		gp_first_sight(e, t0);
	/*
	 * Unknown is not pending, so it never triggers a park; but
	 * the policy parks it below a busy level (e->pq.unknown).  A failed
	 * read keeps the last ids read, so the next read's progress is real.
	 */
	rd = gp_ptr_read(e, &rptr, &wptr);
	if (rd) {
		rptr = in->rptr;
		wptr = in->wptr;
	}
	pending = !rd && wptr != rptr;
	progressed = !rd && rptr != in->rptr;
	/* Read while the process's mm is held (gp_ptr_window()). */
	gp_scan_verify_park(e, t0);
	/* Read while the process's mm is held (gp_ptr_window()). */
	off_hw = pending && gp_scan_off_hw(e);
	if (off_hw)
		pending = false;
	/*
	 * Waiting at a barrier is not pending: it may wait on a lower
	 * queue.  The header is read through the client's mapping, so
	 * it counts only while the read index stands still: a queue whose
	 * read index moved since the last scan is running.
	 */
	blocked = pending && !progressed && gp_ptr_head_blocked(e, rptr);
	if (blocked)
		pending = false;
	if (e->sdma && !READ_ONCE(gp_param.sdma_hint))
		pending = false;
	if (READ_ONCE(e->props_stale)) {
		/* No foreign mm installed during a KFD call. */
		gp_ptr_read_end();
		gp_backend_read_props(e);
	}
	gp_scan_cu_mask(e, t0);
	prio = READ_ONCE(e->kfd_priority);
	src = gp_rules_apply(e, &prio, deep && !pending && !blocked);
	gp_hold_expire(e, t0);
	e->pq.hold = e->hold;
	e->pq.hold_disabled = e->hold_disabled;

	if (pending && !e->pq.pending)
		e->pending_since_ns = t0;
	e->pq.pending = pending;
	e->pq.blocked = blocked;
	/* Completed work, to find whom a queue at a barrier waited on. */
	e->pq.progressed = progressed;
	/*
	 * A compute queue whose ids cannot be read, or cannot be trusted, is
	 * parked below a busy level: an AQL queue whose id page is unreadable
	 * or no longer the one it was created with, and every PM4 queue (its
	 * pointers are not dispatch ids gpreempt can read, and any user may
	 * create one to dispatch through).  So is work KFD holds off the
	 * hardware: it makes no level busy, but when KFD gives it back (a
	 * restore, the debugger's resume) it must not run beside the work
	 * above it until the next tick.
	 */
	e->pq.unknown = (rd && !e->sdma && !(e->ptr_path == GP_PTR_NOT_AQL &&
					     gp_test_defence_off(GP_DEF_NOT_AQL))) || off_hw;
	e->pq.id = (u64)(uintptr_t)e;
	/* A barrier's providers come from its own process only. */
	e->pq.group = (u64)(uintptr_t)e->proc;
	e->pq.prio = prio;
	/* What the hardware ranks it by: rules and inheritance do not reach it. */
	e->pq.hw_prio = READ_ONCE(e->kfd_priority);
	e->pq.dev = gp_dev_index(e->dev);
	e->pq.signal_only = e->sdma;
	um = gp_scan_unmanaged(e, t0);
	e->pq.parkable = um == GP_UM_NONE;
	/* Pointers alone are refreshed by the periodic publish, not per tick. */
	if (pending != in->pending || blocked != in->blocked ||
	    prio != in->eff_priority || src != in->prio_source ||
	    READ_ONCE(e->kfd_priority) != in->kfd_priority || um != in->unmanaged ||
	    e->pq.dev != in->dev || e->pq.hold_ns != in->learned_hold_ns)
		e->dirty = true;
	path = e->ids_moved ? GP_PTR_MOVED : rd && rd != -ENODATA ? GP_PTR_NONE : e->ptr_path;
	percent = READ_ONCE(e->queue_percent);
	if (rptr != in->rptr || wptr != in->wptr || percent != in->queue_percent ||
	    path != in->ptr_path)
		e->refresh = true;
	in->rptr = rptr;
	in->wptr = wptr;
	in->pending = pending;
	in->blocked = blocked;
	in->eff_priority = prio;
	in->prio_source = src;
	in->kfd_priority = READ_ONCE(e->kfd_priority);
	in->queue_percent = percent;
	in->ptr_path = path;
	in->unmanaged = um;
	in->dev = e->pq.dev;
	/* Learned at the last tick's decision. */
	in->learned_hold_ns = e->pq.hold_ns;
	gp_dev_maxprio[e->pq.dev] = max(gp_dev_maxprio[e->pq.dev], prio);
	return off_hw;
}

/**
 * gp_scan() - read every queue of this tick's snapshot
 * @n: queues in gp_snap
 * @t0: the tick's time
 * @deep: the monitor is in deep idle (the last tick found nothing to do)
 *
 * Dispatch ids without faulting or sleeping (ptr_access.c), KFD properties
 * when a hook marked them stale (outside any foreign mm), rules and holds:
 * e->pq for the policy, e->info for the maps.
 */
void gp_scan(int n, u64 t0, bool deep)
{
	bool off_hw = false;
	u64 learned = 0;
	int i;

	/* Device slots persist (their buckets do); levels are per tick. */
	for (i = 0; i < GP_POLICY_MAX_DEVS; i++) {
		gp_dev_maxprio[i] = INT_MIN;
		gp_dev_cus[i] = 0;
		gp_dev_checked[i] = NULL;
	}
	gp_scan_lost(n);
	for (i = 0; i < n; i++) {
		struct gp_queue *e = gp_snap[i];

		off_hw |= gp_scan_queue(e, t0, deep);
		if (!e->gone)
			gp_dev_cus[e->pq.dev] = max(gp_dev_cus[e->pq.dev], e->cu_count);
		learned += !e->gone && e->pq.hold_ns;
	}
	gp_ptr_read_end();
	gp_stats.off_hw_scans += off_hw;
	gp_stats.holds_learned = learned;
	for (i = 0; i < n; i++)
		gp_snap[i]->pq.shrinkable = !gp_snap[i]->gone && gp_shrinkable(gp_snap[i]);
}
