/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsim.h - the simulated KFD's structures.
 *
 * Every field gpreempt reads sits at the offset the target kernel's real
 * amdgpu has it (build/gp_layout.h, generated from amdgpu's BTF: Debian 6.1,
 * 6.12 or 7.x); each struct is a union of "padding + field" views sized like
 * the real one, followed by kfdsim's private state.  A field some kernels
 * lack (GP_HAVE_* 0) lives in the private state there, where gpreempt does
 * not look, as on the real kernel.  The static_asserts in layout.c fail the
 * build if anything drifts.
 */
#ifndef KFDSIM_H
#define KFDSIM_H

#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include "gp_layout.h"
#include "kfdsim_ioctl.h"

/*
 * What gpreempt probes or calls must be the symbol of that name: noinline is
 * not enough, GCC also clones a function whose callers pass constants
 * (kfd_dbg_trap_enable.constprop.0), and the callers then skip the probe.
 * test/unit/layout-check.sh fails on any such clone.
 */
#define KS_KFD_ENTRY __attribute__((__noipa__))	/* implies noinline */

/* A member of struct @s placed at its real offset. */
#define KS_AT(s, f, decl) struct { u8 __pad_##f[GP_OFF_##s##__##f]; decl; }

/*
 * KS_SKEW (testing only, make's kfdsim-skew build): queue_properties.priority
 * sits KS_SKEW bytes later than in the real amdgpu, as in a KFD built from
 * other sources; gpreempt must refuse to load next to it (sim-layout.sh).
 */
#ifndef KS_SKEW
#define KS_SKEW 0
#endif

#define KS_MAX_PDDS (GP_SZ_kfd_process__pdds / sizeof(void *))
/*
 * ndev= limit: 24 devices (more than gpreempt's old 16-entry tables, S3
 * F17), or as many as kfd_process.pdds holds where that is fewer (6.1:
 * MAX_GPU_INSTANCE 16; 6.12 and 7.x: 64).
 */
#if GP_SZ_kfd_process__pdds / 8 < 24
#define KS_MAX_DEVS KS_MAX_PDDS
#else
#define KS_MAX_DEVS 24
#endif

#if !GP_HAVE_kfd_node
/*
 * 6.1: no struct kfd_node; queues and process devices point at the
 * struct kfd_dev, which holds the dqm.  kfdsim's "node" is then a kfd_dev.
 */
#define kfd_node kfd_dev
#endif

struct dentry;
struct kfd_process;
struct kfd_node;
struct queue;
struct device_queue_manager;
struct qcm_process_device;

/* kfd_priv.h: the same in 6.1 .. 7.3 and ROCm DKMS (size 24). */
enum mqd_update_flag {
	UPDATE_FLAG_DBG_WA_ENABLE = 1,
	UPDATE_FLAG_DBG_WA_DISABLE = 2,
	UPDATE_FLAG_IS_GWS = 4,
};

struct mqd_update_info {
	union {
		struct {
			u32 count;	/* bits, a multiple of 32 */
			u32 *ptr;
		} cu_mask;
	};
	enum mqd_update_flag update_flag;
};

/*
 * KFD's enums, with the values of the real amdgpu, as enum types so that
 * their enumerators are in kfdsim's BTF as in amdgpu's (gpreempt checks them
 * at insmod: module/kfd/layout_check.c).
 */
enum kfd_queue_type {
	KFD_QUEUE_TYPE_COMPUTE = GP_ENUM_KFD_QUEUE_TYPE_COMPUTE,
	KFD_QUEUE_TYPE_SDMA = GP_ENUM_KFD_QUEUE_TYPE_SDMA,
	KFD_QUEUE_TYPE_SDMA_XGMI = GP_ENUM_KFD_QUEUE_TYPE_SDMA_XGMI,
};

enum kfd_queue_format {
	KFD_QUEUE_FORMAT_AQL = GP_ENUM_KFD_QUEUE_FORMAT_AQL,
};

enum kfd_sched_policy {
	KFD_SCHED_POLICY_HWS = GP_ENUM_KFD_SCHED_POLICY_HWS,
	KFD_SCHED_POLICY_NO_HWS = GP_ENUM_KFD_SCHED_POLICY_NO_HWS,
};

struct queue_properties {
	union {
		u8 __size[GP_SIZEOF_queue_properties];
		KS_AT(queue_properties, type, enum kfd_queue_type type);
		KS_AT(queue_properties, format, enum kfd_queue_format format);
		KS_AT(queue_properties, queue_id, unsigned int queue_id);
		KS_AT(queue_properties, queue_address, u64 queue_address);
		KS_AT(queue_properties, queue_size, u64 queue_size);
		struct {
			u8 __pad_priority[GP_OFF_queue_properties__priority + KS_SKEW];
			u32 priority;
		};
		KS_AT(queue_properties, queue_percent, u32 queue_percent);
		KS_AT(queue_properties, read_ptr, void __user *read_ptr);
		KS_AT(queue_properties, write_ptr, void __user *write_ptr);
		KS_AT(queue_properties, is_evicted, bool is_evicted);
#if GP_HAVE_queue_properties__is_suspended
		KS_AT(queue_properties, is_suspended, bool is_suspended);
#endif
		KS_AT(queue_properties, is_active, bool is_active);
#if GP_HAVE_queue_properties__is_reset
		KS_AT(queue_properties, is_reset, bool is_reset);
#endif
	};
};

