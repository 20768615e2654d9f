// SPDX-License-Identifier: GPL-2.0
/*
 * gpu.c - the simulated GPU: per device (ndev=), one command-processor
 * kthread and num_cu compute units.
 *
 * The CP polls the write index of every runnable queue every poll_us (there
 * is no doorbell call: gpreempt, like on real hardware, can only learn of
 * work by reading the same pointers), fetches AQL-like dispatch packets in
 * order, and launches their workgroups on free CUs, one workgroup per CU for
 * its modelled time.  Arbitration: a free CU goes to the highest-priority
 * runnable queue that has a workgroup to launch (round robin within a
 * priority); running workgroups are never interrupted by arbitration.  The
 * priority the CP uses is the one of the queue's MQD when it was last mapped
 * (cp_hqd_queue_priority reaches the hardware with MAP_QUEUES / ADD_QUEUE).  A
 * packet is complete when all its workgroups are; the read index advances
 * over completed packets in order and each packet's completion signal gets
 * +1 exactly once.  With no queue mapped the CP sleeps until woken.
 *
 * Barrier-AND/OR packets: the CP stops at one (it stays at the head, not
 * fetched, its header intact) until its dependency signals, which other
 * queues' packets increment (of this process, or of another through shared
 * memory), are satisfied; it re-checks them at every poll.  Then it is a
 * packet without workgroups that completes in order.
 *
 * Runnable: HWS (default) runs the mapped queues of the current runlist;
 * every runlist change (ks_gpu_hws_execute(), KFD's execute_queues_cpsch)
 * CWSR-saves the running workgroups of every queue and stalls the device for
 * runlist_us.  MES adds/removes single queues (ks_gpu_mes_set()); only that
 * queue's workgroups are saved.
 *
 * Oracle (sched=oracle): the limit a software scheduler can reach in this
 * model.  Queues are mapped as under MES, and the CP arbitrates by each
 * queue's oracle level (oracle.c: the cgroup rule's level, else the MQD's
 * priority).  When a queue has workgroups to run and no free CU, the CP
 * CWSR-saves the lowest-level workgroups below it, one per workgroup it has,
 * at the poll that fetched its packet: lower waves pay only the save and the
 * restore, with no detection delay and no runlist change.
 *
 * SDMA queues copy one packet at a time on their own engine (no CU, no
 * arbitration); unmapping one preempts its copy, which resumes when mapped.
 * Those of /dev/kfd run real SDMA v4 packets (sdma.c).
 *
 * CWSR: a saved workgroup keeps the time it still needs; its CU stays busy
 * for cwsr_save_us (the trap handler writing the context out), and when the
 * queue runs again the workgroup is relaunched first with cwsr_restore_us
 * added.  A workgroup is thus finished exactly once, saved or not.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include "kfdsim.h"

struct ks_cu {
	struct queue *q;	/* running workgroup's queue, NULL: none */
	u32 slot;
	u64 start_ns;
	u64 end_ns;
	u64 free_at;		/* busy saving a context until then */
};

struct ks_gpu {
	struct ks_device *dev;
	spinlock_t lock;	/* everything below, and every ks_queue's CP state */
	struct list_head queues;
	struct ks_cu *cu;
	u64 stall_until;	/* HWS runlist update in progress */
	bool runlist_active;	/* HWS: a runlist is mapped */
	bool park;		/* HWS: a queue was marked unmapped since the last runlist change */
	unsigned long *claimed;	/* sched=oracle: CUs given to a level this step */
	struct queue *rr_last;
	struct task_struct *cp;
	/*
	 * HWS oversubscription: the runlist's processes in nslices groups
	 * of at most max_proc processes and hqds compute queues; the HWS
	 * runs group cur_slice until slice_end, then the next.
	 */
	u32 nslices;
	u32 cur_slice;
	u64 slice_end;
};

static struct ks_gpu *ks_gpu_of(struct queue *q)
{
	return ks_dev_of(q->device)->gpu;
}

static u64 ks_now(void)
{
	return ktime_get_ns();
}

/* On the hardware's queue list: MES-added, or in the HWS's runlist. */
static bool ks_mapped(struct ks_gpu *g, struct queue *q)
{
	return q->ks.mapped && (ks_param.mes || g->runlist_active);
}

/* Mapped, and in the slice an oversubscribed HWS runs now. */
static bool ks_runnable(struct ks_gpu *g, struct queue *q)
{
	return ks_mapped(g, q) && (g->nslices <= 1 || q->ks.slice == g->cur_slice);
}

/* The level the CP arbitrates by: sched=oracle's rule level, else the MQD's. */
static u32 ks_prio(const struct queue *q)
{
	return q->ks.oracle_level >= 0 ? q->ks.oracle_level : q->ks.hw_prio;
}

/*
 * hsa_signal_t: the address of an amd_signal_t, whose value is at +8 and
 * whose start_ts and end_ts (the CP's profiling timestamps) at +32 and +40.
 */
#define KS_AMD_SIGNAL_VALUE 8
#define KS_AMD_SIGNAL_START_TS 32

/*
 * AQL completion: the packet's start and end times (the GPU clock of
 * GET_CLOCK_COUNTERS, ns) are written into the signal, as the CP does for a
 * profiling queue (ROCclr enables it on every HIP queue; the fields are
 * only read when it is on), then its value is decremented atomically.
 */
static void ks_aql_signal_dec_locked(struct queue *q, u64 handle, u64 start_ns, u64 end_ns)
{
	struct kfd_process *p = q->process;
	u64 *v, *ts;

	spin_lock(&p->ks_vm_lock);
	ts = ks_vm_kaddr_locked(p, handle + KS_AMD_SIGNAL_START_TS, 16);
	if (ts) {
		WRITE_ONCE(ts[0], start_ns);
		WRITE_ONCE(ts[1], end_ns);
	}
	v = ks_vm_kaddr_locked(p, handle + KS_AMD_SIGNAL_VALUE, 8);
	if (v) {
		smp_mb__before_atomic();	/* the timestamps are seen first */
		atomic64_dec((atomic64_t *)v);
	}
	spin_unlock(&p->ks_vm_lock);
	if (!v)
		pr_warn_ratelimited("queue %u: completion signal 0x%llx not mapped to the GPU\n",
				    q->properties.queue_id, handle);
	else
		ks_event_signal_mailbox(p, handle);	/* an interrupt signal's event */
}

/*
 * CP firmware that advances the read index when a dispatch is fetched and
 * started, not when it completes (ROCm PR 4341; review S3 F11): a queue
 * running its one long kernel shows rptr == wptr.  Completion is still the
 * signal, as ROCr reads it.
 */
static bool ks_early_rptr;
module_param_named(early_rptr, ks_early_rptr, bool, 0444);
MODULE_PARM_DESC(early_rptr,
		 "CP firmware that advances read_dispatch_id when a dispatch starts, not when it completes (default 0)");

/* The read index the firmware shows after @ks fetched or retired a packet. */
static void ks_publish_rptr_locked(struct ks_queue *ks)
{
	/* Pairs with the reader's acquire: the signal is visible first. */
	smp_store_release(ks->rptr, ks_early_rptr ? ks->fetched : ks->retired);
}

static void ks_retire_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;

	while (ks->retired < ks->fetched) {
		struct ks_packet_run *r = &ks->inflight[ks->retired % KS_MAX_INFLIGHT];

		if (r->wg_done < r->wg_total)
			break;
		/* An add, not a store: a double completion shows as 2. */
		if (r->signal)
			atomic64_inc((atomic64_t *)r->signal);
		if (r->wg_total) {
			u32 ncu = min(ks->cu_mask_cus ?: ks_param.num_cu, ks_param.num_cu);

			/* Its service time with every CU it may use to itself. */
			ks->acct.ideal_ns += DIV_ROUND_UP_ULL(r->wg_total, max(ncu, 1U)) *
					     r->ns_per_wg;
		}
		if (r->signal_va) {
			u64 end = r->wg_total ? ks->last_end_ns : ks_now();

			ks_aql_signal_dec_locked(q, r->signal_va, r->start_ns ?: end, end);
		}
		ks->retired++;
		ks_publish_rptr_locked(ks);
		ks->packets_done++;
		atomic64_inc(&ks_stats.packets_completed);
	}
}

