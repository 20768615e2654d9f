// SPDX-License-Identifier: GPL-2.0
/*
 * plock.c - the wait for a p->mutex, below the backends.
 *
 * Only the helper thread (defer.c) waits for a p->mutex: as a waiter of the
 * mutex (a process whose threads keep it owned at every instant hands it
 * over), killably, and whoever owns the helper ends a wait that
 * takes too long with a SIGKILL sent under gp_act_lock.  Once it has the
 * mutex, the helper takes gp_act_lock too, until it lets the mutex go, so
 * its action is as if it were part of a monitor tick.  Lock order:
 * p->mutex -> gp_act_lock; under gp_act_lock, p->mutex is only tried.
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include "backends/plock.h"
#include "monitor/monitor.h"

/* Held by the monitor for each tick, by the helper for each action. */
DEFINE_MUTEX(gp_act_lock);
/* A wait for a p->mutex runs since then (0: none). */
static u64 gp_plock_wait_ns;
/* The task that holds gp_act_lock with a p->mutex it waited for. */
static struct task_struct *gp_plock_holder;

/**
 * gp_plock_wait() - wait for a p->mutex, then take gp_act_lock
 * @m: the process's mutex
 *
 * The helper thread's blocking backend calls.  The wait ends with a
 * SIGKILL, which the sender sends under gp_act_lock, only while
 * gp_plock_waiting() says a wait runs.
 *
 * Return: 0 with both held (release with gp_plock_unlock()), or -EBUSY
 * (the wait was ended) with neither.
 */
int gp_plock_wait(struct mutex *m)
{
	int ret;

	WRITE_ONCE(gp_plock_wait_ns, ktime_get_ns() ? : 1);
	ret = mutex_lock_killable(m);
	/* The SIGKILL is sent under gp_act_lock: none comes after this. */
	mutex_lock(&gp_act_lock);
	WRITE_ONCE(gp_plock_wait_ns, 0);
	flush_signals(current);
	if (ret) {
		gp_stats.busy_deferred_expired++;
		mutex_unlock(&gp_act_lock);
		return -EBUSY;
	}
	gp_plock_holder = current;
	return 0;
}

/**
 * gp_plock_unlock() - release a p->mutex, and gp_act_lock if gp_plock_wait() took it
 * @m: the process's mutex
 */
void gp_plock_unlock(struct mutex *m)
{
	mutex_unlock(m);
	if (gp_plock_holder == current) {
		gp_plock_holder = NULL;
		mutex_unlock(&gp_act_lock);
	}
}

/**
 * gp_plock_waiting() - since when a wait for a p->mutex runs
 *
 * Read under gp_act_lock to decide on the SIGKILL that ends it.
 *
 * Return: its start (ktime ns), or 0 when none runs.
 */
u64 gp_plock_waiting(void)
{
	return READ_ONCE(gp_plock_wait_ns);
}
