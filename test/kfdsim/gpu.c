// SPDX-License-Identifier: GPL-2.0
/*
 * gpu.c - the simulated GPU: one command-processor kthread and num_cu
 * compute units.
 *
 * The CP polls the write index of every mapped queue (there is no doorbell
 * call: gpreempt, like on real hardware, can only learn of work by reading
 * the same pointers), fetches AQL-like dispatch packets in order, and
 * launches their workgroups on free CUs, one workgroup per CU for its
 * modelled time.  Arbitration: a free CU goes to the highest-priority mapped
 * queue that has a workgroup to launch (round robin within a priority);
 * running workgroups are never interrupted by arbitration.  A packet is
 * complete when all its workgroups are; the read index advances over
 * completed packets in order and each packet's completion signal gets +1
 * exactly once.
 *
 * Unmapping a queue (CWSR) saves each of its running workgroups with the
 * time it still needs (+cwsr_save_us); mapping restores them first
 * (+cwsr_restore_us).  A saved workgroup is finished exactly once.  An HWS
 * runlist update saves every queue's workgroups and stalls the whole device
 * for runlist_us.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include "kfdsim.h"

struct ks_cu {
	struct queue *q;	/* NULL: idle */
	u32 slot;
	u64 end_ns;
	u64 start_ns;
};

static struct {
	spinlock_t lock;	/* everything below, and every ks_queue's CP state */
	struct list_head queues;
	struct ks_cu *cu;
	u64 stall_until;
	struct queue *rr_last;
	struct task_struct *cp;
	wait_queue_head_t wq;
} ks_gpu;

static u64 ks_now(void)
{
	return ktime_get_ns();
}

static bool ks_save_push(struct ks_queue *ks, u32 slot, u64 remaining)
{
	if (ks->nsaved == ks->saved_cap) {
		u32 cap = ks->saved_cap ? ks->saved_cap * 2 : 16;
		struct ks_saved_wg *n = krealloc_array(ks->saved, cap, sizeof(*n), GFP_ATOMIC);

		if (!n)
			return false;
		ks->saved = n;
		ks->saved_cap = cap;
	}
	ks->saved[ks->nsaved].slot = slot;
	ks->saved[ks->nsaved].remaining_ns = remaining;
	ks->nsaved++;
	return true;
}

/* CWSR: take every running workgroup of @q (or of all queues) off its CU. */
static void ks_save_locked(struct queue *only, u64 now)
{
	u32 i;

	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &ks_gpu.cu[i];
		struct ks_queue *ks;
		u64 left;

		if (!cu->q || (only && cu->q != only))
			continue;
		ks = &cu->q->ks;
		left = cu->end_ns > now ? cu->end_ns - now : 0;
		ks->busy_ns += now - cu->start_ns;
		if (!ks_save_push(ks, cu->slot, left + ks_param.cwsr_save_us * NSEC_PER_USEC)) {
			/* No memory to save into: let it finish in place (drain). */
			continue;
		}
		ks->running--;
		cu->q = NULL;
		atomic64_inc(&ks_stats.cwsr_saves);
	}
}

static void ks_retire_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;

	while (ks->retired < ks->fetched) {
		struct ks_packet_run *r = &ks->inflight[ks->retired % KS_MAX_INFLIGHT];

		if (r->wg_done < r->wg_total)
			break;
		if (r->signal)
			(void)atomic64_inc_return((atomic64_t *)r->signal);
		ks->retired++;
		smp_store_release(ks->rptr, ks->retired);
		ks->packets_done++;
		atomic64_inc(&ks_stats.packets_completed);
	}
}

static void ks_finish_cus_locked(u64 now)
{
	u32 i;

	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &ks_gpu.cu[i];
		struct ks_queue *ks;

		if (!cu->q || cu->end_ns > now)
			continue;
		ks = &cu->q->ks;
		ks->inflight[cu->slot].wg_done++;
		WARN_ON_ONCE(ks->inflight[cu->slot].wg_done > ks->inflight[cu->slot].wg_total);
		ks->busy_ns += cu->end_ns - cu->start_ns;
		ks->running--;
		atomic64_inc(&ks_stats.workgroups_completed);
		cu->q = NULL;
		ks_retire_locked(container_of(ks, struct queue, ks));
	}
}

