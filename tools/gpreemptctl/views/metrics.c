// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metrics.c - "gpreemptctl metrics": gp_stats, gp_queues and gp_cgroups as OpenMetrics
 * text, once to stdout (node_exporter's textfile collector) or served over
 * HTTP for Prometheus to scrape (--listen [ADDR:]PORT, GET /metrics; ADDR
 * defaults to 127.0.0.1: the queues' labels name every user's processes).
 * The server answers one request at a time; a client gets GP_HTTP_TIMEOUT_S
 * to send its request line, so one that sends nothing delays the next
 * scrape by that much at most, and never touches the module.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include "gpreemptctl.h"
#include "gp_lat.h"

#define GP_HTTP_TIMEOUT_S 2
#define GP_HTTP_REQ_MAX 4096

static const struct {
	const char *name;	/* family; counters get _total */
	const char *type;
	const char *help;
	size_t off;
} gp_metric_fields[] = {
#define C(n, f, h) { "gpreempt_" n, "counter", h, offsetof(struct gp_stats, f) }
#define G(n, f, h) { "gpreempt_" n, "gauge", h, offsetof(struct gp_stats, f) }
	C("parks", preempts, "Queues gpreempt took off the GPU."),
	C("unparks", resumes, "Queues gpreempt gave back."),
	C("errors", errors, "Backend calls that failed."),
	C("inversion_ticks", inversions, "Scans that found a higher level pending while a lower one ran."),
	C("starvation_slices", starvation_slices, "Unparks by the starvation guard."),
	C("throttled_actions", throttled, "Actions held back by a device's max_rate bucket."),
	C("lc_preempted", lc_preempts, "Backend calls made while a higher level of the device had work (under HWS each unmaps it too)."),
	C("device_fences", dev_fences, "Fences begun: a preemption failed on a device."),
	C("shadow_parks", shadow_parks, "Shadow mode: parks gpreempt would have made."),
	C("shadow_unparks", shadow_unparks, "Shadow mode: unparks gpreempt would have made."),
	C("shadow_backend_calls", shadow_remaps, "Shadow mode: the backend calls those would cost (device remaps under HWS)."),
	C("shadow_lc_backend_calls", shadow_lc_remaps, "Shadow mode: of those, calls while a higher level of the device had work."),
	G("devices_fenced", dev_fenced, "Devices fenced now (no parks there until they recover)."),
	G("devices_oversubscribed", dev_oversub, "Devices with more KFD processes than the hardware scheduler maps at once (it time-slices them, parked ones included)."),
	C("oversubscriptions", oversub_events, "Times a device became oversubscribed."),
	G("queues", queues, "Queues managed now."),
	G("processes", processes, "Processes with managed queues now."),
	G("queues_over_limit", queues_over_limit, "Queues past their device's or user's limit (managed as unknown work)."),
	G("evictions_held", evicts_outstanding, "Evictions gpreempt holds now."),
	G("shadow_active", shadow_active, "1 while gpreempt is in shadow mode (enable=0)."),
	G("cgroups", cgroups, "Cgroups with counters in gp_cgroups now."),
	C("cgroup_charges_dropped", cgroups_dropped, "Charges gp_cgroups could not take: full of cgroups charged in the last 10 minutes."),
#undef C
#undef G
};

/* Upper bounds of the exported histogram buckets, in seconds. */
static const double gp_le[] = { 1e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
				5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5 };

static void label_str(FILE *f, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		if (s[i] == '\\' || s[i] == '"')
			fprintf(f, "\\%c", s[i]);
		else if (s[i] == '\n')
			fputs("\\n", f);
		else
			fputc(s[i], f);
	}
}

/* A log-linear gp_lat_hist as an OpenMetrics histogram (seconds). */
static void hist_out(FILE *f, const char *name, const char *help, const struct gp_lat_hist *h)
{
	size_t i;
	__u32 b;

	fprintf(f, "# TYPE %s histogram\n# UNIT %s seconds\n# HELP %s %s\n", name, name, name,
		help);
	for (i = 0; i < sizeof(gp_le) / sizeof(gp_le[0]); i++) {
		unsigned long long n = 0;

		for (b = 0; b < GP_LAT_BUCKETS; b++)
			if (gp_lat_upper(b) <= gp_le[i] * 1e9)
				n += h->buckets[b];
		fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, gp_le[i], n);
	}
	fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n%s_count %llu\n%s_sum %.9f\n", name, h->count,
		name, h->count, name, h->sum_ns / 1e9);
}

