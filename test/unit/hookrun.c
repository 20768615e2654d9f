// SPDX-License-Identifier: GPL-2.0
/*
 * hookrun.c - "gpreemptctl hook" (tools/gpreemptctl/hook/hook.c, unchanged) on
 * the host, without gpreempt: the BPF maps are files in $GP_FAKE_MAPS
 * (one file per key, the value inside) and the cgroup2 root is the
 * directory $GP_FAKE_CGROOT, whose subdirectories are the cgroups (their
 * inode numbers the cgroup ids).  For test/unit/hook.sh: records, their
 * lock, gc and resync, under concurrent runs.
 *
 * usage: hookrun hook [OPTIONS] create|poststop|nri|gc|resync   (as gpreemptctl)
 *        hookrun get CGID          the gp_prio_hook value of CGID, or "none"
 *        hookrun put CGID PRIO     write it (PRIO -1: delete)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "gpreemptctl.h"

const char *prog = "gpreemptctl";

int err(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static const char *maps_dir(void)
{
	const char *d = getenv("GP_FAKE_MAPS");

	return d ? d : "/nonexistent";
}

static void key_path(int fd, const void *key, char *p, size_t len)
{
	snprintf(p, len, "%s/%d.%llu", maps_dir(), fd, (unsigned long long)*(const __u64 *)key);
}

int maps_open(struct ctl *c)
{
	struct stat st;
	int i;

	if (stat(maps_dir(), &st))
		return err(EX_NOTLOADED, "gpreempt is not loaded (fake)");
	for (i = 0; i < M_NR; i++)
		c->fd[i] = i;
	return EX_OK;
}

int rules_bump(struct ctl *c)
{
	(void)c;
	return 0;
}

int bpf_map_update_elem(int fd, const void *key, const void *value, __u64 flags)
{
	char p[PATH_MAX], tmp[PATH_MAX + 16];
	FILE *f;

	(void)flags;
	key_path(fd, key, p, sizeof(p));
	snprintf(tmp, sizeof(tmp), "%s.%d", p, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", ((const struct gp_prio_override *)value)->priority);
	fclose(f);
	return rename(tmp, p);
}

int bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	char p[PATH_MAX];
	FILE *f;
	int v, n;

	key_path(fd, key, p, sizeof(p));
	f = fopen(p, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%d", &v);
	fclose(f);
	if (n != 1) {
		errno = ENOENT;
		return -1;
	}
	((struct gp_prio_override *)value)->priority = v;
	return 0;
}

int bpf_map_delete_elem(int fd, const void *key)
{
	char p[PATH_MAX];

	key_path(fd, key, p, sizeof(p));
	return unlink(p);
}

/* Keys in directory order; the key after @key (NULL: the first). */
int bpf_map_get_next_key(int fd, const void *key, void *next_key)
{
	DIR *d = opendir(maps_dir());
	struct dirent *e;
	bool take = !key;
	char pre[16];
	int ret = -1;

	snprintf(pre, sizeof(pre), "%d.", fd);
	while (d && (e = readdir(d))) {
		unsigned long long k;
		char *end;

		if (strncmp(e->d_name, pre, strlen(pre)))
			continue;
		k = strtoull(e->d_name + strlen(pre), &end, 10);
		if (*end)
			continue;
		if (take) {
			*(__u64 *)next_key = k;
			ret = 0;
			break;
		}
		take = k == *(const __u64 *)key;
	}
	if (d)
		closedir(d);
	if (ret)
		errno = ENOENT;
	return ret;
}

int cgroup_root(char *buf, size_t len)
{
	const char *r = getenv("GP_FAKE_CGROOT");

	if (!r)
		return -1;
	snprintf(buf, len, "%s", r);
	return 0;
}

int cgroup_id_of(const char *path, uint64_t *id, char *abs, size_t abslen)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISDIR(st.st_mode))
		return err(EX_NOTARGET, "no such cgroup: %s", path);
	*id = st.st_ino;
	if (abs)
		snprintf(abs, abslen, "%s", real);
	return EX_OK;
}

int main(int argc, char **argv)
{
	struct gp_prio_override v;
	__u64 key;

	if (argc >= 2 && !strcmp(argv[1], "hook"))
		return cmd_hook(argc - 1, argv + 1);
	if (argc == 3 && !strcmp(argv[1], "get")) {
		key = strtoull(argv[2], NULL, 10);
		if (bpf_map_lookup_elem(M_PRIO_HOOK, &key, &v))
			printf("none\n");
		else
			printf("%d\n", v.priority);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "put")) {
		key = strtoull(argv[2], NULL, 10);
		v.priority = atoi(argv[3]);
		if (v.priority < 0)
			return bpf_map_delete_elem(M_PRIO_HOOK, &key) ? 1 : 0;
		return bpf_map_update_elem(M_PRIO_HOOK, &key, &v, BPF_ANY) ? 1 : 0;
	}
	fprintf(stderr, "usage: hookrun hook ...|get CGID|put CGID PRIO\n");
	return 2;
}
