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
 * Exit status 0 when every call succeeded, else 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <hsakmt.h>

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

int main(void)
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
		check("hsaKmtReleaseSystemProperties", hsaKmtReleaseSystemProperties());
	}
	st = hsaKmtCloseKFD();
	printf("close %d\n", st);
	if (st != HSAKMT_STATUS_SUCCESS)
		failed = 1;
	return failed;
}
