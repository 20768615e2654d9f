// SPDX-License-Identifier: GPL-2.0
/*
 * hip-work - HIP programs (Debian's hipcc and libamdhip64-5, ROCm 5.2.3,
 * unmodified) for kfdsim's /dev/kfd.  kfdsim never runs the ISA: it models
 * a dispatch as the first 8 kernarg bytes in ns per workgroup, which is
 * `ns` of work(ns, magic, out).  On real hardware work() spins for about
 * as long.  Prints one "key value" line per result (test/vm/long-hip.sh
 * reads them); "launched_<stream> N" is how many kernels the program put on
 * each of its streams (hi: priority high, lo: low, null: the null stream).
 *
 *   hip-work check
 *	the device, one stream, one launch of 16 x 1 ms waited for, timed
 *	with hipEventElapsedTime, hipMemcpy of 256 B to the device and 64 B
 *	back (the same bytes; both CPU copies through the VRAM mapping), 4 KiB
 *	back (staged: ROCr's SDMA or, with HSA_ENABLE_SDMA=0, blit kernel;
 *	kfdsim does either copy), 256 KiB there and
 *	back (staged, through SDMA or the blit kernel: memcpy_256k_same), 4
 *	launches in flight, hipDeviceSynchronize.
 *
 *   hip-work lc N WGS NS PERIOD_US
 *	N requests of one launch (WGS workgroups x NS ns) each waited for with
 *	hipStreamSynchronize, one every PERIOD_US on average; latencies
 *	(launch to return) in us: lat_p50, lat_p99, lat_max.  With
 *	HIP_WORK_ALLOC=BYTES each request then does hipMalloc(BYTES) and
 *	hipFree, timed together: alloc_p50, alloc_p99, alloc_max, alloc_mean.
 *
 *   hip-work copy N BYTES
 *	a warm-up round, "copy_ready", then N rounds of hipMemcpy of BYTES to
 *	the device and back (staged through ROCr's SDMA queues when BYTES is
 *	over 8 KiB and under 1 MiB), a new pattern each round: copies,
 *	copies_same (rounds that came back intact).  No kernel is launched.
 *
 *   hip-work be WGS NS INFLIGHT FILE
 *	keeps INFLIGHT launches in flight until FILE exists.
 *
 *   hip-work streams N NS
 *	N rounds of: a producer launch (8 x NS) on a low-priority stream and an
 *	event recorded after it; a high-priority consumer stream waits for
 *	the event (hipStreamWaitEvent) and launches (1 x NS); one launch on
 *	the null stream; hipDeviceSynchronize.  lat_*: round latencies.
 *
 *   hip-work kname N WGS NS SCALE_N
 *	N rounds of one work launch (WGS x NS) and one scale(SCALE_N, buf)
 *	launch (WGS workgroups), on one stream, then hipStreamSynchronize:
 *	launched_work, launched_scale.  kfdsim costs scale from its table by
 *	the name it reads in the loaded code object (test/vm/sim-kname.sh).
 *
 * HIP_WORK_PRIO (high|low|normal) gives lc/be's stream priority (default
 * normal); HIP_WORK_CU_MASK (e.g. 0xf0) creates their stream with
 * hipExtStreamCreateWithCUMask instead, on those CUs only (at the default
 * priority).  With HIP_WORK_HOLD=FILE the program prints "hold" at the end
 * and keeps its queues, idle, until FILE exists (at most 60 s).  Exit 0
 * when every HIP call and check succeeded, else 1.
 */
#include <hip/hip_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>
#include <vector>

#define MAGIC 0x6770726565ULL

__global__ void work(unsigned long long ns, unsigned long long magic, int *out)
{
	unsigned long long t0 = clock64();

	while (clock64() - t0 < ns / 10) {
	}
	if (threadIdx.x == 0 && out)
		out[blockIdx.x] = (int)magic;
}

/*
 * A second kernel, of another name, whose first kernarg is a count, not a
 * duration: kfdsim names it from the loaded code object (_Z5scalejPi) and
 * costs it from its table, not from its kernargs.
 */
__global__ void scale(unsigned int n, int *out)
{
	unsigned int i;

	for (i = threadIdx.x; i < n; i += blockDim.x)
		out[i] *= 2;
}

static int failed;