/* is_suspended: 6.12+; 6.1 has none (nothing suspends a single queue). */
#if GP_HAVE_queue_properties__is_suspended
#define KS_SUSPENDED(props) ((props).is_suspended)
#else
#define KS_SUSPENDED(props) ((void)(props), false)
#endif

/* enum kfd_queue_format values not in gp_layout.h */
#define KS_QUEUE_FORMAT_PM4 0

/* QUEUE_IS_ACTIVE() of 6.12 priv.h:554 */
#define QUEUE_IS_ACTIVE(q) ((q).queue_size > 0 && (q).queue_address != 0 && \
			    (q).queue_percent > 0 && !(q).is_evicted && !KS_SUSPENDED(q))

struct process_queue_manager {
	struct kfd_process *process;
	struct list_head queues;
	unsigned long *queue_slot_bitmap;
};

struct process_queue_node {
	struct queue *q;
	void *kq;
	struct list_head process_queue_list;
};

struct qcm_process_device {
	union {
		u8 __size[GP_SIZEOF_qcm_process_device];
		struct device_queue_manager *dqm;
		KS_AT(qcm_process_device, pqm, struct process_queue_manager *pqm);
		KS_AT(qcm_process_device, queues_list, struct list_head queues_list);
		KS_AT(qcm_process_device, is_debug, bool is_debug);
		KS_AT(qcm_process_device, evicted, unsigned int evicted);
	};
};

struct kfd_process_device {
	union {
		u8 __size[GP_SIZEOF_kfd_process_device];
		struct kfd_node *dev;
		KS_AT(kfd_process_device, process, struct kfd_process *process);
		KS_AT(kfd_process_device, qpd, struct qcm_process_device qpd);
#if GP_HAVE_kfd_process_device__has_reset_queue
		KS_AT(kfd_process_device, has_reset_queue, bool has_reset_queue);
#endif
#if GP_HAVE_kfd_process_device__pasid
		KS_AT(kfd_process_device, pasid, u32 pasid);	/* 6.17+ */
#endif
	};
#if !GP_HAVE_kfd_process_device__has_reset_queue
	bool has_reset_queue;	/* 6.1: kfdsim's own bookkeeping only */
#endif
	/*
	 * register_process() (6.12 dqm.c:1392-1427): on the dqm's process
	 * list from the process's first queue on the device to its last.
	 */
	struct list_head ks_reg;
	bool ks_registered;
	/* /dev/kfd (kfd.c): the render-node file ACQUIRE_VM bound, not held */
	const struct file *ks_drm_file;
	struct ks_buf *ks_doorbells;	/* the process's doorbell slice */
	u32 ks_reset_gen;	/* reset.c: the GPU reset that last evicted it */
};

/* kfdsim-private per-queue state: pinned user memory and the CP's view. */
#define KS_MAX_INFLIGHT 16
#define KS_MAX_SE 8		/* KFD_MAX_NUM_SE */

struct ks_packet_run {
	u64 id;			/* packet index */
	u32 wg_total;
	u32 wg_launched;
	u32 wg_done;
	u64 ns_per_wg;
	bool barrier;		/* KFDSIM_PKT_F_BARRIER */
	bool nopreempt;		/* KFDSIM_PKT_F_NOPREEMPT: CWSR cannot save it */
	u64 start_ns;		/* model time its first workgroup started, 0: none */
	u64 *signal;		/* kernel mapping, or NULL */
	u64 signal_va;		/* AQL: the completion amd_signal_t, or 0 */
};

struct ks_saved_wg {
	u32 slot;		/* index into inflight[] (packet id % KS_MAX_INFLIGHT) */
	u64 remaining_ns;	/* still to run when restored */
};

#define KS_MAX_UMAPS 4		/* ring, rptr, wptr, signals */

struct ks_buf;

/*
 * Why a compute queue with work is not done yet (gpu.c, debugfs "acct"):
 * its time from the CP's first sight of the work (write index ahead of the
 * read index) until the last packet retired, split by the queue's state.
 */
enum ks_acct_cat {
	KS_ACCT_FETCH,		/* runnable, nothing fetched to run: poll, barrier deps */
	KS_ACCT_DETECT,		/* work fetched, no CU, no queue unmapped (parked) yet */
	KS_ACCT_CU_WAIT,	/* ... after a park: CUs held by other queues */
	KS_ACCT_CWSR_SAVE,	/* ... a CU it may use is busy saving a context */
	KS_ACCT_REMAP_PREEMPT,	/* device stalled by a runlist change that saved its waves */
	KS_ACCT_REMAP_WAIT,	/* device stalled by one that did not */
	KS_ACCT_UNMAPPED,	/* not mapped: parked, evicted, runlist down */
	KS_ACCT_SLICED,		/* mapped: an oversubscribed HWS runs another slice */
	KS_ACCT_RUN,		/* at least one of its workgroups on a CU */
	KS_ACCT_CP_LATE,	/* its CU free or its waves done: the CP's step not come yet */
	KS_ACCT_N,
};

