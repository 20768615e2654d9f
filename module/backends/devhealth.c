// SPDX-License-Identifier: GPL-2.0
/*
 * devhealth.c - what gpreempt knows of each device: whether it may park
 * there at all (CWSR on, every dqm->ops target callable under IBT, logged
 * once per device when not), whether it needs process eviction (NO_HWS),
 * and its fence: a device whose preemption failed with -EIO/-ETIME (HWS
 * hang: KFD is resetting the GPU) gets no parks for a back-off; unparks
 * always go on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include "backends/backend.h"
#include "kfd/kfd.h"

/*
 * Per-device health.  An -EIO/-ETIME from KFD means the HWS hung or a reset
 * is running: parks on that device stop for a back-off (doubling, capped)
 * and resume once the back-off is over and dqm->is_hws_hang is clear.
 * Unparks and restores are always attempted: nothing stays parked because
 * a device was fenced.
 */
/* Every kfd_node the policy can tell apart (8 x MI300X in CPX mode: 64; S3 F17). */
#define GP_MAX_DQM GP_POLICY_MAX_DEVS
#define GP_FENCE_MIN_MS 500
#define GP_FENCE_MAX_MS 30000

static struct gp_dev_health {
	struct device_queue_manager *dqm;
	u64 until_ns;		/* parks refused before this */
	unsigned int backoff_ms;
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
	bool hang = kfd_dqm_hws_hang(dqm), ret = hang;
	unsigned long flags;

	spin_lock_irqsave(&gp_dev_lock, flags);
	h = gp_dev_health(dqm);
	if (h && h->fenced) {
		if (hang || now < h->until_ns) {
			ret = true;
		} else {
			h->fenced = false;
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

/**
 * gp_backend_note_error() - count an error; back off from a hung device
 * @dqm: device (may be NULL)
 * @err: negative errno from KFD
 * @what: the call, for the log
 */
void gp_backend_note_error(struct device_queue_manager *dqm, int err, const char *what)
{
	struct gp_dev_health *h;
	unsigned long flags;
	bool logit = false;
	unsigned int ms = 0;

	gp_stats.errors++;
	pr_warn_ratelimited("%s failed: %d\n", what, err);
	if (!dqm || (err != -EIO && err != -ETIME && err != -ETIMEDOUT))
		return;
	spin_lock_irqsave(&gp_dev_lock, flags);
	h = gp_dev_health(dqm);
	if (h && !(h->fenced && ktime_get_ns() < h->until_ns)) {
		/* A new failure after the back-off ran out: back off longer. */
		h->backoff_ms = h->fenced ? min(h->backoff_ms * 2, GP_FENCE_MAX_MS) :
				GP_FENCE_MIN_MS;
		h->until_ns = ktime_get_ns() + (u64)h->backoff_ms * NSEC_PER_MSEC;
		logit = !h->fenced;
		h->fenced = true;
		ms = h->backoff_ms;
	}
	spin_unlock_irqrestore(&gp_dev_lock, flags);
	if (logit) {
		pr_err("preemption failed on a device (%d): no parks on it for %u ms and until the HWS recovers\n",
		       err, ms);
	}
}
