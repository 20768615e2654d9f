// SPDX-License-Identifier: GPL-2.0
/*
 * selftest.c - "gpload test NAME": behaviour tests of kfdsim, run in the
 * test guest with kfdsim.ko loaded.  Each prints TAP lines ("ok - name",
 * "not ok - name # detail", "# diagnostics") and the process exits non-zero
 * if one failed.
 *
 *   bad-ioctls  every argument check of create/update/destroy/test ioctls
 *   nesting     qpd->evicted nesting, QUEUE_IS_ACTIVE of percent, create
 *               while evicted
 *   reset       has_reset_queue: update_queue returns -EACCES
 *   hang        dqm->is_hws_hang: -EIO, and an evict that failed with -EIO
 *               still counts (a restore must follow), as in KFD
 *   prio        hardware queue priority: new workgroups go to the high queue
 *   storm       exactly once under evict/restore/update/destroy storms
 *   timing      a modelled job alone: measured / modelled time
 *   pfnmap      queue pointers in a VM_PFNMAP driver buffer
 *   sdma        SDMA queues: serial copies, no CU, evicted like the rest
 *   barrier     the AQL barrier bit: a chain of packets never overlaps; without
 *               it they do; time_scale multiplies the modelled time
 *   deps        barrier-AND/OR packets on another queue's signals: the queue
 *               stops at the barrier (rptr, header intact) until they are
 *               non-zero; AND waits for all, OR for one
 *   contexts    KFDSIM_IOC_CREATE_PROCESS (7.2+ layouts; -ENOTTY before):
 *               own context id and PASID, one per file, torn down (queues
 *               dequeued) at close while another reference holds it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gpload.h"

static int failed;

static void check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(bool ok, const char *name, const char *fmt, ...)
{
	char detail[256] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	printf("%sok - %s%s%s\n", ok ? "" : "not ", name, *detail ? " # " : "", detail);
	if (!ok)
		failed++;
}

static unsigned int param(const char *name, unsigned int def)
{
	char path[128];
	unsigned int v = def;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kfdsim/parameters/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = def;
		fclose(f);
	}
	return v;
}

static uint64_t qstate(struct gq *q)
{
	uint64_t st = ~0ull;

	if (test_op(KFDSIM_TEST_QUERY, q->id, &st))
		return ~0ull;
	return st;
}

/* Wait until @q's read index reaches @n; returns the time waited (us) or -1. */
static double wait_rptr(struct gq *q, uint64_t n, double timeout_us)
{
	double t0 = now_us();

	while (atomic_load(q->rptr) < n) {
		if (now_us() > t0 + timeout_us)
			return -1;
		sleep_us(50);
	}
	return now_us() - t0;
}

static int create_errno(const struct kfdsim_create_queue_args *a)
{
	struct kfdsim_create_queue_args c = *a;

	return ioctl(fd, KFDSIM_IOC_CREATE_QUEUE, &c) ? errno : 0;
}

static void test_bad_ioctls(void)
{
	struct kfdsim_destroy_queue_args d = { .queue_id = 999 };
	struct kfdsim_update_queue_args u = { .queue_id = 999, .queue_percentage = 100 };
	struct kfdsim_create_queue_args good, a;
	uint64_t pasid1 = 0, pasid2 = 0;
	struct gq q;
	int r, fd2, st;
	pid_t pid;

	r = q_create(&q, 5, false);
	check(!r, "create: valid queue", "%s", r ? strerror(-r) : "");
	if (r)
		return;
	memset(&good, 0, sizeof(good));
	good.ring_base_address = (uintptr_t)q.ring;
	good.ring_size = RING_SLOTS * sizeof(struct kfdsim_packet);
	good.read_pointer_address = (uintptr_t)q.rptr;
	good.write_pointer_address = (uintptr_t)q.wptr;
	good.signal_base_address = (uintptr_t)q.sig;
	good.signal_size = RING_SLOTS * 8;
	good.queue_percentage = 100;
	good.queue_priority = 5;

#define CASE(field, val, err, name) do {					\
		a = good;							\
		a.field = (val);						\
		r = create_errno(&a);						\
		check(r == (err), "create: " name, "errno %d (%s)", r, strerror(r)); \
	} while (0)
	CASE(queue_priority, 16, EINVAL, "priority 16 -> EINVAL");
	CASE(queue_priority, ~0u, EINVAL, "priority 0xffffffff -> EINVAL");
	CASE(queue_percentage, 101, EINVAL, "percent 101 -> EINVAL");
	CASE(ring_size, 1000, EINVAL, "ring size not a power of 2 -> EINVAL");
	CASE(ring_size, 0, EINVAL, "ring size 0 -> EINVAL");
	CASE(ring_size, 512, EINVAL, "ring size below the minimum -> EINVAL");
	CASE(ring_size, 1u << 31, EINVAL, "ring size 2 GiB -> EINVAL");
	CASE(ring_base_address, 0, EFAULT, "NULL ring -> EFAULT");
	CASE(ring_base_address, 0xffff888000000000ull, EFAULT, "kernel-space ring -> EFAULT");
	CASE(ring_base_address, 0x1000, EFAULT, "unmapped ring -> EFAULT");
	CASE(read_pointer_address, good.read_pointer_address + 3, EINVAL,
	     "unaligned read pointer -> EINVAL");
	CASE(read_pointer_address, 0, EFAULT, "NULL read pointer -> EFAULT");
	CASE(write_pointer_address, 0, EFAULT, "NULL write pointer -> EFAULT");
	CASE(write_pointer_address, 0x2000, EFAULT, "unmapped write pointer -> EFAULT");
	CASE(signal_size, 12, EINVAL, "signal area size not a multiple of 8 -> EINVAL");
	CASE(signal_base_address, 0, EFAULT, "NULL signal area -> EFAULT");
