/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maps.h - the BPF maps gpreempt shares with userspace (maps.c): queue
 * info, stats, priority rules and config.
 */
#ifndef GP_MAPS_API_H
#define GP_MAPS_API_H

#include <linux/types.h>
#include "gp_maps.h"

int gp_maps_init(void);
void gp_maps_exit(void);
int gp_maps_put_queue(const struct gp_queue_key *key, const struct gp_queue_info *info);
void gp_maps_del_queue(const struct gp_queue_key *key);
void gp_maps_forget_tgid(pid_t tgid, u64 start);
void gp_maps_release_hold(const struct gp_queue_key *key);
void gp_maps_put_stats(const struct gp_stats *st);
int gp_maps_put_cgroup(u64 id, const struct gp_cgroup_stats *st);
void gp_maps_del_cgroup(u64 id);
bool gp_maps_prio_pid(pid_t tgid, u64 start, int *prio);
int gp_maps_sweep_prio_pid(bool (*alive)(pid_t tgid, u64 start));
bool gp_maps_prio_cgroup(u64 id, int *prio);
bool gp_maps_prio_hook(u64 id, int *prio);
bool gp_maps_prio_comm(const char *comm, int *prio);
bool gp_maps_queue_ctl(const struct gp_queue_key *key, int *prio, u32 *hold);
bool gp_maps_config(struct gp_config *cfg);

#endif /* GP_MAPS_API_H */