/* Fetch ready packets of @q (in order, bounded window). */
static void ks_fetch_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;
	u64 wptr = smp_load_acquire(ks->wptr);

	while (ks->fetched < wptr && ks->fetched - ks->retired < KS_MAX_INFLIGHT) {
		struct kfdsim_packet *pkt = (struct kfdsim_packet *)ks->ring_map +
					    (ks->fetched % ks->ring_slots);
		struct ks_packet_run *r = &ks->inflight[ks->fetched % KS_MAX_INFLIGHT];
		u64 sig;

		if (smp_load_acquire(&pkt->header) != KFDSIM_PKT_DISPATCH)
			break;	/* reserved but not yet written */
		memset(r, 0, sizeof(*r));
		r->id = ks->fetched;
		r->wg_total = max_t(u32, READ_ONCE(pkt->workgroups), 1);
		r->ns_per_wg = READ_ONCE(pkt->ns_per_workgroup);
		sig = READ_ONCE(pkt->completion_signal);
		if (sig >= ks->sig_uva && sig + 8 <= ks->sig_uva + ks->sig_size && !(sig & 7))
			r->signal = ks->sig_map + (sig - ks->sig_uva);
		else if (sig)
			pr_warn_ratelimited("packet %llu: signal outside the signal area\n",
					    ks->fetched);
		WRITE_ONCE(pkt->header, KFDSIM_PKT_INVALID);
		ks->fetched++;
	}
}

/* Next workgroup of @q to launch: a saved one first, else a fresh one. */
static bool ks_next_wg_locked(struct queue *q, u32 *slot, u64 *ns)
{
	struct ks_queue *ks = &q->ks;
	u64 id;

	if (ks->nsaved) {
		ks->nsaved--;
		*slot = ks->saved[ks->nsaved].slot;
		*ns = ks->saved[ks->nsaved].remaining_ns + ks_param.cwsr_restore_us * NSEC_PER_USEC;
		atomic64_inc(&ks_stats.cwsr_restores);
		return true;
	}
	for (id = ks->retired; id < ks->fetched; id++) {
		struct ks_packet_run *r = &ks->inflight[id % KS_MAX_INFLIGHT];

		if (r->wg_launched < r->wg_total) {
			r->wg_launched++;
			*slot = id % KS_MAX_INFLIGHT;
			*ns = r->ns_per_wg;
			return true;
		}
	}
	return false;
}

static bool ks_has_work_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;
	u64 id;

	if (ks->nsaved)
		return true;
	for (id = ks->retired; id < ks->fetched; id++)
		if (ks->inflight[id % KS_MAX_INFLIGHT].wg_launched <
		    ks->inflight[id % KS_MAX_INFLIGHT].wg_total)
			return true;
	return false;
}

/* Highest-priority mapped queue with work; round robin within the level. */
static struct queue *ks_pick_locked(void)
{
	struct queue *q, *first = NULL, *after = NULL;
	bool seen_last = !ks_gpu.rr_last;
	int best = -1;

	list_for_each_entry(q, &ks_gpu.queues, ks.gpu_node)
		if (q->ks.mapped && (int)q->properties.priority > best && ks_has_work_locked(q))
			best = q->properties.priority;
	if (best < 0)
		return NULL;
	list_for_each_entry(q, &ks_gpu.queues, ks.gpu_node) {
		if (q->ks.mapped && q->properties.priority == best && ks_has_work_locked(q)) {
			if (!first)
				first = q;
			if (seen_last && !after)
				after = q;
		}
		if (q == ks_gpu.rr_last)
			seen_last = true;
	}
	return after ?: first;
}

static void ks_dispatch_locked(u64 now)
{
	u32 i;

	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &ks_gpu.cu[i];
		struct queue *q;
		u64 ns;

		if (cu->q)
			continue;
		q = ks_pick_locked();
		if (!q || !ks_next_wg_locked(q, &cu->slot, &ns))
			return;
		cu->q = q;
		cu->start_ns = now;
		cu->end_ns = now + ns;
		q->ks.running++;
		ks_gpu.rr_last = q;
	}
}

/* One CP step; returns the time of the next interesting event. */
static u64 ks_cp_step(void)
{
	struct queue *q;
	u64 now = ks_now(), next = U64_MAX;
	u32 i;

	spin_lock(&ks_gpu.lock);
	ks_finish_cus_locked(now);
	if (now >= ks_gpu.stall_until) {
		list_for_each_entry(q, &ks_gpu.queues, ks.gpu_node)
			if (q->ks.mapped)
				ks_fetch_locked(q);
		ks_dispatch_locked(now);
	} else {
		next = ks_gpu.stall_until;
	}
	for (i = 0; i < ks_param.num_cu; i++)
		if (ks_gpu.cu[i].q)
			next = min(next, ks_gpu.cu[i].end_ns);
	spin_unlock(&ks_gpu.lock);
	return next;
}

