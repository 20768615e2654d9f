/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gp_maps.h - layout of gpreempt's BPF maps (the user-visible interface).
 *
 * State (frozen: user space reads them, only the module writes):
 *          gp_queues  (hash, key struct gp_queue_key, value struct gp_queue_info)
 *          gp_stats   (array[1], struct gp_stats)
 * Control (written by gpreemptctl, or by hand with bpftool):
 *          gp_prio        (hash, key __u32 tgid, value struct gp_prio_pid)
 *          gp_prio_cgroup (hash, key __u64 cgroup v2 id, value struct gp_prio_override)
 *          gp_prio_hook   (hash, key __u64 cgroup v2 id, value struct gp_prio_override):
 *                         containers' rules (gpreemptctl hook, from an annotation)
 *          gp_prio_comm   (hash, key struct gp_comm, value struct gp_prio_override)
 *          gp_queue_ctl   (hash, key struct gp_queue_key, value struct gp_queue_ctl)
 *          gp_config      (array[1], struct gp_config; 0 in a field = module default)
 *
 * A queue's effective priority comes from the first source that has a valid
 * rule (enum gp_prio_source, highest first): gp_queue_ctl.priority, gp_prio,
 * gp_prio_cgroup (the deepest rule on the process's cgroup or an ancestor;
 * a gp_prio_hook rule counts as one, capped by the nearest gp_prio_cgroup
 * rule on its cgroup or above),
 * GPREEMPT_PRIORITY in the process's environment (only when enabled, capped),
 * gp_prio_comm, and last the priority KFD has for the queue.
 *
 * The control maps are resolved once per process, and again when
 * gp_config.rules_gen changes (gpreemptctl bumps it after every write: the
 * change is seen on the next tick); each process is also re-resolved every
 * GP_RULES_RESCAN_MS (raw bpftool writes, cgroup moves, comm changes), at
 * most 32 processes per tick; a queue without work, while the monitor is in
 * deep idle (gp_stats.idle_backoff_us), every second.
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
/*
 * Latency histograms with percentiles (struct gp_lat_hist): log-linear
 * buckets of nanoseconds, HDR-style.  Values below GP_LAT_SUB ns have a
 * bucket each; above, every power of two [2^k, 2^(k+1)) is cut into
 * GP_LAT_SUB equal buckets, so a bucket is at most 1/GP_LAT_SUB (6.25 %)
 * of its lower bound wide: sub-microsecond resolution at 1 us, ~6 % of the
 * value up to 2^GP_LAT_MAX_LOG2 ns (68.7 s); larger values go into the last
 * bucket.  bpf/gp_lat.h has the index and bounds of a bucket and percentile
 * extraction, shared by the module and the tools.
 */
#define GP_LAT_SUB_BITS 4
#define GP_LAT_SUB (1 << GP_LAT_SUB_BITS)
#define GP_LAT_MAX_LOG2 36
#define GP_LAT_BUCKETS ((GP_LAT_MAX_LOG2 - GP_LAT_SUB_BITS + 1) * GP_LAT_SUB)
#define GP_PRIO_MAX 15		/* KFD_MAX_QUEUE_PRIORITY */
#define GP_PRIO_LOW 3		/* gpreemptctl's and GPREEMPT_PRIORITY's "low" */
#define GP_PRIO_NORMAL 7	/* "normal": ROCr creates every queue at 7 */
#define GP_PRIO_HIGH 12		/* "high" */
#define GP_MAX_CGROUP_RULES 1024
#define GP_MAX_CGROUPS 1024	/* gp_cgroups entries */
#define GP_RULES_RESCAN_MS 100	/* rules re-resolved at least this often */

enum gp_prio_source {
	GP_SRC_KFD = 0,		/* the queue's KFD priority (no rule) */
	GP_SRC_COMM = 1,	/* gp_prio_comm */
	GP_SRC_ENV = 2,		/* GPREEMPT_PRIORITY in the environment (capped) */
	GP_SRC_CGROUP = 3,	/* gp_prio_cgroup */
	GP_SRC_PID = 4,		/* gp_prio */
	GP_SRC_QUEUE = 5,	/* gp_queue_ctl.priority */
	GP_SRC_NR,
};

