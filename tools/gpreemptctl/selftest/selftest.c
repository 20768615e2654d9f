// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * selftest.c - "gpreemptctl selftest": a first-contact measurement on a real
 * GPU, bounded and staged, with the project's own client on its own two
 * processes only.  gpreempt must be in shadow mode (enable=0): it parks
 * nothing of anyone else throughout.
 *
 *   1. LC alone: the client's latency-critical stream, its p50/p99.
 *   2. Shadow: a best-effort process (BE) beside it; what gpreempt would do
 *      (its shadow counters) and detection (how soon a scan saw LC's work),
 *      and LC's latency with BE running: without gpreempt.
 *   3. Parks: BE's queues held (gp_queue_ctl hold 2: parked while gpreempt
 *      is disabled too) and released, --runs times, each waited for: the
 *      end-to-end time as this tool sees it and the module's KFD call.
 *      It stops at the first failure: a park or unpark not seen within 5 s,
 *      an error of gpreempt's, a device fence, a client that died.
 *   4. LC beside BE held parked: what gpreempt gives LC at best.
 * The report (JSON, or Markdown with --markdown) names the machine: kernel,
 * module and amdgpu versions, every GPU of the KFD topology, ROCm's version.
 *
 * Two clients: gpload (kfdsim only: its kernels are kfdsim's duration rule)
 * and hip-work (HIP: its kernel spins on a real GPU for as long as kfdsim
 * models it), chosen by --client-kind or by the client's name.  HIP gives
 * every queue KFD's priority 7 (newer HIP ignores stream priorities), so the
 * levels come from pid rules selftest sets on its own two processes, as an
 * operator's rules would, and removes at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "gpreemptctl.h"
#include "gp_lat.h"
#include "gp_pidstart.h"

#define ST_WAIT_NS (5ULL * 1000000000ULL)
#define ST_MAX_Q 16
#define ST_MAX_GPUS 256

/*
 * From uapi/linux/kfd_ioctl.h (KFD 1.x, since 5.x), whose include of
 * drm/drm.h needs libdrm's headers: the SMI event file of one GPU.
 */
struct st_smi_args {
	__u32 gpuid;	/* to KFD */
	__u32 anon_fd;	/* from KFD */
};

#define ST_IOC_SMI_EVENTS _IOWR('K', 0x1F, struct st_smi_args)
#define ST_SMI_GPU_PRE_RESET 3
#define ST_SMI_GPU_POST_RESET 4
#define ST_SMI_MASK(i) (1ULL << ((i) - 1))

struct lat3 {
	double p50, p99, max;
};

enum st_kind { ST_GPLOAD, ST_HIP };

struct st_opts {
	long runs;
	double seconds;
	const char *client;
	enum st_kind kind;
	bool markdown;
};

struct st_result {
	long runs_done;
	char stopped[256];
	double *park_e2e, *park_call, *unpark_e2e, *unpark_call;
	struct lat3 detect;
	struct lat3 lc_alone, lc_beside, lc_parked;
	unsigned long long shadow_parks, shadow_calls, errors0, errors1, fences0, fences1;
	unsigned long long others_parked;
	pid_t be;
	char be_stop[PATH_MAX];	/* hip-work's BE ends once this file exists */
	long gpu_resets;	/* GPU_PRE_RESET events during the run, -1: not known */
	int smi_gpus;		/* GPUs whose SMI events were read */
};

/* KFD's system management event files, one per GPU: its GPU resets. */
struct st_smi {
	int kfd;
	int fd[ST_MAX_GPUS];
	int n;
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct lat3 lat_of(double *v, long n)
{
	struct lat3 l = { 0 };

	if (n <= 0)
		return l;
	qsort(v, n, sizeof(*v), cmp_d);
	l.p50 = v[(n - 1) / 2];
	l.p99 = v[(long)((n - 1) * 0.99)];
	l.max = v[n - 1];
	return l;
}

/* Detection: the samples gp_stats.detect_lat took between two reads. */
static struct lat3 hist_delta(const struct gp_lat_hist *a, const struct gp_lat_hist *b)
{
	struct gp_lat_hist d = { 0 };
	struct lat3 l = { 0 };
	int i;

	for (i = 0; i < GP_LAT_BUCKETS; i++) {
		d.buckets[i] = b->buckets[i] - a->buckets[i];
		d.count += d.buckets[i];
	}
	if (!d.count)
		return l;
	d.max_ns = b->max_ns;
	l.p50 = gp_lat_pct(&d, 500) / 1e3;
	l.p99 = gp_lat_pct(&d, 990) / 1e3;
	l.max = gp_lat_pct(&d, 1000) / 1e3;
	return l;
}

/*
 * A pid rule at @prio on our own client @pid (its start names it), so that
 * its queues get that level whatever KFD priority HIP gave them.
 */
static void own_rule(struct ctl *c, pid_t pid, int prio)
{
	struct gp_prio_pid v = { .priority = prio };
	__u32 key = pid;
	uint64_t start;

	if (gp_pid_start(pid, &start))
		return;
	v.start = start;
	bpf_map_update_elem(c->fd[M_PRIO], &key, &v, BPF_ANY);
}

static void own_rule_drop(struct ctl *c, pid_t pid)
{
	__u32 key = pid;

	if (pid > 0)
		bpf_map_delete_elem(c->fd[M_PRIO], &key);
}

/* gpload's arguments: --mode MODE --prio PRIO (its KFD priority) and the rest. */
static int gpload_argv(char **argv, const char *mode, const char *prio, const char *duration,
		       const char *out)
{
	int n = 1;

	argv[n++] = "--mode";
	argv[n++] = (char *)mode;
	argv[n++] = "--prio";
	argv[n++] = (char *)prio;
	argv[n++] = "--wg";
	argv[n++] = !strcmp(mode, "lc") ? "4" : "8";
	argv[n++] = "--wg-us";
	argv[n++] = "2000";
	if (!strcmp(mode, "lc")) {
		argv[n++] = "--period-us";
		argv[n++] = "20000";
	} else {
		argv[n++] = "--inflight";
		argv[n++] = "4";
	}
	argv[n++] = "--duration";
	argv[n++] = (char *)duration;
	argv[n++] = "--quiet";
	if (out) {
		argv[n++] = "--json";
		argv[n++] = (char *)out;
	}
	return n;
}

/*
 * hip-work's: "lc N 4 2000000 20000" (N requests of 4 workgroups x 2 ms, one
 * every 20 ms on average, for @duration seconds; its "key value" lines go
 * to @out) or "be 8 2000000 4 STOPFILE" (4 launches in flight until
 * STOPFILE exists), the same shapes as gpload's.
 */
static int hip_argv(char **argv, char *nbuf, size_t nlen, const char *mode,
		    const char *duration, const char *stop)
{
	int n = 1;

	argv[n++] = (char *)mode;
	if (!strcmp(mode, "lc")) {
		snprintf(nbuf, nlen, "%ld", strtod(duration, NULL) >= 0.04 ? (long)(strtod(duration, NULL) * 50) : 1L);
		argv[n++] = nbuf;
		argv[n++] = "4";
		argv[n++] = "2000000";
		argv[n++] = "20000";
	} else {
		argv[n++] = "8";
		argv[n++] = "2000000";
		argv[n++] = "4";
		argv[n++] = (char *)stop;
	}
	return n;
}

/*
 * Start the client as LC (@mode "lc", level @prio, for @duration seconds,
 * its report to @out) or BE ("be", until stopped: SIGTERM for gpload, the
 * file @out for hip-work); its pid, or -1.
 */
static pid_t client(struct ctl *c, const struct st_opts *o, const char *mode, const char *prio,
		    const char *duration, const char *out)
{
	char *argv[24], nbuf[32];
	int n;
	pid_t pid;

	argv[0] = (char *)o->client;
	if (o->kind == ST_HIP)
		n = hip_argv(argv, nbuf, sizeof(nbuf), mode, duration, out);
	else
		n = gpload_argv(argv, mode, prio, duration, out);
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		if (o->kind == ST_HIP) {
			int fd = open(!strcmp(mode, "lc") && out ? out : "/dev/null",
				      O_WRONLY | O_CREAT | O_TRUNC, 0600);

			/* HIP's default stream priority: KFD's 7, as for any ROCm process. */
			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
				_exit(127);
		}
		execv(o->client, argv);
		_exit(127);
	}
	if (pid > 0 && o->kind == ST_HIP)
		own_rule(c, pid, atoi(prio));
	return pid;
}

/* hip-work's "key value" line @key from @path, or -1. */
static double kv_read(const char *path, const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	double v = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ' ')
			v = strtod(line + kl + 1, NULL);
	if (f)
		fclose(f);
	return v;
}

