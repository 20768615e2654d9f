// SPDX-License-Identifier: GPL-2.0
/*
 * backend.c - the safe action pattern around every KFD call gpreempt makes:
 *
 *   kfd_lookup_process_by_pasid() (+1 reference; the process cannot be
 *   freed) -> identity check -> p->mutex (trylock on the monitor's path: a
 *   contended mutex means an ioctl is running; retry next tick) ->
 *   pqm_get_user_queue() (the queue still exists) -> checks (mm, debugger,
 *   has_reset_queue, HWS hang) -> act -> unlock -> kfd_unref_process().
 *
 * A device whose preemption failed with -EIO/-ETIME (HWS hang: KFD is
 * resetting the GPU) is never touched again while gpreempt is loaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include "backend.h"
#include "kfd.h"

#define GP_MAX_FAILED_DEVS 16
static struct device_queue_manager *gp_failed_dqm[GP_MAX_FAILED_DEVS];
static int gp_nfailed;

/**
 * gp_backend_get_process() - reference the KFD process of @pr
 * @pr: registry process
 *
 * Return: the process with a reference (drop with gp_kfd.unref), or NULL
 * when it is gone (or its PASID now belongs to another process).
 */
struct kfd_process *gp_backend_get_process(struct gp_proc *pr)
{
	struct kfd_process *p;

	if (READ_ONCE(pr->dead))
		return NULL;
	p = gp_kfd_lookup_pasid(pr->pasid);
	if (p && p != pr->p) {
		gp_kfd.unref(p);
		return NULL;
	}
	return p;
}

/**
 * gp_backend_pdd() - the per-device data of @p on @dev
 * @p: referenced process
 * @dev: device
 *
 * Return: the pdd or NULL.
 */
struct kfd_process_device *gp_backend_pdd(struct kfd_process *p, struct kfd_node *dev)
{
	u32 i, n = min_t(u32, kfd_p_n_pdds(p), GP_SZ_kfd_process__pdds / sizeof(void *));

	for (i = 0; i < n; i++) {
		struct kfd_process_device *pdd = kfd_p_pdd(p, i);

		if (pdd && kfd_pdd_dev(pdd) == dev)
			return pdd;
	}
	return NULL;
}

/**
 * gp_backend_dev_failed() - has preemption failed on this device before?
 * @dqm: device queue manager
 *
 * Return: true if gpreempt must leave the device alone.
 */
bool gp_backend_dev_failed(struct device_queue_manager *dqm)
{
	int i;

	if (kfd_dqm_hws_hang(dqm))
		return true;
	for (i = 0; i < gp_nfailed; i++)
		if (gp_failed_dqm[i] == dqm)
			return true;
	return false;
}

/**
 * gp_backend_note_error() - count an error; fence off a hung device
 * @dqm: device (may be NULL for process-wide calls)
 * @err: negative errno from KFD
 * @what: the call, for the log
 */
void gp_backend_note_error(struct device_queue_manager *dqm, int err, const char *what)
{
	gp_stats.errors++;
	pr_warn_ratelimited("%s failed: %d\n", what, err);
	if ((err == -EIO || err == -ETIME || err == -ETIMEDOUT) && dqm &&
	    !gp_backend_dev_failed(dqm) && gp_nfailed < GP_MAX_FAILED_DEVS) {
		gp_failed_dqm[gp_nfailed++] = dqm;
		pr_err("preemption failed on a device (%d): gpreempt leaves it alone from now on\n",
		       err);
	}
}

/**
 * gp_backend_trylock() - take p->mutex
 * @p: referenced process
 * @blocking: wait (module unload) or only try (monitor tick)
 *
 * Return: 0 with the mutex held, or -EBUSY.
 */
int gp_backend_trylock(struct kfd_process *p, bool blocking)
{
	if (blocking) {
		mutex_lock(kfd_p_mutex(p));
		return 0;
	}
	if (mutex_trylock(kfd_p_mutex(p)))
		return 0;
	gp_stats.busy_retries++;
	return -EBUSY;
}
