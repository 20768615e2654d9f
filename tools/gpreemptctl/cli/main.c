// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gpreemptctl - control and observe gpreempt (priority preemption for AMD GPU
 * compute queues) through its BPF maps.  See gpreemptctl(8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

const char *prog = "gpreemptctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpreemptctl [-j|--json] COMMAND [ARGS]\n"
		"       gpreemptctl -V|--version|version\n"
		"       gpreemptctl COMMAND --help\n"
		"\n"
		"views (-j or --json for JSON):\n"
		"  status                           counters and every queue, one screen\n"
		"  top [-d SECONDS] [-n COUNT]      status, refreshed\n"
		"  stats                            every counter and the latency percentiles\n"
		"  list                             every rule\n"
		"  config                           gp_config and the module parameters\n"
		"  version                          this tool's and the loaded module's version\n"
		"  doctor                           check this machine for gpreempt: kernel,\n"
		"                                   amdgpu, layout, Secure Boot, hooks, module\n"
		"  metrics [--listen [ADDR:]PORT]   OpenMetrics text once, or served for Prometheus\n"
		"  selftest --client PATH [--runs N] [--seconds S] [--markdown]\n"
		"                                   in shadow mode: park and unpark its own BE\n"
		"                                   process N times, measure, report\n"
		"rules (PRIO: low, normal, high or 0..15):\n"
		"  set pid|cgroup|comm|queue TARGET PRIO\n"
		"  unset pid|cgroup|comm|queue TARGET\n"
		"      TARGET: pid, cgroup v2 path (or id:N), process name, PID:QID\n"
		"  park|unpark queue PID:QID        hold a queue parked by hand, release it\n"
		"  config KEY=VALUE...              enable, tick_us, hysteresis_us, max_suspend_us,\n"
		"                                   min_slice_us, env, env_max_priority\n"
		"  apply [--strict] [FILE]          make rules and knobs match FILE\n"
		"                                   (default /etc/gpreempt.conf; a missing cgroup\n"
		"                                   leaves its rule pending, --strict: refuses the\n"
		"                                   file; --if-pending: only while one is pending)\n"
		"  apply --check [FILE|-]           only check FILE (no module, no privilege)\n"
		"  exec --priority PRIO -- CMD...   run CMD with GPREEMPT_PRIORITY=PRIO\n"
		"containers (gpreemptctl hook --help):\n"
		"  hook create|poststop|nri|gc|resync\n"
		"                                   OCI hook / NRI v0.1 plugin: the annotation\n"
		"                                   gpreempt.io/priority becomes a container rule\n"
		"\n"
		"exit status: 0 ok, 1 error, 2 usage, 3 gpreempt not loaded, 4 not permitted,\n"
		"             5 value out of range, 6 no such cgroup, pid, queue or file,\n"
		"             7 doctor: a check failed\n");
}

