/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: found only through -I include/kcl/header. */
#ifndef GP_FIXTURE_KCL_FIXTURE_H
#define GP_FIXTURE_KCL_FIXTURE_H
#ifndef GP_FIXTURE_KCL
#error "include/kcl/kcl_version.h was not forced in (-include)"
#endif
#endif
