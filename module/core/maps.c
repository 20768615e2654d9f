// SPDX-License-Identifier: GPL-2.0
/*
 * maps.c - gpreempt's BPF maps: state out (gp_queues, gp_stats, gp_cgroups), control in
 * (gp_prio, gp_prio_cgroup, gp_prio_hook, gp_prio_comm, gp_queue_ctl,
 * gp_config).
 *
 * The maps and their BTF come from bpf/gp_maps.bpf.c through a light
 * skeleton run with kern_sys_bpf(), as kernel/bpf/preload does.  The module
 * keeps one reference per map and closes the fds, so nothing is left in
 * insmod's file table; bpftool finds the maps by name.  Values are written
 * through map->ops under rcu_read_lock() from the monitor thread only.
 *
 * The state maps are frozen (BPF_MAP_FREEZE) right after creation: the
 * syscall side can look them up and dump them but not write them, whatever
 * fd it holds (no forged state, no filling gp_queues to max_entries); the
 * module writes them through map->ops, which freezing does not affect.
 * (BPF_F_RDONLY at creation is not enough: it only makes the creator's fd
 * read-only, and BPF_MAP_GET_FD_BY_ID opens the map with its own flags.)
 * The control maps can only be opened by id, which needs CAP_SYS_ADMIN
 * (they are not pinned); every value read from them is range
 * checked here before use and none is used as a pointer, index or size.
 * A lookup in a preallocated hash can see an element being recycled for
 * another key; the value is a single s32 (a pid rule's: with its start)
 * read once, validated, and at worst applied for one resolve until the next
 * (at most GP_RULES_RESCAN_MS).
 *
 * over 400 lines: one accessor per map, each validating what it reads, and
 * the deletions of rules whose process ended.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/file.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include "core/maps.h"
#include "monitor/monitor.h"
#include "gp_maps.lskel.h"

static struct bpf_map *gp_map_queues, *gp_map_stats, *gp_map_prio, *gp_map_prio_comm,
		      *gp_map_config, *gp_map_prio_cgroup, *gp_map_queue_ctl,
		      *gp_map_prio_hook, *gp_map_cgroups;

/* No more writes from the syscall side, through any fd (map->frozen). */
static int gp_freeze(int fd)
{
	union bpf_attr attr = { .map_fd = fd };

	return kern_sys_bpf(BPF_MAP_FREEZE, &attr, offsetofend(union bpf_attr, map_fd));
}

static struct bpf_map *gp_take_map(int *fd)
{
	struct bpf_map *map = bpf_map_get(*fd);

	if (IS_ERR(map))
		return map;
	close_fd(*fd);
	*fd = 0;
	return map;
}

static void gp_put_maps(void)
{
	struct bpf_map **maps[] = { &gp_map_queues, &gp_map_stats, &gp_map_prio,
				    &gp_map_prio_comm, &gp_map_config, &gp_map_prio_cgroup,
				    &gp_map_queue_ctl, &gp_map_prio_hook, &gp_map_cgroups };
	int i;

	for (i = 0; i < ARRAY_SIZE(maps); i++) {
		if (*maps[i] && !IS_ERR(*maps[i]))
			bpf_map_put(*maps[i]);
		*maps[i] = NULL;
	}
}

/**
 * gp_maps_init() - create the maps
 *
 * Return: 0 or a negative errno.
 */
