// SPDX-License-Identifier: GPL-2.0
/*
 * probes.c - kprobes on amdkfd: learn every user queue and follow it.
 *
 *   kfd_procfs_add_queue(q)                queue born: q complete, p->mutex held
 *   pqm_update_queue_properties(pqm, qid, p)  priority / percent change (ROCr
 *                                          creates at 7 and sets priority later);
 *                                          a kretprobe: recorded only if it succeeded
 *   pqm_update_mqd(pqm, qid, minfo)        SET_CU_MASK: the owner's CU mask (a
 *                                          kretprobe: kept only if it succeeded)
 *   pqm_destroy_queue(pqm, qid)            queue destroyed (a kretprobe: only
 *                                          if KFD freed it, still under p->mutex)
 *   kfd_process_notifier_release(mn, mm)   process dying (mm going away)
 *   kfd_process_notifier_release_internal(p)  7.2+: any context's teardown;
 *                                          a secondary context's only one
 *   pqm_uninit(pqm)                        last chance before KFD frees queues
 *   kfd_dbg_trap_enable(target, ...)       debugger attach (debug.c): parked by
 *                                          eviction only (on success)
 *   suspend_queues(p, ...)                 the debugger suspends queues (under
 *                                          p->mutex): a queue gpreempt parked is
 *                                          the debugger's from now on
 *   kfd_dbg_trap_disable(target)           debugger detach: KFD resumed what the
 *                                          debugger suspended; managed again
 *
 * Handlers run in atomic context: they only update the registry (spinlock,
 * GFP_ATOMIC) and wake the monitor; they never sleep or call into KFD.
 * Argument positions come from BTF (gp_layout.h).  Every probed function
 * returns int: a return handler reads gp_ret(), never the raw register,
 * whose upper half the x86-64 ABI leaves undefined (-ETIME in eax is
 * 0x00000000ffffffc2 in rax).
 *
 * over 400 lines: the probe table and one handler per probed KFD function
 * (the debugger's are in debug.c); splitting it would split the table.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include "testing.h"
#include "kfd/ksyms.h"
#include "core/registry.h"
#include "monitor/monitor.h"
#include "attach.h"
#include "kfd/kfd.h"

#include "hooks.h"

static int gp_on_add_queue(struct kprobe *kp, struct pt_regs *regs)
{
	struct queue *q = (struct queue *)GP_ARG(regs, kfd_procfs_add_queue, q);

	if (q && gp_registry_add_queue(q) == -ENOMEM)
		pr_warn_ratelimited("out of memory: a new queue stays unmanaged\n");
	return 0;
}

/* Per-call data of the pqm_update_queue_properties kretprobe. */
struct gp_update_call {
	struct kfd_process *p;
	u32 qid;
	u32 priority;
	u32 percent;
};

static int gp_on_update_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_update_call *c = (struct gp_update_call *)ri->data;
	struct process_queue_manager *pqm =
		(void *)GP_ARG(regs, pqm_update_queue_properties, pqm);
	char *props = (char *)GP_ARG(regs, pqm_update_queue_properties, p);

	if (!pqm || !props)
		return 1;	/* nothing to follow: skip the return handler */
	c->p = kfd_pqm_process(pqm);
	c->qid = GP_ARG(regs, pqm_update_queue_properties, qid);
	c->priority = *(u32 *)(props + GP_OFF_queue_properties__priority);
	c->percent = *(u32 *)(props + GP_OFF_queue_properties__queue_percent);
	return 0;
}

static int gp_on_update_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_update_call *c = (struct gp_update_call *)ri->data;

	/*
	 * KFD wrote q->properties before update_queue(), so even a failed
	 * update may have changed them: the monitor re-reads them from KFD
	 * under p->mutex.  These values are only a fast hint.
	 */
	if (gp_ret(regs) == 0)
		gp_registry_update_queue(c->p, c->qid, c->priority, c->percent);
	else
		gp_registry_update_queue(c->p, c->qid, U32_MAX, U32_MAX);
	return 0;
}

/*
 * A kretprobe instance is held from a call's entry to its return,
 * and SET_CU_MASK's and UPDATE_QUEUE's calls sleep there (an unmap and map
 * of the device under HWS): maxactive bounds the callers sleeping at once,
 * not a rate.  A call that finds none free runs without either handler
 * (nmissed); gp_hooks_lost() tells the monitor, which then trusts no
 * recorded mask or property.
 */
