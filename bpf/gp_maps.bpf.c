// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gp_maps.bpf.c - gpreempt's maps, with BTF, loaded by the module through a
 * light skeleton (the kernel/bpf/preload way).  The module keeps a reference
 * to each map and fills them; user space reads and writes them with bpftool.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "gp_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_QUEUES);
	__type(key, struct gp_queue_key);
	__type(value, struct gp_queue_info);
} gp_queues SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_stats);
} gp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_PRIO_OVERRIDES);
	__type(key, __u32);
	__type(value, struct gp_prio_pid);
} gp_prio SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_PRIO_OVERRIDES);
	__type(key, struct gp_comm);
	__type(value, struct gp_prio_override);
} gp_prio_comm SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_CGROUP_RULES);
	__type(key, __u64);
	__type(value, struct gp_prio_override);
} gp_prio_cgroup SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_CGROUP_RULES);
	__type(key, __u64);
	__type(value, struct gp_prio_override);
} gp_prio_hook SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_PRIO_OVERRIDES);
	__type(key, struct gp_queue_key);
	__type(value, struct gp_queue_ctl);
} gp_queue_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_config);
} gp_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, GP_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, struct gp_cgroup_stats);
} gp_cgroups SEC(".maps");

/*
 * A light skeleton needs at least one program; this one is never attached.
 * It references every map so none is dropped from the object.
 */
SEC("syscall")
int gp_maps_touch(void *ctx)
{
	char zero[GP_COMM_LEN] = {};	/* as large as the largest key */

	bpf_map_lookup_elem(&gp_stats, zero);
	bpf_map_lookup_elem(&gp_config, zero);
	bpf_map_lookup_elem(&gp_queues, zero);
	bpf_map_lookup_elem(&gp_prio, zero);
	bpf_map_lookup_elem(&gp_prio_comm, zero);
	bpf_map_lookup_elem(&gp_prio_cgroup, zero);
	bpf_map_lookup_elem(&gp_prio_hook, zero);
	bpf_map_lookup_elem(&gp_queue_ctl, zero);
	bpf_map_lookup_elem(&gp_cgroups, zero);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
