// SPDX-License-Identifier: GPL-2.0
/*
 * gpload - user-space driver and load generator for kfdsim's simulated GPU.
 *
 *   gpload [lc|be|churn|idle|producer] [--mode M] ...
 *     lc    : latency-critical requests of --k dispatches (--wg workgroups of
 *             --wg-us each), periodic or --poisson every --period-us;
 *             the first at once, or at --start-at US (CLOCK_MONOTONIC, us:
 *             processes started apart can send their first request together);
 *             measures submit -> completion per request
 *     be    : best-effort stream, keeps --inflight dispatches in flight per
 *             queue; measures completed work (workgroup-us) per second
 *     churn : creates and destroys short-lived queues (one at a time: a
 *             destroy that fails with EBUSY is retried; ETIME and EIO mean
 *             KFD freed the queue anyway); each queue's packet is waited
 *             for --drain-ms (default 10000), and --gap-ms pass after each
 *             destroy
 *     idle  : creates queues and waits (registration/scan tests)
 *     producer: serves the dependencies of an lc --dep-shm process (below)
 *   gpload test NAME : kfdsim behaviour tests (TAP lines), see selftest.c
 *   gpload maps ...  : gpreempt's control maps under stress (soak), see maps.c
 *
 * Every packet has its own completion signal; gpload checks that each one
 * was incremented exactly once and that the read index caught up with the
 * write index at the end.  --rocr (or the word "rocr") behaves like ROCr:
 * create at priority 7, then UPDATE_QUEUE to --prio with percent 100 (and
 * again every --update-ms).  --debug marks the process debugged
 * (kfd_dbg_trap_enable).  --evict-ms N evicts the process's own queues N ms
 * after the start (restored before the final drain).  --pfnmap puts the
 * read/write indices in a VM_PFNMAP driver buffer (mmap of /dev/kfdsim),
 * which cannot be pinned, like a TTM-mmapped BO.  --sdma creates SDMA queues
 * (their packets run one at a time on a copy engine, for --wg x --wg-us);
 * --pm4 creates compute queues of PM4 format (kfdsim runs their packets as
 * an AQL queue's; gpreempt cannot read their progress).
 * --context secondary puts the queues in a secondary KFD context of the
 * process (AMDKFD_IOC_CREATE_PROCESS on a second open, 7.2+ layouts);
 * --be-prio P (lc mode) also keeps a best-effort queue (--be-wg x
 * --be-wg-us, --inflight deep) busy in the other context of the same
 * process; --hold-ms N makes kfdsim keep a reference on the secondary context
 * for N ms (another holder: its teardown comes long before its last put).
 * --gpu D[,D...] puts queue i on device D[i % n] (kfdsim ndev=); the other
 * queues (churn, --be-prio) go on the first one.
 * Realistic workloads: --barrier sets the AQL barrier bit on every dispatch
 * (each waits for the previous one: a chain of dependent kernels, as a HIP
 * stream); --copy-us U (lc) makes each request first copy its input on the
 * process's own SDMA queue (U us; created at the start, same priority), wait
 * for the copy, then submit its --k dispatches: the latency covers the copy;
 * --wg-us-max V draws each dispatch's workgroup time uniformly in
 * [--wg-us, V] (seeded: a training loop's kernels of varying length).
 * --nopreempt-us U adds a queue at --prio with one workgroup of U us that
 * CWSR cannot save (KFDSIM_PKT_F_NOPREEMPT: a wave spinning in its trap
 * handler); it is never drained nor verified.
 * --json reports gpu_busy_us: workgroups x workgroup time of the completed
 * dispatches (copies excluded; their time is copy_us x copies).
 * Cross-queue dependencies (AQL barrier-AND packets, HIP's hipStreamWaitEvent):
 * a request of the latency-critical stream waits on a lower-priority
 * producer stream.  Every queue of a dependency has the same signal area
 * (struct dep_area, gpload.h): completion signals of both queues, the
 * dependency signals S, and a request ring.
 * --dep-stream P (lc): the same process also keeps a producer queue at KFD
 * priority P with --dep-backlog N (default 2) dispatches of --be-wg x
 * --dep-wg-us (default 1000) in flight, refilled.  Each request appends one
 * such "production" dispatch that signals S (a zeroed dependency slot) to
 * the producer queue, then submits a BARRIER_AND on S and its --k dispatches
 * to the LC queue; its latency runs from there to its last dispatch's end.
 * --dep-shm NAME (lc) and "producer --shm NAME": the same across two
 * processes (an IPC event).  /dev/shm/NAME is the signal area of both
 * processes' queues (MAP_SHARED: kfdsim pins the same pages for both).
 * Protocol, one producer and one LC process per NAME:
 *  1. the producer creates and maps NAME, creates its queue (signals
 *     sig[1]), sets magic, then producer_pid: it serves from then on;
 *  2. the LC process maps NAME, waits (10 s at most) for producer_pid, and
 *     creates its queue (signals sig[0]);
 *  3. a request: LC zeroes S = dep[n % DEP_SLOTS] (after checking that
 *     its last use was signalled exactly once), submits BARRIER_AND(S) and
 *     its --k dispatches, then posts S: req[head % DEP_SLOTS] = S and
 *     req_us = the submit time, then req_head + 1 (release);
 *  4. the producer polls the ring every 100 us: for each posted S (acquire
 *     of req_head) it appends a production dispatch (--wg x --wg-us)
 *     signalling S behind its own backlog (--inflight dispatches of the
 *     same size, refilled), then req_tail + 1; its latency, per request, is
 *     from req_us to that dispatch's completion;
 *  5. SIGTERM: LC stops posting and drains; the producer clears
 *     producer_pid, serves what was posted until then, drains, and unlinks
 *     NAME (a running LC keeps its mapping).  An LC whose request can no
 *     longer be served (the producer is gone) signals S from the CPU so that
 *     its queue drains, and counts an error.  Stop the LC first.
 * Each side verifies its own packets exactly once; the LC also checks each
 * S it used is exactly 1 (the production dispatch ran exactly once).
 * SIGINT/SIGTERM: stop submitting, drain, verify, report.
 * --destroy-ms N destroys the last of --queues N ms after the start, its
 * work unverified (its process keeps the others).
 * --reset-ms N marks the process's first device as having a reset queue
 * (6.12 pdd->has_reset_queue) N ms after the start, SIGUSR1 does it at
 * once; its work is then lost and not verified.  With --reset-queue I it
 * resets its queue I instead, as KFD resets a queue whose preemption timed
 * out (only that queue goes inactive, the others keep running).
 * --remap-ids FILE (idle) is hostile: once its queues exist, it maps FILE
 * over the CPU page that holds queue 0's dispatch ids (MAP_FIXED, the GPU's
 * view is unchanged), prints "remapped", never touches that page again and
 * exits without draining (S3 F6: a FUSE file that never answers a read).
 * --userptr-stall FILE (REVIEW-S4 S4-1) is hostile: once its queues run, a
 * thread maps FILE privately and has /dev/kfd map it to the GPU as USERPTR
 * memory (ACQUIRE_VM on the first GPU, ALLOC_MEMORY_OF_GPU, then
 * MAP_MEMORY_TO_GPU, which pins the pages under p->mutex, as amdgpu's
 * hmm_range_fault() does): on a FUSE file that never answers, the ioctl
 * holds the process's p->mutex until the server goes.  It prints
 * "userptr: mapping" before the ioctl and "userptr: done RC" after it; the
 * queues keep working meanwhile.
 * --userptr-loop HZ registers a small anonymous USERPTR buffer with /dev/kfd
 * (mapped to the first GPU) and invalidates it HZ times a second for the
 * whole run (madvise(MADV_DONTNEED), munmap + mmap in turn): each one is an
 * MMU-notifier eviction of the process by KFD.  It prints
 * "userptr_invalidations=N rc=R" at the end (R < 0: the loop failed).
 * --cu-mask-loop (with --cu-mask) sets the mask on every queue again and
 * again, back to back, for the whole run, and prints "cu_mask_sets=N" at
 * the end (S4-10: callers sleeping in SET_CU_MASK hold kretprobe instances).
 * --hide-ids makes the CPU page of every queue's dispatch ids unreadable
 * (PROT_NONE over it) right after the queue is created, and works on
 * through a second view of the same memory (S4-12: a client that does not
 * map its ids where gpreempt reads them); the simulated GPU is unaffected.
 * --forge-ids does the same with a readable page of zeros (present, both
 * ids 0: "idle") instead of PROT_NONE (S5-4: forged, not unreadable, ids).
 * --wptr-flap (idle) is hostile to kfdsim's accounting: every millisecond
 * queue 0's write index, the owner's to write, jumps ahead of the read index
 * (by one, or by 2^40; no packet behind either, the headers stay INVALID)
 * and back.  It is put back before the drain.
 * --mutex-threads N keeps the process's own p->mutex busy while it runs (S3
 * F20, evasion): N threads loop on an ioctl that takes it, and the count of
 * those ioctls is printed at the end ("mutex_ioctls=").  The ioctl is
 * kfdsim's queue query (cheap, as KFD's SET_MEMORY_POLICY), or with
 * --mutex-us U one that works U us under the mutex (as KFD's memory
 * mapping ioctls do).
 * --dbg-escape efault|flip (REVIEW-S5 S5-1) is hostile: each SIGUSR2 makes
 * the process undo its own suspend-parks through KFD's debugger paths, once:
 * efault is a DBG_TRAP_ENABLE on itself whose runtime info address is not
 * mapped (KFD resumes every queue, then fails with EFAULT), flip an enable
 * and a disable back to back.  It prints "dbg-escape NAME: rc=RC".
 * --idle-queue-prio P (S5-2) adds one queue at priority P that is never
 * written (its idle queue above the working one).
 * Exit status: 0 = every packet completed exactly once, 1 = not, 2 = usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "gpload.h"

static struct {
	const char *mode;
	int prio, queues, wg, k, inflight, update_ms, evict_ms, be_prio, be_wg, hold_ms, gap_ms;
	int drain_ms, reset_ms, destroy_ms, mutex_threads, mutex_us;
	int dep_prio, dep_backlog;
	double duration, wg_us, period_us, be_wg_us, wg_us_max, copy_us, dep_wg_us, start_at;
	double nopreempt_us;
	const char *dep_shm;
	bool poisson, rocr, quiet, debug, secondary;
	const char *json, *lat_out;
	unsigned int seed;
} opt = {
	.mode = "lc", .prio = 7, .queues = 1, .wg = 8, .k = 1, .inflight = 4,
	.duration = 5, .wg_us = 200, .period_us = 5000, .seed = 1,
	.be_prio = -1, .be_wg = 8, .be_wg_us = 2000, .drain_ms = 10000,
	.dep_prio = -1, .dep_backlog = 2, .dep_wg_us = 1000,
};

/* The process's two KFD contexts: the primary's file, a secondary's or -1. */
static int fd_primary = -1, fd_secondary = -1;

