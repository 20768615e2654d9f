/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gpreemptctl.h - shared declarations of gpreemptctl, gpreempt's control tool:
 * what the rooms under tools/gpreemptctl define for each other.  cli/cli.h
 * holds only what main.c alone calls, so no room includes cli/.
 */
#ifndef GPREEMPTCTL_H
#define GPREEMPTCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "gp_maps.h"
#include "gp_version.h"

/* The tool's version: the module's and dkms.conf's (test/unit/cli.sh checks). */
#define GP_TOOL_VERSION GP_VERSION

/* Exit codes (gpreemptctl.8, EXIT STATUS). */
enum {
	EX_OK = 0,
	EX_ERR = 1,		/* any other failure (map write failed, layout mismatch) */
	EX_USAGE = 2,		/* bad command line */
	EX_NOTLOADED = 3,	/* gpreempt is not loaded (its maps do not exist) */
	EX_PERM = 4,		/* not permitted: needs CAP_BPF or CAP_SYS_ADMIN */
	EX_RANGE = 5,		/* a value is out of range */
	EX_NOTARGET = 6,	/* no such cgroup path, pid or queue */
};

enum gp_map_idx {
	M_QUEUES, M_STATS, M_PRIO, M_PRIO_CGROUP, M_PRIO_COMM, M_QUEUE_CTL, M_CONFIG, M_PRIO_HOOK,
	M_CGROUPS, M_NR,
};

struct ctl {
	bool json;
	int fd[M_NR];
};

extern const char *prog;

/* util.c: err() prints {"error": "..."} on stdout (-j), or nothing (quiet). */
extern bool err_json;
extern bool err_quiet;
/* util.c: err() starts its message with it (apply: the file's FILE:LINE). */
extern const char *err_where;
int err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int parse_prio(const char *s, int *prio);
const char *prio_name(int prio);
const char *source_name(unsigned int src);
const char *state_name(unsigned int st);
void json_str(const char *s, size_t max);
void read_line(const char *path, char *buf, size_t len);
long kfd_topology_gpu_id(int node);

/* maps.c */
int maps_open(struct ctl *c);
int map_count(int fd, size_t ksz);
int queues_read(struct ctl *c, struct gp_queue_info **out);
int stats_read(struct ctl *c, struct gp_stats *st);
struct gp_cgroup_entry {
	__u64 id;
	struct gp_cgroup_stats st;
};
int cgroups_read(struct ctl *c, struct gp_cgroup_entry **out);
int config_read(struct ctl *c, struct gp_config *cfg);
int config_write(struct ctl *c, const struct gp_config *cfg);
int rules_bump(struct ctl *c);

/* target.c */
int cgroup_root(char *buf, size_t len);
int cgroup_id_of(const char *path, uint64_t *id, char *abs, size_t abslen);
int cgroup_path_of(uint64_t id, char *buf, size_t len);
#define GP_RULES_DIR "/run/gpreempt/rules"
/* The cgroup rules the last apply skipped: their cgroup did not exist yet. */
#define GP_PENDING_FILE "/run/gpreempt/pending"
void rule_path_save(uint64_t id, const char *abs);
void rule_path_drop(uint64_t id);
int rule_path_get(uint64_t id, char *buf, size_t len);
void cgroup_unit_warn(const char *abs);
bool cgroup_missing(const char *path);
int cgroup_cap(struct ctl *c, const char *abs, int *cap, char *by, size_t len);
int parse_queue(const char *s, struct gp_queue_key *key);
int parse_pid(const char *s, uint32_t *pid);
int proc_start(uint32_t pid, uint64_t *start);

/* metrics.c */
int metrics_check(int argc, char **argv);
int cmd_metrics(int argc, char **argv);

/* selftest.c */
int selftest_check(int argc, char **argv);
int cmd_selftest(struct ctl *c, int argc, char **argv);

/* shadowview.c */
const char *unmanaged_name(unsigned int u);
void shadow_text(const struct gp_stats *st, const struct gp_queue_info *q, int n);
void wait_text(const struct gp_stats *st);
void shadow_json(const struct gp_stats *st);

/* views.c */
int cmd_status(struct ctl *c, int argc, char **argv);
int cmd_top(struct ctl *c, int argc, char **argv);
int cmd_stats(struct ctl *c, int argc, char **argv);
int cmd_list(struct ctl *c, int argc, char **argv);
int cmd_config(struct ctl *c, int argc, char **argv);
int top_args(int argc, char **argv, double *delay, long *count);

/* doctor/doctor.c: exit EX_OK, or EX_DOCTOR_FAIL (doctor/report.h) when a check failed */
int cmd_doctor(struct ctl *c, int argc, char **argv);

/* rules.c */
int cmd_set(struct ctl *c, int argc, char **argv);
int cmd_unset(struct ctl *c, int argc, char **argv);
int cmd_park(struct ctl *c, int argc, char **argv, bool park);
int cmd_apply(struct ctl *c, int argc, char **argv);

/* A cgroup rule apply skipped (GP_PENDING_FILE). */
struct pending {
	char path[PATH_MAX];
	int prio;
};

void pending_save(const char *file, const struct pending *p, int np);
bool pending_next(FILE *f, struct pending *p);
int config_set_kv(struct gp_config *cfg, const char *kv);

/* hookparse.c, hook.c: the container hook (OCI hooks, NRI v0.1) */
#define HOOK_ANNOTATION "gpreempt.io/priority"
#define HOOK_ID_LEN 129			/* container ids: 1..128 characters */
#define HOOK_POD_LEN 64			/* a pod UID label: 1..63 characters */
#define HOOK_CTR_LEN 65			/* a CRI container id: 64 hex digits */
/*
 * Highest an annotation grants, by default: below an administrator's "high"
 * (12), so an administrator's LC service parks any annotated pod.
 */
#define HOOK_DEFAULT_MAX 11
#define HOOK_RUN_DIR "/run/gpreempt/containers"
#define GP_CONF "/etc/gpreempt.conf"

struct hook_req {
	char id[HOOK_ID_LEN];
	char sandbox_id[HOOK_ID_LEN];	/* NRI: the pod's sandbox, "" if none */
	char state[16];			/* OCI "status" or NRI "state" */
	int pid;			/* 0: none */
	char cgroups_path[PATH_MAX];	/* NRI: spec.cgroupsPath */
	bool has_prio;			/* the annotation is there ... */
	bool prio_ok;			/* ... and valid: prio */
	int prio;
	char prio_text[40];		/* its value, printable and bounded */
};

struct hook_conf {
	int max_priority;		/* highest an annotation grants */
};

bool hook_id_ok(const char *id);
int hook_prio(const char *v, int *prio);
void hook_refusal(const char *value, char *buf, size_t len);
int hook_parse(const char *buf, size_t len, bool nri, struct hook_req *r, char *why, size_t wlen);
int hook_cgroup_line(const char *text, char *out, size_t len);
int hook_cgroups_path(const char *spec, char *out, size_t len);
void hook_kube_ids(const char *cg, char *pod, char *ctr);
int hook_conf_kv(const char *kv, struct hook_conf *conf, char *why, size_t wlen);
int hook_conf_read(FILE *f, const char *name, struct hook_conf *conf, char *why, size_t wlen);
int cmd_hook(int argc, char **argv);
bool hook_record_path(uint64_t cgid, char *path, size_t len, char *id, size_t idlen);
int hook_unsynced(struct ctl *c, int max_priority);

#endif /* GPREEMPTCTL_H */