/* A cgroup v2 path, and the pod and container a kubelet's path names. */
static void cgroup_labels(FILE *f, const char *cg)
{
	char pod[HOOK_POD_LEN], ctr[HOOK_CTR_LEN];

	hook_kube_ids(cg, pod, ctr);
	fputs("cgroup=\"", f);
	label_str(f, cg, strlen(cg));
	fprintf(f, "\",pod_uid=\"%s\",container_id=\"%s\"", pod, ctr);
}

/* A queue's process, its cgroup v2 path, and the pod and container that names. */
static void queue_labels(FILE *f, const struct gp_queue_info *q)
{
	char path[64], line[PATH_MAX];
	const char *cg = "";
	FILE *c;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", q->tgid);
	c = fopen(path, "r");
	while (c && fgets(line, sizeof(line), c))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			cg = line + 3;
			break;
		}
	if (c)
		fclose(c);
	fprintf(f, "{pid=\"%u\",qid=\"%u\",dev=\"%u\",comm=\"", q->tgid, q->qid, q->dev);
	label_str(f, q->comm, GP_COMM_LEN);
	fputs("\",", f);
	cgroup_labels(f, cg);
	fputs("}", f);
}

static void queues_out(FILE *f, const struct gp_queue_info *q, int n)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "gpreempt_queue_parks", "counter", "Parks of the queue." },
		{ "gpreempt_queue_parked_seconds", "counter", "Time the queue spent parked (ended parks)." },
		{ "gpreempt_queue_shadow_parks", "counter", "Shadow mode: parks the queue would have had." },
		{ "gpreempt_queue_parked", "gauge", "1 while the queue is parked or shrunk." },
		{ "gpreempt_queue_priority", "gauge", "The queue's effective priority (0..15)." },
	};
	char **lab = calloc(n, sizeof(*lab));
	size_t k, len;
	int i;

	if (!lab)
		return;
	/* Each queue's labels once (its cgroup read once), for all its series. */
	for (i = 0; i < n; i++) {
		FILE *m = open_memstream(&lab[i], &len);

		if (m) {
			queue_labels(m, &q[i]);
			fclose(m);
		}
	}
	for (k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		fprintf(f, "# TYPE %s %s\n# HELP %s %s\n", fam[k].name, fam[k].type, fam[k].name,
			fam[k].help);
		for (i = 0; i < n; i++) {
			if (!lab[i])
				continue;
			fprintf(f, "%s%s%s", fam[k].name, k < 3 ? "_total" : "", lab[i]);
			if (k == 0)
				fprintf(f, " %llu\n", q[i].preempts);
			else if (k == 1)
				fprintf(f, " %.9f\n", q[i].suspended_ns / 1e9);
			else if (k == 2)
				fprintf(f, " %llu\n", q[i].shadow_parks);
			else if (k == 3)
				fprintf(f, " %d\n", q[i].state == GP_Q_SUSPENDED ||
					q[i].state == GP_Q_SHRUNK);
			else
				fprintf(f, " %d\n", q[i].eff_priority);
		}
	}
	for (i = 0; i < n; i++)
		free(lab[i]);
	free(lab);
}

/*
 * The cgroup v2 directories under the mount, by id (the inode number of the
 * directory, what the kernel's cgroup_id() is): for gp_cgroups's labels.
 */
static struct gp_cg_path {
	__u64 id;
	char *path;
} *gp_paths;
static size_t gp_npaths, gp_cap_paths;
static size_t gp_cg_root_len;

static int cg_walk(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	struct gp_cg_path *np;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	if (gp_npaths == gp_cap_paths) {
		gp_cap_paths = gp_cap_paths ? 2 * gp_cap_paths : 256;
		np = realloc(gp_paths, gp_cap_paths * sizeof(*np));
		if (!np)
			return 1;
		gp_paths = np;
	}
	gp_paths[gp_npaths].id = sb->st_ino;
	gp_paths[gp_npaths].path = strdup(path[gp_cg_root_len] ? path + gp_cg_root_len : "/");
	if (gp_paths[gp_npaths].path)
		gp_npaths++;
	return 0;
}

static void cg_paths_free(void)
{
	size_t i;

	for (i = 0; i < gp_npaths; i++)
		free(gp_paths[i].path);
	free(gp_paths);
	gp_paths = NULL;
	gp_npaths = gp_cap_paths = 0;
}

static const char *cg_path_of(__u64 id)
{
	size_t i;

	for (i = 0; i < gp_npaths; i++)
		if (gp_paths[i].id == id)
			return gp_paths[i].path;
	return "";
}