/* An LC run of --seconds, waited for; its latency from its report. */
static int lc_run(struct ctl *c, const struct st_opts *o, const char *dir, const char *name,
		  struct lat3 *l)
{
	char path[PATH_MAX], dur[32];
	struct json_object *j, *v;
	int status, ok;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	snprintf(dur, sizeof(dur), "%g", o->seconds);
	pid = client(c, o, "lc", "12", dur, path);
	ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	     !WEXITSTATUS(status);
	if (o->kind == ST_HIP)
		own_rule_drop(c, pid);
	if (!ok)
		return -1;
	if (o->kind == ST_HIP) {
		l->p50 = kv_read(path, "lat_p50");
		l->p99 = kv_read(path, "lat_p99");
		l->max = kv_read(path, "lat_max");
		return l->p50 < 0 || l->p99 < 0 || l->max < 0 ? -1 : 0;
	}
	j = json_object_from_file(path);
	if (!j)
		return -1;
	if (json_object_object_get_ex(j, "p50_us", &v))
		l->p50 = json_object_get_double(v);
	if (json_object_object_get_ex(j, "p99_us", &v))
		l->p99 = json_object_get_double(v);
	if (json_object_object_get_ex(j, "max_us", &v))
		l->max = json_object_get_double(v);
	json_object_put(j);
	return 0;
}

