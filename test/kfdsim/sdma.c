// SPDX-License-Identifier: GPL-2.0
/*
 * sdma.c - the SDMA v4 engine of /dev/kfd SDMA queues (gfx9, what ROCr
 * 5.2.3's BlitSdmaV4 sends for host<->device copies).
 *
 * As the real engine under KFD's v9 SDMA MQD (kfd_mqd_manager_v9.c
 * update_mqd_sdma()): the ring at queue_address holds packets of dwords; the
 * write pointer is the queue's 64-bit doorbell, a byte offset that only
 * grows (ROCr also stores it at write_pointer_address, which the engine
 * does not read); the engine writes back the byte offset of the next packet
 * to read_pointer_address (RPTR_WRITEBACK).  Offsets are taken modulo the
 * ring size, and a packet may wrap.
 *
 * Packets run in order, one at a time.  COPY_LINEAR, COPY_LINEAR_RECT
 * (below) and CONST_FILL take a modelled time (sdma_mbps, and a fixed cost
 * per packet) on the queue's own engine, and their bytes are moved when
 * that time is over, through the process's GPU VM as the CP reaches AQL
 * memory.  FENCE (a u32 store),
 * ATOMIC (ADD64, ROCr's signal decrement), TIMESTAMP (the GET_CLOCK_COUNTERS
 * clock), TRAP (an SDMA trap interrupt: KFD's event interrupt), POLL_REGMEM
 * (a memory poll waits until it holds, re-checked at every CP poll; a
 * register poll, ROCr's HDP flush, is a no-op) and NOP complete at once.
 *
 * Preemption (an unmap: suspend, evict, a runlist change) stops the engine
 * at a packet boundary: a copy that was running keeps its remaining time
 * and its bytes are moved once, when it completes after the queue is mapped
 * again.  Nothing is lost or done twice.
 *
 * COPY_LINEAR_RECT (ROCm 6.x's hipMemcpy2D/3D; vega10_sdma_pkt_open.h
 * SDMA_PKT_COPY_LINEAR_SUBWIN, 13 dwords, sub-op 4) copies a box of
 * (rect_x + 1) x (rect_y + 1) x (rect_z + 1) elements of 2^elementsize
 * bytes (header bits 29-31) from a pitched source to a pitched
 * destination.  Each side is an address, an element offset x, y, z, and a
 * row pitch and slice pitch in elements less one (the encoding of ROCr's
 * BlitSdma::BuildCopyRectCommand).  kfdsim copies it row by row; each
 * side's whole extent must lie in one GPU-mapped buffer, its rows must fit
 * their pitch (and, over more than one slice, its slices their slice
 * pitch), so no byte is written twice or outside the buffer, and at most
 * KS_SDMA_RECT_MAX bytes move in one packet; else the queue stops.
 *
 * A packet the engine does not model (another opcode, a copy sub-op other
 * than linear, an address outside the GPU VM) stops the queue: it stays at
 * that packet, the kernel log says why, and debugfs shows sdma_error=1; the
 * CP never waits on it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/seq_file.h>
#include "kfdsim.h"

/* SDMA v4 opcodes (vega10_sdma_pkt_open.h; ROCr's sdma_registers.h) */
enum {
	KS_SDMA_OP_NOP = 0,
	KS_SDMA_OP_COPY = 1,
	KS_SDMA_OP_FENCE = 5,
	KS_SDMA_OP_TRAP = 6,
	KS_SDMA_OP_POLL_REGMEM = 8,
	KS_SDMA_OP_ATOMIC = 10,
	KS_SDMA_OP_CONST_FILL = 11,
	KS_SDMA_OP_TIMESTAMP = 13,
	KS_SDMA_NR_OPS = 32,
	KS_SDMA_STAT_RECT = KS_SDMA_NR_OPS,	/* COPY_LINEAR_RECT, counted apart */
	KS_SDMA_NR_STATS,
};