/* --be-prio: the best-effort queue in the other context. */
static struct gq beq;

/* --gpu: queue i goes on device gpus[i % ngpus]. */
#define MAX_GPUS 64
static uint32_t gpus[MAX_GPUS];
static int ngpus = 1;

static int parse_gpus(const char *s)
{
	char *end;

	ngpus = 0;
	do {
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v >= MAX_GPUS || ngpus == MAX_GPUS ||
		    (*end && *end != ','))
			return -1;
		gpus[ngpus++] = v;
		s = end + 1;
	} while (*end);
	return 0;
}
/* --copy-us: the process's SDMA queue for its requests' input copies. */
static struct gq copyq;
/* --nopreempt-us: a queue with one workgroup CWSR cannot save (never drained). */
static struct gq npq;
static long copies;

/* Workgroup time of the next dispatch: --wg-us, or uniform up to --wg-us-max. */
static double wg_time(void)
{
	if (opt.wg_us_max <= opt.wg_us)
		return opt.wg_us;
	return opt.wg_us + drand48() * (opt.wg_us_max - opt.wg_us);
}

/* Dependencies (--dep-stream, --dep-shm, producer): the shared signal area. */
static struct dep_area *dep;
static size_t dep_len;
static struct gq prodq;		/* --dep-stream: the producer stream's queue */
static bool prod_on;
static long prod_packets, productions, barriers;
static bool dep_used[DEP_SLOTS];

