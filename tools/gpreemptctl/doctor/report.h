/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * report.h - gpreemptctl doctor's ground floor (report.c): the results
 * every check adds, files under GP_DOCTOR_ROOT, commands.  Calls go one way:
 * doctor.c -> the checks (checks.h: gpu.c, host.c) -> elf.c (elf.h) ->
 * report.c; report.c calls none of them.
 */
#ifndef GPREEMPTCTL_DOCTOR_REPORT_H
#define GPREEMPTCTL_DOCTOR_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* Exit status of doctor when a check failed (gpreemptctl.8, doctor). */
#define EX_DOCTOR_FAIL 7

enum dr_status { DR_OK, DR_WARN, DR_FAIL, DR_UNKNOWN, DR_NR };

/* What every check reads: the kernel release, as /proc says. */
struct dr_ctx {
	char release[128];
	bool root;
	bool amdgpu;		/* /sys/module/amdgpu exists */
	bool sb_on;		/* Secure Boot enabled */
	bool lockdown;		/* lockdown integrity or confidentiality */
	bool sig_enforce;	/* module.sig_enforce=1 */
	bool sb_known;
};

void dr_add(const char *name, enum dr_status st, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void dr_param(const char *name, const char *value);
const char *dr_path(const char *path, char *buf, size_t len);
int dr_read(const char *path, char *buf, size_t len);
bool dr_exists(const char *path);
int dr_run(char *const argv[], char **out, size_t max);
int dr_run_len(char *const argv[], char **out, size_t *olen, size_t max);
bool dr_have(const char *cmd);
const char *dr_field(const char *text, const char *key, char *buf, size_t len);
int dr_print(const struct dr_ctx *c, bool json);

#endif /* GPREEMPTCTL_DOCTOR_REPORT_H */
