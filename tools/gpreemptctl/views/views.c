// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * views.c - status, top, stats, list and config (read side), as text or JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "gpreemptctl.h"
#include "gp_lat.h"

static const char * const ptr_names[] = { "none", "pinned", "use_mm", "access_vm", "not_aql",
						"moved", "over_limit" };
static const char * const backend_names[] = { "-", "evict", "suspend", "shrink" };

static const char *ptr_name(unsigned int p)
{
	return p < sizeof(ptr_names) / sizeof(ptr_names[0]) ? ptr_names[p] : "?";
}

static const char *backend_name(unsigned int b)
{
	return b < 4 ? backend_names[b] : "?";
}

/* The latency distributions of gp_stats, as gpreemptctl names them. */
static const struct {
	const char *name;	/* JSON */
	const char *title;	/* text */
	size_t off;
} gp_lats[] = {
	{ "detect", "detection", offsetof(struct gp_stats, detect_lat) },
	{ "park", "park call", offsetof(struct gp_stats, park_lat) },
	{ "unpark", "unpark call", offsetof(struct gp_stats, unpark_lat) },
};

#define GP_NLATS (sizeof(gp_lats) / sizeof(gp_lats[0]))

static const struct gp_lat_hist *lat_of(const struct gp_stats *st, size_t i)
{
	return (const struct gp_lat_hist *)((const char *)st + gp_lats[i].off);
}

static void lat_text(const struct gp_stats *st)
{
	size_t i;

	printf("%-14s %10s %10s %10s %10s %10s %10s\n", "latency (us)", "samples", "mean", "p50",
	       "p90", "p99", "max");
	for (i = 0; i < GP_NLATS; i++) {
		const struct gp_lat_hist *h = lat_of(st, i);

		if (!h->count) {
			printf("%-14s %10llu %10s %10s %10s %10s %10s\n", gp_lats[i].title, 0ULL,
			       "-", "-", "-", "-", "-");
			continue;
		}
		printf("%-14s %10llu %10.1f %10.1f %10.1f %10.1f %10.1f\n", gp_lats[i].title,
		       h->count, h->sum_ns / 1e3 / h->count, gp_lat_pct(h, 500) / 1e3,
		       gp_lat_pct(h, 900) / 1e3, gp_lat_pct(h, 990) / 1e3, h->max_ns / 1e3);
	}
	printf("(percentiles: the upper bound of a log-linear bucket, at most %.2f %% above the exact value; detection: scan before -> the scan that decided the park)\n",
	       100.0 / GP_LAT_SUB);
}

/* ,"latency":{"detect":{...},...}: null percentiles without samples. */
static void lat_json(const struct gp_stats *st)
{
	size_t i;

	printf(",\"latency\":{");
	for (i = 0; i < GP_NLATS; i++) {
		const struct gp_lat_hist *h = lat_of(st, i);

		printf("%s\"%s\":{\"count\":%llu", i ? "," : "", gp_lats[i].name, h->count);
		if (h->count)
			printf(",\"mean_us\":%.3f,\"min_us\":%.3f,\"p50_us\":%.3f,\"p90_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f}",
			       h->sum_ns / 1e3 / h->count, h->min_ns / 1e3,
			       gp_lat_pct(h, 500) / 1e3, gp_lat_pct(h, 900) / 1e3,
			       gp_lat_pct(h, 990) / 1e3, h->max_ns / 1e3);
		else
			printf(",\"mean_us\":null,\"min_us\":null,\"p50_us\":null,\"p90_us\":null,\"p99_us\":null,\"max_us\":null}");
	}
	putchar('}');
}

/* One line of status: the percentiles of each distribution that has samples. */
static void lat_status(const struct gp_stats *st)
{
	const char *sep = "";
	size_t i;

	printf("latency p50/p90/p99/max us:");
	for (i = 0; i < GP_NLATS; i++) {
		const struct gp_lat_hist *h = lat_of(st, i);

		if (!h->count) {
			printf("%s %s -", sep, gp_lats[i].title);
		} else {
			printf("%s %s %.1f/%.1f/%.1f/%.1f (%llu)", sep, gp_lats[i].title,
			       gp_lat_pct(h, 500) / 1e3, gp_lat_pct(h, 900) / 1e3,
			       gp_lat_pct(h, 990) / 1e3, h->max_ns / 1e3, h->count);
		}
		sep = ",";
	}
	putchar('\n');
}