static void ks_finish_cus_locked(struct ks_gpu *g, u64 now)
{
	u32 i;

	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &g->cu[i];
		struct ks_packet_run *r;
		struct ks_queue *ks;

		if (!cu->q || cu->end_ns > now)
			continue;
		ks = &cu->q->ks;
		r = &ks->inflight[cu->slot];
		r->wg_done++;
		WARN_ON_ONCE(r->wg_done > r->wg_total);
		ks->busy_ns += cu->end_ns - cu->start_ns;
		ks->last_end_ns = max(ks->last_end_ns, cu->end_ns);
		ks->running--;
		atomic64_inc(&ks_stats.workgroups_completed);
		cu->q = NULL;
		ks_retire_locked(container_of(ks, struct queue, ks));
	}
}

/* SDMA packets whose copy is done. */
static void ks_finish_sdma_locked(struct ks_gpu *g, u64 now)
{
	struct queue *q;

	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		struct ks_queue *ks = &q->ks;
		struct ks_packet_run *r;

		if (ks->sdma4) {
			ks_sdma_finish_locked(q, now);
			continue;
		}
		if (!ks->sdma_busy || ks->sdma_end_ns > now)
			continue;
		r = &ks->inflight[ks->retired % KS_MAX_INFLIGHT];
		r->wg_done = r->wg_total;
		ks->busy_ns += ks->sdma_end_ns - ks->sdma_start_ns;
		ks->last_end_ns = max(ks->last_end_ns, ks->sdma_end_ns);
		ks->sdma_busy = false;
		ks_retire_locked(q);
	}
}

static void ks_finish_locked(struct ks_gpu *g, u64 now)
{
	ks_finish_cus_locked(g, now);
	ks_finish_sdma_locked(g, now);
}

/* CWSR-save the workgroup running on CU @i: the CU is busy saving it for cwsr_save_us. */
static void ks_save_cu_locked(struct ks_gpu *g, u32 i, u64 now)
{
	struct ks_cu *cu = &g->cu[i];
	struct ks_queue *ks = &cu->q->ks;

	/* Its trap handler never finishes the save: it runs on (reset.c). */
	if (ks->inflight[cu->slot].nopreempt)
		return;
	if (WARN_ON_ONCE(ks->nsaved >= ks_param.num_cu))
		return;
	ks->saved[ks->nsaved].slot = cu->slot;
	ks->saved[ks->nsaved].remaining_ns = cu->end_ns - now;
	ks->nsaved++;
	ks->busy_ns += now - cu->start_ns;
	ks->running--;
	ks->saves++;
	cu->q = NULL;
	cu->free_at = now + (u64)ks_param.cwsr_save_us * NSEC_PER_USEC;
	atomic64_inc(&ks_stats.cwsr_saves);
}

/*
 * CWSR: save every running workgroup of @only (NULL: of every queue); an
 * SDMA queue's engine is preempted with the copy's remaining time.
 * Invariant: nsaved + running <= num_cu per queue (a queue with saved
 * workgroups launches nothing new), so ks->saved never overflows.
 */
static void ks_save_locked(struct ks_gpu *g, struct queue *only, u64 now)
{
	struct queue *q;
	u32 i;

	ks_finish_locked(g, now);	/* what is done is not saved */
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		struct ks_queue *ks = &q->ks;

		if (only && q != only)
			continue;
		if (ks->running || ks->sdma_busy) {
			ks->preemptions++;
			atomic64_inc(&ks_stats.preemptions);
			if (!ks->sdma) {
				ks->acct.hit = true;
				ks->acct.hits++;
			}
		}
		if (ks->sdma_busy) {
			ks->sdma_left_ns = ks->sdma_end_ns - now;
			ks->busy_ns += now - ks->sdma_start_ns;
			ks->sdma_busy = false;
			ks->saves++;
		}
	}
	for (i = 0; i < ks_param.num_cu; i++)
		if (g->cu[i].q && (!only || g->cu[i].q == only))
			ks_save_cu_locked(g, i, now);
}

static_assert(sizeof(struct kfdsim_barrier_packet) == sizeof(struct kfdsim_packet));
static_assert(offsetof(struct kfdsim_barrier_packet, dep_signal) == 8);
static_assert(offsetof(struct kfdsim_barrier_packet, completion_signal) == 56);

/* Kernel address of the signal at user address @uva of @q's signal area, or NULL. */
static u64 *ks_signal_locked(struct queue *q, u64 uva)
{
	struct ks_queue *ks = &q->ks;

	if (uva >= ks->sig_uva && uva + 8 <= ks->sig_uva + ks->sig_size && !(uva & 7))
		return ks->sig_map + (uva - ks->sig_uva);
	return NULL;
}

/*
 * Whether the dependencies of the barrier packet at @id are satisfied: each
 * used dep_signal (non-zero address) is once its signal is non-zero; AND
 * needs all of them, OR one (or none used, as AQL).  A dependency outside
 * the signal area is warned about and counts as satisfied, so that nothing
 * waits for ever.  Re-checked on every poll while the queue waits.
 */
static bool ks_deps_met_locked(struct queue *q, struct kfdsim_barrier_packet *bp, u16 type,
			       u64 id)
{
	bool all = true, any = false, used = false;
	int i;

	for (i = 0; i < ARRAY_SIZE(bp->dep_signal); i++) {
		u64 dep = READ_ONCE(bp->dep_signal[i]);
		u64 *sig;
		bool met;

		if (!dep)
			continue;
		used = true;
		sig = ks_signal_locked(q, dep);
		if (sig) {
			met = READ_ONCE(*sig) != 0;
		} else {
			pr_warn_ratelimited("queue %u packet %llu: dependency signal outside the signal area, satisfied\n",
					    q->properties.queue_id, id);
			met = true;
		}
		all &= met;
		any |= met;
	}
	return type == KFDSIM_PKT_BARRIER_AND ? all : any || !used;
}

/*
 * Real AQL (queues of /dev/kfd): hsa_kernel_dispatch_packet_t and
 * hsa_barrier_and/or_packet_t, 64 bytes like struct kfdsim_packet.  Header
 * bits 0-7 are the type, bit 8 the barrier bit.
 */
#define KS_AQL_TYPE_VENDOR 0
#define KS_AQL_TYPE_INVALID 1
#define KS_AQL_TYPE_DISPATCH 2
#define KS_AQL_TYPE_BARRIER_AND 3
#define KS_AQL_TYPE_BARRIER_OR 5
#define KS_AQL_BARRIER_BIT BIT(8)

struct ks_aql_packet {
	u16 header;
	u16 setup;
	u16 workgroup_size[3];
	u16 reserved0;
	u32 grid_size[3];
	u32 private_segment_size;
	u32 group_segment_size;
	u64 kernel_object;
	u64 kernarg_address;	/* barrier: dep_signal[0..4] span 8..47 */
	u64 reserved2;
	u64 completion_signal;
};

static_assert(sizeof(struct ks_aql_packet) == sizeof(struct kfdsim_packet));
static_assert(offsetof(struct ks_aql_packet, kernarg_address) == 40);
static_assert(offsetof(struct ks_aql_packet, completion_signal) == 56);

/*
 * An AQL barrier's dependencies: a used dep_signal (non-zero handle) is
 * satisfied when its amd_signal_t's value is 0; AND needs all, OR one (or
 * none used).  An unmapped signal is warned about and counts as satisfied.
 */
static bool ks_aql_deps_met_locked(struct queue *q, const u64 *dep, bool and)
{
	struct kfd_process *p = q->process;
	bool all = true, any = false, used = false;
	int i;

	spin_lock(&p->ks_vm_lock);
	for (i = 0; i < 5; i++) {
		u64 h = READ_ONCE(dep[i]), v = 0;
		bool met;

		if (!h)
			continue;
		used = true;
		met = !ks_vm_read64_locked(p, h + KS_AMD_SIGNAL_VALUE, &v) || !v;
		all &= met;
		any |= met;
	}
	spin_unlock(&p->ks_vm_lock);
	return and ? all : any || !used;
}

/* ceil(grid / workgroup) over the three dimensions (a 0 size counts as 1) */
static u64 ks_aql_workgroups(const struct ks_aql_packet *pkt)
{
	u64 n = 1;
	int i;

	for (i = 0; i < 3; i++) {
		u32 grid = READ_ONCE(pkt->grid_size[i]) ?: 1;
		u16 wg = READ_ONCE(pkt->workgroup_size[i]) ?: 1;

		n *= DIV_ROUND_UP(grid, wg);
	}
	return n;
}

/* AMD vendor-specific packet formats (amd_hsa_queue.h AMD_AQL_FORMAT_*) */
#define KS_AQL_VENDOR_PM4_IB 1

/*
 * A dispatch whose first kernarg is no duration: ROCr's blit kernels (the
 * code-object loader's copies into VRAM, and its copies and fills with
 * HSA_ENABLE_SDMA=0) and ROCclr's copy and fill kernels (HIP's hipMemcpy
 * and hipMemset paths) all take a buffer address first.  Each workgroup of
 * one costs this much modelled time; nothing is copied.
 */