/* gp_cgroups: per cgroup, counters that outlive its queues. */
static void cgroups_out(FILE *f, const struct gp_cgroup_entry *cg, int n)
{
	static const struct {
		const char *name, *help;
		bool secs;
	} fam[] = {
		{ "gpreempt_cgroup_parked_seconds", "Time the cgroup's queues spent parked or shrunk, summed over its queues, since gpreempt was loaded.", true },
		{ "gpreempt_cgroup_wait_seconds", "Time the cgroup's queues had the highest pending work of their device while a lower queue ran there with work.", true },
		{ "gpreempt_cgroup_parks", "Parks of the cgroup's queues.", false },
	};
	const char *root = "/sys/fs/cgroup";
	char **lab = calloc(n, sizeof(*lab));
	size_t k, len;
	int i;

	if (!lab) {
		fprintf(stderr, "%s: metrics: out of memory: no cgroup series in this scrape\n", prog);
		return;
	}
	gp_cg_root_len = strlen(root);
	if (nftw(root, cg_walk, 16, FTW_PHYS | FTW_MOUNT))
		fprintf(stderr, "%s: metrics: cannot walk %s: cgroup labels may be empty\n", prog, root);
	/* Each cgroup's labels once (its path looked up once), for all its series. */
	for (i = 0; i < n; i++) {
		FILE *m = open_memstream(&lab[i], &len);

		if (m) {
			fprintf(m, "{cgroup_id=\"%llu\",", (unsigned long long)cg[i].id);
			cgroup_labels(m, cg_path_of(cg[i].id));
			fputs("}", m);
			fclose(m);
		}
	}
	cg_paths_free();
	for (k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		fprintf(f, "# TYPE %s counter\n", fam[k].name);
		if (fam[k].secs)
			fprintf(f, "# UNIT %s seconds\n", fam[k].name);
		fprintf(f, "# HELP %s %s\n", fam[k].name, fam[k].help);
		for (i = 0; i < n; i++) {
			if (!lab[i])
				continue;
			fprintf(f, "%s_total%s", fam[k].name, lab[i]);
			if (k == 0)
				fprintf(f, " %.9f\n", cg[i].st.parked_ns / 1e9);
			else if (k == 1)
				fprintf(f, " %.9f\n", cg[i].st.wait_ns / 1e9);
			else
				fprintf(f, " %llu\n", (unsigned long long)cg[i].st.parks);
		}
	}
	for (i = 0; i < n; i++)
		free(lab[i]);
	free(lab);
}

/*
 * The PCI address and board serial number of the GPU with KFD gpu_id @id,
 * from its node in the KFD topology (location_id, domain) and amdgpu's
 * serial_number attribute (the FRU's, which amd-smi and AMD's exporter
 * report): empty strings where not known.
 */
static void gpu_of(unsigned int id, char *bdf, size_t blen, char *serial, size_t slen)
{
	char path[PATH_MAX], line[128];
	unsigned long loc = 0, dom = 0;
	long g;
	bool have = false;
	int node;
	FILE *f;

	bdf[0] = serial[0] = 0;
	for (node = 0; (g = kfd_topology_gpu_id(node)) != id; node++)
		if (g < 0)
			return;
	snprintf(path, sizeof(path), "/sys/class/kfd/kfd/topology/nodes/%d/properties", node);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "location_id ", 12)) {
			loc = strtoul(line + 12, NULL, 10);
			have = true;
		} else if (!strncmp(line, "domain ", 7))
			dom = strtoul(line + 7, NULL, 10);
	}
	if (f)
		fclose(f);
	if (!have)
		return;
	snprintf(bdf, blen, "%04lx:%02lx:%02lx.%lx", dom, (loc >> 8) & 0xff, (loc >> 3) & 0x1f,
		 loc & 7);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/serial_number", bdf);
	read_line(path, serial, slen);
}

/* gpreempt_device_NAME{dev}: a gauge of @v for each device slot gpreempt has seen. */
static void dev_gauge(FILE *f, const struct gp_stats *st, const char *name, const char *help,
		      const __u32 *v)
{
	int d;

	fprintf(f, "# TYPE gpreempt_device_%s gauge\n# HELP gpreempt_device_%s %s\n", name, name,
		help);
	for (d = 0; d < GP_DEV_STATS; d++)
		if (st->dev_gpu_id[d])
			fprintf(f, "gpreempt_device_%s{dev=\"%d\"} %u\n", name, d, v[d]);
}

/*
 * One series per device slot gpreempt has seen (the dev label of the queue
 * series), naming the GPU as AMD's device-metrics-exporter does
 * (serial_number, gpu_partition_id) and by its PCI address and KFD gpu_id,
 * so that a query joins gpreempt's series with the GPU's own.
 */
