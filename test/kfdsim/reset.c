// SPDX-License-Identifier: GPL-2.0
/*
 * reset.c - preemptions that do not finish, and what KFD does then: a queue
 * reset or a GPU reset, with the semantics of the kernel kfdsim models
 * (hang_model).  A workgroup of a KFDSIM_PKT_F_NOPREEMPT packet cannot be
 * CWSR-saved (gpu.c leaves it on its CU), like a wave spinning in its trap
 * handler (ROCm/amdgpu#72).
 *
 * HWS (every unmap preempts the whole runlist, 6.12 pm_v9.c:375):
 *   the CP abandons a queue not preempted within unmap_latency_ms
 *   (pm_v9.c:204, KFD_UNMAP_LATENCY_MS/100 in 100 ms units: 40 with the
 *   default queue_preemption_timeout_ms 9000, amdgpu_drv.c:825 and
 *   kfd_priv.h:114-121) and logs its doorbell in the HIQ MQD (6.12
 *   dqm.c:2317-2326).  6.12/7.3 then reset that queue
 *   (reset_queues_on_hws_hang -> hqd_reset, set_queue_as_reset: its waves
 *   killed, pdd->has_reset_queue, 7.x q->properties.is_reset, a reset event;
 *   dqm.c:2225-2277) and the unmap succeeds.  If the queue reset fails
 *   (queue_reset=0): is_hws_hang and kfd_hws_hang (dqm.c:2327-2335).  A HIQ
 *   fence that times out (fence_timeout_ms, queue_preemption_timeout_ms):
 *   kfd_hws_hang (dqm.c:2309-2316).
 * MES (one queue per REMOVE_QUEUE): the caller polls the MES fence for
 *   mes_timeout_ms (mes_v11_0.c:164-185); on failure 6.12 resets the GPU
 *   ("MES might be in unrecoverable state", dqm.c:257-262, :286-290), 7.3
 *   has MES reset that queue first (remove_queue_mes_on_reset_option ->
 *   reset_queues_mes, 7.3 dqm.c:284-330, :451-503).
 * kfd_hws_hang (6.12 dqm.c:154-174): has_reset_queue on the pdd of every
 *   process with a queue on the device, and a GPU reset (7.3 dqm.c:165-185
 *   calls amdgpu_amdkfd_gpu_reset directly).  The modelled reset: until the
 *   reset work runs, unmaps fail the reset-domain trylock (-EIO, dqm.c:2293);
 *   pre_reset evicts every process once (kfd_suspend_all_processes, proc.c
 *   2074-2087) and stops the dqm (sched_running false: HWS unmap and map
 *   return 0 with no hardware action, dqm.c:2289, :2131; MES calls still
 *   -EIO, the reset domain is held); the GPU's waves are lost; after
 *   gpu_reset_ms post_reset starts the dqm again and leaves the old
 *   processes evicted for ever ("KFD won't be able to resume existing
 *   process", dev.c:971-975).  is_hws_hang is cleared by the next
 *   kfd_process_evict_queues (proc.c:1893; 7.3 proc.c:2089).
 * 6.1 (hang_model=6.1): a preemption that times out sets a sticky
 *   is_hws_hang and unmaps fail with -EIO (the old model, fault/hws_hang).
 *
 * Every time here is xtime_scale, like the other modelled times.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>
#include "kfdsim.h"

enum ks_hang_model { KS_HANG_61, KS_HANG_612, KS_HANG_73 };

#if GP_HAVE_queue_properties__is_reset
#define KS_HANG_DEFAULT KS_HANG_73
#elif GP_HAVE_kfd_process_device__has_reset_queue
#define KS_HANG_DEFAULT KS_HANG_612
#else
#define KS_HANG_DEFAULT KS_HANG_61
#endif

static char *hang_model;
module_param(hang_model, charp, 0444);
MODULE_PARM_DESC(hang_model,
		 "What a preemption that times out does: 6.1 (sticky is_hws_hang, -EIO), 6.12 (queue reset, else GPU reset), 7.3 (6.12 plus is_reset and MES queue reset) (default: the kernel kfdsim is built for)");
static unsigned int unmap_latency_ms = 4000;
module_param(unmap_latency_ms, uint, 0444);
MODULE_PARM_DESC(unmap_latency_ms,
		 "HWS: the CP abandons a queue not preempted within this, in ms (KFD_UNMAP_LATENCY_MS: 40 units of 100 ms) [1..60000] (default 4000)");
static unsigned int fence_timeout_ms = 9000;
module_param(fence_timeout_ms, uint, 0444);
MODULE_PARM_DESC(fence_timeout_ms,
		 "HWS: the HIQ fence timeout, queue_preemption_timeout_ms, in ms [1..60000] (default 9000)");
static unsigned int mes_timeout_ms = 2100;
module_param(mes_timeout_ms, uint, 0444);
MODULE_PARM_DESC(mes_timeout_ms,
		 "MES: a REMOVE_QUEUE that cannot finish fails after this, in ms [1..60000] (default 2100)");
static unsigned int gpu_reset_ms = 1000;
module_param(gpu_reset_ms, uint, 0444);
MODULE_PARM_DESC(gpu_reset_ms,
		 "A modelled GPU reset keeps the dqm stopped this long, in ms [1..60000] (default 1000)");
static bool queue_reset = true;
module_param(queue_reset, bool, 0444);
MODULE_PARM_DESC(queue_reset,
		 "6.12/7.3 HWS: the hung queue's reset (hqd_reset) succeeds (default 1); 0: it fails and the GPU resets");

static enum ks_hang_model ks_hang = KS_HANG_DEFAULT;
static const char *const ks_hang_names[] = { "6.1", "6.12", "7.3" };
/* debugfs reset/fence_timeout_next: the next N unmaps or removes time out. */
static u32 ks_fence_next;

