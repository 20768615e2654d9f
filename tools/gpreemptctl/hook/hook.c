// SPDX-License-Identifier: GPL-2.0
/*
 * hook.c - gpreemptctl hook: a container's gpreempt.io/priority annotation
 * becomes a cgroup rule on the container's own cgroup before its command
 * runs, and goes at poststop.
 *
 *   OCI hooks (podman, CRI-O; etc/oci-hooks.d/): "hook create" at
 *   createRuntime, "hook poststop" at poststop, the OCI state on stdin.
 *   NRI v0.1 (containerd 1.6; etc/nri/): "invoke" (or "hook nri"), the
 *   request on stdin, the result on stdout; state "create" and "delete".
 *
 * The cgroup is found from the container's pid (/proc/PID/cgroup, in the
 * hook's cgroup namespace: the runtime's, the host's), or from the NRI
 * request's cgroupsPath when there is no pid.  The rule goes in gp_prio_hook,
 * not in the administrator's gp_prio_cgroup: the module caps it by the
 * nearest administrator rule on the container's cgroup or an ancestor, so a
 * pod author never outranks an administrator.  What was set is recorded in
 * HOOK_RUN_DIR/<id> (cgroup id, priority, path), so poststop removes exactly
 * that rule when the pid and the cgroup are gone.  A record whose cgroup no
 * longer exists (a poststop that never ran) is removed, with its rule, by the
 * next create, and by "hook gc".  "hook resync" writes every live record's
 * rule again (after gpreempt was reloaded: its maps start empty).
 *
 * Hooks of different containers run concurrently: every hook that reads
 * and writes records (create, poststop, gc, resync) holds an exclusive
 * flock on HOOK_RUN_DIR/.lock for its whole read-modify-write.
 *
 * A container is refused (exit 5, one line on stderr) only when its
 * annotation is not a priority, or (exit 1) when /etc/gpreempt.conf has a
 * bad "container" line.  Everything else - gpreempt not loaded, no cgroup of
 * its own, a full map - is logged and the container starts without a rule.
 * With gpreempt not loaded its record is written all the same, so the "hook
 * resync" that follows each load sets the rule then.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "gpreemptctl.h"

#define HOOK_INPUT_MAX (16 << 20)

struct hook {
	const char *conf_file;
	const char *run_dir;
	const char *log_file;
	const char *plugin;	/* NRI: the plugin's name (argv[0]) */
	bool nri;
	struct timespec t0;
	char nri_error[PATH_MAX + 256];	/* NRI: the refusal, for the result */
};

struct record {
	uint64_t cgid;
	int prio;
	char path[PATH_MAX];
};

static struct hook *hk;

static double elapsed_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - hk->t0.tv_sec) * 1e3 + (t.tv_nsec - hk->t0.tv_nsec) / 1e6;
}

/*
 * One event: syslog (the journal), the --log file if any (one write(), so
 * concurrent hooks do not interleave), and stderr for warnings and errors
 * (the runtime shows a refused container's line to its user).
 */
static void hlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void hlog(int level, const char *fmt, ...)
{
	char msg[1024], line[1200];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	syslog(level, "%s", msg);
	if (level <= LOG_WARNING)
		fprintf(stderr, "%s: %s\n", prog, msg);
	if (!hk->log_file)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s\n",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, now.tv_nsec / 1000000,
		     level <= LOG_ERR ? "error" : level == LOG_WARNING ? "warning" : "info", msg);
	fd = open(hk->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0)
		return;
	if (write(fd, line, n > (int)sizeof(line) - 1 ? (int)sizeof(line) - 1 : n) < 0)
		syslog(LOG_WARNING, "cannot write %s: %s", hk->log_file, strerror(errno));
	close(fd);
}

static char *read_all(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *nb;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			if (cap >= HOOK_INPUT_MAX) {
				free(buf);
				errno = E2BIG;
				return NULL;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (!r) {
			*len = n;
			return buf;
		}
		n += r;
	}
	free(buf);
	return NULL;
}

