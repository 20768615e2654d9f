/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gp_maps.h - layout of gpreempt's BPF maps (the user-visible interface).
 *
 * State:   gp_queues  (hash, key struct gp_queue_key, value struct gp_queue_info)
 *          gp_stats   (array[1], struct gp_stats)
 * Control: gp_prio    (hash, key __u32 tgid, value struct gp_prio_override)
 *          gp_prio_comm (hash, key struct gp_comm, value struct gp_prio_override)
 *          gp_config  (array[1], struct gp_config; 0 in a field = module default)
 *
 * bpftool map dump name gp_queues   pretty-prints these with field names.
 */
#ifndef GP_MAPS_H
#define GP_MAPS_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

#define GP_COMM_LEN 16
#define GP_MAX_QUEUES 4096
#define GP_MAX_PRIO_OVERRIDES 1024
#define GP_HIST_BUCKETS 20	/* log2 buckets of microseconds: [0]=<1us ... */
#define GP_PRIO_MAX 15		/* KFD_MAX_QUEUE_PRIORITY */

enum gp_qstate {
	GP_Q_RUNNING = 0,	/* mapped, gpreempt leaves it alone */
	GP_Q_PREEMPTING = 1,	/* park requested, backend acting */
	GP_Q_SUSPENDED = 2,	/* parked by gpreempt */
	GP_Q_RESUMING = 3,	/* unpark requested, backend acting */
	GP_Q_GONE = 4,		/* destroyed; entry about to go */
	GP_Q_NR_STATES,
};

enum gp_backend_kind {
	GP_BACKEND_AUTO = 0,
	GP_BACKEND_EVICT = 1,	/* kfd_process_evict_queues / restore (per process) */
	GP_BACKEND_SUSPEND = 2,	/* is_suspended + dqm->ops.update_queue (per queue) */
};

enum gp_ptr_path {
	GP_PTR_NONE = 0,	/* not readable (yet): treated as pending */
	GP_PTR_PINNED = 1,	/* pinned page + vmap: a plain load */
	GP_PTR_USE_MM = 2,	/* kthread_use_mm + __get_user, batched per process */
	GP_PTR_ACCESS_VM = 3,	/* access_process_vm (VM_IO/VM_PFNMAP mappings) */
};

struct gp_queue_key {
	__u32 tgid;
	__u32 qid;
};

struct gp_queue_info {
	__u32 tgid;
	__u32 pasid;
	__u32 qid;
	__u32 kfd_priority;	/* as KFD has it (create/update ioctls) */
	__s32 eff_priority;	/* after gp_prio / gp_prio_comm overrides */
	__u32 state;		/* enum gp_qstate */
	__u32 ptr_path;		/* enum gp_ptr_path */
	__u32 backend;		/* enum gp_backend_kind used for the last park */
	__u32 pending;		/* wptr != rptr at the last scan */
	__u32 queue_percent;
	char comm[GP_COMM_LEN];
	__u64 rptr;
	__u64 wptr;
	__u64 preempts;
	__u64 resumes;
	__u64 suspended_ns;	/* total time parked */
	__u64 last_preempt_ns;	/* duration of the last park call */
	__u64 errors;
};

struct gp_stats {
	__u64 ticks;
	__u64 scan_ns_total;
	__u64 scan_ns_last;
	__u64 scan_ns_max;
	__u64 busy_ticks;	/* ticks with pending work somewhere */
	__u64 queues;		/* managed now */
	__u64 queues_seen;	/* registered since load */
	__u64 processes;
	__u64 inversions;	/* ticks that found a higher level pending while lower ones ran */
	__u64 preempts;
	__u64 resumes;
	__u64 starvation_slices;
	__u64 errors;
	__u64 busy_retries;	/* p->mutex contended: retried next tick */
	__u64 skipped_debugged;
	__u64 skipped_reset;
	__u64 bad_control;	/* rejected gp_prio / gp_config values */
	__u64 probe_missed;
	__u64 evicts_outstanding;	/* evict calls not yet balanced by restore */
	__u64 detect_hist[GP_HIST_BUCKETS];	/* pending seen -> park decided, us */
	__u64 preempt_hist[GP_HIST_BUCKETS];	/* backend park call duration, us */
	__u64 state_transitions[GP_Q_NR_STATES];	/* entries into each state */
};

struct gp_comm {
	char comm[GP_COMM_LEN];
};

struct gp_prio_override {
	__s32 priority;		/* 0..15; anything else is rejected and counted */
};

struct gp_config {
	__u32 enable;		/* 0 = module param, 1 = on, 2 = off */
	__u32 tick_us;
	__u32 hysteresis_us;
	__u32 max_suspend_us;
	__u32 min_slice_us;
};

#endif /* GP_MAPS_H */