struct ks_acct {
	u64 last_ns;		/* accounted up to */
	u64 start_ns;		/* the current busy period's start, 0: idle */
	u64 period_ns;		/* categories of the current period */
	bool parked;		/* a queue was unmapped in this period */
	bool hit;		/* a runlist change saved its waves; until they run */
	u64 ns[KS_ACCT_N];
	u64 total_ns;		/* closed periods, end - start */
	u64 requests;		/* closed periods */
	u64 ideal_ns;		/* retired packets' service time on all CUs allowed */
	u64 hits;		/* runlist changes or removes that saved its waves */
};

struct ks_queue {
	struct page **pages;	/* pinned: ring, rptr/wptr, signals */
	int npages;
	void *vmaps[KS_MAX_UMAPS];	/* vmaps of pinned pages */
	int nvmaps;
	struct ks_buf *bufs[KS_MAX_UMAPS];	/* driver buffers used */
	int nbufs;
	void *ring_map;		/* kernel address of the ring */
	void *sig_map;		/* ... of the signal area */
	u64 *rptr;
	u64 *wptr;
	u64 ring_uva, sig_uva;
	u32 ring_slots, sig_size;
	bool mapped;		/* on the simulated hardware */
	u32 slice;		/* HWS: its process's slice of an oversubscribed runlist */
	u32 hw_prio;		/* priority of the MQD when last mapped */
	int oracle_level;	/* sched=oracle: its cgroup rule's level, -1: none */
	bool sdma;		/* SDMA: one packet at a time, no CU */
	bool aql;		/* real AQL packets and amd_signal_t (/dev/kfd queues) */
	bool sdma_busy;		/* a packet is on the copy engine */
	u64 sdma_start_ns;
	u64 sdma_end_ns;
	u64 sdma_left_ns;	/* of a preempted packet, 0: none */
	bool sdma4;		/* SDMA v4 packets, byte offsets (/dev/kfd, sdma.c) */
	bool sdma_error;	/* sdma4: stopped at a packet it cannot run */
	u64 sdma_rptr;		/* sdma4: byte offset of the next packet */
	u64 *doorbell;		/* sdma4: its doorbell, the write offset */
	u32 ring_bytes;
	u64 sdma_bytes;		/* sdma4: copied or filled */
	u64 fetched;		/* next packet index to fetch */
	u64 retired;		/* next packet index to retire (== *rptr) */
	struct ks_packet_run inflight[KS_MAX_INFLIGHT];
	struct ks_saved_wg *saved;	/* CWSR-saved workgroups, num_cu entries */
	u32 nsaved;
	u32 running;		/* workgroups on CUs */
	u32 running_max;	/* the most workgroups on CUs at once */
	u64 busy_ns;
	u64 first_start_ns;	/* model time the first workgroup or copy started, 0: none */
	u64 last_end_ns;	/* model time the last finished one ended */
	u64 packets_done;
	u64 aql_dispatches;	/* AQL: kernel dispatches fetched, utility ones included */
	u64 aql_utility;	/* ... of them, pointers at kernarg[0]: not durations */
	u64 aql_barriers;	/* AQL barrier-AND/OR packets fetched */
	u64 aql_vendor;		/* AQL vendor-specific packets, completed as no-ops */
	u64 blit_bytes;		/* copied or filled for ROCr's blit kernels */
	u64 preemptions;	/* unmapped with workgroups running */
	u32 se_mask[KS_MAX_SE];	/* the MQD's per-engine CU enables (cumask.c) */
	u32 cu_mask_cus;	/* CUs the mask enables */
	u64 saves, restores;
	struct ks_acct acct;	/* under the device's CP lock */
	struct list_head gpu_node;	/* in ks_gpu.queues */
};

struct queue {
	union {
		u8 __size[GP_SIZEOF_queue];
		struct list_head list;
		KS_AT(queue, mqd, void *mqd);
		KS_AT(queue, properties, struct queue_properties properties);
		KS_AT(queue, process, struct kfd_process *process);
		KS_AT(queue, device, struct kfd_node *device);
	};
	struct ks_queue ks;
};

/*
 * KFD's own evictions of a process (evict.c): kfd_process's eviction_work
 * and restore_work, and amdgpu's restore_userptr_work.
 */
struct ks_kfd_evict {
	struct mutex lock;	/* the flags below; taken before dqm->lock */
	struct delayed_work eviction_work;
	struct delayed_work restore_work;
	struct delayed_work userptr_work;
	u64 last_restore;	/* jiffies, last_restore_timestamp */
	unsigned int ttm_restore_ms;
	unsigned int ttm_fails;	/* BO validations still to fail */
	bool ttm;		/* a TTM eviction or its restore is pending */
	bool userptr;		/* a userptr restore is pending */
	bool dead;		/* torn down: nothing more is scheduled */
};

/* A process's KFD events (events.c) */
struct ks_process_events {
	struct mutex mutex;	/* idr changes, page, waiter setup */
	struct idr idr;		/* struct ks_event by id (RCU for the CP) */
	struct ks_buf *page;	/* the event page */
	u64 *slots;		/* its kernel address, set once */
	u32 count;		/* signal events + the reserved id 0 */
};

