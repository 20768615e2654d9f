/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * gp_pidstart.h - a process's start as struct gp_prio_pid.start names it
 * (bpf/gp_maps.h): starttime, field 22 of /proc/PID/stat, in USER_HZ clock
 * ticks since boot.  User space only: gpreemptctl (set pid) and gpload
 * (its map stress) read it the same way.
 */
#ifndef GP_PIDSTART_H
#define GP_PIDSTART_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/**
 * gp_pid_start() - the start of process @pid
 * @pid: a process id (the reader's pid namespace)
 * @start: result
 *
 * Return: 0, -ESRCH (no such process) or -EINVAL (no field 22).
 */
static inline int gp_pid_start(uint32_t pid, uint64_t *start)
{
	char path[64], buf[1024], *p, *end;
	unsigned long long v;
	size_t len;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* Fields 3.. follow the last ')': the comm may hold anything. */
	p = strrchr(buf, ')');
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -EINVAL;
	errno = 0;
	v = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1)
		return -EINVAL;
	*start = v;
	return 0;
}

#endif /* GP_PIDSTART_H */
