// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsim - a simulated amdkfd + AMD GPU for testing gpreempt without
 * hardware.  It provides every KFD function gpreempt probes or calls, with
 * the real names and prototypes, and every structure it reads at the real
 * offsets, so the same gpreempt.ko attaches to amdgpu and to kfdsim (never
 * both at once).  See gpu.c for the hardware model, dqm.c for the
 * scheduling costs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include "kfdsim.h"

struct ks_params ks_param = {
	.ndev = 1,
	.cwsr = true,
	.num_cu = 8,
	.runlist_us = 100,
	.mes_us = 30,
	.cwsr_save_us = 20,
	.cwsr_restore_us = 10,
	.poll_us = 50,
	.time_scale = 1,
	.kfd = true,
	.max_proc = 8,
	.hqds = 24,
	.quantum_us = 1000,
	.slice_idle = true,
};

struct ks_device ks_devs[KS_MAX_DEVS];
struct ks_stats ks_stats;
static struct dentry *ks_debugfs;
static char *sched = "hws";

module_param_named(ndev, ks_param.ndev, uint, 0444);
MODULE_PARM_DESC(ndev, "Simulated devices (kfd_nodes), each with its own dqm, CP, CUs and CWSR [1..8] (default 1)");

module_param_named(num_cu, ks_param.num_cu, uint, 0444);
MODULE_PARM_DESC(num_cu, "Simulated compute units [1..128] (default 8)");
module_param_named(num_se, ks_param.num_se, uint, 0444);
MODULE_PARM_DESC(num_se,
		 "Shader engines: CU c is in engine c % num_se, and CU masks map over them as KFD's do [1..8, dividing num_cu, at most 16 CUs each] (default: the most engines up to 4, or 8 above 64 CUs, that divide num_cu into at most 16 CUs each)");
module_param(sched, charp, 0444);
MODULE_PARM_DESC(sched,
		 "Scheduler model: hws (every change remaps all queues), mes (per queue), nohws (sched_policy=2: the driver loads each MQD, only in the owner's mm) or oracle (mes's mapping, and the CP itself CWSR-preempts lower levels the moment a higher level has work; levels from debugfs kfdsim/oracle_rules)");
module_param_named(cwsr, ks_param.cwsr, bool, 0444);
MODULE_PARM_DESC(cwsr, "CWSR enabled (default 1); 0: an unmap drains the running waves (kfd_dev.cwsr_enabled = 0)");
module_param_named(runlist_us, ks_param.runlist_us, uint, 0444);
MODULE_PARM_DESC(runlist_us, "HWS runlist update (unmap all + map) cost in us [0..100000] (default 100)");
module_param_named(mes_us, ks_param.mes_us, uint, 0444);
MODULE_PARM_DESC(mes_us, "MES add/remove queue cost in us [0..100000] (default 30)");
module_param_named(cwsr_save_us, ks_param.cwsr_save_us, uint, 0444);
MODULE_PARM_DESC(cwsr_save_us, "CWSR save time: a preempted workgroup's CU stays busy this long, in us [0..100000] (default 20)");
module_param_named(cwsr_restore_us, ks_param.cwsr_restore_us, uint, 0444);
MODULE_PARM_DESC(cwsr_restore_us, "CWSR restore time added to a restored workgroup, in us [0..100000] (default 10)");
module_param_named(poll_us, ks_param.poll_us, uint, 0444);
MODULE_PARM_DESC(poll_us, "Command processor write-pointer poll period in us [5..10000] (default 50)");
module_param_named(time_scale, ks_param.time_scale, uint, 0444);
MODULE_PARM_DESC(time_scale,
		 "Every modelled time xK: workgroup and copy times, runlist_us, mes_us, cwsr_*_us, poll_us (shown scaled) [1..100] (default 1)");

module_param_named(kfd, ks_param.kfd, bool, 0444);
MODULE_PARM_DESC(kfd,
		 "Register the real KFD interface: /dev/kfd, the kfd class with its topology, a DRM device (\"amdgpu\", card and render node) per device (default 1; never next to amdgpu)");
module_param_named(fence_spin, ks_param.fence_spin, bool, 0444);
MODULE_PARM_DESC(fence_spin,
		 "The caller of a runlist change (schedule() loop) or an MES call (udelay polling) waits on the CPU under dqm->lock, as KFD's fence waits do (default 0: it sleeps)");
module_param_named(render_minor, ks_param.render_minor, uint, 0444);
MODULE_PARM_DESC(render_minor,
		 "Retired: DRM chooses the render minors (topology drm_render_minor shows them); setting it refuses the load");