struct kfd_process {
	union {
		u8 __size[GP_SIZEOF_kfd_process];
		KS_AT(kfd_process, mm, void *mm);
		KS_AT(kfd_process, ref, struct kref ref);
		KS_AT(kfd_process, release_work, struct work_struct release_work);
		KS_AT(kfd_process, mutex, struct mutex mutex);
		KS_AT(kfd_process, lead_thread, struct task_struct *lead_thread);
		KS_AT(kfd_process, mmu_notifier, struct mmu_notifier mmu_notifier);
#if GP_HAVE_kfd_process__pasid
		KS_AT(kfd_process, pasid, u32 pasid);
#endif
		KS_AT(kfd_process, pdds, struct kfd_process_device *pdds[KS_MAX_PDDS]);
		KS_AT(kfd_process, n_pdds, u32 n_pdds);
		KS_AT(kfd_process, pqm, struct process_queue_manager pqm);
#if GP_HAVE_kfd_process__debug_trap_enabled
		KS_AT(kfd_process, debug_trap_enabled, bool debug_trap_enabled);
#endif
#if GP_HAVE_kfd_process__context_id
		KS_AT(kfd_process, context_id, u16 context_id);	/* 7.2+ */
#endif
	};
	/* kfdsim-private */
#if !GP_HAVE_kfd_process__pasid
	/*
	 * 6.17+: the pdds' are the real ones, each set when its device is
	 * first used (ks_pdd_bind()); this one, the first a device gets, names
	 * the process in kfdsim's own output.
	 */
	u32 pasid;
#endif
#if !GP_HAVE_kfd_process__debug_trap_enabled
	bool debug_trap_enabled;	/* 6.1: qpd.is_debug is what KFD shows */
#endif
	struct list_head table_node;	/* ks_processes, SRCU */
	struct mm_struct *ks_mm;	/* the mm it was created for (lookup only) */
	atomic_t test_evictions;	/* KFDSIM_TEST_EVICT not yet restored */
	atomic_t holding;		/* KFDSIM_TEST_HOLD_REF running */
	struct delayed_work hold_work;	/* ... drops its reference */
	struct kfd_process_device pdd[KS_MAX_DEVS];	/* pdds[i] = &pdd[i] */
	unsigned long qid_bitmap[BITS_TO_LONGS(1024)];
	struct xarray ks_bos;	/* /dev/kfd buffer objects by handle (kfd.c) */
	spinlock_t ks_vm_lock;	/* ks_vm: after the gpu lock */
	struct list_head ks_vm;	/* buffer objects mapped to a GPU: what the CP reaches */
	struct ks_process_events ks_ev;	/* /dev/kfd events (events.c) */
	struct ks_kfd_evict ks_evict;	/* KFD's own evictions (evict.c) */
	struct xarray ks_knames;	/* kernel_object -> struct ks_kname (kname.c) */
	atomic_t ks_nknames;		/* ... entries, at most KS_KNAME_MAX */
};

typedef int ks_dqm_queue_fn(struct device_queue_manager *dqm, struct queue *q,
			    struct mqd_update_info *minfo);
typedef int ks_dqm_qpd_fn(struct device_queue_manager *dqm, struct qcm_process_device *qpd);

struct device_queue_manager_ops {
	union {
		u8 __size[GP_SIZEOF_device_queue_manager_ops];
		KS_AT(device_queue_manager_ops, update_queue, ks_dqm_queue_fn *update_queue);
		KS_AT(device_queue_manager_ops, evict_process_queues,
		      ks_dqm_qpd_fn *evict_process_queues);
		KS_AT(device_queue_manager_ops, restore_process_queues,
		      ks_dqm_qpd_fn *restore_process_queues);
	};
};

struct device_queue_manager {
	union {
		u8 __size[GP_SIZEOF_device_queue_manager];
		struct device_queue_manager_ops ops;
		KS_AT(device_queue_manager, dev, struct kfd_node *dev);
		KS_AT(device_queue_manager, sched_policy, enum kfd_sched_policy sched_policy);
		KS_AT(device_queue_manager, is_hws_hang, bool is_hws_hang);
		KS_AT(device_queue_manager, sched_running, bool sched_running);
		KS_AT(device_queue_manager, processes_count, unsigned int processes_count);
	};
	/*
	 * dqm->queues: the registered processes' pdds, newest first
	 * (register_process() list_add()s), the order pm_create_runlist_ib()
	 * maps them in.
	 */
	struct list_head ks_procs;
	struct mutex lock;	/* "dqm_lock": after p->mutex, before the gpu lock */
	/*
	 * increment/decrement_queue_count() (7.3 dqm.c): active queues of
	 * registered processes, under the lock.  unsigned, as KFD's: a second
	 * decrement wraps.
	 */
	unsigned int active_queue_count;
	unsigned int active_cp_queue_count;
};

/* The one member of amdgpu's kgd2kfd_shared_resources gpreempt reads. */
struct kgd2kfd_shared_resources {
	bool enable_mes;
};

#if GP_HAVE_kfd_node
struct kfd_dev {
	union {
		u8 __size[GP_SIZEOF_kfd_dev];
		KS_AT(kfd_dev, shared_resources_enable_mes,
		      struct kgd2kfd_shared_resources shared_resources);
		KS_AT(kfd_dev, cwsr_enabled, bool cwsr_enabled);
	};
};

