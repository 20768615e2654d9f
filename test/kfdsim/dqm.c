// SPDX-License-Identifier: GPL-2.0
/*
 * dqm.c - simulated device queue manager, after amdkfd's
 * kfd_device_queue_manager.c (6.12), the HWS "cpsch" op-set with its MES
 * branches:
 *
 *   update_queue():   HWS: unmap_queues_cpsch + update_mqd (is_active =
 *                     QUEUE_IS_ACTIVE()) + map_queues_cpsch, on every call;
 *                     MES: remove_queue_mes if it was active, add_queue_mes
 *                     if it is.  With pdd->has_reset_queue: -EACCES after
 *                     the unmap/remove, nothing mapped again (dqm.c:964).
 *   evict_process_queues_cpsch() / restore_process_queues_cpsch():
 *                     qpd->evicted nesting (dqm.c:1187, 1338), one
 *                     execute_queues_cpsch (HWS) or per-queue remove/add.
 *   create_queue_cpsch(), destroy_queue_cpsch(), process_termination_cpsch().
 *   dqm->is_hws_hang (set by a test op): HWS runlist changes return -EIO,
 *                     update_queue changes nothing, evict/restore keep
 *                     their bookkeeping (kfd_process_evict_queues keeps the
 *                     count on -EIO, so a restore must still follow).
 *
 * Costs: an HWS runlist change (ks_gpu_hws_execute) CWSR-saves every
 * running workgroup of the device and stalls it for runlist_us, and the
 * caller waits that long (the preemption fence); an MES call saves only its
 * queue's workgroups and the caller waits mes_us.
 *
 * Lock order: p->mutex -> dqm->lock -> the GPU spinlock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/objtool.h>
#include <linux/delay.h>
#include <linux/poison.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include "kfdsim.h"

static void ks_wait_us(unsigned int us)
{
	if (us)
		usleep_range(us, us + us / 8 + 1);
}

/*
 * fence_spin=1: the caller waits as KFD's do, on the CPU, under dqm->lock.
 * HWS: amdkfd_fence_wait_timeout() loops on schedule() without sleeping
 * (6.12 kfd_device_queue_manager.c:2095-2122); MES:
 * amdgpu_fence_wait_polling() spins in udelay(2) (amdgpu_fence.c:348-367).
 */
static void ks_spin_us(unsigned int us)
{
	u64 end = ktime_get_ns() + (u64)us * NSEC_PER_USEC;

	while (ktime_get_ns() < end) {
		if (ks_param.mes)
			udelay(2);
		else
			schedule();
	}
	atomic64_add(us, &ks_stats.fence_spin_us);
}

/* The firmware's turn: the modelled cost plus an injected slowdown. */
static void ks_wait_fw(unsigned int us)
{
	us += ks_fault_runlist();
	if (ks_param.fence_spin && us)
		ks_spin_us(us);
	else
		ks_wait_us(us);
}

/*
 * execute_queues_cpsch(): unmap everything, map the active queues.  With the
 * HWS marked hung (test op) it fails with -EIO like KFD's unmap during a
 * hang or reset; the simulated hardware still applies the change.
 */
static int ks_execute_queues(struct device_queue_manager *dqm)
{
	bool skip;
	int ret = ks_reset_unmap(dqm, NULL, &skip);

	/* A preemption that timed out, or a GPU reset running (reset.c). */
	if (skip)
		return ret;
	if (ks_gpu_hws_execute(ks_dev_of_dqm(dqm)))
		ks_wait_fw(ks_param.runlist_us);
	return READ_ONCE(dqm->is_hws_hang) ? -EIO : 0;
}

static int ks_add_queue_mes(struct queue *q)
{
	/* During a GPU reset the reset domain's trylock fails (reset.c). */
	int ret = ks_reset_add(q->device->dqm);

	if (ret)
		return ret;
	ks_gpu_mes_set(q, true);
	ks_wait_fw(ks_param.mes_us);
	return 0;
}

/* Without CWSR an unmap waits for the running waves to finish: count it. */
static void ks_note_unmap(struct queue *q)
{
	if (!ks_param.cwsr && READ_ONCE(q->ks.running))
		atomic64_inc(&ks_stats.drain_unmaps);
}

