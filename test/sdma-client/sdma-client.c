// SPDX-License-Identifier: GPL-2.0
/*
 * sdma-client - an SDMA queue through Debian's libhsakmt (ROCm 5.2.3's
 * thunk) on kfdsim's /dev/kfd, driven the way ROCr's BlitSdmaV4 drives one:
 * SDMA v4 packets in the ring, the write offset in bytes stored at
 * Queue_write_ptr and then written to the 64-bit doorbell, the engine's
 * byte read offset at Queue_read_ptr.  One "key value" line per result,
 * for test/vm/sim-sdma.sh:
 *
 *   queue_id <id>          hsaKmtCreateQueue(HSA_QUEUE_SDMA)
 *   poll_waits <0|1>       the engine waits at a POLL_REGMEM (flag == 1):
 *                          the FENCE after it not written, the read offset
 *                          at the poll
 *   copy_same <0|1>        1 MiB host -> VRAM -> host by COPY_LINEAR: the
 *                          same bytes; meanwhile an AQL queue is created and
 *                          destroyed (two runlist changes preempt the copy)
 *   fill_ok <0|1>          CONST_FILL of 4 KiB with a dword
 *   atomic <value>         ATOMIC ADD64 of -1 on 5
 *   timestamp_ok <0|1>     TIMESTAMP wrote a non-zero clock
 *   fence <value>          the last FENCE's value (2015)
 *   rect2d_ok <0|1>        COPY_LINEAR_RECT (hipMemcpy2D's packet) of 10 x 7
 *                          dwords between pitches of 256 and 384 bytes:
 *                          the box copied, every other byte untouched
 *   rect3d_ok <0|1>        the same of 13 x 5 x 3 bytes across slices
 *   rptr <bytes> wptr <bytes>  read and write offsets when all is done
 *   bad_rptr_stuck <0|1>   a packet of unknown opcode 0x3f stops the queue:
 *                          the read offset stays at it, the FENCE after it
 *                          is never written
 *   destroy <status>       hsaKmtDestroyQueue()
 *   rect_oob_stuck <0|1>   on a second SDMA queue, a COPY_LINEAR_RECT whose
 *                          second row lies 4 MiB past its first, beyond its
 *                          buffer's end, stops the
 *                          queue: nothing written, the FENCE after it never
 *                          runs (then the queue is destroyed)
 *
 * Exit status 0 when every call and check succeeded, else 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hsakmt.h>

#define RING_SIZE (64 << 10)
#define COPY_SIZE (1 << 20)
#define FILL_SIZE 4096

static int failed;

static void check(const char *what, HSAKMT_STATUS st)
{
	if (st != HSAKMT_STATUS_SUCCESS) {
		printf("error %s %d\n", what, st);
		failed = 1;
	}
}

static void *alloc_mem(HSAuint32 node, HSAuint64 size, int vram)
{
	HsaMemFlags f = { 0 };
	void *mem = NULL;
	HSAuint64 va;

	f.ui32.HostAccess = 1;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.NonPaged = vram;
	f.ui32.CoarseGrain = vram;
	check("hsaKmtAllocMemory", hsaKmtAllocMemory(node, size, f, &mem));
	if (!mem)
		return NULL;
	check("hsaKmtMapMemoryToGPU", hsaKmtMapMemoryToGPU(mem, size, &va));
	return mem;
}

struct ring {
	uint32_t *base;
	uint64_t wptr;		/* bytes */
	HsaQueueResource res;
};

static void put(struct ring *r, const uint32_t *dw, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		r->base[(r->wptr % RING_SIZE) / 4] = dw[i];
		r->wptr += 4;
	}
}

/* ROCr's UpdateWriteAndDoorbellRegister(): the write offset, then the doorbell */
static void commit(struct ring *r)
{
	__atomic_store_n(r->res.Queue_write_ptr_aql, r->wptr, __ATOMIC_RELEASE);
	__atomic_store_n(r->res.Queue_DoorBell_aql, r->wptr, __ATOMIC_RELEASE);
}

static uint64_t rptr(struct ring *r)
{
	return __atomic_load_n(r->res.Queue_read_ptr_aql, __ATOMIC_ACQUIRE);
}

static int wait_rptr(struct ring *r, uint64_t want, int ms)
{
	while (rptr(r) != want && ms-- > 0)
		usleep(1000);
	return rptr(r) == want;
}