#undef CASE
	a = good;
	a.queue_percentage = 0x164;	/* pm4_target_xcc 1, 100 % */
	r = ioctl(fd, KFDSIM_IOC_CREATE_QUEUE, &a) ? errno : 0;
	check(!r, "create: percent 100 with pm4_target_xcc in bits 8-15 accepted", "errno %d", r);
	if (!r) {
		d.queue_id = a.queue_id;
		ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &d);
		d.queue_id = 999;
	}
	a = good;
	a.queue_percentage = 0x165;
	r = create_errno(&a);
	check(r == EINVAL, "create: percent 101 with xcc bits -> EINVAL", "errno %d", r);
	a = good;
	a.queue_type = KFDSIM_QUEUE_TYPE_COMPUTE_PM4 + 1;	/* 0 AQL, 1 SDMA, 2 PM4 */
	r = create_errno(&a);
	check(r == EINVAL, "create: unknown queue type -> EINVAL", "errno %d", r);
	a = good;
	a.gpu_id = 8;	/* past kfdsim's ndev limit */
	r = create_errno(&a);
	check(r == EINVAL, "create: unknown gpu_id -> EINVAL", "errno %d", r);
	a = good;
	a.pad = 1;
	r = create_errno(&a);
	check(r == EINVAL, "create: nonzero pad -> EINVAL", "errno %d", r);
	r = ioctl(fd, KFDSIM_IOC_CREATE_QUEUE, (void *)8) ? errno : 0;
	check(r == EFAULT, "create: bad argument pointer -> EFAULT", "errno %d", r);
	r = ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &d) ? errno : 0;
	check(r == EINVAL, "destroy: unknown queue -> EINVAL", "errno %d", r);
	r = ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &u) ? errno : 0;
	check(r == EFAULT, "update: unknown queue -> EFAULT", "errno %d", r);
	check(q_update(&q, 100, 16) == -EINVAL, "update: priority 16 -> EINVAL", NULL);
	check(q_update(&q, 101, 5) == -EINVAL, "update: percent 101 -> EINVAL", NULL);
	u = (struct kfdsim_update_queue_args){ .ring_base_address = (uintptr_t)q.ring + 4096,
		.queue_id = q.id, .ring_size = RING_SLOTS * 64, .queue_percentage = 100 };
	r = ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &u) ? errno : 0;
	check(r == EFAULT, "update: a ring that is not the queue's -> EFAULT", "errno %d", r);
	u.ring_base_address = (uintptr_t)q.ring;
	u.ring_size = 3000;
	r = ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &u) ? errno : 0;
	check(r == EINVAL, "update: ring size not a power of 2 -> EINVAL", "errno %d", r);
	r = ioctl(fd, _IO('K', 0x77)) ? errno : 0;
	check(r == ENOTTY, "unknown ioctl -> ENOTTY", "errno %d", r);
	check(test_op(99, 0, NULL) == -EINVAL, "test: unknown op -> EINVAL", NULL);
	check(test_op(KFDSIM_TEST_QUERY, 999, NULL) == -EINVAL,
	      "test: query of an unknown queue -> EINVAL", NULL);
	check(test_op(KFDSIM_TEST_RESTORE, 0, NULL) == -EINVAL,
	      "test: restore without an evict -> EINVAL (no WARN)", NULL);

	/* A packet with 0 workgroups runs as 1; one of 2^31 is clamped. */
	q_submit(&q, 0, 100);
	q_submit(&q, 1, 100);
	check(q_drain(&q, 5e6), "a packet with 0 workgroups completes once", NULL);

	/* One kfd_process per mm, as in KFD: a second open shares it. */
	fd2 = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	if (fd2 >= 0) {
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_PASID };

		test_op(KFDSIM_TEST_PASID, 0, &pasid1);
		if (!ioctl(fd2, KFDSIM_IOC_TEST, &t))
			pasid2 = t.value;
		close(fd2);
	}
	check(fd2 >= 0 && pasid1 && pasid1 == pasid2, "a second open shares the process",
	      "pasid %llu and %llu", (unsigned long long)pasid1, (unsigned long long)pasid2);

	/* Only the process that opened the file may use it (-EBADF). */
	pid = fork();
	if (!pid) {
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_PASID };

		_exit(ioctl(fd, KFDSIM_IOC_TEST, &t) && errno == EBADF ? 0 : 1);
	}
	st = -1;
	if (pid > 0)
		waitpid(pid, &st, 0);
	check(pid > 0 && WIFEXITED(st) && !WEXITSTATUS(st),
	      "ioctl from a forked child -> EBADF", NULL);

	r = q_destroy(&q);
	check(!r, "destroy: valid queue", "%d", r);
	d.queue_id = q.id;
	r = ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &d) ? errno : 0;
	check(r == EINVAL, "destroy: the same queue again -> EINVAL", "errno %d", r);
}