static void status_text(const struct gp_stats *st, const struct gp_queue_info *q, int n)
{
	int i;

	printf("gpreempt: %llu queues in %llu processes, ticks %llu, scan %llu us (max %llu us)\n",
	       st->queues, st->processes, st->ticks, st->scan_ns_last / 1000, st->scan_ns_max / 1000);
	printf("preempts %llu  resumes %llu  inversions %llu  starvation %llu  errors %llu  bad_control %llu\n",
	       st->preempts, st->resumes, st->inversions, st->starvation_slices, st->errors,
	       st->bad_control);
	printf("pressure: max_rate %llu/s per device, busiest device last second %llu (peak %llu), throttled %llu  back-offs %llu  untracked %llu  over limit %llu\n",
	       st->rate_limit, st->rate_last_sec, st->rate_peak_sec, st->throttled, st->backoffs,
	       st->queues_untracked, st->queues_over_limit);
	lat_status(st);
	if (st->dev_fenced)
		printf("warning: %llu device(s) fenced after a failed preemption (a queue or GPU reset): no parks there until recovered (%llu fences since load)\n",
		       st->dev_fenced, st->dev_fences);
	if (st->dev_oversub)
		printf("warning: %llu device(s) with more KFD processes than the hardware scheduler maps at once: it time-slices them, parked ones included, so LC may wait for its turn (see stats 'devices'; %llu times since load)\n",
		       st->dev_oversub, st->oversub_events);
	if (st->queues_unseen)
		printf("warning: KFD changed or destroyed %llu queues gpreempt never saw created: its creation probe does not fire (an LTO kernel?); new queues are not managed\n",
		       st->queues_unseen);
	wait_text(st);
	shadow_text(st, q, n);
	/* New columns go at the end: scripts read the first ones by position. */
	printf("%-7s %-4s %-15s %4s %4s %-6s %-10s %-4s %-9s %7s %7s %9s %3s %7s %s\n", "TGID",
	       "QID", "COMM", "KPRI", "PRIO", "SOURCE", "STATE", "PEND", "PTR", "PREEMPT",
	       "RESUME", "PARKED_MS", "DEV", "SHADOW", "UNMANAGED");
	for (i = 0; i < n; i++) {
		char comm[GP_COMM_LEN + 1] = { 0 };

		memcpy(comm, q[i].comm, GP_COMM_LEN);
		printf("%-7u %-4u %-15s %4u %4d %-6s %-10s %-4s %-9s %7llu %7llu %9llu %3u %7llu %s\n",
		       q[i].tgid, q[i].qid, comm, q[i].kfd_priority, q[i].eff_priority,
		       source_name(q[i].prio_source),
		       q[i].held && q[i].state == GP_Q_SUSPENDED ? "held" : state_name(q[i].state),
		       q[i].blocked ? "wait" : q[i].pending ? "yes" : "no",
		       ptr_name(q[i].ptr_path), q[i].preempts,
		       q[i].resumes, q[i].suspended_ns / 1000000, q[i].dev, q[i].shadow_parks,
		       unmanaged_name(q[i].unmanaged));
	}
}

static void queue_json(const struct gp_queue_info *q)
{
	printf("{\"tgid\":%u,\"qid\":%u,\"pasid\":%u,\"comm\":", q->tgid, q->qid, q->pasid);
	json_str(q->comm, GP_COMM_LEN);
	printf(",\"kfd_priority\":%u,\"priority\":%d,\"source\":\"%s\",\"state\":\"%s\",\"held\":%s,"
	       "\"pending\":%s,\"blocked\":%s,\"ptr_path\":\"%s\",\"backend\":\"%s\",\"queue_percent\":%u,"
	       "\"rptr\":%llu,\"wptr\":%llu,\"preempts\":%llu,\"resumes\":%llu,"
	       "\"suspended_ns\":%llu,\"last_preempt_ns\":%llu,\"errors\":%llu,\"mutex_held\":%u,"
	       "\"dev\":%u,\"unmanaged\":\"%s\",\"shadow_parks\":%llu,\"shadow_unparks\":%llu,"
	       "\"shadow_parked_ns\":%llu,\"learned_hold_ns\":%llu}",
	       q->kfd_priority, q->eff_priority, source_name(q->prio_source), state_name(q->state),
	       q->held ? "true" : "false", q->pending ? "true" : "false",
	       q->blocked ? "true" : "false", ptr_name(q->ptr_path),
	       backend_name(q->backend), q->queue_percent, q->rptr, q->wptr, q->preempts,
	       q->resumes, q->suspended_ns, q->last_preempt_ns, q->errors, q->mutex_held,
	       q->dev, unmanaged_name(q->unmanaged), q->shadow_parks, q->shadow_unparks,
	       q->shadow_parked_ns, q->learned_hold_ns);
}