enum gp_qstate {
	GP_Q_RUNNING = 0,	/* mapped, gpreempt leaves it alone */
	GP_Q_PREEMPTING = 1,	/* park requested, backend acting */
	GP_Q_SUSPENDED = 2,	/* parked by gpreempt */
	GP_Q_RESUMING = 3,	/* unpark requested, backend acting */
	GP_Q_GONE = 4,		/* destroyed; entry about to go */
	GP_Q_SHRUNK = 5,	/* running on part of its CUs (shrink_pct), by gpreempt */
	GP_Q_NR_STATES,
};

enum gp_backend_kind {
	GP_BACKEND_AUTO = 0,
	GP_BACKEND_EVICT = 1,	/* kfd_process_evict_queues / restore (per process) */
	GP_BACKEND_SUSPEND = 2,	/* is_suspended + dqm->ops.update_queue (per queue) */
	GP_BACKEND_SHRINK = 3,	/* a CU mask + dqm->ops.update_queue: runs on fewer CUs */
};

enum gp_ptr_path {
	GP_PTR_NONE = 0,	/* not readable now: never pending, retried with back-off */
	GP_PTR_PINNED = 1,	/* pinned page + vmap: a plain load */
	GP_PTR_USE_MM = 2,	/* kthread_use_mm + __get_user, batched per process */
	GP_PTR_ACCESS_VM = 3,	/* retired: faulting reads (S3 F6); never set */
	GP_PTR_NOT_AQL = 4,	/* PM4 format: no dispatch ids; unknown: parked below a busy level */
	GP_PTR_MOVED = 5,	/* another page than at creation at its ids' address: unknown */
	GP_PTR_OVER_LIMIT = 6,	/* past its device's or its user's queue limit: ids not read, unknown */
};

/* Why gpreempt cannot park a queue now (gp_queue_info.unmanaged). */
enum gp_unmanaged {
	GP_UM_NONE = 0,		/* it can (a queue whose ids it cannot read: see ptr_path) */
	GP_UM_COPY = 1,		/* a copy (SDMA) queue: its work is a signal, never parked */
	GP_UM_RESET = 2,	/* KFD reset a queue of its process: eviction refused, backing off */
	GP_UM_DEVICE = 3,	/* its device: CWSR off, or KFD's calls not callable (IBT) */
	GP_UM_EXITING = 4,	/* its process is being torn down */
	GP_UM_DEBUGGER = 5,	/* the debugger took its suspend back: parked by eviction next */
	GP_UM_NR,
};

/* Device slots of gp_stats's per-device counters (GP_POLICY_MAX_DEVS). */
#define GP_DEV_STATS 64

struct gp_queue_key {
	__u32 tgid;
	__u32 qid;	/* KFD queue id; bits 16..31: the tgid's KFD context (7.2+) */
};

struct gp_queue_info {
	__u32 tgid;
	__u32 pasid;
	__u32 qid;
	__u32 kfd_priority;	/* as KFD has it (create/update ioctls) */
	__s32 eff_priority;	/* after the rules; its source is prio_source */
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
	__u32 prio_source;	/* enum gp_prio_source of eff_priority */
	__u32 held;		/* parked by hand: gp_queue_ctl.hold (2: also while disabled) */
	__u32 blocked;		/* work queued, but waiting at a barrier packet: not pending */
	/*
	 * Times its process was seen holding its own p->mutex for more than
	 * a second (an ioctl that does not return): while it holds it, it is
	 * parked by eviction, which needs no p->mutex.
	 */
	__u32 mutex_held;
	/*
	 * The monitor's slot of its device (0.., in the order devices were
	 * first seen; gp_stats's per-device counters use it), and why
	 * gpreempt cannot park it now (enum gp_unmanaged).
	 */
	__u32 dev;
	__u32 unmanaged;
	/*
	 * Shadow mode (enable=0): the parks and unparks gpreempt would have
	 * made of this queue, and the time it would have spent parked.
	 */
	__u64 shadow_parks;
	__u64 shadow_unparks;
	__u64 shadow_parked_ns;
	/*
	 * How long its level stays busy after its last work, learned from
	 * its own idle gaps (hold_payback_pct): 0 when none is learned (the
	 * level holds for hold_us), 1 for "not at all".
	 */
	__u64 learned_hold_ns;
};