enum ks_rst_state { KS_RST_NONE, KS_RST_PENDING, KS_RST_STOPPED };

static struct ks_rst {
	enum ks_rst_state state;
	u32 gen;
	struct work_struct work;
} ks_rst[KS_MAX_DEVS];

static void ks_wait_ms(unsigned int ms)
{
	msleep((u64)ms * ks_param.time_scale);
}

static struct ks_rst *ks_rst_of(struct device_queue_manager *dqm)
{
	return &ks_rst[ks_dev_of_dqm(dqm)->id];
}

/* kfd_hws_hang(): every process on the device flagged, a GPU reset scheduled. */
static int ks_kfd_hws_hang(struct device_queue_manager *dqm)
{
	struct ks_rst *r = ks_rst_of(dqm);

	lockdep_assert_held(&dqm->lock);
	ks_gpu_flag_reset(ks_dev_of_dqm(dqm));
	if (r->state == KS_RST_NONE) {
		r->state = KS_RST_PENDING;
		schedule_work(&r->work);
	}
	return -ETIME;
}

/* set_queue_as_reset() (6.12 dqm.c:2225-2277): only @q's waves die. */
static void ks_reset_queue(struct queue *q)
{
	struct kfd_process_device *pdd = ks_pdd(q->process, q->device);

	pr_err("queue id 0x%x at pasid 0x%x is reset\n", q->properties.queue_id,
	       q->process->pasid);
	WRITE_ONCE(pdd->has_reset_queue, true);
#if GP_HAVE_queue_properties__is_reset
	if (ks_hang == KS_HANG_73)
		WRITE_ONCE(q->properties.is_reset, true);
#endif
	if (q->properties.is_active) {
		q->properties.is_active = false;
		ks_queue_count(&ks_dev_of(q->device)->dqm, q, -1);
	}
	ks_gpu_kill(ks_dev_of(q->device), q);
	atomic64_inc(&ks_stats.queues_reset);
	atomic64_inc(&ks_stats.reset_events);
}

/**
 * ks_test_reset_queue() - reset @p's queue @qid as a hung queue's reset does
 * @p: process
 * @qid: its queue
 *
 * What reset_queues_on_hws_hang() does to the queue it found hung (6.12
 * kfd_device_queue_manager.c:2225-2277, set_queue_as_reset() :2149-2161;
 * 7.3 :2412-2426), without a wave that must first
 * fail a preemption: the queue goes inactive, its pdd gets has_reset_queue
 * (7.3: the queue is_reset), and the process's other queues keep running.
 *
 * Return: 0, or -EINVAL (no such queue).
 */
