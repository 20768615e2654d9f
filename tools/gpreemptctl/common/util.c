// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * util.c - errors, priority names, JSON strings.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpreemptctl.h"

bool err_json;	/* -j/--json: errors as {"error": "..."} on stdout, as bpftool -j */
bool err_quiet;	/* probing (version): no message */
const char *err_where;	/* "FILE:LINE" of the line being checked (apply), or NULL */

/**
 * err() - print "gpreemptctl: message" on stderr, or {"error":"message"} on
 * stdout in JSON mode
 * @code: exit code to return
 * @fmt: printf format
 *
 * Return: @code.
 */
int err(int code, const char *fmt, ...)
{
	char msg[2 * PATH_MAX];
	va_list ap;

	if (err_quiet)
		return code;
	va_start(ap, fmt);
	if (err_where) {
		snprintf(msg, sizeof(msg), "%s: ", err_where);
		vsnprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), fmt, ap);
	} else {
		vsnprintf(msg, sizeof(msg), fmt, ap);
	}
	va_end(ap);
	if (err_json) {
		fflush(stdout);
		printf("{\"error\":");
		json_str(msg, sizeof(msg));
		printf("}\n");
		fflush(stdout);
	} else {
		fprintf(stderr, "%s: %s\n", prog, msg);
	}
	return code;
}

/**
 * parse_prio() - "low", "normal", "high" or 0..15
 * @s: text
 * @prio: result
 *
 * One grammar with the container annotation (hook_prio()): a number is its
 * digits only, no sign, space or leading zero, so what exec puts in
 * GPREEMPT_PRIORITY is a value the module's parser takes too.
 *
 * Return: EX_OK or EX_RANGE (printed).
 */
int parse_prio(const char *s, int *prio)
{
	if (hook_prio(s, prio))
		return err(EX_RANGE, "priority '%s' out of range: expected low, normal, high or 0..%d",
			   s, GP_PRIO_MAX);
	return EX_OK;
}

const char *prio_name(int prio)
{
	switch (prio) {
	case GP_PRIO_LOW: return "low";
	case GP_PRIO_NORMAL: return "normal";
	case GP_PRIO_HIGH: return "high";
	default: return "";
	}
}

const char *source_name(unsigned int src)
{
	static const char * const n[GP_SRC_NR] = {
		[GP_SRC_KFD] = "kfd", [GP_SRC_COMM] = "comm", [GP_SRC_ENV] = "env",
		[GP_SRC_CGROUP] = "cgroup", [GP_SRC_PID] = "pid", [GP_SRC_QUEUE] = "queue",
	};

	return src < GP_SRC_NR ? n[src] : "?";
}

const char *state_name(unsigned int st)
{
	static const char * const n[GP_Q_NR_STATES] = {
		[GP_Q_RUNNING] = "running", [GP_Q_PREEMPTING] = "preempting",
		[GP_Q_SUSPENDED] = "parked", [GP_Q_RESUMING] = "resuming", [GP_Q_GONE] = "gone",
		[GP_Q_SHRUNK] = "shrunk",
	};

	return st < GP_Q_NR_STATES ? n[st] : "?";
}

/**
 * json_str() - print a JSON string (at most @max bytes of @s)
 * @s: text
 * @max: bound (fixed-size fields need not be terminated)
 */
void json_str(const char *s, size_t max)
{
	size_t i;

	putchar('"');
	for (i = 0; i < max && s[i]; i++) {
		unsigned char ch = s[i];

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/**
 * read_line() - the first line of a small file (sysfs), without its newline
 * @path: file
 * @buf: result, "" when the file cannot be read
 * @len: its size
 */
void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/**
 * kfd_topology_gpu_id() - the gpu_id of node @node of the KFD topology
 * @node: 0, 1, ... in order
 *
 * Return: its gpu_id (0: a CPU node, or unreadable), or -1 past the last node.
 */
long kfd_topology_gpu_id(int node)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "/sys/class/kfd/kfd/topology/nodes/%d/gpu_id", node);
	read_line(path, buf, sizeof(buf));
	if (!buf[0] && access(path, F_OK))
		return -1;
	return strtol(buf, NULL, 10);
}
