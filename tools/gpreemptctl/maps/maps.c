// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * maps.c - find gpreempt's BPF maps by name and read/write them with libbpf.
 *
 * The maps are not pinned: they are found by walking the map ids
 * (bpf_map_get_next_id, bpf_obj_get_info_by_fd) and comparing names, which
 * needs CAP_SYS_ADMIN (both commands check it; CAP_BPF is not enough).  When a
 * name appears more than once (a map of an unloaded module still held open
 * somewhere) the newest, highest id wins.  Key and value sizes are checked
 * against gp_maps.h, so a tool built for another layout refuses to run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "gpreemptctl.h"

static const struct {
	const char *name;
	unsigned int ksz, vsz;
} gp_maps[M_NR] = {
	[M_QUEUES] = { "gp_queues", sizeof(struct gp_queue_key), sizeof(struct gp_queue_info) },
	[M_STATS] = { "gp_stats", 4, sizeof(struct gp_stats) },
	[M_PRIO] = { "gp_prio", 4, sizeof(struct gp_prio_pid) },
	[M_PRIO_CGROUP] = { "gp_prio_cgroup", 8, sizeof(struct gp_prio_override) },
	[M_PRIO_COMM] = { "gp_prio_comm", sizeof(struct gp_comm), sizeof(struct gp_prio_override) },
	[M_QUEUE_CTL] = { "gp_queue_ctl", sizeof(struct gp_queue_key), sizeof(struct gp_queue_ctl) },
	[M_CONFIG] = { "gp_config", 4, sizeof(struct gp_config) },
	[M_PRIO_HOOK] = { "gp_prio_hook", 8, sizeof(struct gp_prio_override) },
	[M_CGROUPS] = { "gp_cgroups", 8, sizeof(struct gp_cgroup_stats) },
};

static int perm_err(void)
{
	return err(EX_PERM, "not permitted: gpreempt's maps are not pinned, and opening a BPF map by id needs CAP_SYS_ADMIN: run as root (version, doctor, exec and apply --check need no privilege)");
}

/**
 * maps_open() - open every gpreempt map
 * @c: context; c->fd[] filled
 *
 * Return: EX_OK, EX_NOTLOADED, EX_PERM or EX_ERR (after printing why).
 */
int maps_open(struct ctl *c)
{
	__u32 id = 0, found_id[M_NR] = { 0 };
	int i, fd;

	for (i = 0; i < M_NR; i++)
		c->fd[i] = -1;
	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);

		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;	/* freed meanwhile */
			return errno == EPERM || errno == EACCES ? perm_err() :
			       err(EX_ERR, "cannot open map id %u: %s", id, strerror(errno));
		}
		if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
			close(fd);
			continue;
		}
		for (i = 0; i < M_NR; i++) {
			if (strcmp(info.name, gp_maps[i].name) || id < found_id[i])
				continue;
			if (info.key_size != gp_maps[i].ksz || info.value_size != gp_maps[i].vsz) {
				close(fd);
				return err(EX_ERR, "map %s has key/value size %u/%u, this gpreemptctl expects %u/%u: module and tool do not match",
					   info.name, info.key_size, info.value_size,
					   gp_maps[i].ksz, gp_maps[i].vsz);
			}
			if (c->fd[i] >= 0)
				close(c->fd[i]);
			c->fd[i] = fd;
			found_id[i] = id;
			fd = -1;
			break;
		}
		if (fd >= 0)
			close(fd);
	}
	if (errno == EPERM || errno == EACCES)
		return perm_err();
	/* Some maps but not all: a module older or newer than this tool. */
	for (i = 0; i < M_NR && c->fd[M_QUEUES] >= 0; i++) {
		if (c->fd[i] < 0)
			return err(EX_ERR, "gpreempt has no BPF map named %s: module and tool do not match (load the gpreempt.ko built with this gpreemptctl)",
				   gp_maps[i].name);
	}
	for (i = 0; i < M_NR; i++) {
		if (c->fd[i] < 0)
			return err(EX_NOTLOADED, "gpreempt is not loaded (no BPF map named %s); load it with modprobe gpreempt or insmod gpreempt.ko, and if that fails the reason is in the kernel log (dmesg | grep gpreempt)",
				   gp_maps[i].name);
	}
	return EX_OK;
}