static void test_nesting(void)
{
	struct gq q, q2;
	uint64_t st1, st2, st3;
	double t;

	if (q_create(&q, 5, false)) {
		check(false, "nesting: create", "%s", strerror(errno));
		return;
	}
	check(qstate(&q) == KFDSIM_Q_ACTIVE, "a new queue is active", "state %llx",
	      (unsigned long long)qstate(&q));
	test_op(KFDSIM_TEST_EVICT, 0, NULL);
	test_op(KFDSIM_TEST_EVICT, 0, NULL);
	st1 = qstate(&q);
	q_submit(&q, 2, 500);
	t = wait_rptr(&q, 1, 100e3);
	check(st1 == KFDSIM_Q_EVICTED && t < 0, "evicted twice: inactive, runs nothing",
	      "state %llx", (unsigned long long)st1);
	/* A queue created while the process is evicted starts evicted. */
	check(!q_create(&q2, 5, false) && qstate(&q2) == KFDSIM_Q_EVICTED,
	      "a queue created while evicted starts evicted", NULL);
	test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	st2 = qstate(&q);
	t = wait_rptr(&q, 1, 100e3);
	check(st2 == KFDSIM_Q_EVICTED && t < 0, "2 evicts, 1 restore: still evicted",
	      "state %llx", (unsigned long long)st2);
	test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	st3 = qstate(&q);
	t = wait_rptr(&q, 1, 5e6);
	check(st3 == KFDSIM_Q_ACTIVE && t >= 0 && qstate(&q2) == KFDSIM_Q_ACTIVE,
	      "2nd restore: active again, the pending work runs", "state %llx, %.0f us",
	      (unsigned long long)st3, t);
	q_update(&q, 0, 5);
	st1 = qstate(&q);
	q_submit(&q, 1, 500);
	t = wait_rptr(&q, 2, 100e3);
	q_update(&q, 100, 5);
	st2 = qstate(&q);
	check(st1 == 0 && t < 0 && st2 == KFDSIM_Q_ACTIVE,
	      "QUEUE_IS_ACTIVE follows queue_percent 0 / 100", NULL);
	q_update(&q, 0, 5);
	test_op(KFDSIM_TEST_EVICT, 0, NULL);
	test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	st1 = qstate(&q);
	q_update(&q, 100, 5);
	check(st1 == 0 && qstate(&q) == KFDSIM_Q_ACTIVE,
	      "restore keeps a percent-0 queue inactive", "state %llx",
	      (unsigned long long)st1);
	check(q_drain(&q, 5e6), "nesting: every packet completed exactly once", NULL);
	q_destroy(&q2);
	q_destroy(&q);
}

static void test_reset(void)
{
	struct gq q;
	int r;

	if (q_create(&q, 5, false)) {
		check(false, "reset: create", "%s", strerror(errno));
		return;
	}
	q_submit(&q, 1, 100);
	q_drain(&q, 5e6);
	test_op(KFDSIM_TEST_SET_RESET, 0, NULL);
	r = q_update(&q, 100, 5);
	check(r == -EACCES, "update_queue of a process with a reset queue -> EACCES",
	      "%d", r);
	check(!q_destroy(&q), "a reset queue can be destroyed", NULL);
}

static void test_hang(void)
{
	struct gq q;
	uint64_t st1, st2;
	int r1, r2, r3;

	if (q_create(&q, 5, false)) {
		check(false, "hang: create", "%s", strerror(errno));
		return;
	}
	{
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_HWS_HANG, .value = 1 };

		ioctl(fd, KFDSIM_IOC_TEST, &t);
	}
	/* (KFD copies the properties first: percent 0 here would stick.) */
	r1 = q_update(&q, 100, 9);
	st1 = qstate(&q);
	r2 = test_op(KFDSIM_TEST_EVICT, 0, NULL);
	st2 = qstate(&q);
	{
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_HWS_HANG, .value = 0 };

		ioctl(fd, KFDSIM_IOC_TEST, &t);
	}
	check(r1 == -EIO && st1 == KFDSIM_Q_ACTIVE,
	      "HWS hang: update_queue fails with EIO and changes nothing", "%d, state %llx", r1,
	      (unsigned long long)st1);
	check(r2 == -EIO && st2 == KFDSIM_Q_EVICTED,
	      "HWS hang: evict fails with EIO but the queues count as evicted", "%d, state %llx",
	      r2, (unsigned long long)st2);
	r3 = test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	check(!r3 && qstate(&q) == KFDSIM_Q_ACTIVE,
	      "after the hang: one restore balances the failed evict", "%d", r3);
	q_submit(&q, 2, 200);
	check(q_drain(&q, 5e6), "hang: exactly once", NULL);
	q_destroy(&q);
}

