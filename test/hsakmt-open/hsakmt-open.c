// SPDX-License-Identifier: GPL-2.0
/*
 * hsakmt-open - open the KFD through Debian's libhsakmt (ROCm's thunk) and
 * print what it reports, one "key value" line each, for
 * test/vm/sim-hsakmt.sh:
 *
 *   open <status>             hsaKmtOpenKFD()
 *   version <major>.<minor>   hsaKmtGetVersion()
 *   nodes <n>                 hsaKmtAcquireSystemProperties()
 *   node<i>.<field> <value>   hsaKmtGetNodeProperties() and the node's
 *                             memory, cache and io-link properties
 *   close <status>            hsaKmtCloseKFD()
 *
 * With "queue FILE" it also makes, on the first GPU node, what a runtime
 * makes for a queue: system memory (userptr) for the ring and the AQL
 * read/write dispatch ids, a VRAM buffer it writes and reads back through
 * its CPU mapping, then an AQL queue (hsaKmtCreateQueue), a CU mask
 * (hsaKmtSetQueueCUMask) and a priority change (hsaKmtUpdateQueue), runs AQL packets on it; prints
 * "queue_ready" and keeps the queue until FILE exists (at most 60 s):
 *
 *   vram_rw ok|bad            the VRAM buffer's CPU mapping works
 *   queue_id <id>             hsaKmtCreateQueue()
 *   doorbell ok               the doorbell page is mapped and writable
 *   cu_mask <status>          hsaKmtSetQueueCUMask(queue, 32, 0x0f)
 *   update <status>           hsaKmtUpdateQueue(queue, 100, HIGH)
 *   dispatch_wgs <n>          an AQL kernel dispatch of 2 x CUs workgroups of
 *                             1 ms (its kernarg's first 8 bytes) ...
 *   dispatch_us <us>          ... completed (its signal reached 0) after us
 *   dispatch_signal <v>       ... its completion signal's value then (0)
 *   barrier_blocked <rptr>    read_dispatch_id while a barrier-AND waits on
 *                             a signal of value 1 (1: it waits)
 *   barrier_done <rptr> <v>   read_dispatch_id and its completion signal's
 *                             value once the dependency is 0 (2 0)
 *   destroy <status>          hsaKmtDestroyQueue()
 *
 * Exit status 0 when every call succeeded, else 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hsakmt.h>
#include "../lib/aql.h"

static int failed;

static void check(const char *what, HSAKMT_STATUS st)
{
	if (st != HSAKMT_STATUS_SUCCESS) {
		printf("error %s %d\n", what, st);
		failed = 1;
	}
}

static void print_node(HSAuint32 id)
{
	HsaNodeProperties np = { 0 };
	HsaMemoryProperties *mem;
	HsaCacheProperties *cache;
	HsaIoLinkProperties *link;
	HSAuint32 i;
	HSAKMT_STATUS st;

	st = hsaKmtGetNodeProperties(id, &np);
	check("hsaKmtGetNodeProperties", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		return;
#define P(field, fmt, val) printf("node%u.%s " fmt "\n", id, field, val)
	P("cpu_cores", "%u", np.NumCPUCores);
	P("simd_count", "%u", np.NumFComputeCores);
	P("mem_banks", "%u", np.NumMemoryBanks);
	P("caches", "%u", np.NumCaches);
	P("io_links", "%u", np.NumIOLinks);
	P("simd_per_cu", "%u", np.NumSIMDPerCU);
	P("array_count", "%u", np.NumShaderBanks);
	P("arrays_per_engine", "%u", np.NumArrays);
	P("cu_per_array", "%u", np.NumCUPerArray);
	P("max_waves_per_simd", "%u", np.MaxWavesPerSIMD);
	P("wave_front_size", "%u", np.WaveFrontSize);
	P("lds_kb", "%u", np.LDSSizeInKB);
	P("vendor_id", "0x%x", np.VendorId);
	P("device_id", "0x%x", np.DeviceId);
	P("location_id", "0x%x", np.LocationId);
	P("drm_render_minor", "%d", np.DrmRenderMinor);
	P("capability", "0x%x", np.Capability.Value);
	P("doorbell_type", "%u", np.Capability.ui32.DoorbellType);
	printf("node%u.gfx %u.%u.%u\n", id, np.EngineId.ui32.Major, np.EngineId.ui32.Minor,
	       np.EngineId.ui32.Stepping);
	P("amd_name", "%s", (const char *)np.AMDName);
	P("num_cp_queues", "%u", np.NumCpQueues);
	P("num_sdma_engines", "%u", np.NumSdmaEngines);
	P("max_engine_clk", "%u", np.MaxEngineClockMhzFCompute);

	mem = calloc(np.NumMemoryBanks + 1, sizeof(*mem));
	cache = calloc(np.NumCaches + 1, sizeof(*cache));
	link = calloc(np.NumIOLinks + 1, sizeof(*link));
	if (!mem || !cache || !link) {
		failed = 1;
		goto out;
	}
	if (np.NumMemoryBanks) {
		check("hsaKmtGetNodeMemoryProperties",
		      hsaKmtGetNodeMemoryProperties(id, np.NumMemoryBanks, mem));
		for (i = 0; i < np.NumMemoryBanks; i++)
			printf("node%u.mem%u heap %u size %llu\n", id, i, mem[i].HeapType,
			       (unsigned long long)mem[i].SizeInBytes);
	}
	if (np.NumCaches) {
		check("hsaKmtGetNodeCacheProperties",
		      hsaKmtGetNodeCacheProperties(id, np.FComputeIdLo, np.NumCaches, cache));
		for (i = 0; i < np.NumCaches && np.NumFComputeCores; i++)
			printf("node%u.cache%u level %u size %u\n", id, i, cache[i].CacheLevel,
			       cache[i].CacheSize);
	}
	if (np.NumIOLinks) {
		check("hsaKmtGetNodeIoLinkProperties",
		      hsaKmtGetNodeIoLinkProperties(id, np.NumIOLinks, link));
		for (i = 0; i < np.NumIOLinks; i++)
			printf("node%u.link%u type %u from %u to %u\n", id, i, link[i].IoLinkType,
			       link[i].NodeFrom, link[i].NodeTo);
	}
out:
	free(mem);
	free(cache);
	free(link);
}

static void *alloc_mem(HSAuint32 node, HSAuint64 size, int vram)
{
	HsaMemFlags f = { 0 };
	void *mem = NULL;
	HSAuint64 va;

	f.ui32.HostAccess = 1;
	f.ui32.ExecuteAccess = 1;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.NonPaged = vram;
	f.ui32.CoarseGrain = vram;
	check("hsaKmtAllocMemory", hsaKmtAllocMemory(node, size, f, &mem));
	if (!mem)
		return NULL;
	check("hsaKmtMapMemoryToGPU", hsaKmtMapMemoryToGPU(mem, size, &va));
	return mem;
}

static void free_mem(void *mem, HSAuint64 size)
{
	if (!mem)
		return;
	check("hsaKmtUnmapMemoryToGPU", hsaKmtUnmapMemoryToGPU(mem));
	check("hsaKmtFreeMemory", hsaKmtFreeMemory(mem, size));
}

static HSAuint32 props_cus(HSAuint32 node)
{
	HsaNodeProperties np = { 0 };

	if (hsaKmtGetNodeProperties(node, &np) || !np.NumSIMDPerCU)
		return 1;
	return np.NumFComputeCores / np.NumSIMDPerCU;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Wait up to 5 s for *p == v. */