static int ks_remove_queue_mes(struct queue *q)
{
	bool skip;
	int ret = ks_reset_unmap(q->device->dqm, q, &skip);

	/* A remove that timed out, or a GPU reset running (reset.c). */
	if (skip)
		return ret;
	ks_note_unmap(q);
	ks_gpu_mes_set(q, false);
	ks_wait_fw(ks_param.mes_us);
	return ret;
}

/*
 * A queue's MQD, what update_mqd() writes: kmalloc'd, so that a write after
 * free_mqd() (a queue KFD tore down) is caught by SLUB debug or KFENCE, as a
 * sub-allocated MQD of the real driver would be silently corrupted.
 */
struct ks_mqd {
	u32 se_mask[KS_MAX_SE];	/* compute_static_thread_mgmt_se0..7 */
	u32 active;		/* cp_hqd_active */
	u32 priority;		/* cp_hqd_queue_priority */
};

/* allocate_mqd() + init_mqd(), before the dqm lock as create_queue_cpsch(). */
static int ks_allocate_mqd(struct queue *q)
{
	struct ks_mqd *mqd = kzalloc(sizeof(*mqd), GFP_KERNEL);

	if (!mqd)
		return -ENOMEM;
	q->mqd = mqd;
	return 0;
}

/* update_mqd(): the CU mask, the priority and the active bit. */
static void ks_write_mqd(struct queue *q)
{
	struct ks_mqd *mqd = q->mqd;

	memcpy(mqd->se_mask, q->ks.se_mask, sizeof(mqd->se_mask));
	WRITE_ONCE(mqd->priority, q->properties.priority);
	WRITE_ONCE(mqd->active, q->properties.is_active);
}

/*
 * free_mqd(): poisoned and freed, q->mqd left pointing at it as in KFD
 * (6.12 kfd_mqd_manager.c:224-233; 7.3 dqm.c:3157-3168 calls it with the
 * dqm lock dropped).
 */
static void ks_free_mqd(struct queue *q)
{
	struct ks_mqd *mqd = q->mqd;

	if (!mqd)
		return;
	memset(mqd, POISON_FREE, sizeof(*mqd));
	kfree(mqd);
}

/*
 * increment_queue_count() / decrement_queue_count() (7.3 dqm.c:512-538):
 * @d = +1 or -1, dqm lock held.  unsigned: a second decrement wraps.
 */
void ks_queue_count(struct device_queue_manager *dqm, struct queue *q, int d)
{
	lockdep_assert_held(&dqm->lock);
	dqm->active_queue_count += d;
	if (q->properties.type == KFD_QUEUE_TYPE_COMPUTE)
		dqm->active_cp_queue_count += d;
}

/*
 * The counters must equal the active queues of the processes registered on
 * the device: map_queues_cpsch() and pm_calc_rlib_size() size the runlist
 * from them.  Checked under the dqm lock after every change; a mismatch
 * is counted (stats active_count_mismatches) and warned about once.
 */
static void ks_check_counts(struct device_queue_manager *dqm, const char *where)
{
	unsigned int cp, n = ks_gpu_count_active(ks_dev_of_dqm(dqm), &cp);

	lockdep_assert_held(&dqm->lock);
	if (n == dqm->active_queue_count && cp == dqm->active_cp_queue_count)
		return;
	atomic64_inc(&ks_stats.active_count_mismatches);
	WARN_ONCE(1, "kfdsim: dev%u after %s: active_queue_count %u active_cp_queue_count %u, but %u active queues (%u compute)\n",
		  ks_dev_of_dqm(dqm)->id, where, dqm->active_queue_count,
		  dqm->active_cp_queue_count, n, cp);
}

/**
 * ks_dqm_counts_show() - stats lines: the dqm counters and the active queues
 * @m: seq_file
 *
 * Sums over the devices; each device's pair is compared by ks_check_counts().
 */
void ks_dqm_counts_show(struct seq_file *m)
{
	unsigned int i, cnt = 0, cpcnt = 0, n = 0, cp = 0, c;

	for (i = 0; i < ks_param.ndev; i++) {
		struct device_queue_manager *dqm = &ks_devs[i].dqm;

		mutex_lock(&dqm->lock);
		cnt += dqm->active_queue_count;
		cpcnt += dqm->active_cp_queue_count;
		n += ks_gpu_count_active(&ks_devs[i], &c);
		cp += c;
		mutex_unlock(&dqm->lock);
	}
	seq_printf(m, "active_queue_count %u\nactive_cp_queue_count %u\nactive_queues %u\nactive_cp_queues %u\nactive_count_mismatches %lld\n",
		   cnt, cpcnt, n, cp, atomic64_read(&ks_stats.active_count_mismatches));
}

