// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim_test - behaviour tests of the simulated KFD + GPU, run in the test
 * guest with kfdsim.ko loaded.  Prints "ok - name" / "not ok - name" lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "kfdsim_ioctl.h"

#define SLOTS 256
static int fd, failed;

static void check(bool ok, const char *name, const char *detail)
{
	printf("%sok - %s%s%s\n", ok ? "" : "not ", name, detail ? " # " : "", detail ? detail : "");
	if (!ok)
		failed++;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct q {
	struct kfdsim_packet *ring;
	_Atomic uint64_t *rptr, *wptr, *sig;
	uint32_t id;
	struct kfdsim_create_queue_args a;
};

static int qcreate(struct q *q, int prio)
{
	char *m = mmap(NULL, SLOTS * 64 + 4096 + SLOTS * 8, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	q->ring = (void *)m;
	q->wptr = (void *)(m + SLOTS * 64);
	q->rptr = (void *)(m + SLOTS * 64 + 8);
	q->sig = (void *)(m + SLOTS * 64 + 4096);
	memset(&q->a, 0, sizeof(q->a));
	q->a.ring_base_address = (uintptr_t)q->ring;
	q->a.ring_size = SLOTS * 64;
	q->a.read_pointer_address = (uintptr_t)q->rptr;
	q->a.write_pointer_address = (uintptr_t)q->wptr;
	q->a.signal_base_address = (uintptr_t)q->sig;
	q->a.signal_size = SLOTS * 8;
	q->a.queue_percentage = 100;
	q->a.queue_priority = prio;
	if (ioctl(fd, KFDSIM_IOC_CREATE_QUEUE, &q->a))
		return -errno;
	q->id = q->a.queue_id;
	return 0;
}

static void submit(struct q *q, int wg, double us)
{
	uint64_t id = atomic_load(q->wptr);
	struct kfdsim_packet *p = &q->ring[id % SLOTS];

	q->sig[id % SLOTS] = 0;
	p->workgroups = wg;
	p->ns_per_workgroup = us * 1000;
	p->completion_signal = (uintptr_t)&q->sig[id % SLOTS];
	atomic_store_explicit((_Atomic uint16_t *)&p->header, KFDSIM_PKT_DISPATCH,
			      memory_order_release);
	atomic_store(q->wptr, id + 1);
}

static bool drain(struct q *q, double timeout_us)
{
	double end = now_us() + timeout_us;

	while (atomic_load(q->rptr) != atomic_load(q->wptr) && now_us() < end)
		usleep(200);
	return atomic_load(q->rptr) == atomic_load(q->wptr);
}

static int test_op(int op, uint32_t qid, uint64_t *val)
{
	struct kfdsim_test_args t = { .op = op, .queue_id = qid };
	int r = ioctl(fd, KFDSIM_IOC_TEST, &t);

	if (val)
		*val = t.value;
	return r ? -errno : 0;
}

static int update(struct q *q, int percent, int prio)
{
	struct kfdsim_update_queue_args u = {
		.ring_base_address = (uintptr_t)q->ring, .queue_id = q->id,
		.ring_size = SLOTS * 64, .queue_percentage = percent, .queue_priority = prio };

	return ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &u) ? -errno : 0;
}

static void test_bad_inputs(void)
{
	struct q q;
	struct kfdsim_create_queue_args a;
	struct kfdsim_destroy_queue_args d = { .queue_id = 999 };
	struct kfdsim_update_queue_args u = { .queue_id = 999, .queue_percentage = 100 };
	struct { const char *name; int field; uint64_t val; int err; } cases[] = {
		{ "create: priority 16 -> EINVAL", 0, 16, EINVAL },
		{ "create: percent 101 -> EINVAL", 1, 101, EINVAL },
		{ "create: ring size 1000 -> EINVAL", 2, 1000, EINVAL },
		{ "create: ring size 0 -> EINVAL", 2, 0, EINVAL },
		{ "create: NULL ring -> EFAULT", 3, 0, EFAULT },
		{ "create: kernel-space ring -> EFAULT", 3, 0xffff888000000000ull, EFAULT },
		{ "create: unaligned rptr -> EINVAL", 4, 3, EINVAL },
		{ "create: NULL wptr -> EFAULT", 5, 0, EFAULT },
		{ "create: unmapped ring -> EFAULT", 3, 0x1000, EFAULT },
	};
	unsigned int i;

	qcreate(&q, 5);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		a = q.a;
		switch (cases[i].field) {
		case 0: a.queue_priority = cases[i].val; break;
		case 1: a.queue_percentage = cases[i].val; break;
		case 2: a.ring_size = cases[i].val; break;
		case 3: a.ring_base_address = cases[i].val; break;
		case 4: a.read_pointer_address += cases[i].val; break;
		case 5: a.write_pointer_address = cases[i].val; break;
		}
		r = ioctl(fd, KFDSIM_IOC_CREATE_QUEUE, &a) ? errno : 0;
		check(r == cases[i].err, cases[i].name, NULL);
	}
	check(ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &d) && errno == EINVAL,
	      "destroy: unknown queue -> EINVAL", NULL);
	check(ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &u) && errno == EFAULT,
	      "update: unknown queue -> EFAULT", NULL);
	check(update(&q, 100, 16) == -EINVAL, "update: priority 16 -> EINVAL", NULL);
	check(update(&q, 101, 5) == -EINVAL, "update: percent 101 -> EINVAL", NULL);
	u = (struct kfdsim_update_queue_args){ .ring_base_address = (uintptr_t)q.ring + 4096,
		.queue_id = q.id, .ring_size = SLOTS * 64, .queue_percentage = 100 };
	check(ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &u) && errno == EFAULT,
	      "update: ring that is not the queue's -> EFAULT", NULL);
	check(ioctl(fd, _IO('K', 0x77)) && errno == ENOTTY, "unknown ioctl -> ENOTTY", NULL);
	check(test_op(99, 0, NULL) == -EINVAL, "unknown test op -> EINVAL", NULL);
	d.queue_id = q.id;
	check(!ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &d), "destroy: valid queue", NULL);
}

