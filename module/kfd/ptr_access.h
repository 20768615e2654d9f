/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptr_access.h - reading a queue's dispatch ids and a process's
 * environment from user memory (ptr_access.c).
 */
#ifndef GP_PTR_ACCESS_H
#define GP_PTR_ACCESS_H

#include <linux/types.h>

struct gp_proc;
struct gp_queue;
struct kfd_process;
struct mm_struct;

void gp_ptr_ids_take(struct gp_queue *e);
void gp_ptr_setup(struct gp_queue *e);
void gp_ptr_release(struct gp_queue *e);
int gp_ptr_read(struct gp_queue *e, u64 *rptr, u64 *wptr);
bool gp_ptr_head_blocked(struct gp_queue *e, u64 rptr);
void gp_ptr_read_end(void);
struct kfd_process *gp_ptr_window(const struct gp_queue *e);
struct mm_struct *gp_ptr_mm_pin(struct kfd_process *p);
void gp_ptr_mm_unpin(struct mm_struct *mm);
int gp_ptr_read_env(struct gp_proc *pr, char *buf, size_t max, bool *partial);

#endif /* GP_PTR_ACCESS_H */