static void devices_out(FILE *f, const struct gp_stats *st)
{
	char bdf[32], serial[64];
	int d;

	fputs("# TYPE gpreempt_device info\n"
	      "# HELP gpreempt_device The GPU of each device slot (dev): KFD's gpu_id, its partition, PCI address and serial number.\n",
	      f);
	for (d = 0; d < GP_DEV_STATS; d++) {
		if (!st->dev_gpu_id[d])
			continue;
		gpu_of(st->dev_gpu_id[d], bdf, sizeof(bdf), serial, sizeof(serial));
		fprintf(f, "gpreempt_device_info{dev=\"%d\",kfd_gpu_id=\"%u\",gpu_partition_id=\"%u\",pci_bdf=\"%s\",serial_number=\"",
			d, st->dev_gpu_id[d], st->dev_partition[d], bdf);
		label_str(f, serial, sizeof(serial));
		fputs("\"} 1\n", f);
	}
	dev_gauge(f, st, "kfd_processes",
		  "KFD processes with a queue on the device, parked ones included.", st->dev_procs);
	dev_gauge(f, st, "max_processes",
		  "Processes the hardware scheduler maps at once (0: unknown); more are time-sliced.",
		  st->dev_max_procs);
}

/* One scrape into @f; false when gpreempt's maps cannot be read (gpreempt_up 0). */
static bool scrape(struct ctl *c, FILE *f)
{
	struct gp_queue_info *q = NULL;
	struct gp_cgroup_entry *cg = NULL;
	char backend[32];
	struct gp_stats st;
	size_t i;
	int n, l;

	fputs("# TYPE gpreempt_up gauge\n# HELP gpreempt_up 1 when gpreempt's maps could be read.\n",
	      f);
	if (!c || stats_read(c, &st)) {
		fputs("gpreempt_up 0\n# EOF\n", f);
		return false;
	}
	fputs("gpreempt_up 1\n", f);
	read_line("/sys/module/gpreempt/parameters/backend", backend, sizeof(backend));
	fputs("# TYPE gpreempt info\n# HELP gpreempt gpreempt's mode and backend, and this tool's version.\n",
	      f);
	fprintf(f, "gpreempt_info{mode=\"%s\",backend=\"", st.shadow_active ? "shadow" : "enabled");
	label_str(f, backend, sizeof(backend));
	fprintf(f, "\",tool_version=\"%s\"} 1\n", GP_TOOL_VERSION);
	devices_out(f, &st);
	for (i = 0; i < sizeof(gp_metric_fields) / sizeof(gp_metric_fields[0]); i++) {
		unsigned long long v;
		bool ctr = !strcmp(gp_metric_fields[i].type, "counter");

		memcpy(&v, (const char *)&st + gp_metric_fields[i].off, sizeof(v));
		fprintf(f, "# TYPE %s %s\n# HELP %s %s\n%s%s %llu\n", gp_metric_fields[i].name,
			gp_metric_fields[i].type, gp_metric_fields[i].name, gp_metric_fields[i].help,
			gp_metric_fields[i].name, ctr ? "_total" : "", v);
	}
	fputs("# TYPE gpreempt_level_wait_seconds counter\n# UNIT gpreempt_level_wait_seconds seconds\n"
	      "# HELP gpreempt_level_wait_seconds Time a level's work was the highest pending on its device while a lower queue ran with work.\n",
	      f);
	for (l = 0; l <= GP_PRIO_MAX; l++)
		fprintf(f, "gpreempt_level_wait_seconds_total{level=\"%d\"} %.9f\n", l,
			st.lc_wait_ns[l] / 1e9);
	fputs("# TYPE gpreempt_shadow_device_backend_calls counter\n"
	      "# HELP gpreempt_shadow_device_backend_calls Shadow mode: backend calls per device slot.\n",
	      f);
	for (l = 0; l < GP_DEV_STATS; l++)
		if (st.shadow_dev_remaps[l])
			fprintf(f, "gpreempt_shadow_device_backend_calls_total{dev=\"%d\"} %llu\n", l,
				st.shadow_dev_remaps[l]);
	hist_out(f, "gpreempt_detect_seconds",
		 "From the scan before to the scan that found new work at the top of a device with an inversion.",
		 &st.detect_lat);
	hist_out(f, "gpreempt_park_call_seconds", "The backend's park call.", &st.park_lat);
	hist_out(f, "gpreempt_unpark_call_seconds", "The backend's unpark call.", &st.unpark_lat);
	n = queues_read(c, &q);
	if (n > 0)
		queues_out(f, q, n);
	free(q);
	n = cgroups_read(c, &cg);
	if (n > 0)
		cgroups_out(f, cg, n);
	free(cg);
	fputs("# EOF\n", f);
	return true;
}

