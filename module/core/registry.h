/* SPDX-License-Identifier: GPL-2.0 */
/*
 * registry.h - the queues and processes gpreempt knows (core/registry.c and
 * its neighbours): their types, the registry, and its API.  The monitor- and
 * backend-owned fields live here too, as the entries carry them.
 */
#ifndef GP_REGISTRY_H
#define GP_REGISTRY_H

#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include "gp_maps.h"
#include "policy/policy.h"
#include "backends/cumask.h"

struct kfd_process;
struct kfd_node;
struct queue;

/* Devices per process gpreempt can hold evictions on. */
#define GP_MAX_DEVS GP_POLICY_MAX_DEVS	/* 64 kfd_nodes: 8 x MI300X in CPX */
/*
 * Queues whose dispatch ids are read: GP_MAX_QUEUES per device, KFD's own
 * default limit (max_num_of_queues_per_device), so one device's queues
 * never decide how another device's are managed; and max_user_queues per
 * user.  A queue past either is still managed, as unknown work (parked
 * below a busy level).  GP_MAX_TRACKED only bounds the registry's memory.
 */
#define GP_MAX_TRACKED (GP_MAX_DEVS * GP_MAX_QUEUES)
#define GP_USER_QUEUES_DEFAULT 1024	/* KFD's limit per process and device */
#define GP_KEEP_OFF 4	/* reset queues per process kept off through a restore */

/**
 * struct gp_defer - an action the monitor hands to the helper thread (defer.c)
 * @work: on the helper's kthread_worker
 * @state: enum gp_defer_state (release/acquire between the two threads)
 * @kind: GP_BACKEND_SUSPEND, _SHRINK or _EVICT
 * @act: GP_ACT_PARK/_SHRINK or GP_ACT_UNPARK, as the policy wanted it
 * @reason: its enum gp_reason
 * @e: the queue (pinned), or NULL: restore an eviction owed
 * @dev: the device (evict)
 * @avoid: for a shrink: the mask to keep clear of
 * @has_avoid: @avoid is set (else NULL for the backend)
 * @dev_cus: for a shrink: the device's CU count
 * @pp: the parameters of the tick that wanted it (for the commit)
 * @ret: the backend's result
 * @t0: when the helper started on it
 * @t1: when it finished
 *
 * Everything but @state is written by the monitor before the work is
 * queued, and by the helper (@ret, @t0, @t1) before @state is DONE.
 * It is here, not in backends/defer.h, as each gp_proc holds one.
 */
struct gp_defer {
	struct kthread_work work;
	int state;
	int kind;
	enum gp_action act;
	enum gp_reason reason;
	struct gp_queue *e;
	struct kfd_node *dev;
	u32 avoid[GP_CU_MASK_WORDS];
	bool has_avoid;
	u32 dev_cus;
	struct gp_policy_params pp;
	int ret;
	u64 t0;
	u64 t1;
};