/* The gp_queues entries of @tgid: up to ST_MAX_Q keys and values. */
static int be_queues(struct ctl *c, pid_t tgid, struct gp_queue_key *k, struct gp_queue_info *v)
{
	struct gp_queue_key key, next, *prev = NULL;
	int n = 0;

	while (n < ST_MAX_Q && !bpf_map_get_next_key(c->fd[M_QUEUES], prev, &next)) {
		key = next;
		prev = &key;
		if (key.tgid == (__u32)tgid && !bpf_map_lookup_elem(c->fd[M_QUEUES], &key, &v[n]))
			k[n++] = key;
	}
	return n;
}

/* Hold (2) or release (0) BE's queues. */
static int be_hold(struct ctl *c, const struct gp_queue_key *k, int n, __u32 hold)
{
	struct gp_queue_ctl v = { .priority = -1, .hold = hold };
	int i;

	for (i = 0; i < n; i++) {
		if (hold && bpf_map_update_elem(c->fd[M_QUEUE_CTL], &k[i], &v, BPF_ANY))
			return -1;
		if (!hold && bpf_map_delete_elem(c->fd[M_QUEUE_CTL], &k[i]) && errno != ENOENT)
			return -1;
	}
	return rules_bump(c) ? -1 : 0;
}

/* Wait until every BE queue is in @state; its time in us, or -1 after ST_WAIT_NS. */
static double be_wait(struct ctl *c, const struct gp_queue_key *k, int n, __u32 state,
		      unsigned long long t0)
{
	struct gp_queue_info v;
	int i, in;

	while (now_ns() - t0 < ST_WAIT_NS) {
		for (i = 0, in = 0; i < n; i++)
			if (!bpf_map_lookup_elem(c->fd[M_QUEUES], &k[i], &v) && v.state == state)
				in++;
		if (in == n)
			return (now_ns() - t0) / 1e3;
		sleep_ms(1);
	}
	return -1;
}

