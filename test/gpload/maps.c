// SPDX-License-Identifier: GPL-2.0
/*
 * maps.c - "gpload maps": gpreempt's control maps under stress, for the soak
 * (test/vm/long-soak.sh).  Plain bpf(2) calls, no libbpf: each write looks its
 * map up by name again, so it follows gpreempt across rmmod/insmod (a write
 * while gpreempt is unloaded finds no map and is counted as "absent").
 *
 *   gpload maps fuzz [--duration S] [--hold-ms MS] [--seed N] [--json FILE]
 *       random writes, valid and invalid, to gp_prio (the tgid of a live
 *       gpload, of init, or of no process), gp_prio_comm ("gpload") and
 *       gp_config; each is undone (override deleted, gp_config zeroed = module
 *       defaults) after up to --hold-ms, so the system converges between them.
 *   gpload maps flip [--duration S] [--json FILE] PID...
 *       priority flip storm: gp_prio of each PID set to 0 or 15 in turn, as
 *       fast as the map takes it; the overrides are deleted at the end.
 *   gpload maps reset
 *       delete every gp_prio and gp_prio_comm entry, zero gp_config.
 *
 * SIGINT/SIGTERM end a run early (after undoing its writes).  Output: one
 * JSON line of counts on stdout (and in --json FILE).  Exit status: 0, 1 if
 * a map rejected a well-formed write, 2 for usage errors.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "gpload.h"

/* The control maps' layouts (GP_COMM_LEN, struct gp_config). */
#include "../../bpf/gp_maps.h"
#include "../../bpf/gp_pidstart.h"

static volatile sig_atomic_t maps_stop;
static long n_writes, n_invalid, n_absent, n_failed;

static void maps_on_signal(int sig)
{
	(void)sig;
	maps_stop = 1;
}

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

/* A new fd of the map called @name, or -1 (gpreempt not loaded). */
static int map_fd(const char *name)
{
	union bpf_attr a;
	__u32 id = 0;

	for (;;) {
		struct bpf_map_info info;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_MAP_GET_NEXT_ID, &a))
			return -1;
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.map_id = id;
		fd = sys_bpf(BPF_MAP_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uintptr_t)&info;
		if (!sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) &&
		    !strncmp(info.name, name, sizeof(info.name)))
			return fd;
		close(fd);
	}
}

/*
 * Update (@val) or delete (@val NULL) @key in map @name and count it:
 * absent (no such map: gpreempt unloaded), failed (the map refused a
 * well-formed update), or written (@invalid: a value gpreempt must reject).
 * A delete of a missing key is fine.
 */
static void put(const char *name, const void *key, const void *val, bool invalid)
{
	union bpf_attr a;
	int fd = map_fd(name), r;

	if (fd < 0) {
		n_absent++;
		return;
	}
	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)key;
	a.value = (uintptr_t)val;
	r = sys_bpf(val ? BPF_MAP_UPDATE_ELEM : BPF_MAP_DELETE_ELEM, &a) ? errno : 0;
	close(fd);
	if (!val)
		return;
	if (r) {
		fprintf(stderr, "gpload maps: update of %s: %s\n", name, strerror(r));
		n_failed++;
		return;
	}
	n_writes++;
	n_invalid += invalid;
}

static void put_config(const struct gp_config *c, bool invalid)
{
	__u32 zero = 0;

	put("gp_config", &zero, c, invalid);
}

/*
 * gp_config.rules_gen + 1, as gpreemptctl does after a rule change, so that
 * gpreempt re-resolves the rules on its next tick instead of within
 * GP_RULES_RESCAN_MS.  Not counted as a write.
 */