struct kfd_node {
	union {
		u8 __size[GP_SIZEOF_kfd_node];
		KS_AT(kfd_node, dqm, struct device_queue_manager *dqm);
		KS_AT(kfd_node, kfd, struct kfd_dev *kfd);
#if GP_HAVE_kfd_node__id
		KS_AT(kfd_node, id, unsigned int id);
#endif
#if GP_HAVE_kfd_node__node_id
		KS_AT(kfd_node, node_id, unsigned int node_id);
#endif
#if GP_HAVE_kfd_node__max_proc_per_quantum
		KS_AT(kfd_node, max_proc_per_quantum, unsigned int max_proc_per_quantum);
#endif
	};
};
#else
struct kfd_dev {
	union {
		u8 __size[GP_SIZEOF_kfd_dev];
		KS_AT(kfd_dev, dqm, struct device_queue_manager *dqm);
		KS_AT(kfd_dev, shared_resources_enable_mes,
		      struct kgd2kfd_shared_resources shared_resources);
		KS_AT(kfd_dev, cwsr_enabled, bool cwsr_enabled);
#if GP_HAVE_kfd_dev__id
		KS_AT(kfd_dev, id, unsigned int id);
#endif
#if GP_HAVE_kfd_dev__max_proc_per_quantum
		KS_AT(kfd_dev, max_proc_per_quantum, unsigned int max_proc_per_quantum);
#endif
	};
	struct kfd_dev *kfd;	/* kfdsim-private: the device of 6.3+'s node */
};
#endif

/*
 * The topology's gpu_id of a node (kfd_topology.c: gpu->id = gpu_id) and
 * its partition (one per device here), where the layout has them.
 */
static inline void ks_node_set_ids(struct kfd_node *n, unsigned int gpu_id)
{
#if GP_HAVE_kfd_node__id
	n->id = gpu_id;
#elif GP_HAVE_kfd_dev__id
	n->id = gpu_id;
#endif
#if GP_HAVE_kfd_node__node_id
	n->node_id = 0;
#endif
}

/*
 * The KFD functions gpreempt probes or calls, declared with the types
 * generated from the real amdgpu's BTF: a definition with another prototype
 * does not compile.
 */
gp_fn_pqm_create_queue_t pqm_create_queue;
gp_fn_kfd_procfs_add_queue_t kfd_procfs_add_queue;
gp_fn_pqm_destroy_queue_t pqm_destroy_queue;
gp_fn_pqm_update_queue_properties_t pqm_update_queue_properties;
gp_fn_pqm_get_user_queue_t pqm_get_user_queue;
gp_fn_pqm_uninit_t pqm_uninit;
gp_fn_kfd_lookup_process_by_pasid_t kfd_lookup_process_by_pasid;
gp_fn_kfd_unref_process_t kfd_unref_process;
struct kfd_process *ks_lookup_pasid(u32 pasid);
gp_fn_kfd_process_notifier_release_t kfd_process_notifier_release;
gp_fn_kfd_process_evict_queues_t kfd_process_evict_queues;
gp_fn_kfd_process_restore_queues_t kfd_process_restore_queues;
#if GP_HAVE_kfd_dbg_trap_enable
gp_fn_kfd_dbg_trap_enable_t kfd_dbg_trap_enable;
#endif
#if GP_HAVE_kfd_process_notifier_release_internal
gp_fn_kfd_process_notifier_release_internal_t kfd_process_notifier_release_internal;
#else
void kfd_process_notifier_release_internal(struct kfd_process *p);
#endif

#define KS_CONTEXT_ID_PRIMARY 0xffff	/* KFD_CONTEXT_ID_PRIMARY (7.2+) */
#if GP_HAVE_kfd_dbg_trap_disable && GP_HAVE_queue_properties__is_suspended
gp_fn_kfd_dbg_trap_disable_t kfd_dbg_trap_disable;
gp_fn_suspend_queues_t suspend_queues;
/* fault/debugger: "attach|suspend|detach PASID" (process.c) */
extern const struct file_operations ks_dbg_fops;
#endif

/* ---- module parameters and global state (main.c) ---- */
struct ks_params {
	unsigned int ndev;	/* simulated devices, each with its dqm and CP */
	unsigned int num_cu;
	unsigned int num_se;	/* shader engines: CU c is in engine c % num_se */
	bool mes;		/* sched=mes (or nohws): per-queue remove/add */
	bool nohws;		/* sched=nohws: KFD_SCHED_POLICY_NO_HWS */
	bool oracle;		/* sched=oracle: the CP preempts by level (MES mapping) */
	bool cwsr;		/* kfd_dev.cwsr_enabled */
	unsigned int runlist_us;
	unsigned int mes_us;
	unsigned int cwsr_save_us;
	unsigned int cwsr_restore_us;
	unsigned int poll_us;
	unsigned int time_scale;	/* every modelled time xK (us params stored scaled) */
	bool kfd;		/* register /dev/kfd, its topology and DRM devices */
	unsigned int render_minor;	/* retired: set, it refuses the load */
	bool fence_spin;	/* the firmware's turn is waited for on the CPU, as KFD does */
	unsigned int max_proc;	/* kfd_node.max_proc_per_quantum: processes the HWS maps at once */
	unsigned int hqds;	/* get_cp_queues_num(): the HQDs KFD may map compute queues to */
	unsigned int quantum_us;	/* an oversubscribed runlist's time slice (scaled) */
	bool slice_idle;	/* a slice with nothing to run still takes its quantum */
};

extern struct ks_params ks_param;

struct ks_gpu;

/*
 * One simulated device (a kfd_node with its dqm, as in KFD): its own
 * command processor, CUs, runlist and HWS state.  Processes have one pdd
 * per device, in device order.
 */