int ks_test_reset_queue(struct kfd_process *p, u32 qid)
{
	struct device_queue_manager *dqm;
	struct queue *q;
	int ret = 0;

	mutex_lock(&p->mutex);
	q = pqm_get_user_queue(&p->pqm, qid);
	if (!q) {
		ret = -EINVAL;
		goto out;
	}
	dqm = &ks_dev_of(q->device)->dqm;
	mutex_lock(&dqm->lock);
	ks_reset_queue(q);
	mutex_unlock(&dqm->lock);
out:
	mutex_unlock(&p->mutex);
	return ret;
}

/**
 * ks_reset_unmap() - the fate of an unmap (HWS) or a remove (MES) about to run
 * @dqm: device, dqm lock held
 * @only: MES: the queue removed; HWS: NULL (the whole runlist)
 * @skip: out: the caller must not touch the hardware (reset running, or
 *	  the hung queue is already gone)
 *
 * With no wave that cannot be saved and no injected fence timeout, nothing
 * happens here.  Else the preemption is done here, the caller waits as KFD
 * does, and the hang is handled per hang_model.
 *
 * Return: 0, -EIO (resetting, or 6.1's hang) or -ETIME (a GPU reset began).
 */
int ks_reset_unmap(struct device_queue_manager *dqm, struct queue *only, bool *skip)
{
	struct ks_device *d = ks_dev_of_dqm(dqm);
	struct ks_rst *r = ks_rst_of(dqm);
	struct queue *hung;
	u32 n = READ_ONCE(ks_fence_next);
	bool fence = false;

	*skip = r->state != KS_RST_NONE;
	/* The reset domain is held: the trylock fails; stopped HWS returns 0. */
	if (r->state == KS_RST_PENDING || (r->state == KS_RST_STOPPED && ks_param.mes))
		return -EIO;
	if (r->state == KS_RST_STOPPED)
		return 0;
	if (n && cmpxchg(&ks_fence_next, n, n - 1) == n)
		fence = true;
	hung = ks_gpu_unsaveable(d, only);
	if (!fence && !hung)
		return 0;
	/* The preemption: every wave that can be saved is. */
	if (only)
		ks_gpu_mes_set(only, false);
	else
		ks_gpu_hws_unmap_all(d);
	if (fence) {
		ks_wait_ms(only ? mes_timeout_ms : fence_timeout_ms);
		atomic64_inc(&ks_stats.fence_timeouts);
		pr_err("%s fence timed out: a GPU reset follows\n", only ? "MES" : "HIQ");
		*skip = true;
		if (ks_hang == KS_HANG_61)
			goto hang61;
		return ks_kfd_hws_hang(dqm);
	}
	ks_wait_ms(only ? mes_timeout_ms : unmap_latency_ms);
	atomic64_inc(&ks_stats.preempt_timeouts);
	if (ks_hang == KS_HANG_61)
		goto hang61;
	if (only && ks_hang == KS_HANG_612) {
		pr_err("MES might be in unrecoverable state, issue a GPU reset\n");
		*skip = true;
		return ks_kfd_hws_hang(dqm);
	}
	if (!only && !queue_reset) {
		/* reset_queues_on_hws_hang() failed */
		WRITE_ONCE(dqm->is_hws_hang, true);
		*skip = true;
		return ks_kfd_hws_hang(dqm);
	}
	ks_reset_queue(hung);
	*skip = !!only;	/* MES: the removed queue is gone; HWS maps the rest */
	return 0;

hang61:
	/* 6.1: the HWS is marked hung for good; the hung waves die with it. */
	WRITE_ONCE(dqm->is_hws_hang, true);
	if (hung)
		ks_gpu_kill(d, hung);
	atomic64_inc(&ks_stats.gpu_resets);
	return -EIO;
}

/**
 * ks_reset_add() - may a queue be added (MES ADD_QUEUE) now?
 * @dqm: device, dqm lock held
 *
 * Return: 0, or -EIO while the device resets (the caller does nothing).
 */
int ks_reset_add(struct device_queue_manager *dqm)
{
	return ks_rst_of(dqm)->state == KS_RST_NONE ? 0 : -EIO;
}

