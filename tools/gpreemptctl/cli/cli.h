/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cli.h - gpreemptctl's command line: what is checked before the module is
 * looked for (check.c) and the version (version.c), which main.c alone
 * calls.  What other rooms share is in gpreemptctl.h.
 */
#ifndef GPREEMPTCTL_CLI_H
#define GPREEMPTCTL_CLI_H

#include "gpreemptctl.h"

/* check.c: a verb's arguments, checked without the module (printed). */
int check_args(const char *verb, int argc, char **argv);

/* version.c */
int cmd_version(struct ctl *c, int argc, char **argv);

#endif /* GPREEMPTCTL_CLI_H */