/*
 * The scalar counters of struct gp_stats, in its order, as --json prints
 * them (test/run-unit checks that none is missing); the histograms and
 * state_transitions are printed by cmd_stats().
 */
#define GP_STAT(f) { #f, offsetof(struct gp_stats, f) }
static const struct {
	const char *name;
	size_t off;
} gp_stat_fields[] = {
	GP_STAT(ticks), GP_STAT(scan_ns_total), GP_STAT(scan_ns_last), GP_STAT(scan_ns_max),
	GP_STAT(busy_ticks), GP_STAT(queues), GP_STAT(queues_seen), GP_STAT(processes),
	GP_STAT(inversions), GP_STAT(preempts), GP_STAT(resumes), GP_STAT(starvation_slices),
	GP_STAT(errors), GP_STAT(busy_retries), GP_STAT(skipped_debugged),
	GP_STAT(skipped_reset), GP_STAT(bad_control), GP_STAT(probe_missed),
	GP_STAT(evicts_outstanding), GP_STAT(rule_resolves), GP_STAT(rule_resolve_ns),
	GP_STAT(rule_resolve_ns_max), GP_STAT(env_reads), GP_STAT(rate_limit),
	GP_STAT(rate_last_sec), GP_STAT(throttled), GP_STAT(backoffs),
	GP_STAT(queues_untracked), GP_STAT(rule_first_resolves),
	GP_STAT(rule_first_resolve_ns), GP_STAT(restore_retries), GP_STAT(lc_preempts),
	GP_STAT(lc_preempt_ns), GP_STAT(idle_backoff_us), GP_STAT(deep_idle_ticks),
	GP_STAT(queues_unseen), GP_STAT(busy_deferred), GP_STAT(busy_deferred_expired),
	GP_STAT(dep_releases), GP_STAT(dep_provider_ticks), GP_STAT(hold_us),
	GP_STAT(rate_peak_sec), GP_STAT(mutex_held), GP_STAT(lockless_evicts),
	GP_STAT(load_skipped_busy), GP_STAT(hold_sleeps), GP_STAT(yield_parks),
	GP_STAT(off_hw_scans),
	GP_STAT(mm_gone),
	GP_STAT(dev_fences), GP_STAT(dev_fenced), GP_STAT(remap_throttled),
	GP_STAT(suspend_lost), GP_STAT(dbg_lost), GP_STAT(queues_over_limit),
	GP_STAT(shadow_active), GP_STAT(shadow_ns), GP_STAT(shadow_parks),
	GP_STAT(shadow_unparks), GP_STAT(shadow_remaps), GP_STAT(shadow_lc_remaps),
	GP_STAT(cgroups), GP_STAT(cgroups_dropped), GP_STAT(hold_payback_us),
	GP_STAT(holds_learned), GP_STAT(last_tick_ns), GP_STAT(dev_oversub),
	GP_STAT(oversub_events),
};

/*
 * How long ago the monitor ticked (its clock is CLOCK_MONOTONIC, ours too):
 * null from a module without last_tick_ns.  gp_stats reaches the map within
 * 10 ms of ticks, so a busy monitor reads up to that old.
 */
static void tick_age_json(const struct gp_stats *st)
{
	struct timespec ts;
	unsigned long long now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
	if (!st->last_tick_ns)
		printf(",\"tick_age_ms\":null");
	else
		printf(",\"tick_age_ms\":%llu",
		       now > st->last_tick_ns ? (now - st->last_tick_ns) / 1000000ULL : 0);
}

