/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * checks.h - gpreemptctl doctor's checks, which doctor.c alone runs; they
 * report through report.c and never call back into doctor.c.
 */
#ifndef GPREEMPTCTL_DOCTOR_CHECKS_H
#define GPREEMPTCTL_DOCTOR_CHECKS_H

#include "report.h"

/* gpu.c: kernel, headers, amdgpu, layout source, CWSR, scheduling */
void dr_gpu(struct dr_ctx *c);
/* host.c: IBT, lockdown, Secure Boot, signature, kprobes, mounts,
 * container runtimes, the module, the kernel log
 */
void dr_host(struct dr_ctx *c);

#endif /* GPREEMPTCTL_DOCTOR_CHECKS_H */
