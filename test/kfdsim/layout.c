// SPDX-License-Identifier: GPL-2.0
/*
 * layout.c - compile-time proof that kfdsim's structures put every field
 * gpreempt reads where the target kernel's real amdgpu has it (gp_layout.h is
 * generated from amdgpu's BTF), and that its functions have the real
 * prototypes (each is declared with the generated gp_fn_*_t type).
 */
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include "kfdsim.h"

#define KS_CHECK(s, f)								\
	static_assert(offsetof(struct s, f) == GP_OFF_##s##__##f &&		\
		      sizeof_field(struct s, f) == GP_SZ_##s##__##f, #s "." #f)
#define KS_CHECK_SIZE(s)							\
	static_assert(sizeof_field(struct s, __size) == GP_SIZEOF_##s, "sizeof " #s)

KS_CHECK_SIZE(kfd_process);
static_assert(KS_MAX_DEVS <= KS_MAX_PDDS, "a pdd per device fits kfd_process.pdds");
KS_CHECK(kfd_process, mm);
KS_CHECK(kfd_process, ref);
KS_CHECK(kfd_process, release_work);
KS_CHECK(kfd_process, mutex);
KS_CHECK(kfd_process, lead_thread);
KS_CHECK(kfd_process, mmu_notifier);
#if GP_HAVE_kfd_process__pasid
KS_CHECK(kfd_process, pasid);
#endif
KS_CHECK(kfd_process, pdds);
KS_CHECK(kfd_process, n_pdds);
KS_CHECK(kfd_process, pqm);
#if GP_HAVE_kfd_process__context_id
KS_CHECK(kfd_process, context_id);
#endif
#if GP_HAVE_kfd_process__debug_trap_enabled
KS_CHECK(kfd_process, debug_trap_enabled);
#endif
KS_CHECK_SIZE(kfd_process_device);
KS_CHECK(kfd_process_device, dev);
KS_CHECK(kfd_process_device, process);
KS_CHECK(kfd_process_device, qpd);
#if GP_HAVE_kfd_process_device__pasid
KS_CHECK(kfd_process_device, pasid);
#endif
#if GP_HAVE_kfd_process_device__has_reset_queue
KS_CHECK(kfd_process_device, has_reset_queue);
#endif
KS_CHECK_SIZE(qcm_process_device);
KS_CHECK(qcm_process_device, dqm);
KS_CHECK(qcm_process_device, pqm);
KS_CHECK(qcm_process_device, queues_list);
KS_CHECK(qcm_process_device, evicted);
KS_CHECK(qcm_process_device, is_debug);
static_assert(sizeof(struct process_queue_manager) == GP_SIZEOF_process_queue_manager);
KS_CHECK(process_queue_manager, process);
KS_CHECK(process_queue_manager, queues);
static_assert(sizeof(struct process_queue_node) == GP_SIZEOF_process_queue_node);
KS_CHECK(process_queue_node, q);
KS_CHECK(process_queue_node, process_queue_list);
KS_CHECK_SIZE(queue);
KS_CHECK(queue, list);
KS_CHECK(queue, mqd);
KS_CHECK(queue, properties);
KS_CHECK(queue, process);
KS_CHECK(queue, device);
KS_CHECK_SIZE(queue_properties);
KS_CHECK(queue_properties, type);
KS_CHECK(queue_properties, format);
KS_CHECK(queue_properties, queue_id);
KS_CHECK(queue_properties, queue_address);
KS_CHECK(queue_properties, queue_size);
#if !KS_SKEW
KS_CHECK(queue_properties, priority);
#else
static_assert(offsetof(struct queue_properties, priority) ==
	      GP_OFF_queue_properties__priority + KS_SKEW, "skewed priority");
#endif
KS_CHECK(queue_properties, queue_percent);
KS_CHECK(queue_properties, read_ptr);
KS_CHECK(queue_properties, write_ptr);
KS_CHECK(queue_properties, is_evicted);
#if GP_HAVE_queue_properties__is_suspended
KS_CHECK(queue_properties, is_suspended);
#endif
KS_CHECK(queue_properties, is_active);
#if GP_HAVE_queue_properties__is_reset
KS_CHECK(queue_properties, is_reset);
#endif
#if GP_HAVE_kfd_node
KS_CHECK_SIZE(kfd_node);
KS_CHECK(kfd_node, dqm);
KS_CHECK(kfd_node, kfd);
#if GP_HAVE_kfd_node__id
KS_CHECK(kfd_node, id);
#endif
#if GP_HAVE_kfd_node__node_id
KS_CHECK(kfd_node, node_id);
#endif
#else
KS_CHECK(kfd_dev, dqm);
#endif
KS_CHECK_SIZE(kfd_dev);
static_assert(offsetof(struct kfd_dev, shared_resources.enable_mes) ==
	      GP_OFF_kfd_dev__shared_resources_enable_mes);
KS_CHECK(kfd_dev, cwsr_enabled);
KS_CHECK_SIZE(device_queue_manager);
KS_CHECK(device_queue_manager, ops);
KS_CHECK(device_queue_manager, dev);
KS_CHECK(device_queue_manager, sched_policy);
KS_CHECK(device_queue_manager, is_hws_hang);
KS_CHECK(device_queue_manager, sched_running);
KS_CHECK_SIZE(device_queue_manager_ops);
KS_CHECK(device_queue_manager_ops, update_queue);
KS_CHECK(device_queue_manager_ops, evict_process_queues);
KS_CHECK(device_queue_manager_ops, restore_process_queues);
