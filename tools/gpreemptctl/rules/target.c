// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * target.c - rule targets: cgroup v2 paths and ids, pids, PID:QID.
 *
 * A cgroup v2 id is the inode number of the cgroup's directory in the
 * cgroup2 file system (kernfs), the same number the kernel's cgroup_id()
 * returns and the module looks up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <mntent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "gpreemptctl.h"
#include "gp_pidstart.h"

/**
 * cgroup_root() - where the cgroup2 file system is mounted
 * @buf: result
 * @len: its size
 *
 * Return: 0, or -1 when there is no cgroup2 mount.
 */
int cgroup_root(char *buf, size_t len)
{
	struct mntent *m;
	FILE *f = setmntent("/proc/self/mounts", "r");
	int ret = -1;

	if (!f)
		return -1;
	while ((m = getmntent(f))) {
		if (strcmp(m->mnt_type, "cgroup2"))
			continue;
		snprintf(buf, len, "%s", m->mnt_dir);
		ret = 0;
		break;
	}
	endmntent(f);
	return ret;
}

/**
 * cgroup_id_of() - cgroup v2 id of a path
 * @path: absolute path in the cgroup2 mount, or a path relative to it
 * @id: result
 * @abs: the absolute path used (may be NULL)
 * @abslen: its size
 *
 * Return: EX_OK or EX_NOTARGET (printed).
 */
int cgroup_id_of(const char *path, uint64_t *id, char *abs, size_t abslen)
{
	char root[PATH_MAX], p[2 * PATH_MAX + 2], real[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	size_t rl;

	if (cgroup_root(root, sizeof(root)))
		return err(EX_NOTARGET, "no cgroup2 file system is mounted");
	rl = strlen(root);
	if (path[0] == '/')
		snprintf(p, sizeof(p), "%s", path);
	else
		snprintf(p, sizeof(p), "%s/%s", root, path);
	if (!realpath(p, real) || stat(real, &st))
		return err(EX_NOTARGET, "no such cgroup: %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode) || statfs(real, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC ||
	    strncmp(real, root, rl) || (real[rl] && real[rl] != '/'))
		return err(EX_NOTARGET, "no such cgroup: %s is not a cgroup v2 directory under %s",
			   path, root);
	*id = st.st_ino;
	if (abs)
		snprintf(abs, abslen, "%s", real);
	return EX_OK;
}

/*
 * The path each administrator cgroup rule was set on, GP_RULES_DIR/<id>:
 * a rule is bound to the directory's inode, so when the cgroup is removed
 * (a service stopped; systemd makes a new cgroup when it starts again)
 * "list" can still name what the rule was for.  Best effort: without the
 * file list shows id:N.
 */

/** rule_path_save() - remember the path of cgroup rule @id (best effort) */
void rule_path_save(uint64_t id, const char *abs)
{
	char p[64], tmp[80];
	FILE *f;

	if ((mkdir("/run/gpreempt", 0755) && errno != EEXIST) ||
	    (mkdir(GP_RULES_DIR, 0755) && errno != EEXIST))
		return;
	snprintf(p, sizeof(p), GP_RULES_DIR "/%llu", (unsigned long long)id);
	snprintf(tmp, sizeof(tmp), "%s.%d", p, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "%s", abs);
	if (fclose(f) || rename(tmp, p))
		unlink(tmp);
}

/** rule_path_drop() - forget the path of cgroup rule @id */
void rule_path_drop(uint64_t id)
{
	char p[64];

	snprintf(p, sizeof(p), GP_RULES_DIR "/%llu", (unsigned long long)id);
	unlink(p);
}

/**
 * rule_path_get() - the path cgroup rule @id was set on
 * @id: cgroup id
 * @buf: result
 * @len: its size
 *
 * Return: 0, or -1 when none is known.
 */
int rule_path_get(uint64_t id, char *buf, size_t len)
{
	char p[64];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), GP_RULES_DIR "/%llu", (unsigned long long)id);
	f = fopen(p, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n ? 0 : -1;
}

