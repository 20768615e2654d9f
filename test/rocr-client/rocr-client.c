// SPDX-License-Identifier: GPL-2.0
/*
 * rocr-client - a small HSA program on Debian's ROCr (libhsa-runtime64-1,
 * unmodified) for kfdsim's /dev/kfd.  No compiler and no code object: the
 * "kernel" of each AQL kernel-dispatch packet is a dummy, and kfdsim's
 * command processor models its duration as the first 8 bytes at
 * kernarg_address (ns per workgroup) times grid / workgroup size.
 * Prints one "key value" line per result (test/vm/sim-rocr.sh reads them).
 *
 *   rocr-client check
 *	hsa_init, the GPU agent, hsa_queue_create, hsa_amd_queue_set_priority
 *	(HIGH), hsa_amd_queue_cu_set_mask (4 CUs), one dispatch of 16
 *	workgroups x 1 ms waited for with hsa_signal_wait_scacquire, a batch
 *	of 32 dispatches in flight with a signal each, a barrier-AND held by
 *	a signal the CPU then stores 0 to, hsa_queue_destroy, hsa_shut_down.
 *
 *   rocr-client lc N WGS NS PERIOD_US
 *	N requests of one dispatch (WGS workgroups x NS ns), one every
 *	PERIOD_US on average (uniform 0.5..1.5 x), each waited for; prints the
 *	latencies (submit to wait return) in us: lat_p50, lat_p99, lat_max.
 *
 *	With ROCR_CLIENT_HOLD=FILE it then prints "lc_done" and keeps its
 *	queues, idle, until FILE exists (at most 60 s).
 *
 *   rocr-client be WGS NS INFLIGHT FILE
 *	keeps INFLIGHT dispatches in flight until FILE exists; prints the
 *	number completed.
 *
 * Every completion signal is created at 1 and must reach 0 exactly once:
 * a missed completion times out (10 s), a double one leaves -1 (checked
 * for every signal 100 ms after the last wait).  Exit status 0 when every
 * call and check succeeded, else 1.  The queue's priority and CU mask can
 * be given for lc/be too: ROCR_CLIENT_PRIO (low|normal|high) and
 * ROCR_CLIENT_CUS (number of CUs in the mask).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#define MAX_DONE 8192	/* signals seen at 0, waiting for their re-check */
#define SETTLE_NS 100000000ULL	/* re-checked 100 ms after their wait */
#define WG_SIZE 64
#define QUEUE_SIZE 1024

static int failed;
static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t kernarg_pool;
static bool have_gpu, have_pool;
static hsa_queue_t *queue;
static uint64_t *kernargs;	/* one 64-byte slot per dispatch slot */
static uint64_t wait_timeout;	/* 10 s in HSA timestamp ticks */

/*
 * Signals whose wait saw 0, re-checked (still 0: no second decrement) at
 * least 100 ms later, then destroyed (ROCr backs each one with a KFD event,
 * at most 4096 per process).
 */
static struct {
	hsa_signal_t s;
	uint64_t t;
} done_q[MAX_DONE];
static unsigned long done_head, done_tail;
static unsigned long completions;	/* waits that saw 0 */
static unsigned long settled, settled_bad;