#define GP_PROBE_MAXACTIVE 1024

static struct kretprobe gp_update_probe = {
	.kp.symbol_name = "pqm_update_queue_properties",
	.entry_handler = gp_on_update_entry,
	.handler = gp_on_update_return,
	.data_size = sizeof(struct gp_update_call),
	.maxactive = GP_PROBE_MAXACTIVE,
};

/* Per-call data of the pqm_update_mqd kretprobe: the mask, copied at entry. */
struct gp_cu_mask_call {
	struct kfd_process *p;
	u32 qid;
	u32 bits;
	u32 mask[GP_CU_MASK_WORDS];
};

/*
 * The mask is the ioctl's kernel copy (kfd_ioctl_set_cu_mask() memdups it
 * and frees it after the call): read here, at entry, not at return.  A
 * caller without a mask (the debugger's workaround flags) is not followed.
 */
static int gp_on_cu_mask_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_cu_mask_call *c = (struct gp_cu_mask_call *)ri->data;
	struct process_queue_manager *pqm = (void *)GP_ARG(regs, pqm_update_mqd, pqm);
	struct gp_mqd_update_info *mi = (void *)GP_ARG(regs, pqm_update_mqd, minfo);
	u32 bits;

	if (!pqm || !mi || !mi->cu_mask.ptr || !mi->cu_mask.count)
		return 1;
	bits = min_t(u32, mi->cu_mask.count, GP_CU_MASK_BITS);
	c->p = kfd_pqm_process(pqm);
	c->qid = GP_ARG(regs, pqm_update_mqd, qid);
	c->bits = bits;
	memcpy(c->mask, mi->cu_mask.ptr, DIV_ROUND_UP(bits, 32) * sizeof(u32));
	return 0;
}

static int gp_on_cu_mask_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_cu_mask_call *c = (struct gp_cu_mask_call *)ri->data;

	if (gp_ret(regs) == 0)
		gp_registry_set_cu_mask(c->p, c->qid, c->mask, c->bits);
	return 0;
}

static struct kretprobe gp_cu_mask_probe = {
	.kp.symbol_name = "pqm_update_mqd",
	.entry_handler = gp_on_cu_mask_entry,
	.handler = gp_on_cu_mask_return,
	.data_size = sizeof(struct gp_cu_mask_call),
	.maxactive = GP_PROBE_MAXACTIVE,
};

static int gp_on_destroy_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_proc_call *c = (struct gp_proc_call *)ri->data;
	struct process_queue_manager *pqm = (void *)GP_ARG(regs, pqm_destroy_queue, pqm);

	if (!pqm)
		return 1;
	c->p = kfd_pqm_process(pqm);
	c->qid = GP_ARG(regs, pqm_destroy_queue, qid);
	return 0;
}

/*
 * Gone when KFD freed the queue: on success, and on the two errors after
 * which pqm_destroy_queue() frees it anyway (6.12.117's "if (retval !=
 * -ETIME && retval != -EIO) goto err_destroy_queue;": a hung HWS, or a GPU
 * reset holding reset_domain->sem).  On any other error (-EBUSY for a
 * debugged qpd, ...) KFD keeps the queue, and so does gpreempt.  On a
 * kernel without the -EIO backport, a queue kept after -EIO stays unmanaged
 * from then on: the safe side, never managed after it was freed.  The
 * return runs before the caller drops p->mutex, so under p->mutex the
 * backends never see a freed queue that is not marked gone.
 */
static int gp_on_destroy_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_proc_call *c = (struct gp_proc_call *)ri->data;
	int ret = gp_ret(regs);

	if (ret == 0 || ret == -ETIME || ret == -EIO)
		gp_registry_del_queue(c->p, c->qid);
	return 0;
}

static struct kretprobe gp_destroy_probe = {
	.kp.symbol_name = "pqm_destroy_queue",
	.entry_handler = gp_on_destroy_entry,
	.handler = gp_on_destroy_return,
	.data_size = sizeof(struct gp_proc_call),
	.maxactive = 256,
};

static int gp_on_notifier_release(struct kprobe *kp, struct pt_regs *regs)
{
	struct mmu_notifier *mn = (void *)GP_ARG(regs, kfd_process_notifier_release, mn);

	if (mn)
		gp_registry_proc_dead(kfd_mn_process(mn), true);
	return 0;
}

