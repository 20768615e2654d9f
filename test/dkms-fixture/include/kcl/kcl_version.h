/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: forced on every object of the tree (amd/dkms/Kbuild). */
#ifndef GP_FIXTURE_KCL_VERSION_H
#define GP_FIXTURE_KCL_VERSION_H
#define GP_FIXTURE_KCL 1
#endif