/* dqm->ops.update_queue: the real update_queue() of 6.12 dqm.c:934. */
static int ks_update_queue(struct device_queue_manager *dqm, struct queue *q,
			   struct mqd_update_info *minfo)
{
	struct kfd_process_device *pdd = ks_pdd(q->process, q->device);
	bool prev_active, skip = false;
	int ret = 0;

	/* Injected: the caller reaches the dqm lock late (a race window). */
	ks_fault_sleep(&ks_fault_knobs.update_queue_lock_delay_us,
		       &ks_fault_counts.update_queue_lock_delays);
	mutex_lock(&dqm->lock);
	prev_active = q->properties.is_active;
	/* Injected: the unmap (HWS) or remove (MES) failed, nothing changes. */
	ret = ks_fault(KS_F_UPDATE_QUEUE);
	if (ret)
		goto out;
	if (!ks_param.mes && READ_ONCE(dqm->is_hws_hang)) {
		/* unmap_queues_cpsch() failed: "unmap queue failed", nothing changes */
		ret = -EIO;
		goto out;
	}
	/*
	 * The unmap (HWS) or remove (MES) first: one that times out resets a
	 * queue or the GPU, and then this pdd may be flagged (reset.c).
	 */
	if (!ks_param.mes)
		ret = ks_reset_unmap(dqm, NULL, &skip);
	else if (prev_active)
		ret = ks_remove_queue_mes(q);
	if (READ_ONCE(pdd->has_reset_queue)) {
		/*
		 * "queue is reset so inaccessable": HWS has unmapped the whole
		 * runlist and maps nothing again until the next runlist change.
		 */
		if (!ks_param.mes && ks_gpu_hws_unmap_all(ks_dev_of_dqm(dqm)))
			ks_wait_us(ks_param.runlist_us);
		ret = -EACCES;
		goto out;
	}
	if (ret)	/* "unmap queue failed" */
		goto out;
	/* update_mqd(): update_cu_mask(), then is_active */
	ks_update_mqd_cu_mask(q, minfo);
	q->properties.is_active = QUEUE_IS_ACTIVE(q->properties);
	ks_write_mqd(q);
	/* The counters follow is_active (7.3 dqm.c:1160-1164). */
	if (q->properties.is_active && !prev_active)
		ks_queue_count(dqm, q, 1);
	else if (!q->properties.is_active && prev_active)
		ks_queue_count(dqm, q, -1);
	if (skip && !ks_param.mes) {
		/* dqm stopped for a GPU reset: the map returns 0, no hardware */
		ks_gpu_hws_mark(q, q->properties.is_active);
		goto out;
	}
	if (!ks_param.mes && prev_active && !q->properties.is_active)
		ks_note_unmap(q);
	if (!ks_param.mes) {
		/* unmap_queues_cpsch() + map_queues_cpsch(), every time */
		ks_gpu_hws_mark(q, q->properties.is_active);
		ret = ks_execute_queues(dqm);
	} else if (q->properties.is_active) {
		/* NO_HWS update_queue(): load_mqd only in the owner's mm. */
		if (ks_param.nohws &&
		    WARN(q->process->mm != current->mm, "should only run in user thread")) {
			atomic64_inc(&ks_stats.nohws_refused);
			ret = -EFAULT;
		} else {
			ret = ks_add_queue_mes(q);
		}
	}
	/*
	 * Injected: the map after update_mqd() failed (6.12 dqm.c:994-1022,
	 * map_queues_cpsch() or add_queue_mes()).  is_active and the runlist
	 * have moved with the queue's flags, and KFD returns the error (S3 F14).
	 */
	if (!ret)
		ret = ks_fault(KS_F_UPDATE_MAP);
out:
	ks_check_counts(dqm, "update_queue");
	mutex_unlock(&dqm->lock);
	return ret;
}