#define KS_UTILITY_WG_NS 2000

/*
 * ROCr 5.2.3's own blit kernels (amd_gpu_agent.cpp AssembleShader): an
 * amd_kernel_code_t whose version and machine fields (bytes 0..15) are
 * never set, kernel_code_entry_byte_offset 256, and compute_pgm_rsrc1's
 * granulated SGPR/VGPR counts of its CopyAligned, CopyMisaligned and Fill
 * shaders for gfx9.  Their kernargs (amd_blit_kernel.h KernelArgs) give the
 * whole range: a copy is one memmove from phase 1's start to the last
 * phase's end, a fill u32 stores.  hipcc's kernel descriptors have their
 * kernarg size at 8, never all zero with arguments.
 */
#define KS_BLIT_MAX_BYTES SZ_4M
enum ks_blit { KS_BLIT_NONE, KS_BLIT_COPY_ALIGNED, KS_BLIT_COPY_MISALIGNED, KS_BLIT_FILL };

static enum ks_blit ks_blit_kind_locked(struct kfd_process *p, u64 kernel_object)
{
	const u64 *kd = ks_vm_kaddr_locked(p, kernel_object, 64);
	u32 rsrc1, sgpr, vgpr;

	if (!kd || kd[0] || kd[1] || kd[2] != 256)
		return KS_BLIT_NONE;
	rsrc1 = (u32)kd[6];
	vgpr = rsrc1 & 0x3f;
	sgpr = (rsrc1 >> 6) & 0xf;
	if (sgpr == 3 && vgpr == 2)
		return KS_BLIT_COPY_ALIGNED;
	if (sgpr == 2 && vgpr == 2)
		return KS_BLIT_COPY_MISALIGNED;
	if (sgpr == 2 && vgpr == 1)
		return KS_BLIT_FILL;
	return KS_BLIT_NONE;
}

/* Do what ROCr's blit kernel at @kind would, through the process's GPU VM. */
static void ks_blit_locked(struct queue *q, enum ks_blit kind, u64 ka)
{
	struct kfd_process *p = q->process;
	const u64 *a = ks_vm_kaddr_locked(p, ka, 80);
	u64 src, dst, len;
	void *s, *d;

	if (!a)
		return;
	src = a[0];
	dst = a[1];
	if (kind == KS_BLIT_FILL) {
		len = a[2] - a[0];	/* phase1_dst_start .. phase2_dst_end */
		dst = a[0];
	} else {
		/* phase4 (aligned) or phase2 (misaligned) src end */
		len = (kind == KS_BLIT_COPY_ALIGNED ? a[8] : a[4]) - src;
	}
	if (!len || len > KS_BLIT_MAX_BYTES) {
		pr_warn_ratelimited("queue %u: ROCr blit of %llu bytes not done\n",
				    q->properties.queue_id, len);
		return;
	}
	d = ks_vm_bytes_locked(p, dst, len);
	s = kind == KS_BLIT_FILL ? NULL : ks_vm_bytes_locked(p, src, len);
	if (!d || (kind != KS_BLIT_FILL && !s)) {
		pr_warn_ratelimited("queue %u: ROCr blit 0x%llx -> 0x%llx (%llu bytes) outside the GPU VM\n",
				    q->properties.queue_id, src, dst, len);
		return;
	}
	if (kind == KS_BLIT_FILL) {
		u32 v = (u32)a[3], *w = d;
		u64 i;

		for (i = 0; i < len / 4; i++)
			w[i] = v;
	} else {
		memmove(d, s, len);
	}
	q->ks.blit_bytes += len;
}

/*
 * The project's own `work` kernel (test/hip/hip-work.hip: work(ns, magic,
 * out)) and the test clients' packets: the first kernarg is the duration
 * per workgroup.  Known by its symbol, or by the magic at kernarg 8.
 */
#define KS_WORK_SYMBOL "_Z4workyyPi"
#define KS_WORK_MAGIC 0x6770726565ULL

static bool ks_is_work_locked(struct kfd_process *p, const char *name, u64 ka)
{
	u64 magic = 0;

	return !strcmp(name, KS_WORK_SYMBOL) ||
	       (ka + 8 > ka && ks_vm_read64_locked(p, ka + 8, &magic) && magic == KS_WORK_MAGIC);
}

/*
 * Fetch the AQL packet at the head into @r.  A dispatch's workgroup count is
 * the grid divided by the workgroup size; its modelled time per workgroup
 * is the first 8 bytes at kernarg_address, in ns, unless they are an
 * address of GPU-mapped memory of the process: then it is a utility
 * dispatch (a copy or fill) of KS_UTILITY_WG_NS per workgroup.  A kernel
 * whose name the loaded code object gives (kname.c), other than `work`,
 * costs what debugfs costs says for it (*modelled*), else the default of a
 * named kernel; debugfs kernels counts each name's dispatches and time.  A
 * vendor-specific packet (ROCr's PM4 indirect buffer: a cache invalidate
 * after each code-object load, that it spins on) completes in order as a
 * no-op.  Return: false to stop (not written yet, or a barrier waiting on
 * its dependencies).
 */
static bool ks_fetch_aql_locked(struct queue *q, struct ks_aql_packet *pkt,
				struct ks_packet_run *r)
{
	struct kfd_process *p = q->process;
	/* Pairs with the producer's release store of the header: body first. */
	u16 header = smp_load_acquire(&pkt->header);
	u64 ns = 0, wg = 0, ka;
	u8 type = header & 0xff;
	const char *name = NULL;
	bool dispatch = false;

	if (type == KS_AQL_TYPE_BARRIER_AND || type == KS_AQL_TYPE_BARRIER_OR) {
		if (!ks_aql_deps_met_locked(q, (const u64 *)((u8 *)pkt + 8),
					    type == KS_AQL_TYPE_BARRIER_AND))
			return false;
		q->ks.aql_barriers++;
		atomic64_inc(&ks_stats.aql_barriers);
	} else if (type == KS_AQL_TYPE_VENDOR) {
		/* amd_aql_pm4_ib_packet_t: ven_hdr (the format) after the header */
		if (READ_ONCE(pkt->setup) != KS_AQL_VENDOR_PM4_IB)
			pr_warn_ratelimited("queue %u packet %llu: vendor packet format %u completed as a no-op\n",
					    q->properties.queue_id, q->ks.fetched,
					    READ_ONCE(pkt->setup));
		q->ks.aql_vendor++;
		atomic64_inc(&ks_stats.aql_vendor);
	} else if (type == KS_AQL_TYPE_DISPATCH) {
		enum ks_blit kind;
		bool utility;
		u64 ko;

		wg = ks_aql_workgroups(pkt);
		ka = READ_ONCE(pkt->kernarg_address);
		spin_lock(&p->ks_vm_lock);
		if (!ks_vm_read64_locked(p, ka, &ns))
			pr_warn_ratelimited("queue %u packet %llu: kernarg 0x%llx not mapped to the GPU, 0 ns\n",
					    q->properties.queue_id, q->ks.fetched, ka);
		/*
		 * A blit kernel runs whatever its first kernarg: one whose
		 * source is unmapped faults on a GPU, so it is logged here too
		 * (by ks_blit_locked()), not taken for a timed kernel.
		 */
		ko = READ_ONCE(pkt->kernel_object);
		kind = ks_blit_kind_locked(p, ko);
		utility = kind != KS_BLIT_NONE || (ns && ks_vm_mapped_locked(p, ns));
		if (kind != KS_BLIT_NONE) {
			ks_blit_locked(q, kind, ka);
			name = "(rocr-blit)";
		} else {
			name = ks_kname_locked(p, ko);
		}
		/*
		 * A named kernel other than `work` has no duration in its
		 * kernargs: the cost table's row, else the default.  One whose
		 * first kernarg is an address stays a utility dispatch unless
		 * a row names it.
		 */
		if (name && kind == KS_BLIT_NONE && !ks_is_work_locked(p, name, ka) &&
		    ks_kname_cost_locked(p, name, ka, &ns))
			utility = false;
		spin_unlock(&p->ks_vm_lock);
		q->ks.aql_dispatches++;
		atomic64_inc(&ks_stats.aql_dispatches);
		dispatch = true;
		if (utility) {
			ns = KS_UTILITY_WG_NS;
			q->ks.aql_utility++;
			atomic64_inc(&ks_stats.aql_utility);
		}
		if (wg > KFDSIM_MAX_WORKGROUPS || ns > KFDSIM_MAX_WG_NS) {
			pr_warn_ratelimited("queue %u packet %llu: %llu workgroups of %llu ns clamped\n",
					    q->properties.queue_id, q->ks.fetched, wg, ns);
			wg = min_t(u64, wg, KFDSIM_MAX_WORKGROUPS);
			ns = min_t(u64, ns, KFDSIM_MAX_WG_NS);
		}
	} else {
		return false;	/* INVALID: not written yet */
	}
	memset(r, 0, sizeof(*r));
	r->id = q->ks.fetched;
	r->wg_total = wg;
	r->ns_per_wg = min_t(u64, ns * ks_param.time_scale, KFDSIM_MAX_WG_NS);
	r->barrier = header & KS_AQL_BARRIER_BIT;
	r->signal_va = READ_ONCE(pkt->completion_signal);
	if (dispatch)
		ks_kname_account(name ?: "?", r->wg_total * r->ns_per_wg);
	/* Consumed: the slot may be reused */
	WRITE_ONCE(pkt->header, (header & ~0xff) | KS_AQL_TYPE_INVALID);
	return true;
}