static void stats_json_fields(const struct gp_stats *st)
{
	const char *base = (const char *)st;
	size_t i;

	for (i = 0; i < sizeof(gp_stat_fields) / sizeof(gp_stat_fields[0]); i++) {
		unsigned long long v;

		memcpy(&v, base + gp_stat_fields[i].off, sizeof(v));
		printf("%s\"%s\":%llu", i ? "," : "", gp_stat_fields[i].name, v);
	}
	tick_age_json(st);
}

/* The device slots gpreempt has seen: their KFD gpu_id and partition. */
static void devices_json(const struct gp_stats *st)
{
	int d, n = 0;

	printf(",\"devices\":[");
	for (d = 0; d < GP_DEV_STATS; d++)
		if (st->dev_gpu_id[d])
			printf("%s{\"dev\":%d,\"kfd_gpu_id\":%u,\"partition\":%u,\"kfd_processes\":%u,\"max_procs\":%u}",
			       n++ ? "," : "", d, st->dev_gpu_id[d], st->dev_partition[d],
			       st->dev_procs[d], st->dev_max_procs[d]);
	putchar(']');
}

static void devices_text(const struct gp_stats *st)
{
	int d, n = 0;

	for (d = 0; d < GP_DEV_STATS; d++)
		if (st->dev_gpu_id[d])
			printf("%s dev %d: gpu_id %u partition %u, %u KFD processes (%u mapped at once)",
			       n++ ? ";" : "devices         ", d, st->dev_gpu_id[d],
			       st->dev_partition[d], st->dev_procs[d], st->dev_max_procs[d]);
	if (n)
		putchar('\n');
}

static int frame(struct ctl *c)
{
	struct gp_queue_info *q = NULL;
	struct gp_stats st;
	int i, n;

	if (stats_read(c, &st))
		return err(EX_NOTLOADED, "cannot read gp_stats (gpreempt unloaded?): %s",
			   strerror(errno));
	n = queues_read(c, &q);
	if (n < 0)
		return err(EX_ERR, "out of memory");
	if (c->json) {
		printf("{\"stats\":{");
		stats_json_fields(&st);
		shadow_json(&st);
		lat_json(&st);
		printf("},\"queues\":[");
		for (i = 0; i < n; i++) {
			if (i)
				putchar(',');
			queue_json(&q[i]);
		}
		printf("]}\n");
	} else {
		status_text(&st, q, n);
	}
	free(q);
	fflush(stdout);
	return EX_OK;
}

/** cmd_status() - one frame: counters and every queue */
int cmd_status(struct ctl *c, int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return err(EX_USAGE, "status takes no arguments");
	return frame(c);
}

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

/**
 * top_args() - top's -d SECONDS and -n COUNT
 * @argc: argument count (argv[0] is "top")
 * @argv: arguments
 * @delay: result, default 1 s
 * @count: result, default 0 (until interrupted)
 *
 * Return: EX_OK, EX_USAGE or EX_RANGE (printed).
 */
int top_args(int argc, char **argv, double *delay, long *count)
{
	int a;

	*delay = 1.0;
	*count = 0;
	for (a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "-d") && a + 1 < argc) {
			*delay = strtod(argv[++a], &end);
			if (!*argv[a] || *end || !(*delay >= 0.05 && *delay <= 3600))
				return err(EX_RANGE, "delay '%s' out of range: 0.05..3600 seconds",
					   argv[a]);
		} else if (!strcmp(argv[a], "-n") && a + 1 < argc) {
			*count = strtol(argv[++a], &end, 10);
			if (!*argv[a] || *end || *count < 0)
				return err(EX_RANGE, "count '%s' out of range: 0 or more", argv[a]);
		} else {
			return err(EX_USAGE, "top: unknown argument '%s' (top [-d SECONDS] [-n COUNT])",
				   argv[a]);
		}
	}
	return EX_OK;
}

/** cmd_top() - frames every -d seconds, -n times (0: until interrupted) */
int cmd_top(struct ctl *c, int argc, char **argv)
{
	double delay;
	long count, i;
	bool tty = isatty(STDOUT_FILENO) && !c->json;
	int ret;

	ret = top_args(argc, argv, &delay, &count);
	if (ret)
		return ret;
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	for (i = 0; !stop && (!count || i < count); i++) {
		struct timespec ts = { (time_t)delay, (long)((delay - (time_t)delay) * 1e9) };

		if (i && !tty && !c->json)
			putchar('\n');
		if (tty)
			printf("\033[H\033[2J");
		ret = frame(c);
		if (ret)
			return ret;
		if (!count || i + 1 < count)
			nanosleep(&ts, NULL);
	}
	return EX_OK;
}

