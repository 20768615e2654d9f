/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kfdsim_ioctl.h - user interface of /dev/kfdsim, the simulated KFD + GPU,
 * modelled on /dev/kfd (include/uapi/linux/kfd_ioctl.h).
 *
 * A queue is a ring of 64-byte AQL-like packets in ordinary user memory plus
 * two 64-bit packet indices (read/write dispatch ids, like ROCr's
 * amd_queue_t.read_dispatch_id/write_dispatch_id).  The producer writes a
 * packet, then its header (release), then bumps the write index; the
 * simulated command processor notices new work by polling the write index
 * (no doorbell call), runs the packet's workgroups on the simulated compute
 * units, advances the read index once per finished packet and adds 1 to the
 * packet's completion signal, which must lie in the queue's signal area.
 */
#ifndef KFDSIM_IOCTL_H
#define KFDSIM_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KFDSIM_MAX_QUEUE_PRIORITY 15	/* KFD_MAX_QUEUE_PRIORITY */
#define KFDSIM_MAX_QUEUE_PERCENTAGE 100	/* KFD_MAX_QUEUE_PERCENTAGE */
#define KFDSIM_MIN_RING_SIZE 1024	/* bytes; power of two */
#define KFDSIM_MAX_RING_SIZE (1 << 22)
#define KFDSIM_MAX_SIGNAL_SIZE (1 << 22)
/*
 * mmap() of /dev/kfdsim at offset 0: a zeroed driver buffer mapped
 * VM_IO | VM_PFNMAP (not pinnable, readable through access_process_vm), for
 * queue pointers that live in such memory, like a TTM-mmapped BO.
 */
#define KFDSIM_MAX_MMAP_SIZE (1 << 20)

#define KFDSIM_MAX_WORKGROUPS (1 << 20)	/* per packet; larger is clamped */
#define KFDSIM_MAX_WG_NS 10000000000ULL	/* 10 s per workgroup; larger is clamped */

#define KFDSIM_PKT_INVALID 1
#define KFDSIM_PKT_DISPATCH 2
/*
 * AQL barrier packets (struct kfdsim_barrier_packet): the CP does not fetch
 * one, and the queue stops at it with its header intact, until its
 * dependency signals are satisfied (non-zero): all of them (AND) or any one
 * (OR).
 */
#define KFDSIM_PKT_BARRIER_AND 3
#define KFDSIM_PKT_BARRIER_OR 5

/* kfdsim_packet.flags */
/* AQL barrier bit: the packet starts once every earlier one of its queue is complete */
#define KFDSIM_PKT_F_BARRIER 1
/*
 * A workgroup whose CWSR save never finishes, like a wave spinning in its
 * trap handler (ROCm/amdgpu#72: s_trap 2): it runs its time out unless
 * preempted, and a preemption of it times out (kfdsim's reset.c).
 */
#define KFDSIM_PKT_F_NOPREEMPT 2

struct kfdsim_packet {
	__u16 header;		/* KFDSIM_PKT_*; written last by the producer */
	__u16 flags;		/* KFDSIM_PKT_F_* */
	__u32 workgroups;	/* >= 1 */
	__u64 ns_per_workgroup;	/* modelled run time of one workgroup on one CU */
	__u64 completion_signal; /* user address of a __u64 in the signal area, or 0 */
	__u64 reserved[5];
};

/*
 * AQL's barrier-AND/OR layout.  dep_signal[]: user addresses of __u64
 * signals in the queue's signal area, 0 = unused; a dependency is satisfied
 * once its signal is non-zero (signals count completions up).  An address
 * outside the signal area is warned about and counts as satisfied.
 */
struct kfdsim_barrier_packet {
	__u16 header;		/* KFDSIM_PKT_BARRIER_AND or _OR; written last */
	__u16 flags;		/* KFDSIM_PKT_F_* */
	__u32 reserved0;
	__u64 dep_signal[5];
	__u64 reserved1;
	__u64 completion_signal; /* as a dispatch's, or 0 */
};

struct kfdsim_create_queue_args {
	__u64 ring_base_address;	/* to KFD: ring of struct kfdsim_packet */
	__u64 write_pointer_address;	/* to KFD: __u64 packet index */
	__u64 read_pointer_address;	/* to KFD: __u64 packet index */
	__u64 signal_base_address;	/* to KFD: completion signals */
	__u32 ring_size;		/* to KFD: bytes, power of two */
	__u32 signal_size;		/* to KFD: bytes, multiple of 8 */
	__u32 queue_percentage;		/* to KFD: 0..100 */
	__u32 queue_priority;		/* to KFD: 0..15 */
	__u32 queue_id;			/* from KFD */
	__u32 queue_type;		/* to KFD: KFDSIM_QUEUE_TYPE_* */
	__u32 gpu_id;			/* to KFD: device index, 0..ndev-1 */
	__u32 pad;
};