/* Map the signal area: @shm's (created if missing), or anonymous memory. */
static int dep_map(const char *shm)
{
	char name[256];
	void *m;
	int f;

	dep_len = (sizeof(*dep) + 4095) & ~(size_t)4095;
	if (!shm) {
		m = mmap(NULL, dep_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	} else {
		snprintf(name, sizeof(name), "%s%s", *shm == '/' ? "" : "/", shm);
		f = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (f < 0 || ftruncate(f, dep_len)) {
			fprintf(stderr, "gpload: shm %s: %s\n", name, strerror(errno));
			return -1;
		}
		m = mmap(NULL, dep_len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
		close(f);
	}
	if (m == MAP_FAILED) {
		perror("gpload: map the signal area");
		return -1;
	}
	dep = m;
	return 0;
}

/* Dependency slot of request @n: its last use signalled exactly once; zeroed. */
static _Atomic uint64_t *dep_claim(long n)
{
	int s = n % DEP_SLOTS;
	uint64_t v = atomic_load(&dep->dep[s]);

	if (dep_used[s] && v != 1) {
		fprintf(stderr, "gpload: dependency %d signalled %llu times\n", s,
			(unsigned long long)v);
		doubles++;
	}
	dep_used[s] = true;
	atomic_store(&dep->dep[s], 0);
	return &dep->dep[s];
}

/* At the end: every dependency slot used was signalled exactly once. */
static void dep_verify(void)
{
	int s;

	for (s = 0; s < DEP_SLOTS; s++) {
		uint64_t v = atomic_load(&dep->dep[s]);

		if (dep_used[s] && v != 1) {
			fprintf(stderr, "gpload: dependency %d: signal %llu at the end\n", s,
				(unsigned long long)v);
			doubles++;
		}
	}
}

static bool producer_alive(void)
{
	pid_t pid = atomic_load(&dep->producer_pid);

	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/*
 * --dep-shm: post dependency slot @s (its request submitted at @t); returns
 * the ring position.
 */
static uint64_t dep_post(_Atomic uint64_t *s, double t)
{
	uint64_t h = atomic_load_explicit(&dep->req_head, memory_order_relaxed);

	atomic_store_explicit(&dep->req[h % DEP_SLOTS], s - dep->dep, memory_order_relaxed);
	atomic_store_explicit(&dep->req_us[h % DEP_SLOTS], t, memory_order_relaxed);
	atomic_store_explicit(&dep->req_head, h + 1, memory_order_release);
	return h;
}

/*
 * --dep-shm, while waiting for request @h on slot @s: if the producer is
 * gone before taking it, signal @s from the CPU so that the queue drains,
 * and count an error.
 */
static void dep_orphan(uint64_t h, _Atomic uint64_t *s)
{
	if (atomic_load(&dep->req_tail) > h || producer_alive() || atomic_load(s))
		return;
	fprintf(stderr, "gpload: the producer is gone: request %llu signalled by the CPU\n",
		(unsigned long long)h);
	atomic_store(s, 1);
	errors++;
}

static void feed_prod(void)
{
	if (!prod_on)
		return;
	prod_packets += q_retire(&prodq);
	while (q_outstanding(&prodq) < opt.dep_backlog)
		q_submit(&prodq, opt.be_wg, opt.dep_wg_us);
}

static bool be_on;
static long be_packets;

static void feed_be(void)
{
	feed_prod();
	if (!be_on)
		return;
	be_packets += q_retire(&beq);
	while (q_outstanding(&beq) < opt.inflight)
		q_submit(&beq, opt.be_wg, opt.be_wg_us);
}

static volatile sig_atomic_t stop;
static volatile sig_atomic_t reset_now;	/* SIGUSR1: --reset-ms now */
static volatile sig_atomic_t escape_now;	/* SIGUSR2: --dbg-escape now */
static const char *dbg_escape;	/* --dbg-escape efault|flip */
static int idle_prio = -1;	/* --idle-queue-prio */
static struct gq idleq;
static const char *rename_to;	/* --rename: prctl(PR_SET_NAME) once the queues exist */
static const char *remap_ids;	/* --remap-ids FILE (idle) */
static bool cu_mask_loop;	/* --cu-mask-loop: set --cu-mask again and again */
static bool wptr_flap;		/* --wptr-flap (idle) */
static int reset_queue = -1;	/* --reset-queue I */
static unsigned long wptr_flaps;
static long cu_mask_sets;	/* ... how many times it was set */

/* --mutex-threads: threads looping on an ioctl that takes p->mutex. */
#define MAX_MUTEX_THREADS 64
static pthread_t mutex_tids[MAX_MUTEX_THREADS];
static _Atomic long mutex_ioctls;
static _Atomic bool mutex_stop;

static void *mutex_loop(void *arg)
{
	struct kfdsim_test_args t = { .op = KFDSIM_TEST_QUERY, .queue_id = *(uint32_t *)arg };
	long n = 0;

	if (opt.mutex_us) {
		t.op = KFDSIM_TEST_MUTEX_WORK;
		t.value = opt.mutex_us;
	}
	while (!atomic_load_explicit(&mutex_stop, memory_order_relaxed)) {
		if (ioctl(fd, KFDSIM_IOC_TEST, &t))
			break;
		n++;
	}
	atomic_fetch_add(&mutex_ioctls, n);
	return NULL;
}

/* Start (@on) or stop and join the --mutex-threads threads on queue @qid. */
static int mutex_threads(bool on, uint32_t *qid)
{
	int i;

	for (i = 0; i < opt.mutex_threads; i++) {
		if (!on) {
			atomic_store(&mutex_stop, true);
			pthread_join(mutex_tids[i], NULL);
		} else if (pthread_create(&mutex_tids[i], NULL, mutex_loop, qid)) {
			opt.mutex_threads = i;
			return -1;
		}
	}
	if (!on && opt.mutex_threads)
		printf("gpload: mutex_ioctls=%ld threads=%d\n", atomic_load(&mutex_ioctls),
		       opt.mutex_threads);
	return 0;
}

/*
 * The /dev/kfd ABI --userptr-stall uses, from the kernel's
 * uapi/linux/kfd_ioctl.h (which needs drm/drm.h, not installed here).
 */
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

struct kfd_ioctl_map_memory_to_gpu_args {
	uint64_t handle;
	uint64_t device_ids_array_ptr;
	uint32_t n_devices;
	uint32_t n_success;
};

#define KFD_IOC_ALLOC_MEM_FLAGS_USERPTR (1U << 2)
#define KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE (1U << 31)
#define AMDKFD_IOC_ACQUIRE_VM _IOW('K', 0x15, struct kfd_ioctl_acquire_vm_args)
#define AMDKFD_IOC_ALLOC_MEMORY_OF_GPU _IOWR('K', 0x16, struct kfd_ioctl_alloc_memory_of_gpu_args)
#define AMDKFD_IOC_MAP_MEMORY_TO_GPU _IOWR('K', 0x18, struct kfd_ioctl_map_memory_to_gpu_args)

/* --userptr-stall FILE: a /dev/kfd USERPTR map of FILE (see the top). */
static const char *userptr_file;
static pthread_t userptr_tid;

static int sysfs_u32(const char *path, const char *key, uint32_t *val)
{
	char line[128], name[64];
	unsigned long long v;
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		if (!key && sscanf(line, "%llu", &v) == 1)
			ret = 0;
		else if (key && sscanf(line, "%63s %llu", name, &v) == 2 && !strcmp(name, key))
			ret = 0;
	}
	fclose(f);
	if (!ret)
		*val = v;
	return ret;
}

/* /dev/kfd with a GPU VM on the first GPU (ACQUIRE_VM); the fd, or -1. */
static int kfd_vm_open(uint32_t *gpu_id)
{
	const char *node = "/sys/class/kfd/kfd/topology/nodes/1";
	struct kfd_ioctl_acquire_vm_args vm = { 0 };
	uint32_t minor;
	char path[128];
	int kfd, drm;

	snprintf(path, sizeof(path), "%s/gpu_id", node);
	if (sysfs_u32(path, NULL, gpu_id))
		return -1;
	snprintf(path, sizeof(path), "%s/properties", node);
	if (sysfs_u32(path, "drm_render_minor", &minor))
		return -1;
	snprintf(path, sizeof(path), "/dev/dri/renderD%u", minor);
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	drm = open(path, O_RDWR | O_CLOEXEC);
	if (kfd < 0 || drm < 0)
		return -1;
	vm.drm_fd = drm;
	vm.gpu_id = *gpu_id;
	if (ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &vm))
		return -1;
	return kfd;
}

/* ALLOC_MEMORY_OF_GPU of [va, va + size) as USERPTR memory; 0 or -1. */
static int kfd_userptr_alloc(int kfd, uint32_t gpu_id, void *va, uint64_t size, uint64_t *handle)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args al = { 0 };

	al.va_addr = (uintptr_t)va;
	al.mmap_offset = (uintptr_t)va;
	al.size = size;
	al.gpu_id = gpu_id;
	al.flags = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	if (ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &al))
		return -1;
	*handle = al.handle;
	return 0;
}

static void *userptr_fn(void *arg)
{
	struct kfd_ioctl_map_memory_to_gpu_args mp = { 0 };
	uint32_t gpu_id;
	int kfd, ffd, rc = -1;
	uint64_t handle;
	void *va;

	(void)arg;
	kfd = kfd_vm_open(&gpu_id);
	ffd = open(userptr_file, O_RDONLY | O_CLOEXEC);
	if (kfd < 0 || ffd < 0)
		goto out;
	/* Private and writable: pinning it for writing faults the file page in. */
	va = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, ffd, 0);
	if (va == MAP_FAILED)
		goto out;
	if (kfd_userptr_alloc(kfd, gpu_id, va, 4096, &handle))
		goto out;
	mp.handle = handle;
	mp.device_ids_array_ptr = (uintptr_t)&gpu_id;
	mp.n_devices = 1;
	printf("userptr: mapping\n");
	fflush(stdout);
	rc = ioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mp) ? -errno : 0;
out:
	printf("userptr: done %d (%s)\n", rc, rc == -1 ? strerror(errno) : "map");
	fflush(stdout);
	return NULL;
}

/*
 * --userptr-loop HZ: a small anonymous buffer registered with /dev/kfd as
 * USERPTR memory and mapped to the GPU, then invalidated HZ times a second
 * (madvise(MADV_DONTNEED) and munmap + mmap at the same address, in turn,
 * each followed by a write that faults a new page in), so that KFD's
 * MMU-notifier eviction of the whole process runs while the queues work.
 */
static int userptr_hz;
static pthread_t userptr_loop_tid;
static atomic_bool userptr_loop_stop;
static long userptr_invalidations;
static int userptr_loop_rc = -1;