static void hist_json(const char *name, const __u64 *h)
{
	int i;

	printf(",\"%s\":[", name);
	for (i = 0; i < GP_HIST_BUCKETS; i++)
		printf("%s%llu", i ? "," : "", h[i]);
	putchar(']');
}

/** cmd_stats() - every counter and the latency percentiles */
int cmd_stats(struct ctl *c, int argc, char **argv)
{
	struct gp_stats st;
	int i;

	(void)argv;
	if (argc > 1)
		return err(EX_USAGE, "stats takes no arguments");
	if (stats_read(c, &st))
		return err(EX_NOTLOADED, "cannot read gp_stats: %s", strerror(errno));
	if (c->json) {
		putchar('{');
		stats_json_fields(&st);
		hist_json("detect_hist_us_log2", st.detect_hist);
		hist_json("preempt_hist_us_log2", st.preempt_hist);
		shadow_json(&st);
		lat_json(&st);
		devices_json(&st);
		printf(",\"state_transitions\":{");
		for (i = 0; i < GP_Q_NR_STATES; i++)
			printf("%s\"%s\":%llu", i ? "," : "", state_name(i),
			       st.state_transitions[i]);
		printf("}}\n");
		return EX_OK;
	}
	printf("ticks            %llu (busy %llu, of them sleeping to a hold's end %llu, deep idle %llu)",
	       st.ticks, st.busy_ticks, st.hold_sleeps, st.deep_idle_ticks);
	if (st.idle_backoff_us)
		printf(", idle period now %llu us", st.idle_backoff_us);
	putchar('\n');
	printf("scan             last %llu ns, max %llu ns, mean %llu ns\n", st.scan_ns_last,
	       st.scan_ns_max, st.ticks ? st.scan_ns_total / st.ticks : 0);
	printf("queues           %llu now, %llu seen, %llu processes\n", st.queues,
	       st.queues_seen, st.processes);
	printf("preempts         %llu\nresumes          %llu\ninversions       %llu\n",
	       st.preempts, st.resumes, st.inversions);
	printf("off hardware     %llu scans (work KFD held off the GPU: not pending)\n",
	       st.off_hw_scans);
	printf("starvation       %llu slices (%llu parks of what the hardware runs first)\n"
	       "errors           %llu\n", st.starvation_slices, st.yield_parks, st.errors);
	printf("busy retries     %llu (%llu handed to the helper, %llu of its waits expired)\n",
	       st.busy_retries, st.busy_deferred, st.busy_deferred_expired);
	printf("mutex held       %llu (%llu evictions without it), %llu skipped at load\n",
	       st.mutex_held, st.lockless_evicts, st.load_skipped_busy);
	printf("skipped          %llu debugged, %llu reset, %llu mm gone\nbad control      %llu\n",
	       st.skipped_debugged, st.skipped_reset, st.mm_gone, st.bad_control);
	printf("probe missed     %llu\nevicts held      %llu (%llu restores retried)\n",
	       st.probe_missed, st.evicts_outstanding, st.restore_retries);
	printf("rule resolves    %llu, mean %llu ns, max %llu ns; %llu environments read\n",
	       st.rule_resolves, st.rule_resolves ? st.rule_resolve_ns / st.rule_resolves : 0,
	       st.rule_resolve_ns_max, st.env_reads);
	printf("max rate         %llu state changes/s per device; busiest device last second %llu, peak %llu\n",
	       st.rate_limit, st.rate_last_sec, st.rate_peak_sec);
	printf("throttled        %llu actions (max_rate bucket or device back-off)\n", st.throttled);
	printf("back-offs        %llu (a device after a failed action)\n", st.backoffs);
	printf("device fences    %llu (a preemption failed: queue or GPU reset), %llu fenced now\n",
	       st.dev_fences, st.dev_fenced);
	printf("remap budget     %llu actions held back (remap_budget)\n", st.remap_throttled);
	printf("suspend lost     %llu parks KFD undid (re-parked by eviction), %llu debugger calls missed\n",
	       st.suspend_lost, st.dbg_lost);
	printf("LC preempted     %llu times, %llu us (calls while a higher level had work: under HWS\n"
	       "                 each unmaps it too)\n", st.lc_preempts, st.lc_preempt_ns / 1000);
	printf("untracked        %llu queues (no memory, or the registry full)\n",
	       st.queues_untracked);
	printf("over limit       %llu queues (past their device's or user's limit: ids not read,\n"
	       "                 parked below any busy level)\n", st.queues_over_limit);
	printf("hold             %llu us (a level stays busy this long after its last work)\n",
	       st.hold_us);
	if (st.hold_payback_us)
		printf("learned holds    %llu queues hold shorter: their gaps pay back %llu us (a park plus\n"
		       "                 an unpark, hold_payback_pct)\n", st.holds_learned,
		       st.hold_payback_us);
	else
		printf("learned holds    off (hold_payback_pct=0, or no park and unpark measured yet)\n");
	printf("unseen           %llu queues (KFD changed them, no creation probe fired: LTO?)\n",
	       st.queues_unseen);
	printf("first resolves   %llu (new processes), mean %llu ns\n", st.rule_first_resolves,
	       st.rule_first_resolves ? st.rule_first_resolve_ns / st.rule_first_resolves : 0);
	printf("shadow           %s, %.1f s: %llu parks, %llu unparks, %llu backend calls (%llu while a\n"
	       "                 higher level had work): what gpreempt would have done while disabled\n",
	       st.shadow_active ? "on" : "off", st.shadow_ns / 1e9, st.shadow_parks,
	       st.shadow_unparks, st.shadow_remaps, st.shadow_lc_remaps);
	wait_text(&st);
	printf("cgroups          %llu with counters (gp_cgroups, gpreemptctl metrics), %llu charges dropped\n",
	       st.cgroups, st.cgroups_dropped);
	devices_text(&st);
	printf("state entries   ");
	for (i = 0; i < GP_Q_NR_STATES; i++)
		printf(" %s %llu", state_name(i), st.state_transitions[i]);
	printf("\n\n");
	lat_text(&st);
	return EX_OK;
}