static void test_prio(void)
{
	unsigned int cu = param("num_cu", 8);
	double t_lo = 0, t_hi = 0, t0, modelled;
	uint64_t lo_at_hi = 0;
	struct gq lo, hi;
	int i, n = 6;

	if (q_create(&lo, 2, false) || q_create(&hi, 12, false)) {
		check(false, "prio: create", "%s", strerror(errno));
		return;
	}
	/* Both queues get n packets of num_cu workgroups of 3 ms, together. */
	for (i = 0; i < n; i++) {
		q_submit(&lo, cu, 3000);
		q_submit(&hi, cu, 3000);
	}
	t0 = now_us();
	while ((!t_lo || !t_hi) && now_us() < t0 + 30e6) {
		if (!t_hi && atomic_load(hi.rptr) == (uint64_t)n) {
			t_hi = now_us() - t0;
			lo_at_hi = atomic_load(lo.rptr);
		}
		if (!t_lo && atomic_load(lo.rptr) == (uint64_t)n)
			t_lo = now_us() - t0;
		sleep_us(100);
	}
	modelled = n * 3000.0;
	/*
	 * Progress, not time: when the high queue is done, the low one has
	 * finished the packet it may have started first, and one more if this
	 * poll came late (round robin would have finished n - 1).  A loaded
	 * host stretches both queues, never their order.
	 */
	check(t_hi && t_lo && t_hi < t_lo && lo_at_hi <= 2,
	      "hardware priority: the high queue's packets finish first",
	      "high %.1f ms (alone it would take %.1f), low %.1f ms, low packets done when high was %llu of %d",
	      t_hi / 1e3, modelled / 1e3, t_lo / 1e3, (unsigned long long)lo_at_hi, n);
	check(q_drain(&lo, 5e6) && q_drain(&hi, 5e6), "prio: exactly once", NULL);

	/* Equal priorities: round robin, both finish at about the same time. */
	q_update(&hi, 100, 2);
	t_lo = t_hi = 0;
	for (i = 0; i < n; i++) {
		q_submit(&lo, cu, 3000);
		q_submit(&hi, cu, 3000);
	}
	t0 = now_us();
	while ((!t_lo || !t_hi) && now_us() < t0 + 30e6) {
		if (!t_hi && atomic_load(hi.rptr) == 2ull * n)
			t_hi = now_us() - t0;
		if (!t_lo && atomic_load(lo.rptr) == 2ull * n)
			t_lo = now_us() - t0;
		sleep_us(100);
	}
	check(t_hi && t_lo && t_hi > 1.5 * modelled && t_lo > 1.5 * modelled,
	      "equal priorities share the CUs (round robin)", "%.1f ms and %.1f ms",
	      t_hi / 1e3, t_lo / 1e3);
	check(q_drain(&lo, 5e6) && q_drain(&hi, 5e6), "prio: exactly once (equal)", NULL);
	q_destroy(&lo);
	q_destroy(&hi);
}

#define STORM_QUEUES 3

struct storm {
	struct gq *qs;
	atomic_bool stop;
	long ops, destroyed, churn_bad, errs;
};

static void *storm_fn(void *arg)
{
	struct storm *s = arg;
	unsigned int seed = 42;
	int evicted = 0, i;
	struct gq c;
	bool have_c = false;

	while (!atomic_load(&s->stop)) {
		struct gq *q = &s->qs[rand_r(&seed) % STORM_QUEUES];

		switch (rand_r(&seed) % 6) {
		case 0:
			if (evicted < 3 && !test_op(KFDSIM_TEST_EVICT, 0, NULL))
				evicted++;
			break;
		case 1:
			if (evicted && !test_op(KFDSIM_TEST_RESTORE, 0, NULL))
				evicted--;
			break;
		case 2:	/* ROCr Suspend / Resume */
			s->errs += !!q_update(q, rand_r(&seed) % 2 ? 100 : 0, 7);
			break;
		case 3:	/* ROCr SetPriority */
			s->errs += !!q_update(q, 100, rand_r(&seed) % 16);
			break;
		case 4:	/* destroy a queue with work in flight */
			if (have_c) {
				uint64_t w = atomic_load(c.wptr);

				for (i = 0; i < (int)w; i++)
					s->churn_bad += atomic_load(&c.sig[i]) > 1;
				s->errs += !!q_destroy(&c);
				have_c = false;
				s->destroyed++;
			} else {
				int r;

				/* Every other one an SDMA queue (main thread creates none now). */
				if (s->destroyed % 2)
					queue_type = KFDSIM_QUEUE_TYPE_SDMA;
				r = q_create(&c, rand_r(&seed) % 16, false);
				queue_type = KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
				if (r) {
					s->errs++;
					break;
				}
				for (i = 0; i < 8; i++)
					q_submit(&c, 4, 500);
				have_c = true;
			}
			break;
		default:
			break;
		}
		s->ops++;
		sleep_us(rand_r(&seed) % 1500);
	}
	if (have_c)
		s->errs += !!q_destroy(&c);
	while (evicted--)
		s->errs += !!test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	for (i = 0; i < STORM_QUEUES; i++)
		s->errs += !!q_update(&s->qs[i], 100, 7);
	return NULL;
}