static void *userptr_loop_fn(void *arg)
{
	struct kfd_ioctl_map_memory_to_gpu_args mp = { 0 };
	const size_t size = 2 * 4096;
	uint32_t gpu_id;
	uint64_t handle;
	char *va;
	int kfd;

	(void)arg;
	kfd = kfd_vm_open(&gpu_id);
	if (kfd < 0)
		return NULL;
	va = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == MAP_FAILED)
		return NULL;
	memset(va, 1, size);
	if (kfd_userptr_alloc(kfd, gpu_id, va, size, &handle))
		return NULL;
	mp.handle = handle;
	mp.device_ids_array_ptr = (uintptr_t)&gpu_id;
	mp.n_devices = 1;
	if (ioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mp))
		return NULL;
	userptr_loop_rc = 0;
	while (!atomic_load(&userptr_loop_stop)) {
		if (userptr_invalidations & 1) {
			if (munmap(va, size) ||
			    mmap(va, size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != va) {
				userptr_loop_rc = -errno;
				break;
			}
		} else if (madvise(va, size, MADV_DONTNEED)) {
			userptr_loop_rc = -errno;
			break;
		}
		memset(va, 2, size);
		userptr_invalidations++;
		sleep_us(1e6 / userptr_hz);
	}
	return NULL;
}

/* Start (@on) or stop and join the --userptr-loop thread. */
static int userptr_loop(bool on)
{
	if (!userptr_hz)
		return 0;
	if (on)
		return pthread_create(&userptr_loop_tid, NULL, userptr_loop_fn, NULL) ? -1 : 0;
	atomic_store(&userptr_loop_stop, true);
	pthread_join(userptr_loop_tid, NULL);
	printf("gpload: userptr_invalidations=%ld rc=%d\n", userptr_invalidations,
	       userptr_loop_rc);
	return userptr_loop_rc;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	reset_now = 1;
}

static void on_usr2(int sig)
{
	(void)sig;
	escape_now = 1;
}

/* --dbg-escape: undo the process's own suspend-parks once (S5-1). */
static int do_dbg_escape(void)
{
	struct kfdsim_test_args t = { .op = KFDSIM_TEST_DBG_FLIP };
	void *bad = NULL;
	int r;

	if (!strcmp(dbg_escape, "efault")) {
		/* A page that is not mapped: KFD's copy of the runtime info fails. */
		bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (bad == MAP_FAILED)
			return -errno;
		munmap(bad, 4096);
		t.op = KFDSIM_TEST_DBG_ENABLE;
		t.value = (uintptr_t)bad;
	}
	r = ioctl(fd, KFDSIM_IOC_TEST, &t) ? -errno : 0;
	printf("dbg-escape %s: rc=%d\n", dbg_escape, r);
	fflush(stdout);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, long n, double p)
{
	long i;

	if (!n)
		return 0;
	i = (long)ceil(p / 100.0 * n) - 1;
	return v[i < 0 ? 0 : i];
}

static void report(double *lat, long nlat, long packets, double busy_us, double elapsed_s)
{
	double sum = 0;
	FILE *f;
	long i;

	qsort(lat, nlat, sizeof(*lat), cmp_double);
	for (i = 0; i < nlat; i++)
		sum += lat[i];
	if (!opt.quiet)
		printf("gpload %s prio %d: %ld requests p50 %.0f us p99 %.0f us max %.0f us, %ld packets, %.0f wg-us/s, errors %ld lost %ld double %ld\n",
		       opt.mode, opt.prio, nlat, pct(lat, nlat, 50), pct(lat, nlat, 99),
		       nlat ? lat[nlat - 1] : 0, packets, busy_us / elapsed_s, errors,
		       lost, doubles);
	if (opt.json) {
		f = fopen(opt.json, "w");
		if (!f) {
			perror(opt.json);
			errors++;
			return;
		}
		fprintf(f, "{\"mode\": \"%s\", \"prio\": %d, \"queues\": %d, \"context\": \"%s\", \"be_packets\": %ld, \"pid\": %d, \"duration_s\": %.3f, \"count\": %ld, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f, \"mean_us\": %.1f, \"packets\": %ld, \"gpu_busy_us\": %.1f, \"copies\": %ld, \"copy_us\": %.1f, \"throughput_wgus_per_s\": %.1f, \"updates\": %ld, \"destroy_retries\": %ld, \"destroy_freed\": %ld, \"dep\": \"%s\", \"requests\": %ld, \"barriers\": %ld, \"productions\": %ld, \"producer_packets\": %ld, \"errors\": %ld, \"lost\": %ld, \"double\": %ld}\n",
			opt.mode, opt.prio, opt.queues, opt.secondary ? "secondary" : "primary",
			be_packets, getpid(), elapsed_s, nlat,
			pct(lat, nlat, 50), pct(lat, nlat, 90), pct(lat, nlat, 99),
			nlat ? lat[nlat - 1] : 0, nlat ? sum / nlat : 0, packets, busy_us,
			copies, opt.copy_us, busy_us / elapsed_s, updates, destroy_retries,
			destroy_freed, !dep ? "none" : prod_on ? "stream" : "shm", nlat, barriers,
			productions, prod_packets, errors, lost, doubles);
		fclose(f);
	}
	if (opt.lat_out) {
		f = fopen(opt.lat_out, "w");
		if (f) {
			for (i = 0; i < nlat; i++)
				fprintf(f, "%.1f\n", lat[i]);
			fclose(f);
		}
	}
}

static double next_gap(void)
{
	if (!opt.poisson)
		return opt.period_us;
	return -log(1.0 - drand48()) * opt.period_us;
}

/* --remap-ids: FILE over the page of @q's dispatch ids; wait; no drain. */
static int remap_and_wait(struct gq *q)
{
	uintptr_t page = (uintptr_t)q->wptr & ~(uintptr_t)4095;
	double end = now_us() + opt.duration * 1e6;
	int ffd;

	if (page != ((uintptr_t)q->rptr & ~(uintptr_t)4095)) {
		fprintf(stderr, "gpload: --remap-ids: the dispatch ids are on two pages\n");
		return 1;
	}
	ffd = open(remap_ids, O_RDWR | O_CLOEXEC);
	if (ffd < 0) {
		fprintf(stderr, "gpload: --remap-ids %s: %s\n", remap_ids, strerror(errno));
		return 1;
	}
	if (mmap((void *)page, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ffd, 0) ==
	    MAP_FAILED) {
		fprintf(stderr, "gpload: --remap-ids: mmap %s: %s\n", remap_ids, strerror(errno));
		return 1;
	}
	close(ffd);
	printf("remapped\n");
	fflush(stdout);
	while (!stop && now_us() < end)
		sleep_us(10000);
	/* Never drain: reading the ids would wait on FILE, like the monitor did. */
	_exit(0);
}