/*
 * Fetch ready packets of @q in order, up to KS_MAX_INFLIGHT ahead.  A barrier
 * packet whose dependencies are not satisfied stops the fetch: it stays at
 * the head, header intact (the CP waits on it), and is re-checked at the
 * next poll.  A satisfied one is fetched as a packet without workgroups: it
 * retires in order, after the packets before it.
 */
static void ks_fetch_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;
	/* Pairs with the producer's release store of the write index. */
	u64 wptr = smp_load_acquire(ks->wptr);
	bool barriers = false;

	if (ks->sdma4)
		return;	/* sdma.c reads its own ring */

	while (ks->fetched < wptr && ks->fetched - ks->retired < KS_MAX_INFLIGHT) {
		struct kfdsim_packet *pkt = (struct kfdsim_packet *)ks->ring_map +
					    (ks->fetched % ks->ring_slots);
		struct ks_packet_run *r = &ks->inflight[ks->fetched % KS_MAX_INFLIGHT];
		u64 sig, ns;
		u16 flags, type;
		u32 wg;

		if (ks->aql) {
			if (!ks_fetch_aql_locked(q, (struct ks_aql_packet *)pkt, r))
				break;
			barriers |= !r->wg_total;
			ks->fetched++;
			if (ks_early_rptr)
				ks_publish_rptr_locked(ks);
			continue;
		}
		/* The header is released last: the body is valid after this. */
		type = smp_load_acquire(&pkt->header);
		if (type == KFDSIM_PKT_BARRIER_AND || type == KFDSIM_PKT_BARRIER_OR) {
			struct kfdsim_barrier_packet *bp = (struct kfdsim_barrier_packet *)pkt;

			if (!ks_deps_met_locked(q, bp, type, ks->fetched))
				break;	/* the CP waits on it, at the head */
			wg = 0;
			ns = 0;
			sig = READ_ONCE(bp->completion_signal);
			barriers = true;
		} else if (type == KFDSIM_PKT_DISPATCH) {
			wg = READ_ONCE(pkt->workgroups);
			ns = READ_ONCE(pkt->ns_per_workgroup);
			sig = READ_ONCE(pkt->completion_signal);
			if (!wg || wg > KFDSIM_MAX_WORKGROUPS || ns > KFDSIM_MAX_WG_NS) {
				pr_warn_ratelimited("queue %u packet %llu: %u workgroups of %llu ns clamped\n",
						    q->properties.queue_id, ks->fetched, wg, ns);
				wg = clamp_t(u32, wg, 1, KFDSIM_MAX_WORKGROUPS);
				ns = min_t(u64, ns, KFDSIM_MAX_WG_NS);
			}
		} else {
			break;	/* reserved but not written yet: wait, like the CP */
		}
		flags = READ_ONCE(pkt->flags);
		if (flags & ~(KFDSIM_PKT_F_BARRIER | KFDSIM_PKT_F_NOPREEMPT))
			pr_warn_ratelimited("queue %u packet %llu: unknown flags %#x ignored\n",
					    q->properties.queue_id, ks->fetched, flags);
		memset(r, 0, sizeof(*r));
		r->id = ks->fetched;
		r->wg_total = wg;
		/* time_scale: the packet's modelled time, like every other, xK. */
		r->ns_per_wg = min_t(u64, ns * ks_param.time_scale, KFDSIM_MAX_WG_NS);
		r->barrier = flags & KFDSIM_PKT_F_BARRIER;
		r->nopreempt = flags & KFDSIM_PKT_F_NOPREEMPT;
		r->signal = ks_signal_locked(q, sig);
		if (!r->signal && sig)
			pr_warn_ratelimited("queue %u packet %llu: signal outside the signal area\n",
					    q->properties.queue_id, ks->fetched);
		/* Consumed: the slot may be reused (AQL sets the header INVALID). */
		WRITE_ONCE(pkt->header, KFDSIM_PKT_INVALID);
		ks->fetched++;
		if (ks_early_rptr)
			ks_publish_rptr_locked(ks);
	}
	/* A barrier packet with every earlier one complete is complete now. */
	if (barriers)
		ks_retire_locked(q);
}

/* Next workgroup of @q to launch: a saved one first, else a fresh one. */
static bool ks_next_wg_locked(struct queue *q, u32 *slot, u64 *ns)
{
	struct ks_queue *ks = &q->ks;
	u64 id;

	if (ks->nsaved) {
		ks->nsaved--;
		*slot = ks->saved[ks->nsaved].slot;
		*ns = ks->saved[ks->nsaved].remaining_ns +
		      (u64)ks_param.cwsr_restore_us * NSEC_PER_USEC;
		ks->restores++;
		atomic64_inc(&ks_stats.cwsr_restores);
		return true;
	}
	for (id = ks->retired; id < ks->fetched; id++) {
		struct ks_packet_run *r = &ks->inflight[id % KS_MAX_INFLIGHT];

		/* A barrier packet (and all after it) waits for the earlier ones. */
		if (r->barrier && id != ks->retired)
			break;
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
	for (id = ks->retired; id < ks->fetched; id++) {
		struct ks_packet_run *r = &ks->inflight[id % KS_MAX_INFLIGHT];

		if (r->barrier && id != ks->retired)
			break;
		if (r->wg_launched < r->wg_total)
			return true;
	}
	return false;
}

/*
 * Accounting (debugfs "acct"): a compute queue is busy from the CP's first
 * sight of its work (write index ahead of the read index, or waves saved or
 * running) until its last packet retired.  Every state change of the CP
 * model happens under g->lock after ks_acct_locked(), so the state seen
 * there held since the last call; only the end of a runlist stall
 * (stall_until) falls between calls and splits the interval.  The period's
 * categories must sum to its length (else acct_mismatches counts it).
 */
static const char *const ks_acct_names[KS_ACCT_N] = {
	[KS_ACCT_FETCH] = "fetch",
	[KS_ACCT_DETECT] = "detect",
	[KS_ACCT_CU_WAIT] = "cu_wait",
	[KS_ACCT_CWSR_SAVE] = "cwsr_save",
	[KS_ACCT_REMAP_PREEMPT] = "remap_preempt",
	[KS_ACCT_REMAP_WAIT] = "remap_wait",
	[KS_ACCT_UNMAPPED] = "unmapped",
	[KS_ACCT_SLICED] = "sliced",
	[KS_ACCT_RUN] = "run",
	[KS_ACCT_CP_LATE] = "cp_late",
};

static bool ks_acct_busy_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;

	return READ_ONCE(*ks->wptr) != ks->retired || ks->nsaved || ks->running;
}

/*
 * What @q (busy) is waiting for at @t, and until when at most (*until): a
 * runlist stall, its workgroups' or a context save's end are timed events
 * the CP acts on only at its next step; between the two the queue waits for
 * the CP (cp_late: the emulator's wake-up latency).
 */
static enum ks_acct_cat ks_acct_state_locked(struct ks_gpu *g, struct queue *q, u64 t,
					     u64 *until)
{
	bool free_cu = false;
	u64 end = 0, save = U64_MAX;
	u32 i;

	*until = U64_MAX;
	if (t < g->stall_until) {
		*until = g->stall_until;
		return q->ks.acct.hit ? KS_ACCT_REMAP_PREEMPT : KS_ACCT_REMAP_WAIT;
	}
	if (!ks_mapped(g, q))
		return KS_ACCT_UNMAPPED;
	if (!ks_runnable(g, q))
		return KS_ACCT_SLICED;
	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &g->cu[i];

		if (cu->q == q) {
			end = max(end, cu->end_ns);
		} else if (!cu->q && ks_cu_allowed(q, i)) {
			if (cu->free_at > t)
				save = min(save, cu->free_at);
			else
				free_cu = true;
		}
	}
	if (q->ks.running) {
		*until = end;
		return end > t ? KS_ACCT_RUN : KS_ACCT_CP_LATE;
	}
	if (!ks_has_work_locked(q))
		return KS_ACCT_FETCH;
	if (free_cu)
		return KS_ACCT_CP_LATE;
	if (save != U64_MAX) {
		*until = save;
		return KS_ACCT_CWSR_SAVE;
	}
	return q->ks.acct.parked ? KS_ACCT_CU_WAIT : KS_ACCT_DETECT;
}

