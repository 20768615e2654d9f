// SPDX-License-Identifier: GPL-2.0
/*
 * gpload - load generator for kfdsim's simulated GPU.
 *
 *   gpload --mode lc  : latency-critical requests (periodic or Poisson),
 *                       measures submit -> completion per request
 *   gpload --mode be  : best-effort stream, keeps N long dispatches in flight,
 *                       measures completed work per second
 *   gpload --mode churn : creates and destroys short-lived queues
 *   gpload --mode idle  : creates queues and waits (registration/scan tests)
 *
 * Every packet has its own completion signal; gpload checks that each one
 * was incremented exactly once and that the read index caught up with the
 * write index at the end.  --rocr behaves like ROCr: create at priority 7,
 * then UPDATE_QUEUE to the wanted priority with percent 100 (and again every
 * --update-ms).  --debug marks the process debugged (kfd_dbg_trap_enable).
 * SIGINT/SIGTERM: stop submitting, drain, verify, report.
 * Exit status: 0 = every packet completed exactly once, 1 = not, 2 = usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
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

#define RING_SLOTS 256

struct gq {
	struct kfdsim_packet *ring;
	_Atomic uint64_t *rptr;
	_Atomic uint64_t *wptr;
	_Atomic uint64_t *sig;	/* RING_SLOTS signals */
	uint64_t retired;	/* packets verified complete */
	uint32_t id;
	void *mem;
	size_t len;
};

static struct {
	const char *mode;
	int prio, queues, wg, k, inflight, update_ms;
	double duration, wg_us, period_us;
	bool poisson, rocr, quiet, debug;
	const char *json, *lat_out;
	unsigned int seed;
} opt = {
	.mode = "lc", .prio = 7, .queues = 1, .wg = 8, .k = 1, .inflight = 4,
	.duration = 5, .wg_us = 200, .period_us = 5000, .seed = 1,
};

static volatile sig_atomic_t stop;
static int fd = -1;
static long errors, lost, doubles, updates;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void sleep_us(double us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1e6),
			       .tv_nsec = (long)fmod(us * 1e3, 1e9) };

	if (us > 0)
		nanosleep(&ts, NULL);
}

static int q_update(struct gq *q, int percent, int prio)
{
	struct kfdsim_update_queue_args a = {
		.ring_base_address = (uintptr_t)q->ring,
		.queue_id = q->id,
		.ring_size = RING_SLOTS * sizeof(struct kfdsim_packet),
		.queue_percentage = percent,
		.queue_priority = prio,
	};

	updates++;
	return ioctl(fd, KFDSIM_IOC_UPDATE_QUEUE, &a);
}

