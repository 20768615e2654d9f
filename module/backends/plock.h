/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plock.h - how gpreempt takes a process's p->mutex when it waits for it,
 * and gp_act_lock, which makes the helper thread's actions part of a tick.
 */
#ifndef GP_PLOCK_H
#define GP_PLOCK_H

#include <linux/mutex.h>
#include <linux/types.h>

extern struct mutex gp_act_lock;
int gp_plock_wait(struct mutex *m);
void gp_plock_unlock(struct mutex *m);
u64 gp_plock_waiting(void);

#endif /* GP_PLOCK_H */
