// SPDX-License-Identifier: GPL-2.0
/*
 * devhealth.c - what gpreempt knows of each device: whether it may park
 * there at all (CWSR on, every dqm->ops target callable under IBT, logged
 * once per device when not), whether it needs process eviction (NO_HWS),
 * and its fence: a device whose preemption failed gets no parks until it
 * has recovered; unparks always go on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include "backends/backend.h"
#include "kfd/kfd.h"
#include "kfd/ksyms.h"
#include "monitor/monitor.h"

/*
 * Per-device health.  An -EIO from KFD means the HWS hung or a reset is
 * running: parks on that device stop for a back-off (doubling, capped).
 * A preemption that did not finish is worse: KFD reset the hung queue (a
 * park's own pdd then has has_reset_queue: -EACCES from update_queue, or
 * the flag after an evict that returned 0) or is resetting the GPU
 * (-ETIME, or -EACCES: kfd_hws_hang flags every process on the device
 * first).  Every further park there is one more unmap of the whole device
 * (HWS) that a wave which cannot be saved turns into another reset, so
 * such a device is fenced for a longer back-off that grows with each
 * strike and never shrinks.  Recovered means: the back-off is over,
 * dqm->is_hws_hang is clear (6.1: sticky until the reset) and the dqm
 * runs (6.12/7.3 stop it from pre_reset to post_reset; is_hws_hang is
 * rare there and cleared by any eviction).  Unparks and restores are
 * always attempted: nothing stays parked because a device was fenced.
 */
/* Every kfd_node the policy can tell apart (8 x MI300X in CPX mode: 64). */
#define GP_MAX_DQM GP_POLICY_MAX_DEVS
#define GP_FENCE_MIN_MS 500
#define GP_FENCE_MAX_MS 30000
/* After a preemption that did not finish: 2 s, doubling per strike, to 5 min. */
#define GP_FENCE_STRIKE_MS 2000
#define GP_FENCE_STRIKE_MAX_MS 300000
/*
 * A KFD call that took this long waited out a preemption that did not
 * finish: the CP gives a queue KFD_UNMAP_LATENCY_MS (4 s with the default
 * queue_preemption_timeout_ms, 0.45 s at 1 s) and MES 2.1 s, while a
 * preemption that completes takes micro- to milliseconds (gp_stats.park_lat).
 * It is how gpreempt learns that its park met another process's wave: KFD
 * reset that queue and returned 0 to gpreempt's call.
 */
#define GP_SLOW_CALL_NS (400 * NSEC_PER_MSEC)

static struct gp_dev_health {
	struct device_queue_manager *dqm;
	u64 until_ns;		/* parks refused before this */
	unsigned int backoff_ms;
	unsigned int strikes;	/* preemptions that did not finish here */
	bool fenced;		/* logged as fenced, not yet as recovered */
	bool cwsr_warned;
	bool ibt_warned;
} gp_dev[GP_MAX_DQM];
static DEFINE_SPINLOCK(gp_dev_lock);

static struct gp_dev_health *gp_dev_health(struct device_queue_manager *dqm)
{
	int i;

	for (i = 0; i < GP_MAX_DQM; i++) {
		if (gp_dev[i].dqm == dqm)
			return &gp_dev[i];
		if (!gp_dev[i].dqm) {
			gp_dev[i].dqm = dqm;
			return &gp_dev[i];
		}
	}
	return NULL;
}

/**
 * gp_backend_dev_failed() - may gpreempt park on this device now?
 * @dqm: device queue manager
 *
 * Return: true while the HWS is hung or the device's back-off runs.
 */
bool gp_backend_dev_failed(struct device_queue_manager *dqm)
{
	u64 now = ktime_get_ns();
	struct gp_dev_health *h;
	bool hang = kfd_dqm_hws_hang(dqm) || !kfd_dqm_sched_running(dqm), ret = hang;
	unsigned long flags;

	spin_lock_irqsave(&gp_dev_lock, flags);
	h = gp_dev_health(dqm);
	if (h && h->fenced) {
		if (hang || now < h->until_ns) {
			ret = true;
		} else {
			h->fenced = false;
			if (gp_stats.dev_fenced)
				gp_stats.dev_fenced--;
			pr_info("device recovered: parking on it again\n");
		}
	}
	spin_unlock_irqrestore(&gp_dev_lock, flags);
	return ret;
}

/**
 * gp_backend_dev_usable() - may gpreempt ever park on @dev?
 * @dev: device
 *
 * Without CWSR an unmap drains the running waves; past the queue
 * preemption timeout KFD resets the GPU and kills every process on it.
 * Such a device is left alone, and that is logged once per device.
 *
 * Return: false for a device gpreempt must leave alone.
 */