static int run(void)
{
	struct gq *qs = calloc(opt.queues, sizeof(*qs));
	long cap = 1 << 20, nlat = 0, packets = 0;
	double busy = 0;
	double *lat = malloc(cap * sizeof(*lat));
	double t0, end, next_arrival, next_update, evict_at;
	bool evicted = false, reset = false, destroyed = false;
	int i;

	if (!qs || !lat)
		return 1;
	for (i = 0; i < opt.queues && strcmp(opt.mode, "churn"); i++) {
		int r;

		gpu_id = gpus[i % ngpus];
		if (dep)	/* --queues 1: signals in the shared area */
			r = q_create_in(&qs[i], opt.prio, opt.rocr, dep, dep_len, dep->sig[0]);
		else
			r = q_create(&qs[i], opt.prio, opt.rocr);
		if (r) {
			fprintf(stderr, "gpload: create queue %d on device %u: %s%s\n", i, gpu_id,
				strerror(-r), r == -EINVAL ? " (is kfdsim loaded with ndev= that many?)" : "");
			return 1;
		}
	}
	gpu_id = gpus[0];
	if (opt.dep_prio >= 0) {
		int r = q_create_in(&prodq, opt.dep_prio, opt.rocr, dep, dep_len, dep->sig[1]);

		if (r) {
			fprintf(stderr, "gpload: create the producer queue: %s\n", strerror(-r));
			return 1;
		}
		prod_on = true;
	}
	if (opt.copy_us > 0) {
		uint32_t type = queue_type;
		int r;

		queue_type = KFDSIM_QUEUE_TYPE_SDMA;
		r = q_create(&copyq, opt.prio, opt.rocr);
		queue_type = type;
		if (r) {
			fprintf(stderr, "gpload: create the SDMA (copy) queue: %s\n", strerror(-r));
			return 1;
		}
	}
	if (opt.nopreempt_us > 0) {
		uint16_t saved = pkt_flags;
		int r = q_create(&npq, opt.prio, opt.rocr);

		if (r) {
			fprintf(stderr, "gpload: create the no-preempt queue: %s\n", strerror(-r));
			return 1;
		}
		pkt_flags |= KFDSIM_PKT_F_NOPREEMPT;
		q_submit(&npq, 1, opt.nopreempt_us);
		pkt_flags = saved;
	}
	if (opt.be_prio >= 0) {
		int r;

		fd = opt.secondary ? fd_primary : fd_secondary;
		r = q_create(&beq, opt.be_prio, opt.rocr);
		fd = opt.secondary ? fd_secondary : fd_primary;
		if (r) {
			fprintf(stderr, "gpload: create the best-effort queue: %s\n", strerror(-r));
			return 1;
		}
		be_on = true;
	}
	if (opt.hold_ms && fd_secondary >= 0) {
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_HOLD_REF, .value = opt.hold_ms };

		if (ioctl(fd_secondary, KFDSIM_IOC_TEST, &t)) {
			fprintf(stderr, "gpload: hold a reference: %s\n", strerror(errno));
			return 1;
		}
	}
	if (idle_prio >= 0) {
		int r = q_create(&idleq, idle_prio, opt.rocr);

		if (r) {
			fprintf(stderr, "gpload: create the idle queue: %s\n", strerror(-r));
			return 1;
		}
	}
	if (remap_ids)
		return remap_and_wait(&qs[0]);
	/* A name change after the queues exist (gpreempt re-reads comm, m12). */
	if (rename_to && prctl(PR_SET_NAME, rename_to))
		errors++;
	if (opt.debug) {
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_DBG_ENABLE };

		if (ioctl(fd, KFDSIM_IOC_TEST, &t))
			errors++;
	}
	if (userptr_file && pthread_create(&userptr_tid, NULL, userptr_fn, NULL)) {
		fprintf(stderr, "gpload: --userptr-stall: cannot start a thread\n");
		errors++;
	}
	if (userptr_loop(true)) {
		fprintf(stderr, "gpload: --userptr-loop: cannot start a thread\n");
		errors++;
	}
	if (mutex_threads(true, &qs[0].id)) {
		fprintf(stderr, "gpload: --mutex-threads: cannot start a thread\n");
		errors++;
	}
	if (!opt.quiet)
		printf("gpload %s: pid %d, %d queue(s) at priority %d\n", opt.mode, getpid(),
		       opt.queues, opt.prio);
	fflush(stdout);
	t0 = now_us();
	end = t0 + opt.duration * 1e6;
	next_arrival = opt.start_at > t0 ? opt.start_at : t0;
	next_update = t0 + opt.update_ms * 1e3;
	evict_at = t0 + opt.evict_ms * 1e3;

	while (!stop && now_us() < end) {
		if (!reset && (reset_now || (opt.reset_ms && now_us() >= t0 + opt.reset_ms * 1e3))) {
			/* A GPU reset hit this process's first device (6.12 has_reset_queue). */
			if (reset_queue >= 0 ?
			    test_op(KFDSIM_TEST_RESET_QUEUE, qs[reset_queue].id, NULL) :
			    test_op(KFDSIM_TEST_SET_RESET, 0, NULL))
				errors++;
			reset = true;
		}
		if (dbg_escape && escape_now) {
			escape_now = 0;
			do_dbg_escape();
		}
		if (opt.destroy_ms && opt.queues > 1 && !destroyed &&
		    now_us() >= t0 + opt.destroy_ms * 1e3) {
			/* The last queue goes mid-run, its work with it (not verified). */
			if (q_destroy(&qs[opt.queues - 1]))
				errors++;
			opt.queues--;
			destroyed = true;
		}
		if (opt.evict_ms && !evicted && now_us() >= evict_at) {
			if (test_op(KFDSIM_TEST_EVICT, 0, NULL))
				errors++;
			evicted = true;
		}
		if (cu_mask_loop && cu_mask_bits) {
			/* S4-10: SET_CU_MASK back to back (its calls sleep in KFD). */
			for (i = 0; i < opt.queues; i++) {
				int r = q_set_cu_mask(&qs[i], cu_mask, cu_mask_bits);

				if (r && r != -EBUSY && r != -ETIME && r != -EIO)
					errors++;
				cu_mask_sets += !r;
			}
			continue;
		}
		if (opt.update_ms && now_us() >= next_update) {
			for (i = 0; i < opt.queues; i++)
				if (q_update(&qs[i], 100, opt.prio))
					errors++;
			next_update += opt.update_ms * 1e3;
		}
		if (!strcmp(opt.mode, "lc")) {
			struct gq *q = &qs[nlat % opt.queues];
			_Atomic uint64_t *s = NULL;
			uint64_t h = 0;
			double t;
			int k;

			while (now_us() < next_arrival && !stop) {
				feed_be();
				sleep_us(fmin(next_arrival - now_us(), 200));
			}
			next_arrival += next_gap();
			t = now_us();
			if (opt.copy_us > 0) {
				/* The input first; the kernels once it is on the device. */
				q_submit(&copyq, 1, opt.copy_us);
				while (q_outstanding(&copyq) > 0 && now_us() < t + 30e6) {
					feed_be();
					if (!q_retire(&copyq))
						sleep_us(20);
				}
				if (q_outstanding(&copyq) > 0)
					break;	/* reported as lost by the drain */
				copies++;
			}
			if (dep) {
				/* hipStreamWaitEvent: the producer's dispatch signals S. */
				s = dep_claim(nlat);
				if (prod_on) {
					q_submit_sig(&prodq, opt.be_wg, opt.dep_wg_us, s);
					productions++;
				}
				q_submit_barrier(q, KFDSIM_PKT_BARRIER_AND, &s, 1);
				barriers++;
			}
			for (k = 0; k < opt.k; k++)
				q_submit(q, opt.wg, wg_time());
			if (dep && !prod_on)
				h = dep_post(s, t);
			while (q_outstanding(q) > 0 && now_us() < t + 30e6) {
				feed_be();
				q_retire(q);
				if (dep && !prod_on)
					dep_orphan(h, s);
				if (q_outstanding(q) > 0)
					sleep_us(20);
			}
			if (q_outstanding(q) > 0)
				break;	/* reported as lost by the drain */
			if (nlat < cap)
				lat[nlat++] = now_us() - t;
			packets += opt.k;
		} else if (!strcmp(opt.mode, "be")) {
			for (i = 0; i < opt.queues; i++) {
				int done = q_retire(&qs[i]);

				packets += done;
				while (q_outstanding(&qs[i]) < opt.inflight)
					q_submit(&qs[i], opt.wg, wg_time());
			}
			sleep_us(300);
		} else if (!strcmp(opt.mode, "churn")) {
			struct gq q;

			int r = q_create(&q, opt.prio, opt.rocr);

			if (r) {
				fprintf(stderr, "gpload: churn create: %s\n", strerror(-r));
				errors++;
				break;
			}
			q_submit(&q, opt.wg, opt.wg_us);
			if (q_drain(&q, opt.drain_ms * 1e3)) {
				packets++;
				busy += q.busy_us;
			}
			r = q_destroy(&q);
			/*
			 * An injected EBUSY: the queue stays; retry, as ROCr
			 * would (ETIME/EIO: KFD freed it, q_destroy() says 0).
			 */
			while (r && r != -EINVAL && destroy_retries < 100000) {
				destroy_retries++;
				sleep_us(1000);
				r = q_destroy_id(q.id);
			}
			if (r)
				errors++;
			if (opt.gap_ms)
				sleep_us(opt.gap_ms * 1e3);
		} else if (wptr_flap) {
			uint64_t r = atomic_load(qs[0].rptr);

			atomic_store_explicit(qs[0].wptr, wptr_flaps % 2 ? r :
					      r + (wptr_flaps % 4 ? 1 : 1ULL << 40),
					      memory_order_release);
			wptr_flaps++;
			sleep_us(1000);
		} else {
			sleep_us(10000);
		}
	}
	if (wptr_flap) {
		atomic_store(qs[0].wptr, atomic_load(qs[0].rptr));
		printf("gpload: wptr_flaps=%lu\n", wptr_flaps);
	}
	if (cu_mask_loop)
		printf("gpload: cu_mask_sets=%ld\n", cu_mask_sets);
	mutex_threads(false, NULL);
	if (userptr_loop(false))
		errors++;
	if (reset) {
		/* A reset queue's work is lost, as on the GPU: nothing to verify. */
		printf("gpload: reset after %d ms: queues not drained\n", opt.reset_ms);
		return errors ? 1 : 0;
	}
	if (evicted && test_op(KFDSIM_TEST_RESTORE, 0, NULL))
		errors++;
	for (i = 0; i < opt.queues && strcmp(opt.mode, "churn"); i++) {
		int before = q_outstanding(&qs[i]);

		q_drain(&qs[i], 30e6);
		if (!strcmp(opt.mode, "be"))
			packets += before - q_outstanding(&qs[i]);
		busy += qs[i].busy_us;
	}
	if (opt.copy_us > 0)
		q_drain(&copyq, 30e6);
	if (be_on) {
		int before = q_outstanding(&beq);

		q_drain(&beq, 30e6);
		be_packets += before - q_outstanding(&beq);
	}
	if (prod_on) {
		q_drain(&prodq, 30e6);
		prod_packets = prodq.retired;
	}
	if (dep)
		dep_verify();
	if (dep && !prod_on)
		atomic_store(&dep->lc_pid, 0);
	report(lat, nlat, packets, busy, (now_us() - t0) / 1e6);
	return errors || lost || doubles ? 1 : 0;
}