module_param_named(max_proc, ks_param.max_proc, uint, 0444);
MODULE_PARM_DESC(max_proc,
		 "Processes the HWS maps at once, KFD's max_proc_per_quantum (min of hws_max_conc_proc and the KFD VMIDs: 8 on gfx9); more oversubscribe the runlist [1..16] (default 8)");
module_param_named(hqds, ks_param.hqds, uint, 0444);
MODULE_PARM_DESC(hqds,
		 "HQDs for user compute queues (get_cp_queues_num(), the topology's num_cp_queues); more active compute queues oversubscribe the runlist [1..32] (default 24)");
module_param_named(quantum_us, ks_param.quantum_us, uint, 0444);
MODULE_PARM_DESC(quantum_us,
		 "An oversubscribed runlist's time slice in us, scaled by time_scale (MAP_PROCESS process_quantum 10; the firmware's unit is not in KFD) [10..100000] (default 1000)");
module_param_named(slice_idle, ks_param.slice_idle, bool, 0444);
MODULE_PARM_DESC(slice_idle,
		 "A slice of an oversubscribed runlist takes its quantum even with nothing to run, as a parked process keeps its MAP_PROCESS (default 1; 0: the HWS skips it)");

static int ks_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "processes %d\nqueues %d\n", atomic_read(&ks_stats.processes),
		   atomic_read(&ks_stats.queues));
	seq_printf(m, "packets_completed %lld\nworkgroups_completed %lld\n",
		   atomic64_read(&ks_stats.packets_completed),
		   atomic64_read(&ks_stats.workgroups_completed));
	seq_printf(m, "oracle_preemptions %lld\n", atomic64_read(&ks_stats.oracle_preemptions));
	seq_printf(m, "acct_periods %lld\nacct_mismatches %lld\n",
		   atomic64_read(&ks_stats.acct_periods),
		   atomic64_read(&ks_stats.acct_mismatches));
	seq_printf(m, "preemptions %lld\ncwsr_saves %lld\ncwsr_restores %lld\ncwsr_dropped %lld\nworkgroups_dropped %lld\n",
		   atomic64_read(&ks_stats.preemptions), atomic64_read(&ks_stats.cwsr_saves),
		   atomic64_read(&ks_stats.cwsr_restores), atomic64_read(&ks_stats.cwsr_dropped),
		   atomic64_read(&ks_stats.workgroups_dropped));
	seq_printf(m, "runlist_updates %lld\nmes_calls %lld\n",
		   atomic64_read(&ks_stats.runlist_updates), atomic64_read(&ks_stats.mes_calls));
	seq_printf(m, "oversubscribed_runlists %lld\nhws_slices %lld\n",
		   atomic64_read(&ks_stats.oversubscribed_runlists),
		   atomic64_read(&ks_stats.hws_slices));
	seq_printf(m, "nohws_refused %lld\ndrain_unmaps %lld\n",
		   atomic64_read(&ks_stats.nohws_refused), atomic64_read(&ks_stats.drain_unmaps));
	seq_printf(m, "cu_mask_updates %lld\n", atomic64_read(&ks_stats.cu_mask_updates));
	seq_printf(m, "evict_calls %lld\nrestore_calls %lld\nevicted_refs %d\n",
		   atomic64_read(&ks_stats.evict_calls), atomic64_read(&ks_stats.restore_calls),
		   atomic_read(&ks_stats.evicted_refs));
	ks_dqm_counts_show(m);
	seq_printf(m, "event_interrupts %lld\n", atomic64_read(&ks_stats.event_interrupts));
	seq_printf(m, "aql_dispatches %lld\naql_utility %lld\naql_barriers %lld\naql_vendor %lld\n",
		   atomic64_read(&ks_stats.aql_dispatches), atomic64_read(&ks_stats.aql_utility),
		   atomic64_read(&ks_stats.aql_barriers), atomic64_read(&ks_stats.aql_vendor));
	seq_printf(m, "notifier_releases %lld\nnotifier_releases_foreign %lld\n",
		   atomic64_read(&ks_stats.notifier_releases),
		   atomic64_read(&ks_stats.notifier_releases_foreign));
	seq_printf(m, "preempt_timeouts %lld\nfence_timeouts %lld\nqueues_reset %lld\ngpu_resets %lld\nworkgroups_reset %lld\nreset_events %lld\n",
		   atomic64_read(&ks_stats.preempt_timeouts),
		   atomic64_read(&ks_stats.fence_timeouts),
		   atomic64_read(&ks_stats.queues_reset), atomic64_read(&ks_stats.gpu_resets),
		   atomic64_read(&ks_stats.workgroups_reset),
		   atomic64_read(&ks_stats.reset_events));
	ks_sdma_stats_show(m);
	ks_kfd_mem_stats_show(m);
	ks_kfd_evict_stats_show(m);
	seq_printf(m, "fence_spin_us %lld\n", atomic64_read(&ks_stats.fence_spin_us));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_stats);