bool gp_backend_dev_usable(struct kfd_node *dev)
{
	struct device_queue_manager *dqm = kfd_node_dqm(dev);
	struct gp_dev_health *h;
	unsigned long flags;
	bool warn = false;

	const char *op = NULL;

	/* IBT: every dqm->ops target gpreempt calls must start with ENDBR. */
	if (!gp_ksyms_op_callable(kfd_dqm_update_queue(dqm)))
		op = "update_queue";
	else if (!gp_ksyms_op_callable(kfd_dqm_evict_process_queues(dqm)))
		op = "evict_process_queues";
	else if (!gp_ksyms_op_callable(kfd_dqm_restore_process_queues(dqm)))
		op = "restore_process_queues";
	if (op) {
		spin_lock_irqsave(&gp_dev_lock, flags);
		h = gp_dev_health(dqm);
		if (h && !h->ibt_warned) {
			h->ibt_warned = true;
			warn = true;
		}
		spin_unlock_irqrestore(&gp_dev_lock, flags);
		if (warn)
			pr_err("IBT: dqm->ops.%s has no ENDBR: an indirect call would fault; gpreempt never parks on this device\n",
			       op);
		return false;
	}
	if (kfd_node_cwsr_enabled(dev))
		return true;
	spin_lock_irqsave(&gp_dev_lock, flags);
	h = gp_dev_health(dqm);
	if (h && !h->cwsr_warned) {
		h->cwsr_warned = true;
		warn = true;
	}
	spin_unlock_irqrestore(&gp_dev_lock, flags);
	if (warn)
		pr_warn("a device has CWSR disabled: gpreempt never parks its queues\n");
	return false;
}

/**
 * gp_backend_needs_evict() - is evict the only way to park on @dev?
 * @dev: device
 *
 * Under NO_HWS, update_queue() loads the MQD only in the owner's mm (it
 * WARNs and fails from a kthread); evict/restore work from anywhere.
 *
 * Return: true for a NO_HWS device.
 */
bool gp_backend_needs_evict(struct kfd_node *dev)
{
	return kfd_dqm_no_hws(kfd_node_dqm(dev));
}

/* Fence @dqm's device; @strike: a preemption did not finish there. */
static void gp_dev_fence(struct device_queue_manager *dqm, int err, bool strike)
{
	u64 now = ktime_get_ns();
	struct gp_dev_health *h;
	unsigned long flags;
	bool logit = false;
	unsigned int ms = 0;

	spin_lock_irqsave(&gp_dev_lock, flags);
	h = gp_dev_health(dqm);
	if (h && !(h->fenced && now < h->until_ns)) {
		if (strike) {
			/* Never shrinks: a device that showed such a wave may again. */
			ms = GP_FENCE_STRIKE_MS << min(h->strikes, 8U);
			h->backoff_ms = min(ms, GP_FENCE_STRIKE_MAX_MS);
			h->strikes++;
		} else {
			/* A new failure after the back-off ran out: back off longer. */
			h->backoff_ms = h->fenced ? min(h->backoff_ms * 2, GP_FENCE_MAX_MS) :
					GP_FENCE_MIN_MS;
		}
		h->until_ns = now + (u64)h->backoff_ms * NSEC_PER_MSEC;
		logit = !h->fenced;
		if (logit) {
			gp_stats.dev_fences++;
			gp_stats.dev_fenced++;
		}
		h->fenced = true;
		ms = h->backoff_ms;
	}
	spin_unlock_irqrestore(&gp_dev_lock, flags);
	if (logit)
		pr_err("preemption failed on a device (%d%s): no parks on it for %u ms and until it recovers\n",
		       err, strike ? ", a queue or GPU reset" : "", ms);
}

/**
 * gp_backend_note_error() - count an error; fence a device whose
 * preemption failed
 * @dqm: device (may be NULL)
 * @err: negative errno from KFD
 * @what: the call, for the log
 *
 * -EACCES: the unmap before it reset a queue of the caller's process, or
 * kfd_hws_hang flagged every process for a GPU reset (6.12 dqm.c:963-967);
 * -ETIME: a fence timed out; -EIO: a hang or a reset is running.
 */
void gp_backend_note_error(struct device_queue_manager *dqm, int err, const char *what)
{
	gp_stats.errors++;
	pr_warn_ratelimited("%s failed: %d\n", what, err);
	if (!dqm || (err != -EIO && err != -ETIME && err != -ETIMEDOUT && err != -EACCES))
		return;
	gp_dev_fence(dqm, err, err != -EIO);
}

/**
 * gp_backend_note_slow() - fence the device if a KFD call took as long as a
 * preemption that timed out
 * @dqm: device
 * @t0: ktime_get_ns() before the call
 * @what: the call, for the log
 */
void gp_backend_note_slow(struct device_queue_manager *dqm, u64 t0, const char *what)
{
	u64 ns = ktime_get_ns() - t0;

	if (ns < GP_SLOW_CALL_NS)
		return;
	pr_warn_ratelimited("%s took %llu ms: a preemption timed out\n", what, ns / NSEC_PER_MSEC);
	gp_dev_fence(dqm, -ETIME, true);
}

/**
 * gp_backend_note_reset() - a park's call returned, and its process now has
 * a reset queue: the unmap timed out and KFD reset that queue
 * @dqm: device
 * @what: the call, for the log
 */
void gp_backend_note_reset(struct device_queue_manager *dqm, const char *what)
{
	pr_warn_ratelimited("%s: the process got a reset queue\n", what);
	gp_dev_fence(dqm, 0, true);
}