static int ks_cp_fn(void *unused)
{
	while (!kthread_should_stop()) {
		u64 next = ks_cp_step(), now = ks_now();
		u64 poll = (u64)ks_param.poll_us * NSEC_PER_USEC;
		u64 wait = next > now ? min(next - now, poll) : 0;
		ktime_t t = ns_to_ktime(wait);

		if (!wait) {
			cond_resched();
			continue;
		}
		set_current_state(TASK_IDLE);
		if (!kthread_should_stop())
			schedule_hrtimeout_range(&t, 10 * NSEC_PER_USEC, HRTIMER_MODE_REL);
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/**
 * ks_gpu_add_queue() - a queue exists on the device (not mapped yet)
 * @q: queue with pinned memory
 */
void ks_gpu_add_queue(struct queue *q)
{
	q->ks.fetched = READ_ONCE(*q->ks.rptr);
	q->ks.retired = q->ks.fetched;
	spin_lock(&ks_gpu.lock);
	list_add_tail(&q->ks.gpu_node, &ks_gpu.queues);
	spin_unlock(&ks_gpu.lock);
}

/**
 * ks_gpu_remove_queue() - a queue is destroyed: its in-flight work is dropped
 * @q: queue
 */
void ks_gpu_remove_queue(struct queue *q)
{
	u32 i;

	spin_lock(&ks_gpu.lock);
	for (i = 0; i < ks_param.num_cu; i++)
		if (ks_gpu.cu[i].q == q)
			ks_gpu.cu[i].q = NULL;
	if (ks_gpu.rr_last == q)
		ks_gpu.rr_last = NULL;
	q->ks.mapped = false;
	list_del(&q->ks.gpu_node);
	spin_unlock(&ks_gpu.lock);
}

/**
 * ks_gpu_set_mapped() - map or unmap one queue (CWSR on unmap)
 * @q: queue
 * @mapped: new state
 */
void ks_gpu_set_mapped(struct queue *q, bool mapped)
{
	spin_lock(&ks_gpu.lock);
	if (q->ks.mapped && !mapped) {
		if (q->ks.running)
			q->ks.preemptions++;
		if (q->ks.running)
			atomic64_inc(&ks_stats.preemptions);
		ks_save_locked(q, ks_now());
	}
	q->ks.mapped = mapped;
	spin_unlock(&ks_gpu.lock);
	wake_up_process(ks_gpu.cp);
}

/**
 * ks_gpu_runlist_update() - HWS preempt + remap of every queue
 *
 * Every running workgroup is CWSR-saved and the device runs nothing for
 * runlist_us.
 */
void ks_gpu_runlist_update(void)
{
	u64 now = ks_now();

	spin_lock(&ks_gpu.lock);
	ks_save_locked(NULL, now);
	ks_gpu.stall_until = now + (u64)ks_param.runlist_us * NSEC_PER_USEC;
	spin_unlock(&ks_gpu.lock);
	atomic64_inc(&ks_stats.runlist_updates);
	wake_up_process(ks_gpu.cp);
}

/**
 * ks_gpu_show() - per-queue debugfs lines
 * @m: seq file
 */
void ks_gpu_show(struct seq_file *m)
{
	struct queue *q;

	spin_lock(&ks_gpu.lock);
	list_for_each_entry(q, &ks_gpu.queues, ks.gpu_node)
		seq_printf(m, "queue pasid=%u qid=%u prio=%u active=%d evicted=%d suspended=%d mapped=%d rptr=%llu wptr=%llu running=%u saved=%u packets=%llu preemptions=%llu busy_us=%llu\n",
			   q->process->pasid, q->properties.queue_id, q->properties.priority,
			   q->properties.is_active, q->properties.is_evicted,
			   q->properties.is_suspended, q->ks.mapped, q->ks.retired,
			   READ_ONCE(*q->ks.wptr), q->ks.running, q->ks.nsaved,
			   q->ks.packets_done, q->ks.preemptions, q->ks.busy_ns / 1000);
	spin_unlock(&ks_gpu.lock);
}

/**
 * ks_gpu_start() - allocate the CUs and start the command processor
 *
 * Return: 0 or a negative errno.
 */
int ks_gpu_start(void)
{
	spin_lock_init(&ks_gpu.lock);
	INIT_LIST_HEAD(&ks_gpu.queues);
	ks_gpu.cu = kcalloc(ks_param.num_cu, sizeof(*ks_gpu.cu), GFP_KERNEL);
	if (!ks_gpu.cu)
		return -ENOMEM;
	ks_gpu.cp = kthread_run(ks_cp_fn, NULL, "kfdsim_cp");
	if (IS_ERR(ks_gpu.cp)) {
		kfree(ks_gpu.cu);
		return PTR_ERR(ks_gpu.cp);
	}
	return 0;
}

/**
 * ks_gpu_stop() - stop the command processor
 */
void ks_gpu_stop(void)
{
	kthread_stop(ks_gpu.cp);
	kfree(ks_gpu.cu);
}