/*
 * 7.2+ (KFD-PORTABILITY.md, secondary contexts): a context made by
 * AMDKFD_IOC_CREATE_PROCESS has no mm notifier; closing its file (also at
 * exit, after the primary's notifier release) takes it out of KFD's table
 * and dequeues its queues here, while another reference can keep it, and so
 * its pqm_uninit(), alive much longer.
 */
static int gp_on_release_internal(struct kprobe *kp, struct pt_regs *regs)
{
	struct kfd_process *p =
		(void *)GP_ARG(regs, kfd_process_notifier_release_internal, p);

	if (p)
		gp_registry_proc_dead(p, false);
	return 0;
}

static int gp_on_pqm_uninit(struct kprobe *kp, struct pt_regs *regs)
{
	struct process_queue_manager *pqm = (void *)GP_ARG(regs, pqm_uninit, pqm);

	if (pqm)
		gp_registry_proc_dead(kfd_pqm_process(pqm), false);
	return 0;
}

static struct kprobe gp_probes[] = {
	{ .symbol_name = "kfd_procfs_add_queue", .pre_handler = gp_on_add_queue },
	{ .symbol_name = "kfd_process_notifier_release", .pre_handler = gp_on_notifier_release },
	{ .symbol_name = "pqm_uninit", .pre_handler = gp_on_pqm_uninit },
	/* Last, and optional: kfd_have_release_internal(). */
	{ .symbol_name = "kfd_process_notifier_release_internal",
	  .pre_handler = gp_on_release_internal },
};

#define GP_NPROBES (ARRAY_SIZE(gp_probes) - (kfd_have_release_internal() ? 0 : 1))

static struct kretprobe *gp_rprobes[] = {
	&gp_update_probe, &gp_destroy_probe, &gp_cu_mask_probe, &gp_dbg_probe,
	&gp_dbg_suspend_probe, &gp_dbg_off_probe,
};

/* Which of gp_rprobes are registered. */
static bool gp_rprobe_on[ARRAY_SIZE(gp_rprobes)];

/*
 * Does this KFD have @rp's function?  Optional: SET_CU_MASK's (without it
 * shrink is off: a shrink must give the owner's mask back) and the
 * debugger API (kfd_dbg_trap_enable, suspend_queues, _disable: 6.6+).
 */
static bool gp_rprobe_wanted(const struct kretprobe *rp)
{
	if (rp == &gp_cu_mask_probe)
		return kfd_have_cu_mask_hook();
	if (rp == &gp_dbg_probe || rp == &gp_dbg_suspend_probe || rp == &gp_dbg_off_probe)
		return kfd_have_dbg_trap();
	return true;
}

static int gp_nregistered;

/*
 * The probes go by bare name, and kallsyms gives the newest
 * module's symbol of that name first: a probe that resolved outside the
 * module providing KFD would watch someone else's function and never fire.
 */
static int gp_probe_in_kfd(const struct kprobe *kp)
{
	struct module *owner = gp_ksyms_owner();

	if (!owner || within_module((unsigned long)kp->addr, owner))
		return 0;
	pr_err("%s resolved to %pS, outside %s: another module has a symbol of that name\n",
	       kp->symbol_name, kp->addr, module_name(owner));
	return -ENOENT;
}

/**
 * gp_hooks_init() - register every probe, or none
 *
 * Return: 0, or the error of the first probe that failed (named in dmesg).
 */
int gp_hooks_init(void)
{
	int i, ret;

	for (i = 0; i < GP_NPROBES; i++) {
		ret = register_kprobe(&gp_probes[i]);
		if (ret) {
			pr_err("cannot probe %s: %d\n", gp_probes[i].symbol_name, ret);
			goto err_unregister_probes;
		}
		gp_nregistered++;
		ret = gp_probe_in_kfd(&gp_probes[i]);
		if (ret)
			goto err_unregister_probes;
	}
	if (gp_test_maxactive()) {
		gp_cu_mask_probe.maxactive = gp_test_maxactive();
		gp_update_probe.maxactive = gp_test_maxactive();
	}
	for (i = 0; i < ARRAY_SIZE(gp_rprobes); i++) {
		if (!gp_rprobe_wanted(gp_rprobes[i]))
			continue;
		ret = register_kretprobe(gp_rprobes[i]);
		if (ret) {
			pr_err("cannot probe %s: %d\n", gp_rprobes[i]->kp.symbol_name, ret);
			goto err_unregister_probes;
		}
		gp_rprobe_on[i] = true;
		ret = gp_probe_in_kfd(&gp_rprobes[i]->kp);
		if (ret)
			goto err_unregister_probes;
		if (gp_rprobes[i] == &gp_cu_mask_probe)
			WRITE_ONCE(gp_reg.have_cu_masks, true);
	}
	return 0;

err_unregister_probes:
	gp_hooks_exit();
	return ret;
}