/* Queues of processes other than ours that gpreempt parked (their park counts). */
static unsigned long long others_parked(struct ctl *c, pid_t a, pid_t b)
{
	struct gp_queue_info *q = NULL;
	unsigned long long sum = 0;
	int i, n = queues_read(c, &q);

	for (i = 0; i < n; i++)
		if (q[i].tgid != (__u32)a && q[i].tgid != (__u32)b)
			sum += q[i].preempts;
	free(q);
	return sum;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/* The mean of the samples @b took since @a (one call per queue moved), in us. */
static double call_us(const struct gp_lat_hist *a, const struct gp_lat_hist *b)
{
	return b->count > a->count ? (b->sum_ns - a->sum_ns) / 1e3 / (b->count - a->count) : 0;
}

/*
 * Run @run's park (@park) or unpark of BE's queues, waited for: its end to
 * end time and the module's call into @e2e and @call.  @a: gp_stats before
 * it, on return after it.  False (r->stopped says why) when it failed.
 */
static bool st_step(struct ctl *c, const struct gp_queue_key *k, int n, bool park, long run,
		    struct gp_stats *a, struct st_result *r, double *e2e, double *call)
{
	const char *what = park ? "park" : "unpark";
	struct gp_stats b;

	if (be_hold(c, k, n, park ? 2 : 0)) {
		snprintf(r->stopped, sizeof(r->stopped), park ?
			 "run %ld: cannot write gp_queue_ctl: %s" : "run %ld: cannot release: %s",
			 run, strerror(errno));
		return false;
	}
	*e2e = be_wait(c, k, n, park ? GP_Q_SUSPENDED : GP_Q_RUNNING, now_ns());
	stats_read(c, &b);
	if (*e2e < 0 || b.errors != a->errors || b.dev_fences != a->dev_fences ||
	    (park && !alive(r->be))) {
		if (park)
			be_hold(c, k, n, 0);
		snprintf(r->stopped, sizeof(r->stopped),
			 "run %ld: the %s %s (errors +%llu, device fences +%llu)", run, what,
			 *e2e < 0 ? "was not seen within 5 s" : "failed",
			 b.errors - a->errors, b.dev_fences - a->dev_fences);
		return false;
	}
	*call = park ? call_us(&a->park_lat, &b.park_lat) : call_us(&a->unpark_lat, &b.unpark_lat);
	*a = b;
	return true;
}

/* Stage 3: the parks, each waited for; stops at the first failure. */
static void park_runs(struct ctl *c, const struct st_opts *o, struct st_result *r)
{
	struct gp_queue_info v[ST_MAX_Q];
	struct gp_queue_key k[ST_MAX_Q];
	struct gp_stats a;
	int n = 0;
	long i;

	for (i = 0; i < 100 && !(n = be_queues(c, r->be, k, v)); i++)
		sleep_ms(50);
	if (!n) {
		snprintf(r->stopped, sizeof(r->stopped), "BE's queues never showed in gp_queues");
		return;
	}
	for (i = 0; i < o->runs; i++) {
		if (stats_read(c, &a)) {
			snprintf(r->stopped, sizeof(r->stopped), "run %ld: cannot write gp_queue_ctl: %s",
				 i + 1, strerror(errno));
			return;
		}
		if (!st_step(c, k, n, true, i + 1, &a, r, &r->park_e2e[i], &r->park_call[i]) ||
		    !st_step(c, k, n, false, i + 1, &a, r, &r->unpark_e2e[i], &r->unpark_call[i]))
			return;
		r->runs_done = i + 1;
	}
}

/* Stage 4: LC with BE held parked for the whole run. */
static int lc_be_parked(struct ctl *c, const struct st_opts *o, const char *dir,
			struct st_result *r)
{
	struct gp_queue_info v[ST_MAX_Q];
	struct gp_queue_key k[ST_MAX_Q];
	int n = be_queues(c, r->be, k, v), ret;

	if (!n || be_hold(c, k, n, 2) || be_wait(c, k, n, GP_Q_SUSPENDED, now_ns()) < 0) {
		be_hold(c, k, n, 0);
		return -1;
	}
	ret = lc_run(c, o, dir, "lc-be-parked", &r->lc_parked);
	be_hold(c, k, n, 0);
	be_wait(c, k, n, GP_Q_RUNNING, now_ns());
	return ret;
}

/*
 * End BE and reap it (@status: its wait status): gpload on SIGTERM,
 * hip-work once its stop file exists (it then drains what is in flight and
 * checks every completion; killed if it has not ended 30 s later).
 */
static void be_stop(struct ctl *c, const struct st_opts *o, struct st_result *r, int *status)
{
	unsigned long long t0 = now_ns();
	int fd;

	*status = -1;
	if (o->kind != ST_HIP) {
		kill(r->be, SIGTERM);
		waitpid(r->be, status, 0);
		return;
	}
	fd = open(r->be_stop, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
	while (waitpid(r->be, status, WNOHANG) == 0) {
		if (fd < 0 || now_ns() - t0 > 30ULL * 1000000000ULL) {
			kill(r->be, SIGKILL);
			waitpid(r->be, status, 0);
			*status = -1;
			break;
		}
		sleep_ms(20);
	}
	own_rule_drop(c, r->be);
}

/*
 * Open an SMI event file (AMDKFD_IOC_SMI_EVENTS) for every GPU of the KFD
 * topology, asking for the GPU reset events: a reset during the run is then
 * counted whoever caused it.  /dev/kfd is opened close-on-exec, so the
 * clients do not inherit it.
 */
static void smi_open(struct st_smi *s)
{
	__u64 mask = ST_SMI_MASK(ST_SMI_GPU_PRE_RESET) | ST_SMI_MASK(ST_SMI_GPU_POST_RESET);
	int node;

	s->n = 0;
	s->kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	for (node = 0; s->kfd >= 0 && node < ST_MAX_GPUS && s->n < ST_MAX_GPUS; node++) {
		struct st_smi_args a = { 0 };

		long id = kfd_topology_gpu_id(node);

		if (id < 0)
			break;
		a.gpuid = id;
		if (!a.gpuid || ioctl(s->kfd, ST_IOC_SMI_EVENTS, &a))
			continue;
		if (write(a.anon_fd, &mask, sizeof(mask)) != sizeof(mask)) {
			close(a.anon_fd);
			continue;
		}
		s->fd[s->n++] = a.anon_fd;
	}
}

/* The GPU_PRE_RESET events queued since smi_open() ("3 SEQ CAUSE" lines); closes. */
static long smi_resets(struct st_smi *s)
{
	char buf[1024];
	long n = 0;
	int i;

	for (i = 0; i < s->n; i++) {
		ssize_t len;

		/* KFD's read never blocks: -EAGAIN once the queue is empty. */
		while ((len = read(s->fd[i], buf, sizeof(buf) - 1)) > 0 &&
		       len < (ssize_t)sizeof(buf)) {
			char *l = buf;

			buf[len] = 0;
			for (; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
				n += !strncmp(l, "3 ", 2);
		}
		close(s->fd[i]);
	}
	if (s->kfd >= 0)
		close(s->kfd);
	return s->n ? n : -1;
}

static int st_run(struct ctl *c, const struct st_opts *o, struct st_result *r)
{
	struct st_smi smi;
	static const char * const names[] = { "lc-alone", "lc-beside-be", "lc-be-parked" };
	char dir[] = "/tmp/gpreempt-selftest.XXXXXX";
	unsigned long long n;
	struct gp_stats s0, s1;
	size_t i;
	int ret = 0;

	if (!mkdtemp(dir))
		return err(EX_ERR, "cannot make a directory in /tmp: %s", strerror(errno));
	smi_open(&smi);
	stats_read(c, &s0);
	r->errors0 = s0.errors;
	r->fences0 = s0.dev_fences;
	r->others_parked = others_parked(c, 0, 0);
	if (lc_run(c, o, dir, "lc-alone", &r->lc_alone)) {
		snprintf(r->stopped, sizeof(r->stopped), "LC alone: the client failed (%s)",
			 o->client);
		goto out;
	}
	snprintf(r->be_stop, sizeof(r->be_stop), "%s/be-stop", dir);
	r->be = client(c, o, "be", "3", "600", o->kind == ST_HIP ? r->be_stop : NULL);
	if (r->be < 0) {
		snprintf(r->stopped, sizeof(r->stopped), "BE: cannot start the client");
		goto out;
	}
	sleep_ms(500);
	stats_read(c, &s0);
	if (lc_run(c, o, dir, "lc-beside-be", &r->lc_beside)) {
		snprintf(r->stopped, sizeof(r->stopped), "LC beside BE: the client failed");
		goto out_be;
	}
	stats_read(c, &s1);
	r->shadow_parks = s1.shadow_parks - s0.shadow_parks;
	r->shadow_calls = s1.shadow_remaps - s0.shadow_remaps;
	r->detect = hist_delta(&s0.detect_lat, &s1.detect_lat);
	park_runs(c, o, r);
	if (!r->stopped[0] && lc_be_parked(c, o, dir, r))
		snprintf(r->stopped, sizeof(r->stopped), "LC beside BE held parked: failed");
out_be:
	be_stop(c, o, r, &ret);
	if ((!WIFEXITED(ret) || WEXITSTATUS(ret)) && !r->stopped[0])
		snprintf(r->stopped, sizeof(r->stopped), "BE's client reported lost or repeated work");
out:
	r->smi_gpus = smi.n;
	r->gpu_resets = smi_resets(&smi);
	if (r->gpu_resets > 0) {
		size_t l = strlen(r->stopped);

		/* The reset is the cause of whatever else stopped it. */
		snprintf(r->stopped + l, sizeof(r->stopped) - l, "%sa GPU reset during the run (%ld)",
			 l ? "; " : "", r->gpu_resets);
	}
	stats_read(c, &s1);
	r->errors1 = s1.errors;
	r->fences1 = s1.dev_fences;
	n = others_parked(c, r->be, 0);
	r->others_parked = n > r->others_parked ? n - r->others_parked : 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s.json", dir, names[i]);
		unlink(path);
	}
	if (r->be_stop[0])
		unlink(r->be_stop);
	rmdir(dir);
	return 0;
}

/* The machine, as JSON members: kernel, module, amdgpu, ROCm, every GPU node. */
static struct json_object *sys_json(void)
{
	struct json_object *o = json_object_new_object(), *gpus = json_object_new_array();
	char buf[256], path[PATH_MAX];
	struct utsname u;
	int node;

	uname(&u);
	json_object_object_add(o, "kernel", json_object_new_string(u.release));
	/* A module built without a version: its srcversion names the build. */
	read_line("/sys/module/gpreempt/version", buf, sizeof(buf));
	if (!buf[0]) {
		char src[64];

		read_line("/sys/module/gpreempt/srcversion", src, sizeof(src));
		snprintf(buf, sizeof(buf), src[0] ? "srcversion %s" : "unknown", src);
	}
	json_object_object_add(o, "gpreempt", json_object_new_string(buf));
	read_line("/sys/module/amdgpu/version", buf, sizeof(buf));
	json_object_object_add(o, "amdgpu", json_object_new_string(buf[0] ? buf : "in-tree"));
	read_line("/opt/rocm/.info/version", buf, sizeof(buf));
	json_object_object_add(o, "rocm", json_object_new_string(buf[0] ? buf : "unknown"));
	for (node = 0; node < 256; node++) {
		struct json_object *g;
		char gfx[256];

		long id = kfd_topology_gpu_id(node);

		if (id < 0)
			break;
		if (!id)
			continue;	/* a CPU node */
		g = json_object_new_object();
		json_object_object_add(g, "node", json_object_new_int(node));
		snprintf(buf, sizeof(buf), "%ld", id);
		json_object_object_add(g, "gpu_id", json_object_new_string(buf));
		snprintf(path, sizeof(path), "/sys/class/kfd/kfd/topology/nodes/%d/name", node);
		read_line(path, buf, sizeof(buf));
		json_object_object_add(g, "name", json_object_new_string(buf));
		snprintf(path, sizeof(path), "/sys/class/kfd/kfd/topology/nodes/%d/properties",
			 node);
		gfx[0] = 0;
		{
			FILE *f = fopen(path, "r");

			while (f && fgets(buf, sizeof(buf), f))
				if (!strncmp(buf, "gfx_target_version ", 19))
					snprintf(gfx, sizeof(gfx), "%s", buf + 19);
			if (f)
				fclose(f);
		}
		gfx[strcspn(gfx, "\n")] = 0;
		json_object_object_add(g, "gfx_target_version", json_object_new_string(gfx));
		json_object_array_add(gpus, g);
	}
	json_object_object_add(o, "gpus", gpus);
	return o;
}

static struct json_object *lat_obj(struct lat3 l)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "p50", json_object_new_double(l.p50));
	json_object_object_add(o, "p99", json_object_new_double(l.p99));
	json_object_object_add(o, "max", json_object_new_double(l.max));
	return o;
}

