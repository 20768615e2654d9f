// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rules.c - set/unset rules, park/unpark by hand, config KEY=VALUE, apply FILE.
 *
 * Every write is followed by a bump of gp_config.rules_gen, so the module
 * re-resolves running processes on its next tick.  Input is validated in
 * full before anything is written: bad input changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "gpreemptctl.h"

struct target {
	int map;
	char path[PATH_MAX];	/* cgroup: the absolute path, "" for id:N */
	union {
		__u32 pid;
		__u64 cgid;
		struct gp_comm comm;
		struct gp_queue_key queue;
	} key;
	uint64_t start;	/* pid: the process's start (struct gp_prio_pid) */
};

static int parse_target(const char *kind, const char *t, struct target *tg)
{
	memset(tg, 0, sizeof(*tg));
	if (!strcmp(kind, "pid")) {
		tg->map = M_PRIO;
		return parse_pid(t, &tg->key.pid) ?: proc_start(tg->key.pid, &tg->start);
	}
	if (!strcmp(kind, "cgroup")) {
		char *end;

		tg->map = M_PRIO_CGROUP;
		if (!strncmp(t, "id:", 3)) {	/* a rule whose cgroup is gone */
			tg->key.cgid = strtoull(t + 3, &end, 10);
			if (!t[3] || *end)
				return err(EX_USAGE, "bad cgroup id '%s'", t);
			return EX_OK;
		}
		return cgroup_id_of(t, (uint64_t *)&tg->key.cgid, tg->path, sizeof(tg->path));
	}
	if (!strcmp(kind, "comm")) {
		tg->map = M_PRIO_COMM;
		if (!*t || strlen(t) >= GP_COMM_LEN)
			return err(EX_RANGE, "comm '%s' out of range: 1..%d characters", t,
				   GP_COMM_LEN - 1);
		strncpy(tg->key.comm.comm, t, GP_COMM_LEN - 1);
		return EX_OK;
	}
	if (!strcmp(kind, "queue")) {
		tg->map = M_QUEUE_CTL;
		return parse_queue(t, &tg->key.queue);
	}
	return err(EX_USAGE, "unknown rule kind '%s': expected pid, cgroup, comm or queue", kind);
}

static int write_rule(struct ctl *c, const struct target *tg, int prio)
{
	int fd = c->fd[tg->map], ret;

	if (tg->map == M_QUEUE_CTL) {
		struct gp_queue_ctl v = { .priority = -1 };

		bpf_map_lookup_elem(fd, &tg->key, &v);
		v.priority = prio;
		if (v.priority < 0 && !v.hold)
			ret = bpf_map_delete_elem(fd, &tg->key);
		else
			ret = bpf_map_update_elem(fd, &tg->key, &v, BPF_ANY);
	} else if (prio < 0) {
		ret = bpf_map_delete_elem(fd, &tg->key);
	} else if (tg->map == M_PRIO) {
		struct gp_prio_pid v = { .priority = prio, .start = tg->start };

		ret = bpf_map_update_elem(fd, &tg->key, &v, BPF_ANY);
	} else {
		struct gp_prio_override v = { .priority = prio };

		ret = bpf_map_update_elem(fd, &tg->key, &v, BPF_ANY);
	}
	if (!ret && tg->map == M_PRIO_CGROUP && prio < 0)
		rule_path_drop(tg->key.cgid);
	else if (!ret && tg->map == M_PRIO_CGROUP && tg->path[0])
		rule_path_save(tg->key.cgid, tg->path);
	if (ret && errno == ENOENT)
		return err(EX_NOTARGET, "no such rule");
	if (ret && errno == E2BIG)
		return err(EX_RANGE, "too many rules of this kind (the map is full)");
	if (ret)
		return err(errno == EPERM ? EX_PERM : EX_ERR, "cannot write the rule: %s",
			   strerror(errno));
	return EX_OK;
}

/*
 * A comm rule matches a name any user can take, so the module lowers it to
 * user_max_priority (REVIEW-S3 F4): say so when the rule asks for more.
 */
static void warn_user_cap(int prio)
{
	unsigned int cap;
	FILE *f = fopen("/sys/module/gpreempt/parameters/user_max_priority", "r");

	if (!f)
		return;
	if (fscanf(f, "%u", &cap) == 1 && (unsigned int)prio > cap)
		fprintf(stderr,
			"gpreemptctl: warning: any user can name a process; this comm rule gives at most %u (user_max_priority), not %d: use a cgroup rule for latency-critical work\n",
			cap, prio);
	fclose(f);
}