#define KS_SDMA_SUBOP_COPY_LINEAR 0
#define KS_SDMA_SUBOP_COPY_LINEAR_RECT 4	/* SDMA_SUBOP_COPY_LINEAR_SUB_WIND */
#define KS_SDMA_SUBOP_TIMESTAMP_GET_GLOBAL 2
#define KS_SDMA_ATOMIC_ADD64 47
#define KS_SDMA_COUNT_MASK GENMASK(21, 0)	/* v4: 22-bit byte counts */
#define KS_SDMA_MAX_DW 13			/* the longest packet modelled (RECT) */
#define KS_SDMA_RECT_MAX SZ_64M		/* a rect packet's bytes, the VRAM BO limit */
#define KS_SDMA_PKT_NS 1000			/* fixed cost of a copy or fill */
#define KS_SDMA_BATCH 4096			/* packets per CP step at most */

static unsigned int ks_sdma_mbps = 12000;
module_param_named(sdma_mbps, ks_sdma_mbps, uint, 0444);
MODULE_PARM_DESC(sdma_mbps,
		 "SDMA copy and fill bandwidth of /dev/kfd SDMA queues in MB/s (bytes per us) [1..1000000] (default 12000)");

static const char *const ks_sdma_names[KS_SDMA_NR_STATS] = {
	[KS_SDMA_OP_NOP] = "nop",
	[KS_SDMA_OP_COPY] = "copy_linear",
	[KS_SDMA_OP_FENCE] = "fence",
	[KS_SDMA_OP_TRAP] = "trap",
	[KS_SDMA_OP_POLL_REGMEM] = "poll_regmem",
	[KS_SDMA_OP_ATOMIC] = "atomic",
	[KS_SDMA_OP_CONST_FILL] = "const_fill",
	[KS_SDMA_OP_TIMESTAMP] = "timestamp",
	[KS_SDMA_STAT_RECT] = "copy_linear_rect",
};

static atomic64_t ks_sdma_ops[KS_SDMA_NR_STATS];
static atomic64_t ks_sdma_reg_polls;	/* POLL_REGMEM of a register (HDP flush) */
static atomic64_t ks_sdma_errors;
static atomic64_t ks_sdma_bytes;

/**
 * ks_sdma_check_params() - check sdma_mbps at load
 *
 * Return: 0 or -EINVAL.
 */
int ks_sdma_check_params(void)
{
	if (ks_sdma_mbps < 1 || ks_sdma_mbps > 1000000) {
		pr_err("sdma_mbps=%u out of range 1..1000000\n", ks_sdma_mbps);
		return -EINVAL;
	}
	return 0;
}

/**
 * ks_sdma_attach() - give an SDMA v4 queue its doorbell
 * @q: a new /dev/kfd SDMA queue
 * @doorbells: the process's doorbell slice on the queue's device; the
 *	reference is the queue's from now on (ks_queue_unpin() drops it)
 * @offset: the queue's doorbell in the slice, in bytes (8-byte aligned)
 *
 * Until it has one the engine sees no work.  Caller holds p->mutex.
 */
void ks_sdma_attach(struct queue *q, struct ks_buf *doorbells, u32 offset)
{
	struct ks_queue *ks = &q->ks;

	if (WARN_ON_ONCE(ks->nbufs >= KS_MAX_UMAPS)) {
		ks_buf_put(doorbells);
		return;
	}
	ks->bufs[ks->nbufs++] = doorbells;
	/* Pairs with READ_ONCE() in the engine. */
	smp_store_release(&ks->doorbell, (u64 *)((u8 *)ks_buf_kaddr(doorbells) + offset));
}

/* The u32 at byte offset @off of the ring (wrapping). */
static u32 ks_ring_dw(const struct ks_queue *ks, u64 off)
{
	return READ_ONCE(*(u32 *)((u8 *)ks->ring_map + (off & (ks->ring_bytes - 1))));
}