static struct json_object *report(const struct st_opts *o, struct st_result *r)
{
	struct json_object *j = json_object_new_object(), *p;

	json_object_object_add(j, "system", sys_json());
	json_object_object_add(j, "client", json_object_new_string(o->client));
	json_object_object_add(j, "client_kind",
			       json_object_new_string(o->kind == ST_HIP ? "hip" : "gpload"));
	json_object_object_add(j, "runs_asked", json_object_new_int64(o->runs));
	json_object_object_add(j, "runs_done", json_object_new_int64(r->runs_done));
	json_object_object_add(j, "stopped", r->stopped[0] ?
			       json_object_new_string(r->stopped) : NULL);
	p = json_object_new_object();
	json_object_object_add(p, "end_to_end_us", lat_obj(lat_of(r->park_e2e, r->runs_done)));
	json_object_object_add(p, "kfd_call_us", lat_obj(lat_of(r->park_call, r->runs_done)));
	json_object_object_add(j, "park", p);
	p = json_object_new_object();
	json_object_object_add(p, "end_to_end_us", lat_obj(lat_of(r->unpark_e2e, r->runs_done)));
	json_object_object_add(p, "kfd_call_us", lat_obj(lat_of(r->unpark_call, r->runs_done)));
	json_object_object_add(j, "unpark", p);
	json_object_object_add(j, "detect_us", lat_obj(r->detect));
	p = json_object_new_object();
	json_object_object_add(p, "alone", lat_obj(r->lc_alone));
	json_object_object_add(p, "beside_be", lat_obj(r->lc_beside));
	json_object_object_add(p, "be_parked", lat_obj(r->lc_parked));
	json_object_object_add(j, "lc_us", p);
	p = json_object_new_object();
	json_object_object_add(p, "parks", json_object_new_int64(r->shadow_parks));
	json_object_object_add(p, "backend_calls", json_object_new_int64(r->shadow_calls));
	json_object_object_add(j, "shadow", p);
	json_object_object_add(j, "errors", json_object_new_int64(r->errors1 - r->errors0));
	json_object_object_add(j, "device_fences_before", json_object_new_int64(r->fences0));
	json_object_object_add(j, "device_fences_after", json_object_new_int64(r->fences1));
	json_object_object_add(j, "other_processes_parked",
			       json_object_new_int64(r->others_parked));
	/* null: no GPU's SMI events could be read (no /dev/kfd access, an old KFD) */
	json_object_object_add(j, "gpu_resets_during_run", r->gpu_resets < 0 ? NULL :
			       json_object_new_int64(r->gpu_resets));
	json_object_object_add(j, "gpus_watched_for_resets", json_object_new_int(r->smi_gpus));
	return j;
}