/* Each verb's own --help (stdout, exit 0). */
static const struct verb {
	const char *name;
	const char *help;
} verbs[] = {
	{ "status",
	  "usage: gpreemptctl [-j] status\n"
	  "Counters and every queue, one screen: process, queue id, KFD and effective\n"
	  "priority, its source, state, pointer path, park counts.  Needs root.\n" },
	{ "top",
	  "usage: gpreemptctl [-j] top [-d SECONDS] [-n COUNT]\n"
	  "status every SECONDS (0.05..3600, default 1), COUNT times (default 0: until\n"
	  "interrupted).  With -j one JSON object per line.  Needs root.\n" },
	{ "stats",
	  "usage: gpreemptctl [-j] stats\n"
	  "Every counter of gp_stats and the latency of detection and of the park and\n"
	  "unpark calls: samples, mean, p50, p90, p99 and max in microseconds (from\n"
	  "log-linear buckets: a percentile is at most 6.25 % above the exact one).\n"
	  "Needs root.\n" },
	{ "list",
	  "usage: gpreemptctl [-j] list\n"
	  "Every rule: kind, target, priority (and the hold of queue entries).  Needs root.\n" },
	{ "config",
	  "usage: gpreemptctl [-j] config\n"
	  "       gpreemptctl config KEY=VALUE...\n"
	  "Show gp_config and the module parameters, or set gp_config fields (0 or\n"
	  "default: use the module parameter): enable=on|off, tick_us=10..100000,\n"
	  "hysteresis_us, max_suspend_us, min_slice_us, env=on|off,\n"
	  "env_max_priority=PRIO.  Settings are checked before the module is looked for.\n"
	  "Needs root.\n" },
	{ "set",
	  "usage: gpreemptctl set pid|cgroup|comm|queue TARGET PRIO\n"
	  "Set a rule.  TARGET: a pid; a cgroup v2 directory, absolute or relative to the\n"
	  "cgroup2 mount; a process name (1..15 characters); PID:QID (one queue).\n"
	  "PRIO: low (3), normal (7), high (12) or 0..15.  Needs root.\n" },
	{ "unset",
	  "usage: gpreemptctl unset pid|cgroup|comm|queue TARGET\n"
	  "Remove a rule.  A cgroup may be named id:N (from list).  Needs root.\n" },
	{ "park",
	  "usage: gpreemptctl park queue PID:QID\n"
	  "Hold a queue parked, whatever the priorities say, until unpark, the end of\n"
	  "the process, max_hold_s or rmmod.  Needs root.\n" },
	{ "unpark",
	  "usage: gpreemptctl unpark queue PID:QID\n"
	  "Release a queue held by park; the priorities decide again.  Needs root.\n" },
	{ "apply",
	  "usage: gpreemptctl apply [--strict] [--if-pending] [FILE]\n"
	  "       gpreemptctl apply --check [--strict] [FILE|-]\n"
	  "Make the cgroup and comm rules and the gp_config knobs match FILE (default\n"
	  "/etc/gpreempt.conf).  The file is checked in full first, before the module is\n"
	  "looked for; a bad line changes nothing.  A cgroup that does not exist skips\n"
	  "its rule with a warning and leaves it pending (list shows it) until an apply\n"
	  "finds its cgroup; --strict refuses the file for it.  --if-pending applies\n"
	  "only while a rule is pending (gpreempt-retry.timer's call).  Needs root.\n"
	  "--check only checks FILE (- reads stdin, e.g. a ConfigMap's gpreempt.conf):\n"
	  "no module, no privilege; exit 0 when apply would accept it.\n" },
	{ "exec",
	  "usage: gpreemptctl exec --priority PRIO -- CMD [ARGS...]\n"
	  "Run CMD with GPREEMPT_PRIORITY=PRIO in its environment (honoured when the\n"
	  "env knob is on, up to env_max_priority).  Needs no privilege.\n" },
	{ "doctor",
	  "usage: gpreemptctl [-j] doctor\n"
	  "Check this machine for gpreempt, before or after install: the kernel and its\n"
	  "headers, amdgpu (in-tree or DKMS, its version, its build id against the file\n"
	  "on disk), the KFD layout source a build would use, CWSR and the scheduler per\n"
	  "GPU, IBT, lockdown, Secure Boot and gpreempt.ko's signature, kprobes, cgroup v2,\n"
	  "bpffs, the container hooks and runtimes, the loaded module, its parameters and\n"
	  "its last error in the kernel log.  Each check: ok, warn, fail or unknown, and\n"
	  "what to do.  Any user; what needs root is 'unknown'.  Exit 0 when no check\n"
	  "failed (warnings allowed), 7 when one did.\n" },
	{ "metrics",
	  "usage: gpreemptctl metrics [--listen [ADDR:]PORT]\n"
	  "gp_stats and gp_queues as OpenMetrics text: once to stdout (node_exporter's\n"
	  "textfile collector), or served at GET /metrics on ADDR:PORT (ADDR defaults to\n"
	  "127.0.0.1: the queues' labels name every user's processes) until SIGTERM, the\n"
	  "maps opened for each scrape (gpreempt_up 0 while it is not loaded).  Counters:\n"
	  "parks, unparks, errors, device fences, shadow mode's; per level the time its\n"
	  "work waited beside lower work; histograms of detection and the park and unpark\n"
	  "calls; per queue (pid, qid, dev, comm, cgroup, pod_uid, container_id) its\n"
	  "parks, parked seconds, shadow parks, state and priority.  Needs root.\n" },
	{ "selftest",
	  "usage: gpreemptctl [-j] selftest --client PATH [--runs N] [--seconds S] [--markdown]\n"
	  "A first-contact measurement, with gpreempt in shadow mode (enable=0), on two\n"
	  "processes of its own started from the load client PATH (gpload): LC alone;\n"
	  "LC beside a BE process (what gpreempt would do, and detection); BE's queues\n"
	  "parked and unparked N times (default 20), each waited for (end to end, and\n"
	  "the module's KFD call); LC beside BE held parked.  No other process is ever\n"
	  "parked.  It stops at the first failure (a park not seen within 5 s, an error\n"
	  "of gpreempt's, a device fence).  Report: JSON (pretty; -j: one line) or\n"
	  "Markdown, with the kernel, module, amdgpu and ROCm versions and every GPU.\n"
	  "Exit 0, 1 when it stopped early.  Needs root.\n" },
	{ "version",
	  "usage: gpreemptctl [-j] version   (or -V, --version)\n"
	  "This tool's version and libbpf's; when gpreempt is loaded, the module's\n"
	  "version, build id and layout source as far as it exposes them, and whether\n"
	  "its maps match this tool (root only).  Needs no privilege.\n" },
};