struct ks_device {
	struct kfd_node node;
	struct device_queue_manager dqm;
	struct kfd_dev kfd;
	struct ks_gpu *gpu;	/* gpu.c */
	unsigned int id;	/* index in ks_devs[], the ioctls' gpu_id */
};

extern struct ks_device ks_devs[KS_MAX_DEVS];
/* Device 0, where single-device code and the fault knobs act. */
#define ks_node (ks_devs[0].node)
#define ks_dqm (ks_devs[0].dqm)

static inline struct ks_device *ks_dev_of(struct kfd_node *node)
{
	return container_of(node, struct ks_device, node);
}

static inline struct ks_device *ks_dev_of_dqm(struct device_queue_manager *dqm)
{
	return container_of(dqm, struct ks_device, dqm);
}

struct ks_stats {
	atomic64_t packets_completed;
	atomic64_t workgroups_completed;
	atomic64_t preemptions;
	atomic64_t cwsr_saves;
	atomic64_t cwsr_restores;
	atomic64_t oracle_preemptions;	/* workgroups saved by sched=oracle's CP */
	atomic64_t cwsr_dropped;	/* saved workgroups of destroyed queues */
	atomic64_t workgroups_dropped;	/* running on a CU when destroyed */
	atomic64_t runlist_updates;
	atomic64_t oversubscribed_runlists;	/* runlists built time-sliced */
	atomic64_t hws_slices;		/* slice switches of an oversubscribed runlist */
	atomic64_t mes_calls;
	atomic64_t nohws_refused;	/* NO_HWS loads refused: not in the owner's mm */
	atomic64_t drain_unmaps;	/* unmaps with waves running and CWSR off */
	atomic64_t evict_calls;		/* evict_process_queues, per qpd */
	atomic64_t restore_calls;
	atomic64_t cu_mask_updates;	/* update_queue calls with a CU mask */
	atomic64_t aql_dispatches;	/* as ks_queue's, over every queue */
	atomic64_t aql_utility;
	atomic64_t aql_barriers;
	atomic64_t aql_vendor;
	atomic64_t event_interrupts;	/* events signalled by the CP (events.c) */
	atomic64_t acct_periods;	/* busy periods of queues accounted (gpu.c) */
	atomic64_t acct_mismatches;	/* ... whose categories did not sum to their length */
	atomic64_t notifier_releases;	/* kfd_process_notifier_release() runs */
	atomic64_t notifier_releases_foreign;	/* ... in a task not of the process */
	atomic64_t fence_spin_us;	/* fence_spin=1: firmware waits spun on the CPU */
	atomic64_t active_count_mismatches;	/* dqm counters != its active queues */
	atomic64_t preempt_timeouts;	/* unmaps/removes a wave did not let finish (reset.c) */
	atomic64_t fence_timeouts;	/* HIQ/MES fences that timed out (reset.c) */
	atomic64_t queues_reset;	/* queues KFD reset after a preemption timed out */
	atomic64_t gpu_resets;		/* modelled GPU resets (and 6.1 HWS hangs) */
	atomic64_t workgroups_reset;	/* workgroups killed by those resets */
	atomic64_t reset_events;	/* reset/HW-exception events owed to processes */
	atomic_t evicted_refs;		/* sum of qpd->evicted over live processes */
	atomic_t processes;
	atomic_t queues;
};

extern struct ks_stats ks_stats;

/* ---- fault.c: fault injection ---- */
enum ks_fault_point {
	KS_F_UPDATE_QUEUE,
	KS_F_EVICT,
	KS_F_RESTORE,
	KS_F_DESTROY,
	KS_F_UPDATE_MAP,
	KS_F_NR,
};

struct ks_fault_knobs {
	unsigned int slow_runlist_us;
	unsigned int hws_hang_after;
	unsigned int lookup_delay_us;
	unsigned int unref_delay_us;
	unsigned int lookup_fail_pasid;
	unsigned int teardown_delay_us;
	unsigned int update_queue_lock_delay_us;
	bool reuse_queue_mem;
};

struct ks_fault_counts {
	atomic64_t hws_hangs;
	atomic64_t slow_runlists;
	atomic64_t mutex_holds;
	atomic64_t lookup_delays;
	atomic64_t queue_reuses;
	atomic64_t lookup_fails;
	atomic64_t unref_delays;
	atomic64_t mutex_hammers;
	atomic64_t teardown_delays;
	atomic64_t update_queue_lock_delays;
};

extern struct ks_fault_knobs ks_fault_knobs;
extern struct ks_fault_counts ks_fault_counts;
int ks_fault(enum ks_fault_point fp);
unsigned int ks_fault_runlist(void);
void ks_fault_lookup_delay(void);
void ks_fault_unref_delay(unsigned long caller);
void ks_fault_sleep(const unsigned int *knob_us, atomic64_t *count);
struct queue *ks_queue_alloc(void);
void ks_queue_free(struct queue *q);
int ks_fault_init(void);
void ks_fault_debugfs(struct dentry *parent);
void ks_fault_exit(void);

/* ---- process.c ---- */
/*
 * 7.x layouts: a process's queues are dequeued and freed at its teardown,
 * without p->mutex (7.3 kfd_process.c:1416-1417), not at its last reference.
 */
#define KS_DEQUEUE_AT_TEARDOWN GP_HAVE_kfd_process__context_id