static void copy_linear(struct ring *r, void *dst, const void *src, uint32_t size)
{
	uint64_t s = (uintptr_t)src, d = (uintptr_t)dst;
	uint32_t p[7] = { 1, size - 1, 0, (uint32_t)s, (uint32_t)(s >> 32),
			  (uint32_t)d, (uint32_t)(d >> 32) };

	put(r, p, 7);
}

static void fence(struct ring *r, volatile uint32_t *a, uint32_t v)
{
	uint64_t x = (uintptr_t)a;
	uint32_t p[4] = { 5, (uint32_t)x, (uint32_t)(x >> 32), v };

	put(r, p, 4);
}

/* One side of a COPY_LINEAR_RECT: base, element offset, pitches in bytes */
struct side {
	void *base;
	uint32_t x, y, z, pitch, slice;
};

/*
 * COPY_LINEAR_RECT (SDMA_PKT_COPY_LINEAR_SUBWIN, sub-op 4) of nx x ny x nz
 * elements of 2^shift bytes, encoded as ROCr's BuildCopyRectCommand does:
 * pitches in elements less one, counts less one.
 */
static void copy_rect(struct ring *r, int shift, const struct side *src,
		      const struct side *dst, uint32_t nx, uint32_t ny, uint32_t nz)
{
	uint64_t s = (uintptr_t)src->base, d = (uintptr_t)dst->base;
	uint32_t p[13] = {
		1 | 4 << 8 | (uint32_t)shift << 29, (uint32_t)s, (uint32_t)(s >> 32),
		src->x | src->y << 16, src->z | ((src->pitch >> shift) - 1) << 13,
		(src->slice >> shift) - 1, (uint32_t)d, (uint32_t)(d >> 32),
		dst->x | dst->y << 16, dst->z | ((dst->pitch >> shift) - 1) << 13,
		(dst->slice >> shift) - 1, (nx - 1) | (ny - 1) << 16, nz - 1,
	};

	put(r, p, 13);
}

/*
 * The bytes of dst's region of @len after the rect copy: the box holds the
 * source's elements, every other byte still @fill.
 */
static int rect_ok(int shift, const struct side *src, const struct side *dst, uint32_t nx,
		   uint32_t ny, uint32_t nz, size_t len, uint8_t fill)
{
	const uint8_t *sb = src->base;
	uint32_t e = 1u << shift, i, j, k, b;
	uint8_t *db = malloc(len);
	size_t off, soff;
	int ok = 1;

	if (!db)
		return 0;
	/* a copy of the region, each box byte checked and then set to @fill */
	memcpy(db, dst->base, len);
	for (k = 0; k < nz; k++)
		for (j = 0; j < ny; j++)
			for (i = 0; i < nx; i++)
				for (b = 0; b < e; b++) {
					off = (size_t)(dst->z + k) * dst->slice +
					      (size_t)(dst->y + j) * dst->pitch + (dst->x + i) * e + b;
					soff = (size_t)(src->z + k) * src->slice +
					       (size_t)(src->y + j) * src->pitch + (src->x + i) * e + b;
					if (off >= len || db[off] != sb[soff]) {
						free(db);
						return 0;
					}
					db[off] = fill;
				}
	for (off = 0; off < len && ok; off++)
		ok = db[off] == fill;
	free(db);
	return ok;
}

/*
 * A second SDMA queue whose COPY_LINEAR_RECT runs past the end of its
 * destination buffer: the engine stops at it (nothing written), the FENCE
 * after it never runs.
 */
