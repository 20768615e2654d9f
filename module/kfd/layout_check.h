/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layout_check.h - the running KFD matches the layout gpreempt was built for:
 * its BTF at load (layout_check.c), its live objects (layout_live.c).
 */
#ifndef GP_LAYOUT_CHECK_H
#define GP_LAYOUT_CHECK_H

#include <linux/ktime.h>
#include <linux/types.h>

struct kfd_process;
struct module;
struct queue;

/* ---- the running KFD has the built-in layout (layout_check.c) ---- */
int gp_layout_check(struct module *owner);

/* ---- live KFD objects match the built-in layout (layout_live.c) ---- */
int gp_layout_live_process(struct kfd_process *p, u32 pasid, unsigned int *nq,
			   unsigned long deadline);
int gp_layout_live_queues_locked(struct kfd_process *p, u32 pasid, unsigned int *nq);
void gp_layout_live_passed(unsigned int nproc, unsigned int nq, ktime_t t0);
bool gp_layout_live_admit(struct queue *q);

#endif /* GP_LAYOUT_CHECK_H */
