/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hooks.h - what the files of hooks/ share: argument and return access for
 * the probe handlers, and the debugger probes (debug.c) that probes.c
 * registers with the others.
 */
#ifndef GP_HOOKS_H
#define GP_HOOKS_H

#include <linux/kprobes.h>
#include <linux/ptrace.h>

#define GP_ARG(regs, fn, name) regs_get_kernel_argument(regs, GP_ARG_##fn##__##name)

/* The int a probed KFD function returned (see the top of probes.c). */
static inline int gp_ret(struct pt_regs *regs)
{
	return (int)regs_return_value(regs);
}

/* Per-call data of the pqm_destroy_queue and kfd_dbg_trap_* kretprobes. */
struct gp_proc_call {
	struct kfd_process *p;
	u32 qid;
};

extern struct kretprobe gp_dbg_probe;
extern struct kretprobe gp_dbg_suspend_probe;
extern struct kretprobe gp_dbg_off_probe;

#endif /* GP_HOOKS_H */