static int wait_u64(volatile uint64_t *p, uint64_t v)
{
	uint64_t end = now_ns() + 5000000000ull;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		if (now_ns() > end)
			return -1;
	return 0;
}

/*
 * A kernel dispatch, then a barrier-AND behind a signal the client holds at
 * 1, written as a runtime writes AQL: body, header last (release), write
 * index, doorbell.
 */
static void run_aql(void *ring, uint64_t *ids, uint8_t *mem, HSAuint64 *doorbell,
		    HSAuint32 cus)
{
	struct aql_packet *pkt = ring;
	struct amd_signal *done = (void *)mem, *dep = done + 1, *bdone = done + 2;
	uint64_t *kernarg = (uint64_t *)(done + 3), t0;
	uint32_t wgs = 2 * cus;

	kernarg[0] = 1000000;	/* ns per workgroup */
	done->value = 1;
	dep->value = 1;
	bdone->value = 1;
	memset(&pkt[0], 0, sizeof(pkt[0]));
	pkt[0].setup = 1;
	pkt[0].workgroup_size[0] = 64;
	pkt[0].workgroup_size[1] = 1;
	pkt[0].workgroup_size[2] = 1;
	pkt[0].grid_size[0] = 64 * wgs;
	pkt[0].grid_size[1] = 1;
	pkt[0].grid_size[2] = 1;
	pkt[0].kernel_object = 0x1000;	/* never run: the time is the kernarg's */
	pkt[0].kernarg_address = (uintptr_t)kernarg;
	pkt[0].completion_signal = (uintptr_t)done;
	t0 = now_ns();
	__atomic_store_n(&pkt[0].header, AQL_DISPATCH | AQL_BARRIER_BIT | AQL_FENCES,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ids[1], 1, __ATOMIC_RELEASE);
	*(volatile HSAuint64 *)doorbell = 0;
	printf("dispatch_wgs %u\n", wgs);
	if (wait_u64((volatile uint64_t *)&done->value, 0)) {
		printf("dispatch_us timeout\n");
		failed = 1;
		return;
	}
	printf("dispatch_us %llu\n", (unsigned long long)(now_ns() - t0) / 1000);
	wait_u64(&ids[0], 1);
	printf("dispatch_signal %lld\n", (long long)done->value);

	memset(&pkt[1], 0, sizeof(pkt[1]));
	pkt[1].kernarg_address = 0;
	memcpy((uint8_t *)&pkt[1] + 8, &(uint64_t){ (uintptr_t)dep }, 8);	/* dep_signal[0] */
	pkt[1].completion_signal = (uintptr_t)bdone;
	__atomic_store_n(&pkt[1].header, AQL_BARRIER_AND | AQL_BARRIER_BIT | AQL_FENCES,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&ids[1], 2, __ATOMIC_RELEASE);
	*(volatile HSAuint64 *)doorbell = 1;
	usleep(50000);
	printf("barrier_blocked %llu\n", (unsigned long long)__atomic_load_n(&ids[0],
									 __ATOMIC_ACQUIRE));
	__atomic_store_n(&dep->value, 0, __ATOMIC_RELEASE);
	wait_u64(&ids[0], 2);
	wait_u64((volatile uint64_t *)&bdone->value, 0);
	printf("barrier_done %llu %lld\n", (unsigned long long)ids[0], (long long)bdone->value);
}