/* Stop @q at the packet at its read offset: the log says why. */
static void ks_sdma_fail(struct queue *q, u32 hdr, const char *why)
{
	q->ks.sdma_error = true;
	atomic64_inc(&ks_sdma_errors);
	pr_err_ratelimited("SDMA queue %u (pasid %u): %s: packet 0x%08x (opcode %u sub-op %u) at ring byte %llu; queue stopped\n",
			   q->properties.queue_id, q->process->pasid, why, hdr, hdr & 0xff,
			   (hdr >> 8) & 0xff, q->ks.sdma_rptr);
}

/* Packet size in dwords, 0: an opcode the engine does not model. */
static u32 ks_sdma_dwords(u32 hdr)
{
	switch (hdr & 0xff) {
	case KS_SDMA_OP_NOP:
		return 1 + ((hdr >> 16) & 0x3fff);
	case KS_SDMA_OP_COPY:
		switch ((hdr >> 8) & 0xff) {
		case KS_SDMA_SUBOP_COPY_LINEAR:
			return 7;
		case KS_SDMA_SUBOP_COPY_LINEAR_RECT:
			return 13;
		default:
			return 0;
		}
	case KS_SDMA_OP_FENCE:
		return 4;
	case KS_SDMA_OP_TRAP:
		return 2;
	case KS_SDMA_OP_POLL_REGMEM:
		return 6;
	case KS_SDMA_OP_ATOMIC:
		return 8;
	case KS_SDMA_OP_CONST_FILL:
		return 5;
	case KS_SDMA_OP_TIMESTAMP:
		return 3;
	default:
		return 0;
	}
}

static u64 ks_addr(const u32 *dw, int lo)
{
	return dw[lo] | (u64)dw[lo + 1] << 32;
}

static bool ks_sdma_is_rect(const u32 *dw)
{
	return (dw[0] & 0xff) == KS_SDMA_OP_COPY &&
	       ((dw[0] >> 8) & 0xff) == KS_SDMA_SUBOP_COPY_LINEAR_RECT;
}

/*
 * One side of a COPY_LINEAR_RECT (SDMA_PKT_COPY_LINEAR_SUBWIN): @dw points
 * at its address; x, y (dw 2), z and pitch (dw 3), slice pitch (dw 4).
 */
struct ks_rect_side {
	u64 addr;		/* of element (0, 0, 0) */
	u64 first;		/* byte offset of the box's first element */
	u64 pitch, slice;	/* row and slice pitch, bytes */
};

/* The box: element size and count per axis, as the packet says. */
struct ks_rect {
	u32 esize;
	u64 nx, ny, nz;
	struct ks_rect_side src, dst;
};

static void ks_rect_side(const u32 *dw, u32 shift, struct ks_rect_side *side)
{
	u64 x = dw[2] & 0x3fff, y = (dw[2] >> 16) & 0x3fff, z = dw[3] & 0x7ff;

	side->addr = ks_addr(dw, 0);
	side->pitch = ((u64)((dw[3] >> 13) & 0x7ffff) + 1) << shift;
	side->slice = ((u64)(dw[4] & 0x0fffffff) + 1) << shift;
	side->first = z * side->slice + y * side->pitch + (x << shift);
}

/* The last byte of the box on @side, from its first element. */
static u64 ks_rect_extent(const struct ks_rect *r, const struct ks_rect_side *side)
{
	return (r->nz - 1) * side->slice + (r->ny - 1) * side->pitch + r->nx * r->esize;
}

/*
 * Decode a COPY_LINEAR_RECT.  Return: NULL, or why kfdsim will not run it:
 * a field it does not model (an element above 16 bytes, a byte swap), an
 * unaligned address, a row wider than its pitch or (over slices) rows
 * beyond the slice pitch (the box would cover bytes twice), or more than
 * KS_SDMA_RECT_MAX bytes.
 */
