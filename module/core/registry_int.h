/* SPDX-License-Identifier: GPL-2.0 */
/*
 * registry_int.h - what the files of the registry (registry.c, procs.c)
 * share; gp_reg.lock held where the name ends in _locked.
 */
#ifndef GP_REGISTRY_INT_H
#define GP_REGISTRY_INT_H

#include "core/registry.h"

extern const struct gp_registry_ops *gp_reg_ops;

struct gp_proc *gp_proc_find_locked(struct kfd_process *p);
struct gp_proc *gp_proc_find_user_locked(struct kfd_process *p, uid_t uid,
					 unsigned int *user_n);
unsigned int gp_dev_slot_locked(struct kfd_node *dev);
void gp_proc_untail_locked(struct gp_queue *e);
void gp_proc_queues_gone_locked(struct gp_proc *pr);
void gp_mark_gone_locked(struct gp_queue *e);
bool gp_unseen_locked(void);
void gp_warn_unseen(u32 qid);

#endif /* GP_REGISTRY_INT_H */
