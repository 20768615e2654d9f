// SPDX-License-Identifier: GPL-2.0
/*
 * pqm.c - simulated process queue manager, after amdkfd's
 * kfd_process_queue_manager.c: create/destroy/update/lookup/uninit of user
 * queues, called with p->mutex held (the ioctls take it).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include "kfdsim.h"

#define KS_MAX_QUEUES_PER_PROCESS 1024

/**
 * ks_pdd() - the process's device data for @dev (kfd_get_process_device_data)
 * @p: process
 * @dev: device
 *
 * Every process has a pdd on every simulated device, in device order.
 *
 * Return: the pdd.
 */
struct kfd_process_device *ks_pdd(struct kfd_process *p, struct kfd_node *dev)
{
	return p->pdds[ks_dev_of(dev)->id];
}

static struct process_queue_node *ks_find(struct process_queue_manager *pqm, unsigned int qid)
{
	struct process_queue_node *pqn;

	lockdep_assert_held(&pqm->process->mutex);
	list_for_each_entry(pqn, &pqm->queues, process_queue_list)
		if (pqn->q && pqn->q->properties.queue_id == qid)
			return pqn;
	return NULL;
}

/**
 * kfd_procfs_add_queue() - KFD's sysfs entry for a new queue (here: a no-op
 * that marks the same point in the flow: @q is complete, p->mutex held)
 * @q: queue
 *
 * Return: 0.
 */
KS_KFD_ENTRY int kfd_procfs_add_queue(struct queue *q)
{
	barrier();
	return 0;
}

/*
 * A kernel built with LTO may inline kfd_procfs_add_queue() into
 * pqm_create_queue(): the out-of-line copy, where the kprobe lands, is then
 * never called (review S3 F15).  lto_inlined=1 creates queues that way.
 */
static bool ks_lto_inlined;
module_param_named(lto_inlined, ks_lto_inlined, bool, 0444);
MODULE_PARM_DESC(lto_inlined,
		 "Create queues as if LTO had inlined kfd_procfs_add_queue() into pqm_create_queue(): its probe never fires (default 0)");

static __always_inline int ks_procfs_add_queue_inlined(struct queue *q)
{
	barrier();
	return 0;
}

/*
 * pqm_create_queue() - create a user queue, with the target kernel's
 * prototype (gp_fn_pqm_create_queue_t): 6.12 has (pqm, dev, f, properties,
 * qid, q_data, restore_mqd, restore_ctl_stack, p_doorbell_offset_in_process);
 * 6.1 adds 'struct amdgpu_bo *wptr_bo' after qid; 6.17 drops 'f'.
 *
 * The caller has pinned the queue's memory into properties' queue (see
 * chardev.c) and holds p->mutex.  Returns 0 or a negative errno.
 */
#if GP_NARGS_pqm_create_queue == 10
KS_KFD_ENTRY int pqm_create_queue(struct process_queue_manager *pqm, struct kfd_node *dev,
				  struct file *f, struct queue_properties *properties,
				  unsigned int *qid, struct amdgpu_bo *wptr_bo,
				  const struct kfd_criu_queue_priv_data *q_data,
				  const void *restore_mqd, const void *restore_ctl_stack,
				  uint32_t *p_doorbell_offset_in_process)
#elif GP_ARG_pqm_create_queue__properties == 2
KS_KFD_ENTRY int pqm_create_queue(struct process_queue_manager *pqm, struct kfd_node *dev,
				  struct queue_properties *properties, unsigned int *qid,
				  const struct kfd_criu_queue_priv_data *q_data,
				  const void *restore_mqd, const void *restore_ctl_stack,
				  uint32_t *p_doorbell_offset_in_process)
#else
KS_KFD_ENTRY int pqm_create_queue(struct process_queue_manager *pqm, struct kfd_node *dev,
				  struct file *f, struct queue_properties *properties,
				  unsigned int *qid, const struct kfd_criu_queue_priv_data *q_data,
				  const void *restore_mqd, const void *restore_ctl_stack,
				  uint32_t *p_doorbell_offset_in_process)
#endif
{
	struct queue *q = container_of(properties, struct queue, properties);
	struct process_queue_node *pqn;
	unsigned int id;
	int ret;

	lockdep_assert_held(&pqm->process->mutex);
	id = find_first_zero_bit(pqm->queue_slot_bitmap, KS_MAX_QUEUES_PER_PROCESS);
	if (id >= KS_MAX_QUEUES_PER_PROCESS)
		return -ENOMEM;
	pqn = kzalloc(sizeof(*pqn), GFP_KERNEL);
	if (!pqn)
		return -ENOMEM;
	set_bit(id, pqm->queue_slot_bitmap);
	q->properties.queue_id = id;
	q->process = pqm->process;
	q->device = dev;
	pqn->q = q;
	ret = ks_dqm_create_queue(q, &ks_pdd(pqm->process, dev)->qpd);
	if (ret) {
		clear_bit(id, pqm->queue_slot_bitmap);
		kfree(pqn);
		return ret;
	}
	list_add(&pqn->process_queue_list, &pqm->queues);
	*qid = id;
	if (p_doorbell_offset_in_process)
		*p_doorbell_offset_in_process = id * 8;
	if (ks_lto_inlined)
		ks_procfs_add_queue_inlined(q);
	else
		kfd_procfs_add_queue(q);
	return 0;
}