static void ks_acct_add(struct ks_acct *a, enum ks_acct_cat c, u64 ns)
{
	a->ns[c] += ns;
	a->period_ns += ns;
}

static void ks_acct_close(struct ks_acct *a, u64 now)
{
	u64 len = now - a->start_ns;

	a->total_ns += len;
	a->requests++;
	atomic64_inc(&ks_stats.acct_periods);
	if (a->period_ns != len) {
		atomic64_inc(&ks_stats.acct_mismatches);
		pr_warn_ratelimited("acct: a busy period of %llu ns has categories summing to %llu ns\n",
				    len, a->period_ns);
	}
	a->start_ns = 0;
	a->hit = false;
}

/*
 * Account @q's time up to @now, then close its busy period, or open one at
 * a CP step (@cp): the hardware's first sight of the work is the CP's poll,
 * whoever else (gpreempt's scan) read the write index first.
 */
static void ks_acct_queue_locked(struct ks_gpu *g, struct queue *q, u64 now, bool cp)
{
	struct ks_acct *a = &q->ks.acct;
	u64 t = a->last_ns;

	if (q->ks.sdma)
		return;
	now = max(now, t);
	while (a->start_ns && now > t) {
		enum ks_acct_cat c;
		u64 until, e;

		c = ks_acct_state_locked(g, q, t, &until);
		/* After a timed event the state is the next one (cp_late). */
		e = c == KS_ACCT_CP_LATE || until <= t ? now : min(now, until);
		ks_acct_add(a, c, e - t);
		t = e;
	}
	a->last_ns = now;
	if (q->ks.running)
		a->hit = false;
	if (ks_acct_busy_locked(q)) {
		if (!a->start_ns && cp) {
			a->start_ns = now;
			a->period_ns = 0;
			a->parked = false;
			a->hit = false;
		}
	} else if (a->start_ns) {
		ks_acct_close(a, now);
	}
}

static void ks_acct_locked(struct ks_gpu *g, u64 now, bool cp)
{
	struct queue *q;

	list_for_each_entry(q, &g->queues, ks.gpu_node)
		ks_acct_queue_locked(g, q, now, cp);
}

/* A queue's accounting with what names it, kept after it is destroyed. */
struct ks_acct_rec {
	u32 dev, pasid, qid, prio;
	pid_t pid;
	char comm[TASK_COMM_LEN];
	u64 preemptions, saves, restores;
	struct ks_acct a;
};

#define KS_ACCT_KEEP 64
static struct ks_acct_rec ks_acct_gone[KS_ACCT_KEEP];	/* the last destroyed queues */
static unsigned int ks_acct_ngone;
static DEFINE_SPINLOCK(ks_acct_gone_lock);	/* inside a g->lock */

static void ks_acct_rec_fill(struct ks_acct_rec *r, struct queue *q)
{
	struct task_struct *t = q->process->lead_thread;

	r->dev = ks_dev_of(q->device)->id;
	r->pasid = q->process->pasid;
	r->qid = q->properties.queue_id;
	r->prio = q->properties.priority;
	r->pid = t ? t->tgid : 0;
	strscpy(r->comm, t ? t->comm : "", sizeof(r->comm));
	r->preemptions = q->ks.preemptions;
	r->saves = q->ks.saves;
	r->restores = q->ks.restores;
	r->a = q->ks.acct;
}

/* @q is destroyed: keep its accounting (compute queues that ran something). */
static void ks_acct_keep_locked(struct queue *q)
{
	if (q->ks.sdma || !q->ks.acct.requests)
		return;
	spin_lock(&ks_acct_gone_lock);
	ks_acct_rec_fill(&ks_acct_gone[ks_acct_ngone % KS_ACCT_KEEP], q);
	ks_acct_ngone++;
	spin_unlock(&ks_acct_gone_lock);
}

static void ks_acct_line(struct seq_file *m, const struct ks_acct_rec *r, bool live)
{
	const struct ks_acct *a = &r->a;
	u64 sum = 0;
	int c;

	for (c = 0; c < KS_ACCT_N; c++)
		sum += a->ns[c];
	seq_printf(m, "acct live=%d dev=%u pasid=%u qid=%u pid=%d comm=%s prio=%u requests=%llu total_ns=%llu open_ns=%llu sum_ns=%llu ideal_ns=%llu",
		   live, r->dev, r->pasid, r->qid, r->pid, r->comm, r->prio, a->requests,
		   a->total_ns, a->start_ns ? a->last_ns - a->start_ns : 0, sum, a->ideal_ns);
	for (c = 0; c < KS_ACCT_N; c++)
		seq_printf(m, " %s_ns=%llu", ks_acct_names[c], a->ns[c]);
	seq_printf(m, " remap_hits=%llu preemptions=%llu saves=%llu restores=%llu\n",
		   a->hits, r->preemptions, r->saves, r->restores);
}

/**
 * ks_gpu_acct_show() - debugfs "acct": the accounting of device @d's live queues
 * @d: device
 * @m: seq file
 */
void ks_gpu_acct_show(struct ks_device *d, struct seq_file *m)
{
	struct ks_gpu *g = d->gpu;
	struct ks_acct_rec r;
	struct queue *q;

	spin_lock(&g->lock);
	ks_acct_locked(g, ks_now(), false);
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		if (q->ks.sdma)
			continue;
		ks_acct_rec_fill(&r, q);
		ks_acct_line(m, &r, true);
	}
	spin_unlock(&g->lock);
}

/**
 * ks_acct_gone_show() - debugfs "acct": the last KS_ACCT_KEEP destroyed queues
 * @m: seq file
 */
void ks_acct_gone_show(struct seq_file *m)
{
	unsigned int i, n;
	struct ks_acct_rec *r = kmalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return;
	spin_lock(&ks_acct_gone_lock);
	n = ks_acct_ngone;
	spin_unlock(&ks_acct_gone_lock);
	for (i = n > KS_ACCT_KEEP ? n - KS_ACCT_KEEP : 0; i < n; i++) {
		spin_lock(&ks_acct_gone_lock);
		*r = ks_acct_gone[i % KS_ACCT_KEEP];
		spin_unlock(&ks_acct_gone_lock);
		ks_acct_line(m, r, false);
	}
	kfree(r);
}

/*
 * A park: a queue unmapped (HWS runlist change after one was marked
 * unmapped, MES remove, unmap of the whole runlist).  What waits for CUs
 * from now on in a busy period is not waiting for detection.
 */
static void ks_acct_park_locked(struct ks_gpu *g)
{
	struct queue *q;

	list_for_each_entry(q, &g->queues, ks.gpu_node)
		if (q->ks.acct.start_ns)
			q->ks.acct.parked = true;
}

/*
 * Highest-priority runnable queue with work whose CU mask enables CU @cu;
 * round robin within the level.
 */
static struct queue *ks_pick_locked(struct ks_gpu *g, u32 cu)
{
	struct queue *q, *first = NULL, *after = NULL;
	bool seen_last = !g->rr_last;
	int best = -1;

	list_for_each_entry(q, &g->queues, ks.gpu_node)
		if (!q->ks.sdma && ks_runnable(g, q) && (int)ks_prio(q) > best &&
		    ks_cu_allowed(q, cu) && ks_has_work_locked(q))
			best = ks_prio(q);
	if (best < 0)
		return NULL;
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		if (!q->ks.sdma && ks_runnable(g, q) && ks_prio(q) == best &&
		    ks_cu_allowed(q, cu) && ks_has_work_locked(q)) {
			if (!first)
				first = q;
			if (seen_last && !after)
				after = q;
		}
		if (q == g->rr_last)
			seen_last = true;
	}
	return after ?: first;
}

