/* SPDX-License-Identifier: GPL-2.0 */
/*
 * attach.h - the attach layer's entry points (hooks/probes.c), for main.c.
 */
#ifndef GP_ATTACH_H
#define GP_ATTACH_H

#include <linux/types.h>

int gp_hooks_init(void);
void gp_hooks_exit(void);
u64 gp_hooks_missed(void);
u32 gp_hooks_lost(void);

#endif /* GP_ATTACH_H */
