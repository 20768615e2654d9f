/* SPDX-License-Identifier: GPL-2.0 */
/*
 * backend.h - the safe action pattern shared by the preemption backends.
 */
#ifndef GP_BACKEND_H
#define GP_BACKEND_H

#include "core/registry.h"
#include "backends/plock.h"

struct device_queue_manager;
struct kfd_node;
struct kfd_process;
struct kfd_process_device;
struct mm_struct;
struct queue;

/* Parking and giving back (preempt_evict.c, preempt_suspend.c, preempt_shrink.c) */
int gp_evict_process(struct gp_proc *pr, struct kfd_node *dev, bool evict);
int gp_evict_process_blocking(struct gp_proc *pr, struct kfd_node *dev, bool evict);
bool gp_evict_held(struct gp_proc *pr, struct kfd_node *dev);
void gp_evict_restore_all(struct gp_proc *pr);
void gp_evict_forget_all(struct gp_proc *pr);
int gp_suspend_queue(struct gp_queue *e, bool park, bool blocking);
int gp_shrink_queue(struct gp_queue *e, bool shrink, const u32 *avoid, u32 dev_cus, bool blocking);
int gp_backend_read_props(struct gp_queue *e);

/* Which flag of a queue gp_backend_queue_flag() reads. */
enum gp_qflag {
	GP_QFLAG_ACTIVE,
	GP_QFLAG_SUSPENDED,
};

struct kfd_process *gp_backend_get_process(struct gp_proc *pr);
struct kfd_process_device *gp_backend_pdd(struct kfd_process *p, struct kfd_node *dev);
struct queue *gp_backend_find_queue(struct kfd_process *p, u32 qid);
int gp_backend_dev_parkable(struct kfd_process *p, struct kfd_node *dev,
			    struct kfd_process_device **pdd, bool park, bool reset_ok);
int gp_backend_kept_off(struct kfd_process *p, struct kfd_node *dev,
			struct kfd_process_device *pdd, u32 *qids, int max);
int gp_backend_trylock(struct kfd_process *p, bool blocking);
struct kfd_process *gp_backend_lock_queue(struct gp_queue *e, bool blocking, struct queue **qp,
					  struct mm_struct **mmp);
void gp_backend_unlock(struct kfd_process *p, struct mm_struct *mm);
void gp_backend_mutex_unlock(struct kfd_process *p);
int gp_backend_queue_flag(struct kfd_process *p, struct gp_queue *e, enum gp_qflag flag,
			  bool *val);

/* Device health (devhealth.c) */
bool gp_backend_dev_failed(struct device_queue_manager *dqm);
bool gp_backend_dev_usable(struct kfd_node *dev);
bool gp_backend_needs_evict(struct kfd_node *dev);
void gp_backend_note_error(struct device_queue_manager *dqm, int err, const char *what);
void gp_backend_note_reset(struct device_queue_manager *dqm, const char *what);
void gp_backend_note_slow(struct device_queue_manager *dqm, u64 t0, const char *what);

#endif /* GP_BACKEND_H */