static void test_storm(double seconds)
{
	struct gq qs[STORM_QUEUES];
	struct storm s = { .qs = qs };
	long submitted = 0;
	pthread_t th;
	double end;
	bool ok = true;
	int i, r;

	for (i = 0; i < STORM_QUEUES; i++) {
		/* The last one is an SDMA queue: its copies are preempted too. */
		queue_type = i == STORM_QUEUES - 1 ? KFDSIM_QUEUE_TYPE_SDMA :
						     KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
		r = q_create(&qs[i], 3 + 4 * i, false);
		queue_type = KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
		if (r) {
			check(false, "storm: create", "%s", strerror(-r));
			return;
		}
	}
	pthread_create(&th, NULL, storm_fn, &s);
	end = now_us() + seconds * 1e6;
	while (now_us() < end) {
		for (i = 0; i < STORM_QUEUES; i++) {
			q_retire(&qs[i]);
			while (q_outstanding(&qs[i]) < 6) {
				q_submit(&qs[i], 1 + submitted % 7, 100 + (submitted % 5) * 150);
				submitted++;
			}
		}
		sleep_us(300);
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	for (i = 0; i < STORM_QUEUES; i++)
		ok &= q_drain(&qs[i], 20e6);
	check(ok && !doubles && !lost, "exactly once under an evict/restore/update/destroy storm",
	      "%ld packets, %ld storm ops, %ld queues destroyed busy", submitted, s.ops,
	      s.destroyed);
	check(!s.churn_bad, "destroyed busy queues: no packet completed twice", NULL);
	check(!s.errs, "storm: every evict/restore/update/destroy succeeded", "%ld failed",
	      s.errs);
	for (i = 0; i < STORM_QUEUES; i++)
		q_destroy(&qs[i]);
}

static void test_timing(void)
{
	unsigned int cu = param("num_cu", 8);
	double t, sum = 0, worst = 0;
	struct gq q;
	int i, n = 10;

	if (q_create(&q, 7, false)) {
		check(false, "timing: create", "%s", strerror(errno));
		return;
	}
	/* num_cu workgroups of 20 ms on num_cu CUs: modelled 20 ms. */
	t = now_us();
	q_submit(&q, cu, 20000);
	q_drain(&q, 10e6);
	t = now_us() - t;
	printf("# timing: modelled 20000 us (%u x 20 ms on %u CUs), measured %.0f us, ratio %.2f\n",
	       cu, cu, t, t / 20000);
	/* A floor only: the host's load stretches any run, never shortens one. */
	check(t >= 20000, "timing: a modelled 20 ms job alone takes at least 20 ms",
	      "ratio %.2f", t / 20000);
	/* Short jobs: 1 ms, one at a time. */
	for (i = 0; i < n; i++) {
		double t0 = now_us();

		q_submit(&q, 1, 1000);
		while (q_outstanding(&q) > 0) {
			q_retire(&q);
			if (q_outstanding(&q) > 0)
				sleep_us(20);
		}
		t0 = now_us() - t0;
		sum += t0;
		if (t0 > worst)
			worst = t0;
	}
	printf("# timing: modelled 1000 us jobs: mean %.0f us (ratio %.2f), max %.0f us\n",
	       sum / n, sum / n / 1000, worst);
	check(sum / n >= 1000, "timing: a modelled 1 ms job alone takes at least 1 ms",
	      "ratio %.2f", sum / n / 1000);
	check(q_drain(&q, 5e6), "timing: exactly once", NULL);

	/* What a map/unmap change costs its caller (HWS: runlist_us; MES: mes_us). */
	t = now_us();
	for (i = 0; i < n; i++)
		q_update(&q, 100, 7);
	t = (now_us() - t) / n;
	printf("# timing: UPDATE_QUEUE of an active queue: %.0f us per call (runlist_us %u, mes_us %u)\n",
	       t, param("runlist_us", 0), param("mes_us", 0));
	t = now_us();
	for (i = 0; i < n; i++) {
		test_op(KFDSIM_TEST_EVICT, 0, NULL);
		test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	}
	t = (now_us() - t) / n;
	printf("# timing: evict + restore of the process: %.0f us per pair\n", t);
	q_destroy(&q);
}

/* Is @addr in a VM_PFNMAP mapping ("pf" in smaps VmFlags)? */
static bool is_pfnmap(const void *addr)
{
	unsigned long a = (unsigned long)addr, lo, hi;
	char line[512];
	bool in = false, pf = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = a >= lo && a < hi;
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			pf = strstr(line, " pf") != NULL;
			break;
		}
	}
	fclose(f);
	return pf;
}

static void test_pfnmap(void)
{
	uint64_t v = 0;
	struct gq q;
	int r, i, mfd;

	use_pfnmap = true;
	r = q_create(&q, 7, false);
	use_pfnmap = false;
	check(!r, "pfnmap: queue with rptr/wptr in a driver buffer", "%s",
	      r ? strerror(-r) : "");
	if (r)
		return;
	check(is_pfnmap((void *)q.wptr), "pfnmap: the buffer is VM_PFNMAP (not pinnable)", NULL);
	for (i = 0; i < 20; i++)
		q_submit(&q, 2, 300);
	check(q_drain(&q, 10e6), "pfnmap: every packet completed exactly once", NULL);
	/* /proc/pid/mem goes through access_process_vm -> vm_ops->access. */
	mfd = open("/proc/self/mem", O_RDONLY);
	r = mfd >= 0 ? (int)pread(mfd, &v, 8, (off_t)(uintptr_t)q.rptr) : -1;
	if (mfd >= 0)
		close(mfd);
	check(r == 8 && v == 20, "pfnmap: access_process_vm reads the read index",
	      "read %d bytes, %llu", r, (unsigned long long)v);
	check(!q_destroy(&q), "pfnmap: destroy", NULL);
	r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096) == MAP_FAILED ? errno : 0;
	check(r == EINVAL, "mmap at a non-zero offset -> EINVAL", "errno %d", r);
	r = mmap(NULL, 2 << 20, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED ? errno : 0;
	check(r == EINVAL, "mmap larger than KFDSIM_MAX_MMAP_SIZE -> EINVAL", "errno %d", r);
}

static bool sdma_listed(uint32_t qid)
{
	char line[512], want[32];
	bool found = false;
	FILE *f = fopen("/sys/kernel/debug/kfdsim/queues", "r");

	if (!f)
		return false;
	snprintf(want, sizeof(want), " qid=%u ", qid);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, want) && strstr(line, " type=sdma"))
			found = true;
	fclose(f);
	return found;
}