/* Production dispatches not yet complete: packet id and request time. */
struct production {
	uint64_t id;
	double req_us;
};

/* Take the posted requests: a production dispatch signalling each one's S. */
static void serve(struct gq *q, struct production *fifo, long *nfifo)
{
	uint64_t t = atomic_load_explicit(&dep->req_tail, memory_order_relaxed);

	while (t < atomic_load_explicit(&dep->req_head, memory_order_acquire)) {
		uint32_t s = atomic_load(&dep->req[t % DEP_SLOTS]);
		int64_t id;

		if (s >= DEP_SLOTS) {
			fprintf(stderr, "gpload: request %llu: bad slot %u\n",
				(unsigned long long)t, s);
			errors++;
		} else {
			id = q_submit_sig(q, opt.wg, wg_time(), &dep->dep[s]);
			if (id < 0)
				return;	/* ring full: next time */
			fifo[*nfifo].id = id;
			fifo[*nfifo].req_us = atomic_load(&dep->req_us[t % DEP_SLOTS]);
			(*nfifo)++;
			productions++;
		}
		atomic_store_explicit(&dep->req_tail, ++t, memory_order_release);
	}
}

/* gpload producer --shm NAME: serve an lc --dep-shm process (protocol above). */
static int run_producer(void)
{
	long cap = 1 << 20, nlat = 0, packets = 0, nfifo = 0, i;
	struct production fifo[RING_SLOTS];
	double *lat = malloc(cap * sizeof(*lat));
	double t0, end;
	struct gq q;
	int r;

	if (!lat || dep_map(opt.dep_shm))
		return 1;
	r = q_create_in(&q, opt.prio, opt.rocr, dep, dep_len, dep->sig[1]);
	if (r) {
		fprintf(stderr, "gpload: create the producer queue: %s\n", strerror(-r));
		return 1;
	}
	atomic_store(&dep->req_tail, atomic_load(&dep->req_head));
	atomic_store(&dep->magic, DEP_MAGIC);
	atomic_store(&dep->producer_pid, getpid());
	if (!opt.quiet)
		printf("gpload producer: pid %d, queue at priority %d, shm %s\n", getpid(),
		       opt.prio, opt.dep_shm);
	fflush(stdout);
	t0 = now_us();
	end = t0 + opt.duration * 1e6;
	for (;;) {
		bool stopping = stop || now_us() >= end;

		if (stopping)	/* serve what was posted until now, then drain */
			atomic_store(&dep->producer_pid, 0);
		packets += q_retire(&q);
		while (nfifo && fifo[0].id < q.retired) {
			if (nlat < cap)
				lat[nlat++] = now_us() - fifo[0].req_us;
			memmove(fifo, fifo + 1, --nfifo * sizeof(*fifo));
		}
		while (!stopping && q_outstanding(&q) - nfifo < opt.inflight)
			q_submit(&q, opt.wg, wg_time());
		serve(&q, fifo, &nfifo);
		if (stopping)
			break;
		sleep_us(100);
	}
	i = q_outstanding(&q);
	q_drain(&q, 30e6);
	packets += i - q_outstanding(&q);
	for (; nfifo; nfifo--)	/* drained: complete now */
		if (fifo[nfifo - 1].id < q.retired && nlat < cap)
			lat[nlat++] = now_us() - fifo[nfifo - 1].req_us;
	prod_packets = q.retired;
	report(lat, nlat, packets, q.busy_us, (now_us() - t0) / 1e6);
	q_destroy(&q);
	shm_unlink(opt.dep_shm);	/* a later pair starts afresh */
	return errors || lost || doubles ? 1 : 0;
}

/*
 * --cu-mask: "all" is what ROCr sets on every new queue (one bit per CU of
 * the device, kfdsim's num_cu); else a list of CU ranges, "0-3,8".
 */
