// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gpreemptctl - control and observe gpreempt (priority preemption for AMD GPU
 * compute queues) through its BPF maps.  See gpreemptctl(8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpreemptctl.h"

const char *prog = "gpreemptctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpreemptctl [--json] COMMAND [ARGS]\n"
		"\n"
		"views (--json for JSON):\n"
		"  status                           counters and every queue, one screen\n"
		"  top [-d SECONDS] [-n COUNT]      status, refreshed\n"
		"  stats                            every counter and the latency histograms\n"
		"  list                             every rule\n"
		"  config                           gp_config and the module parameters\n"
		"rules (PRIO: low, normal, high or 0..15):\n"
		"  set pid|cgroup|comm|queue TARGET PRIO\n"
		"  unset pid|cgroup|comm|queue TARGET\n"
		"      TARGET: pid, cgroup v2 path (or id:N), process name, PID:QID\n"
		"  park|unpark queue PID:QID        hold a queue parked by hand, release it\n"
		"  config KEY=VALUE...              enable, tick_us, hysteresis_us, max_suspend_us,\n"
		"                                   min_slice_us, env, env_max_priority\n"
		"  apply [--strict] [FILE]          make rules and knobs match FILE\n"
		"                                   (default /etc/gpreempt.conf; a missing cgroup\n"
		"                                   skips its rule, --strict: refuses the file)\n"
		"  exec --priority PRIO -- CMD...   run CMD with GPREEMPT_PRIORITY=PRIO\n"
		"containers (gpreemptctl hook --help):\n"
		"  hook create|poststop|nri|gc|resync\n"
		"                                   OCI hook / NRI v0.1 plugin: the annotation\n"
		"                                   gpreempt.io/priority becomes a container rule\n"
		"\n"
		"exit status: 0 ok, 1 error, 2 usage, 3 gpreempt not loaded, 4 not permitted,\n"
		"             5 value out of range, 6 no such cgroup, pid or queue\n");
}

static int cmd_exec(int argc, char **argv)
{
	int prio, ret, a = 1;

	if (argc < 5 || strcmp(argv[1], "--priority") || strcmp(argv[3], "--"))
		return err(EX_USAGE, "usage: exec --priority PRIO -- CMD [ARGS...]");
	ret = parse_prio(argv[2], &prio);
	if (ret)
		return ret;
	a = 4;
	if (setenv("GPREEMPT_PRIORITY", argv[2], 1))
		return err(EX_ERR, "setenv: %s", strerror(errno));
	execvp(argv[a], argv + a);
	return err(errno == ENOENT ? 127 : 126, "cannot run %s: %s", argv[a], strerror(errno));
}

/*
 * --json and --help after the verb, as users type them ("gpreemptctl stats
 * --json"): taken out of argv[1..argc-1], up to a "--".  Returns the new
 * argc, or -1 for --help.
 */
static int strip_options(struct ctl *c, int argc, char **argv)
{
	int a, n = 1;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--")) {
			while (a < argc)
				argv[n++] = argv[a++];
			break;
		}
		if (!strcmp(argv[a], "--json")) {
			c->json = true;
			continue;
		}
		if (!strcmp(argv[a], "--help"))
			return -1;
		argv[n++] = argv[a];
	}
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	struct ctl c = { 0 };
	const char *cmd;
	int ret;

	/* Installed as an NRI v0.1 plugin (/opt/nri/bin/gpreempt): its name is its type. */
	if (argc > 0 && argv[0] && strrchr(argv[0], '/'))
		prog = strrchr(argv[0], '/') + 1;
	else if (argc > 0 && argv[0] && argv[0][0])
		prog = argv[0];

	while (argc > 1 && argv[1][0] == '-' && argv[1][1] == '-' && argv[1][2]) {
		if (!strcmp(argv[1], "--json")) {
			c.json = true;
		} else if (!strcmp(argv[1], "--help")) {
			usage(stdout);
			return EX_OK;
		} else {
			usage(stderr);
			return err(EX_USAGE, "unknown option '%s'", argv[1]);
		}
		argc--;
		argv++;
	}
	if (argc < 2) {
		usage(stderr);
		return EX_USAGE;
	}
	cmd = argv[1];
	argc--;
	argv++;
	if (!strcmp(cmd, "help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return EX_OK;
	}
	if (!strcmp(cmd, "exec"))
		return cmd_exec(argc, argv);
	if (!strcmp(cmd, "hook") || !strcmp(cmd, "invoke"))
		return cmd_hook(argc, argv);
	if (strcmp(cmd, "status") && strcmp(cmd, "top") && strcmp(cmd, "stats") &&
	    strcmp(cmd, "list") && strcmp(cmd, "config") && strcmp(cmd, "set") &&
	    strcmp(cmd, "unset") && strcmp(cmd, "park") && strcmp(cmd, "unpark") &&
	    strcmp(cmd, "apply")) {
		usage(stderr);
		return err(EX_USAGE, "unknown command '%s'", cmd);
	}
	argc = strip_options(&c, argc, argv);
	if (argc < 0) {
		usage(stdout);
		return EX_OK;
	}
	ret = maps_open(&c);
	if (ret)
		return ret;
	if (!strcmp(cmd, "status"))
		return cmd_status(&c, argc, argv);
	if (!strcmp(cmd, "top"))
		return cmd_top(&c, argc, argv);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(&c, argc, argv);
	if (!strcmp(cmd, "list"))
		return cmd_list(&c, argc, argv);
	if (!strcmp(cmd, "config"))
		return cmd_config(&c, argc, argv);
	if (!strcmp(cmd, "set"))
		return cmd_set(&c, argc, argv);
	if (!strcmp(cmd, "unset"))
		return cmd_unset(&c, argc, argv);
	if (!strcmp(cmd, "park") || !strcmp(cmd, "unpark"))
		return cmd_park(&c, argc, argv, !strcmp(cmd, "park"));
	return cmd_apply(&c, argc, argv);
}