int ks_process_create(struct kfd_process **out);
int ks_process_create_secondary(struct file *filp);
int ks_pdd_bind(struct kfd_process_device *pdd);
void ks_release_tasks_show(struct seq_file *m);
bool ks_process_is_primary(struct kfd_process *p);
int ks_test_hold(struct kfd_process *p, u64 ms);
int ks_dbg_enable(struct kfd_process *p, u64 rinfo);
int ks_test_reset_queue(struct kfd_process *p, u32 qid);
int ks_dbg_flip(struct kfd_process *p);
void ks_process_file_release(struct kfd_process *p);
int ks_test_evict(struct kfd_process *p);
int ks_test_restore(struct kfd_process *p);
int ks_processes_init(void);
void ks_processes_exit(void);

/* ---- evict.c: KFD's own evictions (debugfs kfd_evict) ---- */
void ks_kfd_evict_init(struct kfd_process *p);
void ks_kfd_evict_cancel(struct kfd_process *p);
void ks_kfd_evict_userptr_notify(struct kfd_process *p);
void ks_kfd_evict_stats_show(struct seq_file *m);
int ks_kfd_evict_debugfs(struct dentry *parent);
void ks_kfd_evict_exit(void);

/* ---- gpu.c: the simulated command processor ---- */
int ks_gpu_start(struct ks_device *d);
void ks_gpu_stop(struct ks_device *d);
void ks_gpu_add_queue(struct queue *q);
void ks_gpu_remove_queue(struct queue *q);
void ks_gpu_mes_set(struct queue *q, bool mapped);
void ks_gpu_hws_mark(struct queue *q, bool mapped);
bool ks_gpu_hws_execute(struct ks_device *d);
bool ks_gpu_hws_unmap_all(struct ks_device *d);
struct queue *ks_gpu_unsaveable(struct ks_device *d, struct queue *only);
void ks_gpu_kill(struct ks_device *d, struct queue *only);
void ks_gpu_flag_reset(struct ks_device *d);
void ks_gpu_reset_evict(struct ks_device *d, u32 gen);
void ks_gpu_reset_restart(struct ks_device *d);
void ks_gpu_reset_show(struct ks_device *d, struct seq_file *m);

/* ---- reset.c: preemptions that time out, queue and GPU resets ---- */
int ks_reset_unmap(struct device_queue_manager *dqm, struct queue *only, bool *skip);
int ks_reset_add(struct device_queue_manager *dqm);
void ks_reset_evicted(struct device_queue_manager *dqm);
int ks_reset_init(void);
/* smi.c: AMDKFD_IOC_SMI_EVENTS, the GPU reset events */
int ks_smi_open(u32 dev, u32 *fd);
void ks_smi_gpu_reset(u32 dev, bool post);
void ks_reset_debugfs(struct dentry *parent);
void ks_reset_exit(void);
void ks_gpu_oracle_refresh(void);
unsigned int ks_gpu_count_active(struct ks_device *d, unsigned int *cp);

/* ---- sdma.c: the SDMA v4 engine of /dev/kfd SDMA queues ---- */
int ks_sdma_check_params(void);
void ks_sdma_attach(struct queue *q, struct ks_buf *doorbells, u32 offset);
void ks_sdma_finish_locked(struct queue *q, u64 now);
void ks_sdma_run_locked(struct queue *q, u64 now);
void ks_sdma_stats_show(struct seq_file *m);

/* ---- oracle.c: sched=oracle's levels ---- */
#define KS_MAX_LEVEL 15	/* the highest queue priority and rule level */
int ks_oracle_level(struct task_struct *task);
void ks_oracle_debugfs(struct dentry *parent);
void ks_gpu_show(struct ks_device *d, struct seq_file *m);
void ks_gpu_acct_show(struct ks_device *d, struct seq_file *m);
void ks_acct_gone_show(struct seq_file *m);

/* ---- cumask.c: per-queue CU masks ---- */
void ks_cu_mask_init(struct queue *q);
bool ks_cu_allowed(const struct queue *q, u32 cu);
void ks_update_mqd_cu_mask(struct queue *q, struct mqd_update_info *minfo);
int pqm_update_mqd(struct process_queue_manager *pqm, unsigned int qid,
		   struct mqd_update_info *minfo);
int ks_queue_set_cu_mask(struct kfd_process *p, u32 qid, u32 nbits, u64 uptr);

/* ---- dqm.c ---- */
void ks_dqm_init(struct ks_device *d);
int ks_dqm_create_queue(struct queue *q, struct qcm_process_device *qpd);
int ks_dqm_destroy_queue(struct queue *q, struct qcm_process_device *qpd);
void ks_dqm_process_termination(struct qcm_process_device *qpd);
void ks_dqm_counts_show(struct seq_file *m);
void ks_queue_count(struct device_queue_manager *dqm, struct queue *q, int d);

/* ---- pqm.c ---- */
struct kfd_process_device *ks_pdd(struct kfd_process *p, struct kfd_node *dev);
int ks_pqm_create_queue(struct process_queue_manager *pqm, struct kfd_node *dev,
			struct file *f, struct queue_properties *properties, unsigned int *qid);