/**
 * ks_pqm_create_queue() - pqm_create_queue() with this kernel's arguments
 * @pqm: the process's queue manager
 * @dev: device
 * @f: the /dev/kfdsim file (not passed on 6.17+)
 * @properties: queue properties
 * @qid: out: queue id
 *
 * Return: 0 or a negative errno.
 */
int ks_pqm_create_queue(struct process_queue_manager *pqm, struct kfd_node *dev,
			struct file *f, struct queue_properties *properties, unsigned int *qid)
{
#if GP_NARGS_pqm_create_queue == 10
	return pqm_create_queue(pqm, dev, f, properties, qid, NULL, NULL, NULL, NULL, NULL);
#elif GP_ARG_pqm_create_queue__properties == 2
	return pqm_create_queue(pqm, dev, properties, qid, NULL, NULL, NULL, NULL);
#else
	return pqm_create_queue(pqm, dev, f, properties, qid, NULL, NULL, NULL, NULL);
#endif
}

/**
 * pqm_destroy_queue() - destroy a user queue
 * @pqm: queue manager
 * @qid: queue id
 *
 * An injected error is what the dqm's destroy_queue returned in 6.12.117
 * (pqm_destroy_queue: "if (retval != -ETIME && retval != -EIO) goto
 * err_destroy_queue;"): after -ETIME (hung HWS) or -EIO (GPU reset) the
 * queue is freed anyway and the error returned; after any other (-EBUSY)
 * the queue stays, fully usable.
 *
 * Return: 0, -EINVAL, or an injected error.
 */
KS_KFD_ENTRY int pqm_destroy_queue(struct process_queue_manager *pqm, unsigned int qid)
{
	struct process_queue_node *pqn = ks_find(pqm, qid);
	struct queue *q;
	int ret;

	if (!pqn) {
		pr_err_ratelimited("queue id %u does not exist\n", qid);
		return -EINVAL;
	}
	q = pqn->q;
	ret = ks_fault(KS_F_DESTROY);
	if (ret) {
		pr_err_ratelimited("destroy queue failed: %d\n", ret);
		if (ret != -ETIME && ret != -EIO)
			return ret;	/* err_destroy_queue: the queue stays */
	}
	ks_dqm_destroy_queue(q, &ks_pdd(pqm->process, q->device)->qpd);
	list_del(&pqn->process_queue_list);
	clear_bit(qid, pqm->queue_slot_bitmap);
	ks_queue_unpin(q);
	ks_queue_free(q);
	kfree(pqn);
	return ret;
}

/**
 * pqm_update_queue_properties() - apply the update ioctl (6.12 pqm.c:570)
 * @pqm: queue manager
 * @qid: queue id
 * @p: new address, size, percent, priority
 *
 * Return: 0, -EFAULT (ring does not match the pinned one) or the dqm's error.
 */
KS_KFD_ENTRY int pqm_update_queue_properties(struct process_queue_manager *pqm, unsigned int qid,
					     struct queue_properties *p)
{
	struct process_queue_node *pqn = ks_find(pqm, qid);
	struct device_queue_manager *dqm;
	struct queue *q;

	if (!pqn)
		return -EFAULT;
	q = pqn->q;
	/* KFD re-looks-up the ring BO: the mapping must match exactly. */
	if (p->queue_address && p->queue_size &&
	    (p->queue_address != q->ks.ring_uva ||
	     p->queue_size != (u64)q->ks.ring_slots * sizeof(struct kfdsim_packet)))
		return -EFAULT;
	q->properties.queue_address = p->queue_address;
	q->properties.queue_size = p->queue_size;
	q->properties.queue_percent = p->queue_percent;
	q->properties.priority = p->priority;
	dqm = q->device->dqm;
	return dqm->ops.update_queue(dqm, q, NULL);
}

/**
 * pqm_get_user_queue() - find a queue by id
 * @pqm: queue manager (p->mutex held)
 * @qid: queue id
 *
 * Return: the queue or NULL.
 */
KS_KFD_ENTRY struct queue *pqm_get_user_queue(struct process_queue_manager *pqm, unsigned int qid)
{
	struct process_queue_node *pqn = ks_find(pqm, qid);

	return pqn ? pqn->q : NULL;
}

/**
 * pqm_uninit() - free every queue of a dead process (after termination)
 * @pqm: queue manager
 *
 * 7.3 kfd_process_queue_manager.c:220-245: every struct queue is freed,
 * without p->mutex; on 7.x layouts this runs at the process's teardown.
 */
KS_KFD_ENTRY void pqm_uninit(struct process_queue_manager *pqm)
{
	struct process_queue_node *pqn, *tmp;

	list_for_each_entry_safe(pqn, tmp, &pqm->queues, process_queue_list) {
		if (pqn->q) {
			ks_queue_unpin(pqn->q);
			kfree(pqn->q);
		}
		list_del(&pqn->process_queue_list);
		kfree(pqn);
	}
}
