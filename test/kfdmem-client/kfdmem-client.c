// SPDX-License-Identifier: GPL-2.0
/*
 * kfdmem-client - raw /dev/kfd ioctls that ROCm 6.x's thunk issues and
 * Debian's libhsakmt 5.2.3 does not: AVAILABLE_MEMORY (hipMemGetInfo) and
 * WAIT_EVENTS with event ages (KFD 1.14).  One "key value" line per
 * result, for test/vm/sim-kfdmem.sh:
 *
 *   version <major>.<minor>     GET_VERSION
 *   avail_unbound <rc> <bytes>  AVAILABLE_MEMORY before ACQUIRE_VM (KFD
 *                               answers any device of the process)
 *   bad_gpu_id <errno>          AVAILABLE_MEMORY of gpu_id 0x1234
 *   avail <bytes>               after ACQUIRE_VM, nothing allocated
 *   vram_drop <bytes>           its drop after an 8 MiB VRAM allocation
 *   vram_back <bytes>           available after that buffer's FREE
 *   small_drop <bytes>          the drop after a 4 KiB VRAM allocation
 *   age_current <result>        WAIT_EVENTS (200 ms) of a new, unsignalled
 *                               SIGNAL event with its age (1)
 *   age_stale <result> <age>    SET_EVENT, RESET_EVENT, then WAIT_EVENTS
 *                               (10 s) with age 1: the result, the age
 *                               written back
 *   age_current2 <result>       WAIT_EVENTS (200 ms) with that age (2)
 *   age_none <result>           WAIT_EVENTS (200 ms) with age 0 (no age)
 *   age_woken <result> <age>    WAIT_EVENTS (10 s) with age 2 while a
 *                               thread sets the event 300 ms later
 *
 * result is complete, timeout or fail (KFD_IOC_WAIT_RESULT_*), or
 * error:<errno> when the ioctl failed.
 *
 * "kfdmem-client hsakmt" asks the system's libhsakmt instead (dlopen: it
 * is a real client of AVAILABLE_MEMORY from ROCm 5.3 on; Debian's 5.2.3
 * has no such entry point):
 *
 *   hsakmt_available absent|<status> <bytes>   hsaKmtAvailableMemory(1)
 *
 * Exit status 0 when every call that must succeed did, else 1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TOPO "/sys/devices/virtual/kfd/kfd/topology/nodes/1/"

/*
 * The /dev/kfd ABI used here, from the kernel's uapi/linux/kfd_ioctl.h
 * (which needs drm/drm.h, not installed here; as test/gpload does).
 */
struct kfd_ioctl_get_version_args {
	uint32_t major_version;
	uint32_t minor_version;
};

struct kfd_ioctl_get_available_memory_args {
	uint64_t available;
	uint32_t gpu_id;
	uint32_t pad;
};

struct kfd_ioctl_acquire_vm_args {
	uint32_t drm_fd;
	uint32_t gpu_id;
};

struct kfd_ioctl_alloc_memory_of_gpu_args {
	uint64_t va_addr;
	uint64_t size;
	uint64_t handle;
	uint64_t mmap_offset;
	uint32_t gpu_id;
	uint32_t flags;
};

struct kfd_ioctl_free_memory_of_gpu_args {
	uint64_t handle;
};

struct kfd_ioctl_create_event_args {
	uint64_t event_page_offset;
	uint32_t event_trigger_data;
	uint32_t event_type;
	uint32_t auto_reset;
	uint32_t node_id;
	uint32_t event_id;
	uint32_t event_slot_index;
};

struct kfd_ioctl_set_event_args {
	uint32_t event_id;
	uint32_t pad;
};

struct kfd_ioctl_wait_events_args {
	uint64_t events_ptr;
	uint32_t num_events;
	uint32_t wait_for_all;
	uint32_t timeout;
	uint32_t wait_result;
};

/*
 * struct kfd_event_data: a union of 32 bytes (memory exception data; from
 * KFD 1.14 on, signal_event_data.last_event_age at its start), the
 * extension pointer, the event id.
 */
struct event_data {
	union {
		uint64_t last_event_age;
		uint8_t exception_data[32];
	};
	uint64_t ext;
	uint32_t event_id;
	uint32_t pad;
};