static int q_create(struct gq *q, int prio)
{
	struct kfdsim_create_queue_args a = { 0 };
	size_t ring_len = RING_SLOTS * sizeof(struct kfdsim_packet);
	char *m;

	q->len = ring_len + 4096 + RING_SLOTS * 8;
	m = mmap(NULL, q->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	q->mem = m;
	q->ring = (struct kfdsim_packet *)m;
	/* amd_queue_t-like: write index, then the read index 72 bytes later. */
	q->wptr = (_Atomic uint64_t *)(m + ring_len + 56);
	q->rptr = (_Atomic uint64_t *)(m + ring_len + 128);
	q->sig = (_Atomic uint64_t *)(m + ring_len + 4096);
	for (int i = 0; i < RING_SLOTS; i++)
		q->ring[i].header = KFDSIM_PKT_INVALID;
	a.ring_base_address = (uintptr_t)q->ring;
	a.ring_size = ring_len;
	a.read_pointer_address = (uintptr_t)q->rptr;
	a.write_pointer_address = (uintptr_t)q->wptr;
	a.signal_base_address = (uintptr_t)q->sig;
	a.signal_size = RING_SLOTS * 8;
	a.queue_percentage = 100;
	a.queue_priority = opt.rocr ? 7 : prio;
	if (ioctl(fd, KFDSIM_IOC_CREATE_QUEUE, &a)) {
		munmap(m, q->len);
		return -1;
	}
	q->id = a.queue_id;
	q->retired = 0;
	if (opt.rocr && q_update(q, 100, prio))
		return -1;
	return 0;
}

static void q_destroy(struct gq *q)
{
	struct kfdsim_destroy_queue_args a = { .queue_id = q->id };

	if (ioctl(fd, KFDSIM_IOC_DESTROY_QUEUE, &a))
		errors++;
	munmap(q->mem, q->len);
}

static int q_outstanding(struct gq *q)
{
	return (int)(atomic_load_explicit(q->wptr, memory_order_relaxed) - q->retired);
}

/* Submit one dispatch; returns its packet id, or -1 if the ring is full. */
static int64_t q_submit(struct gq *q, int wg, double wg_us)
{
	uint64_t id = atomic_load_explicit(q->wptr, memory_order_relaxed);
	struct kfdsim_packet *p = &q->ring[id % RING_SLOTS];

	if (id - q->retired >= RING_SLOTS)
		return -1;
	atomic_store_explicit(&q->sig[id % RING_SLOTS], 0, memory_order_relaxed);
	p->workgroups = wg;
	p->ns_per_workgroup = (uint64_t)(wg_us * 1000);
	p->completion_signal = (uintptr_t)&q->sig[id % RING_SLOTS];
	atomic_store_explicit((_Atomic uint16_t *)&p->header, KFDSIM_PKT_DISPATCH,
			      memory_order_release);
	atomic_store_explicit(q->wptr, id + 1, memory_order_release);
	return id;
}

/* Verify and count the packets that completed, in order. */
static int q_retire(struct gq *q)
{
	uint64_t w = atomic_load_explicit(q->wptr, memory_order_relaxed);
	int n = 0;

	while (q->retired < w) {
		uint64_t v = atomic_load_explicit(&q->sig[q->retired % RING_SLOTS],
						  memory_order_acquire);

		if (v == 0)
			break;
		if (v != 1) {
			fprintf(stderr, "gpload: queue %u packet %llu completed %llu times\n",
				q->id, (unsigned long long)q->retired, (unsigned long long)v);
			doubles++;
		}
		q->retired++;
		n++;
	}
	return n;
}

/* Wait for everything submitted; check the read index. */
static void q_drain(struct gq *q, double timeout_us)
{
	double end = now_us() + timeout_us;

	while (q_outstanding(q) > 0 && now_us() < end) {
		q_retire(q);
		sleep_us(200);
	}
	q_retire(q);
	if (q_outstanding(q) > 0) {
		fprintf(stderr, "gpload: queue %u: %d packets never completed\n", q->id,
			q_outstanding(q));
		lost += q_outstanding(q);
	}
	if (atomic_load(q->rptr) != atomic_load(q->wptr)) {
		fprintf(stderr, "gpload: queue %u: rptr %llu != wptr %llu\n", q->id,
			(unsigned long long)atomic_load(q->rptr),
			(unsigned long long)atomic_load(q->wptr));
		errors++;
	}
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

static void report(double *lat, long nlat, long packets, long wgs, double elapsed_s)
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
		       nlat ? lat[nlat - 1] : 0, packets, wgs * opt.wg_us / elapsed_s, errors,
		       lost, doubles);
	if (opt.json) {
		f = fopen(opt.json, "w");
		if (!f) {
			perror(opt.json);
			errors++;
			return;
		}
		fprintf(f, "{\"mode\": \"%s\", \"prio\": %d, \"queues\": %d, \"pid\": %d, \"duration_s\": %.3f, \"count\": %ld, \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f, \"mean_us\": %.1f, \"packets\": %ld, \"workgroups\": %ld, \"throughput_wgus_per_s\": %.1f, \"updates\": %ld, \"errors\": %ld, \"lost\": %ld, \"double\": %ld}\n",
			opt.mode, opt.prio, opt.queues, getpid(), elapsed_s, nlat,
			pct(lat, nlat, 50), pct(lat, nlat, 90), pct(lat, nlat, 99),
			nlat ? lat[nlat - 1] : 0, nlat ? sum / nlat : 0, packets, wgs,
			wgs * opt.wg_us / elapsed_s, updates, errors, lost, doubles);
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

static int run(void)
{
	struct gq *qs = calloc(opt.queues, sizeof(*qs));
	long cap = 1 << 20, nlat = 0, packets = 0, wgs = 0;
	double *lat = malloc(cap * sizeof(*lat));
	double t0, end, next_arrival, next_update;
	int i;

	if (!qs || !lat)
		return 1;
	for (i = 0; i < opt.queues && strcmp(opt.mode, "churn"); i++) {
		if (q_create(&qs[i], opt.prio)) {
			fprintf(stderr, "gpload: create queue %d: %s\n", i, strerror(errno));
			return 1;
		}
	}
	if (opt.debug) {
		struct kfdsim_test_args t = { .op = KFDSIM_TEST_DBG_ENABLE };

		if (ioctl(fd, KFDSIM_IOC_TEST, &t))
			errors++;
	}
	if (!opt.quiet)
		printf("gpload %s: pid %d, %d queue(s) at priority %d\n", opt.mode, getpid(),
		       opt.queues, opt.prio);
	fflush(stdout);
	t0 = now_us();
	end = t0 + opt.duration * 1e6;
	next_arrival = t0;
	next_update = t0 + opt.update_ms * 1e3;

	while (!stop && now_us() < end) {
		if (opt.update_ms && now_us() >= next_update) {
			for (i = 0; i < opt.queues; i++)
				if (q_update(&qs[i], 100, opt.prio))
					errors++;
			next_update += opt.update_ms * 1e3;
		}
		if (!strcmp(opt.mode, "lc")) {
			struct gq *q = &qs[nlat % opt.queues];
			double t;
			int k;

			while (now_us() < next_arrival && !stop)
				sleep_us(fmin(next_arrival - now_us(), 200));
			next_arrival += next_gap();
			t = now_us();
			for (k = 0; k < opt.k; k++)
				q_submit(q, opt.wg, opt.wg_us);
			while (q_outstanding(q) > 0 && now_us() < t + 30e6) {
				q_retire(q);
				if (q_outstanding(q) > 0)
					sleep_us(20);
			}
			if (q_outstanding(q) > 0)
				break;	/* reported as lost by the drain */
			if (nlat < cap)
				lat[nlat++] = now_us() - t;
			packets += opt.k;
			wgs += (long)opt.k * opt.wg;
		} else if (!strcmp(opt.mode, "be")) {
			for (i = 0; i < opt.queues; i++) {
				int done = q_retire(&qs[i]);

				packets += done;
				wgs += (long)done * opt.wg;
				while (q_outstanding(&qs[i]) < opt.inflight)
					q_submit(&qs[i], opt.wg, opt.wg_us);
			}
			sleep_us(300);
		} else if (!strcmp(opt.mode, "churn")) {
			struct gq q;

			if (q_create(&q, opt.prio)) {
				fprintf(stderr, "gpload: churn create: %s\n", strerror(errno));
				errors++;
				break;
			}
			q_submit(&q, 1, opt.wg_us);
			q_drain(&q, 10e6);
			packets++;
			wgs++;
			q_destroy(&q);
		} else {
			sleep_us(10000);
		}
	}
	for (i = 0; i < opt.queues && strcmp(opt.mode, "churn"); i++) {
		int before = q_outstanding(&qs[i]);

		q_drain(&qs[i], 30e6);
		if (!strcmp(opt.mode, "be")) {
			packets += before - q_outstanding(&qs[i]);
			wgs += (long)(before - q_outstanding(&qs[i])) * opt.wg;
		}
	}
	report(lat, nlat, packets, wgs, (now_us() - t0) / 1e6);
	return errors || lost || doubles ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gpload [--mode lc|be|churn|idle] [--prio 0..15] [--queues N]\n"
		"              [--duration S] [--wg N] [--wg-us US] [--k N] [--period-us US]\n"
		"              [--poisson] [--inflight N] [--rocr] [--update-ms MS]\n"
		"              [--json FILE] [--lat-out FILE] [--seed N] [--quiet]\n"
		"              [--debug (attach the simulated debugger)]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", 1, 0, 'm' }, { "prio", 1, 0, 'p' }, { "queues", 1, 0, 'q' },
		{ "duration", 1, 0, 'd' }, { "wg", 1, 0, 'w' }, { "wg-us", 1, 0, 'u' },
		{ "k", 1, 0, 'k' }, { "period-us", 1, 0, 'P' }, { "poisson", 0, 0, 'o' },
		{ "inflight", 1, 0, 'i' }, { "rocr", 0, 0, 'r' }, { "update-ms", 1, 0, 'U' },
		{ "json", 1, 0, 'j' }, { "lat-out", 1, 0, 'l' }, { "seed", 1, 0, 's' },
		{ "quiet", 0, 0, 'Q' }, { "debug", 0, 0, 'D' }, { "help", 0, 0, 'h' }, { 0 } };
	int c, rc;

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
		default: usage(); return 2;
		}
	}
	if (strcmp(opt.mode, "lc") && strcmp(opt.mode, "be") && strcmp(opt.mode, "churn") &&
	    strcmp(opt.mode, "idle")) {
		usage();
		return 2;
	}
	if (opt.queues < 1 || opt.wg < 1 || opt.k < 1 || opt.k >= RING_SLOTS ||
	    opt.inflight < 1 || opt.inflight >= RING_SLOTS || opt.wg_us < 0) {
		fprintf(stderr, "gpload: bad numeric argument\n");
		return 2;
	}
	srand48(opt.seed);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fd = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("gpload: /dev/kfdsim");
		return 1;
	}
	rc = run();
	close(fd);
	return rc;
}