/* ---- mmap.c: queue memory, driver buffers ---- */
#ifdef KS_NO_VM_FLAGS_SET
/* Before 6.3 (Debian 6.1) vm_flags was written directly. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

int ks_queue_pin(struct queue *q, u64 ring, u32 ring_size, u64 rptr, u64 wptr, u64 sig,
		 u32 sig_size);
void ks_queue_unpin(struct queue *q);
int ks_mmap(struct file *filp, struct vm_area_struct *vma);
struct ks_buf *ks_buf_alloc(size_t size);
int ks_buf_mmap(struct ks_buf *b, struct vm_area_struct *vma);
void *ks_buf_lookup(u64 uva, u32 len, struct ks_buf **out);
void ks_buf_get(struct ks_buf *b);
void *ks_buf_kaddr(struct ks_buf *b);
void ks_buf_put(struct ks_buf *b);

/* ---- kfd.c: the real KFD interface, /dev/kfd ---- */
#define KS_GPU_ID(id) (0x5a10 + (id))	/* topology gpu_id of device @id */
#define KS_VRAM_SIZE SZ_1G		/* each device's VRAM bank (topology, kfd_mem.c) */
#define KS_DEVICE_ID 0x738c	/* MI100: topology device_id, AMDGPU_INFO_DEV_INFO */
/* GET_TILE_CONFIG and DRM's READ_MMR_REG: the value gfx_v9_0.c:2068-2070 programs for 9.4.x */
#define KS_GB_ADDR_CONFIG 0x22014042
int ks_kfd_init(struct dentry *debugfs);
void ks_kfd_exit(void);
void ks_kfd_process_init(struct kfd_process *p);
void ks_kfd_process_free(struct kfd_process *p);
bool ks_vm_read64_locked(struct kfd_process *p, u64 va, u64 *val);
bool ks_vm_mapped_locked(struct kfd_process *p, u64 va);
void *ks_vm_bytes_locked(struct kfd_process *p, u64 va, u64 len);
u64 *ks_vm_kaddr_locked(struct kfd_process *p, u64 va, u32 len);
void *ks_vm_buffer_locked(struct kfd_process *p, u64 va, u64 *bo_va, u64 *size);

/* kname.c: kernel names from the loaded code objects, the cost table */
void ks_kname_process_init(struct kfd_process *p);
void ks_kname_process_free(struct kfd_process *p);
const char *ks_kname_locked(struct kfd_process *p, u64 kernel_object);
bool ks_kname_cost_locked(struct kfd_process *p, const char *name, u64 kernarg, u64 *ns);
void ks_kname_account(const char *name, u64 ns);
void ks_kname_debugfs(struct dentry *parent);
struct ks_buf *ks_kfd_bo_buf(struct kfd_process *p, u64 handle, u64 min_size);
int ks_render_mmap(struct file *filp, struct vm_area_struct *vma);

/* ---- drm.c: a DRM device ("amdgpu") per simulated GPU ---- */
int ks_drm_init(struct dentry *debugfs);
void ks_drm_exit(void);
int ks_drm_file_dev(struct file *f);
unsigned int ks_drm_render_minor(unsigned int dev);

/* ---- kfd_mem.c: KFD's VRAM accounting, AVAILABLE_MEMORY ---- */
int ks_kfd_mem_reserve(int dev, u64 size, u32 flags);
void ks_kfd_mem_unreserve(int dev, u64 size, u32 flags);
int ks_kfd_available_memory(struct file *filp, struct kfd_process *p, void *data);
void ks_kfd_mem_stats_show(struct seq_file *m);

/* ---- events.c: KFD events ---- */
void ks_events_init(struct kfd_process *p);
void ks_events_free(struct kfd_process *p);
int ks_kfd_create_event(struct file *filp, struct kfd_process *p, void *data);
int ks_kfd_destroy_event(struct file *filp, struct kfd_process *p, void *data);
int ks_kfd_set_event(struct file *filp, struct kfd_process *p, void *data);
int ks_kfd_reset_event(struct file *filp, struct kfd_process *p, void *data);
int ks_kfd_wait_events(struct file *filp, struct kfd_process *p, void *data);
void ks_event_signal_mailbox(struct kfd_process *p, u64 handle);
void ks_event_trap(struct kfd_process *p, u32 ctx);
int ks_event_mmap(struct kfd_process *p, struct vm_area_struct *vma);

/* ---- topology.c: /sys/devices/virtual/kfd/kfd/topology ---- */
int ks_topology_init(struct kobject *kfd_kobj);
void ks_topology_exit(void);

/* ---- chardev.c ---- */
int ks_queue_create(struct kfd_process *p, struct file *filp, unsigned int dev, u32 type,
		    u64 ring, u32 ring_size, u64 rptr, u64 wptr, u64 sig, u32 sig_size,
		    u32 percentage, u32 priority, bool aql, unsigned int *qid);
int ks_queue_update(struct kfd_process *p, unsigned int qid, u64 ring, u32 ring_size,
		    u32 percentage, u32 priority);
int ks_chardev_init(void);
void ks_chardev_exit(void);

/* dqm.c: the update_queue op, and an entry to it without ENDBR (IBT tests) */
int ks_update_queue_op(struct device_queue_manager *dqm, struct queue *q,
		       struct mqd_update_info *minfo);
int ks_update_queue_noendbr(struct device_queue_manager *dqm, struct queue *q,
			    struct mqd_update_info *minfo);

#endif /* KFDSIM_H */
