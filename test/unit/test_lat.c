// SPDX-License-Identifier: GPL-2.0
/*
 * test_lat - unit tests of bpf/gp_lat.h, the log-linear latency buckets of
 * gp_stats (bucket index, bounds, percentiles against the exact percentiles
 * of synthetic distributions).  TAP output and exit status of
 * test/unit/tap.h.
 *
 *   gcc -O2 -g -Wall -Wextra -Werror -fsanitize=address,undefined -I bpf \
 *       -o build/test_lat test/unit/test_lat.c && build/test_lat
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gp_lat.h"
#include "tap.h"

#define US 1000ULL
#define MS 1000000ULL

/* EXPECT_LE(a, b) with both values in the diagnostic. */
#define EXPECT_LE(a, b, what) do {						\
	unsigned long long a_ = (a), b_ = (b);					\
	if (a_ > b_ && tap_cur_failed++ < 5) {					\
		printf("# %s:%d: %s: %llu > %llu\n", __FILE__, __LINE__, what,	\
		       a_, b_);							\
	}									\
} while (0)

static __u64 rng = 88172645463325252ULL;

static __u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_small_values(void)
{
	__u64 v;

	/* Below GP_LAT_SUB ns every value has its own bucket. */
	for (v = 0; v < GP_LAT_SUB; v++) {
		EXPECT(gp_lat_bucket(v) == v);
		EXPECT(gp_lat_lower((__u32)v) == v && gp_lat_upper((__u32)v) == v);
	}
	/* The next power of two: still 1 ns wide, then 2 ns. */
	EXPECT(gp_lat_bucket(16) == 16 && gp_lat_bucket(31) == 31);
	EXPECT(gp_lat_bucket(32) == 32 && gp_lat_bucket(33) == 32 && gp_lat_bucket(34) == 33);
	EXPECT(gp_lat_lower(32) == 32 && gp_lat_upper(32) == 33);
}

static void test_bounds_tile(void)
{
	__u32 b;

	/* Buckets tile [0, 2^GP_LAT_MAX_LOG2) without gaps or overlaps, in order. */
	for (b = 0; b + 1 < GP_LAT_BUCKETS; b++) {
		__u64 lo = gp_lat_lower(b), hi = gp_lat_upper(b);

		EXPECT_LE(lo, hi, "lower <= upper");
		EXPECT(gp_lat_lower(b + 1) == hi + 1);
		EXPECT(gp_lat_bucket(lo) == b);
		EXPECT(gp_lat_bucket(hi) == b);
		/* width at most 1/GP_LAT_SUB of the lower bound */
		if (lo >= GP_LAT_SUB)
			EXPECT_LE((hi - lo + 1) * GP_LAT_SUB, lo, "bucket width * SUB <= lower");
	}
	EXPECT(gp_lat_lower(GP_LAT_BUCKETS - 1) < (1ULL << GP_LAT_MAX_LOG2));
	EXPECT(gp_lat_upper(GP_LAT_BUCKETS - 1) == ~0ULL);
}

static void test_range(void)
{
	/* 1 us (in [512, 1024) ns): 32 ns buckets; 10 s in range; overflow in the last. */
	EXPECT(gp_lat_upper(gp_lat_bucket(1000)) - gp_lat_lower(gp_lat_bucket(1000)) < 64);
	EXPECT(gp_lat_bucket(10000 * MS) < GP_LAT_BUCKETS - 1);
	EXPECT(gp_lat_bucket((1ULL << GP_LAT_MAX_LOG2) - 1) == GP_LAT_BUCKETS - 1);
	EXPECT(gp_lat_bucket(1ULL << GP_LAT_MAX_LOG2) == GP_LAT_BUCKETS - 1);
	EXPECT(gp_lat_bucket(~0ULL) == GP_LAT_BUCKETS - 1);
}

static void test_random_values(void)
{
	int i;

	/* Every value lies within its bucket's bounds; buckets are monotone in the value. */
	for (i = 0; i < 200000; i++) {
		__u64 v = rnd() >> (rnd() % 64);
		__u32 b = gp_lat_bucket(v);

		EXPECT(b < GP_LAT_BUCKETS);
		EXPECT_LE(gp_lat_lower(b), v, "lower <= v");
		EXPECT_LE(v, gp_lat_upper(b), "v <= upper");
		if (v)
			EXPECT(gp_lat_bucket(v - 1) <= b);
	}
}