/**
 * struct gp_proc - a KFD process gpreempt knows
 * @node: in gp_reg.procs
 * @p: the kfd_process (identity only; dereferenced only under a KFD reference)
 * @pasid: its PASID (key for kfd_lookup_process_by_pasid)
 * @tgid: lead thread's tgid
 * @lead: KFD's lead thread (kfd_process.lead_thread), referenced: the
 *	  rules are resolved through it, not through @tgid, which names
 *	  another process once the leader is reaped (a CLONE_VM sibling of
 *	  another tgid can keep the KFD process alive after that)
 * @start: @lead's start, in struct gp_prio_pid.start's unit
 * @comm: lead thread's comm (at registration, refreshed by the rules resolver)
 * @dead: process teardown seen (notifier release, release_internal (7.2+),
 *	  pqm_uninit)
 * @debugged: a debugger attached: hands off
 * @dbg_suspended: the debugger suspended queues since it attached: a queue
 *                 gpreempt parked is the debugger's (never unparked)
 * @evict_only: parked by eviction only, for good: KFD undid a park of its
 *		by is_suspended (the debugger's resume, which the process
 *		can reach on itself), a debugger call of it failed in KFD
 *		after it may have resumed its queues, KFD showed it debugged
 *		where no probe did, or a debugger call went unseen
 * @evicted: devices on which gpreempt holds an eviction not yet restored
 * @nqueues: live queues on this process
 * @tail: its last entry in gp_reg.queues, where its entries are one run
 *	  (NULL: none there)
 * @uid: its lead thread's real uid (init namespace) when registered: whose
 *	 queues count against max_user_queues
 * @rule_prio: monitor-owned: priority from the process rules, or -1
 * @rule_src: monitor-owned: its enum gp_prio_source (GP_SRC_KFD when none)
 * @rules_gen: monitor-owned: rules generation @rule_prio was resolved at
 * @rules_ns: monitor-owned: when it was resolved
 * @env_prio: monitor-owned: GPREEMPT_PRIORITY (uncapped), -1 absent/unreadable
 * @env_read: monitor-owned: the environment has been read (once per process)
 * @env_first_ns: monitor-owned: first read that found pages not present
 * @restore_owed: a queue of it went while gpreempt holds an eviction:
 *		  check each such device for a restore; set and
 *		  cleared by the monitor under gp_reg.lock (gp_reg.nowed)
 * @rules_dropped: monitor-owned: its pid rule and queue controls were
 *		   deleted when it ended
 * @nrefs: queue entries (gone or not) that point at this process; it is
 *	   freed only when this is 0
 * @busy_streak: monitor-owned: actions on it in a row that found p->mutex
 *		 busy (a process that keeps its mutex busy)
 * @busy_since: monitor-owned: when its p->mutex was first found busy, in a run
 *		of busy attempts with no success between (0: none)
 * @busy_last: monitor-owned: the last attempt that found it busy
 * @lock_held: monitor-owned: its p->mutex has been busy for more than
 *	       GP_HELD_MS: the process holds it (an ioctl that does not
 *	       return).  Parked by eviction without the mutex, not handed to
 *	       the helper, until an attempt gets the mutex again
 * @lockless: set by the evict backend (monitor, unload): the last action
 *	      found p->mutex busy and was done without it
 * @held_count: times @lock_held was set (gp_queue_info.mutex_held)
 * @unload_spent: unload only: jiffies spent in this round waiting for its
 *		  p->mutex (each process has its own share of the deadline)
 * @defer: monitor-owned while idle: the action handed to the helper thread
 * @ev: per-device evictions gpreempt holds (monitor-owned)
 * @ev.dev: the device (NULL: free slot)
 * @ev.evicted: 1 while gpreempt holds one evict_process_queues() on it
 * @keep_off: queues (@keep_off.dev, .qid) KFD kept off the hardware though
 *	      their properties say active (a reset one) when gpreempt evicted
 *	      it: kept off through its restore, which would map them again
 * @nkeep: entries of @keep_off in use
 * @reset_retry_ns: until then its queues with @reset are unmanaged: their
 *		    eviction was refused with no KFD call (preempt_evict.c)
 * @reset_backoff_ms: the current back-off of that (0: none)
 */
struct gp_proc {
	struct list_head node;
	struct kfd_process *p;
	u32 pasid;
	u32 ctx;	/* KFD context of the tgid: 0 primary, context_id + 1 (7.2+) */
	pid_t tgid;
	struct task_struct *lead;
	u64 start;
	char comm[TASK_COMM_LEN];
	bool dead;
	bool debugged;
	bool dbg_suspended;
	bool evict_only;
	int evicted;
	int nqueues;
	struct gp_queue *tail;
	uid_t uid;
	int rule_prio;
	u32 rule_src;
	u64 rules_gen;
	u64 rules_ns;
	u64 cgid;	/* cgroup v2 id at the last resolve (gp_cgroups) */
	int env_prio;
	bool env_read;
	u64 env_first_ns;
	bool rules_dropped;
	bool restore_owed;
	int nrefs;
	unsigned int busy_streak;
	u64 busy_since;
	u64 busy_last;
	bool lock_held;
	bool lockless;
	u32 held_count;
	unsigned long unload_spent;
	struct gp_defer defer;
	struct {
		struct kfd_node *dev;
		int evicted;
	} ev[GP_MAX_DEVS];
	struct {
		struct kfd_node *dev;
		u32 qid;
	} keep_off[GP_KEEP_OFF];
	unsigned int nkeep;
	u64 reset_retry_ns;
	u32 reset_backoff_ms;
};

/**
 * struct gp_ptr_id - what backs one CPU page of a queue's dispatch ids
 * @page: the struct page mapped there (0 for a PFN mapping)
 * @file: a VM_PFNMAP/VM_IO mapping's file (a TTM-mmapped BO's render node)
 * @obj: that mapping's vm_private_data (the BO)
 * @off: the page's offset in that file, in pages
 *
 * Compared, never dereferenced: nothing is referenced between ticks.
 */