/* Field @key of queue @qid's line in kfdsim's debugfs "queues" (0: none). */
static uint64_t q_field(uint32_t qid, const char *key)
{
	char line[1024], want[32], k[40];
	unsigned long long v = 0;
	const char *at;
	FILE *f = fopen("/sys/kernel/debug/kfdsim/queues", "r");

	if (!f)
		return 0;
	snprintf(want, sizeof(want), " qid=%u ", qid);
	snprintf(k, sizeof(k), " %s=", key);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want))
			continue;
		at = strstr(line, k);
		if (at)
			v = strtoull(at + strlen(k), NULL, 10);
		break;
	}
	fclose(f);
	return v;
}

/* kfdsim's counter @key in debugfs "stats" (0: none). */
static uint64_t ks_stat(const char *key)
{
	unsigned long long v, r = 0;
	char k[64];
	FILE *f = fopen("/sys/kernel/debug/kfdsim/stats", "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", k, &v) == 2)
		if (!strcmp(k, key))
			r = v;
	fclose(f);
	return r;
}

/*
 * Order and overlap, from kfdsim's own clock (no wall time): the copies ran
 * one after the other (from the first start to the last end at least the sum
 * of their modelled times), each for its modelled time, on no CU (the
 * workgroups that completed are the compute queue's), and next to the
 * compute work (the two spans overlap).
 */
static void test_sdma(void)
{
	unsigned int cu = param("num_cu", 8);
	uint64_t wg0, s_busy, s_first, s_last, c_first, c_last;
	struct gq c, d;
	bool done;
	int i, n = 4;

	queue_type = KFDSIM_QUEUE_TYPE_SDMA;
	i = q_create(&d, 7, false);
	queue_type = KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
	check(!i && sdma_listed(d.id), "sdma: queue created with type SDMA", NULL);
	if (i || q_create(&c, 7, false))
		return;
	/* n copies of 2 ms next to n dispatches of num_cu x 2 ms. */
	wg0 = ks_stat("workgroups_completed");
	for (i = 0; i < n; i++) {
		q_submit(&d, 1, 2000);
		q_submit(&c, cu, 2000);
	}
	done = wait_rptr(&d, n, 30e6) >= 0 && wait_rptr(&c, n, 30e6) >= 0;
	s_busy = q_field(d.id, "busy_ns");
	s_first = q_field(d.id, "first_start_ns");
	s_last = q_field(d.id, "last_end_ns");
	c_first = q_field(c.id, "first_start_ns");
	c_last = q_field(c.id, "last_end_ns");
	check(done && s_busy == n * 2000000ull && s_first && s_last - s_first >= s_busy &&
	      ks_stat("workgroups_completed") - wg0 == (uint64_t)n * cu &&
	      c_first < s_last && s_first < c_last,
	      "sdma: copies run serially on their engine, not on the CUs",
	      "copies: %.1f ms modelled in a %.1f ms span; %llu workgroups (compute: %u); compute span %.1f..%.1f ms from the first copy",
	      s_busy / 1e6, (double)(s_last - s_first) / 1e6,
	      (unsigned long long)(ks_stat("workgroups_completed") - wg0), n * cu,
	      ((double)c_first - (double)s_first) / 1e6, ((double)c_last - (double)s_first) / 1e6);
	test_op(KFDSIM_TEST_EVICT, 0, NULL);
	q_submit(&d, 1, 500);
	check(wait_rptr(&d, n + 1, 100e3) < 0 && qstate(&d) == KFDSIM_Q_EVICTED,
	      "sdma: an evicted SDMA queue copies nothing", NULL);
	test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	check(q_drain(&d, 5e6) && q_drain(&c, 5e6), "sdma: every packet completed exactly once",
	      NULL);
	q_destroy(&d);
	q_destroy(&c);
}

/*
 * Three packets of one 2 ms workgroup each, on a device with free CUs:
 * without the barrier bit they run side by side (kfdsim's running_max:
 * more than one of the queue's workgroups on the CUs at once; a span
 * shorter than the summed time would also need the CP never to be late by
 * 4 ms); with it each starts after the previous one is complete (one at a
 * time, and a span of at least the summed time).  The summed time is the
 * modelled one, x time_scale.
 */
static void test_barrier(void)
{
	uint64_t want = 3ull * 2000000 * param("time_scale", 1), busy[2], span[2], most[2];
	uint16_t saved = pkt_flags;
	bool done[2];
	int b, i;

	for (b = 0; b < 2; b++) {
		struct gq q;

		pkt_flags = b ? KFDSIM_PKT_F_BARRIER : 0;
		if (q_create(&q, 7, false)) {
			check(false, "barrier: create a queue", NULL);
			break;
		}
		for (i = 0; i < 3; i++)
			q_submit(&q, 1, 2000);
		done[b] = wait_rptr(&q, 3, 30e6) >= 0 && q_drain(&q, 5e6);
		busy[b] = q_field(q.id, "busy_ns");
		span[b] = q_field(q.id, "last_end_ns") - q_field(q.id, "first_start_ns");
		most[b] = q_field(q.id, "running_max");
		q_destroy(&q);
	}
	pkt_flags = saved;
	if (b < 2)
		return;
	check(done[0] && busy[0] == want && most[0] >= 2,
	      "barrier: without the bit, packets run side by side",
	      "%.1f ms modelled in a %.1f ms span, at most %llu at once", busy[0] / 1e6,
	      span[0] / 1e6, (unsigned long long)most[0]);
	check(done[1] && busy[1] == want && most[1] == 1 && span[1] >= busy[1],
	      "barrier: with the bit, each packet waits for the previous one",
	      "%.1f ms modelled in a %.1f ms span, at most %llu at once", busy[1] / 1e6,
	      span[1] / 1e6, (unsigned long long)most[1]);
}

