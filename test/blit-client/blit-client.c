// SPDX-License-Identifier: GPL-2.0
/*
 * blit-client - forged ROCr blit dispatches on kfdsim's /dev/kfd, through
 * Debian's libhsakmt (ROCm 5.2.3's thunk).  kfdsim recognises ROCr 5.2.3's
 * own blit kernels by their amd_kernel_code_t (bytes 0..15 zero,
 * kernel_code_entry_byte_offset 256, compute_pgm_rsrc1's SGPR/VGPR counts)
 * and copies or fills through the process's GPU VM what their kernargs
 * (amd_blit_kernel.h KernelArgs) name.  A process writes both itself, so
 * this client forges them: one AQL queue, a source A and a destination B
 * (5 MiB each, host-accessible, mapped to the GPU, each filled with its own
 * pattern), a guard G, and one dispatch per case, each waited for (its
 * completion signal, or the read index) before the next.  One line a case:
 *
 *   <case> done <0|1> b_same <0|1> a_same <0|1> g_same <0|1>
 *
 * done: the dispatch completed (the queue goes on); b_same, a_same, g_same:
 * B, A and G hold what they should, byte for byte (for "control", B's first
 * 4 KiB hold A's and the rest B's own pattern; for every other case all
 * three are unchanged; "signal_wraps" copies 4 KiB of A into B's fifth
 * page, legally).  Cases:
 *
 *   control            a legal aligned copy of 4 KiB from A to B
 *   copy_over_cap      4 MiB + 4 KiB from A to B (both large enough)
 *   fill_over_cap      a fill of 4 MiB + 4 KiB into B
 *   copy_src_outside   source 0x1000, in no buffer of the caller
 *   fill_outside       a fill of 4 KiB at 0x1000
 *   copy_src_past_end  source from 2 KiB before A's end, 4 KiB long
 *   copy_dst_past_end  destination from 2 KiB before B's end, 4 KiB long
 *   fill_past_end      a fill from 2 KiB before B's end, 4 KiB long
 *   kd_wraps           the kernel descriptor's address 2^64 - 64 (its
 *                      64 bytes wrap the address space)
 *   kernarg_wraps      the kernarg address 2^64 - 8
 *   signal_wraps       a legal copy whose completion signal is 2^64 - 16
 *                      (its value field, +8, wraps): waited for by the
 *                      read index
 *
 * Then "destroy <status>".  Exit status 0 when every libhsakmt call
 * succeeded, every dispatch completed and every check held, else 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hsakmt.h>
#include "../lib/aql.h"

#define RING_SIZE 4096
#define BUF_SIZE (5 << 20)
#define SMALL 4096
#define CAP (4 << 20)		/* kfdsim's KS_BLIT_MAX_BYTES */

static int failed;

static void check(const char *what, HSAKMT_STATUS st)
{
	if (st != HSAKMT_STATUS_SUCCESS) {
		printf("error %s %d\n", what, st);
		failed = 1;
	}
}

static void *alloc_mem(HSAuint64 size)
{
	HsaMemFlags f = { 0 };
	void *mem = NULL;
	HSAuint64 va;

	f.ui32.HostAccess = 1;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	check("hsaKmtAllocMemory", hsaKmtAllocMemory(0, size, f, &mem));
	if (!mem)
		return NULL;
	check("hsaKmtMapMemoryToGPU", hsaKmtMapMemoryToGPU(mem, size, &va));
	return mem;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Wait up to 10 s for *p == v. */
static int wait_u64(volatile uint64_t *p, uint64_t v)
{
	uint64_t end = now_ns() + 10000000000ull;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v) {
		if (now_ns() > end)
			return -1;
		usleep(1000);
	}
	return 0;
}

/*
 * compute_pgm_rsrc1 of ROCr 5.2.3's gfx9 blit shaders (amd_gpu_agent.cpp
 * AssembleShader): granulated VGPR count in bits 0..5, SGPR in 6..9.
 */
#define RSRC1_COPY_ALIGNED (2 | 3 << 6)
#define RSRC1_FILL (1 | 2 << 6)

struct client {
	struct aql_packet *ring;
	uint64_t *ids;		/* amd_queue_t's read and write dispatch ids */
	HSAuint64 *doorbell;
	uint64_t *kd_copy, *kd_fill, *kernarg;
	struct amd_signal *sig;
	uint8_t *a, *b, *g, *b_want, *a_want, *g_want;
	uint64_t next;
};