static void check(const char *what, hsa_status_t st)
{
	const char *s = NULL;

	if (st == HSA_STATUS_SUCCESS)
		return;
	hsa_status_string(st, &s);
	printf("error %s 0x%x %s\n", what, st, s ? s : "");
	failed = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static hsa_status_t find_pool(hsa_amd_memory_pool_t pool, void *data __attribute__((unused)))
{
	hsa_amd_segment_t seg;
	uint32_t flags = 0;

	hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg);
	if (seg != HSA_AMD_SEGMENT_GLOBAL)
		return HSA_STATUS_SUCCESS;
	hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags);
	if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
		kernarg_pool = pool;
		have_pool = true;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_agent(hsa_agent_t a, void *data __attribute__((unused)))
{
	hsa_device_type_t type;
	char name[64] = "";

	hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type);
	hsa_agent_get_info(a, HSA_AGENT_INFO_NAME, name);
	printf("agent %s %s\n", type == HSA_DEVICE_TYPE_GPU ? "gpu" : "cpu", name);
	if (type == HSA_DEVICE_TYPE_GPU && !have_gpu) {
		gpu = a;
		have_gpu = true;
	} else if (type == HSA_DEVICE_TYPE_CPU) {
		cpu = a;
		hsa_amd_agent_iterate_memory_pools(a, find_pool, NULL);
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_signal_t new_signal(void)
{
	hsa_signal_t s = { 0 };

	check("hsa_signal_create", hsa_signal_create(1, 0, NULL, &s));
	return s;
}

/*
 * Write a kernel dispatch (or, with @dep, a barrier-AND on it) and ring the
 * doorbell.  Return: its packet id.
 */
static uint64_t submit(uint32_t wgs, uint64_t ns, hsa_signal_t done, const hsa_signal_t *dep)
{
	uint64_t id = hsa_queue_add_write_index_screlease(queue, 1);
	uint32_t slot = id % queue->size;
	uint16_t header;

	while (id - hsa_queue_load_read_index_scacquire(queue) >= queue->size)
		usleep(100);
	if (dep) {
		hsa_barrier_and_packet_t *b = (hsa_barrier_and_packet_t *)queue->base_address + slot;

		memset((char *)b + 4, 0, sizeof(*b) - 4);
		b->dep_signal[0] = *dep;
		b->completion_signal = done;
		header = HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE;
	} else {
		hsa_kernel_dispatch_packet_t *p =
			(hsa_kernel_dispatch_packet_t *)queue->base_address + slot;
		uint64_t *ka = kernargs + slot * 8;

		*ka = ns;
		memset((char *)p + 4, 0, sizeof(*p) - 4);
		p->setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
		p->workgroup_size_x = WG_SIZE;
		p->workgroup_size_y = 1;
		p->workgroup_size_z = 1;
		p->grid_size_x = wgs * WG_SIZE;
		p->grid_size_y = 1;
		p->grid_size_z = 1;
		p->kernel_object = 0;	/* kfdsim runs no code */
		p->kernarg_address = ka;
		p->completion_signal = done;
		header = HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE;
	}
	header |= HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE;
	header |= HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE;
	__atomic_store_n((uint16_t *)((char *)queue->base_address + slot * 64), header,
			 __ATOMIC_RELEASE);
	hsa_signal_store_screlease(queue->doorbell_signal, id);
	return id;
}

/* Re-check the signals settled for 100 ms (all of them with @all). */
static void settle(bool all)
{
	uint64_t now = now_ns();

	while (done_head != done_tail) {
		unsigned int i = done_head % MAX_DONE;
		hsa_signal_value_t v;

		if (!all && now - done_q[i].t < SETTLE_NS && done_tail - done_head < MAX_DONE)
			break;
		v = hsa_signal_load_scacquire(done_q[i].s);
		if (v) {
			printf("error signal %lu: %" PRId64 " after reaching 0\n", done_head, v);
			settled_bad++;
			failed = 1;
		}
		settled++;
		hsa_signal_destroy(done_q[i].s);
		done_head++;
	}
}

/* Wait for @s to reach 0; false (and a failure) on a timeout. */
static bool wait_zero(hsa_signal_t s, const char *what)
{
	hsa_signal_value_t v;

	v = hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, wait_timeout,
				      HSA_WAIT_STATE_BLOCKED);
	if (v != 0) {
		printf("error %s: signal still %" PRId64 " after 10 s\n", what, v);
		failed = 1;
		return false;
	}
	completions++;
	settle(false);
	done_q[done_tail % MAX_DONE].s = s;
	done_q[done_tail % MAX_DONE].t = now_ns();
	done_tail++;
	return true;
}

/* Every signal is still 0 100 ms after the last wait: none completed twice. */
static void check_signals(void)
{
	usleep(SETTLE_NS / 1000);
	settle(true);
	printf("signals_zero %lu/%lu\n", settled - settled_bad, settled);
	printf("completions %lu\n", completions);
}

static hsa_amd_queue_priority_t env_prio(void)
{
	const char *e = getenv("ROCR_CLIENT_PRIO");

	if (e && !strcmp(e, "low"))
		return HSA_AMD_QUEUE_PRIORITY_LOW;
	if (e && !strcmp(e, "high"))
		return HSA_AMD_QUEUE_PRIORITY_HIGH;
	return HSA_AMD_QUEUE_PRIORITY_NORMAL;
}