/** cmd_set() - set KIND TARGET PRIO */
int cmd_set(struct ctl *c, int argc, char **argv)
{
	struct target tg;
	int prio, ret;

	if (argc != 4)
		return err(EX_USAGE, "usage: set pid|cgroup|comm|queue TARGET PRIO");
	ret = parse_target(argv[1], argv[2], &tg);
	if (!ret)
		ret = parse_prio(argv[3], &prio);
	if (!ret)
		ret = write_rule(c, &tg, prio);
	if (!ret && !strcmp(argv[1], "comm"))
		warn_user_cap(prio);
	if (!ret && tg.map == M_PRIO_CGROUP && tg.path[0])
		cgroup_unit_warn(tg.path);
	return ret ?: rules_bump(c);
}

/** cmd_unset() - unset KIND TARGET */
int cmd_unset(struct ctl *c, int argc, char **argv)
{
	struct target tg;
	int ret;

	if (argc != 3)
		return err(EX_USAGE, "usage: unset pid|cgroup|comm|queue TARGET");
	ret = parse_target(argv[1], argv[2], &tg);
	if (!ret)
		ret = write_rule(c, &tg, -1);
	return ret ?: rules_bump(c);
}

/** cmd_park() - park|unpark queue PID:QID (the hold flag of gp_queue_ctl) */
int cmd_park(struct ctl *c, int argc, char **argv, bool park)
{
	struct gp_queue_ctl v = { .priority = -1 };
	struct target tg;
	int fd = c->fd[M_QUEUE_CTL], ret;

	if (argc != 3 || strcmp(argv[1], "queue"))
		return err(EX_USAGE, "usage: %s queue PID:QID", park ? "park" : "unpark");
	ret = parse_target("queue", argv[2], &tg);
	if (ret)
		return ret;
	if (park) {
		struct gp_queue_info qi;

		if (bpf_map_lookup_elem(c->fd[M_QUEUES], &tg.key.queue, &qi))
			return err(EX_NOTARGET, "no such queue: %s is not in gp_queues", argv[2]);
	}
	bpf_map_lookup_elem(fd, &tg.key, &v);
	v.hold = park;
	if (!park && v.priority < 0)
		ret = bpf_map_delete_elem(fd, &tg.key);
	else
		ret = bpf_map_update_elem(fd, &tg.key, &v, BPF_ANY);
	if (ret && !(errno == ENOENT && !park))
		return err(errno == EPERM ? EX_PERM : EX_ERR, "cannot write gp_queue_ctl: %s",
			   strerror(errno));
	return rules_bump(c);
}

static int parse_u32(const char *k, const char *v, __u32 lo, __u32 hi, __u32 *out)
{
	char *end;
	unsigned long x = strtoul(v, &end, 10);

	if (!*v || *end || *v == '-' || (x && (x < lo || x > hi)))
		return err(EX_RANGE, "%s=%s out of range: 0 (module parameter) or %u..%u", k, v,
			   lo, hi);
	*out = x;
	return EX_OK;
}

static int parse_onoff(const char *k, const char *v, __u32 *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcmp(v, "off"))
		*out = 2;
	else if (!strcmp(v, "default") || !strcmp(v, "0"))
		*out = 0;
	else
		return err(EX_RANGE, "%s=%s out of range: on, off or default", k, v);
	return EX_OK;
}

/**
 * config_set_kv() - apply one KEY=VALUE to a gp_config value
 * @cfg: value to change
 * @kv: "key=value"
 *
 * Return: EX_OK, EX_USAGE or EX_RANGE (printed).
 */