static int ks_queues_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	for (i = 0; i < ks_param.ndev; i++)
		ks_gpu_show(&ks_devs[i], m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_queues);

static int ks_acct_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	for (i = 0; i < ks_param.ndev; i++)
		ks_gpu_acct_show(&ks_devs[i], m);
	ks_acct_gone_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_acct);

static int ks_params_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "ndev %u\ntime_scale %u\n", ks_param.ndev, ks_param.time_scale);
	seq_printf(m, "num_se %u\n", ks_param.num_se);
	seq_printf(m, "num_cu %u\nsched %s\nrunlist_us %u\nmes_us %u\ncwsr_save_us %u\ncwsr_restore_us %u\npoll_us %u\n",
		   ks_param.num_cu, ks_param.oracle ? "oracle" : ks_param.nohws ? "nohws" :
		   ks_param.mes ? "mes" : "hws",
		   ks_param.runlist_us, ks_param.mes_us, ks_param.cwsr_save_us,
		   ks_param.cwsr_restore_us, ks_param.poll_us);
	seq_printf(m, "max_proc %u\nhqds %u\nquantum_us %u\nslice_idle %d\n", ks_param.max_proc,
		   ks_param.hqds, ks_param.quantum_us, ks_param.slice_idle);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_params);

static int ks_rel_tasks_show(struct seq_file *m, void *unused)
{
	ks_release_tasks_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_rel_tasks);

static int ks_check_params(void)
{
	const struct { const char *name; unsigned int v, lo, hi; } r[] = {
		{ "ndev", ks_param.ndev, 1, KS_MAX_DEVS },
		{ "num_cu", ks_param.num_cu, 1, 128 },
		{ "runlist_us", ks_param.runlist_us, 0, 100000 },
		{ "mes_us", ks_param.mes_us, 0, 100000 },
		{ "cwsr_save_us", ks_param.cwsr_save_us, 0, 100000 },
		{ "cwsr_restore_us", ks_param.cwsr_restore_us, 0, 100000 },
		{ "poll_us", ks_param.poll_us, 5, 10000 },
		{ "time_scale", ks_param.time_scale, 1, 100 },
		{ "max_proc", ks_param.max_proc, 1, 16 },
		{ "hqds", ks_param.hqds, 1, 32 },
		{ "quantum_us", ks_param.quantum_us, 10, 100000 },
	};
	int i;

	if (ks_param.render_minor) {
		pr_err("render_minor=%u is retired: DRM chooses the render minors now (topology drm_render_minor shows them); drop the parameter\n",
		       ks_param.render_minor);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(r); i++) {
		if (r[i].v < r[i].lo || r[i].v > r[i].hi) {
			pr_err("%s=%u out of range %u..%u\n", r[i].name, r[i].v, r[i].lo, r[i].hi);
			return -EINVAL;
		}
	}
	/* The default: the most engines, up to 4, that divide num_cu into <= 16 CUs each. */
	for (i = KS_MAX_SE; !ks_param.num_se && i >= 1; i--)
		if ((i <= 4 || ks_param.num_cu > 64) && ks_param.num_cu % i == 0 &&
		    ks_param.num_cu / i <= 16)
			ks_param.num_se = i;
	if (ks_param.num_se > KS_MAX_SE || ks_param.num_cu % ks_param.num_se ||
	    ks_param.num_cu / ks_param.num_se > 16) {
		pr_err("num_se=%u: must be 1..%d, divide num_cu=%u, and leave at most 16 CUs per engine\n",
		       ks_param.num_se, KS_MAX_SE, ks_param.num_cu);
		return -EINVAL;
	}
	/* Checked unscaled; from here on every modelled time is xK. */
	ks_param.runlist_us *= ks_param.time_scale;
	ks_param.mes_us *= ks_param.time_scale;
	ks_param.cwsr_save_us *= ks_param.time_scale;
	ks_param.cwsr_restore_us *= ks_param.time_scale;
	ks_param.poll_us *= ks_param.time_scale;
	ks_param.quantum_us *= ks_param.time_scale;
	if (!strcmp(sched, "mes")) {
		ks_param.mes = true;
	} else if (!strcmp(sched, "nohws")) {
		/* Per-queue load/unload, like MES, but by the driver. */
		ks_param.mes = true;
		ks_param.nohws = true;
	} else if (!strcmp(sched, "oracle")) {
		/* Per-queue mapping; the CP preempts by level (gpu.c). */
		ks_param.mes = true;
		ks_param.oracle = true;
	} else if (strcmp(sched, "hws")) {
		pr_err("sched=%s: expected hws, mes, nohws or oracle\n", sched);
		return -EINVAL;
	}
	return 0;
}