static int setup(void)
{
	uint64_t freq = 0;

	check("hsa_init", hsa_init());
	if (failed)
		return -1;
	printf("hsa_init 0\n");
	hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq);
	wait_timeout = (freq ?: 1000000000ULL) * 10;
	check("hsa_iterate_agents", hsa_iterate_agents(find_agent, NULL));
	if (!have_gpu || !have_pool) {
		printf("error no %s\n", have_gpu ? "kernarg pool" : "GPU agent");
		failed = 1;
		return -1;
	}
	check("hsa_queue_create", hsa_queue_create(gpu, QUEUE_SIZE, HSA_QUEUE_TYPE_MULTI, NULL,
						   NULL, UINT32_MAX, UINT32_MAX, &queue));
	if (failed)
		return -1;
	printf("queue_create 0\n");
	printf("queue_id %" PRIu64 "\n", queue->id);
	printf("queue_size %u\n", queue->size);
	check("hsa_amd_memory_pool_allocate",
	      hsa_amd_memory_pool_allocate(kernarg_pool, QUEUE_SIZE * 64, 0, (void **)&kernargs));
	if (failed)
		return -1;
	check("hsa_amd_agents_allow_access",
	      hsa_amd_agents_allow_access(1, &gpu, NULL, kernargs));
	return failed ? -1 : 0;
}

static void teardown(void)
{
	check_signals();
	if (kernargs)
		check("hsa_amd_memory_pool_free", hsa_amd_memory_pool_free(kernargs));
	if (queue) {
		hsa_status_t st = hsa_queue_destroy(queue);

		check("hsa_queue_destroy", st);
		printf("queue_destroy %d\n", st);
	}
	check("hsa_shut_down", hsa_shut_down());
	printf("shut_down %d\n", failed ? 1 : 0);
}

static void set_prio_mask(hsa_amd_queue_priority_t prio, unsigned int cus)
{
	uint32_t mask = cus >= 32 ? ~0U : (1U << cus) - 1;
	hsa_status_t st;

	st = hsa_amd_queue_set_priority(queue, prio);
	check("hsa_amd_queue_set_priority", st);
	printf("set_priority %d\n", st);
	if (cus) {
		st = hsa_amd_queue_cu_set_mask(queue, 32, &mask);
		/* HSA_STATUS_CU_MASK_REDUCED: a mask beyond the GPU's CUs, still set */
		if (st == (hsa_status_t)HSA_STATUS_CU_MASK_REDUCED)
			st = HSA_STATUS_SUCCESS;
		check("hsa_amd_queue_cu_set_mask", st);
		printf("cu_set_mask %d\n", st);
	}
}

static int run_check(void)
{
	hsa_signal_t batch[32], dep, bar;
	uint64_t t0, rptr;
	unsigned int i;

	set_prio_mask(HSA_AMD_QUEUE_PRIORITY_HIGH, 4);
	/* one dispatch: 16 workgroups of 1 ms on 4 CUs: at least 4 ms */
	batch[0] = new_signal();
	t0 = now_ns();
	submit(16, 1000000, batch[0], NULL);
	if (wait_zero(batch[0], "dispatch"))
		printf("dispatch_us %" PRIu64 "\n", (now_ns() - t0) / 1000);
	/* 32 in flight, waited for in order */
	for (i = 0; i < 32; i++) {
		batch[i] = new_signal();
		submit(2, 100000, batch[i], NULL);
	}
	for (i = 0; i < 32; i++)
		if (!wait_zero(batch[i], "batch"))
			break;
	printf("batch_done %u\n", i);
	/* a barrier-AND on a signal the CPU holds at 1, then stores 0 to */
	dep = new_signal();
	bar = new_signal();
	submit(0, 0, bar, &dep);
	usleep(200000);
	rptr = hsa_queue_load_read_index_scacquire(queue);
	printf("barrier_blocked %d\n", hsa_signal_load_scacquire(bar) == 1 &&
	       rptr == hsa_queue_load_write_index_scacquire(queue) - 1);
	hsa_signal_store_screlease(dep, 0);
	printf("barrier_done %d\n", wait_zero(bar, "barrier"));
	hsa_signal_destroy(dep);
	printf("read_index %" PRIu64 " write_index %" PRIu64 "\n",
	       hsa_queue_load_read_index_scacquire(queue),
	       hsa_queue_load_write_index_scacquire(queue));
	return 0;
}