/**
 * map_count() - number of entries in a hash map
 * @fd: map
 * @ksz: its key size
 *
 * Return: the count.
 */
int map_count(int fd, size_t ksz)
{
	char key[64], next[64];
	void *prev = NULL;
	int n = 0;

	if (ksz > sizeof(key))
		return 0;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ksz);
		prev = key;
		n++;
	}
	return n;
}

static int cmp_queue(const void *a, const void *b)
{
	const struct gp_queue_info *x = a, *y = b;

	if (x->eff_priority != y->eff_priority)
		return y->eff_priority - x->eff_priority;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->qid < y->qid ? -1 : x->qid > y->qid;
}

/*
 * Room in @v for entry @n of @sz bytes: doubled from 64 when full.  NULL
 * when out of memory, with @v freed.
 */
static void *entries_room(void *v, int n, int *cap, size_t sz)
{
	void *nv;

	if (n < *cap)
		return v;
	*cap = *cap ? 2 * *cap : 64;
	nv = realloc(v, *cap * sz);
	if (!nv)
		free(v);
	return nv;
}

/**
 * queues_read() - every gp_queues value, highest priority first
 * @c: context
 * @out: malloc'd array (caller frees)
 *
 * Return: number of queues, or -1.
 */
int queues_read(struct ctl *c, struct gp_queue_info **out)
{
	struct gp_queue_key key, next, *prev = NULL;
	struct gp_queue_info *v = NULL;
	int n = 0, cap = 0;

	while (!bpf_map_get_next_key(c->fd[M_QUEUES], prev, &next)) {
		v = entries_room(v, n, &cap, sizeof(*v));
		if (!v)
			return -1;
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(c->fd[M_QUEUES], &key, &v[n]))
			n++;	/* gone meanwhile: skipped */
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_queue);
	*out = v;
	return n;
}

/**
 * cgroups_read() - every gp_cgroups entry
 * @c: context
 * @out: a malloc()ed array, the caller frees it
 *
 * Return: the number of entries, or -1 (no memory).
 */
int cgroups_read(struct ctl *c, struct gp_cgroup_entry **out)
{
	struct gp_cgroup_entry *v = NULL;
	__u64 key, next, *prev = NULL;
	int n = 0, cap = 0;

	while (!bpf_map_get_next_key(c->fd[M_CGROUPS], prev, &next)) {
		v = entries_room(v, n, &cap, sizeof(*v));
		if (!v)
			return -1;
		key = next;
		prev = &key;
		v[n].id = key;
		if (!bpf_map_lookup_elem(c->fd[M_CGROUPS], &key, &v[n].st))
			n++;	/* gone meanwhile: skipped */
	}
	*out = v;
	return n;
}

/**
 * stats_read() - the gp_stats value
 * @c: context
 * @st: result
 *
 * Return: 0 or -1.
 */
int stats_read(struct ctl *c, struct gp_stats *st)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(c->fd[M_STATS], &zero, st) ? -1 : 0;
}

/**
 * config_read() - the gp_config value
 * @c: context
 * @cfg: result
 *
 * Return: 0 or -1.
 */
int config_read(struct ctl *c, struct gp_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(c->fd[M_CONFIG], &zero, cfg) ? -1 : 0;
}

/**
 * config_write() - write the gp_config value
 * @c: context
 * @cfg: value
 *
 * Return: 0 or -1.
 */
int config_write(struct ctl *c, const struct gp_config *cfg)
{
	__u32 zero = 0;

	return bpf_map_update_elem(c->fd[M_CONFIG], &zero, cfg, BPF_ANY) ? -1 : 0;
}

/**
 * rules_bump() - bump gp_config.rules_gen: the monitor re-resolves every
 * process's rules on its next tick
 * @c: context
 *
 * Return: EX_OK or EX_ERR.
 */
int rules_bump(struct ctl *c)
{
	struct gp_config cfg;

	if (config_read(c, &cfg))
		return err(EX_ERR, "cannot read gp_config: %s", strerror(errno));
	cfg.rules_gen++;
	if (config_write(c, &cfg))
		return err(EX_ERR, "cannot write gp_config: %s", strerror(errno));
	return EX_OK;
}