static void test_add(void)
{
	static struct gp_lat_hist h;
	__u64 sum = 0, n = 0;
	__u32 b;

	memset(&h, 0, sizeof(h));
	EXPECT(gp_lat_pct(&h, 500) == 0);
	gp_lat_add(&h, 250 * US);
	gp_lat_add(&h, 3 * US);
	gp_lat_add(&h, 40 * MS);
	EXPECT(h.count == 3 && h.min_ns == 3 * US && h.max_ns == 40 * MS);
	EXPECT(h.sum_ns == 250 * US + 3 * US + 40 * MS);
	for (b = 0; b < GP_LAT_BUCKETS; b++) {
		n += h.buckets[b];
		sum += h.buckets[b] ? 1 : 0;
	}
	EXPECT(n == 3 && sum == 3);
	/* A zero sample is a minimum too. */
	gp_lat_add(&h, 0);
	EXPECT(h.min_ns == 0 && h.count == 4);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The exact percentile: the sample of rank ceil(n * permille / 1000). */
static __u64 exact_pct(const __u64 *sorted, __u64 n, __u32 permille)
{
	__u64 rank = (n * permille + 999) / 1000;

	return sorted[rank ? rank - 1 : 0];
}

/*
 * Fill a histogram with @n samples from @gen, then check p0.1 .. p100
 * against the exact ones: never below, at most 1/GP_LAT_SUB above, and
 * never above the maximum.
 */
static void check_dist(const char *name, __u64 (*gen)(__u64 i), __u64 n)
{
	static const __u32 pm[] = { 1, 10, 100, 250, 500, 750, 900, 950, 990, 999, 1000 };
	static struct gp_lat_hist h;
	__u64 *v = calloc(n, sizeof(*v));
	size_t k;
	__u64 i;

	if (!v) {
		EXPECT(!"out of memory");
		return;
	}
	memset(&h, 0, sizeof(h));
	for (i = 0; i < n; i++) {
		v[i] = gen(i);
		gp_lat_add(&h, v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	EXPECT(h.max_ns == v[n - 1] && h.min_ns == v[0] && h.count == n);
	for (k = 0; k < sizeof(pm) / sizeof(pm[0]); k++) {
		__u64 want = exact_pct(v, n, pm[k]), got = gp_lat_pct(&h, pm[k]);
		char what[96];

		snprintf(what, sizeof(what), "%s p%.1f: exact <= from buckets", name, pm[k] / 10.0);
		EXPECT_LE(want, got, what);
		snprintf(what, sizeof(what), "%s p%.1f: from buckets <= exact * (1 + 1/%d)", name,
			 pm[k] / 10.0, GP_LAT_SUB);
		EXPECT_LE(got, want + want / GP_LAT_SUB, what);
		EXPECT_LE(got, h.max_ns, "percentile <= max");
	}
	/* p100 is the maximum itself. */
	EXPECT(gp_lat_pct(&h, 1000) == v[n - 1]);
	free(v);
}

/* Uniform over 1 us .. 10 ms. */
static __u64 gen_uniform(__u64 i)
{
	(void)i;
	return 1 * US + rnd() % (10 * MS);
}

/* Spread over decades: 1 us .. ~16 s, log-uniform-ish, as a tick-bound detection with a tail. */
static __u64 gen_decades(__u64 i)
{
	__u64 base = 1 * US << (rnd() % 24);

	(void)i;
	return base + rnd() % base;
}

/* Bimodal: 90 % near 100 us, 10 % near 20 ms (a park under a loaded host). */
static __u64 gen_bimodal(__u64 i)
{
	return i % 10 ? 95 * US + rnd() % (10 * US) : 18 * MS + rnd() % (4 * MS);
}

/* Every sample the same: every percentile is that value (capped at max). */
static __u64 gen_point(__u64 i)
{
	(void)i;
	return 123456;
}

/* Exactly at bucket bounds, the worst case for an upper-bound estimate. */
static __u64 gen_lower_bounds(__u64 i)
{
	return gp_lat_lower((__u32)(GP_LAT_SUB * 8 + i % (GP_LAT_SUB * 20)));
}

static void test_pct_uniform(void)
{
	check_dist("uniform", gen_uniform, 100000);
}

static void test_pct_decades(void)
{
	check_dist("decades", gen_decades, 100000);
}

static void test_pct_bimodal(void)
{
	check_dist("bimodal", gen_bimodal, 10000);
}

static void test_pct_point(void)
{
	static struct gp_lat_hist h;
	int i;

	check_dist("point", gen_point, 1000);
	memset(&h, 0, sizeof(h));
	for (i = 0; i < 1000; i++)
		gp_lat_add(&h, 123456);
	EXPECT(gp_lat_pct(&h, 1) == 123456 && gp_lat_pct(&h, 500) == 123456);
}

static void test_pct_bounds(void)
{
	check_dist("lower bounds", gen_lower_bounds, 20000);
}

static void test_pct_small_n(void)
{
	check_dist("n=1", gen_decades, 1);
	check_dist("n=3", gen_bimodal, 3);
	check_dist("n=7", gen_uniform, 7);
}

static void test_pct_ordered(void)
{
	static struct gp_lat_hist h;
	__u64 prev = 0;
	__u32 pm;
	int i;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < 5000; i++)
		gp_lat_add(&h, gen_decades(i));
	for (pm = 1; pm <= 1000; pm++) {
		__u64 p = gp_lat_pct(&h, pm);

		EXPECT_LE(prev, p, "percentiles non-decreasing");
		prev = p;
	}
}

static const struct tap_test tests[] = {
	{ "lat: a bucket per ns below GP_LAT_SUB", test_small_values },
	{ "lat: buckets tile the range, each at most 1/GP_LAT_SUB wide", test_bounds_tile },
	{ "lat: sub-us buckets at 1 us, seconds in range, overflow in the last", test_range },
	{ "lat: random values within their bucket's bounds", test_random_values },
	{ "lat: add counts, sum, min, max", test_add },
	{ "lat: percentiles of a uniform distribution within 1/16 of exact", test_pct_uniform },
	{ "lat: percentiles over six decades within 1/16 of exact", test_pct_decades },
	{ "lat: percentiles of a bimodal distribution within 1/16 of exact", test_pct_bimodal },
	{ "lat: percentiles of a point mass are the value", test_pct_point },
	{ "lat: percentiles of samples at bucket bounds within 1/16 of exact", test_pct_bounds },
	{ "lat: percentiles of 1, 3 and 7 samples within 1/16 of exact", test_pct_small_n },
	{ "lat: percentiles non-decreasing in the rank", test_pct_ordered },
};

int main(void)
{
	return tap_run(tests, (int)(sizeof(tests) / sizeof(tests[0])));
}