/* kfdsim/devN/: the device's HWS-hang flag (dqm->is_hws_hang), for tests. */
static void ks_dev_debugfs(struct ks_device *d)
{
	char name[8];
	struct dentry *dir;

	snprintf(name, sizeof(name), "dev%u", d->id);
	dir = debugfs_create_dir(name, ks_debugfs);
	debugfs_create_bool("hws_hang", 0600, dir, &d->dqm.is_hws_hang);
}

static void ks_gpus_stop(unsigned int n)
{
	while (n--)
		ks_gpu_stop(&ks_devs[n]);
}

static int __init ks_init(void)
{
	unsigned int i, started = 0;
	int ret = ks_check_params();

	if (!ret)
		ret = ks_sdma_check_params();
	if (!ret)
		ret = ks_fault_init();
	if (!ret)
		ret = ks_reset_init();
	if (ret)
		return ret;
	for (i = 0; i < ks_param.ndev; i++) {
		ks_devs[i].id = i;
		ks_dqm_init(&ks_devs[i]);
	}
	ret = ks_processes_init();
	if (ret)
		return ret;
	for (; started < ks_param.ndev; started++) {
		ret = ks_gpu_start(&ks_devs[started]);
		if (ret)
			goto err_gpu;
	}
	ret = ks_chardev_init();
	if (ret)
		goto err_gpu;
	ks_debugfs = debugfs_create_dir("kfdsim", NULL);
	ret = ks_kfd_init(ks_debugfs);
	if (ret) {
		debugfs_remove_recursive(ks_debugfs);
		ks_chardev_exit();
		goto err_gpu;
	}
	debugfs_create_file("stats", 0444, ks_debugfs, NULL, &ks_stats_fops);
	debugfs_create_file("queues", 0444, ks_debugfs, NULL, &ks_queues_fops);
	debugfs_create_file("acct", 0444, ks_debugfs, NULL, &ks_acct_fops);
	debugfs_create_file("params", 0444, ks_debugfs, NULL, &ks_params_fops);
	debugfs_create_file("release_tasks", 0444, ks_debugfs, NULL, &ks_rel_tasks_fops);
	ks_oracle_debugfs(ks_debugfs);
	ks_kname_debugfs(ks_debugfs);
	for (i = 0; i < ks_param.ndev; i++)
		ks_dev_debugfs(&ks_devs[i]);
	ks_fault_debugfs(ks_debugfs);
	ret = ks_kfd_evict_debugfs(ks_debugfs);
	if (ret) {
		debugfs_remove_recursive(ks_debugfs);
		ks_kfd_exit();
		ks_chardev_exit();
		goto err_gpu;
	}
	ks_reset_debugfs(ks_debugfs);
	pr_info("simulated GPU: %u device(s) of %u CUs, %s, runlist %u us, CWSR save %u us / restore %u us\n",
		ks_param.ndev, ks_param.num_cu,
		ks_param.oracle ? "oracle" : ks_param.mes ? "MES" : "HWS", ks_param.runlist_us,
		ks_param.cwsr_save_us, ks_param.cwsr_restore_us);
	return 0;

err_gpu:
	ks_gpus_stop(started);
	ks_processes_exit();
	return ret;
}

static void __exit ks_exit(void)
{
	debugfs_remove_recursive(ks_debugfs);
	ks_reset_exit();
	ks_kfd_exit();
	ks_chardev_exit();
	ks_processes_exit();
	ks_kfd_evict_exit();
	ks_gpus_stop(ks_param.ndev);
	ks_fault_exit();
}

module_init(ks_init);
module_exit(ks_exit);
MODULE_DESCRIPTION("Simulated amdkfd + AMD GPU for gpreempt's tests");
MODULE_LICENSE("GPL");