int config_set_kv(struct gp_config *cfg, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char k[32];
	const char *v;

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(k))
		return err(EX_USAGE, "bad setting '%s': expected KEY=VALUE", kv);
	memcpy(k, kv, eq - kv);
	k[eq - kv] = '\0';
	v = eq + 1;
	if (!strcmp(k, "enable"))
		return parse_onoff(k, v, &cfg->enable);
	if (!strcmp(k, "env"))
		return parse_onoff(k, v, &cfg->env);
	if (!strcmp(k, "tick_us"))
		return parse_u32(k, v, 10, 100000, &cfg->tick_us);
	if (!strcmp(k, "hysteresis_us"))
		return parse_u32(k, v, 1, 10000000, &cfg->hysteresis_us);
	if (!strcmp(k, "max_suspend_us"))
		return parse_u32(k, v, 1, 600000000, &cfg->max_suspend_us);
	if (!strcmp(k, "min_slice_us"))
		return parse_u32(k, v, 1, 60000000, &cfg->min_slice_us);
	if (!strcmp(k, "env_max_priority")) {
		int p;

		if (!strcmp(v, "default") || !strcmp(v, "0")) {
			cfg->env_max_priority = 0;
			return EX_OK;
		}
		if (parse_prio(v, &p))
			return EX_RANGE;
		cfg->env_max_priority = p;
		return EX_OK;
	}
	return err(EX_USAGE, "unknown setting '%s': expected enable, tick_us, hysteresis_us, max_suspend_us, min_slice_us, env or env_max_priority",
		   k);
}

#define APPLY_MAX 1024

struct want {
	int map;
	__u64 cgid;
	char path[PATH_MAX];
	struct gp_comm comm;
	int prio;
	int line;	/* in the file */
};

/* A setting of a config or container line, and the line that set it. */
struct setting {
	char key[32];
	int line;
};

#define APPLY_TOKENS 64

/*
 * @kv's key set on an earlier line (or earlier on this one)?  Refused: which
 * of two values wins would be the file's order, not the administrator's.
 */
static int dup_setting(struct setting *s, int *ns, const char *kind, const char *kv, int line,
		       const char *file)
{
	size_t len = strcspn(kv, "=");
	int i;

	for (i = 0; i < *ns; i++)
		if (strlen(s[i].key) == len + strlen(kind) + 1 &&
		    !strncmp(s[i].key, kind, strlen(kind)) &&
		    !strncmp(s[i].key + strlen(kind) + 1, kv, len))
			return err(EX_USAGE, "%s %.*s is set twice (also at %s:%d)", kind, (int)len,
				   kv, file, s[i].line);
	if (*ns < APPLY_TOKENS * 4 && len + strlen(kind) + 1 < sizeof(s[0].key)) {
		snprintf(s[*ns].key, sizeof(s[0].key), "%s %.*s", kind, (int)len, kv);
		s[*ns].line = line;
		(*ns)++;
	}
	return EX_OK;
}

/* A second rule for the same cgroup or comm as @w[0..n-1]?  Refused, both lines named. */
static int dup_rule(const struct want *w, int n, const struct target *tg, const char *file)
{
	int i;

	for (i = 0; i < n; i++) {
		if (w[i].map != tg->map)
			continue;
		if (tg->map == M_PRIO_COMM && !memcmp(&w[i].comm, &tg->key.comm, sizeof(w[i].comm)))
			return err(EX_USAGE, "a second rule for comm %.*s (the first at %s:%d)",
				   GP_COMM_LEN, w[i].comm.comm, file, w[i].line);
		if (tg->map != M_PRIO_COMM && w[i].cgid == tg->key.cgid)
			return err(EX_USAGE, "a second rule for cgroup %s (the first at %s:%d)",
				   w[i].path, file, w[i].line);
	}
	return EX_OK;
}

static bool wanted(const struct want *w, int n, int map, const void *key)
{
	int i;

	for (i = 0; i < n; i++) {
		if (w[i].map != map)
			continue;
		if (map == M_PRIO_CGROUP && w[i].cgid == *(const __u64 *)key)
			return true;
		if (map == M_PRIO_COMM && !memcmp(&w[i].comm, key, sizeof(w[i].comm)))
			return true;
	}
	return false;
}

/* Delete every key of @map that the file does not name. */
static int prune(struct ctl *c, int map, size_t ksz, const struct want *w, int n)
{
	char key[GP_COMM_LEN], next[GP_COMM_LEN], keys[APPLY_MAX][GP_COMM_LEN];
	void *prev = NULL;
	int i, k = 0;

	while (k < APPLY_MAX && !bpf_map_get_next_key(c->fd[map], prev, next)) {
		memcpy(key, next, ksz);
		prev = key;
		if (!wanted(w, n, map, key))
			memcpy(keys[k++], key, ksz);
	}
	for (i = 0; i < k; i++) {
		if (bpf_map_delete_elem(c->fd[map], keys[i]) && errno != ENOENT)
			return err(EX_ERR, "cannot remove a rule: %s", strerror(errno));
		if (map == M_PRIO_CGROUP)
			rule_path_drop(*(__u64 *)keys[i]);
	}
	return EX_OK;
}

