// SPDX-License-Identifier: GPL-2.0
/*
 * preempt_shrink.c - shrink one queue to part of its CUs, and back:
 * dqm->ops.update_queue(dqm, q, minfo) with a CU mask, the path of
 * AMDKFD_IOC_SET_CU_MASK (pqm_update_mqd()).
 *
 * update_mqd() maps the mask over the shader engines (and XCCs) with KFD's
 * own rules (mqd_symmetrically_map_cu_mask()); under HWS update_queue()
 * then unmaps and remaps the device, so the queue's waves are CWSR-saved
 * and come back only on the CUs it keeps.  Nothing is lost or re-run, and
 * the queue keeps running, on fewer CUs.  Growing back writes the owner's
 * own mask (the SET_CU_MASK probe keeps it), or every CU for a queue whose
 * owner never set one.  gpreempt calls update_queue() directly, never
 * pqm_update_mqd(): is_user_cu_masked stays the owner's.
 * Works on every kernel gpreempt supports (is_suspended is not needed).
 * Not under NO_HWS, where update_queue() loads the MQD in the caller's mm.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "backends/backend.h"
#include "kfd/kfd.h"
#include "params.h"
#include "core/registry.h"
#include "monitor/monitor.h"

/**
 * gp_shrink_queue() - shrink a queue to part of its CUs, or grow it back
 * @e: queue
 * @shrink: true to shrink, false to give the owner's mask back
 * @avoid: for a shrink: NULL, or the union of the CU masks of the busy
 *	   queues above it, all masked (it then keeps what they leave)
 * @dev_cus: CUs of the device, for a queue whose owner set no mask (0: unknown)
 * @blocking: may wait for p->mutex
 *
 * The owner's mask is read under p->mutex, which its SET_CU_MASK holds
 * while the probe records it: the newest one is given back.
 *
 * Return: 0, -EBUSY (retry next tick), -ESRCH/-ENOENT (gone), -EPERM
 * (debugged: never shrunk), -EOPNOTSUPP (NO_HWS, or no mask known to give
 * back), -EIO (device fenced) or KFD's error.
 */
int gp_shrink_queue(struct gp_queue *e, bool shrink, const u32 *avoid, u32 dev_cus,
		    bool blocking)
{
	/* Off the stack; only the monitor (or the unload, after it) calls this. */
	static u32 mask[GP_CU_MASK_WORDS], base[GP_CU_MASK_WORDS];
	struct gp_mqd_update_info mi = {};
	struct kfd_process_device *pdd = NULL;
	struct device_queue_manager *dqm;
	struct kfd_process *p;
	struct mm_struct *mm;
	struct queue *q;
	u32 bits;
	u64 t0;
	int ret;

	p = gp_backend_lock_queue(e, blocking, &q, &mm);
	if (IS_ERR(p))
		return PTR_ERR(p);
	/* A debugged process is never shrunk; growing back is its own mask. */
	if (shrink && kfd_p_debugged(p)) {
		gp_stats.skipped_debugged++;
		ret = -EPERM;
		goto out_unlock;
	}
	dqm = kfd_node_dqm(kfd_q_device(q));
	if (kfd_dqm_no_hws(dqm)) {
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	ret = gp_backend_dev_parkable(p, kfd_q_device(q), &pdd, shrink, false);
	if (ret)
		goto out_unlock;
	if (pdd && (kfd_q_is_reset(q) || kfd_pdd_has_reset_queue(pdd))) {
		/* Never mapped again; nothing of gpreempt's is left running. */
		e->reset = true;
		ret = shrink ? -EIO : 0;
		goto out_unlock;
	}

	/*
	 * The owner's mask; or every CU: of the device, if its size is known;
	 * to grow back, all 1024 bits will do (KFD clamps to the active CUs).
	 */
	bits = READ_ONCE(e->cu_mask_bits);
	if (bits) {
		memcpy(base, e->cu_mask, sizeof(base));
	} else if (dev_cus) {
		gp_cu_fill(base, dev_cus);
		bits = round_up(dev_cus, 32);
	} else if (!shrink) {
		gp_cu_fill(base, GP_CU_MASK_BITS);
		bits = GP_CU_MASK_BITS;
	} else {
		/*
		 * How many CUs "every CU" is, is unknown: a prefix could keep
		 * them all, and LC's masks cannot be subtracted from bits KFD
		 * clamps away.  Parked instead (gp_shrinkable() says so first).
		 */
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	if (shrink && !gp_cu_shrink_mask(base, bits, avoid, READ_ONCE(gp_param.shrink_pct), mask)) {
		ret = -EOPNOTSUPP;	/* the owner left it no CU */
		goto out_unlock;
	}
	mi.cu_mask.count = bits;
	mi.cu_mask.ptr = shrink ? mask : base;
	t0 = ktime_get_ns();
	ret = kfd_dqm_update_queue(dqm)(dqm, q, (struct mqd_update_info *)&mi);
	gp_backend_note_slow(dqm, t0, shrink ? "update_queue (shrink)" :
				       "update_queue (grow back)");
	if (!ret && shrink && (kfd_q_is_reset(q) || kfd_pdd_has_reset_queue(pdd))) {
		e->reset = true;
		gp_backend_note_reset(dqm, "update_queue (shrink)");
	}
	if (ret) {
		gp_backend_note_error(dqm, ret, shrink ? "update_queue (shrink)" :
					     "update_queue (grow back)");
		/*
		 * update_mqd() may have written the mask before the remap
		 * failed: a failed shrink counts as done, so
		 * the policy grows the queue back later, and a grow-back is
		 * retried until it succeeds.  Nothing stays shrunk.
		 */
		if (shrink)
			ret = 0;
	}
out_unlock:
	gp_backend_unlock(p, mm);
	return ret;
}