static void md_lat(const char *what, struct lat3 l)
{
	printf("| %s | %.1f | %.1f | %.1f |\n", what, l.p50, l.p99, l.max);
}

static void markdown(const struct st_opts *o, struct st_result *r, struct json_object *j)
{
	struct json_object *sys, *gpus, *v;
	size_t i;

	json_object_object_get_ex(j, "system", &sys);
	printf("# gpreempt selftest\n\n");
	json_object_object_get_ex(sys, "kernel", &v);
	printf("- kernel %s", json_object_get_string(v));
	json_object_object_get_ex(sys, "gpreempt", &v);
	printf(", gpreempt %s", json_object_get_string(v));
	json_object_object_get_ex(sys, "amdgpu", &v);
	printf(", amdgpu %s", json_object_get_string(v));
	json_object_object_get_ex(sys, "rocm", &v);
	printf(", ROCm %s\n", json_object_get_string(v));
	json_object_object_get_ex(sys, "gpus", &gpus);
	for (i = 0; i < json_object_array_length(gpus); i++) {
		struct json_object *g = json_object_array_get_idx(gpus, i), *n, *x;

		json_object_object_get_ex(g, "name", &n);
		json_object_object_get_ex(g, "gfx_target_version", &x);
		printf("- GPU %zu: %s (gfx_target_version %s)\n", i, json_object_get_string(n),
		       json_object_get_string(x));
	}
	printf("- client %s (%s); %ld of %ld runs%s%s\n\n", o->client,
	       o->kind == ST_HIP ? "hip" : "gpload", r->runs_done, o->runs,
	       r->stopped[0] ? ", stopped: " : "", r->stopped);
	printf("| us | p50 | p99 | max |\n|---|---|---|---|\n");
	md_lat("detection (shadow stage)", r->detect);
	md_lat("park, end to end", lat_of(r->park_e2e, r->runs_done));
	md_lat("park call (KFD, the device's preemption included)", lat_of(r->park_call, r->runs_done));
	md_lat("unpark, end to end", lat_of(r->unpark_e2e, r->runs_done));
	md_lat("unpark call (KFD)", lat_of(r->unpark_call, r->runs_done));
	md_lat("LC request alone", r->lc_alone);
	md_lat("LC request beside BE (without gpreempt)", r->lc_beside);
	md_lat("LC request beside BE held parked", r->lc_parked);
	printf("\nShadow stage: %llu parks, %llu backend calls. gpreempt errors %llu; device fences %llu before, %llu after; other processes' queues parked: %llu.\n",
	       r->shadow_parks, r->shadow_calls, r->errors1 - r->errors0, r->fences0, r->fences1,
	       r->others_parked);
	if (r->gpu_resets < 0)
		printf("GPU resets during the run: not known (no GPU's SMI events could be read).\n");
	else
		printf("GPU resets during the run: %ld (KFD's reset events of %d GPUs).\n",
		       r->gpu_resets, r->smi_gpus);
}