struct rule {
	const char *kind;
	char target[PATH_MAX];
	int prio;
	int hold;	/* -1: not a queue entry */
	bool gone;	/* cgroup: its cgroup no longer exists (target: the path it had) */
	bool pending;	/* cgroup: skipped by apply, its cgroup did not exist yet */
	char container[HOOK_ID_LEN];	/* container rules: the container's id */
	int cap;	/* container rules: the administrator's rule above it, -1: none */
	char cap_by[PATH_MAX];		/* ... on this cgroup */
};

static void rule_out(struct ctl *c, const struct rule *r, bool *first)
{
	if (c->json) {
		printf("%s{\"kind\":\"%s\",\"target\":", *first ? "" : ",", r->kind);
		json_str(r->target, sizeof(r->target));
		if (r->prio >= 0)
			printf(",\"priority\":%d", r->prio);
		else
			printf(",\"priority\":null");
		if (r->hold >= 0)
			printf(",\"hold\":%s", r->hold ? "true" : "false");
		if (!strcmp(r->kind, "cgroup") || !strcmp(r->kind, "container"))
			printf(",\"gone\":%s", r->gone ? "true" : "false");
		if (!strcmp(r->kind, "cgroup"))
			printf(",\"pending\":%s", r->pending ? "true" : "false");
		if (!strcmp(r->kind, "container")) {
			printf(",\"container\":");
			json_str(r->container, sizeof(r->container));
			if (r->cap >= 0) {
				printf(",\"effective\":%d,\"capped_by\":",
				       r->prio < r->cap ? r->prio : r->cap);
				json_str(r->cap_by, sizeof(r->cap_by));
			} else {
				printf(",\"effective\":%d,\"capped_by\":null", r->prio);
			}
		}
		putchar('}');
	} else {
		char p[24];

		if (r->prio >= 0)
			snprintf(p, sizeof(p), "%d%s%s%s", r->prio, *prio_name(r->prio) ? " (" : "",
				 prio_name(r->prio), *prio_name(r->prio) ? ")" : "");
		else
			snprintf(p, sizeof(p), "-");
		printf("%-9s %-40s %-12s%s", r->kind, r->target, p, r->hold > 0 ? " held" : "");
		if (r->container[0])
			printf(" container %.12s", r->container);
		if (r->cap >= 0 && r->cap < r->prio)
			printf(", capped to %d by %s", r->cap, r->cap_by);
		else if (r->cap >= 0)
			printf(", cap %d (%s)", r->cap, r->cap_by);
		if (r->gone)
			printf("%sgone: no cgroup has this id any more (a restarted service gets a new cgroup: set the rule again, or on a slice)",
			       r->container[0] ? ", " : " ");
		if (r->pending)
			printf(" pending: no such cgroup yet (applied by the next apply once it exists)");
		putchar('\n');
	}
	*first = false;
}