static void run_queue(HSAuint32 node, const char *release)
{
	const HSAuint64 ring_size = 4096, vram_size = 8192;
	HsaQueueResource res = { 0 };
	HSAuint32 mask[1] = { 0x0f };
	void *ring, *ptrs, *vram;
	uint64_t *dispatch_ids;
	HSAKMT_STATUS st;
	unsigned int i;

	ring = alloc_mem(0, ring_size, 0);
	ptrs = alloc_mem(0, 4096, 0);
	vram = alloc_mem(node, vram_size, 1);
	if (!ring || !ptrs || !vram) {
		failed = 1;
		return;
	}
	for (i = 0; i < vram_size / 4; i++)
		((volatile uint32_t *)vram)[i] = i * 2654435761u;
	for (i = 0; i < vram_size / 4; i++)
		if (((volatile uint32_t *)vram)[i] != i * 2654435761u)
			break;
	printf("vram_rw %s\n", i == vram_size / 4 ? "ok" : "bad");
	if (i != vram_size / 4)
		failed = 1;
	/* amd_queue_t's read_dispatch_id and write_dispatch_id */
	dispatch_ids = ptrs;
	res.QueueRptrValue = (uintptr_t)&dispatch_ids[0];
	res.QueueWptrValue = (uintptr_t)&dispatch_ids[1];
	st = hsaKmtCreateQueue(node, HSA_QUEUE_COMPUTE_AQL, 100, HSA_QUEUE_PRIORITY_NORMAL, ring,
			       ring_size, NULL, &res);
	check("hsaKmtCreateQueue", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		goto out;
	printf("queue_id %llu\n", (unsigned long long)res.QueueId);
	if (res.Queue_DoorBell_aql) {
		*(volatile HSAuint64 *)res.Queue_DoorBell_aql = 0;
		printf("doorbell ok\n");
	} else {
		failed = 1;
	}
	st = hsaKmtSetQueueCUMask(res.QueueId, 32, mask);
	printf("cu_mask %d\n", st);
	check("hsaKmtSetQueueCUMask", st);
	st = hsaKmtUpdateQueue(res.QueueId, 100, HSA_QUEUE_PRIORITY_HIGH, ring, ring_size, NULL);
	printf("update %d\n", st);
	check("hsaKmtUpdateQueue", st);
	run_aql(ring, dispatch_ids, (uint8_t *)ptrs + 256, res.Queue_DoorBell_aql,
		props_cus(node));
	printf("queue_ready\n");
	fflush(stdout);
	for (i = 0; i < 6000 && access(release, F_OK); i++)
		usleep(10000);
	st = hsaKmtDestroyQueue(res.QueueId);
	printf("destroy %d\n", st);
	check("hsaKmtDestroyQueue", st);
out:
	free_mem(vram, vram_size);
	free_mem(ptrs, 4096);
	free_mem(ring, ring_size);
}

int main(int argc, char **argv)
{
	HsaSystemProperties sp = { 0 };
	HsaVersionInfo v = { 0 };
	HSAKMT_STATUS st;
	HSAuint32 i;

	st = hsaKmtOpenKFD();
	printf("open %d\n", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		return 1;
	check("hsaKmtGetVersion", hsaKmtGetVersion(&v));
	printf("version %u.%u\n", v.KernelInterfaceMajorVersion, v.KernelInterfaceMinorVersion);
	st = hsaKmtAcquireSystemProperties(&sp);
	check("hsaKmtAcquireSystemProperties", st);
	if (st == HSAKMT_STATUS_SUCCESS) {
		printf("nodes %u\n", sp.NumNodes);
		for (i = 0; i < sp.NumNodes; i++)
			print_node(i);
		if (argc == 3 && !strcmp(argv[1], "queue") && sp.NumNodes > 1)
			run_queue(1, argv[2]);
		check("hsaKmtReleaseSystemProperties", hsaKmtReleaseSystemProperties());
	}
	st = hsaKmtCloseKFD();
	printf("close %d\n", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		failed = 1;
	return failed;
}
