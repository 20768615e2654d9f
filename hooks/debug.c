// SPDX-License-Identifier: GPL-2.0
/*
 * debug.c - the probes on KFD's debugger API (6.6+): attach, the
 * debugger's queue suspend, detach.  A debugged process is still parked,
 * by eviction only: the queues' is_suspended flag is the debugger's.
 * Registered with the others by probes.c (gp_hooks_init()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include "core/registry.h"
#include "kfd/kfd.h"
#include "hooks.h"

static int gp_on_dbg_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_proc_call *c = (struct gp_proc_call *)ri->data;

	c->p = (void *)GP_ARG(regs, kfd_dbg_trap_enable, target);
	return c->p ? 0 : 1;
}

/*
 * Debugged only once the attach succeeded (m1).  A failed one may still
 * have resumed every queue of the process: when the copy of the runtime
 * info to the caller fails, kfd_dbg_trap_enable() deactivates the trap
 * with resume_queues(target, 0, NULL) and returns -EFAULT (6.12
 * kfd_debug.c:817-827 and :595; 7.3 kfd_debug.c:833-842), and any
 * process may call it on itself with a bad pointer.  Its process is parked
 * by eviction only from then on (and the tick's check finds the resumed
 * park).
 */
static int gp_on_dbg_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_proc_call *c = (struct gp_proc_call *)ri->data;

	gp_registry_proc_dbg(c->p, gp_ret(regs) == 0 ? GP_DBG_ATTACH : GP_DBG_FAILED);
	return 0;
}

struct kretprobe gp_dbg_probe = {
	.kp.symbol_name = "kfd_dbg_trap_enable",
	.entry_handler = gp_on_dbg_entry,
	.handler = gp_on_dbg_return,
	.data_size = sizeof(struct gp_proc_call),
	.maxactive = 64,
};

static int gp_on_dbg_off_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_proc_call *c = (struct gp_proc_call *)ri->data;

	c->p = (void *)GP_ARG(regs, kfd_dbg_trap_disable, target);
	return c->p ? 0 : 1;
}

/*
 * Detach (M1): KFD cleared debug_trap_enabled and resumed every queue the
 * debugger had suspended, still under p->mutex.  The return may have dropped
 * the session's reference to @p: it is only compared.
 */
static int gp_on_dbg_off_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct gp_proc_call *c = (struct gp_proc_call *)ri->data;

	if (gp_ret(regs) == 0)
		gp_registry_proc_dbg(c->p, GP_DBG_DETACH);
	return 0;
}

/*
 * SUSPEND_QUEUES (M1), at entry, under p->mutex: suspend_single_queue() counts
 * a queue gpreempt parked as suspended by the debugger, so gpreempt may not
 * unpark it any more.  Entry only: returning 1 skips the return handler.
 */
static int gp_on_dbg_suspend(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kfd_process *p = (void *)GP_ARG(regs, suspend_queues, p);

	if (p)
		gp_registry_proc_dbg(p, GP_DBG_SUSPEND);
	return 1;
}

static int gp_on_dbg_suspend_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}

struct kretprobe gp_dbg_suspend_probe = {
	.kp.symbol_name = "suspend_queues",
	.entry_handler = gp_on_dbg_suspend,
	.handler = gp_on_dbg_suspend_return,
	.maxactive = 8,
};

struct kretprobe gp_dbg_off_probe = {
	.kp.symbol_name = "kfd_dbg_trap_disable",
	.entry_handler = gp_on_dbg_off_entry,
	.handler = gp_on_dbg_off_return,
	.data_size = sizeof(struct gp_proc_call),
	.maxactive = 64,
};