/* Read index of @w and the header at it, "rptr N header H". */
static uint64_t head_of(struct gq *w, uint16_t *hdr)
{
	uint64_t rp = atomic_load(w->rptr);

	*hdr = atomic_load((_Atomic uint16_t *)&w->ring[rp % RING_SLOTS].header);
	return rp;
}

/*
 * Two queues of this process share a signal area (struct dep_area): a
 * barrier packet of the waiter on signals that the producer's dispatches
 * increment, as hipStreamWaitEvent across streams.  Held: the waiter's read
 * index stays at the barrier, whose header is intact, and the dispatch
 * behind it does not start; released once the signals are satisfied.
 */
static void test_deps(void)
{
	size_t len = (sizeof(struct dep_area) + 4095) & ~(size_t)4095;
	struct dep_area *a = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	_Atomic uint64_t outside = 0, *d[2];
	struct gq w, p;
	uint64_t rp;
	uint16_t hdr;
	bool ok;

	if (a == MAP_FAILED || q_create_in(&p, 3, false, a, len, a->sig[1]) ||
	    q_create_in(&w, 12, false, a, len, a->sig[0])) {
		check(false, "deps: two queues on one signal area", "%s", strerror(errno));
		return;
	}
	/* AND on one signal. */
	d[0] = &a->dep[0];
	q_submit_barrier(&w, KFDSIM_PKT_BARRIER_AND, d, 1);
	q_submit(&w, 1, 100);
	sleep_us(50000);
	rp = head_of(&w, &hdr);
	check(rp == 0 && hdr == KFDSIM_PKT_BARRIER_AND && !q_field(w.id, "first_start_ns"),
	      "deps: a BARRIER_AND on an unsatisfied signal holds the queue",
	      "rptr %llu, header %u at it, after 50 ms", (unsigned long long)rp, hdr);
	q_submit_sig(&p, 1, 2000, d[0]);
	ok = wait_rptr(&w, 2, 30e6) >= 0;
	check(ok && atomic_load(d[0]) == 1 &&
	      q_field(w.id, "first_start_ns") >= q_field(p.id, "last_end_ns"),
	      "deps: it releases when the other queue's dispatch completes",
	      "rptr %llu, signal %llu", (unsigned long long)atomic_load(w.rptr),
	      (unsigned long long)atomic_load(d[0]));
	/* AND on two: one is not enough. */
	d[0] = &a->dep[1];
	d[1] = &a->dep[2];
	q_submit_barrier(&w, KFDSIM_PKT_BARRIER_AND, d, 2);
	q_submit(&w, 1, 100);
	q_submit_sig(&p, 1, 1000, d[0]);
	ok = wait_rptr(&p, 2, 30e6) >= 0;
	sleep_us(50000);
	rp = head_of(&w, &hdr);
	check(ok && rp == 2 && hdr == KFDSIM_PKT_BARRIER_AND,
	      "deps: BARRIER_AND waits for all its signals (one of two done)",
	      "rptr %llu, header %u", (unsigned long long)rp, hdr);
	q_submit_sig(&p, 1, 1000, d[1]);
	check(wait_rptr(&w, 4, 30e6) >= 0, "deps: ... and releases on the last", NULL);
	/* OR on two: one is enough. */
	d[0] = &a->dep[3];
	d[1] = &a->dep[4];
	q_submit_barrier(&w, KFDSIM_PKT_BARRIER_OR, d, 2);
	q_submit(&w, 1, 100);
	sleep_us(50000);
	rp = head_of(&w, &hdr);
	check(rp == 4 && hdr == KFDSIM_PKT_BARRIER_OR, "deps: a BARRIER_OR with none done holds",
	      "rptr %llu, header %u", (unsigned long long)rp, hdr);
	q_submit_sig(&p, 1, 1000, d[1]);
	ok = wait_rptr(&w, 6, 30e6) >= 0;
	check(ok && !atomic_load(d[0]), "deps: BARRIER_OR releases on one of its signals", NULL);
	/* Outside the signal area: warned, satisfied. */
	d[0] = &outside;
	q_submit_barrier(&w, KFDSIM_PKT_BARRIER_AND, d, 1);
	q_submit(&w, 1, 100);
	check(wait_rptr(&w, 8, 10e6) >= 0,
	      "deps: a dependency outside the signal area does not hold the queue", NULL);
	ok = q_drain(&w, 10e6);
	ok &= q_drain(&p, 10e6);
	check(ok && w.retired == 8 && p.retired == 4 && atomic_load(&a->dep[0]) == 1 &&
	      atomic_load(&a->dep[1]) == 1 && atomic_load(&a->dep[2]) == 1 &&
	      atomic_load(&a->dep[4]) == 1,
	      "deps: every packet of both queues completed exactly once",
	      "waiter %llu/8, producer %llu/4", (unsigned long long)w.retired,
	      (unsigned long long)p.retired);
	q_destroy(&w);
	q_destroy(&p);
	munmap(a, len);
}