static const char *ks_rect_decode(const u32 *dw, struct ks_rect *r)
{
	u32 shift = dw[0] >> 29;

	if (shift > 4)
		return "rect copy element size not simulated";
	if (dw[12] & (GENMASK(17, 16) | GENMASK(25, 24)))
		return "rect copy byte swap not simulated";
	r->esize = 1U << shift;
	r->nx = (dw[11] & 0x3fff) + 1;
	r->ny = ((dw[11] >> 16) & 0x3fff) + 1;
	r->nz = (dw[12] & 0x7ff) + 1;
	ks_rect_side(dw + 1, shift, &r->src);
	ks_rect_side(dw + 6, shift, &r->dst);
	if ((r->src.addr | r->dst.addr) & 3)
		return "rect copy address not dword aligned";
	if (((dw[3] & 0x3fff) + r->nx) << shift > r->src.pitch ||
	    ((dw[8] & 0x3fff) + r->nx) << shift > r->dst.pitch)
		return "rect copy row wider than its pitch";
	if (r->nz > 1 &&
	    ((((dw[3] >> 16) & 0x3fff) + r->ny) * r->src.pitch > r->src.slice ||
	     (((dw[8] >> 16) & 0x3fff) + r->ny) * r->dst.pitch > r->dst.slice))
		return "rect copy rows beyond the slice pitch";
	if (r->nx * r->esize * r->ny * r->nz > KS_SDMA_RECT_MAX)
		return "rect copy larger than 64 MiB";
	return NULL;
}

/* Bytes a COPY_LINEAR, COPY_LINEAR_RECT or CONST_FILL moves. */
static u64 ks_sdma_len(const u32 *dw)
{
	struct ks_rect r;

	if (ks_sdma_is_rect(dw))
		return ks_rect_decode(dw, &r) ? 0 : r.nx * r.esize * r.ny * r.nz;
	if ((dw[0] & 0xff) == KS_SDMA_OP_COPY)
		return (dw[1] & KS_SDMA_COUNT_MASK) + 1;	/* count = bytes - 1 */
	/* DW fill (ROCr's only kind): count = (dwords - 1) * 4 */
	return (((dw[4] & KS_SDMA_COUNT_MASK) >> 2) + 1) * 4;
}

/* Modelled time of a copy or fill of @len bytes. */
static u64 ks_sdma_cost(u64 len)
{
	return ((u64)KS_SDMA_PKT_NS + div_u64(len * 1000, ks_sdma_mbps)) * ks_param.time_scale;
}

/*
 * The rectangle copy of @dw, row by row through the process's GPU VM.
 * Return: NULL, or why not (the queue stops).
 */
static const char *ks_sdma_rect(struct queue *q, const u32 *dw)
{
	struct kfd_process *p = q->process;
	u64 row, y, z, len;
	const char *why;
	struct ks_rect r;
	u8 *d, *s;

	why = ks_rect_decode(dw, &r);
	if (why)
		return why;
	row = r.nx * r.esize;
	/* A box whose start wraps past 2^64 is nowhere. */
	if (r.src.addr + r.src.first < r.src.addr || r.dst.addr + r.dst.first < r.dst.addr)
		return "rect copy outside the GPU VM";
	spin_lock(&p->ks_vm_lock);
	/* The whole box on each side lies in one buffer: no row can leave it. */
	s = ks_vm_bytes_locked(p, r.src.addr + r.src.first, ks_rect_extent(&r, &r.src));
	d = ks_vm_bytes_locked(p, r.dst.addr + r.dst.first, ks_rect_extent(&r, &r.dst));
	if (s && d) {
		for (z = 0; z < r.nz; z++)
			for (y = 0; y < r.ny; y++)
				memmove(d + z * r.dst.slice + y * r.dst.pitch,
					s + z * r.src.slice + y * r.src.pitch, row);
	}
	spin_unlock(&p->ks_vm_lock);
	if (!s || !d)
		return "rect copy outside the GPU VM";
	len = row * r.ny * r.nz;
	q->ks.sdma_bytes += len;
	atomic64_add(len, &ks_sdma_bytes);
	return NULL;
}