/**
 * ks_reset_evicted() - kfd_process_evict_queues() ran on @dqm's device:
 * 6.12+ clear is_hws_hang there (proc.c:1893)
 * @dqm: device
 */
void ks_reset_evicted(struct device_queue_manager *dqm)
{
	if (ks_hang != KS_HANG_61)
		WRITE_ONCE(dqm->is_hws_hang, false);
}

/* The GPU reset: pre_reset, the reset itself, post_reset. */
static void ks_reset_work(struct work_struct *work)
{
	struct ks_rst *r = container_of(work, struct ks_rst, work);
	struct ks_device *d = &ks_devs[r - ks_rst];
	struct device_queue_manager *dqm = &d->dqm;

	/* kgd2kfd_pre_reset(): the SMI clients hear of it first (kfd_device.c:959) */
	ks_smi_gpu_reset(d->id, false);
	mutex_lock(&dqm->lock);
	ks_gpu_reset_evict(d, ++r->gen);
	ks_gpu_kill(d, NULL);
	WRITE_ONCE(dqm->sched_running, false);
	r->state = KS_RST_STOPPED;
	mutex_unlock(&dqm->lock);
	pr_warn("device %u: GPU reset\n", d->id);
	ks_wait_ms(gpu_reset_ms);
	mutex_lock(&dqm->lock);
	WRITE_ONCE(dqm->sched_running, true);
	r->state = KS_RST_NONE;
	ks_gpu_reset_restart(d);
	atomic64_inc(&ks_stats.gpu_resets);
	mutex_unlock(&dqm->lock);
	pr_warn("device %u: GPU reset done; its old processes stay evicted\n", d->id);
	ks_smi_gpu_reset(d->id, true);	/* kgd2kfd_post_reset() (kfd_device.c:998) */
}

static int ks_resets_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	seq_printf(m, "hang_model %s\n", ks_hang_names[ks_hang]);
	for (i = 0; i < ks_param.ndev; i++) {
		seq_printf(m, "dev %u state %d gpu_resets_begun %u is_hws_hang %d sched_running %d\n",
			   i, ks_rst[i].state, ks_rst[i].gen,
			   READ_ONCE(ks_devs[i].dqm.is_hws_hang),
			   READ_ONCE(ks_devs[i].dqm.sched_running));
		ks_gpu_reset_show(&ks_devs[i], m);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_resets);

/**
 * ks_reset_debugfs() - kfdsim/resets and kfdsim/fence_timeout_next
 * @parent: kfdsim's debugfs directory
 */
void ks_reset_debugfs(struct dentry *parent)
{
	debugfs_create_file("resets", 0400, parent, NULL, &ks_resets_fops);
	debugfs_create_u32("fence_timeout_next", 0600, parent, &ks_fence_next);
}

static bool ks_ms_ok(unsigned int ms)
{
	return ms >= 1 && ms <= 60000;
}

/**
 * ks_reset_init() - check the parameters, set up the reset works
 *
 * Return: 0 or -EINVAL.
 */
int ks_reset_init(void)
{
	unsigned int i;

	if (hang_model) {
		for (i = 0; i < ARRAY_SIZE(ks_hang_names); i++)
			if (!strcmp(hang_model, ks_hang_names[i]))
				break;
		if (i == ARRAY_SIZE(ks_hang_names)) {
			pr_err("hang_model: 6.1, 6.12 or 7.3\n");
			return -EINVAL;
		}
		ks_hang = i;
	}
	if (!ks_ms_ok(unmap_latency_ms) || !ks_ms_ok(fence_timeout_ms) ||
	    !ks_ms_ok(mes_timeout_ms) || !ks_ms_ok(gpu_reset_ms)) {
		pr_err("unmap_latency_ms, fence_timeout_ms, mes_timeout_ms, gpu_reset_ms: 1..60000\n");
		return -EINVAL;
	}
	for (i = 0; i < KS_MAX_DEVS; i++)
		INIT_WORK(&ks_rst[i].work, ks_reset_work);
	return 0;
}

/**
 * ks_reset_exit() - wait for a GPU reset still running
 */
void ks_reset_exit(void)
{
	unsigned int i;

	for (i = 0; i < KS_MAX_DEVS; i++)
		flush_work(&ks_rst[i].work);
}
