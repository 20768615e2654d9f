/* SPDX-License-Identifier: GPL-2.0 */
/*
 * defer.h - the helper thread for actions whose p->mutex stays busy
 * (defer.c), as the monitor drives it.
 */
#ifndef GP_DEFER_H
#define GP_DEFER_H

#include <linux/types.h>

struct gp_defer;
struct gp_proc;

/*
 * Actions whose p->mutex stays busy, by the helper thread.
 * It reports, it does not commit: ->done() wakes the monitor, ->commit()
 * (apply.c's gp_commit_deferred()) commits a result, both wired by
 * monitor.c, so defer.c calls nothing above the backends.
 */
struct gp_defer_ops {
	void (*done)(void);
	void (*commit)(struct gp_defer *d, int n);
};

int gp_defer_start(const struct gp_defer_ops *ops);
void gp_defer_stop(void);
void gp_defer_exit(void);
int gp_defer_call(int (*fn)(void *arg), void *arg, unsigned int ms);
bool gp_defer_busy(struct gp_proc *pr, int ret);
bool gp_defer_inflight(const struct gp_proc *pr);
bool gp_defer_pending(void);
void gp_defer_queue(struct gp_proc *pr, const struct gp_defer *req);
void gp_defer_collect(int n);
void gp_defer_tick(u64 now);

#endif /* GP_DEFER_H */