struct gp_ptr_id {
	unsigned long page;
	unsigned long file;
	unsigned long obj;
	unsigned long off;
};

/**
 * struct gp_queue - one KFD user compute queue
 * @node: in gp_reg.queues (monitor scan list)
 * @hnode: in the (p, qid) hash; unhashed when the queue dies
 * @proc: owner
 * @q: KFD's struct queue (identity only, see gp_proc.p)
 * @dev: the queue's device (kfd_q_device(), identity only)
 * @gen: generation number taken when gpreempt first saw the queue
 * @qid: KFD per-process queue id
 * @kfd_priority: as KFD has it (create/update ioctl)
 * @queue_percent: as KFD has it
 * @rptr_uva: user address of the read dispatch id
 * @wptr_uva: user address of the write dispatch id
 * @ring_uva: user address of the ring (AQL: 64-byte packets)
 * @ring_size: its size in bytes
 * @aql: AQL format (dispatch ids readable); a PM4 queue's never are
 * @over_limit: created past its device's queue limit or its user's
 *		max_user_queues: managed, but its ids are never read (unknown
 *		work: parked below a busy level, never makes its level busy)
 * @dev_slot: its device's slot in gp_reg.devq (counts live queues)
 * @gone: destroyed (or its process is); the monitor reaps it
 * @props_stale: KFD updated the properties: re-read them under p->mutex
 * @ids_at: the pages of the read and write dispatch ids when the queue
 *	    was created (or first read, for a queue adopted at load)
 * @ids_fixed: @ids_at is set
 * @ids_moved: the last read found another page at an id's address
 * @ptr_path: enum gp_ptr_path
 * @ptr_retry_ns: unreadable: no read before this time (0: readable)
 * @ptr_backoff_ms: the current back-off, doubled per failure up to 1 s
 * @last_rptr: last value read
 * @last_wptr: last value read
 * @pq: the policy's view
 * @backend: backend used for the current park
 * @info: the gp_queues map value (monitor-owned)
 * @pending_since_ns: when pending was first seen in this busy period
 * @info_parked_at: when the current park began
 * @leftover: found suspended at load, not by a debugger: an earlier
 *	      gpreempt's park it could not undo at unload
 * @reset: KFD reset the queue, or one of its process on its device (6.12
 *	   has_reset_queue): parked only by eviction (update_queue()
 *	   refuses), which keeps the reset queue off (gp_proc.keep_off)
 * @pinned: a deferred action of its process uses it: not reaped until the
 *	    monitor has its result (set and cleared under gp_reg.lock)
 * @seen: the monitor has set the queue up
 * @acted: already acted on in this tick (process-wide actions)
 * @dirty: @info changed since the last map update
 * @refresh: @info's dispatch ids, queue_percent or pointer path moved since
 *	     the last map update (the periodic publish puts those), or it failed
 * @rule_prio: gp_queue_ctl priority, or -1
 * @hold: gp_queue_ctl hold
 * @rules_gen: rules generation @rule_prio and @hold were read at
 * @rules_ns: when they were read
 */
struct gp_queue {
	struct list_head node;
	struct hlist_node hnode;
	struct gp_proc *proc;
	struct queue *q;
	struct kfd_node *dev;
	u64 gen;
	u32 qid;
	u32 kfd_priority;
	u32 queue_percent;
	u64 rptr_uva;
	u64 wptr_uva;
	u64 ring_uva;
	u64 ring_size;
	bool aql;
	bool sdma;		/* a copy queue: a signal of its level, never parked */
	bool over_limit;
	u8 dev_slot;
	bool gone;
	bool props_stale;
	/* The owner's last SET_CU_MASK (written by the hook, under p->mutex). */
	u32 cu_mask[GP_CU_MASK_WORDS];
	u32 cu_mask_bits;	/* its length; 0: never set (every CU) */
	bool cu_mask_changed;	/* set by the hook, cleared by the monitor */
	bool cu_mask_unknown;	/* adopted at load: a mask may be set that gpreempt never saw */
	struct gp_ptr_id ids_at[2];
	bool ids_fixed;