/**
 * gp_hooks_exit() - unregister the probes; no handler runs after this
 */
void gp_hooks_exit(void)
{
	int i;

	WRITE_ONCE(gp_reg.have_cu_masks, false);
	for (i = ARRAY_SIZE(gp_rprobes) - 1; i >= 0; i--) {
		struct kretprobe *rp = gp_rprobes[i];

		if (!gp_rprobe_on[i])
			continue;
		gp_rprobe_on[i] = false;
		unregister_kretprobe(rp);
		if (rp->nmissed || rp->kp.nmissed)
			pr_info("%s: %d returns, %lu hits missed\n", rp->kp.symbol_name,
				rp->nmissed, rp->kp.nmissed);
		rp->kp.addr = NULL;
		rp->kp.flags = 0;
	}
	while (gp_nregistered > 0) {
		struct kprobe *kp = &gp_probes[--gp_nregistered];

		if (kp->nmissed)
			pr_info("%s: %lu hits missed\n", kp->symbol_name, kp->nmissed);
		unregister_kprobe(kp);
		/* Allow re-registration (module parameters could retry). */
		kp->addr = NULL;
		kp->flags = 0;
	}
}

/* Missed calls of @rp (no instance free, or a reentrant hit). */
static unsigned long gp_rprobe_missed(const struct kretprobe *rp)
{
	return READ_ONCE(rp->nmissed) + READ_ONCE(rp->kp.nmissed);
}

/**
 * gp_hooks_lost() - were SET_CU_MASK, property-update or debugger calls missed?
 *
 * A missed call ran in KFD without gpreempt seeing it: a CU mask
 * it set is not recorded (a grow-back would write the older one back), a
 * priority or percentage update not marked for re-reading.  A missed
 * debugger call leaves a process KFD counts as debugged (its queues'
 * is_suspended flag the debugger's) that gpreempt does not, or its queues
 * resumed unseen.  Monitor only: each call reports what was missed since
 * the previous one.
 *
 * Return: GP_LOST_CU_MASK, GP_LOST_PROPS and/or GP_LOST_DEBUG, or 0.
 */
u32 gp_hooks_lost(void)
{
	static unsigned long seen_cu, seen_props, seen_dbg;
	unsigned long cu = 0, props = 0, dbg = 0;
	u32 lost = 0;
	int i;

	if (READ_ONCE(gp_reg.have_cu_masks))
		cu = gp_rprobe_missed(&gp_cu_mask_probe);
	props = gp_rprobe_missed(&gp_update_probe);
	for (i = 0; i < ARRAY_SIZE(gp_rprobes); i++)
		if (gp_rprobe_on[i] && (gp_rprobes[i] == &gp_dbg_probe ||
					gp_rprobes[i] == &gp_dbg_suspend_probe ||
					gp_rprobes[i] == &gp_dbg_off_probe))
			dbg += gp_rprobe_missed(gp_rprobes[i]);
	if (cu != seen_cu)
		lost |= GP_LOST_CU_MASK;
	if (props != seen_props)
		lost |= GP_LOST_PROPS;
	if (dbg != seen_dbg)
		lost |= GP_LOST_DEBUG;
	seen_cu = cu;
	seen_props = props;
	seen_dbg = dbg;
	return lost;
}

/**
 * gp_hooks_missed() - probe hits lost (kprobe nmissed), all probes
 *
 * Return: the sum.
 */
u64 gp_hooks_missed(void)
{
	u64 n = 0;
	int i;

	for (i = 0; i < gp_nregistered; i++)
		n += gp_probes[i].nmissed;
	for (i = 0; i < ARRAY_SIZE(gp_rprobes); i++)
		if (gp_rprobe_on[i])
			n += gp_rprobes[i]->nmissed + gp_rprobes[i]->kp.nmissed;
	return n;
}