int gp_maps_init(void)
{
	struct gp_maps *gp_skel;
	int ret = 0;

	gp_skel = gp_maps__open();
	if (!gp_skel)
		return -ENOMEM;
	ret = gp_maps__load(gp_skel);
	if (ret) {
		pr_err("cannot create the BPF maps: %d\n", ret);
		gp_maps__destroy(gp_skel);
		return ret;
	}
	ret = gp_freeze(gp_skel->maps.gp_queues.map_fd) ?:
	      gp_freeze(gp_skel->maps.gp_stats.map_fd) ?:
	      gp_freeze(gp_skel->maps.gp_cgroups.map_fd);
	if (ret) {
		pr_err("cannot freeze the state maps: %d\n", ret);
		gp_maps__destroy(gp_skel);
		return ret;
	}
	gp_map_queues = gp_take_map(&gp_skel->maps.gp_queues.map_fd);
	gp_map_stats = gp_take_map(&gp_skel->maps.gp_stats.map_fd);
	gp_map_prio = gp_take_map(&gp_skel->maps.gp_prio.map_fd);
	gp_map_prio_comm = gp_take_map(&gp_skel->maps.gp_prio_comm.map_fd);
	gp_map_config = gp_take_map(&gp_skel->maps.gp_config.map_fd);
	gp_map_prio_cgroup = gp_take_map(&gp_skel->maps.gp_prio_cgroup.map_fd);
	gp_map_queue_ctl = gp_take_map(&gp_skel->maps.gp_queue_ctl.map_fd);
	gp_map_prio_hook = gp_take_map(&gp_skel->maps.gp_prio_hook.map_fd);
	gp_map_cgroups = gp_take_map(&gp_skel->maps.gp_cgroups.map_fd);
	if (IS_ERR(gp_map_queues) || IS_ERR(gp_map_stats) || IS_ERR(gp_map_prio) ||
	    IS_ERR(gp_map_prio_comm) || IS_ERR(gp_map_config) || IS_ERR(gp_map_prio_cgroup) ||
	    IS_ERR(gp_map_queue_ctl) || IS_ERR(gp_map_prio_hook) || IS_ERR(gp_map_cgroups)) {
		pr_err("cannot take references on the BPF maps\n");
		gp_put_maps();
		ret = -ENOMEM;
	}
	/* Closes the never-attached program; the maps live on by reference. */
	gp_maps__destroy(gp_skel);
	return ret;
}

/**
 * gp_maps_exit() - drop the maps; they disappear with their last reference
 */
void gp_maps_exit(void)
{
	gp_put_maps();
}

static int gp_map_update(struct bpf_map *map, const void *key, const void *val)
{
	int ret;

	rcu_read_lock();
	ret = map->ops->map_update_elem(map, (void *)key, (void *)val, BPF_ANY);
	rcu_read_unlock();
	if (ret)
		pr_warn_ratelimited("map %s update failed: %d\n", map->name, ret);
	return ret;
}

/**
 * gp_maps_put_queue() - publish one queue's state in gp_queues
 * @key: tgid and qid
 * @info: value
 *
 * Return: 0 or the map's negative errno.
 */
int gp_maps_put_queue(const struct gp_queue_key *key, const struct gp_queue_info *info)
{
	return gp_map_update(gp_map_queues, key, info);
}

/**
 * gp_maps_del_queue() - remove a queue from gp_queues
 * @key: tgid and qid
 */
void gp_maps_del_queue(const struct gp_queue_key *key)
{
	rcu_read_lock();
	gp_map_queues->ops->map_delete_elem(gp_map_queues, (void *)key);
	rcu_read_unlock();
}

/**
 * gp_maps_release_hold() - clear the hold of one gp_queue_ctl entry
 * @key: tgid and qid
 *
 * Its priority stays; an entry left with neither is deleted.
 */
void gp_maps_release_hold(const struct gp_queue_key *key)
{
	struct gp_queue_ctl *v, val;

	rcu_read_lock();
	v = gp_map_queue_ctl->ops->map_lookup_elem(gp_map_queue_ctl, (void *)key);
	if (v) {
		val.priority = READ_ONCE(v->priority);
		val.hold = 0;
		if (val.priority == -1)
			gp_map_queue_ctl->ops->map_delete_elem(gp_map_queue_ctl, (void *)key);
		else
			gp_map_queue_ctl->ops->map_update_elem(gp_map_queue_ctl, (void *)key, &val,
							      BPF_EXIST);
	}
	rcu_read_unlock();
}

/* gp_queue_ctl keys collected per pass of gp_maps_forget_tgid(). */
#define GP_FORGET_BATCH 32

/**
 * gp_maps_forget_tgid() - drop the rules keyed on a process that ended
 * @tgid: its tgid
 * @start: its start (struct gp_prio_pid.start)
 *
 * gp_prio[@tgid] and every gp_queue_ctl[@tgid:*] (priority and
 * hold) end with the process, so a later process that gets the same pid
 * inherits neither.  A gp_prio rule set for another start is another
 * process's (gp_maps_sweep_prio_pid() decides on it).  Monitor thread only.
 */