/*
 * Running containers whose rule a manual reload dropped, or that a lowered
 * cap has not reached: said on stderr, so the JSON on stdout keeps its form.
 */
static void list_unsynced(struct ctl *c)
{
	struct hook_conf conf;
	char why[PATH_MAX + 128];
	FILE *f = fopen(GP_CONF, "re");
	int n;

	if (hook_conf_read(f, GP_CONF, &conf, why, sizeof(why)))
		conf.max_priority = -1;
	if (f)
		fclose(f);
	n = hook_unsynced(c, conf.max_priority);
	if (n)
		fprintf(stderr, "%s: warning: %d running container%s no rule, or one above today's container max_priority (gpreempt loaded again by hand, or the cap lowered): gpreemptctl hook resync puts %s right\n",
			prog, n, n == 1 ? " has" : "s have", n == 1 ? "it" : "them");
}

/** cmd_list() - every rule, highest source first */
int cmd_list(struct ctl *c, int argc, char **argv)
{
	struct gp_prio_override v;
	struct gp_prio_pid pv;
	struct gp_queue_ctl qv;
	struct gp_queue_key qk, *qprev = NULL;
	__u32 pk, *pprev = NULL;
	__u64 ck, *cprev = NULL;
	struct gp_comm mk, *mprev = NULL;
	static struct pending pr;
	struct rule r;
	bool first = true;
	FILE *pf;

	(void)argv;
	if (argc > 1)
		return err(EX_USAGE, "list takes no arguments");
	if (c->json)
		putchar('[');
	else
		printf("%-9s %-40s %-12s\n", "KIND", "TARGET", "PRIORITY");
	while (!bpf_map_get_next_key(c->fd[M_QUEUE_CTL], qprev, &qk)) {
		qprev = &qk;
		if (bpf_map_lookup_elem(c->fd[M_QUEUE_CTL], &qk, &qv))
			continue;
		r = (struct rule){ .kind = "queue", .prio = qv.priority, .hold = qv.hold != 0,
				   .cap = -1 };
		snprintf(r.target, sizeof(r.target), "%u:%u", qk.tgid, qk.qid);
		rule_out(c, &r, &first);
	}
	while (!bpf_map_get_next_key(c->fd[M_PRIO], pprev, &pk)) {
		pprev = &pk;
		if (bpf_map_lookup_elem(c->fd[M_PRIO], &pk, &pv))
			continue;
		r = (struct rule){ .kind = "pid", .prio = pv.priority, .hold = -1, .cap = -1 };
		snprintf(r.target, sizeof(r.target), "%u", pk);
		rule_out(c, &r, &first);
	}
	while (!bpf_map_get_next_key(c->fd[M_PRIO_CGROUP], cprev, &ck)) {
		cprev = &ck;
		if (bpf_map_lookup_elem(c->fd[M_PRIO_CGROUP], &ck, &v))
			continue;
		r = (struct rule){ .kind = "cgroup", .prio = v.priority, .hold = -1, .cap = -1 };
		if (cgroup_path_of(ck, r.target, sizeof(r.target))) {
			r.gone = true;
			if (rule_path_get(ck, r.target, sizeof(r.target)))
				snprintf(r.target, sizeof(r.target), "id:%llu", (unsigned long long)ck);
		}
		rule_out(c, &r, &first);
	}
	pf = fopen(GP_PENDING_FILE, "re");
	while (pending_next(pf, &pr)) {
		r = (struct rule){ .kind = "cgroup", .prio = pr.prio, .hold = -1, .cap = -1,
				   .pending = true };
		snprintf(r.target, sizeof(r.target), "%s", pr.path);
		rule_out(c, &r, &first);
	}
	if (pf)
		fclose(pf);
	cprev = NULL;
	while (!bpf_map_get_next_key(c->fd[M_PRIO_HOOK], cprev, &ck)) {
		char path[PATH_MAX];

		cprev = &ck;
		if (bpf_map_lookup_elem(c->fd[M_PRIO_HOOK], &ck, &v))
			continue;
		r = (struct rule){ .kind = "container", .prio = v.priority, .hold = -1, .cap = -1 };
		if (!hook_record_path(ck, path, sizeof(path), r.container, sizeof(r.container)))
			path[0] = '\0';
		if (!cgroup_path_of(ck, r.target, sizeof(r.target))) {
			cgroup_cap(c, r.target, &r.cap, r.cap_by, sizeof(r.cap_by));
		} else {
			r.gone = true;
			snprintf(r.target, sizeof(r.target), "%s", path[0] ? path : "");
			if (!path[0])
				snprintf(r.target, sizeof(r.target), "id:%llu", (unsigned long long)ck);
		}
		rule_out(c, &r, &first);
	}
	while (!bpf_map_get_next_key(c->fd[M_PRIO_COMM], mprev, &mk)) {
		mprev = &mk;
		if (bpf_map_lookup_elem(c->fd[M_PRIO_COMM], &mk, &v))
			continue;
		r = (struct rule){ .kind = "comm", .prio = v.priority, .hold = -1, .cap = -1 };
		snprintf(r.target, sizeof(r.target), "%.*s", GP_COMM_LEN, mk.comm);
		rule_out(c, &r, &first);
	}
	if (c->json)
		printf("]\n");
	list_unsynced(c);
	return EX_OK;
}

