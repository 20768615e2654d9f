/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixture: the KFD structs scripts/layout.spec names, shaped like
 * amdgpu-dkms's (its member order, its per-pdd PASID, its HAVE_* switches in
 * struct kfd_process), with most other members left out.
 */
#ifndef KFD_PRIV_H_INCLUDED
#define KFD_PRIV_H_INCLUDED

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/kref.h>
#include <linux/workqueue.h>
#include <linux/mmu_notifier.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kgd_kfd_interface.h"

#define MAX_GPU_INSTANCE 64

struct device_queue_manager;
struct kfd_criu_queue_priv_data;

enum kfd_queue_type {
	KFD_QUEUE_TYPE_COMPUTE,
	KFD_QUEUE_TYPE_SDMA,
	KFD_QUEUE_TYPE_HIQ,
	KFD_QUEUE_TYPE_DIQ,
	KFD_QUEUE_TYPE_SDMA_XGMI,
	KFD_QUEUE_TYPE_SDMA_BY_ENG_ID,
};

enum kfd_queue_format {
	KFD_QUEUE_FORMAT_PM4,
	KFD_QUEUE_FORMAT_AQL,
};

enum kfd_sched_policy {
	KFD_SCHED_POLICY_HWS = 0,
	KFD_SCHED_POLICY_HWS_NO_OVERSUBSCRIPTION,
	KFD_SCHED_POLICY_NO_HWS,
};

struct kfd_dev {
	struct amdgpu_device *adev;
	struct kgd2kfd_shared_resources shared_resources;
	bool cwsr_enabled;
};

struct kfd_node {
	struct amdgpu_device *adev;
	unsigned int node_id;
	struct device_queue_manager *dqm;
	unsigned int max_proc_per_quantum;
	struct kfd_dev *kfd;
};

struct queue_properties {
	enum kfd_queue_type type;
	enum kfd_queue_format format;
	unsigned int queue_id;
	uint64_t queue_address;
	uint64_t queue_size;
	uint32_t priority;
	uint32_t queue_percent;
	void __user *read_ptr;
	void __user *write_ptr;
	void __iomem *doorbell_ptr;
	uint32_t doorbell_off;
	bool is_interop;
	bool is_evicted;
	bool is_suspended;
	bool is_being_destroyed;
	bool is_active;
	bool is_gws;
};

struct queue {
	struct list_head list;
	void *mqd;
	uint64_t gart_mqd_addr;
	struct queue_properties properties;
	uint32_t mec;
	uint32_t pipe;
	uint32_t queue;
	unsigned int sdma_id;
	unsigned int doorbell_id;
	struct kfd_process *process;
	struct kfd_node *device;
};

struct qcm_process_device {
	struct device_queue_manager *dqm;
	struct process_queue_manager *pqm;
	struct list_head queues_list;
	struct list_head priv_queue_list;
	unsigned int queue_count;
	unsigned int vmid;
	bool is_debug;
	unsigned int evicted;
	bool reset_wavefronts;
};

struct process_queue_manager {
	struct kfd_process *process;
	struct list_head queues;
	unsigned long *queue_slot_bitmap;
};

struct process_queue_node {
	struct queue *q;
	struct kernel_queue *kq;
	struct list_head process_queue_list;
};

struct kfd_process_device {
	struct kfd_node *dev;
	struct kfd_process *process;
	struct qcm_process_device qpd;
	uint64_t gpuvm_base;
	bool has_reset_queue;
	u32 pasid;
};

/* By value: only the tree's own kfd_ioctl.h defines the enum. */
struct pc_sampling_entry {
	bool enabled;
	enum kfd_ioctl_gp_fixture_method method;
};

struct kfd_process {
	struct hlist_node kfd_processes;
	void *mm;
	struct kref ref;
	struct work_struct release_work;
	struct mutex mutex;
	struct task_struct *lead_thread;
	struct mmu_notifier mmu_notifier;
#ifndef HAVE_MMU_NOTIFIER_PUT
	struct rcu_head rcu;
#endif
	struct kfd_process_device *pdds[MAX_GPU_INSTANCE];
	uint32_t n_pdds;
	struct process_queue_manager pqm;
	bool is_32bit_user_mode;
	struct mutex event_mutex;
#ifndef HAVE_TREE_INSERT_HAVE_RB_ROOT_CACHED
	struct rb_root bo_interval_tree;
#else
	struct rb_root_cached bo_interval_tree;
#endif
	struct pc_sampling_entry pc_sampling;
	bool debug_trap_enabled;
	uint32_t exception_enable_mask;
};

int kfd_procfs_add_queue(struct queue *q);
int pqm_create_queue(struct process_queue_manager *pqm,
		     struct kfd_node *dev,
		     struct queue_properties *properties,
		     unsigned int *qid,
		     const struct kfd_criu_queue_priv_data *q_data,
		     const void *restore_mqd,
		     const void *restore_ctl_stack,
		     uint32_t *p_doorbell_offset_in_process);
int pqm_destroy_queue(struct process_queue_manager *pqm, unsigned int qid);
int pqm_update_queue_properties(struct process_queue_manager *pqm,
				unsigned int qid, struct queue_properties *p);
void pqm_uninit(struct process_queue_manager *pqm);
struct queue *pqm_get_user_queue(struct process_queue_manager *pqm,
				 unsigned int qid);
int kfd_process_evict_queues(struct kfd_process *p, bool force, uint32_t trigger);
int kfd_process_restore_queues(struct kfd_process *p);
struct kfd_process *kfd_lookup_process_by_pasid(u32 pasid,
						struct kfd_process_device **pdd);
void kfd_unref_process(struct kfd_process *p);

#endif