/* A latency distribution: see GP_LAT_SUB_BITS. */
struct gp_lat_hist {
	__u64 count;	/* samples: the sum of buckets[] */
	__u64 sum_ns;
	__u64 min_ns;	/* 0 while count is 0 */
	__u64 max_ns;	/* exact: percentiles are capped at it */
	__u64 buckets[GP_LAT_BUCKETS];
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
	/* Coarse views of detect_lat and park_lat (log2 buckets of us), for older tools. */
	__u64 detect_hist[GP_HIST_BUCKETS];	/* pending seen -> park decided, us */
	__u64 preempt_hist[GP_HIST_BUCKETS];	/* backend park call duration, us */
	__u64 state_transitions[GP_Q_NR_STATES];	/* entries into each state */
	__u64 rule_resolves;	/* processes whose rules were (re)resolved */
	__u64 rule_resolve_ns;	/* total time spent resolving them */
	__u64 rule_resolve_ns_max;
	__u64 env_reads;	/* environments read (once per process, when enabled) */
	__u64 rate_limit;	/* max_rate: park/unpark state changes allowed per device per second */
	__u64 rate_last_sec;	/* state changes on the busiest device in the last full second */
	__u64 throttled;	/* actions held back by a device's max_rate bucket or back-off */
	__u64 backoffs;		/* per-device back-offs started after a failed action */
	__u64 queues_untracked;	/* queues left unmanaged: no memory, the registry full (GP_MAX_DEVS x GP_MAX_QUEUES), or the live layout check failed */
	__u64 rule_first_resolves;	/* of rule_resolves: a new process's first resolve */
	__u64 rule_first_resolve_ns;	/* total time spent on those */
	__u64 restore_retries;	/* restores KFD failed without dropping its count: held, retried */
	/*
	 * Park/unpark calls made while a higher level of the same device had
	 * work.  Under HWS each one is a whole-device unmap and remap that
	 * CWSR-saves and restores that work too (S3 F21): what protecting the
	 * LC queue costs it.  Under MES (per-queue remove/add) the LC queue is
	 * not touched, and these are an upper bound.
	 */
	__u64 lc_preempts;
	__u64 lc_preempt_ns;	/* the time those calls took (the LC queue off the GPU) */
	/*
	 * Deep idle: no queue has work or is parked, so the period doubles
	 * from idle_us up to idle_max_us.  The period after the last tick
	 * (0: not backing off), and the ticks followed by a period longer
	 * than idle_us.
	 */
	__u64 idle_backoff_us;
	__u64 deep_idle_ticks;
	/*
	 * Queues KFD updated or destroyed that gpreempt never saw created
	 * (counted only when every queue at load was adopted and none was
	 * left untracked): the creation probe did not fire, as when LTO
	 * inlined kfd_procfs_add_queue() into its caller (S3 F15).
	 */
	__u64 queues_unseen;
	/*
	 * S3 F20: actions on a process whose p->mutex was busy
	 * GP_DEFER_AFTER_BUSY ticks in a row (its threads keep it busy),
	 * handed to a helper thread that waits for the mutex; and the waits
	 * that the monitor ended after GP_DEFER_WAIT_MS (retried).
	 */
	__u64 busy_deferred;
	__u64 busy_deferred_expired;
	/*
	 * S3 F10: barriers seen passing (a queue seen waiting at a
	 * BARRIER_AND/OR packet, then past it), and ticks in which some
	 * queue was not parked because a higher queue waits on its work.
	 */
	__u64 dep_releases;
	__u64 dep_provider_ticks;
	/*
	 * How long a level stays busy after its last work, this tick:
	 * hysteresis_us (or gp_config's override of it).
	 */
	__u64 hold_us;
	/* The highest rate_last_sec since load: what max_rate has to allow. */
	__u64 rate_peak_sec;
	/*
	 * A process that holds its own p->mutex (an ioctl that waits on a
	 * page of a FUSE file that never answers, say): the times a process
	 * was seen holding it for more than a second, and the evictions and
	 * restores done without it (KFD's own eviction path needs none).
	 */
	__u64 mutex_held;
	__u64 lockless_evicts;
	/* Processes insmod left alone: their p->mutex stayed busy (not checked, not adopted). */
	__u64 load_skipped_busy;
	/*
	 * Busy ticks followed by a sleep to the end of a hold instead of
	 * tick_us: every queue below the top parked, the top without work.
	 */
	__u64 hold_sleeps;
	/*
	 * Parks of a queue the hardware would run before another queue's
	 * starvation slice (GP_WHY_YIELD), so that the slice gets the CUs.
	 */
	__u64 yield_parks;
	/*
	 * Scans that found a queue with work that KFD itself holds off the
	 * hardware (its own eviction, a VM fault, a reset, a suspend by ROCr
	 * or a debugger): not pending, so it parks nothing.
	 */
	__u64 off_hw_scans;
	/*
	 * Per-queue actions not done because no live thread of the process
	 * had its mm any more: KFD may be tearing the process down (7.x frees
	 * its queues then, without p->mutex), so nothing of it is touched.
	 */
	__u64 mm_gone;
	/*
	 * Device fences: a preemption failed there (KFD reset a queue or is
	 * resetting the GPU, or returned -EACCES/-EIO/-ETIME): no parks on it
	 * until it has recovered.  Fences begun, devices fenced now, and
	 * actions held back by a device's remap budget (remap_budget).
	 */
	__u64 dev_fences;
	__u64 dev_fenced;
	__u64 remap_throttled;
	/*
	 * Parks by a queue's is_suspended flag that KFD undid behind
	 * gpreempt's back (the debugger's resume_queues(), which a process
	 * reaches on itself through a failing DBG_TRAP_ENABLE or an
	 * enable and disable): seen by the tick's check of every such park,
	 * its process parked by eviction from then on.  And debugger calls
	 * whose return probe found no free instance (missed): every process
	 * known then is parked by eviction only.
	 */
	__u64 suspend_lost;
	__u64 dbg_lost;
	/*
	 * Live queues created past their device's limit (GP_MAX_QUEUES,
	 * KFD's own default) or their user's (max_user_queues): managed,
	 * but their dispatch ids are not read (unknown work, parked below a
	 * busy level).
	 */
	__u64 queues_over_limit;
	/*
	 * Shadow mode: while gpreempt is disabled (enable=0, or gp_config's
	 * enable 2), the policy still runs, on a copy of each queue's state,
	 * and takes each action it decides as done, without touching a queue:
	 * what gpreempt would have done on this workload.  Whether it is on
	 * now and the time spent in it; the parks and unparks; the backend
	 * calls they would have cost (one per queue, one per process and
	 * device for an eviction; each remaps the whole device under HWS),
	 * those made while a higher level of the device had work, and the
	 * calls per device slot.
	 */
	__u64 shadow_active;
	__u64 shadow_ns;
	__u64 shadow_parks;
	__u64 shadow_unparks;
	__u64 shadow_remaps;
	__u64 shadow_lc_remaps;
	__u64 shadow_dev_remaps[GP_DEV_STATS];
	/*
	 * Per level (effective priority 0..15): the time its work was
	 * pending, the highest on its device, while a lower queue there ran
	 * with work, measured between two scans that both saw it.  With
	 * gpreempt enabled, what its parks did not save; in shadow mode, what
	 * they would win back.
	 */
	__u64 lc_wait_ns[GP_PRIO_MAX + 1];
	/*
	 * Latency distributions (gpreemptctl stats prints their percentiles):
	 * detection, the time from the scan before the one that found new
	 * work at the top of a device with an inversion to that scan (the
	 * work appeared in between; the park is decided in that scan), as
	 * detect_hist; the backend's park call, as preempt_hist; and its
	 * unpark call.  Successful calls only.
	 */
	struct gp_lat_hist detect_lat;
	struct gp_lat_hist park_lat;
	struct gp_lat_hist unpark_lat;
	/*
	 * gp_cgroups: its entries now, and the charges it could not take
	 * (full of cgroups charged in the last GP_CGROUP_KEEP_S seconds).
	 */
	__u64 cgroups;
	__u64 cgroups_dropped;
	/*
	 * Each device slot's KFD gpu_id (its node in the KFD topology; 0 when
	 * this kernel's layout does not give it) and the partition (XCP) of
	 * its GPU it is: what the exporter names a slot by, to join AMD's GPU
	 * metrics.  Set when the slot is first used.
	 */
	__u32 dev_gpu_id[GP_DEV_STATS];
	__u32 dev_partition[GP_DEV_STATS];
	/*
	 * The learned hold (hold_payback_pct): the run time an unpark must
	 * promise the levels below before the next work above, this tick
	 * (0: learning off, or no park and unpark measured yet), and the
	 * queues whose level hold is now shorter than hold_us.
	 */
	__u64 hold_payback_us;
	__u64 holds_learned;
	/*
	 * CLOCK_MONOTONIC (ns) of the monitor's last tick: how long ago it
	 * ticked is one read (gpreemptctl's tick_age_ms), for a liveness probe.
	 */
	__u64 last_tick_ns;
	/*
	 * Oversubscription, per device slot: its KFD processes (each one with
	 * a queue there, parked ones included) and how many the hardware
	 * scheduler maps at once (max_proc_per_quantum; 0: this kernel's
	 * layout does not give it).  With more, the HWS time-slices them: a
	 * queue not parked may still wait for its process's turn, and a
	 * parked process keeps its turn.  Devices oversubscribed now, and the
	 * times a device became so.
	 */
	__u32 dev_procs[GP_DEV_STATS];
	__u32 dev_max_procs[GP_DEV_STATS];
	__u64 dev_oversub;
	__u64 oversub_events;
};