static const struct verb *verb_of(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(verbs[i].name, name))
			return &verbs[i];
	return NULL;
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
 * -j/--json and -h/--help after the verb, as users type them ("gpreemptctl
 * stats --json"), and apply's --check: taken out of argv[1..argc-1], up to a
 * "--".  Returns the new argc, or -1 for --help.
 */
static int strip_options(struct ctl *c, int argc, char **argv, bool *check)
{
	int a, n = 1;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--")) {
			while (a < argc)
				argv[n++] = argv[a++];
			break;
		}
		if (!strcmp(argv[a], "--json") || !strcmp(argv[a], "-j")) {
			c->json = true;
			continue;
		}
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h"))
			return -1;
		if (check && !strcmp(argv[a], "--check")) {
			*check = true;
			continue;
		}
		argv[n++] = argv[a];
	}
	argv[n] = NULL;
	return n;
}

/* apply [--check] [FILE]: the file is checked before the maps are opened. */
static int run_apply(struct ctl *c, int argc, char **argv, bool check)
{
	const char *file = "/etc/gpreempt.conf";
	int a, ret;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-"))
			argv[a] = "/dev/stdin";
		if (argv[a][0] != '-' || argv[a][1] != '-')
			file = argv[a];
	}
	if (!check)
		return cmd_apply(c, argc, argv);
	ret = cmd_apply(NULL, argc, argv);
	if (ret)
		return ret;
	if (c->json) {
		printf("{\"file\":");
		json_str(file, strlen(file));
		printf(",\"valid\":true}\n");
	} else {
		printf("%s: valid\n", file);
	}
	return EX_OK;
}

int main(int argc, char **argv)
{
	struct ctl c = { 0 };
	const struct verb *v;
	const char *cmd;
	bool check = false;
	int ret, i;

	for (i = 0; i < M_NR; i++)
		c.fd[i] = -1;
	/* Installed as an NRI v0.1 plugin (/opt/nri/bin/gpreempt): its name is its type. */
	if (argc > 0 && argv[0] && strrchr(argv[0], '/'))
		prog = strrchr(argv[0], '/') + 1;
	else if (argc > 0 && argv[0] && argv[0][0])
		prog = argv[0];

	while (argc > 1 && argv[1][0] == '-' && argv[1][1]) {
		if (!strcmp(argv[1], "--json") || !strcmp(argv[1], "-j")) {
			c.json = true;
		} else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			usage(stdout);
			return EX_OK;
		} else if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
			argv[1] = "version";
			break;
		} else {
			err_json = c.json;
			return err(EX_USAGE, "unknown option '%s' (gpreemptctl --help lists them)",
				   argv[1]);
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
	if (!strcmp(cmd, "help")) {
		v = argc > 1 ? verb_of(argv[1]) : NULL;
		if (argc > 1 && !v && strcmp(argv[1], "hook"))
			return err(EX_USAGE, "unknown command '%s' (gpreemptctl --help lists them)",
				   argv[1]);
		if (argc > 1 && !v)	/* help hook */
			return cmd_hook(2, (char *[]){ "hook", "--help", NULL });
		if (v)
			fputs(v->help, stdout);
		else
			usage(stdout);
		return EX_OK;
	}
	/* The container hook has its own options, help and JSON (NRI). */
	if (!strcmp(cmd, "hook") || !strcmp(cmd, "invoke"))
		return cmd_hook(argc, argv);
	err_json = c.json;
	v = verb_of(cmd);
	if (!v)
		return err(EX_USAGE, "unknown command '%s' (gpreemptctl --help lists them)", cmd);
	if (!strcmp(cmd, "exec")) {
		if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			fputs(v->help, stdout);
			return EX_OK;
		}
		return cmd_exec(argc, argv);
	}
	argc = strip_options(&c, argc, argv, !strcmp(cmd, "apply") ? &check : NULL);
	if (argc < 0) {
		fputs(v->help, stdout);
		return EX_OK;
	}
	err_json = c.json;
	/* Arguments first: a bad command line is exit 2/5/6 with or without the module. */
	ret = check_args(cmd, argc, argv);
	if (ret)
		return ret;
	if (!strcmp(cmd, "version"))
		return cmd_version(&c, argc, argv);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(&c, argc, argv);
	if (!strcmp(cmd, "apply"))
		return run_apply(&c, argc, argv, check);
	if (!strcmp(cmd, "metrics"))
		return cmd_metrics(argc, argv);
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
	if (!strcmp(cmd, "selftest"))
		return cmd_selftest(&c, argc, argv);
	return cmd_park(&c, argc, argv, !strcmp(cmd, "park"));
}