static int read_param(const char *name, char *buf, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/gpreempt/parameters/%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, len, f)) {
		if (f)
			fclose(f);
		snprintf(buf, len, "?");
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/** cmd_config() - show gp_config and the module parameters, or set KEY=VALUE */
int cmd_config(struct ctl *c, int argc, char **argv)
{
	static const char * const params[] = {
		"enable", "tick_us", "idle_us", "hysteresis_us", "max_suspend_ms", "min_slice_ms",
		"max_actions", "backend", "env_priority", "env_max_priority", "user_max_priority",
	};
	struct gp_config cfg, old;
	char val[64];
	size_t i;
	int a, ret;

	if (config_read(c, &cfg))
		return err(EX_ERR, "cannot read gp_config: %s", strerror(errno));
	if (argc > 1) {
		old = cfg;
		for (a = 1; a < argc; a++) {
			ret = config_set_kv(&cfg, argv[a]);
			if (ret)
				return ret;
		}
		if (old.env != cfg.env || old.env_max_priority != cfg.env_max_priority)
			cfg.rules_gen++;
		if (config_write(c, &cfg))
			return err(EX_ERR, "cannot write gp_config: %s", strerror(errno));
		return EX_OK;
	}
	if (c->json) {
		printf("{\"gp_config\":{\"enable\":%u,\"tick_us\":%u,\"hysteresis_us\":%u,"
		       "\"max_suspend_us\":%u,\"min_slice_us\":%u,\"rules_gen\":%u,\"env\":%u,"
		       "\"env_max_priority\":%u},\"parameters\":{",
		       cfg.enable, cfg.tick_us, cfg.hysteresis_us, cfg.max_suspend_us,
		       cfg.min_slice_us, cfg.rules_gen, cfg.env, cfg.env_max_priority);
		for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
			read_param(params[i], val, sizeof(val));
			printf("%s\"%s\":", i ? "," : "", params[i]);
			json_str(val, sizeof(val));
		}
		printf("}}\n");
		return EX_OK;
	}
	printf("gp_config (0 = module parameter):\n");
	printf("  enable=%s tick_us=%u hysteresis_us=%u max_suspend_us=%u min_slice_us=%u\n",
	       cfg.enable == 1 ? "on" : cfg.enable == 2 ? "off" : "0", cfg.tick_us,
	       cfg.hysteresis_us, cfg.max_suspend_us, cfg.min_slice_us);
	printf("  env=%s env_max_priority=%u (rules_gen %u)\n",
	       cfg.env == 1 ? "on" : cfg.env == 2 ? "off" : "0", cfg.env_max_priority,
	       cfg.rules_gen);
	printf("module parameters:\n ");
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		read_param(params[i], val, sizeof(val));
		printf(" %s=%s", params[i], val);
	}
	putchar('\n');
	return EX_OK;
}
