/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gp_version.h - the one version of gpreempt: the module's (modinfo, and
 * /sys/module/gpreempt/version), gpreemptctl's and the DKMS package's
 * (dkms.conf's PACKAGE_VERSION).  test/unit/cli.sh checks that the three
 * agree.  The module's srcversion tells two builds of one version apart.
 */
#ifndef GP_VERSION_H
#define GP_VERSION_H

#define GP_VERSION "0.1"

#endif /* GP_VERSION_H */
