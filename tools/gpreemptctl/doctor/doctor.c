// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * doctor.c - gpreemptctl doctor: a preflight, before or after install.  Each
 * check (gpu.c, host.c) says ok, warn, fail or unknown, what
 * it saw and what to do; the output is words, or JSON (-j) through json-c.
 * It runs as any user with what that user can read: a file it may not read
 * is "unknown (needs root)", never an error.  Exit 0 when no check failed,
 * EX_DOCTOR_FAIL when one did.
 *
 * It only runs the checks and prints them (report.c); the checks
 * call nothing back here.
 *
 * Every file is read under $GP_DOCTOR_ROOT (default: none, the real /proc,
 * /sys, /boot, /lib/modules, /usr/src, /etc, /opt, /var), and every command
 * (modinfo, dkms, mokutil, dmesg, containerd, crio, podman, xz, zstd) is
 * found on $PATH: test/unit/doctor.sh builds fake trees and commands.
 */
#define _GNU_SOURCE
#include <unistd.h>
#include <sys/utsname.h>
#include "gpreemptctl.h"
#include "report.h"
#include "checks.h"

/**
 * cmd_doctor() - every check, in words or JSON
 * @c: -j
 * @argc: 1 (no arguments; check_args checked)
 * @argv: unused
 *
 * Return: EX_OK when no check failed, else EX_DOCTOR_FAIL.
 */
int cmd_doctor(struct ctl *c, int argc, char **argv)
{
	struct dr_ctx x = { 0 };
	struct utsname u;

	(void)argc;
	(void)argv;
	if (dr_read("/proc/sys/kernel/osrelease", x.release, sizeof(x.release)) || !x.release[0]) {
		if (uname(&u))
			snprintf(x.release, sizeof(x.release), "unknown");
		else
			snprintf(x.release, sizeof(x.release), "%s", u.release);
	}
	x.root = !geteuid();
	dr_gpu(&x);
	dr_host(&x);
	return dr_print(&x, c->json) ? EX_DOCTOR_FAIL : EX_OK;
}
