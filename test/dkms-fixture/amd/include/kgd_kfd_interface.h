/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: what kfd_priv.h needs of the amdgpu/amdkfd interface. */
#ifndef GP_FIXTURE_KGD_KFD_INTERFACE_H
#define GP_FIXTURE_KGD_KFD_INTERFACE_H
#include <linux/types.h>

struct kgd2kfd_shared_resources {
	unsigned int compute_vmid_bitmap;
	bool enable_mes;
};
#endif