#define KFD_IOC_EVENT_SIGNAL 0
#define KFD_IOC_WAIT_RESULT_COMPLETE 0
#define KFD_IOC_WAIT_RESULT_TIMEOUT 1
#define KFD_IOC_ALLOC_MEM_FLAGS_VRAM (1U << 0)
#define KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE (1U << 31)
#define AMDKFD_IOC_GET_VERSION _IOR('K', 0x01, struct kfd_ioctl_get_version_args)
#define AMDKFD_IOC_CREATE_EVENT _IOWR('K', 0x08, struct kfd_ioctl_create_event_args)
#define AMDKFD_IOC_SET_EVENT _IOW('K', 0x0A, struct kfd_ioctl_set_event_args)
#define AMDKFD_IOC_RESET_EVENT _IOW('K', 0x0B, struct kfd_ioctl_set_event_args)
#define AMDKFD_IOC_WAIT_EVENTS _IOWR('K', 0x0C, struct kfd_ioctl_wait_events_args)
#define AMDKFD_IOC_ACQUIRE_VM _IOW('K', 0x15, struct kfd_ioctl_acquire_vm_args)
#define AMDKFD_IOC_ALLOC_MEMORY_OF_GPU _IOWR('K', 0x16, struct kfd_ioctl_alloc_memory_of_gpu_args)
#define AMDKFD_IOC_FREE_MEMORY_OF_GPU _IOW('K', 0x17, struct kfd_ioctl_free_memory_of_gpu_args)
#define AMDKFD_IOC_AVAILABLE_MEMORY _IOWR('K', 0x23, struct kfd_ioctl_get_available_memory_args)

static int kfd, failed;
static uint32_t gpu_id, event_id;

static long topo(const char *file, const char *key)
{
	char path[256], k[64];
	long v = -1, x;
	FILE *f;

	snprintf(path, sizeof(path), TOPO "%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!key) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
	} else {
		while (fscanf(f, "%63s %ld", k, &x) == 2)
			if (!strcmp(k, key))
				v = x;
	}
	fclose(f);
	return v;
}

static int available(uint32_t id, uint64_t *bytes)
{
	struct kfd_ioctl_get_available_memory_args a = { .gpu_id = id };
	int rc = ioctl(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &a);

	*bytes = a.available;
	return rc ? errno : 0;
}

static uint64_t must_available(void)
{
	uint64_t b;
	int e = available(gpu_id, &b);

	if (e) {
		printf("error AVAILABLE_MEMORY %d\n", e);
		failed = 1;
	}
	return b;
}

static uint64_t alloc_vram(uint64_t va, uint64_t size)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {
		.va_addr = va, .size = size, .gpu_id = gpu_id,
		.flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
	};

	if (ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a)) {
		printf("error ALLOC_MEMORY_OF_GPU %d\n", errno);
		failed = 1;
		return 0;
	}
	return a.handle;
}

static void free_mem(uint64_t handle)
{
	struct kfd_ioctl_free_memory_of_gpu_args a = { .handle = handle };

	if (ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &a)) {
		printf("error FREE_MEMORY_OF_GPU %d\n", errno);
		failed = 1;
	}
}

static void memory(void)
{
	struct kfd_ioctl_acquire_vm_args vm = { .gpu_id = gpu_id };
	uint64_t b, before, h;
	char path[64];
	int e;

	e = available(gpu_id, &b);
	printf("avail_unbound %d %llu\n", e, (unsigned long long)b);
	e = available(0x1234, &b);
	printf("bad_gpu_id %d\n", e);

	snprintf(path, sizeof(path), "/dev/dri/renderD%ld", topo("properties", "drm_render_minor"));
	vm.drm_fd = open(path, O_RDWR | O_CLOEXEC);
	if (vm.drm_fd == (uint32_t)-1 || ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &vm)) {
		printf("error ACQUIRE_VM %s %d\n", path, errno);
		failed = 1;
		return;
	}
	before = must_available();
	printf("avail %llu\n", (unsigned long long)before);
	h = alloc_vram(0x100000000ULL, 8 << 20);
	printf("vram_drop %lld\n", (long long)(before - must_available()));
	if (h)
		free_mem(h);
	printf("vram_back %llu\n", (unsigned long long)must_available());
	h = alloc_vram(0x200000000ULL, 4096);
	printf("small_drop %lld\n", (long long)(before - must_available()));
	if (h)
		free_mem(h);
}

