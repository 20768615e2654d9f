/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Fixture: the tree's own copy of the KFD uapi header; it must win over the
 * kernel's <uapi/linux/kfd_ioctl.h>, which lacks this enum.
 */
#ifndef KFD_IOCTL_H_INCLUDED
#define KFD_IOCTL_H_INCLUDED

#include <linux/types.h>

enum kfd_ioctl_gp_fixture_method {
	KFD_IOCTL_GP_FIXTURE_METHOD_A = 1,
};

#endif