static void test_eviction_nesting(void)
{
	struct q q;
	uint64_t st = 0;
	bool ok = true;

	qcreate(&q, 5);
	test_op(KFDSIM_TEST_QUERY, q.id, &st);
	ok &= st == KFDSIM_Q_ACTIVE;
	test_op(KFDSIM_TEST_EVICT, 0, NULL);
	test_op(KFDSIM_TEST_EVICT, 0, NULL);
	test_op(KFDSIM_TEST_QUERY, q.id, &st);
	ok &= st == KFDSIM_Q_EVICTED;
	test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	test_op(KFDSIM_TEST_QUERY, q.id, &st);
	check(ok && st == KFDSIM_Q_EVICTED, "eviction nests: 2 evicts, 1 restore -> still evicted",
	      NULL);
	test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	test_op(KFDSIM_TEST_QUERY, q.id, &st);
	check(st == KFDSIM_Q_ACTIVE, "eviction nests: 2nd restore -> active", NULL);
	update(&q, 0, 5);
	test_op(KFDSIM_TEST_QUERY, q.id, &st);
	ok = st == 0;
	update(&q, 100, 5);
	test_op(KFDSIM_TEST_QUERY, q.id, &st);
	check(ok && st == KFDSIM_Q_ACTIVE, "QUEUE_IS_ACTIVE follows queue_percent 0/100", NULL);
	struct kfdsim_destroy_queue_args d = { .queue_id = q.id };
	ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &d);
}

static void test_arbitration(void)
{
	struct q lo, hi;
	double t_lo = 0, t_hi = 0, t0;
	char msg[128];
	int i;

	qcreate(&lo, 2);
	qcreate(&hi, 12);
	for (i = 0; i < 4; i++)
		submit(&lo, 8, 3000);
	usleep(1000);
	for (i = 0; i < 4; i++)
		submit(&hi, 8, 3000);
	t0 = now_us();
	while ((!t_lo || !t_hi) && now_us() < t0 + 20e6) {
		if (!t_hi && atomic_load(hi.rptr) == 4)
			t_hi = now_us() - t0;
		if (!t_lo && atomic_load(lo.rptr) == 4)
			t_lo = now_us() - t0;
		usleep(100);
	}
	snprintf(msg, sizeof(msg), "high done at %.1f ms, low at %.1f ms", t_hi / 1e3, t_lo / 1e3);
	check(t_hi && t_lo && t_hi < t_lo, "hardware priority: the high queue's work finishes first",
	      msg);
}

struct storm { struct q *q; atomic_bool stop; long ops; };

static void *storm_fn(void *arg)
{
	struct storm *s = arg;
	unsigned int seed = 42;
	int evicted = 0;

	while (!atomic_load(&s->stop)) {
		switch (rand_r(&seed) % 4) {
		case 0: test_op(KFDSIM_TEST_EVICT, 0, NULL); evicted++; break;
		case 1: if (evicted) { test_op(KFDSIM_TEST_RESTORE, 0, NULL); evicted--; } break;
		case 2: update(s->q, rand_r(&seed) % 2 ? 100 : 0, rand_r(&seed) % 16); break;
		case 3: update(s->q, 100, 7); break;
		}
		s->ops++;
		usleep(rand_r(&seed) % 2000);
	}
	while (evicted--)
		test_op(KFDSIM_TEST_RESTORE, 0, NULL);
	update(s->q, 100, 7);
	return NULL;
}

static void test_storm(void)
{
	struct q q;
	struct storm s = { .q = &q };
	pthread_t th;
	uint64_t submitted = 0, bad = 0, i;
	double end;
	char msg[160];

	qcreate(&q, 7);
	pthread_create(&th, NULL, storm_fn, &s);
	end = now_us() + 3e6;
	while (now_us() < end) {
		while (atomic_load(q.wptr) - atomic_load(q.rptr) < 8 && submitted < SLOTS) {
			submit(&q, 1 + submitted % 5, 300);
			submitted++;
		}
		if (submitted >= SLOTS)
			break;
		usleep(500);
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	drain(&q, 20e6);
	for (i = 0; i < submitted; i++)
		bad += q.sig[i] != 1;
	snprintf(msg, sizeof(msg), "%llu packets, %ld evict/restore/update ops, %llu signals != 1",
		 (unsigned long long)submitted, s.ops, (unsigned long long)bad);
	check(atomic_load(q.rptr) == submitted && !bad,
	      "exactly once under an evict/restore/update storm", msg);
}

static void test_timing(void)
{
	struct q q;
	double t0, t;
	char msg[128];

	qcreate(&q, 7);
	t0 = now_us();
	submit(&q, 8, 20000);	/* 8 workgroups on 8 CUs: modelled 20 ms */
	drain(&q, 10e6);
	t = now_us() - t0;
	snprintf(msg, sizeof(msg), "modelled 20000 us, measured %.0f us, ratio %.2f", t, t / 20000);
	check(t >= 20000 && t < 20000 * 20, "timing: a modelled 20 ms job alone", msg);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = open("/dev/kfdsim", O_RDWR);
	if (fd < 0) {
		printf("not ok - open /dev/kfdsim # %s\n", strerror(errno));
		return 1;
	}
	test_bad_inputs();
	test_eviction_nesting();
	test_arbitration();
	test_storm();
	test_timing();
	return failed ? 1 : 0;
}