static void bump_rules_gen(void)
{
	struct gp_config c;
	union bpf_attr a;
	__u32 zero = 0;
	int fd = map_fd("gp_config");

	if (fd < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.map_fd = fd;
	a.key = (uintptr_t)&zero;
	a.value = (uintptr_t)&c;
	if (!sys_bpf(BPF_MAP_LOOKUP_ELEM, &a)) {
		c.rules_gen++;
		a.value = (uintptr_t)&c;
		sys_bpf(BPF_MAP_UPDATE_ELEM, &a);
	}
	close(fd);
}

/*
 * Start of process @tgid as gp_prio names it (struct gp_prio_pid.start:
 * /proc/PID/stat's starttime), 0 when there is no such process.
 */
static __u64 pid_start(__u32 tgid)
{
	uint64_t v = 0;

	gp_pid_start(tgid, &v);
	return v;
}

static void put_prio(__u32 tgid, const __s32 *prio)
{
	struct gp_prio_pid v = { .start = pid_start(tgid) };

	if (prio)
		v.priority = *prio;
	put("gp_prio", &tgid, prio ? &v : NULL, prio && (*prio < 0 || *prio > GP_PRIO_MAX));
	bump_rules_gen();
}

static void put_comm(const char *comm, const __s32 *prio)
{
	char key[GP_COMM_LEN] = { 0 };

	strncpy(key, comm, sizeof(key) - 1);
	put("gp_prio_comm", key, prio, prio && (*prio < 0 || *prio > GP_PRIO_MAX));
	bump_rules_gen();
}

/* Delete every key of map @name, first key first, until none is left. */
static void clear_map(const char *name, size_t key_size)
{
	char next[GP_COMM_LEN];
	union bpf_attr a;
	int fd = map_fd(name);

	if (fd < 0 || key_size > sizeof(next))
		return;
	for (;;) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.next_key = (uintptr_t)next;
		if (sys_bpf(BPF_MAP_GET_NEXT_KEY, &a))
			break;
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = (uintptr_t)next;
		if (sys_bpf(BPF_MAP_DELETE_ELEM, &a) && errno != ENOENT)
			break;
	}
	close(fd);
}

/* The tgid of a random live gpload other than this one, or 0. */
static __u32 random_gpload(void)
{
	__u32 pids[256];
	int n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < 256) {
		char path[64], comm[32] = "";
		FILE *f;
		long pid = strtol(d->d_name, NULL, 10);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "gpload\n"))
			pids[n++] = pid;
		fclose(f);
	}
	closedir(dir);
	return n ? pids[lrand48() % n] : 0;
}

/* A priority override value: valid (0..15) or not (-1, 16, 255, INT_MIN/MAX). */
static __s32 random_prio(void)
{
	static const __s32 bad[] = { -1, 16, 255, 2147483647, -2147483647 - 1 };

	if (lrand48() % 3)
		return lrand48() % (GP_PRIO_MAX + 1);
	return bad[lrand48() % 5];
}

/*
 * A gp_config duration field: 0 (module default), plausible, 1 (below
 * tick_us's minimum of 10, in range for the others) or 0xffffffff (out of
 * every field's range).  gpreempt ignores the whole value if one field is
 * out of range.
 */
static __u32 random_field(bool *invalid, bool is_tick)
{
	switch (lrand48() % 4) {
	case 0:
		return 0;
	case 1:
		return 100 + lrand48() % 50000;
	case 2:
		*invalid |= is_tick;
		return 1;
	default:
		*invalid = true;
		return 0xffffffffu;
	}
}

/* A 0..@max switch or priority; one time in four something above @max. */
static __u32 random_small(__u32 max, bool *invalid)
{
	if (lrand48() % 4)
		return lrand48() % (max + 1);
	*invalid = true;
	return max + 1 + lrand48() % 300;
}

