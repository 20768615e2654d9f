// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * check.c - a verb's arguments, checked before the module is looked for, so
 * a bad command line gets its own exit status (usage 2, range 5, no such
 * target 6) with or without the module and as any user (gpreemptctl.8, EXIT
 * STATUS).  The verbs check again as they run: these are the same parsers.
 * apply checks its file itself before it opens the maps (rules.c).
 */
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The rule target of set/unset: the same checks as rules.c parse_target(). */
static int check_target(const char *kind, const char *t)
{
	struct gp_queue_key q;
	uint64_t cgid;
	uint32_t pid;
	char *end;

	if (!strcmp(kind, "pid"))
		return parse_pid(t, &pid);
	if (!strcmp(kind, "cgroup")) {
		if (!strncmp(t, "id:", 3)) {
			strtoull(t + 3, &end, 10);
			if (!t[3] || *end)
				return err(EX_USAGE, "bad cgroup id '%s'", t);
			return EX_OK;
		}
		return cgroup_id_of(t, &cgid, NULL, 0);
	}
	if (!strcmp(kind, "comm")) {
		if (!*t || strlen(t) >= GP_COMM_LEN)
			return err(EX_RANGE, "comm '%s' out of range: 1..%d characters", t,
				   GP_COMM_LEN - 1);
		return EX_OK;
	}
	if (!strcmp(kind, "queue"))
		return parse_queue(t, &q);
	return err(EX_USAGE, "unknown rule kind '%s': expected pid, cgroup, comm or queue", kind);
}

/**
 * check_args() - check a verb's arguments without the module
 * @verb: the command
 * @argc: its argument count (argv[0] is the verb)
 * @argv: its arguments, without --json/-j
 *
 * Return: EX_OK, or the exit status (the reason printed).
 */
int check_args(const char *verb, int argc, char **argv)
{
	int prio, a, ret;

	if (!strcmp(verb, "status") || !strcmp(verb, "stats") || !strcmp(verb, "list") ||
	    !strcmp(verb, "version") || !strcmp(verb, "doctor")) {
		if (argc > 1)
			return err(EX_USAGE, "%s takes no arguments (gpreemptctl %s --help)", verb,
				   verb);
		return EX_OK;
	}
	if (!strcmp(verb, "top")) {
		double delay;
		long count;

		return top_args(argc, argv, &delay, &count);
	}
	if (!strcmp(verb, "config")) {
		struct gp_config cfg = { 0 };

		for (a = 1; a < argc; a++) {
			ret = config_set_kv(&cfg, argv[a]);
			if (ret)
				return ret;
		}
		return EX_OK;
	}
	if (!strcmp(verb, "set")) {
		if (argc != 4)
			return err(EX_USAGE, "usage: set pid|cgroup|comm|queue TARGET PRIO");
		ret = check_target(argv[1], argv[2]);
		return ret ?: parse_prio(argv[3], &prio);
	}
	if (!strcmp(verb, "unset")) {
		if (argc != 3)
			return err(EX_USAGE, "usage: unset pid|cgroup|comm|queue TARGET");
		return check_target(argv[1], argv[2]);
	}
	if (!strcmp(verb, "metrics"))
		return metrics_check(argc, argv);
	if (!strcmp(verb, "selftest"))
		return selftest_check(argc, argv);
	if (!strcmp(verb, "park") || !strcmp(verb, "unpark")) {
		struct gp_queue_key q;

		if (argc != 3 || strcmp(argv[1], "queue"))
			return err(EX_USAGE, "usage: %s queue PID:QID", verb);
		return parse_queue(argv[2], &q);
	}
	return EX_OK;
}
