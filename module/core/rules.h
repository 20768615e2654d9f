/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rules.h - priority rules (rules.c): which priority a queue gets.
 */
#ifndef GP_RULES_H
#define GP_RULES_H

#include <linux/types.h>

struct gp_queue;
struct task_struct;

void gp_rules_tick(u64 now);
u64 gp_rules_task_start(struct task_struct *task);
u32 gp_rules_apply(struct gp_queue *e, int *prio, bool idle);

#endif /* GP_RULES_H */