/*
 * --- records: run_dir/<id> -------------------------------------------------
 *
 * "gpreempt-record 2 CGID PRIO LEN\n" then the LEN bytes of the path and a
 * newline: a path with white space (a --cgroup-parent with a space) is
 * kept whole.  The format before ("CGID PRIO PREV PATH", PATH without white
 * space) is still read.
 */

#define RECORD_MAGIC "gpreempt-record 2"

static int record_read(const char *dir, const char *id, struct record *rec)
{
	char p[PATH_MAX], hdr[PATH_MAX + 128];
	unsigned long long cgid;
	size_t len;
	int prio, prev, n, ret = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, id);
	f = fopen(p, "re");
	if (!f)
		return -1;
	if (!fgets(hdr, sizeof(hdr), f))
		goto out;
	if (!strncmp(hdr, RECORD_MAGIC " ", sizeof(RECORD_MAGIC))) {
		if (sscanf(hdr + sizeof(RECORD_MAGIC), "%llu %d %zu%n", &cgid, &prio, &len, &n) != 3 ||
		    hdr[sizeof(RECORD_MAGIC) + n] != '\n' || !len || len >= sizeof(rec->path) ||
		    fread(rec->path, 1, len, f) != len || fgetc(f) != '\n')
			goto out;
		rec->path[len] = '\0';
		if (strlen(rec->path) != len)
			goto out;
	} else {
		/* the format before: one line, the path up to white space */
		if (sscanf(hdr, "%llu %d %d %n", &cgid, &prio, &prev, &n) != 3 || !hdr[n] ||
		    !strchr(hdr, '\n'))
			goto out;
		hdr[strcspn(hdr, "\n")] = '\0';
		if (strlen(hdr + n) >= sizeof(rec->path) || strpbrk(hdr + n, " \t"))
			goto out;
		snprintf(rec->path, sizeof(rec->path), "%s", hdr + n);
	}
	rec->cgid = cgid;
	rec->prio = prio;
	ret = 0;
out:
	fclose(f);
	return ret;
}

static int run_dir_make(const char *dir)
{
	char parent[PATH_MAX], *sl;

	if (!mkdir(dir, 0700) || errno == EEXIST)
		return 0;
	/* /run/gpreempt/containers: make /run/gpreempt first */
	snprintf(parent, sizeof(parent), "%s", dir);
	sl = strrchr(parent, '/');
	if (!sl || sl == parent)
		return -1;
	*sl = '\0';
	if ((mkdir(parent, 0755) && errno != EEXIST) || (mkdir(dir, 0700) && errno != EEXIST))
		return -1;
	return 0;
}

