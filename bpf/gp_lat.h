/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gp_lat.h - the buckets of struct gp_lat_hist (bpf/gp_maps.h): a bucket's
 * index from a value in ns, its bounds, and a percentile from the counts.
 * Pure C, no kernel or libc calls: the module (monitor/stats.c), gpreemptctl
 * and the unit test (test/unit/test_lat.c) include the same functions.
 *
 * Bucket b, with g = b / GP_LAT_SUB and s = b % GP_LAT_SUB, holds
 *   g == 0: the value s alone;
 *   g >= 1: [(GP_LAT_SUB + s) << (g - 1), (GP_LAT_SUB + s + 1) << (g - 1)),
 * so the buckets of [2^k, 2^(k+1)) (g = k - GP_LAT_SUB_BITS + 1) are
 * 2^(g - 1) ns wide, 1/GP_LAT_SUB of 2^k.  The last bucket also takes every
 * value from 2^GP_LAT_MAX_LOG2 ns up.
 */
#ifndef GP_LAT_H
#define GP_LAT_H

#include "gp_maps.h"

/**
 * gp_lat_bucket() - the bucket of a value
 * @ns: the value, in ns
 *
 * Return: 0..GP_LAT_BUCKETS - 1.
 */
static inline __u32 gp_lat_bucket(__u64 ns)
{
	__u32 k;

	if (ns < GP_LAT_SUB)
		return (__u32)ns;
	if (ns >> GP_LAT_MAX_LOG2)
		return GP_LAT_BUCKETS - 1;
	k = 63 - (__u32)__builtin_clzll(ns);	/* 2^k <= ns < 2^(k+1) */
	return (k - GP_LAT_SUB_BITS + 1) * GP_LAT_SUB +
	       (__u32)(ns >> (k - GP_LAT_SUB_BITS)) - GP_LAT_SUB;
}

/**
 * gp_lat_lower() - the smallest value of a bucket
 * @b: bucket, 0..GP_LAT_BUCKETS - 1
 *
 * Return: ns.
 */
static inline __u64 gp_lat_lower(__u32 b)
{
	__u32 g = b / GP_LAT_SUB, s = b % GP_LAT_SUB;

	if (!g)
		return s;
	return (__u64)(GP_LAT_SUB + s) << (g - 1);
}

/**
 * gp_lat_upper() - the largest value of a bucket
 * @b: bucket, 0..GP_LAT_BUCKETS - 1
 *
 * Return: ns (the last bucket has no bound: ~0).
 */
static inline __u64 gp_lat_upper(__u32 b)
{
	if (b >= GP_LAT_BUCKETS - 1)
		return ~0ULL;
	return gp_lat_lower(b + 1) - 1;
}

/**
 * gp_lat_pct() - a percentile of a distribution
 * @h: the histogram
 * @permille: which one, 1..1000 (500: the median; 990: p99)
 *
 * The smallest value with at least @permille / 1000 of the samples at or
 * below it, as the upper bound of its bucket, capped at @h->max_ns: at most
 * 1/GP_LAT_SUB above the exact sample percentile (the sample of rank
 * ceil(n * permille / 1000)), never below it.
 *
 * Return: ns; 0 without samples.
 */
static inline __u64 gp_lat_pct(const struct gp_lat_hist *h, __u32 permille)
{
	__u64 n = 0, rank, up;
	__u32 b;

	for (b = 0; b < GP_LAT_BUCKETS; b++)
		n += h->buckets[b];
	if (!n)
		return 0;
	if (permille > 1000)
		permille = 1000;
	rank = (n * permille + 999) / 1000;
	if (!rank)
		rank = 1;
	for (b = 0; b < GP_LAT_BUCKETS; b++) {
		if (h->buckets[b] >= rank)
			break;
		rank -= h->buckets[b];
	}
	if (b == GP_LAT_BUCKETS)
		b = GP_LAT_BUCKETS - 1;
	up = gp_lat_upper(b);
	return up > h->max_ns ? h->max_ns : up;
}

/**
 * gp_lat_add() - count one sample
 * @h: the histogram (one writer at a time)
 * @ns: the sample
 */
static inline void gp_lat_add(struct gp_lat_hist *h, __u64 ns)
{
	h->buckets[gp_lat_bucket(ns)]++;
	if (!h->count || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->sum_ns += ns;
}

#endif /* GP_LAT_H */
