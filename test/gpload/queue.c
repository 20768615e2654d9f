// SPDX-License-Identifier: GPL-2.0
/*
 * queue.c - gpload's user queues: create/update/destroy through the ioctls,
 * submit AQL-like packets (packet, then header with release, then the write
 * index with release), and check that every packet's completion signal was
 * incremented exactly once and the read index caught up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>
#include "gpload.h"

int fd = -1;
bool use_pfnmap;
bool hide_ids;
bool forge_ids;
uint32_t cu_mask[32];		/* --cu-mask: applied to every new queue */
uint32_t cu_mask_bits;		/* 0: none */
uint32_t queue_type = KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
uint16_t pkt_flags;
long errors, lost, doubles, updates, destroy_retries, destroy_freed;

double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void sleep_us(double us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1e6),
			       .tv_nsec = (long)fmod(us * 1e3, 1e9) };

	if (us > 0)
		nanosleep(&ts, NULL);
}

int q_update(struct gq *q, int percent, int prio)
{
	struct kfdsim_update_queue_args a = {
		.ring_base_address = (uintptr_t)q->ring,
		.queue_id = q->id,
		.ring_size = RING_SLOTS * sizeof(struct kfdsim_packet),
		.queue_percentage = percent,
		.queue_priority = prio,
	};

	updates++;
	return ioctl(q->fd, KFDSIM_IOC_UPDATE_QUEUE, &a) ? -errno : 0;
}

uint32_t gpu_id;

/* AMDKFD_IOC_SET_CU_MASK, as ROCr calls it after creating a queue. */
int q_set_cu_mask(struct gq *q, const uint32_t *mask, uint32_t bits)
{
	struct kfdsim_set_cu_mask_args a = {
		.queue_id = q->id,
		.num_cu_mask = bits,
		.cu_mask_ptr = (uintptr_t)mask,
	};

	return ioctl(q->fd, KFDSIM_IOC_SET_CU_MASK, &a) ? -errno : 0;
}

/*
 * @rocr: create at priority 7 like ROCr, then SetPriority (percent 100).
 * @area: the queue's signal area (@area_len bytes), NULL: its own memory;
 * @sig: then its RING_SLOTS completion signals, inside @area.
 */
