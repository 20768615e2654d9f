/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cumask.h - the CU masks of shrunk queues: pure C, no kernel calls, built
 * into the module and into the user-space unit tests like the policy.
 */
#ifndef GP_CUMASK_H
#define GP_CUMASK_H

#include "policy/policy.h"

/* KFD cuts a SET_CU_MASK mask at 1024 bits (kfd_ioctl_set_cu_mask()). */
#define GP_CU_MASK_BITS 1024
#define GP_CU_MASK_WORDS (GP_CU_MASK_BITS / 32)

u32 gp_cu_weight(const u32 *mask, u32 bits);
void gp_cu_fill(u32 *mask, u32 ncu);
u32 gp_cu_shrink_mask(const u32 *base, u32 bits, const u32 *avoid, u32 pct, u32 *out);

#endif /* GP_CUMASK_H */