/*
 * One dispatch, written as a runtime writes AQL: body, header last
 * (release), write index, doorbell; then wait for its completion signal or,
 * when @signal is not the client's own, for the read index.
 */
static int dispatch(struct client *c, uint64_t kernel_object, uint64_t kernarg,
		    uint64_t signal)
{
	struct aql_packet *pkt = &c->ring[c->next % (RING_SIZE / sizeof(*pkt))];
	int ok;

	c->sig->value = 1;
	memset(pkt, 0, sizeof(*pkt));
	pkt->setup = 1;
	pkt->workgroup_size[0] = 64;
	pkt->workgroup_size[1] = 1;
	pkt->workgroup_size[2] = 1;
	pkt->grid_size[0] = 64;
	pkt->grid_size[1] = 1;
	pkt->grid_size[2] = 1;
	pkt->kernel_object = kernel_object;
	pkt->kernarg_address = kernarg;
	pkt->completion_signal = signal;
	__atomic_store_n(&pkt->header, AQL_DISPATCH | AQL_BARRIER_BIT | AQL_FENCES,
			 __ATOMIC_RELEASE);
	c->next++;
	__atomic_store_n(&c->ids[1], c->next, __ATOMIC_RELEASE);
	__atomic_store_n(c->doorbell, c->next - 1, __ATOMIC_RELEASE);
	if (signal != (uintptr_t)c->sig)
		ok = !wait_u64(&c->ids[0], c->next);
	else
		ok = !wait_u64((volatile uint64_t *)&c->sig->value, 0) &&
		     !wait_u64(&c->ids[0], c->next);
	/* what a late copy or fill would have done is in place by now */
	usleep(20000);
	return ok;
}

/* ROCr's KernelArgs for CopyAligned: phase 1 starts at src and dst, phase 4 ends */
static void copy_args(struct client *c, uint64_t src, uint64_t dst, uint64_t len)
{
	uint64_t *a = c->kernarg;
	int i;

	memset(a, 0, 128);
	for (i = 0; i < 4; i++) {
		a[2 * i] = src;
		a[2 * i + 1] = dst;
	}
	a[8] = src + len;
	a[9] = dst + len;
	a[10] = 64;		/* num_workitems */
}

/* ROCr's KernelArgs for Fill: phase 1 and 2 starts, phase 2's end, the value */
static void fill_args(struct client *c, uint64_t dst, uint64_t len, uint32_t value)
{
	uint64_t *a = c->kernarg;

	memset(a, 0, 128);
	a[0] = dst;
	a[1] = dst;
	a[2] = dst + len;
	a[3] = value;
	a[4] = 64;		/* num_workitems */
}

static void report(struct client *c, const char *name, int done)
{
	int b = !memcmp(c->b, c->b_want, BUF_SIZE), a = !memcmp(c->a, c->a_want, BUF_SIZE);
	int g = !memcmp(c->g, c->g_want, SMALL);

	printf("%s done %d b_same %d a_same %d g_same %d\n", name, done, b, a, g);
	if (!done || !b || !a || !g)
		failed = 1;
	/* the next case starts from what should be there */
	memcpy(c->b, c->b_want, BUF_SIZE);
	memcpy(c->a, c->a_want, BUF_SIZE);
	memcpy(c->g, c->g_want, SMALL);
}

static void cases(struct client *c)
{
	uint64_t a = (uintptr_t)c->a, b = (uintptr_t)c->b, ka = (uintptr_t)c->kernarg;
	uint64_t copy = (uintptr_t)c->kd_copy, fill = (uintptr_t)c->kd_fill;
	uint64_t sig = (uintptr_t)c->sig;
	int done;

	copy_args(c, a, b, SMALL);
	done = dispatch(c, copy, ka, sig);
	memcpy(c->b_want, c->a_want, SMALL);	/* B keeps it from here on */
	report(c, "control", done);

	/* those that would run past a buffer's end unchecked last: they would oops */
	copy_args(c, a, b, CAP + SMALL);
	report(c, "copy_over_cap", dispatch(c, copy, ka, sig));
	fill_args(c, b, CAP + SMALL, 0xdeadbeef);
	report(c, "fill_over_cap", dispatch(c, fill, ka, sig));
	copy_args(c, 0x1000, b + 2 * SMALL, SMALL);
	report(c, "copy_src_outside", dispatch(c, copy, ka, sig));
	fill_args(c, 0x1000, SMALL, 0xdeadbeef);
	report(c, "fill_outside", dispatch(c, fill, ka, sig));
	copy_args(c, a + BUF_SIZE - SMALL / 2, b + 2 * SMALL, SMALL);
	report(c, "copy_src_past_end", dispatch(c, copy, ka, sig));
	copy_args(c, a, b + BUF_SIZE - SMALL / 2, SMALL);
	report(c, "copy_dst_past_end", dispatch(c, copy, ka, sig));
	fill_args(c, b + BUF_SIZE - SMALL / 2, SMALL, 0xdeadbeef);
	report(c, "fill_past_end", dispatch(c, fill, ka, sig));
	/* addresses whose last bytes wrap past 2^64: in no buffer either */
	copy_args(c, a, b + 4 * SMALL, SMALL);
	report(c, "kd_wraps", dispatch(c, -64ull, ka, sig));
	report(c, "kernarg_wraps", dispatch(c, copy, -8ull, sig));
	done = dispatch(c, copy, ka, -16ull);
	memcpy(c->b_want + 4 * SMALL, c->a_want, SMALL);	/* the copy itself is legal */
	report(c, "signal_wraps", done);
}