/*
 * An SDMA queue runs its packets one at a time on its own copy engine (no
 * CU): a packet takes workgroups x ns_per_workgroup.  Its indices are packet
 * indices too (real SDMA rings count bytes).
 */
#define KFDSIM_QUEUE_TYPE_COMPUTE_AQL 0	/* KFD_IOC_QUEUE_TYPE_COMPUTE_AQL */
#define KFDSIM_QUEUE_TYPE_SDMA 1	/* KFD_IOC_QUEUE_TYPE_SDMA */
/* Compute, PM4 format: runs like an AQL queue here, only its format differs. */
#define KFDSIM_QUEUE_TYPE_COMPUTE_PM4 2

struct kfdsim_destroy_queue_args {
	__u32 queue_id;
	__u32 pad;
};

struct kfdsim_update_queue_args {
	__u64 ring_base_address;	/* must be the queue's ring (or 0 to disable) */
	__u32 queue_id;
	__u32 ring_size;
	__u32 queue_percentage;
	__u32 queue_priority;
};

/* AMDKFD_IOC_SET_CU_MASK's arguments: the mask is num_cu_mask bits (a multiple of 32). */
struct kfdsim_set_cu_mask_args {
	__u32 queue_id;
	__u32 num_cu_mask;
	__u64 cu_mask_ptr;
};

enum kfdsim_test_op {
	KFDSIM_TEST_EVICT = 1,		/* kfd_process_evict_queues(own process) */
	KFDSIM_TEST_RESTORE = 2,	/* kfd_process_restore_queues(own process) */
	/*
	 * kfd_dbg_trap_enable(own process); value: 0, or the address its
	 * runtime info is copied to (a bad one: -EFAULT, every queue resumed)
	 */
	KFDSIM_TEST_DBG_ENABLE = 3,
	KFDSIM_TEST_SET_RESET = 4,	/* mark the pdd of device queue_id has_reset_queue */
	KFDSIM_TEST_QUERY = 5,		/* queue state -> value */
	KFDSIM_TEST_PASID = 6,		/* own pasid -> value */
	KFDSIM_TEST_HWS_HANG = 7,	/* dqm->is_hws_hang = value, device queue_id */
	KFDSIM_TEST_HOLD_REF = 8,	/* another holder keeps a reference for value ms */
	KFDSIM_TEST_CONTEXT = 9,	/* own context_id -> value (0xffff: primary) */
	/*
	 * Hold p->mutex for value us (at most 10000), working: what a KFD
	 * ioctl that maps memory or updates page tables under it costs.
	 */
	KFDSIM_TEST_MUTEX_WORK = 10,
	/* Debug trap enable then disable on the own process, one p->mutex hold */
	KFDSIM_TEST_DBG_FLIP = 11,
	/*
	 * set_queue_as_reset() on the own queue queue_id, as the reset of a
	 * queue whose preemption timed out does: only it goes inactive
	 */
	KFDSIM_TEST_RESET_QUEUE = 12,
};

#define KFDSIM_Q_ACTIVE (1 << 0)
#define KFDSIM_Q_EVICTED (1 << 1)
#define KFDSIM_Q_SUSPENDED (1 << 2)

struct kfdsim_test_args {
	__u32 op;		/* enum kfdsim_test_op */
	__u32 queue_id;
	__u64 value;		/* from KFD */
};

#define KFDSIM_IOC_MAGIC 'K'
#define KFDSIM_IOC_CREATE_QUEUE _IOWR(KFDSIM_IOC_MAGIC, 0x02, struct kfdsim_create_queue_args)
#define KFDSIM_IOC_DESTROY_QUEUE _IOWR(KFDSIM_IOC_MAGIC, 0x03, struct kfdsim_destroy_queue_args)
#define KFDSIM_IOC_UPDATE_QUEUE _IOW(KFDSIM_IOC_MAGIC, 0x07, struct kfdsim_update_queue_args)
#define KFDSIM_IOC_SET_CU_MASK _IOW(KFDSIM_IOC_MAGIC, 0x1A, struct kfdsim_set_cu_mask_args)
#define KFDSIM_IOC_TEST _IOWR(KFDSIM_IOC_MAGIC, 0x40, struct kfdsim_test_args)
/*
 * AMDKFD_IOC_CREATE_PROCESS (7.2+ layouts, else -ENOTTY): the file's process
 * becomes a new secondary context of the caller's mm (own context_id and
 * PASID); -EINVAL on a file that has one already.  Closing the file tears
 * the context down.
 */
#define KFDSIM_IOC_CREATE_PROCESS _IO(KFDSIM_IOC_MAGIC, 0x27)
#define KFDSIM_CONTEXT_ID_PRIMARY 0xffff

#endif /* KFDSIM_IOCTL_H */