/*
 * Do the copy or fill of @dw through the process's GPU VM.  Return: false
 * (the queue stops) when a range is not in one GPU-mapped buffer.
 */
static bool ks_sdma_move(struct queue *q, const u32 *dw)
{
	struct kfd_process *p = q->process;
	u64 len = ks_sdma_len(dw);
	bool copy = (dw[0] & 0xff) == KS_SDMA_OP_COPY;
	u64 dst = copy ? ks_addr(dw, 5) : ks_addr(dw, 1);
	const char *why;
	void *d, *s = NULL;
	u32 i;

	if (ks_sdma_is_rect(dw)) {
		why = ks_sdma_rect(q, dw);
		if (why)
			ks_sdma_fail(q, dw[0], why);
		return !why;
	}
	spin_lock(&p->ks_vm_lock);
	d = ks_vm_bytes_locked(p, dst, len);
	if (copy)
		s = ks_vm_bytes_locked(p, ks_addr(dw, 3), len);
	if (d && copy && s) {
		memmove(d, s, len);
	} else if (d && !copy && !(dst & 3)) {
		for (i = 0; i < len / 4; i++)
			WRITE_ONCE(((u32 *)d)[i], dw[3]);
	} else {
		d = NULL;
	}
	spin_unlock(&p->ks_vm_lock);
	if (!d) {
		ks_sdma_fail(q, dw[0], copy ? "copy outside the GPU VM" :
				 "fill outside the GPU VM");
		return false;
	}
	q->ks.sdma_bytes += len;
	atomic64_add(len, &ks_sdma_bytes);
	return true;
}

/* POLL_REGMEM's compare functions */
static bool ks_sdma_compare(u32 func, u32 v, u32 ref)
{
	switch (func) {
	case 0: return true;
	case 1: return v < ref;
	case 2: return v <= ref;
	case 3: return v == ref;
	case 4: return v != ref;
	case 5: return v >= ref;
	case 6: return v > ref;
	default: return false;
	}
}

enum ks_sdma_res { KS_SDMA_DONE, KS_SDMA_WAIT, KS_SDMA_STOP };

/*
 * Run the packet @dw of @q that completes at once (not a copy or fill).
 * Memory is reached through the process's GPU VM; a store outside it
 * stops the queue.
 */
static enum ks_sdma_res ks_sdma_exec(struct queue *q, const u32 *dw, u64 now)
{
	struct kfd_process *p = q->process;
	u32 op = dw[0] & 0xff;
	enum ks_sdma_res res = KS_SDMA_DONE;
	void *k = NULL;