static int parse_cu_mask(const char *arg)
{
	unsigned int hi = 0, n = 0;
	char *end;
	FILE *f;

	memset(cu_mask, 0, sizeof(cu_mask));
	if (!strcmp(arg, "all")) {
		f = fopen("/sys/module/kfdsim/parameters/num_cu", "r");
		if (!f || fscanf(f, "%u", &n) != 1 || !n || n > 1024) {
			if (f)
				fclose(f);
			return -1;
		}
		fclose(f);
		for (hi = 0; hi < n; hi++)
			cu_mask[hi / 32] |= 1u << (hi % 32);
		cu_mask_bits = (n + 31) / 32 * 32;
		return 0;
	}
	while (*arg) {
		unsigned long lo = strtoul(arg, &end, 10), top = lo;

		if (end == arg)
			return -1;
		if (*end == '-') {
			arg = end + 1;
			top = strtoul(arg, &end, 10);
			if (end == arg || top < lo)
				return -1;
		}
		if (top > 1023 || (*end && *end != ','))
			return -1;
		for (; lo <= top; lo++)
			cu_mask[lo / 32] |= 1u << (lo % 32);
		hi = top + 1 > hi ? top + 1 : hi;
		arg = *end ? end + 1 : end;
	}
	if (!hi)
		return -1;
	cu_mask_bits = (hi + 31) / 32 * 32;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gpload [lc|be|churn|idle|producer|rocr]... [--mode lc|be|churn|idle|producer]\n"
		"              [--prio 0..15] [--queues N] [--duration S] [--wg N] [--wg-us US]\n"
		"              [--k N] [--period-us US] [--poisson] [--start-at US] [--inflight N] [--rocr]\n"
		"              [--update-ms MS] [--evict-ms MS] [--debug] [--pfnmap] [--hide-ids]\n"
		"              [--forge-ids] [--sdma] [--pm4] [--wptr-flap]\n"
		"              [--rename COMM] [--context primary|secondary] [--remap-ids FILE]\n"
		"              [--reset-ms MS] [--reset-queue I] [--destroy-ms MS] [--cu-mask all|CU-LIST]\n"
		"              [--cu-mask-loop]\n"
		"              [--mutex-threads N [--mutex-us US]] [--userptr-stall FILE]\n"
		"              [--userptr-loop HZ]\n"
		"              [--be-prio 0..15 [--be-wg N] [--be-wg-us US]] [--hold-ms MS]\n"
		"              [--gpu D[,D...]] [--barrier] [--copy-us US] [--wg-us-max US]\n"
		"              [--nopreempt-us US] [--dbg-escape efault|flip] [--idle-queue-prio P]\n"
		"              [--dep-stream 0..15 [--dep-backlog N] [--dep-wg-us US]]\n"
		"              [--dep-shm NAME] (lc), --shm NAME (producer)\n"
		"              [--gap-ms MS] [--drain-ms MS] (churn)\n"
		"              [--json FILE] [--lat-out FILE] [--seed N] [--quiet]\n"
		"       gpload test bad-ioctls|nesting|reset|hang|prio|storm|timing|pfnmap|sdma|\n"
		"                   contexts|barrier|deps\n"
		"       gpload maps fuzz|flip|reset ... (gpreempt's control maps, see maps.c)\n"
		"defaults: lc, --prio 7 --queues 1 --wg 8 --wg-us 200 --k 1 --period-us 5000\n"
		"          --inflight 4 --duration 5\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "prio", 1, 0, 'p' }, { "queues", 1, 0, 'q' },
		{ "duration", 1, 0, 'd' }, { "wg", 1, 0, 'w' }, { "wg-us", 1, 0, 'u' },
		{ "k", 1, 0, 'k' }, { "period-us", 1, 0, 'P' }, { "poisson", 0, 0, 'o' },
		{ "inflight", 1, 0, 'i' }, { "rocr", 0, 0, 'r' }, { "update-ms", 1, 0, 'U' },
		{ "json", 1, 0, 'j' }, { "lat-out", 1, 0, 'l' }, { "seed", 1, 0, 's' },
		{ "quiet", 0, 0, 'Q' }, { "debug", 0, 0, 'D' }, { "evict-ms", 1, 0, 'E' },
		{ "pfnmap", 0, 0, 'F' }, { "hide-ids", 0, 0, '9' },
		{ "forge-ids", 0, 0, '7' },
		{ "cu-mask-loop", 0, 0, '8' }, { "sdma", 0, 0, 'S' }, { "rename", 1, 0, 'R' },
		{ "context", 1, 0, 'C' }, { "be-prio", 1, 0, 'b' }, { "be-wg", 1, 0, 'W' },
		{ "be-wg-us", 1, 0, 'V' }, { "hold-ms", 1, 0, 'H' }, { "pm4", 0, 0, '4' },
		{ "gpu", 1, 0, 'G' }, { "barrier", 0, 0, 'B' }, { "copy-us", 1, 0, 'c' },
		{ "wg-us-max", 1, 0, 'X' }, { "nopreempt-us", 1, 0, 'J' }, { "remap-ids", 1, 0, 'M' },
		{ "reset-ms", 1, 0, 'T' }, { "start-at", 1, 0, 'a' },
		{ "dep-stream", 1, 0, 'e' }, { "dep-backlog", 1, 0, 'n' },
		{ "dep-wg-us", 1, 0, 'y' }, { "dep-shm", 1, 0, 'z' }, { "shm", 1, 0, 'Z' },
		{ "cu-mask", 1, 0, 'A' },
		{ "gap-ms", 1, 0, 'g' }, { "drain-ms", 1, 0, 'N' }, { "destroy-ms", 1, 0, 'K' },
		{ "mutex-threads", 1, 0, 'x' }, { "mutex-us", 1, 0, 'Y' },
		{ "userptr-stall", 1, 0, 'L' }, { "userptr-loop", 1, 0, 'I' },
		{ "dbg-escape", 1, 0, 0x101 }, { "idle-queue-prio", 1, 0, 0x102 },
		{ "wptr-flap", 0, 0, 0x103 }, { "reset-queue", 1, 0, 0x104 },
		{ "help", 0, 0, 'h' }, { 0 } };
	const char *test_name = NULL;
	int c, rc;

	if (argc > 1 && !strcmp(argv[1], "maps"))
		return maps_main(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm': opt.mode = optarg; break;
		case 'p': opt.prio = atoi(optarg); break;
		case 'q': opt.queues = atoi(optarg); break;
		case 'd': opt.duration = atof(optarg); break;
		case 'w': opt.wg = atoi(optarg); break;
		case 'u': opt.wg_us = atof(optarg); break;
		case 'k': opt.k = atoi(optarg); break;
		case 'P': opt.period_us = atof(optarg); break;
		case 'o': opt.poisson = true; break;
		case 'i': opt.inflight = atoi(optarg); break;
		case 'r': opt.rocr = true; break;
		case 'U': opt.update_ms = atoi(optarg); break;
		case 'j': opt.json = optarg; break;
		case 'l': opt.lat_out = optarg; break;
		case 's': opt.seed = atoi(optarg); break;
		case 'Q': opt.quiet = true; break;
		case 'D': opt.debug = true; break;
		case 0x101: dbg_escape = optarg; break;
		case 0x102: idle_prio = atoi(optarg); break;
		case 0x103: wptr_flap = true; break;
		case 0x104: reset_queue = atoi(optarg); break;
		case 'E': opt.evict_ms = atoi(optarg); break;
		case 'F': use_pfnmap = true; break;
		case '9': hide_ids = true; break;
		case '7': hide_ids = forge_ids = true; break;
		case '8': cu_mask_loop = true; break;
		case 'S': queue_type = KFDSIM_QUEUE_TYPE_SDMA; break;
		case '4': queue_type = KFDSIM_QUEUE_TYPE_COMPUTE_PM4; break;
		case 'R': rename_to = optarg; break;
		case 'C':
			if (strcmp(optarg, "primary") && strcmp(optarg, "secondary")) {
				fprintf(stderr, "gpload: --context: primary or secondary, not '%s'\n",
					optarg);
				return 2;
			}
			opt.secondary = !strcmp(optarg, "secondary");
			break;
		case 'b': opt.be_prio = atoi(optarg); break;
		case 'W': opt.be_wg = atoi(optarg); break;
		case 'V': opt.be_wg_us = atof(optarg); break;
		case 'H': opt.hold_ms = atoi(optarg); break;
		case 'B': pkt_flags |= KFDSIM_PKT_F_BARRIER; break;
		case 'c': opt.copy_us = atof(optarg); break;
		case 'J': opt.nopreempt_us = atof(optarg); break;
		case 'X': opt.wg_us_max = atof(optarg); break;
		case 'M': remap_ids = optarg; break;
		case 'L': userptr_file = optarg; break;
		case 'I': userptr_hz = atoi(optarg); break;
		case 'T': opt.reset_ms = atoi(optarg); break;
		case 'a': opt.start_at = atof(optarg); break;
		case 'e': opt.dep_prio = atoi(optarg); break;
		case 'n': opt.dep_backlog = atoi(optarg); break;
		case 'y': opt.dep_wg_us = atof(optarg); break;
		case 'z': opt.dep_shm = optarg; break;
		case 'Z': opt.dep_shm = optarg; break;
		case 'g': opt.gap_ms = atoi(optarg); break;
		case 'N': opt.drain_ms = atoi(optarg); break;
		case 'K': opt.destroy_ms = atoi(optarg); break;
		case 'x': opt.mutex_threads = atoi(optarg); break;
		case 'Y': opt.mutex_us = atoi(optarg); break;
		case 'A':
			if (parse_cu_mask(optarg)) {
				fprintf(stderr,
					"gpload: --cu-mask: 'all' or a list of CUs such as 0-3,8 (0..1023), not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'G':
			if (parse_gpus(optarg)) {
				fprintf(stderr, "gpload: --gpu: a list of device indices 0..%d, not '%s'\n",
					MAX_GPUS - 1, optarg);
				return 2;
			}
			break;
		default: usage(); return 2;
		}
	}
	for (; optind < argc; optind++) {
		const char *a = argv[optind];

		if (!strcmp(a, "test") && optind + 1 < argc) {
			test_name = argv[++optind];
		} else if (!strcmp(a, "rocr")) {
			opt.rocr = true;
		} else if (!strcmp(a, "lc") || !strcmp(a, "be") || !strcmp(a, "churn") ||
			   !strcmp(a, "idle") || !strcmp(a, "producer")) {
			opt.mode = a;
		} else {
			usage();
			return 2;
		}
	}
	if (strcmp(opt.mode, "lc") && strcmp(opt.mode, "be") && strcmp(opt.mode, "churn") &&
	    strcmp(opt.mode, "idle") && strcmp(opt.mode, "producer")) {
		usage();
		return 2;
	}
	if (reset_queue >= opt.queues) {
		fprintf(stderr, "gpload: --reset-queue %d: the process has %d queues (0..%d)\n",
			reset_queue, opt.queues, opt.queues - 1);
		return 2;
	}
	if (opt.queues < 1 || opt.wg < 1 || opt.k < 1 || opt.k >= RING_SLOTS ||
	    opt.inflight < 1 || opt.inflight >= RING_SLOTS || opt.wg_us < 0 ||
	    opt.prio < 0 || opt.prio > KFDSIM_MAX_QUEUE_PRIORITY || opt.evict_ms < 0 || opt.reset_ms < 0 || opt.destroy_ms < 0 ||
	    opt.update_ms < 0 || opt.period_us < 0 || opt.be_prio > KFDSIM_MAX_QUEUE_PRIORITY ||
	    opt.be_wg < 1 || opt.be_wg_us < 0 || opt.hold_ms < 0 || opt.hold_ms > 600000 ||
	    opt.gap_ms < 0 || opt.gap_ms > 600000 || opt.drain_ms < 0 || opt.drain_ms > 600000 ||
	    opt.copy_us < 0 || (opt.wg_us_max && opt.wg_us_max < opt.wg_us) ||
	    opt.dep_prio > KFDSIM_MAX_QUEUE_PRIORITY || opt.dep_backlog < 0 ||
	    opt.dep_backlog >= RING_SLOTS - 1 || opt.dep_wg_us < 0 ||
	    opt.mutex_threads < 0 || opt.mutex_threads > MAX_MUTEX_THREADS ||
	    opt.mutex_us < 0 || opt.mutex_us > 10000 || idle_prio > KFDSIM_MAX_QUEUE_PRIORITY ||
	    userptr_hz < 0 || userptr_hz > 10000 ||
	    (dbg_escape && strcmp(dbg_escape, "efault") && strcmp(dbg_escape, "flip"))) {
		fprintf(stderr, "gpload: bad numeric argument\n");
		return 2;
	}
	srand48(opt.seed);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	if (opt.copy_us > 0 && strcmp(opt.mode, "lc")) {
		fprintf(stderr, "gpload: --copy-us needs --mode lc\n");
		return 2;
	}
	if (hide_ids && use_pfnmap) {
		fprintf(stderr, "gpload: --hide-ids/--forge-ids and --pfnmap exclude each other\n");
		return 2;
	}
	if (wptr_flap && strcmp(opt.mode, "idle")) {
		fprintf(stderr, "gpload: --wptr-flap needs --mode idle\n");
		return 2;
	}
	if (remap_ids && strcmp(opt.mode, "idle")) {
		fprintf(stderr, "gpload: --remap-ids needs --mode idle\n");
		return 2;
	}
	if (opt.be_prio >= 0 && strcmp(opt.mode, "lc")) {
		fprintf(stderr, "gpload: --be-prio needs --mode lc\n");
		return 2;
	}
	if ((opt.dep_prio >= 0 || opt.dep_shm) && strcmp(opt.mode, "lc") &&
	    strcmp(opt.mode, "producer")) {
		fprintf(stderr, "gpload: --dep-stream/--dep-shm need --mode lc, --shm producer\n");
		return 2;
	}
	if (!strcmp(opt.mode, "producer") && (!opt.dep_shm || opt.dep_prio >= 0)) {
		fprintf(stderr, "gpload: producer needs --shm NAME\n");
		return 2;
	}
	if (!strcmp(opt.mode, "lc") && (opt.dep_prio >= 0 || opt.dep_shm) &&
	    ((opt.dep_prio >= 0 && opt.dep_shm) || opt.queues != 1 || queue_type != 0)) {
		fprintf(stderr, "gpload: --dep-stream or --dep-shm, one compute AQL queue\n");
		return 2;
	}
	gpu_id = gpus[0];
	fd_primary = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	if (fd_primary < 0) {
		perror("gpload: /dev/kfdsim");
		return 1;
	}
	fd = fd_primary;
	if (opt.secondary || opt.be_prio >= 0 || opt.hold_ms) {
		/* As ROCr: the primary stays open, a second open becomes the context. */
		fd_secondary = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
		if (fd_secondary < 0) {
			perror("gpload: /dev/kfdsim");
			return 1;
		}
		if (ioctl(fd_secondary, KFDSIM_IOC_CREATE_PROCESS)) {
			fprintf(stderr, "gpload: create a secondary KFD context: %s%s\n",
				strerror(errno), errno == ENOTTY ?
				" (kfdsim built for a kernel without contexts; 7.2+ has them)" : "");
			return 1;
		}
		if (opt.secondary)
			fd = fd_secondary;
	}
	if (!test_name && !strcmp(opt.mode, "lc") && (opt.dep_prio >= 0 || opt.dep_shm)) {
		double end = now_us() + 10e6;

		if (dep_map(opt.dep_shm))
			return 1;
		/* --dep-shm: the producer serves from producer_pid on (protocol, 2). */
		while (opt.dep_shm && !stop && (atomic_load(&dep->magic) != DEP_MAGIC ||
						!producer_alive()) && now_us() < end)
			sleep_us(10000);
		if (opt.dep_shm && !producer_alive()) {
			fprintf(stderr, "gpload: no producer on shm %s\n", opt.dep_shm);
			return 1;
		}
		if (opt.dep_shm)
			atomic_store(&dep->lc_pid, getpid());
	}
	if (test_name)
		rc = selftest(test_name);
	else if (!strcmp(opt.mode, "producer"))
		rc = run_producer();
	else
		rc = run();
	if (fd_secondary >= 0)
		close(fd_secondary);
	close(fd_primary);
	return rc;
}