/* selftest's options: EX_OK, EX_USAGE, EX_RANGE or EX_NOTARGET (printed). */
static int selftest_args(int argc, char **argv, struct st_opts *o)
{
	const char *kind = NULL;
	int a;

	o->runs = 20;
	o->seconds = 2;
	o->client = NULL;
	o->markdown = false;
	for (a = 1; a < argc; a++) {
		char *end;

		if (!strcmp(argv[a], "--runs") && a + 1 < argc) {
			o->runs = strtol(argv[++a], &end, 10);
			if (!*argv[a] || *end || o->runs < 1 || o->runs > 10000)
				return err(EX_RANGE, "--runs '%s' out of range: 1..10000", argv[a]);
		} else if (!strcmp(argv[a], "--seconds") && a + 1 < argc) {
			o->seconds = strtod(argv[++a], &end);
			if (!*argv[a] || *end || !(o->seconds >= 0.5 && o->seconds <= 600))
				return err(EX_RANGE, "--seconds '%s' out of range: 0.5..600",
					   argv[a]);
		} else if (!strcmp(argv[a], "--client") && a + 1 < argc) {
			o->client = argv[++a];
		} else if (!strcmp(argv[a], "--client-kind") && a + 1 < argc) {
			kind = argv[++a];
			if (strcmp(kind, "gpload") && strcmp(kind, "hip"))
				return err(EX_USAGE,
					   "--client-kind '%s': expected gpload (kfdsim) or hip (hip-work, a real GPU too)",
					   kind);
		} else if (!strcmp(argv[a], "--markdown")) {
			o->markdown = true;
		} else {
			return err(EX_USAGE,
				   "selftest: unknown argument '%s' (selftest --client PATH [--client-kind gpload|hip] [--runs N] [--seconds S] [--markdown])",
				   argv[a]);
		}
	}
	if (!o->client)
		return err(EX_USAGE,
			   "selftest needs --client PATH: the project's load client (gpload on kfdsim, hip-work on a GPU)");
	if (access(o->client, X_OK))
		return err(EX_NOTARGET, "selftest: cannot run the client %s: %s", o->client,
			   strerror(errno));
	if (!kind) {
		char name[PATH_MAX];

		snprintf(name, sizeof(name), "%s", o->client);
		kind = strncmp(basename(name), "hip-work", 8) ? "gpload" : "hip";
	}
	o->kind = strcmp(kind, "hip") ? ST_GPLOAD : ST_HIP;
	return EX_OK;
}

