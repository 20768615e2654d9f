/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: the amdgpu header kfd-src-layout includes first. */
#ifndef GP_FIXTURE_AMDGPU_H
#define GP_FIXTURE_AMDGPU_H
#include <linux/types.h>
#include <kcl/kcl_fixture.h>
#include "kgd_kfd_interface.h"

struct amdgpu_device {
	int dummy;
};
#endif
