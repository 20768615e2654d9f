/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: the device queue manager, its ops in amdgpu-dkms's order. */
#ifndef KFD_DEVICE_QUEUE_MANAGER_H_
#define KFD_DEVICE_QUEUE_MANAGER_H_

#include "kfd_priv.h"

enum mqd_update_flag {
	UPDATE_FLAG_DBG_WA_ENABLE = 1,
	UPDATE_FLAG_DBG_WA_DISABLE = 2,
};

struct mqd_update_info {
	union {
		struct {
			uint32_t count;
			uint32_t *ptr;
		} cu_mask;
	};
	enum mqd_update_flag update_flag;
};

struct device_queue_manager_ops {
	int (*create_queue)(struct device_queue_manager *dqm, struct queue *q,
			    struct qcm_process_device *qpd);
	int (*destroy_queue)(struct device_queue_manager *dqm,
			     struct qcm_process_device *qpd, struct queue *q);
	int (*update_queue)(struct device_queue_manager *dqm, struct queue *q,
			    struct mqd_update_info *minfo);
	int (*register_process)(struct device_queue_manager *dqm,
				struct qcm_process_device *qpd);
	int (*evict_process_queues)(struct device_queue_manager *dqm,
				    struct qcm_process_device *qpd);
	int (*restore_process_queues)(struct device_queue_manager *dqm,
				      struct qcm_process_device *qpd);
	int (*set_perfcount)(struct device_queue_manager *dqm, bool enable);
};

struct device_queue_manager {
	struct device_queue_manager_ops ops;
	struct kfd_node *dev;
	struct mutex lock_hidden;
	struct list_head queues;
	unsigned int processes_count;
	enum kfd_sched_policy sched_policy;
	bool is_hws_hang;
	bool is_resetting;
	bool sched_running;
};

int suspend_queues(struct kfd_process *p, uint32_t num_queues,
		   uint32_t grace_period, uint64_t exception_clear_mask,
		   uint32_t *usr_queue_id_array);

#endif
