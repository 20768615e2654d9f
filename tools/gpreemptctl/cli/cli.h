/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cli.h - gpreemptctl's command line: what is checked before the module is
 * looked for (check.c), the version (version.c), error output (util.c).
 */
#ifndef GPREEMPTCTL_CLI_H
#define GPREEMPTCTL_CLI_H

#include "gpreemptctl.h"

#include "gp_version.h"

/* The tool's version: the module's and dkms.conf's (test/unit/cli.sh checks). */
#define GP_TOOL_VERSION GP_VERSION

/* util.c: err() prints {"error": "..."} on stdout (-j), or nothing (quiet). */
extern bool err_json;
extern bool err_quiet;
/* util.c: err() starts its message with it (apply: the file's FILE:LINE). */
extern const char *err_where;

/* check.c: a verb's arguments, checked without the module (printed). */
int check_args(const char *verb, int argc, char **argv);

/* views.c */
int top_args(int argc, char **argv, double *delay, long *count);

/* version.c */
int cmd_version(struct ctl *c, int argc, char **argv);

/* doctor.c: exit EX_OK, or EX_DOCTOR_FAIL (doctor.h) when a check failed */
int cmd_doctor(struct ctl *c, int argc, char **argv);

#endif /* GPREEMPTCTL_CLI_H */