/* dqm->ops.evict_process_queues: evict_process_queues_cpsch(). */
static int ks_evict_process_queues(struct device_queue_manager *dqm,
				   struct qcm_process_device *qpd)
{
	struct queue *q;
	int ret = 0;

	mutex_lock(&dqm->lock);
	atomic64_inc(&ks_stats.evict_calls);
	atomic_inc(&ks_stats.evicted_refs);
	if (qpd->evicted++ > 0)	/* already evicted, do nothing */
		goto out;
	list_for_each_entry(q, &qpd->queues_list, list) {
		q->properties.is_evicted = true;
		if (!q->properties.is_active)
			continue;
		q->properties.is_active = false;
		ks_queue_count(dqm, q, -1);
		if (ks_param.mes) {
			ks_remove_queue_mes(q);
		} else {
			ks_note_unmap(q);
			ks_gpu_hws_mark(q, false);
		}
	}
	if (!ks_param.mes)
		ret = ks_execute_queues(dqm);
out:
	/* Injected: KFD keeps the count, the caller sees the error. */
	ret = ks_fault(KS_F_EVICT) ?: ret;
	ks_check_counts(dqm, "evict_process_queues");
	mutex_unlock(&dqm->lock);
	return ret;
}

/* dqm->ops.restore_process_queues: restore_process_queues_cpsch(). */
static int ks_restore_process_queues(struct device_queue_manager *dqm,
				     struct qcm_process_device *qpd)
{
	struct mm_struct *mm = NULL;
	bool injected = false;
	struct queue *q;
	int ret = 0;

	if (ks_param.nohws) {
		/*
		 * restore_process_queues_nocpsch(): the MQDs are loaded in
		 * the process's mm, taken from its lead thread (any caller).
		 */
		mm = get_task_mm(qpd->pqm->process->lead_thread);
		if (!mm)
			return -EFAULT;
	}
	mutex_lock(&dqm->lock);
	if (WARN_ON_ONCE(!qpd->evicted))	/* already restored, do nothing */
		goto out;
	atomic64_inc(&ks_stats.restore_calls);
	atomic_dec(&ks_stats.evicted_refs);
	if (qpd->evicted > 1) {	/* ref count still > 0, decrement and do nothing */
		qpd->evicted--;
		goto out;
	}
	if (ks_param.mes) {
		/*
		 * 6.12 restore_process_queues_cpsch(): an add_queue_mes()
		 * failure does "goto out", past "qpd->evicted = 0": the
		 * process stays evicted (REVIEW-S3 F8).
		 */
		ret = ks_fault(KS_F_RESTORE);
		injected = true;
		if (ret) {
			atomic_inc(&ks_stats.evicted_refs);
			goto out;
		}
	}
	/*
	 * A queue set_queue_as_reset() left inactive is mapped again here:
	 * QUEUE_IS_ACTIVE() does not look at a reset (6.12
	 * kfd_device_queue_manager.c:1361-1366, 7.3 :1617-1622; 7.3's is_reset
	 * is read only by remove_queue_mes(), :294).
	 */
	list_for_each_entry(q, &qpd->queues_list, list) {
		q->properties.is_evicted = false;
		if (!QUEUE_IS_ACTIVE(q->properties))
			continue;
		q->properties.is_active = true;
		ks_queue_count(dqm, q, 1);
		if (ks_param.mes)
			ks_add_queue_mes(q);
		else
			ks_gpu_hws_mark(q, true);
	}
	if (!ks_param.mes)
		ret = ks_execute_queues(dqm);
	qpd->evicted = 0;
out:
	/* Injected (HWS): the count is dropped all the same, as in KFD. */
	if (!injected)
		ret = ks_fault(KS_F_RESTORE) ?: ret;
	ks_check_counts(dqm, "restore_process_queues");
	mutex_unlock(&dqm->lock);
	if (mm)
		mmput(mm);
	return ret;
}

/*
 * register_process() / unregister_process() (6.12 dqm.c:1392-1457): a
 * process is on the dqm's list, and counts in processes_count, from its
 * first queue on the device to its last, parked or not.  The runlist maps
 * every one of them (pm_create_runlist_ib()); more than max_proc_per_quantum
 * oversubscribe it (pm.c:41-67).  dqm lock held.
 */