/**
 * selftest() - run one named test
 * @name: test name
 *
 * Return: 0 if every check passed, 1 if not, 2 for an unknown name.
 */
/* The file's context id and PASID (KFDSIM_TEST_CONTEXT / _PASID). */
static void file_ids(int f, uint64_t *ctx, uint64_t *pasid)
{
	int saved = fd;

	fd = f;
	if (test_op(KFDSIM_TEST_CONTEXT, 0, ctx) || test_op(KFDSIM_TEST_PASID, 0, pasid))
		*ctx = *pasid = UINT64_MAX;
	fd = saved;
}

static void test_contexts(void)
{
	uint64_t c1, p1, c2, p2, c3, p3;
	long queues, procs;
	int f2, f3, r, saved = fd;
	struct gq q;
	double t;

	f2 = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	f3 = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	if (f2 < 0 || f3 < 0) {
		check(false, "contexts: open /dev/kfdsim three times", "%s", strerror(errno));
		return;
	}
	r = ioctl(f2, KFDSIM_IOC_CREATE_PROCESS) ? errno : 0;
	if (r == ENOTTY) {
		check(true, "contexts: CREATE_PROCESS is -ENOTTY on a layout without contexts",
		      NULL);
		close(f3);
		close(f2);
		return;
	}
	check(!r, "contexts: CREATE_PROCESS on a second open", "%s", strerror(r));
	r = ioctl(f3, KFDSIM_IOC_CREATE_PROCESS) ? errno : 0;
	check(!r, "contexts: CREATE_PROCESS on a third open", "%s", strerror(r));
	r = ioctl(f2, KFDSIM_IOC_CREATE_PROCESS) ? errno : 0;
	check(r == EINVAL, "contexts: a second CREATE_PROCESS on one file is -EINVAL",
	      "%s", strerror(r));
	file_ids(fd, &c1, &p1);
	file_ids(f2, &c2, &p2);
	file_ids(f3, &c3, &p3);
	check(c1 == KFDSIM_CONTEXT_ID_PRIMARY && c2 != c1 && c3 != c1 && c2 != c3,
	      "contexts: the first open is the primary, each secondary has its own id",
	      "ids %#llx %#llx %#llx", (unsigned long long)c1, (unsigned long long)c2,
	      (unsigned long long)c3);
	check(p1 != p2 && p1 != p3 && p2 != p3 && p2 != UINT64_MAX,
	      "contexts: each context has its own PASID", "%llu %llu %llu",
	      (unsigned long long)p1, (unsigned long long)p2, (unsigned long long)p3);

	fd = f2;
	r = q_create(&q, 5, false);
	fd = saved;
	check(!r, "contexts: a queue in a secondary context", "%s", strerror(-r));
	if (r)
		goto out;
	q_submit(&q, 2, 100);
	check(q_drain(&q, 10e6), "contexts: its packet completes exactly once", NULL);
	fd = f2;
	r = test_op(KFDSIM_TEST_HOLD_REF, 0, &(uint64_t){ 0 });
	check(r == -EINVAL, "contexts: HOLD_REF of 0 ms is -EINVAL", "%s", strerror(-r));
	{
		struct kfdsim_test_args h = { .op = KFDSIM_TEST_HOLD_REF, .value = 3000 };

		r = ioctl(f2, KFDSIM_IOC_TEST, &h) ? errno : 0;
		check(!r, "contexts: another holder references the secondary for 3 s", "%s",
		      strerror(r));
		r = ioctl(f2, KFDSIM_IOC_TEST, &h) ? errno : 0;
		check(r == EBUSY, "contexts: ... a second hold meanwhile is -EBUSY", "%s",
		      strerror(r));
	}
	fd = saved;
	queues = (long)ks_stat("queues");
	procs = (long)ks_stat("processes");
	close(f2);
	f2 = -1;
	check((long)ks_stat("queues") == queues - 1,
	      "contexts: closing a secondary's file dequeues its queue at once", "%ld -> %ld",
	      queues, (long)ks_stat("queues"));
	check((long)ks_stat("processes") == procs,
	      "contexts: ... while the held context itself lives on", "%ld -> %ld", procs,
	      (long)ks_stat("processes"));
	for (t = now_us(); (long)ks_stat("processes") != procs - 1 && now_us() < t + 30e6;)
		sleep_us(50000);
	check((long)ks_stat("processes") == procs - 1, "contexts: ... and is freed after the hold",
	      "%ld", (long)ks_stat("processes"));
	munmap(q.mem, q.len);
out:
	if (f2 >= 0)
		close(f2);
	close(f3);
}

int selftest(const char *name)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(name, "bad-ioctls"))
		test_bad_ioctls();
	else if (!strcmp(name, "nesting"))
		test_nesting();
	else if (!strcmp(name, "reset"))
		test_reset();
	else if (!strcmp(name, "hang"))
		test_hang();
	else if (!strcmp(name, "prio"))
		test_prio();
	else if (!strcmp(name, "storm"))
		test_storm(4);
	else if (!strcmp(name, "timing"))
		test_timing();
	else if (!strcmp(name, "pfnmap"))
		test_pfnmap();
	else if (!strcmp(name, "sdma"))
		test_sdma();
	else if (!strcmp(name, "barrier"))
		test_barrier();
	else if (!strcmp(name, "contexts"))
		test_contexts();
	else if (!strcmp(name, "deps"))
		test_deps();
	else
		return 2;
	return failed ? 1 : 0;
}