/**
 * pending_save() - remember the rules apply skipped, or that none were
 * @file: the file they came from
 * @p: the rules
 * @np: how many
 *
 * Best effort, like the rule paths: written to a temporary name and renamed,
 * so "list" never reads half a file.
 */
void pending_save(const char *file, const struct pending *p, int np)
{
	char tmp[sizeof(GP_PENDING_FILE) + 16];
	FILE *f;
	int i;

	if (!np) {
		unlink(GP_PENDING_FILE);
		return;
	}
	if (mkdir("/run/gpreempt", 0755) && errno != EEXIST)
		return;
	snprintf(tmp, sizeof(tmp), "%s.%d", GP_PENDING_FILE, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "# gpreemptctl apply %s: rules whose cgroup did not exist yet\n", file);
	for (i = 0; i < np; i++)
		fprintf(f, "cgroup %s %d\n", p[i].path, p[i].prio);
	if (fclose(f) || rename(tmp, GP_PENDING_FILE))
		unlink(tmp);
}

/**
 * pending_next() - the next pending rule of GP_PENDING_FILE
 * @f: the open file (NULL: none)
 * @p: the rule
 *
 * Return: true when @p holds one.
 */
bool pending_next(FILE *f, struct pending *p)
{
	char line[PATH_MAX + 64], fmt[32];

	snprintf(fmt, sizeof(fmt), "cgroup %%%ds %%d", PATH_MAX - 1);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, p->path, &p->prio) == 2)
			return true;
	return false;
}

/**
 * cmd_apply() - make the cgroup/comm rules and the knobs match a file
 *
 * The file is parsed and checked in full first; nothing is written when a
 * line is bad.  A cgroup that does not exist (yet) is not a bad line: its
 * rule is skipped with a warning and the rest is applied (with --strict it
 * is, and nothing is written; exit EX_NOTARGET).  Skipped rules are kept in
 * GP_PENDING_FILE (list shows them) until an apply finds none; --if-pending
 * applies only while that file exists (the retry timer's call: kubelet's
 * and podman's slices appear after boot).  Rules of the two
 * persistent kinds that the file does not name are removed; gp_config keys
 * it does not name go back to 0 (module parameter).  pid and queue rules,
 * and containers' rules (gp_prio_hook), are left alone.  The maps are
 * opened (maps_open()) only after the file passed; with @c NULL (apply
 * --check) it stops there, without the module.
 */
