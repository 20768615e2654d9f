// SPDX-License-Identifier: GPL-2.0
/*
 * dqm.c - simulated device queue manager, after amdkfd's
 * kfd_device_queue_manager.c (HWS "cpsch" op-set with its MES branches):
 *
 *   update_queue():   recompute is_active = QUEUE_IS_ACTIVE(); a change is a
 *                     map/unmap.  6.12 returns -EACCES after the unmap when
 *                     the pdd has a reset queue.
 *   evict/restore_process_queues(): qpd->evicted nesting (dqm.c:1187/1338).
 *   create/destroy/process termination.
 *
 * Cost model of a map/unmap change: HWS (default) preempts and remaps every
 * queue of the device (unmap_queues_cpsch + map_queues_cpsch): all in-flight
 * workgroups are CWSR-saved, nothing runs for runlist_us, and the caller
 * waits that long (the fence wait).  MES removes/adds only the affected
 * queue, the caller waits mes_us.  Lock order: p->mutex -> dqm lock -> gpu.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include "kfdsim.h"

static void ks_wait_us(unsigned int us)
{
	if (us)
		usleep_range(us, us + us / 8 + 1);
}

/* The hardware reflects a change of q's is_active (dqm lock held). */
static void ks_apply(struct queue *q)
{
	if (ks_param.mes) {
		ks_gpu_set_mapped(q, q->properties.is_active);
		atomic64_inc(&ks_stats.mes_calls);
		ks_wait_us(ks_param.mes_us);
	} else {
		ks_gpu_set_mapped(q, q->properties.is_active);
		ks_gpu_runlist_update();
		ks_wait_us(ks_param.runlist_us);
	}
}

static struct kfd_process_device *ks_q_pdd(struct queue *q)
{
	return ks_pdd(q->process);
}

static int ks_update_queue(struct device_queue_manager *dqm, struct queue *q,
			   struct mqd_update_info *minfo)
{
	bool prev;
	int ret = 0;

	mutex_lock(&dqm->lock);
	prev = q->properties.is_active;
	if (ks_q_pdd(q)->has_reset_queue) {
		/* 6.12 dqm.c:964: unmapped, and not mapped again. */
		if (prev) {
			q->properties.is_active = false;
			ks_apply(q);
		}
		ret = -EACCES;
		goto out;
	}
	q->properties.is_active = QUEUE_IS_ACTIVE(q->properties);
	if (q->properties.is_active != prev || !ks_param.mes)
		ks_apply(q);	/* HWS unmaps + maps the runlist on every update */
out:
	mutex_unlock(&dqm->lock);
	return ret;
}

static int ks_evict_process_queues(struct device_queue_manager *dqm,
				   struct qcm_process_device *qpd)
{
	struct queue *q;
	bool changed = false;

	mutex_lock(&dqm->lock);
	if (qpd->evicted++ > 0)
		goto out;
	list_for_each_entry(q, &qpd->queues_list, list) {
		q->properties.is_evicted = true;
		if (!q->properties.is_active)
			continue;
		q->properties.is_active = false;
		ks_gpu_set_mapped(q, false);
		changed = true;
		if (ks_param.mes) {
			atomic64_inc(&ks_stats.mes_calls);
			ks_wait_us(ks_param.mes_us);
		}
	}
	if (changed && !ks_param.mes) {
		ks_gpu_runlist_update();
		ks_wait_us(ks_param.runlist_us);
	}
out:
	mutex_unlock(&dqm->lock);
	return 0;
}

static int ks_restore_process_queues(struct device_queue_manager *dqm,
				     struct qcm_process_device *qpd)
{
	struct queue *q;
	bool changed = false;

	mutex_lock(&dqm->lock);
	if (WARN_ON_ONCE(!qpd->evicted))
		goto out;
	if (qpd->evicted > 1) {
		qpd->evicted--;
		goto out;
	}
	list_for_each_entry(q, &qpd->queues_list, list) {
		q->properties.is_evicted = false;
		if (!QUEUE_IS_ACTIVE(q->properties))
			continue;
		q->properties.is_active = true;
		ks_gpu_set_mapped(q, true);
		changed = true;
		if (ks_param.mes) {
			atomic64_inc(&ks_stats.mes_calls);
			ks_wait_us(ks_param.mes_us);
		}
	}
	if (changed && !ks_param.mes) {
		ks_gpu_runlist_update();
		ks_wait_us(ks_param.runlist_us);
	}
	qpd->evicted = 0;
out:
	mutex_unlock(&dqm->lock);
	return 0;
}

/**
 * ks_dqm_create_queue() - put a new queue on the device (create_queue_cpsch)
 * @q: queue
 * @qpd: its process's device data
 *
 * Return: 0.
 */
int ks_dqm_create_queue(struct queue *q, struct qcm_process_device *qpd)
{
	mutex_lock(&ks_dqm.lock);
	list_add(&q->list, &qpd->queues_list);
	if (qpd->evicted)
		q->properties.is_evicted = true;
	q->properties.is_active = QUEUE_IS_ACTIVE(q->properties);
	ks_gpu_add_queue(q);
	if (q->properties.is_active)
		ks_apply(q);
	atomic_inc(&ks_stats.queues);
	mutex_unlock(&ks_dqm.lock);
	return 0;
}

/**
 * ks_dqm_destroy_queue() - take a queue off the device for good
 * @q: queue
 * @qpd: its process's device data
 *
 * In-flight work of a destroyed queue is discarded (KFD resets its waves).
 *
 * Return: 0.
 */
int ks_dqm_destroy_queue(struct queue *q, struct qcm_process_device *qpd)
{
	mutex_lock(&ks_dqm.lock);
	if (q->properties.is_active) {
		q->properties.is_active = false;
		ks_apply(q);
	}
	ks_gpu_remove_queue(q);
	list_del(&q->list);
	atomic_dec(&ks_stats.queues);
	mutex_unlock(&ks_dqm.lock);
	return 0;
}

/**
 * ks_dqm_process_termination() - the process is gone: drop all its queues
 * @qpd: its device data
 */
void ks_dqm_process_termination(struct qcm_process_device *qpd)
{
	struct queue *q, *tmp;

	mutex_lock(&ks_dqm.lock);
	list_for_each_entry_safe(q, tmp, &qpd->queues_list, list) {
		q->properties.is_active = false;
		ks_gpu_set_mapped(q, false);
		ks_gpu_remove_queue(q);
		list_del(&q->list);
		atomic_dec(&ks_stats.queues);
	}
	if (!ks_param.mes)
		ks_gpu_runlist_update();
	mutex_unlock(&ks_dqm.lock);
}

/**
 * ks_dqm_init() - the device's dqm with its live ops table
 */
void ks_dqm_init(void)
{
	mutex_init(&ks_dqm.lock);
	ks_dqm.ops.update_queue = ks_update_queue;
	ks_dqm.ops.evict_process_queues = ks_evict_process_queues;
	ks_dqm.ops.restore_process_queues = ks_restore_process_queues;
	ks_dqm.dev = &ks_node;
	ks_dqm.sched_policy = ks_param.mes ? GP_ENUM_KFD_SCHED_POLICY_HWS :
					     GP_ENUM_KFD_SCHED_POLICY_HWS;
	ks_dqm.sched_running = true;
	ks_kfd_dev.enable_mes = ks_param.mes;
	ks_kfd_dev.cwsr_enabled = true;
	ks_node.dqm = &ks_dqm;
	ks_node.kfd = &ks_kfd_dev;
}