	if (op == KS_SDMA_OP_NOP)
		return KS_SDMA_DONE;
	if (op == KS_SDMA_OP_POLL_REGMEM && !(dw[0] & BIT(31))) {
		atomic64_inc(&ks_sdma_reg_polls);
		return KS_SDMA_DONE;	/* a register (HDP flush): nothing to wait for */
	}
	if (op == KS_SDMA_OP_TRAP) {
		/* SOC15_INTSRC_SDMA_TRAP: kfd_signal_event_interrupt(pasid, ctx, 28) */
		ks_event_trap(p, dw[1] & 0x0fffffff);
		return KS_SDMA_DONE;
	}
	spin_lock(&p->ks_vm_lock);
	switch (op) {
	case KS_SDMA_OP_FENCE:
		k = (ks_addr(dw, 1) & 3) ? NULL : ks_vm_bytes_locked(p, ks_addr(dw, 1), 4);
		if (k)
			smp_store_release((u32 *)k, dw[3]);	/* after what the ring did before */
		break;
	case KS_SDMA_OP_POLL_REGMEM:
		k = (ks_addr(dw, 1) & 3) ? NULL : ks_vm_bytes_locked(p, ks_addr(dw, 1), 4);
		/* acquire: what the poll waited for is seen by the packets after it */
		if (k && !ks_sdma_compare((dw[0] >> 28) & 7, smp_load_acquire((u32 *)k) & dw[4],
					  dw[3]))
			res = KS_SDMA_WAIT;	/* retry_count 0xfff: for ever */
		break;
	case KS_SDMA_OP_ATOMIC:
		if (((dw[0] >> 25) & 0x7f) != KS_SDMA_ATOMIC_ADD64) {
			spin_unlock(&p->ks_vm_lock);
			ks_sdma_fail(q, dw[0], "atomic operation not simulated");
			return KS_SDMA_STOP;
		}
		k = ks_vm_kaddr_locked(p, ks_addr(dw, 1), 8);
		if (k) {
			smp_mb__before_atomic();	/* the copy before it is seen first */
			atomic64_add((s64)ks_addr(dw, 3), (atomic64_t *)k);
		}
		break;
	case KS_SDMA_OP_TIMESTAMP:
		if (((dw[0] >> 8) & 0xff) != KS_SDMA_SUBOP_TIMESTAMP_GET_GLOBAL) {
			spin_unlock(&p->ks_vm_lock);
			ks_sdma_fail(q, dw[0], "timestamp sub-op not simulated");
			return KS_SDMA_STOP;
		}
		k = ks_vm_kaddr_locked(p, ks_addr(dw, 1), 8);
		if (k)
			WRITE_ONCE(*(u64 *)k, now);
		break;
	}
	spin_unlock(&p->ks_vm_lock);
	if (!k) {
		ks_sdma_fail(q, dw[0], "address outside the GPU VM");
		return KS_SDMA_STOP;
	}
	return res;
}

/* Read the packet at the read offset into @dw; its size in bytes, 0: none yet. */
static u32 ks_sdma_read(struct queue *q, u64 wptr, u32 *dw)
{
	struct ks_queue *ks = &q->ks;
	u32 n, i;

	dw[0] = ks_ring_dw(ks, ks->sdma_rptr);
	n = ks_sdma_dwords(dw[0]);
	if (!n) {
		ks_sdma_fail(q, dw[0], "opcode not simulated");
		return 0;
	}
	if (wptr - ks->sdma_rptr < (u64)n * 4)
		return 0;	/* not all written yet */
	for (i = 1; i < min_t(u32, n, KS_SDMA_MAX_DW); i++)
		dw[i] = ks_ring_dw(ks, ks->sdma_rptr + 4 * i);
	return n * 4;
}

/* The packet at the read offset is done: count it and move on. */
static void ks_sdma_retire(struct queue *q, u32 op, u32 bytes)
{
	struct ks_queue *ks = &q->ks;

	ks->sdma_rptr += bytes;
	ks->retired = ks->sdma_rptr;
	ks->fetched = ks->sdma_rptr;
	/* RPTR_WRITEBACK; pairs with the runtime's read: the effects first. */
	smp_store_release(ks->rptr, ks->sdma_rptr);
	/* a COPY of 13 dwords is the rect sub-op, counted apart */
	atomic64_inc(&ks_sdma_ops[op == KS_SDMA_OP_COPY && bytes == 13 * 4 ?
				 KS_SDMA_STAT_RECT : op]);
	if (op != KS_SDMA_OP_NOP) {
		ks->packets_done++;
		atomic64_inc(&ks_stats.packets_completed);
	}
}

/**
 * ks_sdma_finish_locked() - complete the copy or fill on @q's engine if its
 * time is over
 * @q: an SDMA v4 queue (the device's gpu lock held)
 * @now: kfdsim's clock
 */