void gp_maps_forget_tgid(pid_t tgid, u64 start)
{
	struct gp_queue_key keys[GP_FORGET_BATCH], cur, next;
	struct bpf_map *m = gp_map_queue_ctl;
	struct gp_prio_pid *v;
	u32 pid = tgid;
	int i, n;

	rcu_read_lock();
	v = gp_map_prio->ops->map_lookup_elem(gp_map_prio, &pid);
	if (v && READ_ONCE(v->start) == start)
		gp_map_prio->ops->map_delete_elem(gp_map_prio, &pid);
	rcu_read_unlock();
	do {
		bool first = true;

		n = 0;
		rcu_read_lock();
		while (n < GP_FORGET_BATCH &&
		       !m->ops->map_get_next_key(m, first ? NULL : &cur, &next)) {
			first = false;
			cur = next;
			if (next.tgid == (u32)tgid)
				keys[n++] = next;
		}
		for (i = 0; i < n; i++)
			m->ops->map_delete_elem(m, &keys[i]);
		rcu_read_unlock();
	} while (n == GP_FORGET_BATCH);
}

/**
 * gp_maps_put_cgroup() - publish one cgroup's counters in gp_cgroups
 * @id: cgroup v2 id
 * @st: value
 *
 * Return: 0 or the map's negative errno.
 */
int gp_maps_put_cgroup(u64 id, const struct gp_cgroup_stats *st)
{
	return gp_map_update(gp_map_cgroups, &id, st);
}

/**
 * gp_maps_del_cgroup() - remove one cgroup from gp_cgroups
 * @id: cgroup v2 id
 */
void gp_maps_del_cgroup(u64 id)
{
	rcu_read_lock();
	gp_map_cgroups->ops->map_delete_elem(gp_map_cgroups, &id);
	rcu_read_unlock();
}

/**
 * gp_maps_put_stats() - publish the global counters in gp_stats
 * @st: value
 */
void gp_maps_put_stats(const struct gp_stats *st)
{
	u32 zero = 0;

	gp_map_update(gp_map_stats, &zero, st);
}

static bool gp_read_override(struct bpf_map *map, const void *key, int *prio)
{
	struct gp_prio_override *v;
	s32 val = -1;

	rcu_read_lock();
	v = map->ops->map_lookup_elem(map, (void *)key);
	if (v)
		val = READ_ONCE(v->priority);
	rcu_read_unlock();
	if (!v)
		return false;
	if (val < 0 || val > GP_PRIO_MAX) {
		gp_stats.bad_control++;
		pr_warn_ratelimited("ignoring %s override %d (valid: 0..%d)\n", map->name, val,
				    GP_PRIO_MAX);
		return false;
	}
	*prio = val;
	return true;
}

/**
 * gp_maps_prio_pid() - gp_prio rule of a process
 * @tgid: process id (init namespace)
 * @start: the start of the process's lead thread (struct gp_prio_pid.start)
 * @prio: result, 0..GP_PRIO_MAX
 *
 * A rule set for another start was set for an earlier process with the
 * same pid: it does not apply.  Out-of-range values are ignored and counted
 * in gp_stats.bad_control (as for every rule lookup below).
 * Return: true when a valid rule exists for this process.
 */
bool gp_maps_prio_pid(pid_t tgid, u64 start, int *prio)
{
	struct gp_prio_pid *v;
	u32 pid = tgid;
	u64 vstart = 0;
	s32 val = -1;

	rcu_read_lock();
	v = gp_map_prio->ops->map_lookup_elem(gp_map_prio, &pid);
	if (v) {
		val = READ_ONCE(v->priority);
		vstart = READ_ONCE(v->start);
	}
	rcu_read_unlock();
	if (!v)
		return false;
	if (val < 0 || val > GP_PRIO_MAX) {
		gp_stats.bad_control++;
		pr_warn_ratelimited("ignoring gp_prio override %d (valid: 0..%d)\n", val,
				    GP_PRIO_MAX);
		return false;
	}
	if (vstart != start)
		return false;
	*prio = val;
	return true;
}

/* gp_prio keys collected per pass of gp_maps_sweep_prio_pid(). */
#define GP_SWEEP_BATCH 32

/**
 * gp_maps_sweep_prio_pid() - delete the pid rules no process of theirs has
 * @alive: does a process with this tgid and start (struct gp_prio_pid.start)
 *	   exist?  Called under rcu_read_lock().
 *
 * A rule on a process that exited before it opened /dev/kfd is never
 * dropped by its release (gp_release_queue()): it goes here, before its
 * pid is reused (pids are handed out cyclically).  Monitor thread only.
 *
 * Return: the rules deleted.
 */