/*
 * gp_cgroups: one cgroup's time under gpreempt, keyed by its cgroup v2 id
 * (the kernfs inode number of its directory), the cgroup its queues'
 * process was in when gpreempt last resolved its rules.  Counters only
 * grow, and outlive the queues and processes they were charged for: an
 * entry goes GP_CGROUP_KEEP_S seconds after its last charge, and only
 * then.  Charged every scan, published every 100 ms.
 */
#define GP_CGROUP_KEEP_S 600
struct gp_cgroup_stats {
	__u64 parked_ns;	/* its queues' time parked or shrunk, summed over queues */
	__u64 wait_ns;		/* its queues' time pending, the highest work on their device, while a lower queue ran there with work (lc_wait_ns) */
	__u64 parks;		/* parks of its queues */
	__u64 unparks;
	__u64 last_ns;		/* CLOCK_MONOTONIC of its last charge */
};

struct gp_comm {
	char comm[GP_COMM_LEN];
};

struct gp_prio_override {
	__s32 priority;		/* 0..15; anything else is rejected and counted */
};

/*
 * Value of gp_prio.  A pid names a process only until the process is reaped;
 * the next process to get the number (any user can cycle pids to it) is
 * another one.  So a pid rule also names its process's start: @start is
 * field 22 of /proc/PID/stat (starttime, clock ticks of USER_HZ since boot)
 * as read in the initial time namespace, which is the lead thread's
 * start_boottime / (NSEC_PER_SEC / USER_HZ) (fs/proc/array.c:
 * do_task_stat()).  The module applies the rule only to a KFD process whose
 * lead thread started then, and deletes rules whose pid names no process or
 * another one.
 */