static void run(HSAuint32 node)
{
	HsaQueueResource res = { 0 };
	struct client c = { 0 };
	uint8_t *small;
	HSAKMT_STATUS st;
	int i;

	c.ring = alloc_mem(RING_SIZE);
	small = alloc_mem(4 * SMALL);
	c.a = alloc_mem(BUF_SIZE);
	c.b = alloc_mem(BUF_SIZE);
	c.g = alloc_mem(SMALL);
	c.a_want = malloc(BUF_SIZE);
	c.b_want = malloc(BUF_SIZE);
	c.g_want = malloc(SMALL);
	if (!c.ring || !small || !c.a || !c.b || !c.g || !c.a_want || !c.b_want || !c.g_want) {
		failed = 1;
		return;
	}
	memset(c.ring, 0, RING_SIZE);
	memset(small, 0, 4 * SMALL);
	c.ids = (uint64_t *)small;
	c.sig = (struct amd_signal *)(small + 256);
	c.kernarg = (uint64_t *)(small + SMALL);
	c.kd_copy = (uint64_t *)(small + 2 * SMALL);
	c.kd_fill = (uint64_t *)(small + 3 * SMALL);
	/* amd_kernel_code_t: kernel_code_entry_byte_offset, compute_pgm_rsrc1 */
	c.kd_copy[2] = 256;
	c.kd_copy[6] = RSRC1_COPY_ALIGNED;
	c.kd_fill[2] = 256;
	c.kd_fill[6] = RSRC1_FILL;
	for (i = 0; i < BUF_SIZE; i++) {
		c.a_want[i] = (uint8_t)(i * 29 + (i >> 12));
		c.b_want[i] = (uint8_t)(0x5a ^ (i >> 12));
	}
	memset(c.g_want, 0xa5, SMALL);
	memcpy(c.a, c.a_want, BUF_SIZE);
	memcpy(c.b, c.b_want, BUF_SIZE);
	memcpy(c.g, c.g_want, SMALL);

	res.QueueRptrValue = (uintptr_t)&c.ids[0];
	res.QueueWptrValue = (uintptr_t)&c.ids[1];
	st = hsaKmtCreateQueue(node, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL,
			       c.ring, RING_SIZE, NULL, &res);
	check("hsaKmtCreateQueue", st);
	if (st != HSAKMT_STATUS_SUCCESS || !res.Queue_DoorBell_aql) {
		failed = 1;
		return;
	}
	c.doorbell = res.Queue_DoorBell_aql;
	printf("queue_id %llu\n", (unsigned long long)res.QueueId);
	printf("buffers a 0x%llx b 0x%llx g 0x%llx\n", (unsigned long long)(uintptr_t)c.a,
	       (unsigned long long)(uintptr_t)c.b, (unsigned long long)(uintptr_t)c.g);
	cases(&c);
	st = hsaKmtDestroyQueue(res.QueueId);
	printf("destroy %d\n", st);
	check("hsaKmtDestroyQueue", st);
}

int main(void)
{
	HsaSystemProperties sp = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);	/* a case's line before a hang */
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		return 1;
	check("hsaKmtAcquireSystemProperties", hsaKmtAcquireSystemProperties(&sp));
	if (sp.NumNodes > 1)
		run(1);
	else
		failed = 1;
	hsaKmtCloseKFD();
	return failed;
}