void ks_sdma_finish_locked(struct queue *q, u64 now)
{
	struct ks_queue *ks = &q->ks;
	u32 dw[KS_SDMA_MAX_DW], bytes;

	if (!ks->sdma_busy || ks->sdma_end_ns > now)
		return;
	ks->sdma_busy = false;
	ks->busy_ns += ks->sdma_end_ns - ks->sdma_start_ns;
	ks->last_end_ns = max(ks->last_end_ns, ks->sdma_end_ns);
	/* The ring is not rewritten before the read offset passes it. */
	bytes = ks_sdma_read(q, U64_MAX, dw);
	if (bytes && ks_sdma_move(q, dw))
		ks_sdma_retire(q, dw[0] & 0xff, bytes);
}

/**
 * ks_sdma_run_locked() - run @q's packets until one takes time or waits
 * @q: a mapped SDMA v4 queue (the device's gpu lock held)
 * @now: kfdsim's clock
 *
 * A copy or fill starts on the engine (ks_sdma_finish_locked() ends it);
 * a preempted one resumes with the time it had left.
 */
void ks_sdma_run_locked(struct queue *q, u64 now)
{
	struct ks_queue *ks = &q->ks;
	u64 *db = READ_ONCE(ks->doorbell);
	u32 dw[KS_SDMA_MAX_DW], bytes, op;
	u64 wptr;
	int n;

	if (!db || ks->sdma_busy || ks->sdma_error)
		return;
	/* Pairs with the runtime's release before its doorbell write. */
	wptr = smp_load_acquire(db);
	for (n = 0; n < KS_SDMA_BATCH && ks->sdma_rptr != wptr; n++) {
		if (wptr - ks->sdma_rptr > ks->ring_bytes || (wptr & 3)) {
			ks_sdma_fail(q, 0, "doorbell write pointer outside the ring");
			return;
		}
		bytes = ks_sdma_read(q, wptr, dw);
		if (!bytes)
			return;
		op = dw[0] & 0xff;
		if (ks_sdma_is_rect(dw) && !ks->sdma_left_ns && !ks_sdma_len(dw)) {
			/* a box kfdsim will not copy: stop before it takes time */
			ks_sdma_move(q, dw);
			return;
		}
		if (op == KS_SDMA_OP_COPY || op == KS_SDMA_OP_CONST_FILL) {
			ks->sdma_start_ns = now;
			if (!ks->first_start_ns)
				ks->first_start_ns = now;
			ks->sdma_end_ns = now + (ks->sdma_left_ns ?: ks_sdma_cost(ks_sdma_len(dw)));
			if (ks->sdma_left_ns)
				ks->restores++;
			ks->sdma_left_ns = 0;
			ks->sdma_busy = true;
			return;
		}
		switch (ks_sdma_exec(q, dw, now)) {
		case KS_SDMA_DONE:
			ks_sdma_retire(q, op, bytes);
			break;
		default:
			return;
		}
	}
}

/**
 * ks_sdma_stats_show() - the SDMA lines of debugfs stats
 * @m: seq file
 *
 * sdma_<opcode> for each packet completed, sdma_reg_polls (register
 * POLL_REGMEMs, ROCr's HDP flush), sdma_bytes copied or filled,
 * sdma_errors (queues stopped at a packet).
 */
void ks_sdma_stats_show(struct seq_file *m)
{
	int i;

	for (i = 0; i < KS_SDMA_NR_STATS; i++)
		if (ks_sdma_names[i])
			seq_printf(m, "sdma_%s %lld\n", ks_sdma_names[i],
				   atomic64_read(&ks_sdma_ops[i]));
	seq_printf(m, "sdma_reg_polls %lld\nsdma_bytes %lld\nsdma_errors %lld\n",
		   atomic64_read(&ks_sdma_reg_polls), atomic64_read(&ks_sdma_bytes),
		   atomic64_read(&ks_sdma_errors));
}
