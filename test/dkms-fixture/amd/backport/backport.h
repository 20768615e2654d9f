/* SPDX-License-Identifier: GPL-2.0 */
/* Fixture: forced on every amdgpu object (amd/backport/Makefile). */
#ifndef GP_FIXTURE_BACKPORT_H
#define GP_FIXTURE_BACKPORT_H
#ifndef HAVE_CONFIG_H
#error "the fixture's amdgpu objects are compiled with -DHAVE_CONFIG_H"
#endif
#include <kcl/kcl_fixture.h>
#endif