static void ks_register_process(struct device_queue_manager *dqm, struct qcm_process_device *qpd)
{
	struct kfd_process_device *pdd = container_of(qpd, struct kfd_process_device, qpd);

	if (pdd->ks_registered)
		return;
	list_add(&pdd->ks_reg, &dqm->ks_procs);
	pdd->ks_registered = true;
	dqm->processes_count++;
}

static void ks_unregister_process(struct device_queue_manager *dqm,
				  struct qcm_process_device *qpd)
{
	struct kfd_process_device *pdd = container_of(qpd, struct kfd_process_device, qpd);

	if (!pdd->ks_registered)
		return;
	list_del(&pdd->ks_reg);
	pdd->ks_registered = false;
	dqm->processes_count--;
}

/**
 * ks_dqm_create_queue() - put a new queue on the device (create_queue_cpsch)
 * @q: queue
 * @qpd: its process's device data
 *
 * Return: 0 or -ENOMEM (no MQD).
 */
int ks_dqm_create_queue(struct queue *q, struct qcm_process_device *qpd)
{
	struct device_queue_manager *dqm = qpd->dqm;

	if (ks_allocate_mqd(q))
		return -ENOMEM;
	mutex_lock(&dqm->lock);
	ks_cu_mask_init(q);	/* init_mqd() */
	if (list_empty(&qpd->queues_list))	/* pqm_create_queue(), pqm.c:367 */
		ks_register_process(dqm, qpd);
	list_add(&q->list, &qpd->queues_list);
	if (qpd->evicted)
		q->properties.is_evicted = true;
	q->properties.is_active = QUEUE_IS_ACTIVE(q->properties);
	ks_write_mqd(q);
	ks_gpu_add_queue(q);
	atomic_inc(&ks_stats.queues);
	if (q->properties.is_active) {
		ks_queue_count(dqm, q, 1);
		if (ks_param.mes) {
			ks_add_queue_mes(q);
		} else {
			ks_gpu_hws_mark(q, true);
			ks_execute_queues(dqm);
		}
	}
	ks_check_counts(dqm, "create_queue");
	mutex_unlock(&dqm->lock);
	return 0;
}

/**
 * ks_dqm_destroy_queue() - take a queue off the device for good
 * (destroy_queue_cpsch)
 * @q: queue
 * @qpd: its process's device data
 *
 * In-flight work of a destroyed queue is dropped (its waves are gone).
 *
 * Return: 0.
 */
int ks_dqm_destroy_queue(struct queue *q, struct qcm_process_device *qpd)
{
	struct device_queue_manager *dqm = qpd->dqm;

	mutex_lock(&dqm->lock);
	if (q->properties.is_active) {
		q->properties.is_active = false;
		ks_queue_count(dqm, q, -1);
		if (ks_param.mes) {
			ks_remove_queue_mes(q);
		} else {
			ks_gpu_hws_mark(q, false);
			ks_execute_queues(dqm);
		}
	}
	ks_gpu_remove_queue(q);
	list_del(&q->list);
	/* pqm_destroy_queue(), pqm.c:562-564: after the runlist without @q. */
	if (list_empty(&qpd->queues_list))
		ks_unregister_process(dqm, qpd);
	atomic_dec(&ks_stats.queues);
	ks_check_counts(dqm, "destroy_queue");
	mutex_unlock(&dqm->lock);
	/* destroy_queue_cpsch(): free_mqd() after dqm_unlock(). */
	ks_free_mqd(q);
	return 0;
}

/**
 * ks_dqm_process_termination() - the process is gone: drop all its queues
 * (process_termination_cpsch, 7.3 dqm.c:3091-3170; 6.12 dqm.c:2675-2765)
 * @qpd: its device data
 *
 * As KFD, under the dqm lock: the counters drop for each active queue, but
 * is_active stays set; the process is unregistered (here: its queues leave
 * the simulated hardware) and the runlist rebuilt without it.  Then each
 * queue leaves qpd->queues_list and its MQD is freed with the lock dropped
 * ("Do free_mqd() after dqm_unlock to avoid circular locking"): anyone
 * waiting for the lock gets it in between.  qpd->evicted is left as it is
 * (never cleared there): a late restore counts it down.  The struct queue
 * themselves are freed by pqm_uninit().
 */