/* Each SDMA queue copies its oldest packet on its own engine. */
static void ks_dispatch_sdma_locked(struct ks_gpu *g, u64 now)
{
	struct queue *q;

	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		struct ks_queue *ks = &q->ks;
		struct ks_packet_run *r;

		if (ks->sdma4 && ks_runnable(g, q))
			ks_sdma_run_locked(q, now);
		if (!ks->sdma || ks->sdma4 || ks->sdma_busy || !ks_runnable(g, q) ||
		    ks->retired == ks->fetched)
			continue;
		r = &ks->inflight[ks->retired % KS_MAX_INFLIGHT];
		r->wg_launched = r->wg_total;
		ks->sdma_start_ns = now;
		if (!ks->first_start_ns)
			ks->first_start_ns = now;
		ks->sdma_end_ns = now + (ks->sdma_left_ns ?: (u64)r->wg_total * r->ns_per_wg);
		if (ks->sdma_left_ns)
			ks->restores++;
		ks->sdma_left_ns = 0;
		ks->sdma_busy = true;
	}
}

/* Workgroups @q has to run: saved ones and unlaunched ones up to a barrier. */
static u64 ks_pending_wgs_locked(struct queue *q)
{
	struct ks_queue *ks = &q->ks;
	u64 id, n = ks->nsaved;

	for (id = ks->retired; id < ks->fetched; id++) {
		struct ks_packet_run *r = &ks->inflight[id % KS_MAX_INFLIGHT];

		if (r->barrier && id != ks->retired)
			break;
		n += r->wg_total - r->wg_launched;
	}
	return n;
}

/*
 * sched=oracle, after the free CUs are given out: from the highest level
 * down, each queue's remaining workgroups claim the CUs already being saved
 * that its mask allows, then CWSR-save the workgroups of the lowest levels
 * below it, one CU per workgroup.  The next step gives the saved CUs to the
 * highest level waiting, so a queue's work starts cwsr_save_us after the CP
 * fetched it, with no detection and no runlist change.
 */
static void ks_oracle_preempt_locked(struct ks_gpu *g, u64 now)
{
	struct queue *q;
	int level;
	u32 i;

	bitmap_zero(g->claimed, ks_param.num_cu);
	for (level = KS_MAX_LEVEL; level > 0; level--) {
		list_for_each_entry(q, &g->queues, ks.gpu_node) {
			u64 need;

			if (q->ks.sdma || !ks_runnable(g, q) || ks_prio(q) != level)
				continue;
			need = ks_pending_wgs_locked(q);
			for (i = 0; need && i < ks_param.num_cu; i++) {
				struct ks_cu *cu = &g->cu[i];

				if (!cu->q && cu->free_at > now && !test_bit(i, g->claimed) &&
				    ks_cu_allowed(q, i)) {
					__set_bit(i, g->claimed);
					need--;
				}
			}
			while (need) {
				int victim = -1, vprio = level;

				for (i = 0; i < ks_param.num_cu; i++) {
					struct ks_cu *cu = &g->cu[i];

					if (cu->q && !test_bit(i, g->claimed) &&
					    !cu->q->ks.inflight[cu->slot].nopreempt &&
					    (int)ks_prio(cu->q) < vprio && ks_cu_allowed(q, i)) {
						vprio = ks_prio(cu->q);
						victim = i;
					}
				}
				if (victim < 0)
					break;
				ks_save_cu_locked(g, victim, now);
				__set_bit(victim, g->claimed);
				atomic64_inc(&ks_stats.oracle_preemptions);
				need--;
			}
		}
	}
}

static void ks_dispatch_locked(struct ks_gpu *g, u64 now)
{
	u32 i;

	ks_dispatch_sdma_locked(g, now);

	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &g->cu[i];
		struct queue *q;
		u64 ns;

		if (cu->q || cu->free_at > now)
			continue;
		q = ks_pick_locked(g, i);
		if (!q || !ks_next_wg_locked(q, &cu->slot, &ns))
			continue;	/* another CU may be in a waiting queue's mask */
		cu->q = q;
		cu->start_ns = now;
		cu->end_ns = now + ns;
		if (!q->ks.inflight[cu->slot].start_ns)
			q->ks.inflight[cu->slot].start_ns = now;
		if (!q->ks.first_start_ns)
			q->ks.first_start_ns = now;
		q->ks.running++;
		q->ks.running_max = max(q->ks.running_max, q->ks.running);
		g->rr_last = q;
	}
	if (ks_param.oracle)
		ks_oracle_preempt_locked(g, now);
}

/* A slice has a queue with work (fetched, saved or running). */
static bool ks_slice_busy_locked(struct ks_gpu *g, u32 slice)
{
	struct queue *q;

	list_for_each_entry(q, &g->queues, ks.gpu_node)
		if (ks_mapped(g, q) && q->ks.slice == slice &&
		    (ks_has_work_locked(q) || q->ks.running || q->ks.sdma_busy ||
		     READ_ONCE(*q->ks.wptr) != q->ks.fetched))
			return true;
	return false;
}

/*
 * An oversubscribed runlist's quantum is over: the HWS preempts the slice
 * that ran (CWSR: its waves are saved, as at any preemption) and runs the
 * next for process_quantum (pm_v9.c:49 sets 10 in every MAP_PROCESS; its
 * unit is the firmware's, not in KFD: quantum_us, 1 ms by default, is an
 * assumption).  With slice_idle (the default) a slice takes its quantum
 * even with nothing to run: the firmware's rule for that is not in KFD,
 * and a parked process still has its MAP_PROCESS there.
 */
static void ks_next_slice_locked(struct ks_gpu *g, u64 now)
{
	u32 i, next = g->cur_slice;

	for (i = 0; i < g->nslices; i++) {
		next = (next + 1) % g->nslices;
		if (ks_param.slice_idle || ks_slice_busy_locked(g, next))
			break;
	}
	g->slice_end = now + (u64)ks_param.quantum_us * NSEC_PER_USEC;
	if (next == g->cur_slice)
		return;
	ks_save_locked(g, NULL, now);
	g->cur_slice = next;
	atomic64_inc(&ks_stats.hws_slices);
}

/*
 * One CP step.  Returns the time of the next timed event (U64_MAX: none)
 * and whether some queue must be polled for new work.
 */
static u64 ks_cp_step(struct ks_gpu *g, bool *poll)
{
	u64 now, next = U64_MAX;
	struct queue *q;
	u32 i;

	*poll = false;
	spin_lock(&g->lock);
	/*
	 * The time under the lock: one read before it would start this
	 * step's workgroups in the past of whoever held it, whose accounting
	 * (a runlist mark, a debugfs read) had already passed that time, so
	 * part of their run would be counted as waiting (sim-acct once saw
	 * 838 us less run than the service time).
	 */
	now = ks_now();
	ks_acct_locked(g, now, true);
	ks_finish_locked(g, now);
	if (g->nslices > 1 && now >= g->stall_until && now >= g->slice_end)
		ks_next_slice_locked(g, now);
	if (now >= g->stall_until) {
		list_for_each_entry(q, &g->queues, ks.gpu_node) {
			if (ks_runnable(g, q)) {
				ks_fetch_locked(q);
				*poll = true;
			}
		}
		ks_dispatch_locked(g, now);
	} else {
		next = g->stall_until;
	}
	ks_acct_locked(g, now, true);	/* periods that began or ended in this step */
	for (i = 0; i < ks_param.num_cu; i++) {
		struct ks_cu *cu = &g->cu[i];

		if (cu->q)
			next = min(next, cu->end_ns);
		else if (cu->free_at > now)
			next = min(next, cu->free_at);
	}
	list_for_each_entry(q, &g->queues, ks.gpu_node)
		if (q->ks.sdma_busy)
			next = min(next, q->ks.sdma_end_ns);
	if (g->nslices > 1)
		next = min(next, max(g->slice_end, g->stall_until));
	spin_unlock(&g->lock);
	return next;
}