static int run_lc(int argc, char **argv)
{
	unsigned int n, wgs, period, i;
	uint64_t ns, *lat, sum;
	const char *hold;
	hsa_signal_t s;

	if (argc < 4)
		return -1;
	n = atoi(argv[0]);
	wgs = atoi(argv[1]);
	ns = strtoull(argv[2], NULL, 0);
	period = atoi(argv[3]);
	if (!n)
		return -1;
	lat = calloc(n, sizeof(*lat));
	set_prio_mask(env_prio(), getenv("ROCR_CLIENT_CUS") ? atoi(getenv("ROCR_CLIENT_CUS")) : 0);
	printf("lc_ready\n");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		uint64_t t0;

		usleep(period / 2 + rand() % (period + 1));
		s = new_signal();
		t0 = now_ns();
		submit(wgs, ns, s, NULL);
		if (!wait_zero(s, "lc"))
			break;
		lat[i] = (now_ns() - t0) / 1000;
	}
	n = i;
	for (i = 1; i < n; i++) {	/* insertion sort: n is small */
		uint64_t v = lat[i];
		unsigned int j = i;

		for (; j && lat[j - 1] > v; j--)
			lat[j] = lat[j - 1];
		lat[j] = v;
	}
	printf("lc_requests %u\n", n);
	if (n) {
		printf("lat_p50 %" PRIu64 "\n", lat[n / 2]);
		printf("lat_p99 %" PRIu64 "\n", lat[(n * 99 + 99) / 100 - 1]);
		printf("lat_max %" PRIu64 "\n", lat[n - 1]);
		for (sum = 0, i = 0; i < n; i++)
			sum += lat[i];
		printf("lat_mean %" PRIu64 "\n", sum / n);
	}
	free(lat);
	hold = getenv("ROCR_CLIENT_HOLD");
	if (hold) {
		printf("lc_done\n");
		for (i = 0; i < 600 && access(hold, F_OK); i++)
			usleep(100000);
	}
	return 0;
}

static int run_be(int argc, char **argv)
{
	unsigned int wgs, inflight, i, done = 0;
	hsa_signal_t ring[64];
	const char *stop;
	uint64_t ns;

	if (argc < 4)
		return -1;
	wgs = atoi(argv[0]);
	ns = strtoull(argv[1], NULL, 0);
	inflight = atoi(argv[2]);
	stop = argv[3];
	if (!inflight || inflight > 64)
		return -1;
	set_prio_mask(env_prio(), getenv("ROCR_CLIENT_CUS") ? atoi(getenv("ROCR_CLIENT_CUS")) : 0);
	for (i = 0; i < inflight; i++) {
		ring[i] = new_signal();
		submit(wgs, ns, ring[i], NULL);
	}
	printf("be_ready\n");
	fflush(stdout);
	/* one new signal per dispatch, each re-checked 100 ms after its wait */
	for (i = 0; !failed; i = (i + 1) % inflight) {
		if (!wait_zero(ring[i], "be"))
			break;
		done++;
		if (access(stop, F_OK) == 0)
			break;
		ring[i] = new_signal();
		submit(wgs, ns, ring[i], NULL);
	}
	/* drain what is still in flight */
	for (unsigned int k = 1; k < inflight && !failed; k++)
		if (wait_zero(ring[(i + k) % inflight], "be drain"))
			done++;
	printf("be_completed %u\n", done);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: rocr-client check | lc N WGS NS PERIOD_US | be WGS NS INFLIGHT FILE\n");
		return 2;
	}
	if (setup() == 0) {
		if (!strcmp(argv[1], "check"))
			ret = run_check();
		else if (!strcmp(argv[1], "lc"))
			ret = run_lc(argc - 2, argv + 2);
		else if (!strcmp(argv[1], "be"))
			ret = run_be(argc - 2, argv + 2);
		if (ret)
			fprintf(stderr, "rocr-client: bad arguments\n");
	}
	teardown();
	return failed || ret ? 1 : 0;
}
