/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksyms.h - the KFD entry points gpreempt resolves at load (ksyms.c).
 */
#ifndef GP_KSYMS_H
#define GP_KSYMS_H

#include <linux/types.h>

struct kfd_process;
struct module;

int gp_ksyms_init(void);
void gp_ksyms_exit(void);
unsigned long gp_lookup_name(const char *name);
struct kfd_process *gp_kfd_lookup_pasid(u32 pasid);
void gp_kfd_unref(struct kfd_process *p);
struct module *gp_ksyms_owner(void);
bool gp_ksyms_ibt_enforced(void);
bool gp_ksyms_op_callable(const void *fn);

#endif /* GP_KSYMS_H */