	/* monitor-owned below */
	bool ids_moved;
	int ptr_path;
	u64 ptr_retry_ns;
	unsigned int ptr_backoff_ms;
	u64 last_rptr;
	u64 last_wptr;
	struct gp_pq pq;
	int backend;
	/* Shadow mode (shadow.c): the policy's state as if its actions were done. */
	struct gp_pq shadow;
	int shadow_backend;
	u64 shadow_parked_at;
	bool shadow_acted;
	struct gp_queue_info info;
	u64 pending_since_ns;
	u64 info_parked_at;
	/* What gp_cgroups was charged of it so far, and the cgroup charged last. */
	u64 cg_id;
	u64 cg_parked_ns;
	u64 cg_parks;
	u64 cg_unparks;
	bool leftover;
	bool reset;
	bool pinned;
	bool seen;
	bool acted;
	bool dirty;
	bool no_shrink;		/* its device cannot take a mask from gpreempt (NO_HWS) */
	u32 cu_count;		/* CUs of cu_mask (0: never set) */
	bool refresh;
	int rule_prio;
	bool hold;
	bool hold_disabled;	/* the hold parks it while gpreempt is disabled too */
	u64 rules_gen;
	u64 rules_ns;
};

/**
 * gp_map_qid() - the qid of @e's gp_queues / gp_queue_ctl key
 * @e: queue
 *
 * One tgid can own several KFD processes (contexts, 7.2+), each with its own
 * queue ids: bits 16..31 carry the context (0 for the primary, so keys of
 * single-context processes are the KFD queue id itself).
 */
static inline u32 gp_map_qid(const struct gp_queue *e)
{
	return e->qid | e->proc->ctx << 16;
}

struct gp_registry {
	spinlock_t lock;	/* protects the lists, hash and the hook-written fields */
	struct list_head queues;
	struct list_head procs;
	unsigned int nqueues;
	unsigned int nprocs;
	unsigned int nowed;	/* processes with restore_owed set */
	unsigned long gen;	/* bumped on every change */
	unsigned long untracked;	/* queues left unmanaged: no memory, or GP_MAX_TRACKED */
	unsigned int over_limit;	/* live queues past a device's or a user's limit */
	struct {
		struct kfd_node *dev;	/* NULL: free; the last slot is shared past GP_MAX_DEVS */
		unsigned int n;		/* its live queues */
	} devq[GP_MAX_DEVS];
	unsigned long unseen;	/* queues KFD changed or destroyed that no probe reported */
	bool complete;		/* every KFD queue is known: adopted at load, none untracked */
	bool have_cu_masks;	/* the owners' CU masks are followed (shrink needs them) */
};

extern struct gp_registry gp_reg;

/**
 * struct gp_registry_ops - what the registry tells its user
 * @changed: something to scan (a queue came, went or changed): any context
 * @proc_freed: @pr is about to be freed: drop what the backends hold for it
 */
struct gp_registry_ops {
	void (*changed)(void);
	void (*proc_freed)(struct gp_proc *pr);
};

/* What a debugger call did to a process: gp_registry_proc_dbg(). */
enum gp_dbg_event {
	GP_DBG_ATTACH,		/* DBG_TRAP_ENABLE succeeded */
	GP_DBG_DETACH,		/* DBG_TRAP_DISABLE succeeded */
	GP_DBG_SUSPEND,		/* the debugger suspends queues */
	GP_DBG_FAILED,		/* DBG_TRAP_ENABLE failed */
};

void gp_registry_init(const struct gp_registry_ops *ops);
int gp_registry_add_queue(struct queue *q);
void gp_registry_update_queue(struct kfd_process *p, u32 qid, u32 priority, u32 percent);
void gp_registry_set_cu_mask(struct kfd_process *p, u32 qid, const u32 *mask, u32 bits);
void gp_registry_del_queue(struct kfd_process *p, u32 qid);
void gp_registry_proc_dead(struct kfd_process *p, bool first);
void gp_registry_proc_dbg(struct kfd_process *p, enum gp_dbg_event ev);
int gp_registry_snapshot(struct gp_queue **out, int max);
void gp_registry_reap(void (*release)(struct gp_queue *e));
void gp_registry_free_all(void (*release)(struct gp_queue *e));
struct gp_proc *gp_registry_next_evicted(struct gp_proc *prev);
int gp_registry_walk_existing(bool adopt);
int gp_registry_adopt_skipped(void);
void gp_registry_adopt_stop(void);
int gp_registry_adopt_queue(struct queue *q);
bool gp_registry_tgid_managed(pid_t tgid, const struct gp_proc *except);
int gp_registry_restores_owed(struct gp_proc **out, int max);
void gp_registry_set_owed(struct gp_proc *pr, bool owed);
bool gp_registry_dev_has_compute(struct gp_proc *pr, struct kfd_node *dev);
void gp_registry_pin(struct gp_proc *pr, struct gp_queue *e, bool pin);

#endif /* GP_REGISTRY_H */