#define CHECK(call) check((call), #call, __LINE__)
static bool check(hipError_t e, const char *what, int line)
{
	if (e == hipSuccess)
		return true;
	fprintf(stderr, "line %d: %s: %s\n", line, what, hipGetErrorString(e));
	failed = 1;
	return false;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static hipStream_t make_stream(const char *prio)
{
	const char *mask = getenv("HIP_WORK_CU_MASK");
	int least = 0, greatest = 0, p = 0;
	hipStream_t s = nullptr;

	if (mask && *mask) {
		/* A static CU split: HIP's own call (no priority: the default). */
		uint32_t m = strtoul(mask, nullptr, 0);

		CHECK(hipExtStreamCreateWithCUMask(&s, 1, &m));
		return s;
	}
	CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
	if (prio && !strcmp(prio, "high"))
		p = greatest;
	else if (prio && !strcmp(prio, "low"))
		p = least;
	CHECK(hipStreamCreateWithPriority(&s, hipStreamNonBlocking, p));
	return s;
}

static void launch(hipStream_t s, unsigned int wgs, unsigned long long ns, unsigned long *count)
{
	hipLaunchKernelGGL(work, dim3(wgs), dim3(64), 0, s, ns, MAGIC, (int *)nullptr);
	if (CHECK(hipGetLastError()))
		(*count)++;
}

/* PREFIX_p50, _p99, _max and _mean of @lat (ns), in us. */
static void percentiles(const char *prefix, std::vector<unsigned long long> &lat)
{
	size_t n = lat.size();

	if (!n)
		return;
	std::sort(lat.begin(), lat.end());
	printf("%s_p50 %llu\n%s_p99 %llu\n%s_max %llu\n", prefix, lat[n / 2] / 1000, prefix,
	       lat[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1] / 1000, prefix, lat[n - 1] / 1000);
	unsigned long long sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += lat[i];
	printf("%s_mean %llu\n", prefix, sum / n / 1000);
}

static void latencies(std::vector<unsigned long long> &lat)
{
	percentiles("lat", lat);
}

static void hold(void)
{
	const char *f = getenv("HIP_WORK_HOLD");
	int i;

	if (!f)
		return;
	printf("hold\n");
	fflush(stdout);
	for (i = 0; i < 600 && access(f, F_OK); i++)
		usleep(100000);
}

/*
 * 256 KiB to the device and back, both staged (pageable, over 8 KiB and
 * under 1 MiB): ROCr's SDMA queues, or its blit kernel with
 * HSA_ENABLE_SDMA=0.
 */
static void copy_big(void)
{
	const size_t size = 256 << 10;
	std::vector<unsigned char> in(size), back(size);
	void *dev = nullptr;
	size_t i;

	for (i = 0; i < size; i++)
		in[i] = (unsigned char)((i * 13 + 5) ^ (i >> 8));
	if (!CHECK(hipMalloc(&dev, size)))
		return;
	CHECK(hipMemcpy(dev, in.data(), size, hipMemcpyHostToDevice));
	CHECK(hipMemcpy(back.data(), dev, size, hipMemcpyDeviceToHost));
	printf("memcpy_256k_same %d\n", !memcmp(in.data(), back.data(), size));
	CHECK(hipFree(dev));
	fflush(stdout);
}

static int run_check(void)
{
	unsigned long launched = 0;
	hipDeviceProp_t prop;
	hipEvent_t e0, e1;
	hipStream_t s;
	static unsigned char in[4096], back[4096];
	void *dev = nullptr;
	float ms = 0;
	int n = 0, i;

	CHECK(hipGetDeviceCount(&n));
	printf("devices %d\n", n);
	if (!CHECK(hipGetDeviceProperties(&prop, 0)))
		return 1;
	printf("arch %s\n", prop.gcnArchName);
	s = make_stream(nullptr);
	printf("stream_created %d\n", !failed);
	fflush(stdout);
	CHECK(hipEventCreate(&e0));
	CHECK(hipEventCreate(&e1));
	launch(s, 1, 1000, &launched);	/* loads the code object */
	CHECK(hipStreamSynchronize(s));
	CHECK(hipEventRecord(e0, s));
	launch(s, 16, 1000000, &launched);
	CHECK(hipEventRecord(e1, s));
	CHECK(hipStreamSynchronize(s));
	CHECK(hipEventElapsedTime(&ms, e0, e1));
	printf("first_launch_done %d\nelapsed_us %d\n", !failed, (int)(ms * 1000));
	fflush(stdout);
	for (i = 0; i < (int)sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 1);
	memset(back, 0, sizeof(back));
	CHECK(hipMalloc(&dev, 4096));
	CHECK(hipMemcpy(dev, in, 256, hipMemcpyHostToDevice));
	CHECK(hipMemcpy(back, dev, 64, hipMemcpyDeviceToHost));
	printf("memcpy_roundtrip %d\n", !memcmp(in, back, 64));
	fflush(stdout);
	CHECK(hipMemcpy(back, dev, sizeof(back), hipMemcpyDeviceToHost));
	printf("memcpy_4k %d\nmemcpy_4k_same %d\n", !failed, !memcmp(in, back, 256));
	fflush(stdout);
	copy_big();
	for (i = 0; i < 4; i++)
		launch(s, 2, 500000, &launched);
	CHECK(hipDeviceSynchronize());
	CHECK(hipFree(dev));
	printf("launched_normal %lu\n", launched);
	printf("check_done %d\n", !failed);
	fflush(stdout);
	hold();
	CHECK(hipStreamDestroy(s));
	return failed;
}

static int run_lc(int argc, char **argv)
{
	unsigned int n, wgs, period, i;
	unsigned long launched = 0;
	unsigned long long ns;
	std::vector<unsigned long long> lat, alloc;
	const char *alloc_env = getenv("HIP_WORK_ALLOC");
	size_t alloc_bytes = alloc_env ? strtoull(alloc_env, nullptr, 0) : 0;
	hipStream_t s;

	if (argc < 6)
		return 2;
	n = atoi(argv[2]);
	wgs = atoi(argv[3]);
	ns = strtoull(argv[4], nullptr, 0);
	period = atoi(argv[5]);
	s = make_stream(getenv("HIP_WORK_PRIO"));
	launch(s, 1, 1000, &launched);	/* loads the code object */
	CHECK(hipStreamSynchronize(s));
	printf("lc_ready\n");
	fflush(stdout);
	srand(getpid());
	for (i = 0; i < n && !failed; i++) {
		unsigned long long t0;

		usleep(period / 2 + (period ? rand() % period : 0));
		t0 = now_ns();
		launch(s, wgs, ns, &launched);
		CHECK(hipStreamSynchronize(s));
		lat.push_back(now_ns() - t0);
		if (alloc_bytes) {
			void *buf = nullptr;

			/* The request's own driver calls: KFD's memory ioctls. */
			t0 = now_ns();
			if (CHECK(hipMalloc(&buf, alloc_bytes)))
				CHECK(hipFree(buf));
			alloc.push_back(now_ns() - t0);
		}
	}
	printf("lc_requests %zu\n", lat.size());
	latencies(lat);
	percentiles("alloc", alloc);
	printf("launched_%s %lu\nlc_done\n", getenv("HIP_WORK_PRIO") ?: "normal", launched);
	fflush(stdout);
	hold();
	CHECK(hipStreamDestroy(s));
	return failed;
}

static int run_copy(int argc, char **argv)
{
	std::vector<unsigned char> in, back;
	unsigned int n, same = 0, i;
	void *dev = nullptr;
	size_t size, j;

	if (argc < 4)
		return 2;
	n = atoi(argv[2]);
	size = strtoul(argv[3], nullptr, 0);
	in.resize(size);
	back.resize(size);
	if (!CHECK(hipMalloc(&dev, size)))
		return 1;
	/* Round 0, the warm-up: HIP's own start-up work (its blit code object) is done after it. */
	for (i = 0; i <= n && !failed; i++) {
		if (i == 1) {
			printf("copy_ready\n");
			fflush(stdout);
		}
		for (j = 0; j < size; j++)
			in[j] = (unsigned char)(j * 31 + i * 7 + (j >> 9));
		memset(back.data(), 0, size);
		CHECK(hipMemcpy(dev, in.data(), size, hipMemcpyHostToDevice));
		CHECK(hipMemcpy(back.data(), dev, size, hipMemcpyDeviceToHost));
		same += !memcmp(in.data(), back.data(), size);
	}
	printf("copies %u\ncopies_same %u\ncopy_done\n", i ? i - 1 : 0, same ? same - 1 : 0);
	fflush(stdout);
	CHECK(hipFree(dev));
	hold();
	return failed || same != n + 1;
}

static int run_be(int argc, char **argv)
{
	unsigned int wgs, inflight, head = 0, i;
	unsigned long launched = 0, done = 0;
	unsigned long long ns;
	std::vector<hipEvent_t> ev;
	hipStream_t s;

	if (argc < 6)
		return 2;
	wgs = atoi(argv[2]);
	ns = strtoull(argv[3], nullptr, 0);
	inflight = std::max(1, atoi(argv[4]));
	s = make_stream(getenv("HIP_WORK_PRIO"));
	ev.resize(inflight);
	for (i = 0; i < inflight; i++)
		CHECK(hipEventCreateWithFlags(&ev[i], hipEventDisableTiming));
	for (i = 0; i < inflight; i++) {
		launch(s, wgs, ns, &launched);
		CHECK(hipEventRecord(ev[i], s));
	}
	while (!failed) {
		CHECK(hipEventSynchronize(ev[head]));
		if (!done++) {
			printf("be_ready\n");
			fflush(stdout);
		}
		if (!access(argv[5], F_OK))
			break;
		launch(s, wgs, ns, &launched);
		CHECK(hipEventRecord(ev[head], s));
		head = (head + 1) % inflight;
	}
	CHECK(hipStreamSynchronize(s));
	printf("be_completed %lu\nlaunched_%s %lu\nbe_done\n", launched,
	       getenv("HIP_WORK_PRIO") ?: "normal", launched);
	fflush(stdout);
	hold();
	CHECK(hipStreamDestroy(s));
	return failed;
}

static int run_streams(int argc, char **argv)
{
	unsigned long lo_n = 0, hi_n = 0, null_n = 0;
	std::vector<unsigned long long> lat;
	unsigned long long ns;
	hipStream_t lo, hi;
	hipEvent_t ev;
	unsigned int n, i;

	if (argc < 4)
		return 2;
	n = atoi(argv[2]);
	ns = strtoull(argv[3], nullptr, 0);
	lo = make_stream("low");
	hi = make_stream("high");
	CHECK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
	launch(lo, 1, 1000, &lo_n);	/* loads the code object */
	CHECK(hipDeviceSynchronize());
	printf("streams_ready\n");
	fflush(stdout);
	for (i = 0; i < n && !failed; i++) {
		unsigned long long t0 = now_ns();

		launch(lo, 8, ns, &lo_n);
		CHECK(hipEventRecord(ev, lo));
		CHECK(hipStreamWaitEvent(hi, ev, 0));
		launch(hi, 1, ns, &hi_n);
		launch(nullptr, 1, ns / 4, &null_n);
		CHECK(hipDeviceSynchronize());
		lat.push_back(now_ns() - t0);
		printf("round %u\nround_us %llu\n", i, lat.back() / 1000);
		fflush(stdout);
	}
	printf("rounds %zu\n", lat.size());
	latencies(lat);
	printf("launched_low %lu\nlaunched_high %lu\nlaunched_null %lu\nstreams_done\n", lo_n,
	       hi_n, null_n);
	fflush(stdout);
	hold();
	CHECK(hipStreamDestroy(lo));
	CHECK(hipStreamDestroy(hi));
	return failed;
}

static int run_kname(int argc, char **argv)
{
	unsigned long long ns;
	unsigned int n, wgs, sn, i;
	unsigned long w_n = 0, s_n = 0;
	hipStream_t s;
	int *out;

	if (argc < 6)
		return 2;
	n = atoi(argv[2]);
	wgs = atoi(argv[3]);
	ns = strtoull(argv[4], nullptr, 0);
	sn = atoi(argv[5]);
	s = make_stream(nullptr);
	if (!CHECK(hipMalloc((void **)&out, 4096)))
		return 1;
	for (i = 0; i < n && !failed; i++) {
		launch(s, wgs, ns, &w_n);
		hipLaunchKernelGGL(scale, dim3(wgs), dim3(64), 0, s, sn, out);
		if (CHECK(hipGetLastError()))
			s_n++;
	}
	CHECK(hipStreamSynchronize(s));
	printf("launched_work %lu\nlaunched_scale %lu\nkname_done 1\n", w_n, s_n);
	CHECK(hipFree(out));
	CHECK(hipStreamDestroy(s));
	return failed;
}

int main(int argc, char **argv)
{
	int rc = 2;

	setvbuf(stdout, nullptr, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "check"))
		rc = run_check();
	else if (argc > 1 && !strcmp(argv[1], "lc"))
		rc = run_lc(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "copy"))
		rc = run_copy(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "be"))
		rc = run_be(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "streams"))
		rc = run_streams(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "kname"))
		rc = run_kname(argc, argv);
	if (rc == 2)
		fprintf(stderr, "usage: hip-work check | lc N WGS NS PERIOD_US | copy N BYTES | be WGS NS INFLIGHT FILE | streams N NS | kname N WGS NS SCALE_N\n");
	return rc ? 1 : 0;
}