static volatile sig_atomic_t gp_stop;

static void on_stop(int sig)
{
	(void)sig;
	gp_stop = 1;
}

static int listen_on(const char *spec, int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	const char *colon = strrchr(spec, ':');
	char host[64] = "127.0.0.1", *end;
	long port;
	int one = 1;

	if (colon) {
		if ((size_t)(colon - spec) >= sizeof(host))
			return err(EX_USAGE, "--listen '%s': address too long", spec);
		memcpy(host, spec, colon - spec);
		host[colon - spec] = 0;
		spec = colon + 1;
	}
	port = strtol(spec, &end, 10);
	if (!*spec || *end || port < 1 || port > 65535)
		return err(EX_RANGE, "--listen: port '%s' out of range: 1..65535", spec);
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return err(EX_USAGE, "--listen: '%s' is not an IPv4 address", host);
	a.sin_port = htons(port);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(*fd, (struct sockaddr *)&a, sizeof(a)) || listen(*fd, 16))
		return err(EX_ERR, "cannot listen on %s:%ld: %s", host, port, strerror(errno));
	return EX_OK;
}

/*
 * A scrape with the maps opened for it: a module unloaded and loaded again
 * between scrapes has new maps, and an unloaded one reads as gpreempt_up 0
 * (quietly: the exporter runs on).
 */
static void scrape_fresh(FILE *f)
{
	struct ctl c = { 0 };
	int i, ret;

	err_quiet = true;
	ret = maps_open(&c);
	err_quiet = false;
	scrape(ret ? NULL : &c, f);
	for (i = 0; i < M_NR; i++)
		if (c.fd[i] >= 0)
			close(c.fd[i]);
}

/* One connection: its request line, within GP_HTTP_TIMEOUT_S, and the answer. */
static void serve_one(int s)
{
	struct timeval tv = { .tv_sec = GP_HTTP_TIMEOUT_S };
	char req[GP_HTTP_REQ_MAX + 1], *body = NULL, hdr[256];
	size_t len = 0, blen = 0;
	const char *status = "200 OK";
	FILE *f;
	ssize_t r;

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (len < GP_HTTP_REQ_MAX && !memchr(req, '\n', len)) {
		r = recv(s, req + len, GP_HTTP_REQ_MAX - len, 0);
		if (r <= 0)
			return;
		len += r;
	}
	req[len] = 0;
	f = open_memstream(&body, &blen);
	if (!f)
		return;
	if (strncmp(req, "GET /metrics ", 13) && strncmp(req, "GET /metrics?", 13)) {
		status = "404 Not Found";
		fputs("gpreemptctl metrics: GET /metrics\n", f);
	} else {
		scrape_fresh(f);
	}
	fclose(f);
	snprintf(hdr, sizeof(hdr),
		 "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		 status, strcmp(status, "200 OK") ? "text/plain" :
		 "application/openmetrics-text; version=1.0.0; charset=utf-8", blen);
	if (send(s, hdr, strlen(hdr), MSG_NOSIGNAL) > 0)
		send(s, body, blen, MSG_NOSIGNAL);
	free(body);
}

/**
 * cmd_metrics() - OpenMetrics text once, or served with --listen [ADDR:]PORT
 * @argc: argument count (argv[0] is "metrics")
 * @argv: arguments
 *
 * Once, the maps are opened as for any verb (gpreempt_up 0 and the reason
 * when that fails); served, for each scrape.
 *
 * Return: EX_OK (once: the maps' error when gpreempt_up is 0), or the error.
 */
int cmd_metrics(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct ctl c = { 0 };
	int fd = -1, ret;

	ret = metrics_check(argc, argv);
	if (ret)
		return ret;
	if (argc == 1) {
		ret = maps_open(&c);
		scrape(ret ? NULL : &c, stdout);
		return ret;
	}
	ret = listen_on(argv[2], &fd);
	if (ret)
		return ret;
	/* No SA_RESTART: a signal ends the wait in accept(). */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	while (!gp_stop) {
		int s = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (s < 0)
			continue;
		serve_one(s);
		close(s);
	}
	close(fd);
	return EX_OK;
}

/**
 * metrics_check() - check metrics' arguments without the module
 * @argc: argument count
 * @argv: arguments
 *
 * Return: EX_OK or EX_USAGE (printed).
 */
int metrics_check(int argc, char **argv)
{
	if (argc == 1 || (argc == 3 && !strcmp(argv[1], "--listen")))
		return EX_OK;
	return err(EX_USAGE, "usage: metrics [--listen [ADDR:]PORT]");
}
