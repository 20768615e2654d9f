// SPDX-License-Identifier: GPL-2.0
/*
 * cumask.c - per-queue CU masks, as KFD and the hardware have them.
 *
 * The MQD holds one enable mask per shader engine
 * (compute_static_thread_mgmt_se0..N).  init_mqd() sets every bit; a user
 * mask (AMDKFD_IOC_SET_CU_MASK, or a caller of dqm->ops.update_queue with a
 * struct mqd_update_info) is spread over the engines by KFD's
 * mqd_symmetrically_map_cu_mask() (kfd_mqd_manager.c): user bit i goes to
 * engine i % num_se, CU i / num_se of it (one shader array per engine, one
 * XCC), and the count is clamped to the active CUs.  The command processor
 * dispatches a queue's workgroups only to CUs its mask enables (gpu.c).
 *
 * kfdsim's CU c sits in engine c % num_se, as CU c / num_se of it, so user
 * bit i is kfdsim CU i: the mapping is the identity, but it is computed the
 * way KFD computes it, into the per-engine masks the CP reads.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/uaccess.h>
#include "kfdsim.h"

/* What init_mqd() writes: every CU of every engine enabled. */
void ks_cu_mask_init(struct queue *q)
{
	int se;

	for (se = 0; se < KS_MAX_SE; se++)
		q->ks.se_mask[se] = 0xffffffff;
	q->ks.cu_mask_cus = ks_param.num_cu;
}

/* Is CU @cu enabled in @q's MQD? */
bool ks_cu_allowed(const struct queue *q, u32 cu)
{
	u32 se = cu % ks_param.num_se;

	return q->ks.se_mask[se] & BIT(cu / ks_param.num_se);
}

/*
 * mqd_symmetrically_map_cu_mask() for one XCC with one shader array per
 * engine and num_cu / num_se CUs in each: bit i of @mask, for i below
 * min(@count, num_cu), enables CU i / num_se of engine i % num_se.
 */
static void ks_map_cu_mask(struct queue *q, const u32 *mask, u32 count)
{
	u32 per_se = ks_param.num_cu / ks_param.num_se, i = 0, cu, se, n = 0;

	if (count > ks_param.num_cu)
		count = ks_param.num_cu;
	for (se = 0; se < KS_MAX_SE; se++)
		q->ks.se_mask[se] = 0;
	for (cu = 0; cu < per_se && i < count; cu++) {
		for (se = 0; se < ks_param.num_se && i < count; se++, i++) {
			if (mask[i / 32] & BIT(i % 32)) {
				q->ks.se_mask[se] |= BIT(cu);
				n++;
			}
		}
	}
	q->ks.cu_mask_cus = n;
}

/**
 * ks_update_mqd_cu_mask() - update_mqd()'s update_cu_mask(): apply @minfo's mask
 * @q: queue (dqm->lock held)
 * @minfo: the update, or NULL (the mask stays as it is)
 */
void ks_update_mqd_cu_mask(struct queue *q, struct mqd_update_info *minfo)
{
	if (!minfo || !minfo->cu_mask.ptr)
		return;
	ks_map_cu_mask(q, minfo->cu_mask.ptr, minfo->cu_mask.count);
	atomic64_inc(&ks_stats.cu_mask_updates);
}

/**
 * pqm_update_mqd() - a queue's MQD update with a CU mask (6.12 pqm.c:628)
 * @pqm: queue manager (p->mutex held)
 * @qid: queue id
 * @minfo: the update
 *
 * Return: 0, -EFAULT (no such queue), or the dqm's error.
 */
KS_KFD_ENTRY int pqm_update_mqd(struct process_queue_manager *pqm, unsigned int qid,
				struct mqd_update_info *minfo)
{
	struct device_queue_manager *dqm;
	struct queue *q = pqm_get_user_queue(pqm, qid);

	if (!q)
		return -EFAULT;
	dqm = q->device->dqm;
	return dqm->ops.update_queue(dqm, q, minfo);
}

/**
 * ks_queue_set_cu_mask() - kfd_ioctl_set_cu_mask(): the checks, then pqm_update_mqd()
 * @p: the caller's process
 * @qid: queue id
 * @nbits: mask length in bits: a non-zero multiple of 32 (more than 1024 are cut)
 * @uptr: the mask in user memory
 *
 * Return: 0 or a negative errno.
 */
int ks_queue_set_cu_mask(struct kfd_process *p, u32 qid, u32 nbits, u64 uptr)
{
	struct mqd_update_info minfo = {};
	int ret;

	if (!nbits || nbits % 32) {
		pr_debug("CU mask size must be a non-zero multiple of 32 bits\n");
		return -EINVAL;
	}
	minfo.cu_mask.count = min(nbits, 1024U);
	minfo.cu_mask.ptr = memdup_user(u64_to_user_ptr(uptr), minfo.cu_mask.count / 8);
	if (IS_ERR(minfo.cu_mask.ptr))
		return PTR_ERR(minfo.cu_mask.ptr);
	mutex_lock(&p->mutex);
	ret = pqm_update_mqd(&p->pqm, qid, &minfo);
	mutex_unlock(&p->mutex);
	kfree(minfo.cu_mask.ptr);
	return ret;
}