int gp_maps_sweep_prio_pid(bool (*alive)(pid_t tgid, u64 start))
{
	struct bpf_map *m = gp_map_prio;
	u32 keys[GP_SWEEP_BATCH], cur = 0, next;
	bool first = true, more = true;
	int i, n, dropped = 0;

	while (more) {
		n = 0;
		rcu_read_lock();
		while (n < GP_SWEEP_BATCH) {
			struct gp_prio_pid *v;

			if (m->ops->map_get_next_key(m, first ? NULL : &cur, &next)) {
				more = false;
				break;
			}
			first = false;
			cur = next;
			v = m->ops->map_lookup_elem(m, &next);
			if (v && !alive(next, READ_ONCE(v->start)))
				keys[n++] = next;
		}
		/* Deleted after the walk: a deleted key would restart it. */
		for (i = 0; i < n; i++)
			if (!m->ops->map_delete_elem(m, &keys[i]))
				dropped++;
		rcu_read_unlock();
		/* A deleted @cur would restart the walk anyway: restart it. */
		if (n)
			first = true;
	}
	return dropped;
}

/**
 * gp_maps_prio_cgroup() - gp_prio_cgroup rule of one cgroup
 * @id: cgroup v2 id (the kernfs inode number of its directory)
 * @prio: result, 0..GP_PRIO_MAX
 *
 * Return: true when a valid rule exists.
 */
bool gp_maps_prio_cgroup(u64 id, int *prio)
{
	return gp_read_override(gp_map_prio_cgroup, &id, prio);
}

/**
 * gp_maps_prio_hook() - gp_prio_hook rule of one cgroup (a container's)
 * @id: cgroup v2 id
 * @prio: result, 0..GP_PRIO_MAX
 *
 * A rule gpreemptctl's container hook wrote from a pod's or container's
 * annotation: an administrator's gp_prio_cgroup rule on the same cgroup or
 * an ancestor caps it (gp_rules_cgroup()).
 *
 * Return: true when a valid rule exists.
 */
bool gp_maps_prio_hook(u64 id, int *prio)
{
	return gp_read_override(gp_map_prio_hook, &id, prio);
}

/**
 * gp_maps_prio_comm() - gp_prio_comm rule of a process name
 * @comm: the name (up to GP_COMM_LEN - 1 characters are compared)
 * @prio: result, 0..GP_PRIO_MAX
 *
 * Return: true when a valid rule exists.
 */
bool gp_maps_prio_comm(const char *comm, int *prio)
{
	struct gp_comm key = { 0 };

	strscpy(key.comm, comm, sizeof(key.comm));
	return gp_read_override(gp_map_prio_comm, &key, prio);
}

/**
 * gp_maps_queue_ctl() - gp_queue_ctl entry of one queue
 * @key: tgid and qid
 * @prio: result: 0..GP_PRIO_MAX, or -1 when the entry sets no priority
 * @hold: result: 0, 1 (held parked while gpreempt is enabled) or 2 (also
 *	  while it is disabled: the self-test's own queues)
 *
 * An entry with an invalid field is ignored as a whole and counted.
 * Return: true when a valid entry exists.
 */
bool gp_maps_queue_ctl(const struct gp_queue_key *key, int *prio, u32 *hold)
{
	struct gp_queue_ctl *v, val = { 0 };

	rcu_read_lock();
	v = gp_map_queue_ctl->ops->map_lookup_elem(gp_map_queue_ctl, (void *)key);
	if (v) {
		val.priority = READ_ONCE(v->priority);
		val.hold = READ_ONCE(v->hold);
	}
	rcu_read_unlock();
	if (!v)
		return false;
	if (val.priority < -1 || val.priority > GP_PRIO_MAX || val.hold > 2) {
		gp_stats.bad_control++;
		pr_warn_ratelimited("ignoring gp_queue_ctl %u:%u {%d, %u} (valid: -1..%d, 0..2)\n",
				    key->tgid, key->qid, val.priority, val.hold, GP_PRIO_MAX);
		return false;
	}
	*prio = val.priority;
	*hold = val.hold;
	return true;
}

/**
 * gp_maps_config() - read gp_config
 * @cfg: result (0 fields mean "use the module parameter")
 *
 * Return: true when read.
 */
bool gp_maps_config(struct gp_config *cfg)
{
	struct gp_config *v;
	u32 zero = 0;

	rcu_read_lock();
	v = gp_map_config->ops->map_lookup_elem(gp_map_config, &zero);
	if (v)
		memcpy(cfg, v, sizeof(*cfg));
	rcu_read_unlock();
	return v;
}