void ks_dqm_process_termination(struct qcm_process_device *qpd)
{
	struct device_queue_manager *dqm = qpd->dqm;
	struct queue *q;
	bool hws = false, skip;

	mutex_lock(&dqm->lock);
	/*
	 * HWS: the runlist change at the end unmaps the queues while their
	 * waves are still on the hardware: one that cannot be saved times
	 * out there (6.12 dqm.c:2733, reset.c).
	 */
	if (!ks_param.mes)
		ks_reset_unmap(dqm, NULL, &skip);
	list_for_each_entry(q, &qpd->queues_list, list) {
		if (q->properties.is_active) {
			/* A remove that times out resets @q, counted there. */
			if (ks_param.mes) {
				ks_remove_queue_mes(q);
			} else {
				ks_gpu_hws_mark(q, false);
				hws = true;
			}
			if (q->properties.is_active)
				ks_queue_count(dqm, q, -1);
		}
		ks_gpu_remove_queue(q);
		atomic_dec(&ks_stats.queues);
	}
	/* Unregistered before the runlist is rebuilt (6.12 dqm.c:2722-2733). */
	ks_unregister_process(dqm, qpd);
	if (hws)
		ks_execute_queues(dqm);
	ks_check_counts(dqm, "process_termination");
	while (!list_empty(&qpd->queues_list)) {
		q = list_first_entry(&qpd->queues_list, struct queue, list);
		list_del(&q->list);
		mutex_unlock(&dqm->lock);
		ks_free_mqd(q);
		mutex_lock(&dqm->lock);
	}
	mutex_unlock(&dqm->lock);
}

/*
 * Testing gpreempt's IBT check (TCG has no IBT): an update_queue op whose
 * entry has no ENDBR, as a sealed function would have on an IBT CPU.
 */
static bool ks_ops_noendbr;
module_param_named(ops_noendbr, ks_ops_noendbr, bool, 0444);
MODULE_PARM_DESC(ops_noendbr, "Testing: dqm->ops.update_queue points at a function without ENDBR (default 0)");

int ks_update_queue_op(struct device_queue_manager *dqm, struct queue *q,
		       struct mqd_update_info *minfo)
{
	return ks_update_queue(dqm, q, minfo);
}

/* A tail jump to ks_update_queue() with no ENDBR (objtool told so). */
asm(".pushsection .text\n\t"
	".type ks_update_queue_noendbr, @function\n\t"
	"ks_update_queue_noendbr:\n\t"
	ANNOTATE_NOENDBR "\n\t"
	"jmp ks_update_queue_op\n\t"
	".size ks_update_queue_noendbr, . - ks_update_queue_noendbr\n\t"
	".popsection\n\t");

/**
 * ks_dqm_init() - a device's dqm with its live ops table
 * @d: device
 */
void ks_dqm_init(struct ks_device *d)
{
	struct device_queue_manager *dqm = &d->dqm;

	mutex_init(&dqm->lock);
	dqm->ops.update_queue = ks_update_queue;
	if (ks_ops_noendbr)
		dqm->ops.update_queue = ks_update_queue_noendbr;
	dqm->ops.evict_process_queues = ks_evict_process_queues;
	dqm->ops.restore_process_queues = ks_restore_process_queues;
	dqm->dev = &d->node;
	/* MES is the HWS op-set with enable_mes set, as in KFD. */
	dqm->sched_policy = ks_param.nohws ? GP_ENUM_KFD_SCHED_POLICY_NO_HWS :
			    GP_ENUM_KFD_SCHED_POLICY_HWS;
	dqm->sched_running = true;
	d->kfd.shared_resources.enable_mes = ks_param.mes && !ks_param.nohws;
	d->kfd.cwsr_enabled = ks_param.cwsr;
	d->node.dqm = dqm;
	d->node.kfd = &d->kfd;
	ks_node_set_ids(&d->node, KS_GPU_ID(d->id));
#if GP_HAVE_kfd_node__max_proc_per_quantum || GP_HAVE_kfd_dev__max_proc_per_quantum
	d->node.max_proc_per_quantum = ks_param.max_proc;	/* kgd2kfd_device_init() */
#endif
	INIT_LIST_HEAD(&dqm->ks_procs);
#if !GP_HAVE_kfd_node
	/* 6.1: the device is its own node; KFD reads its flags there. */
	d->node.shared_resources.enable_mes = ks_param.mes;
	d->node.cwsr_enabled = true;
#endif
}