int cmd_apply(struct ctl *c, int argc, char **argv)
{
	const char *file = "/etc/gpreempt.conf";
	static struct want w[APPLY_MAX];
	static struct pending pend[APPLY_MAX];
	static struct setting set[APPLY_TOKENS * 4];
	struct gp_config cfg, old;
	char line[PATH_MAX + 64], where[PATH_MAX + 16];
	int n = 0, lineno = 0, ret = EX_OK, i, skipped = 0, nset = 0;
	bool strict = false, if_pending = false;
	FILE *f;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--strict"))
			strict = true;
		else if (!strcmp(argv[i], "--if-pending"))
			if_pending = true;
		else
			return err(EX_USAGE, "apply: unknown option %s", argv[i]);
	}
	if (i < argc)
		file = argv[i++];
	if (i < argc)
		return err(EX_USAGE, "usage: apply [--strict] [--if-pending] [FILE]");
	/* A retry timer's call: nothing was left pending, nothing to do. */
	if (c && if_pending && access(GP_PENDING_FILE, F_OK))
		return EX_OK;
	f = fopen(file, "r");
	if (!f)
		return err(EX_NOTARGET, "cannot open %s: %s", file, strerror(errno));
	memset(&cfg, 0, sizeof(cfg));
	while (fgets(line, sizeof(line), f)) {
		char *tok[APPLY_TOKENS], *save = NULL, *s = line;
		int nt = 0;
		struct target tg;

		lineno++;
		/* Every message of this line names it, in JSON (-j) too. */
		snprintf(where, sizeof(where), "%s:%d", file, lineno);
		err_where = where;
		line[strcspn(line, "#\n")] = '\0';
		while (nt < APPLY_TOKENS && (tok[nt] = strtok_r(s, " \t\r", &save))) {
			s = NULL;
			nt++;
		}
		if (!nt)
			continue;
		if (nt == APPLY_TOKENS && strtok_r(s, " \t\r", &save)) {
			ret = err(EX_USAGE, "more than %d settings on one line", APPLY_TOKENS - 1);
		} else if (!strcmp(tok[0], "config") && nt >= 2) {
			for (i = 1; i < nt && !ret; i++) {
				ret = config_set_kv(&cfg, tok[i]);
				if (!ret)
					ret = dup_setting(set, &nset, "config", tok[i], lineno, file);
			}
		} else if (!strcmp(tok[0], "container") && nt >= 2) {
			/* read by gpreemptctl hook; checked here */
			struct hook_conf hc;
			char why[256];

			for (i = 1; i < nt && !ret; i++) {
				if (hook_conf_kv(tok[i], &hc, why, sizeof(why)))
					ret = err(EX_RANGE, "%s", why);
				if (!ret)
					ret = dup_setting(set, &nset, "container", tok[i], lineno, file);
			}
		} else if ((!strcmp(tok[0], "cgroup") || !strcmp(tok[0], "comm")) && nt == 3) {
			int prio;

			ret = parse_prio(tok[2], &prio);
			if (!ret && !strict && !strcmp(tok[0], "cgroup") && cgroup_missing(tok[1])) {
				fprintf(stderr, "%s: warning: %s:%d: cgroup %s does not exist: rule pending (applied by the next apply once it does)\n",
					prog, file, lineno, tok[1]);
				if (skipped < APPLY_MAX) {
					snprintf(pend[skipped].path, sizeof(pend[skipped].path), "%s",
						 tok[1]);
					pend[skipped].prio = prio;
				}
				skipped++;
				continue;
			}
			if (!ret)
				ret = parse_target(tok[0], tok[1], &tg);
			if (!ret)
				ret = dup_rule(w, n, &tg, file);
			if (!ret && n == APPLY_MAX)
				ret = err(EX_RANGE, "more than %d rules", APPLY_MAX);
			if (!ret) {
				w[n].prio = prio;
				w[n].line = lineno;
				w[n].map = tg.map;
				w[n].cgid = tg.key.cgid;
				snprintf(w[n].path, sizeof(w[n].path), "%s", tg.path);
				if (tg.map == M_PRIO_COMM)
					w[n].comm = tg.key.comm;
				n++;
			}
		} else {
			ret = err(EX_USAGE, "expected 'cgroup PATH PRIO', 'comm NAME PRIO', 'config KEY=VALUE' or 'container max_priority=PRIO'");
		}
		if (ret) {
			err_where = NULL;
			if (!err_json)
				fprintf(stderr, "%s: %s:%d: line not applied; nothing changed\n", prog,
					file, lineno);
			fclose(f);
			return ret;
		}
	}
	err_where = NULL;
	fclose(f);
	/* The file is checked before the module is looked for; --check stops here. */
	if (!c)
		return EX_OK;
	ret = maps_open(c);
	if (ret)
		return ret;
	if (config_read(c, &old))
		return err(EX_ERR, "cannot read gp_config: %s", strerror(errno));
	cfg.rules_gen = old.rules_gen + 1;
	for (i = 0; i < n && !ret; i++) {
		struct target tg = { .map = w[i].map };

		if (tg.map == M_PRIO_CGROUP) {
			tg.key.cgid = w[i].cgid;
			snprintf(tg.path, sizeof(tg.path), "%s", w[i].path);
			cgroup_unit_warn(tg.path);
		} else {
			tg.key.comm = w[i].comm;
		}
		ret = write_rule(c, &tg, w[i].prio);
	}
	if (!ret)
		ret = prune(c, M_PRIO_CGROUP, sizeof(__u64), w, n);
	if (!ret)
		ret = prune(c, M_PRIO_COMM, sizeof(struct gp_comm), w, n);
	if (!ret && config_write(c, &cfg))
		ret = err(EX_ERR, "cannot write gp_config: %s", strerror(errno));
	if (!ret)
		pending_save(file, pend, skipped < APPLY_MAX ? skipped : APPLY_MAX);
	if (!ret && skipped)
		fprintf(stderr, "%s: %s applied without %d cgroup rule%s (above): pending, see gpreemptctl list\n",
			prog, file, skipped, skipped == 1 ? "" : "s");
	return ret;
}