static void rect_oob(HSAuint32 node, uint8_t *buf, size_t len)
{
	struct side src = { buf, 0, 0, 0, 4096, 8192 };
	struct side dst = { buf + len - 4096, 0, 0, 0, 4 << 20, 8 << 20 };
	volatile uint32_t *fen = (uint32_t *)buf + 64;
	struct ring r = { 0 };
	HSAKMT_STATUS st;
	int ok;

	r.base = alloc_mem(0, RING_SIZE, 0);
	if (!r.base) {
		failed = 1;
		return;
	}
	memset(r.base, 0, RING_SIZE);
	memset(buf, 0x11, 4096);
	memset(buf + len - 4096, 0x5a, 4096);
	*fen = 0;
	st = hsaKmtCreateQueue(node, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_NORMAL, r.base,
			       RING_SIZE, NULL, &r.res);
	check("hsaKmtCreateQueue(SDMA 2)", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		return;
	/* 2 rows of one 16-byte element, 4 MiB apart: the second far past the end */
	copy_rect(&r, 4, &src, &dst, 1, 2, 1);
	fence(&r, fen, 9);
	commit(&r);
	usleep(500000);
	ok = rptr(&r) == 0 && *fen == 0 && buf[len - 4096] == 0x5a;
	printf("rect_oob_stuck %d\n", ok);
	failed |= !ok;
	check("hsaKmtDestroyQueue(SDMA 2)", hsaKmtDestroyQueue(r.res.QueueId));
}

/* An AQL queue made and destroyed: two runlist changes under HWS */
static void churn(HSAuint32 node)
{
	void *ring = alloc_mem(0, 4096, 0), *ptrs = alloc_mem(0, 4096, 0);
	HsaQueueResource res = { 0 };

	if (!ring || !ptrs)
		return;
	res.QueueRptrValue = (uintptr_t)ptrs;
	res.QueueWptrValue = (uintptr_t)ptrs + 8;
	check("hsaKmtCreateQueue(AQL)", hsaKmtCreateQueue(node, HSA_QUEUE_COMPUTE_AQL, 100,
							 HSA_QUEUE_PRIORITY_NORMAL, ring,
							 4096, NULL, &res));
	usleep(100000);
	check("hsaKmtDestroyQueue(AQL)", hsaKmtDestroyQueue(res.QueueId));
}

/*
 * SDMA_CLIENT_HOLD=PATH keeps the SDMA queue until PATH exists (at most 60 s),
 * so a test can read gpreempt's and kfdsim's views of the queue in a guest
 * whose tools are slower than the queue's whole life.
 */
static void hold_queue(void)
{
	const char *path = getenv("SDMA_CLIENT_HOLD");
	int i;

	for (i = 0; path && i < 600 && access(path, F_OK); i++)
		usleep(100000);
}

static void run(HSAuint32 node)
{
	uint8_t *host = alloc_mem(0, 3 * COPY_SIZE, 0), *vram = alloc_mem(node, COPY_SIZE, 1);
	volatile uint64_t *ctr;
	volatile uint32_t *flag, *fen, *fen2, *fill;
	struct side rs2 = { 0 }, rd2 = { 0 }, rs3 = { 0 }, rd3 = { 0 };
	uint8_t *rsrc, *rdst;
	uint64_t x, at_poll;
	struct ring r = { 0 };
	uint32_t p[8];
	HSAKMT_STATUS st;
	int i, ok;

	r.base = alloc_mem(0, RING_SIZE, 0);
	if (!host || !vram || !r.base) {
		failed = 1;
		return;
	}
	memset(r.base, 0, RING_SIZE);
	flag = (uint32_t *)(host + 2 * COPY_SIZE);
	fen = flag + 1;
	fen2 = flag + 2;
	ctr = (uint64_t *)(host + 2 * COPY_SIZE + 64);
	fill = (uint32_t *)(host + 2 * COPY_SIZE + 4096);
	*ctr = 5;
	for (i = 0; i < COPY_SIZE; i++)
		host[i] = (uint8_t)(i * 29 + (i >> 10));
	st = hsaKmtCreateQueue(node, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_NORMAL, r.base,
			       RING_SIZE, NULL, &r.res);
	check("hsaKmtCreateQueue(SDMA)", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		return;
	printf("queue_id %llu\n", (unsigned long long)r.res.QueueId);

	/* POLL_REGMEM: memory, func 3 (==), flag == 1, mask all, retry for ever */
	x = (uintptr_t)flag;
	p[0] = 8 | 3u << 28 | 1u << 31;
	p[1] = (uint32_t)x;
	p[2] = (uint32_t)(x >> 32);
	p[3] = 1;
	p[4] = 0xffffffff;
	p[5] = 4 | 0xfff << 16;
	at_poll = r.wptr;
	put(&r, p, 6);
	fence(&r, fen, 1);
	commit(&r);
	usleep(300000);
	printf("poll_waits %d\n", *fen == 0 && rptr(&r) == at_poll);
	*fen = 0;
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	ok = wait_rptr(&r, r.wptr, 10000) && *fen == 1;
	if (!ok)
		failed = 1;

	copy_linear(&r, vram, host, COPY_SIZE);
	copy_linear(&r, host + COPY_SIZE, vram, COPY_SIZE);
	/* CONST_FILL: DW fill (fillsize 2), count = (dwords - 1) * 4 */
	x = (uintptr_t)fill;
	p[0] = 11 | 2u << 30;
	p[1] = (uint32_t)x;
	p[2] = (uint32_t)(x >> 32);
	p[3] = 0xdeadbeef;
	p[4] = (FILL_SIZE / 4 - 1) * 4;
	put(&r, p, 5);
	/* ATOMIC ADD64 (operation 47) of -1 */
	x = (uintptr_t)ctr;
	memset(p, 0, sizeof(p));
	p[0] = 10 | 47u << 25;
	p[1] = (uint32_t)x;
	p[2] = (uint32_t)(x >> 32);
	p[3] = 0xffffffff;
	p[4] = 0xffffffff;
	put(&r, p, 8);
	/* TIMESTAMP, GET_GLOBAL (sub-op 2) */
	x = (uintptr_t)(ctr + 4);
	p[0] = 13 | 2 << 8;
	p[1] = (uint32_t)x;
	p[2] = (uint32_t)(x >> 32);
	put(&r, p, 3);
	/*
	 * COPY_LINEAR_RECT: 10 x 7 dwords from (3, 2) of a 256-byte pitch to
	 * (5, 4) of a 384-byte pitch; then 13 x 5 x 3 bytes from (1, 1, 1)
	 * (pitch 64, slice 512) to (7, 2, 0) (pitch 40, slice 400).
	 */
	rsrc = host + 2 * COPY_SIZE + 16384;
	rdst = host + 2 * COPY_SIZE + 65536;
	for (i = 0; i < 32768; i++)
		rsrc[i] = (uint8_t)(i * 7 + (i >> 8) + 1);
	memset(rdst, 0x5a, 65536);
	rs2 = (struct side){ rsrc, 3, 2, 0, 256, 0 };
	rd2 = (struct side){ rdst, 5, 4, 0, 384, 0 };
	rs2.slice = rs2.pitch * 16;
	rd2.slice = rd2.pitch * 16;
	copy_rect(&r, 2, &rs2, &rd2, 10, 7, 1);
	rs3 = (struct side){ rsrc + 8192, 1, 1, 1, 64, 512 };
	rd3 = (struct side){ rdst + 32768, 7, 2, 0, 40, 400 };
	copy_rect(&r, 0, &rs3, &rd3, 13, 5, 3);
	fence(&r, fen, 2015);
	commit(&r);
	churn(node);
	ok = wait_rptr(&r, r.wptr, 60000);
	printf("copy_same %d\n", ok && !memcmp(host, host + COPY_SIZE, COPY_SIZE));
	for (i = 0; i < FILL_SIZE / 4 && fill[i] == 0xdeadbeef; i++)
		;
	printf("fill_ok %d\n", i == FILL_SIZE / 4 && fill[i] == 0);
	printf("atomic %llu\n", (unsigned long long)*ctr);
	printf("timestamp_ok %d\n", ctr[4] != 0);
	i = rect_ok(2, &rs2, &rd2, 10, 7, 1, 32768, 0x5a);
	printf("rect2d_ok %d\n", i);
	failed |= !i;
	i = rect_ok(0, &rs3, &rd3, 13, 5, 3, 32768, 0x5a);
	printf("rect3d_ok %d\n", i);
	failed |= !i;
	printf("fence %u\n", *fen);
	printf("rptr %llu wptr %llu\n", (unsigned long long)rptr(&r),
	       (unsigned long long)r.wptr);
	if (!ok || memcmp(host, host + COPY_SIZE, COPY_SIZE) || *ctr != 4 || *fen != 2015)
		failed = 1;

	/* an opcode no SDMA engine has: the queue stops there */
	at_poll = r.wptr;
	p[0] = 0x3f;
	put(&r, p, 1);
	fence(&r, fen2, 7);
	commit(&r);
	usleep(500000);
	printf("bad_rptr_stuck %d\n", rptr(&r) == at_poll && *fen2 == 0);
	fflush(stdout);
	hold_queue();
	st = hsaKmtDestroyQueue(r.res.QueueId);
	printf("destroy %d\n", st);
	check("hsaKmtDestroyQueue", st);
	rect_oob(node, host, 3 * COPY_SIZE);
}

int main(void)
{
	HsaSystemProperties sp = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);	/* the test reads queue_id while it runs */
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
