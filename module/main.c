// SPDX-License-Identifier: GPL-2.0
/*
 * gpreempt - priority preemption for AMD GPU compute queues.
 *
 * Watches every user compute queue amdkfd creates (kprobes), scans their
 * read/write dispatch ids from a kthread, and while a higher-priority queue
 * has work takes lower-priority queues off the GPU through KFD's own paths
 * (queue suspend + update_queue, or process eviction; CWSR saves their
 * waves), putting them back when the high-priority work drains.  State and
 * control are BPF maps (bpftool map dump name gp_queues).  rmmod resumes
 * everything it parked.
 *
 * Setup order: KFD symbols -> layout check -> maps -> registry -> probes ->
 * existing processes (live layout check, adopted queues) -> monitor.
 * Teardown is the exact reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include "params.h"
#include "kfd/ksyms.h"
#include "kfd/layout_check.h"
#include "kfd/ptr_access.h"
#include "core/registry.h"
#include "core/maps.h"
#include "monitor/monitor.h"
#include "attach.h"
#include "backends/backend.h"
#include "kfd/kfd.h"
#include "gp_version.h"

/* The registry's user: the monitor, and the evict backend's per-process slots. */
static const struct gp_registry_ops gp_reg_ops = {
	.changed = gp_monitor_kick,
	.proc_freed = gp_evict_forget_all,
};

static const struct gp_probe_ops gp_probe_ops = {
	.missed = gp_hooks_missed,
	.lost = gp_hooks_lost,
};

static int __init gp_init(void)
{
	int ret, adopted = 0;

	ret = gp_ksyms_init();
	if (ret)
		return ret;
	ret = gp_layout_check(gp_ksyms_owner());
	if (ret)
		goto err_ksyms;
	ret = gp_maps_init();
	if (ret)
		goto err_ksyms;
	gp_registry_init(&gp_reg_ops);
	ret = gp_hooks_init();
	if (ret)
		goto err_maps;
	/* The live layout check, and adopt_existing: nothing acts before it. */
	adopted = gp_registry_walk_existing(gp_param.adopt_existing);
	if (adopted < 0) {
		ret = adopted;
		goto err_hooks;
	}
	ret = gp_monitor_start(&gp_probe_ops);
	if (ret)
		goto err_hooks;
	pr_info("loaded: backend %d, tick %u us, %d existing queue(s) adopted\n",
		gp_param.backend, gp_param.tick_us, adopted);
	return 0;

err_hooks:
	gp_registry_adopt_stop();
	gp_hooks_exit();
	gp_registry_free_all(gp_ptr_release);
err_maps:
	gp_maps_exit();
err_ksyms:
	gp_ksyms_exit();
	return ret;
}

static void __exit gp_exit(void)
{
	gp_monitor_stop();
	gp_registry_adopt_stop();
	gp_monitor_release_all();
	gp_hooks_exit();
	gp_monitor_free();
	gp_maps_exit();
	gp_ksyms_exit();
	pr_info("unloaded: %llu preemptions, %llu resumes, %llu errors\n",
		gp_stats.preempts, gp_stats.resumes, gp_stats.errors);
}

module_init(gp_init);
module_exit(gp_exit);
MODULE_DESCRIPTION("Priority preemption for AMD GPU compute queues (amdkfd)");
MODULE_AUTHOR("gpreempt developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(GP_VERSION);
/* MODULE_IMPORT_NS(BPF_INTERNAL), spelled the same before and after 6.13. */
MODULE_INFO(import_ns, "BPF_INTERNAL");