static const char *result(int rc, uint32_t r)
{
	static char buf[32];

	if (rc) {
		snprintf(buf, sizeof(buf), "error:%d", errno);
		return buf;
	}
	return r == KFD_IOC_WAIT_RESULT_COMPLETE ? "complete" :
	       r == KFD_IOC_WAIT_RESULT_TIMEOUT ? "timeout" : "fail";
}

/* WAIT_EVENTS on the one event with @age; the age KFD wrote back in *@age. */
static const char *wait_age(uint64_t *age, uint32_t ms)
{
	struct event_data ed = { .last_event_age = *age, .event_id = event_id };
	struct kfd_ioctl_wait_events_args a = {
		.events_ptr = (uintptr_t)&ed, .num_events = 1, .wait_for_all = 1, .timeout = ms,
	};
	int rc = ioctl(kfd, AMDKFD_IOC_WAIT_EVENTS, &a);

	*age = ed.last_event_age;
	return result(rc, a.wait_result);
}

static int event_op(unsigned long cmd)
{
	struct kfd_ioctl_set_event_args a = { .event_id = event_id };

	if (ioctl(kfd, cmd, &a)) {
		printf("error event ioctl %lx %d\n", cmd, errno);
		failed = 1;
		return -1;
	}
	return 0;
}

static void *setter(void *unused)
{
	(void)unused;
	usleep(300000);
	event_op(AMDKFD_IOC_SET_EVENT);
	return NULL;
}

static void ages(void)
{
	struct kfd_ioctl_create_event_args c = { .event_type = KFD_IOC_EVENT_SIGNAL };
	const char *r;
	pthread_t t;
	uint64_t age;

	if (ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &c)) {
		printf("error CREATE_EVENT %d\n", errno);
		failed = 1;
		return;
	}
	event_id = c.event_id;
	age = 1;
	printf("age_current %s\n", wait_age(&age, 200));
	event_op(AMDKFD_IOC_SET_EVENT);
	event_op(AMDKFD_IOC_RESET_EVENT);
	age = 1;
	r = wait_age(&age, 10000);
	printf("age_stale %s %llu\n", r, (unsigned long long)age);
	age = 2;
	printf("age_current2 %s\n", wait_age(&age, 200));
	age = 0;
	printf("age_none %s\n", wait_age(&age, 200));
	age = 2;
	if (pthread_create(&t, NULL, setter, NULL)) {
		failed = 1;
		return;
	}
	r = wait_age(&age, 10000);
	pthread_join(t, NULL);
	printf("age_woken %s %llu\n", r, (unsigned long long)age);
}

/* libhsakmt's hsaKmtAvailableMemory() on the first GPU node, if it has one. */
static int hsakmt(void)
{
	int (*avail)(uint32_t node, uint64_t *bytes), (*kfd_open)(void), (*kfd_close)(void);
	int (*props)(void *sp);
	uint64_t sp[32] = { 0 }, bytes = 0;
	void *lib = dlopen("libhsakmt.so.1", RTLD_NOW);
	int st;

	if (!lib) {
		printf("error dlopen %s\n", dlerror());
		return 1;
	}
	avail = (int (*)(uint32_t, uint64_t *))dlsym(lib, "hsaKmtAvailableMemory");
	kfd_open = (int (*)(void))dlsym(lib, "hsaKmtOpenKFD");
	kfd_close = (int (*)(void))dlsym(lib, "hsaKmtCloseKFD");
	props = (int (*)(void *))dlsym(lib, "hsaKmtAcquireSystemProperties");
	if (!avail) {
		printf("hsakmt_available absent\n");
		return 0;
	}
	if (!kfd_open || !kfd_close || !props || kfd_open() || props(sp)) {
		printf("error hsaKmtOpenKFD/hsaKmtAcquireSystemProperties\n");
		return 1;
	}
	st = avail(1, &bytes);
	printf("hsakmt_available %d %llu\n", st, (unsigned long long)bytes);
	kfd_close();
	return st != 0;
}

int main(int argc, char **argv)
{
	struct kfd_ioctl_get_version_args v = { 0 };
	long id = topo("gpu_id", NULL);

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "hsakmt"))
		return hsakmt();
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	gpu_id = id;
	if (kfd < 0 || ioctl(kfd, AMDKFD_IOC_GET_VERSION, &v) || id <= 0) {
		printf("error open/GET_VERSION/gpu_id %d\n", errno);
		return 1;
	}
	printf("version %u.%u\n", v.major_version, v.minor_version);
	memory();
	ages();
	close(kfd);
	return failed;
}
