/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * elf.h - GNU build ids for gpreemptctl doctor (elf.c), which the checks
 * read; it reports through report.c only.
 */
#ifndef GPREEMPTCTL_DOCTOR_ELF_H
#define GPREEMPTCTL_DOCTOR_ELF_H

#include <stddef.h>

int dr_note_build_id(const unsigned char *n, size_t len, char *hex, size_t hexlen);
int dr_file_build_id(const char *path, char *hex, size_t hexlen);
int dr_sys_build_id(const char *path, char *hex, size_t hexlen);

#endif /* GPREEMPTCTL_DOCTOR_ELF_H */