/**
 * cgroup_unit_warn() - warn when a rule's cgroup is a systemd service or
 * scope: systemd removes it when the unit stops and makes a new one (a new
 * id) when it starts again, so the rule stops applying.  A slice stays.
 * @abs: the cgroup's path
 */
void cgroup_unit_warn(const char *abs)
{
	const char *base = strrchr(abs, '/');
	bool service, scope;
	size_t n;

	base = base ? base + 1 : abs;
	n = strlen(base);
	service = n > 8 && !strcmp(base + n - 8, ".service");
	scope = n > 6 && !strcmp(base + n - 6, ".scope");
	if (service || scope)
		fprintf(stderr,
			"%s: warning: %s is a systemd %s's cgroup: the rule stops applying when it restarts (systemd makes a new cgroup); put it in a slice of its own (Slice=) and set the rule on the slice\n",
			prog, abs, service ? "service" : "scope");
}

/**
 * cgroup_cap() - the administrator rule that caps a container rule on @abs
 * @c: maps
 * @abs: the container's cgroup
 * @cap: result: the nearest gp_prio_cgroup rule on @abs or an ancestor
 * @by: result: that cgroup's path
 * @len: its size
 *
 * Return: 0, or -1 when no administrator rule is above @abs.
 */
int cgroup_cap(struct ctl *c, const char *abs, int *cap, char *by, size_t len)
{
	char root[PATH_MAX], p[PATH_MAX], *sl;
	struct gp_prio_override v;
	struct stat st;
	size_t rl;
	__u64 key;

	if (cgroup_root(root, sizeof(root)))
		return -1;
	rl = strlen(root);
	snprintf(p, sizeof(p), "%s", abs);
	if (strncmp(p, root, rl))
		return -1;
	for (;;) {
		if (!stat(p, &st)) {
			key = st.st_ino;
			if (!bpf_map_lookup_elem(c->fd[M_PRIO_CGROUP], &key, &v)) {
				*cap = v.priority;
				snprintf(by, len, "%s", p);
				return 0;
			}
		}
		sl = strrchr(p, '/');
		if (strlen(p) <= rl || !sl || (size_t)(sl - p) < rl)
			return -1;
		*sl = '\0';
	}
}

/**
 * cgroup_missing() - does @path (as cgroup_id_of() takes it) not exist?
 * @path: absolute, or relative to the cgroup2 mount
 *
 * Return: true only for "no such file" under a mounted cgroup2.
 */
bool cgroup_missing(const char *path)
{
	char root[PATH_MAX], p[2 * PATH_MAX + 2];
	struct stat st;

	if (cgroup_root(root, sizeof(root)))
		return false;
	if (path[0] == '/')
		snprintf(p, sizeof(p), "%s", path);
	else
		snprintf(p, sizeof(p), "%s/%s", root, path);
	return stat(p, &st) && errno == ENOENT;
}

static uint64_t walk_id;
static char *walk_out;
static size_t walk_len;

static int walk_fn(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D && st->st_ino == walk_id) {
		snprintf(walk_out, walk_len, "%s", path);
		return 1;
	}
	return 0;
}

/**
 * cgroup_path_of() - path of a cgroup v2 id (walks the hierarchy)
 * @id: cgroup id
 * @buf: result
 * @len: its size
 *
 * Return: 0, or -1 when no cgroup has that id any more.
 */
int cgroup_path_of(uint64_t id, char *buf, size_t len)
{
	char root[PATH_MAX];

	if (cgroup_root(root, sizeof(root)))
		return -1;
	walk_id = id;
	walk_out = buf;
	walk_len = len;
	return nftw(root, walk_fn, 16, FTW_PHYS | FTW_MOUNT) == 1 ? 0 : -1;
}

/*
 * Is the caller in the initial pid namespace?  Its nsfs inode number is
 * fixed (PROC_PID_INIT_INO, include/linux/proc_ns.h), as systemd's
 * namespace_is_init() relies on too.  NSpid in /proc/self/status does not
 * tell: a container's /proc is mounted in its own namespace.  Unknown (no
 * /proc/self/ns) counts as initial.
 */