static void fuzz_once(double hold_us)
{
	struct gp_config c = { 0 };
	__u32 tgid;
	__s32 p = random_prio();
	bool invalid = false;

	switch (lrand48() % 3) {
	case 0:
		tgid = lrand48() % 4 ? random_gpload() : (lrand48() % 2 ? 1 : 4000000);
		put_prio(tgid, &p);
		sleep_us(drand48() * hold_us);
		put_prio(tgid, NULL);
		break;
	case 1:
		put_comm("gpload", &p);
		sleep_us(drand48() * hold_us);
		put_comm("gpload", NULL);
		break;
	default:
		c.enable = random_small(2, &invalid);
		c.env = random_small(2, &invalid);
		c.env_max_priority = random_small(GP_PRIO_MAX, &invalid);
		c.tick_us = random_field(&invalid, true);
		c.hysteresis_us = random_field(&invalid, false);
		c.max_suspend_us = random_field(&invalid, false);
		c.min_slice_us = random_field(&invalid, false);
		/* A starvation-guard cycle under 10 ms is refused (M3; module defaults otherwise). */
		if (c.max_suspend_us && c.min_slice_us &&
		    (c.max_suspend_us / 1000 ? c.max_suspend_us / 1000 : 1) +
		    c.min_slice_us / 1000 < 10)
			invalid = true;
		put_config(&c, invalid);
		sleep_us(drand48() * hold_us);
		memset(&c, 0, sizeof(c));
		put_config(&c, false);
		break;
	}
}

static void maps_report(const char *cmd, const char *json, long flips)
{
	FILE *f;
	char line[256];

	snprintf(line, sizeof(line),
		 "{\"maps\": \"%s\", \"writes\": %ld, \"invalid\": %ld, \"absent\": %ld, \"failed\": %ld, \"flips\": %ld}\n",
		 cmd, n_writes, n_invalid, n_absent, n_failed, flips);
	fputs(line, stdout);
	if (json) {
		f = fopen(json, "w");
		if (!f) {
			perror(json);
			return;
		}
		fputs(line, f);
		fclose(f);
	}
}

static void maps_usage(void)
{
	fprintf(stderr,
		"usage: gpload maps fuzz [--duration S] [--hold-ms MS] [--seed N] [--json FILE]\n"
		"       gpload maps flip [--duration S] [--json FILE] PID...\n"
		"       gpload maps reset\n");
}

/* gpload maps ...: @argv[0] is "maps". */
int maps_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "duration", 1, 0, 'd' }, { "hold-ms", 1, 0, 'H' }, { "seed", 1, 0, 's' },
		{ "json", 1, 0, 'j' }, { "help", 0, 0, 'h' }, { 0 } };
	double duration = 10, hold_ms = 200, end;
	const char *json = NULL, *cmd;
	long flips = 0, seed = 1;
	int c, i;

	if (argc < 2) {
		maps_usage();
		return 2;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': duration = atof(optarg); break;
		case 'H': hold_ms = atof(optarg); break;
		case 's': seed = atol(optarg); break;
		case 'j': json = optarg; break;
		default: maps_usage(); return 2;
		}
	}
	if (duration < 0 || hold_ms < 0) {
		fprintf(stderr, "gpload maps: bad numeric argument\n");
		return 2;
	}
	srand48(seed);
	signal(SIGINT, maps_on_signal);
	signal(SIGTERM, maps_on_signal);
	end = now_us() + duration * 1e6;
	if (!strcmp(cmd, "reset") && optind == argc) {
		struct gp_config z = { 0 };

		clear_map("gp_prio", sizeof(__u32));
		clear_map("gp_prio_comm", GP_COMM_LEN);
		put_config(&z, false);
	} else if (!strcmp(cmd, "fuzz") && optind == argc) {
		while (!maps_stop && now_us() < end) {
			fuzz_once(hold_ms * 1e3);
			sleep_us(drand48() * hold_ms * 1e3);
		}
	} else if (!strcmp(cmd, "flip") && optind < argc) {
		int n = argc - optind;

		for (i = 0; i < n; i++) {
			if (atol(argv[optind + i]) <= 0) {
				fprintf(stderr, "gpload maps flip: bad pid '%s'\n", argv[optind + i]);
				return 2;
			}
		}
		while (!maps_stop && now_us() < end) {
			__u32 tgid = atol(argv[optind + flips % n]);
			__s32 p = (flips / n) % 2 ? 0 : GP_PRIO_MAX;

			put_prio(tgid, &p);
			flips++;
			sleep_us(500);
		}
		for (i = 0; i < n; i++)
			put_prio(atol(argv[optind + i]), NULL);
	} else {
		maps_usage();
		return 2;
	}
	maps_report(cmd, json, flips);
	return n_failed ? 1 : 0;
}