static int record_write(const char *dir, const char *id, const struct record *rec)
{
	char p[PATH_MAX], tmp[PATH_MAX + 32];
	FILE *f;

	if (run_dir_make(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/%s", dir, id);
	snprintf(tmp, sizeof(tmp), "%s/.%s.%d", dir, id, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	fprintf(f, RECORD_MAGIC " %llu %d %zu\n%s\n", (unsigned long long)rec->cgid, rec->prio,
		strlen(rec->path), rec->path);
	if (fclose(f) || rename(tmp, p)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void record_remove(const char *dir, const char *id)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, id);
	unlink(p);
}

/*
 * The exclusive lock of @dir's records (S4-8), held until exit; made when
 * @make (create), else none is needed when @dir does not exist.
 * Return: 0 (locked, or nothing to lock), -1 with errno.
 */
static int records_lock(const char *dir, bool make)
{
	char p[PATH_MAX];
	int fd;

	if (make && run_dir_make(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/.lock", dir);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOENT && !make ? 0 : -1;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return 0;	/* fd stays open: released at exit */
}

/* A record in @dir naming @cgid: its path and id (either may be NULL). */
static bool record_find(const char *dir, uint64_t cgid, char *path, size_t len, char *id,
			size_t idlen)
{
	DIR *d = opendir(dir);
	struct record rec;
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] == '.' || record_read(dir, e->d_name, &rec) || rec.cgid != cgid)
			continue;
		found = true;
		if (path)
			snprintf(path, len, "%s", rec.path);
		if (id)
			snprintf(id, idlen, "%s", e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/**
 * hook_record_path() - the container a cgroup id's record names (for list)
 * @cgid: cgroup id
 * @path: result: the cgroup's path when the rule was set
 * @len: its size
 * @id: result: the container's id
 * @idlen: its size
 *
 * Return: true when a record in HOOK_RUN_DIR names @cgid.
 */
bool hook_record_path(uint64_t cgid, char *path, size_t len, char *id, size_t idlen)
{
	return record_find(HOOK_RUN_DIR, cgid, path, len, id, idlen);
}

/*
 * Another record than @id's naming @cgid (two containers in one cgroup):
 * its priority, or -1.
 */
static int record_other(uint64_t cgid, const char *id)
{
	DIR *d = opendir(hk->run_dir);
	struct record rec;
	struct dirent *e;
	int prio = -1;

	while (d && prio < 0 && (e = readdir(d))) {
		if (e->d_name[0] != '.' && strcmp(e->d_name, id) &&
		    !record_read(hk->run_dir, e->d_name, &rec) && rec.cgid == cgid)
			prio = rec.prio;
	}
	if (d)
		closedir(d);
	return prio;
}

/*
 * Remove @id's rule: delete it, or put back the rule of another container
 * recorded on the same cgroup.  gp_prio_hook holds container rules only, so
 * there is no administrator's rule to give back (S4-8: no entry is left for
 * a cgroup that is gone).
 */
static int rule_undo(struct ctl *c, const char *id, const struct record *rec)
{
	struct gp_prio_override v = { .priority = record_other(rec->cgid, id) };
	__u64 key = rec->cgid;

	if (v.priority >= 0)
		return bpf_map_update_elem(c->fd[M_PRIO_HOOK], &key, &v, BPF_ANY);
	if (bpf_map_delete_elem(c->fd[M_PRIO_HOOK], &key) && errno != ENOENT)
		return -1;
	return 0;
}

/* Is the record's cgroup still the one it names? */
static bool record_live(const struct record *rec)
{
	struct stat st;

	return !stat(rec->path, &st) && st.st_ino == rec->cgid;
}

/**
 * hook_unsynced() - running containers whose rule is missing or above the cap
 * @c: open maps
 * @max_priority: today's container max_priority (-1: not known)
 *
 * A gpreempt loaded again by hand (not by its unit or the DaemonSet) starts
 * with no container rule, and a lowered cap reaches only the rules written
 * after it: either way only "hook resync" puts them right, and list says so.
 *
 * Return: how many records of HOOK_RUN_DIR that name a live cgroup have no
 * rule in gp_prio_hook, or one above @max_priority.
 */
int hook_unsynced(struct ctl *c, int max_priority)
{
	DIR *d = opendir(HOOK_RUN_DIR);
	struct gp_prio_override v;
	struct record rec;
	struct dirent *e;
	int n = 0;
	__u64 key;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || record_read(HOOK_RUN_DIR, e->d_name, &rec) ||
		    !record_live(&rec))
			continue;
		key = rec.cgid;
		if (bpf_map_lookup_elem(c->fd[M_PRIO_HOOK], &key, &v) ||
		    (max_priority >= 0 && v.priority > max_priority))
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Records (and their rules) whose cgroup is gone; @skip: the current id.
 * Called with the records' lock held, so a record read here is not
 * rewritten by a concurrent create before it is removed.
 */
static int gc(struct ctl *c, const char *skip)
{
	DIR *d = opendir(hk->run_dir);
	struct record rec;
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || (skip && !strcmp(e->d_name, skip)) ||
		    record_read(hk->run_dir, e->d_name, &rec) || record_live(&rec))
			continue;
		if (rule_undo(c, e->d_name, &rec)) {
			hlog(LOG_WARNING, "container %.12s: cannot remove the stale rule on cgroup id %lu: %s",
			     e->d_name, (unsigned long)rec.cgid, strerror(errno));
			continue;
		}
		record_remove(hk->run_dir, e->d_name);
		hlog(LOG_NOTICE, "container %.12s: its cgroup %s is gone without a poststop; its rule is removed",
		     e->d_name, rec.path);
		n++;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * S4-6: after gpreempt was (re)loaded its maps are empty: write every live
 * record's rule again, lowered to today's container max_priority, remove
 * the records of cgroups that are gone, and container rules no record names.
 * Return: the number of rules written.
 */
static int resync(struct ctl *c, int max_priority)
{
	DIR *d = opendir(hk->run_dir);
	__u64 key, next, *prev = NULL, stale[1024];
	struct gp_prio_override v;
	struct record rec;
	struct dirent *e;
	int n = 0, ns = 0, i;

	gc(c, NULL);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || record_read(hk->run_dir, e->d_name, &rec) ||
		    !record_live(&rec))
			continue;
		key = rec.cgid;
		v.priority = rec.prio < max_priority ? rec.prio : max_priority;
		if (bpf_map_update_elem(c->fd[M_PRIO_HOOK], &key, &v, BPF_ANY)) {
			hlog(LOG_WARNING, "container %.12s: rule on %s not restored: %s", e->d_name,
			     rec.path, errno == E2BIG ? "too many container rules (the map is full)" :
			     strerror(errno));
			continue;
		}
		hlog(LOG_INFO, "container %.12s: cgroup rule %s priority %d restored", e->d_name,
		     rec.path, v.priority);
		n++;
	}
	if (d)
		closedir(d);
	while (ns < 1024 && !bpf_map_get_next_key(c->fd[M_PRIO_HOOK], prev, &next)) {
		key = next;
		prev = &key;
		if (!record_find(hk->run_dir, key, NULL, 0, NULL, 0))
			stale[ns++] = key;
	}
	for (i = 0; i < ns; i++)
		bpf_map_delete_elem(c->fd[M_PRIO_HOOK], &stale[i]);
	return n;
}

/* --- the container's cgroup ------------------------------------------------ */

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/*
 * The container's cgroup, absolute in this mount namespace: from its pid, or
 * from the NRI cgroupsPath.  Return: 0, or -1 with @why set.
 */
static int container_cgroup(const struct hook_req *r, char *abs, size_t len, char *why,
			    size_t wlen)
{
	char root[PATH_MAX], text[4096], rel[PATH_MAX], self[PATH_MAX], p[PATH_MAX];

	if (cgroup_root(root, sizeof(root))) {
		snprintf(why, wlen, "no cgroup2 file system is mounted");
		return -1;
	}
	if (r->pid > 0) {
		snprintf(p, sizeof(p), "/proc/%d/cgroup", r->pid);
		if (read_text(p, text, sizeof(text)) || hook_cgroup_line(text, rel, sizeof(rel))) {
			snprintf(why, wlen, "cannot read the cgroup v2 of pid %d: %s", r->pid,
				 errno ? strerror(errno) : "no 0:: line");
			return -1;
		}
		/* Not a cgroup of its own: the rule would cover its parent's processes. */
		if (strcmp(rel, "/") && !read_text("/proc/self/cgroup", text, sizeof(text)) &&
		    !hook_cgroup_line(text, self, sizeof(self)) && !strcmp(self, rel)) {
			snprintf(why, wlen, "pid %d runs in the runtime's own cgroup %s, not one of its own",
				 r->pid, rel);
			return -1;
		}
	} else if (r->cgroups_path[0]) {
		if (hook_cgroups_path(r->cgroups_path, rel, sizeof(rel))) {
			snprintf(why, wlen, "cannot read cgroupsPath \"%s\"", r->cgroups_path);
			return -1;
		}
	} else {
		snprintf(why, wlen, "no pid and no cgroupsPath");
		return -1;
	}
	if (!strcmp(rel, "/") || !rel[0]) {
		snprintf(why, wlen, "it runs in the root cgroup");
		return -1;
	}
	if ((size_t)snprintf(abs, len, "%s%s", root, rel) >= len) {
		snprintf(why, wlen, "cgroup path too long");
		return -1;
	}
	return 0;
}

/* --- create / poststop ------------------------------------------------------- */

/*
 * The annotation and the "container" line: 0 with @prio the priority to set
 * (lowered to max_priority), or the exit status of a refusal.
 */
static int hook_check(const struct hook_req *r, int *prio)
{
	char why[PATH_MAX + 128], msg[256];
	struct hook_conf conf;
	FILE *f;
	int ret;

	if (!r->prio_ok) {
		hook_refusal(r->prio_text, msg, sizeof(msg));
		snprintf(hk->nri_error, sizeof(hk->nri_error), "%s", msg);
		hlog(LOG_ERR, "container %.12s: %s", r->id, msg);
		return EX_RANGE;
	}
	f = fopen(hk->conf_file, "re");
	if (!f && errno != ENOENT) {
		snprintf(hk->nri_error, sizeof(hk->nri_error), "cannot read %s: %s",
			 hk->conf_file, strerror(errno));
		hlog(LOG_ERR, "container %.12s: %s", r->id, hk->nri_error);
		return EX_ERR;
	}
	ret = hook_conf_read(f, hk->conf_file, &conf, why, sizeof(why));
	if (f)
		fclose(f);
	if (ret) {
		snprintf(hk->nri_error, sizeof(hk->nri_error), "%s", why);
		hlog(LOG_ERR, "container %.12s: %s", r->id, why);
		return EX_ERR;
	}
	*prio = r->prio;
	if (*prio > conf.max_priority && strcmp(r->state, "check")) {	/* said once, at create */
		hlog(LOG_WARNING, "container %.12s: %s=%s lowered to %d, the highest %s grants (container max_priority%s)",
		     r->id, HOOK_ANNOTATION, r->prio_text, conf.max_priority, hk->conf_file,
		     f ? "" : ", default: the file does not exist");
	}
	if (*prio > conf.max_priority)
		*prio = conf.max_priority;
	return EX_OK;
}

/*
 * gpreempt is not loaded (booting before its unit, a DaemonSet rebuilding
 * it): the container starts without a rule, but its record is written, so
 * the "hook resync" that follows every load (gpreempt.service, the
 * DaemonSet) sets the rule then.  Its priority was capped by the config's
 * max_priority above, and resync caps it again by the config of that time.
 */
static int hook_record_only(const struct hook_req *r, const struct record *rec)
{
	if (records_lock(hk->run_dir, true)) {
		hlog(LOG_WARNING, "container %.12s: gpreempt is not loaded and %s/.lock cannot be locked (%s): no rule, even after gpreempt loads",
		     r->id, hk->run_dir, strerror(errno));
		return EX_OK;
	}
	if (record_write(hk->run_dir, r->id, rec)) {
		hlog(LOG_WARNING, "container %.12s: gpreempt is not loaded and %s/%s cannot be written (%s): no rule, even after gpreempt loads",
		     r->id, hk->run_dir, r->id, strerror(errno));
		return EX_OK;
	}
	hlog(LOG_WARNING, "container %.12s: gpreempt is not loaded: cgroup rule %s priority %d recorded, set by gpreemptctl hook resync when it is",
	     r->id, rec->path, rec->prio);
	return EX_OK;
}

static int hook_create(const struct hook_req *r)
{
	char why[PATH_MAX + 128], path[PATH_MAX], root[PATH_MAX];
	struct record rec = { 0 }, old;
	struct gp_prio_override v;
	struct ctl c = { 0 };
	__u64 key;
	int ret;

	ret = hook_check(r, &rec.prio);
	if (ret)
		return ret;
	if (container_cgroup(r, path, sizeof(path), why, sizeof(why))) {
		hlog(LOG_WARNING, "container %.12s: no rule set: %s", r->id, why);
		return EX_OK;
	}
	if (cgroup_id_of(path, &rec.cgid, rec.path, sizeof(rec.path))) {
		hlog(LOG_WARNING, "container %.12s: no rule set: no cgroup %s", r->id, path);
		return EX_OK;
	}
	/* S4-9: whatever the path said, never a rule over the whole node */
	if (cgroup_root(root, sizeof(root)) || !strcmp(rec.path, root)) {
		hlog(LOG_WARNING, "container %.12s: no rule set: %s is the root cgroup", r->id,
		     path);
		return EX_OK;
	}
	ret = maps_open(&c);
	if (ret == EX_NOTLOADED)
		return hook_record_only(r, &rec);
	if (ret) {
		hlog(LOG_WARNING, "container %.12s: no rule set on %s: %s", r->id, rec.path,
		     ret == EX_PERM ? "not permitted (the hook needs CAP_SYS_ADMIN)" :
		     "cannot open gpreempt's maps");
		return EX_OK;
	}
	if (records_lock(hk->run_dir, true)) {
		hlog(LOG_WARNING, "container %.12s: no rule set: cannot lock %s/.lock: %s", r->id,
		     hk->run_dir, strerror(errno));
		return EX_OK;
	}
	gc(&c, r->id);
	key = rec.cgid;
	if (!record_read(hk->run_dir, r->id, &old) && old.cgid != rec.cgid &&
	    rule_undo(&c, r->id, &old)) {	/* restarted, poststop missed */
		hlog(LOG_WARNING, "container %.12s: cannot remove its earlier rule on cgroup id %lu: %s",
		     r->id, (unsigned long)old.cgid, strerror(errno));
	}
	if (record_write(hk->run_dir, r->id, &rec)) {
		hlog(LOG_WARNING, "container %.12s: no rule set: cannot write %s/%s: %s", r->id,
		     hk->run_dir, r->id, strerror(errno));
		return EX_OK;
	}
	v.priority = rec.prio;
	if (bpf_map_update_elem(c.fd[M_PRIO_HOOK], &key, &v, BPF_ANY)) {
		hlog(LOG_WARNING, "container %.12s: no rule set on %s: %s", r->id, rec.path,
		     errno == E2BIG ? "too many container rules (the map is full)" : strerror(errno));
		record_remove(hk->run_dir, r->id);
		return EX_OK;
	}
	if (rules_bump(&c))
		hlog(LOG_WARNING, "container %.12s: rule set, but gp_config.rules_gen not bumped: seen within %d ms",
		     r->id, GP_RULES_RESCAN_MS);
	hlog(LOG_INFO, "container %.12s: cgroup rule %s priority %d (%s=%s), cgroup id %lu, in %.2f ms",
	     r->id, rec.path, rec.prio, HOOK_ANNOTATION, r->prio_text, (unsigned long)rec.cgid,
	     elapsed_ms());
	return EX_OK;
}

static int hook_poststop(const struct hook_req *r)
{
	struct record rec;
	struct ctl c = { 0 };
	int ret;

	if (records_lock(hk->run_dir, false)) {
		hlog(LOG_ERR, "container %.12s: cannot lock %s/.lock: %s", r->id, hk->run_dir,
		     strerror(errno));
		return EX_ERR;
	}
	if (record_read(hk->run_dir, r->id, &rec))
		return EX_OK;	/* nothing was set for it */
	ret = maps_open(&c);
	if (ret) {
		hlog(LOG_WARNING, "container %.12s: rule on %s not removed: %s; record removed", r->id,
		     rec.path, ret == EX_NOTLOADED ? "gpreempt is not loaded (its rules went with it)" :
		     "cannot open gpreempt's maps");
		record_remove(hk->run_dir, r->id);
		return EX_OK;
	}
	if (rule_undo(&c, r->id, &rec)) {
		hlog(LOG_ERR, "container %.12s: cannot remove the rule on cgroup id %lu: %s", r->id,
		     (unsigned long)rec.cgid, strerror(errno));
		return EX_ERR;
	}
	record_remove(hk->run_dir, r->id);
	rules_bump(&c);
	hlog(LOG_INFO, "container %.12s: cgroup rule %s removed, in %.2f ms", r->id, rec.path,
	     elapsed_ms());
	return EX_OK;
}

/* hook gc, hook resync: under the records' lock. */
static int hook_maintain(bool sync)
{
	struct hook_conf conf;
	struct ctl c = { 0 };
	char why[PATH_MAX + 128];
	FILE *f = NULL;
	int ret, n;

	if (sync) {
		f = fopen(hk->conf_file, "re");
		if (!f && errno != ENOENT)
			return err(EX_ERR, "cannot read %s: %s", hk->conf_file, strerror(errno));
		ret = hook_conf_read(f, hk->conf_file, &conf, why, sizeof(why));
		if (f)
			fclose(f);
		if (ret)
			return err(EX_ERR, "%s: no container rule restored", why);
	}
	ret = maps_open(&c);
	if (ret)
		return ret;
	if (records_lock(hk->run_dir, false))
		return err(EX_ERR, "cannot lock %s/.lock: %s", hk->run_dir, strerror(errno));
	if (!sync) {
		n = gc(&c, NULL);
		if (n)
			rules_bump(&c);
		printf("%d stale container rule%s removed\n", n, n == 1 ? "" : "s");
		return EX_OK;
	}
	n = resync(&c, conf.max_priority);
	if (rules_bump(&c))
		return err(EX_ERR, "cannot bump gp_config.rules_gen: %s", strerror(errno));
	printf("%d container rule%s restored\n", n, n == 1 ? "" : "s");
	return EX_OK;
}

/* NRI v0.1: the result on stdout; a non-empty "error" refuses the container. */
static void nri_result(const struct hook_req *r, int ret)
{
	struct json_object *o = json_object_new_object(), *md = json_object_new_object();
	struct record rec;

	json_object_object_add(o, "plugin", json_object_new_string(hk->plugin));
	json_object_object_add(o, "version", json_object_new_string("0.1"));
	json_object_object_add(o, "error", json_object_new_string(ret ? hk->nri_error : ""));
	if (r && !ret && !strcmp(r->state, "create") &&
	    !record_read(hk->run_dir, r->id, &rec)) {
		char prio[8];

		snprintf(prio, sizeof(prio), "%d", rec.prio);
		json_object_object_add(md, "gpreempt.io/cgroup", json_object_new_string(rec.path));
		json_object_object_add(md, "gpreempt.io/priority", json_object_new_string(prio));
	}
	json_object_object_add(o, "metadata", md);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void hook_usage(FILE *f)
{
	fprintf(f,
		"usage: gpreemptctl hook [--config FILE] [--run-dir DIR] [--log FILE] create|poststop|nri|gc|resync\n"
		"       gpreemptctl invoke          (NRI v0.1 plugin: the same as hook nri)\n"
		"  create    OCI createRuntime hook: the state on stdin; %s becomes\n"
		"            a cgroup rule on the container's cgroup\n"
		"  poststop  OCI poststop hook: the rule create set is removed\n"
		"  nri       NRI v0.1 request on stdin (state create or delete), result on stdout;\n"
		"            state check: only the annotation and the container line (gpreempt-nri)\n"
		"  gc        remove the rules of containers whose cgroup is gone\n"
		"  resync    write every running container's rule again (after gpreempt\n"
		"            was loaded: its maps start empty), lowered to max_priority\n"
		"  --config FILE   the 'container max_priority=PRIO' line (default %s)\n"
		"  --run-dir DIR   where what was set is recorded (default %s)\n"
		"  --log FILE      append one line per event (syslog always)\n",
		HOOK_ANNOTATION, GP_CONF, HOOK_RUN_DIR);
}

/**
 * cmd_hook() - hook [OPTIONS] create|poststop|nri|gc
 * @argc: from "hook" (or "invoke") on
 * @argv: arguments
 *
 * Return: an exit status (see the top of this file).
 */
int cmd_hook(int argc, char **argv)
{
	static struct hook h = { .conf_file = GP_CONF, .run_dir = HOOK_RUN_DIR };
	struct hook_req r;
	const char *mode;
	char why[256], *in;
	size_t len;
	int a = 1, ret, prio;

	hk = &h;
	clock_gettime(CLOCK_MONOTONIC, &h.t0);
	h.plugin = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	if (!strcmp(argv[0], "invoke")) {
		mode = "nri";
	} else {
		for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
			if (!strcmp(argv[a], "--config"))
				h.conf_file = argv[a + 1];
			else if (!strcmp(argv[a], "--run-dir"))
				h.run_dir = argv[a + 1];
			else if (!strcmp(argv[a], "--log"))
				h.log_file = argv[a + 1];
			else
				break;
		}
		if (a < argc && (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h"))) {
			hook_usage(stdout);
			return EX_OK;
		}
		if (a + 1 != argc) {
			hook_usage(stderr);
			return EX_USAGE;
		}
		mode = argv[a];
	}
	h.nri = !strcmp(mode, "nri");
	if (strcmp(mode, "create") && strcmp(mode, "poststop") && !h.nri && strcmp(mode, "gc") &&
	    strcmp(mode, "resync")) {
		hook_usage(stderr);
		return err(EX_USAGE, "unknown hook '%s': expected create, poststop, nri, gc or resync",
			   mode);
	}
	openlog("gpreempt-hook", LOG_PID, LOG_DAEMON);
	if (!strcmp(mode, "gc") || !strcmp(mode, "resync"))
		return hook_maintain(!strcmp(mode, "resync"));
	in = read_all(STDIN_FILENO, &len);
	if (!in) {
		snprintf(h.nri_error, sizeof(h.nri_error), "cannot read stdin: %s", strerror(errno));
		hlog(LOG_ERR, "%s", h.nri_error);
		if (h.nri)
			nri_result(NULL, EX_USAGE);
		return EX_USAGE;
	}
	ret = hook_parse(in, len, h.nri, &r, why, sizeof(why));
	free(in);
	if (ret) {
		snprintf(h.nri_error, sizeof(h.nri_error), "cannot read the %s on stdin: %s",
			 h.nri ? "NRI request" : "OCI state", why);
		hlog(LOG_ERR, "%s", h.nri_error);
		if (h.nri)
			nri_result(NULL, EX_USAGE);
		return EX_USAGE;
	}
	if (h.nri) {
		ret = EX_OK;
		if (!strcmp(r.state, "create") && r.has_prio && strcmp(r.id, r.sandbox_id))
			ret = hook_create(&r);
		else if (!strcmp(r.state, "check") && r.has_prio)
			ret = hook_check(&r, &prio);
		else if (!strcmp(r.state, "delete"))
			ret = hook_poststop(&r);
		nri_result(&r, ret);
		return ret;
	}
	if (!strcmp(mode, "poststop"))
		return hook_poststop(&r);
	return r.has_prio ? hook_create(&r) : EX_OK;
}