/**
 * selftest_check() - check selftest's arguments without the module
 * @argc: argument count (argv[0] is "selftest")
 * @argv: arguments
 *
 * Return: EX_OK, or the exit status (the reason printed).
 */
int selftest_check(int argc, char **argv)
{
	struct st_opts o;

	return selftest_args(argc, argv, &o);
}

/** cmd_selftest() - the staged first-contact measurement; exit 1 when it stopped early */
int cmd_selftest(struct ctl *c, int argc, char **argv)
{
	struct st_result r = { 0 };
	struct json_object *j;
	struct gp_stats st;
	struct st_opts o;
	int ret;

	ret = selftest_args(argc, argv, &o);
	if (ret)
		return ret;
	if (stats_read(c, &st))
		return err(EX_NOTLOADED, "cannot read gp_stats (gpreempt unloaded?): %s",
			   strerror(errno));
	if (!st.shadow_active)
		return err(EX_ERR,
			   "selftest runs only in shadow mode, so that it parks no process but its own: set enable=0 (or gpreemptctl config enable=off) first");
	r.park_e2e = calloc(o.runs, sizeof(double));
	r.park_call = calloc(o.runs, sizeof(double));
	r.unpark_e2e = calloc(o.runs, sizeof(double));
	r.unpark_call = calloc(o.runs, sizeof(double));
	if (!r.park_e2e || !r.park_call || !r.unpark_e2e || !r.unpark_call)
		return err(EX_ERR, "out of memory");
	signal(SIGPIPE, SIG_IGN);
	st_run(c, &o, &r);
	j = report(&o, &r);
	if (o.markdown)
		markdown(&o, &r, j);
	else
		printf("%s\n", json_object_to_json_string_ext(j, c->json ? JSON_C_TO_STRING_PLAIN :
							      JSON_C_TO_STRING_PRETTY));
	json_object_put(j);
	free(r.park_e2e);
	free(r.park_call);
	free(r.unpark_e2e);
	free(r.unpark_call);
	return r.stopped[0] ? EX_ERR : EX_OK;
}