int q_create_in(struct gq *q, int prio, bool rocr, void *area, size_t area_len,
		_Atomic uint64_t *sig)
{
	struct kfdsim_create_queue_args a = { 0 };
	size_t ring_len = RING_SLOTS * sizeof(struct kfdsim_packet);
	int i, mfd = -1;
	char *m;

	memset(q, 0, sizeof(*q));
	q->fd = fd;		/* the context the queue is created in */
	q->len = ring_len + 4096 + RING_SLOTS * 8;
	if (hide_ids) {
		/* Shared memory: a second view of the ids page after the first goes. */
		mfd = memfd_create("gpload-ids", MFD_CLOEXEC);
		if (mfd < 0 || ftruncate(mfd, q->len)) {
			i = -errno;
			if (mfd >= 0)
				close(mfd);
			return i;
		}
		m = mmap(NULL, q->len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	} else {
		m = mmap(NULL, q->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (m == MAP_FAILED) {
		i = -errno;
		if (mfd >= 0)
			close(mfd);
		return i;
	}
	q->mem = m;
	q->ring = (struct kfdsim_packet *)m;
	/* amd_queue_t-like: write index, then the read index 72 bytes later. */
	q->wptr = (_Atomic uint64_t *)(m + ring_len + 56);
	q->rptr = (_Atomic uint64_t *)(m + ring_len + 128);
	q->sig = (_Atomic uint64_t *)(m + ring_len + 4096);
	if (area)
		q->sig = sig;
	if (use_pfnmap) {
		/* Like a TTM-mmapped BO: VM_PFNMAP, not pinnable. */
		char *pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd, 0);

		if (pm == MAP_FAILED) {
			int e = -errno;

			munmap(m, q->len);
			q->mem = NULL;
			return e;
		}
		q->ptrmem = pm;
		q->wptr = (_Atomic uint64_t *)(pm + 56);
		q->rptr = (_Atomic uint64_t *)(pm + 128);
	}
	for (i = 0; i < RING_SLOTS; i++)
		q->ring[i].header = KFDSIM_PKT_INVALID;
	a.ring_base_address = (uintptr_t)q->ring;
	a.ring_size = ring_len;
	a.read_pointer_address = (uintptr_t)q->rptr;
	a.write_pointer_address = (uintptr_t)q->wptr;
	a.signal_base_address = area ? (uintptr_t)area : (uintptr_t)q->sig;
	a.signal_size = area ? area_len : RING_SLOTS * 8;
	a.queue_percentage = 100;
	a.queue_priority = rocr ? 7 : prio;
	a.queue_type = queue_type;
	a.gpu_id = gpu_id;
	if (ioctl(q->fd, KFDSIM_IOC_CREATE_QUEUE, &a)) {
		int e = -errno;

		if (mfd >= 0)
			close(mfd);
		munmap(m, q->len);
		q->mem = NULL;
		if (q->ptrmem)
			munmap(q->ptrmem, 4096);
		q->ptrmem = NULL;
		return e;
	}
	q->id = a.queue_id;
	if (mfd >= 0) {
		/*
		 * --hide-ids (S4-12): the registered CPU page of the dispatch
		 * ids becomes unreadable (PROT_NONE); the queue's work goes on
		 * through a second view of the same page, and the simulated
		 * GPU keeps the page it pinned (as the GPU VM keeps the BO).
		 */
		char *alias = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, ring_len);
		int e = alias == MAP_FAILED ? -errno : 0;
		/*
		 * --forge-ids (S5-4): a readable page of zeros instead, made
		 * present (written once), so a reader sees both ids 0: idle.
		 */
		int prot = forge_ids ? PROT_READ | PROT_WRITE : PROT_NONE;
		char *over;

		close(mfd);
		if (e)
			return e;
		over = mmap(m + ring_len, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (over == MAP_FAILED) {
			e = -errno;
			munmap(alias, 4096);
			return e;
		}
		if (forge_ids)
			memset(over, 0, 4096);
		q->ptrmem = alias;
		q->wptr = (_Atomic uint64_t *)(alias + 56);
		q->rptr = (_Atomic uint64_t *)(alias + 128);
	}
	if (cu_mask_bits) {
		int r, tries = 0;

		/*
		 * An update_queue that failed (kfdsim's fault injection: EBUSY,
		 * ETIME, EIO) left the mask unset: set it again, as a client
		 * whose mask matters would.
		 */
		while ((r = q_set_cu_mask(q, cu_mask, cu_mask_bits)) &&
		       (r == -EBUSY || r == -ETIME || r == -EIO) && ++tries < 100)
			sleep_us(1000);
		if (r)
			return r;
	}
	if (rocr)
		return q_update(q, 100, prio);
	return 0;
}

int q_create(struct gq *q, int prio, bool rocr)
{
	return q_create_in(q, prio, rocr, NULL, 0, NULL);
}

/*
 * KFD frees the queue on these errors too (6.12.117 pqm_destroy_queue: a
 * hung HWS, a GPU reset): it is destroyed, and must not be destroyed again
 * (its id may already be another queue's).  Counted in destroy_freed.
 */
static int q_destroy_result(int r)
{
	if (r == -ETIME || r == -EIO) {
		destroy_freed++;
		return 0;
	}
	return r;
}

/* Returns 0 once the queue is destroyed (also after ETIME/EIO), else -errno. */
int q_destroy(struct gq *q)
{
	struct kfdsim_destroy_queue_args a = { .queue_id = q->id };
	int r = q_destroy_result(ioctl(q->fd, KFDSIM_IOC_DESTROY_QUEUE, &a) ? -errno : 0);

	munmap(q->mem, q->len);
	q->mem = NULL;
	if (q->ptrmem)
		munmap(q->ptrmem, 4096);
	q->ptrmem = NULL;
	return r;
}

/* Destroy queue @id again (after a failed q_destroy(): its memory is unmapped). */
int q_destroy_id(uint32_t id)
{
	struct kfdsim_destroy_queue_args a = { .queue_id = id };

	return q_destroy_result(ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &a) ? -errno : 0);
}

int q_outstanding(struct gq *q)
{
	return (int)(atomic_load_explicit(q->wptr, memory_order_relaxed) - q->retired);
}

/*
 * Reserve the next slot of @q: check its previous packet (retired with 1;
 * more is a double), zero its signal.  Returns the packet id, or -1 if the
 * ring is full.
 */
static int64_t q_reserve(struct gq *q)
{
	uint64_t id = atomic_load_explicit(q->wptr, memory_order_relaxed);
	_Atomic uint64_t *sig = &q->sig[id % RING_SLOTS];

	if (id - q->retired >= RING_SLOTS)
		return -1;
	if (id >= RING_SLOTS && !q->ext[id % RING_SLOTS] && atomic_load(sig) != 1) {
		fprintf(stderr, "gpload: queue %u packet %llu completed %llu times\n", q->id,
			(unsigned long long)(id - RING_SLOTS),
			(unsigned long long)atomic_load(sig));
		doubles++;
	}
	atomic_store_explicit(sig, 0, memory_order_relaxed);
	q->ext[id % RING_SLOTS] = false;
	q->work_us[id % RING_SLOTS] = 0;
	return id;
}

/* Publish packet @id: header (release), then the write index (release). */
static void q_publish(struct gq *q, uint64_t id, uint16_t header)
{
	atomic_store_explicit((_Atomic uint16_t *)&q->ring[id % RING_SLOTS].header, header,
			      memory_order_release);
	atomic_store_explicit(q->wptr, id + 1, memory_order_release);
}

/*
 * Submit one dispatch that signals @sig (NULL: its slot's own signal; else
 * another's, e.g. a dependency signal: the packet is then retired by the
 * read index and whoever owns @sig checks it).  Returns its packet id, or -1
 * if the ring is full.
 */
int64_t q_submit_sig(struct gq *q, int wg, double wg_us, _Atomic uint64_t *sig)
{
	int64_t id = q_reserve(q);
	struct kfdsim_packet *p;

	if (id < 0)
		return -1;
	p = &q->ring[id % RING_SLOTS];
	p->workgroups = wg;
	p->ns_per_workgroup = (uint64_t)(wg_us * 1000);
	p->completion_signal = (uintptr_t)(sig ?: &q->sig[id % RING_SLOTS]);
	p->flags = pkt_flags;
	q->ext[id % RING_SLOTS] = sig;
	q->work_us[id % RING_SLOTS] = wg * wg_us;
	q_publish(q, id, KFDSIM_PKT_DISPATCH);
	return id;
}

/* Submit one dispatch; returns its packet id, or -1 if the ring is full. */
int64_t q_submit(struct gq *q, int wg, double wg_us)
{
	return q_submit_sig(q, wg, wg_us, NULL);
}

/*
 * Submit a barrier packet (KFDSIM_PKT_BARRIER_AND/_OR) on @n (at most 5)
 * dependency signals, with the barrier bit as HIP's hipStreamWaitEvent sets
 * it; it signals its own slot.  Returns its packet id, or -1.
 */
int64_t q_submit_barrier(struct gq *q, uint16_t type, _Atomic uint64_t *const *deps, int n)
{
	int64_t id = q_reserve(q);
	struct kfdsim_barrier_packet *p;
	int i;

	if (id < 0 || n > 5)
		return -1;
	p = (struct kfdsim_barrier_packet *)&q->ring[id % RING_SLOTS];
	memset((char *)p + 2, 0, sizeof(*p) - 2);	/* all but the header */
	for (i = 0; i < n; i++)
		p->dep_signal[i] = (uintptr_t)deps[i];
	p->completion_signal = (uintptr_t)&q->sig[id % RING_SLOTS];
	p->flags = KFDSIM_PKT_F_BARRIER;
	q_publish(q, id, type);
	return id;
}

/* Verify and count the packets that completed, in order. */
int q_retire(struct gq *q)
{
	uint64_t w = atomic_load_explicit(q->wptr, memory_order_relaxed);
	int n = 0;

	while (q->retired < w) {
		uint64_t v;

		if (q->ext[q->retired % RING_SLOTS]) {
			/* kfdsim adds to the signal, then releases the read index. */
			if (atomic_load_explicit(q->rptr, memory_order_acquire) <= q->retired)
				break;
			q->busy_us += q->work_us[q->retired % RING_SLOTS];
			q->retired++;
			n++;
			continue;
		}
		v = atomic_load_explicit(&q->sig[q->retired % RING_SLOTS], memory_order_acquire);
		if (v == 0)
			break;
		if (v != 1) {
			fprintf(stderr, "gpload: queue %u packet %llu completed %llu times\n",
				q->id, (unsigned long long)q->retired, (unsigned long long)v);
			doubles++;
		}
		q->busy_us += q->work_us[q->retired % RING_SLOTS];
		q->retired++;
		n++;
	}
	return n;
}

/*
 * Wait for everything submitted, then check: every signal of the last ring's
 * worth of packets is exactly 1 and the read index equals the write index.
 * Returns true if all of that held.
 */
bool q_drain(struct gq *q, double timeout_us)
{
	double end = now_us() + timeout_us;
	uint64_t w, r, i, first;
	bool ok = true;

	while (q_outstanding(q) > 0 && now_us() < end) {
		q_retire(q);
		sleep_us(200);
	}
	q_retire(q);
	if (q_outstanding(q) > 0) {
		fprintf(stderr, "gpload: queue %u: %d packets never completed\n", q->id,
			q_outstanding(q));
		lost += q_outstanding(q);
		ok = false;
	}
	/*
	 * A late double completion would show within a millisecond.  The
	 * read index is published just after the last signal, in the same
	 * locked section, but a TCG vCPU the host deschedules between the
	 * two stores can publish it much later: wait for it, up to 2 s.
	 */
	end = now_us() + 2e6;
	do {
		sleep_us(1000);
		w = atomic_load(q->wptr);
		r = atomic_load(q->rptr);
	} while (r != w && now_us() < end);
	if (r != w) {
		fprintf(stderr, "gpload: queue %u: rptr %llu != wptr %llu\n", q->id,
			(unsigned long long)r, (unsigned long long)w);
		errors++;
		ok = false;
	}
	first = w > RING_SLOTS ? w - RING_SLOTS : 0;
	for (i = first; i < q->retired; i++) {
		uint64_t v = atomic_load(&q->sig[i % RING_SLOTS]);

		if (!q->ext[i % RING_SLOTS] && v != 1) {
			fprintf(stderr, "gpload: queue %u packet %llu: signal %llu at the end\n",
				q->id, (unsigned long long)i, (unsigned long long)v);
			doubles++;
			ok = false;
		}
	}
	return ok;
}

int test_op(int op, uint32_t qid, uint64_t *val)
{
	struct kfdsim_test_args t = { .op = op, .queue_id = qid };
	int r = ioctl(fd, KFDSIM_IOC_TEST, &t);

	if (val)
		*val = t.value;
	return r ? -errno : 0;
}