static int ks_cp_fn(void *data)
{
	struct ks_gpu *g = data;

	for (;;) {
		u64 poll_ns = (u64)ks_param.poll_us * NSEC_PER_USEC;
		u64 next, now, wait;
		bool poll;
		ktime_t t;

		/* State first: a wake-up from here on is not lost. */
		set_current_state(TASK_IDLE);
		if (kthread_should_stop())
			break;
		next = ks_cp_step(g, &poll);
		now = ks_now();
		if (next <= now) {
			__set_current_state(TASK_RUNNING);
			cond_resched();
			continue;
		}
		wait = next - now;
		if (poll)
			wait = min(wait, poll_ns);
		if (next == U64_MAX && !poll) {
			schedule();	/* nothing mapped, nothing running */
		} else {
			t = ns_to_ktime(wait);
			schedule_hrtimeout_range(&t, min_t(u64, wait / 4, 10 * NSEC_PER_USEC),
						 HRTIMER_MODE_REL);
		}
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static void ks_kick(struct ks_gpu *g)
{
	wake_up_process(g->cp);
}

/**
 * ks_gpu_add_queue() - a queue exists on the device (not mapped yet)
 * @q: queue with pinned memory
 */
void ks_gpu_add_queue(struct queue *q)
{
	struct ks_gpu *g = ks_gpu_of(q);
	int level = ks_param.oracle ? ks_oracle_level(q->process->lead_thread) : -1;

	q->ks.oracle_level = level;
	q->ks.fetched = READ_ONCE(*q->ks.rptr);
	q->ks.retired = q->ks.fetched;
	q->ks.sdma = q->properties.type == KFD_QUEUE_TYPE_SDMA ||
		    q->properties.type == KFD_QUEUE_TYPE_SDMA_XGMI;
	q->ks.sdma_rptr = q->ks.fetched;
	spin_lock(&g->lock);
	q->ks.acct.last_ns = ks_now();
	list_add_tail(&q->ks.gpu_node, &g->queues);
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_oracle_refresh() - sched=oracle: every queue takes its rule level again
 */
void ks_gpu_oracle_refresh(void)
{
	unsigned int d;
	struct queue *q;

	if (!ks_param.oracle)
		return;
	for (d = 0; d < ks_param.ndev; d++) {
		struct ks_gpu *g = ks_devs[d].gpu;

		spin_lock(&g->lock);
		list_for_each_entry(q, &g->queues, ks.gpu_node)
			q->ks.oracle_level = ks_oracle_level(q->process->lead_thread);
		spin_unlock(&g->lock);
		ks_kick(g);
	}
}

/**
 * ks_gpu_count_active() - the active queues of processes registered on @d
 * @d: device, its dqm lock held (queues join and leave under it)
 * @cp: out: of them, the compute queues (active_cp_queue_count's share)
 *
 * Return: how many queues on the device have is_active set.
 */
unsigned int ks_gpu_count_active(struct ks_device *d, unsigned int *cp)
{
	struct ks_gpu *g = d->gpu;
	unsigned int n = 0;
	struct queue *q;

	*cp = 0;
	spin_lock(&g->lock);
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		if (!q->properties.is_active)
			continue;
		n++;
		if (q->properties.type == KFD_QUEUE_TYPE_COMPUTE)
			(*cp)++;
	}
	spin_unlock(&g->lock);
	return n;
}

/**
 * ks_gpu_remove_queue() - a queue is destroyed: its in-flight work is dropped
 * @q: queue, already unmapped
 */
void ks_gpu_remove_queue(struct queue *q)
{
	struct ks_gpu *g = ks_gpu_of(q);
	u32 i;

	spin_lock(&g->lock);
	ks_acct_locked(g, ks_now(), false);
	if (q->ks.acct.start_ns)	/* destroyed busy: its work ends here */
		ks_acct_close(&q->ks.acct, q->ks.acct.last_ns);
	ks_acct_keep_locked(q);
	for (i = 0; i < ks_param.num_cu; i++) {
		if (g->cu[i].q == q) {
			g->cu[i].q = NULL;
			atomic64_inc(&ks_stats.workgroups_dropped);
		}
	}
	atomic64_add(q->ks.nsaved, &ks_stats.cwsr_dropped);
	if (g->rr_last == q)
		g->rr_last = NULL;
	q->ks.mapped = false;
	list_del(&q->ks.gpu_node);
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_mes_set() - MES ADD_QUEUE / REMOVE_QUEUE of one queue
 * @q: queue
 * @mapped: add (true) or remove with CWSR (false)
 */
void ks_gpu_mes_set(struct queue *q, bool mapped)
{
	struct ks_gpu *g = ks_gpu_of(q);

	spin_lock(&g->lock);
	ks_acct_locked(g, ks_now(), false);
	if (!mapped)
		ks_acct_park_locked(g);
	if (q->ks.mapped && !mapped)
		ks_save_locked(g, q, ks_now());
	q->ks.mapped = mapped;
	if (mapped)
		q->ks.hw_prio = READ_ONCE(q->properties.priority);
	spin_unlock(&g->lock);
	atomic64_inc(&ks_stats.mes_calls);
	ks_kick(g);
}

/**
 * ks_gpu_hws_mark() - include @q in the next HWS runlist or not
 * @q: queue
 * @mapped: whether it is active
 *
 * Takes effect at the next ks_gpu_hws_execute().
 */
void ks_gpu_hws_mark(struct queue *q, bool mapped)
{
	struct ks_gpu *g = ks_gpu_of(q);

	spin_lock(&g->lock);
	ks_acct_locked(g, ks_now(), false);
	g->park |= q->ks.mapped && !mapped;
	q->ks.mapped = mapped;
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_hws_unmap_all() - unmap_queues_cpsch(): preempt the whole runlist
 * @d: device
 *
 * Every running workgroup is CWSR-saved; nothing runs until the next
 * ks_gpu_hws_execute().
 *
 * Return: true if a runlist was mapped (the caller waits for the fence).
 */
bool ks_gpu_hws_unmap_all(struct ks_device *d)
{
	struct ks_gpu *g = d->gpu;
	bool was;

	spin_lock(&g->lock);
	ks_acct_locked(g, ks_now(), false);
	ks_acct_park_locked(g);
	was = g->runlist_active;
	if (was)
		ks_save_locked(g, NULL, ks_now());
	g->runlist_active = false;
	spin_unlock(&g->lock);
	return was;
}

/*
 * pm_calc_rlib_size() (6.12 pm.c:41-67): a runlist is oversubscribed when
 * the registered processes outnumber max_proc_per_quantum or its active
 * compute queues the HQDs.  The HWS then time-slices it: here, the
 * processes in runlist order (dqm->queues, newest first) are cut into
 * slices of at most max_proc processes and hqds compute queues, and a
 * process without an active queue (all parked) still fills its place.
 * dqm lock and g->lock held.
 */
static void ks_slice_runlist_locked(struct ks_device *d, struct ks_gpu *g)
{
	struct device_queue_manager *dqm = &d->dqm;
	struct kfd_process_device *pdd;
	u32 slice = 0, procs = 0, cpq = 0;
	struct queue *q;

	g->nslices = 1;
	g->cur_slice = 0;
	if (dqm->processes_count <= ks_param.max_proc &&
	    dqm->active_cp_queue_count <= ks_param.hqds) {
		list_for_each_entry(q, &g->queues, ks.gpu_node)
			q->ks.slice = 0;
		return;
	}
	list_for_each_entry(pdd, &dqm->ks_procs, ks_reg) {
		u32 n = 0;

		list_for_each_entry(q, &pdd->qpd.queues_list, list)
			n += q->ks.mapped && !q->ks.sdma;
		if (procs && (procs == ks_param.max_proc || cpq + n > ks_param.hqds)) {
			slice++;
			procs = 0;
			cpq = 0;
		}
		procs++;
		cpq += n;
		list_for_each_entry(q, &pdd->qpd.queues_list, list)
			q->ks.slice = slice;
	}
	g->nslices = slice + 1;
	if (g->nslices > 1)
		atomic64_inc(&ks_stats.oversubscribed_runlists);
}

/**
 * ks_gpu_hws_execute() - execute_queues_cpsch(): unmap all, map the runlist
 * @d: device
 *
 * If a runlist was mapped or is to be mapped, every running workgroup of
 * every queue is CWSR-saved and the device runs nothing for runlist_us.
 *
 * Return: true if that happened (the caller waits runlist_us).
 */
bool ks_gpu_hws_execute(struct ks_device *d)
{
	struct ks_gpu *g = d->gpu;
	bool was, any = false;
	struct queue *q;
	u64 now;

	spin_lock(&g->lock);
	now = ks_now();
	ks_acct_locked(g, now, false);
	if (g->park)
		ks_acct_park_locked(g);
	g->park = false;
	was = g->runlist_active;
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		if (q->ks.mapped)
			q->ks.hw_prio = READ_ONCE(q->properties.priority);
		any |= q->ks.mapped;
	}
	if (was)
		ks_save_locked(g, NULL, now);
	g->runlist_active = any;
	if (was || any)
		g->stall_until = now + (u64)ks_param.runlist_us * NSEC_PER_USEC;
	/* A new runlist runs from its first slice. */
	ks_slice_runlist_locked(d, g);
	g->slice_end = g->stall_until + (u64)ks_param.quantum_us * NSEC_PER_USEC;
	spin_unlock(&g->lock);
	if (!was && !any)
		return false;
	atomic64_inc(&ks_stats.runlist_updates);
	ks_kick(g);
	return true;
}

/**
 * ks_gpu_unsaveable() - the queue whose running wave a preemption cannot save
 * @d: device
 * @only: that queue only (MES remove), or NULL: any mapped queue (HWS unmap)
 *
 * Return: a queue with a KFDSIM_PKT_F_NOPREEMPT workgroup on a CU, or NULL.
 */
struct queue *ks_gpu_unsaveable(struct ks_device *d, struct queue *only)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q = NULL;
	u32 i;

	spin_lock(&g->lock);
	ks_finish_locked(g, ks_now());	/* a wave that has ended is no hang */
	for (i = 0; i < ks_param.num_cu && !q; i++) {
		struct ks_cu *cu = &g->cu[i];

		if (cu->q && (!only || cu->q == only) &&
		    cu->q->ks.inflight[cu->slot].nopreempt)
			q = cu->q;
	}
	spin_unlock(&g->lock);
	return q;
}

/* Drop @q's workgroups, running and saved: a reset killed its waves. */
static void ks_kill_queue_locked(struct ks_gpu *g, struct queue *q)
{
	u32 i, n = q->ks.nsaved;

	for (i = 0; i < ks_param.num_cu; i++) {
		if (g->cu[i].q == q) {
			g->cu[i].q = NULL;
			n++;
		}
	}
	q->ks.running = 0;
	q->ks.nsaved = 0;
	q->ks.mapped = false;
	atomic64_add(n, &ks_stats.workgroups_reset);
}

/**
 * ks_gpu_kill() - a queue reset (hqd_reset) or a GPU reset kills waves
 * @d: device
 * @only: the reset queue, or NULL: every queue of the device (GPU reset)
 *
 * The killed workgroups never complete; their packets never retire.
 */
void ks_gpu_kill(struct ks_device *d, struct queue *only)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q;

	spin_lock(&g->lock);
	ks_acct_locked(g, ks_now(), false);
	list_for_each_entry(q, &g->queues, ks.gpu_node)
		if (!only || q == only)
			ks_kill_queue_locked(g, q);
	if (!only)
		g->runlist_active = false;
	spin_unlock(&g->lock);
	ks_kick(g);
}

/**
 * ks_gpu_flag_reset() - kfd_hws_hang(): every process with a queue on @d
 * gets pdd->has_reset_queue (6.12 dqm.c:154-174)
 * @d: device (dqm lock held)
 */
void ks_gpu_flag_reset(struct ks_device *d)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q;

	spin_lock(&g->lock);
	list_for_each_entry(q, &g->queues, ks.gpu_node)
		WRITE_ONCE(ks_pdd(q->process, q->device)->has_reset_queue, true);
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_reset_evict() - pre_reset: every process with a queue on @d is
 * evicted once more, for ever (6.12 dev.c:948-975)
 * @d: device (dqm lock held)
 * @gen: this reset's generation: each process is counted once
 */
void ks_gpu_reset_evict(struct ks_device *d, u32 gen)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q;

	spin_lock(&g->lock);
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		struct kfd_process_device *pdd = ks_pdd(q->process, q->device);

		if (pdd->ks_reset_gen != gen) {
			pdd->ks_reset_gen = gen;
			pdd->qpd.evicted++;
			atomic_inc(&ks_stats.evicted_refs);
			atomic64_inc(&ks_stats.reset_events);
		}
		q->properties.is_evicted = true;
		/* evict_process_queues_cpsch() keeps the dqm's counters. */
		if (q->properties.is_active) {
			q->properties.is_active = false;
			ks_queue_count(&d->dqm, q, -1);
		}
	}
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_reset_restart() - post_reset: the scheduler maps the active queues
 * again (start_cpsch, 6.12 dev.c:976-1001)
 * @d: device (dqm lock held)
 */