static bool init_pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) || st.st_ino == 0xEFFFFFFCU;
}

/*
 * A field of /proc/PID/status: the number of values it has (up to @max,
 * into @v), or -1 when there is no such line.
 */
static int status_field(long pid, const char *name, long *v, int max)
{
	char path[64], line[256], *p, *end;
	size_t len = strlen(name);
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, name, len) || line[len] != ':')
			continue;
		for (n = 0, p = line + len + 1; n < max; n++, p = end) {
			v[n] = strtol(p, &end, 10);
			if (end == p)
				break;
		}
		break;
	}
	fclose(f);
	return n;
}

/**
 * parse_pid() - a live process id, as the module keys it
 * @s: text
 * @pid: result
 *
 * The module matches pid rules against the thread-group id in the initial
 * pid namespace.  A thread id, or a pid read in a container's namespace,
 * names some other process there (or none yet, a process that gets it later
 * would inherit the rule), so both are refused.
 *
 * Return: EX_OK, EX_USAGE or EX_NOTARGET (printed).
 */
int parse_pid(const char *s, uint32_t *pid)
{
	char *end;
	long v = strtol(s, &end, 10), tgid;

	if (!*s || *end || v <= 0 || v > INT_MAX)
		return err(EX_USAGE, "bad pid '%s': expected a positive number", s);
	if (!init_pid_ns())
		return err(EX_NOTARGET, "pid %ld is a pid of this container's pid namespace, not the host's: run gpreemptctl in the host's (hostPID)",
			   v);
	if (kill(v, 0) && errno == ESRCH)
		return err(EX_NOTARGET, "no such process: %ld", v);
	if (status_field(v, "Tgid", &tgid, 1) == 1 && tgid != v)
		return err(EX_NOTARGET, "%ld is a thread of process %ld: rules name processes",
			   v, tgid);
	*pid = v;
	return EX_OK;
}

/*
 * Is the caller in the initial time namespace (PROC_TIME_INIT_INO)?  In
 * another, /proc/PID/stat's starttime carries that namespace's boottime
 * offset (timens_add_boottime_ns()), and would never match the module's.
 */
static bool init_time_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/time", &st) || st.st_ino == 0xEFFFFFFAU;
}

/**
 * proc_start() - when process @pid started, as the module compares it
 * @pid: a process id (initial pid namespace)
 * @start: result: starttime, field 22 of /proc/PID/stat (USER_HZ clock
 *	   ticks since boot): struct gp_prio_pid.start
 *
 * A pid is reused once its process is reaped; with its start it names one
 * process.  The process must still exist: a rule on one that already ended
 * would name nothing.
 *
 * Return: EX_OK or EX_NOTARGET (printed).
 */
int proc_start(uint32_t pid, uint64_t *start)
{
	int r;

	if (!init_time_ns())
		return err(EX_NOTARGET, "this time namespace shifts process start times: run gpreemptctl in the host's");
	r = gp_pid_start(pid, start);
	if (r == -ESRCH)
		return err(EX_NOTARGET, "no such process: %u", pid);
	if (r)
		return err(EX_NOTARGET, "cannot read the start of process %u", pid);
	return EX_OK;
}

/**
 * parse_queue() - PID:QID
 * @s: text
 * @key: result
 *
 * Return: EX_OK, EX_USAGE or EX_NOTARGET (printed).
 */
int parse_queue(const char *s, struct gp_queue_key *key)
{
	char pid[32], *colon = strchr(s, ':'), *end;
	unsigned long qid;
	int ret;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(pid))
		return err(EX_USAGE, "bad queue '%s': expected PID:QID", s);
	memcpy(pid, s, colon - s);
	pid[colon - s] = '\0';
	qid = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || qid > UINT32_MAX)
		return err(EX_USAGE, "bad queue '%s': expected PID:QID", s);
	memset(key, 0, sizeof(*key));
	ret = parse_pid(pid, &key->tgid);
	if (ret)
		return ret;
	key->qid = qid;
	return EX_OK;
}