struct gp_prio_pid {
	__s32 priority;		/* 0..15; anything else is rejected and counted */
	__u32 reserved;		/* 0 */
	__u64 start;		/* the process's starttime (USER_HZ ticks since boot) */
};

/* Value of gp_queue_ctl: a per-queue priority and/or a hold (park by hand). */
struct gp_queue_ctl {
	__s32 priority;		/* -1 = no queue rule, else 0..15 */
	/*
	 * 1 = keep the queue parked until this is 0 or gone; 2 = the same,
	 * and while gpreempt is disabled too (shadow mode: the self-test
	 * parks only its own queues so)
	 */
	__u32 hold;
};

/*
 * gp_config is read with a plain copy, without a lock: a concurrent update
 * can be seen torn (some fields old, some new) for one read.  Every field is
 * validated on its own, and the next read (10 ms) sees the whole update.
 */
struct gp_config {
	__u32 enable;		/* 0 = module param, 1 = on, 2 = off */
	__u32 tick_us;
	__u32 hysteresis_us;
	__u32 max_suspend_us;
	__u32 min_slice_us;
	__u32 rules_gen;	/* bumped by gpreemptctl after a rule change */
	__u32 env;		/* GPREEMPT_PRIORITY: 0 = module param, 1 = on, 2 = off */
	__u32 env_max_priority;	/* 0 = module param, else 1..15: highest it grants */
};

#endif /* GP_MAPS_H */