void ks_gpu_reset_restart(struct ks_device *d)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q;

	spin_lock(&g->lock);
	list_for_each_entry(q, &g->queues, ks.gpu_node)
		q->ks.mapped = q->properties.is_active;
	spin_unlock(&g->lock);
	if (!ks_param.mes)
		ks_gpu_hws_execute(d);
	ks_kick(g);
}

/**
 * ks_gpu_reset_show() - debugfs "resets": each queue's reset state
 * @d: device
 * @m: seq file
 */
void ks_gpu_reset_show(struct ks_device *d, struct seq_file *m)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q;

	spin_lock(&g->lock);
	list_for_each_entry(q, &g->queues, ks.gpu_node) {
		struct kfd_process_device *pdd = ks_pdd(q->process, q->device);

		seq_printf(m, "queue pasid=%u qid=%u dev=%u pdd_reset=%d evicted=%u active=%d\n",
			   q->process->pasid, q->properties.queue_id, d->id,
			   READ_ONCE(pdd->has_reset_queue), pdd->qpd.evicted,
			   q->properties.is_active);
	}
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_show() - per-queue debugfs lines of one device
 * @d: device
 * @m: seq file
 */
void ks_gpu_show(struct ks_device *d, struct seq_file *m)
{
	struct ks_gpu *g = d->gpu;
	struct queue *q;

	spin_lock(&g->lock);
	list_for_each_entry(q, &g->queues, ks.gpu_node)
		seq_printf(m, "queue pasid=%u qid=%u prio=%u active=%d evicted=%d suspended=%d mapped=%d rptr=%llu wptr=%llu running=%u saved=%u packets=%llu preemptions=%llu busy_us=%llu percent=%u saves=%llu restores=%llu driver_bufs=%d type=%s busy_ns=%llu first_start_ns=%llu last_end_ns=%llu dev=%u cu_mask_cus=%u se_mask=%08x,%08x,%08x,%08x dispatches=%llu utility=%llu barriers=%llu vendor=%llu blit_bytes=%llu oracle=%d sdma_bytes=%llu sdma_error=%d running_max=%u slice=%u slices=%u\n",
			   q->process->pasid, q->properties.queue_id, q->properties.priority,
			   q->properties.is_active, q->properties.is_evicted,
			   KS_SUSPENDED(q->properties), ks_mapped(g, q), q->ks.retired,
			   READ_ONCE(*q->ks.wptr), q->ks.running, q->ks.nsaved,
			   q->ks.packets_done, q->ks.preemptions, q->ks.busy_ns / 1000,
			   q->properties.queue_percent, q->ks.saves, q->ks.restores,
			   q->ks.nbufs, q->ks.sdma ? "sdma" : "compute", q->ks.busy_ns,
			   q->ks.first_start_ns, q->ks.last_end_ns, d->id, q->ks.cu_mask_cus,
			   q->ks.se_mask[0], q->ks.se_mask[1], q->ks.se_mask[2], q->ks.se_mask[3],
			   q->ks.aql_dispatches, q->ks.aql_utility, q->ks.aql_barriers,
			   q->ks.aql_vendor, q->ks.blit_bytes, q->ks.oracle_level,
			   q->ks.sdma_bytes, q->ks.sdma_error, q->ks.running_max,
			   q->ks.slice, g->nslices);
	spin_unlock(&g->lock);
}

/**
 * ks_gpu_start() - allocate the CUs and start the command processor
 * @d: device
 *
 * Return: 0 or a negative errno.
 */
int ks_gpu_start(struct ks_device *d)
{
	struct ks_gpu *g = kzalloc(sizeof(*g), GFP_KERNEL);
	int ret;

	if (!g)
		return -ENOMEM;
	g->dev = d;
	spin_lock_init(&g->lock);
	INIT_LIST_HEAD(&g->queues);
	g->cu = kcalloc(ks_param.num_cu, sizeof(*g->cu), GFP_KERNEL);
	g->claimed = bitmap_zalloc(ks_param.num_cu, GFP_KERNEL);
	if (!g->cu || !g->claimed) {
		ret = -ENOMEM;
		goto err_free_cu;
	}
	/* Device 0's CP keeps its old name (tests and tools look for it). */
	if (d->id)
		g->cp = kthread_run(ks_cp_fn, g, "kfdsim_cp%u", d->id);
	else
		g->cp = kthread_run(ks_cp_fn, g, "kfdsim_cp");
	if (IS_ERR(g->cp)) {
		ret = PTR_ERR(g->cp);
		goto err_free_cu;
	}
	d->gpu = g;
	return 0;

err_free_cu:
	bitmap_free(g->claimed);
	kfree(g->cu);
	kfree(g);
	return ret;
}

/**
 * ks_gpu_stop() - stop the command processor (no queue is left)
 * @d: device
 */
void ks_gpu_stop(struct ks_device *d)
{
	struct ks_gpu *g = d->gpu;

	kthread_stop(g->cp);
	bitmap_free(g->claimed);
	kfree(g->cu);
	kfree(g);
	d->gpu = NULL;
}
