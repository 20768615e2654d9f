// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report.c - what gpreemptctl doctor's checks share: the results
 * (dr_add, printed in words or JSON by dr_print), files under
 * $GP_DOCTOR_ROOT and commands on $PATH.  It calls none of the checks:
 * doctor.c runs them (gpu.c, host.c, which read build ids
 * through elf.c), and every one of them reports here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include "gpreemptctl.h"
#include "report.h"
#define DR_MAX 64

static const char * const dr_names[DR_NR] = { "ok", "warn", "fail", "unknown" };

static struct dr_check {
	char name[32];
	enum dr_status st;
	char *value;		/* any length: a node of 64 GPUs lists them all */
	char fix[512];
} checks[DR_MAX];
static int nchecks;
static struct json_object *params;	/* the module's parameters, or NULL */

/**
 * dr_add() - record a check
 * @name: what was checked (one word)
 * @st: its status
 * @fix: what to do, or NULL
 * @fmt: what was seen (printf)
 */
void dr_add(const char *name, enum dr_status st, const char *fix, const char *fmt, ...)
{
	struct dr_check *k;
	va_list ap;

	if (nchecks == DR_MAX)
		return;
	k = &checks[nchecks++];
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->st = st;
	snprintf(k->fix, sizeof(k->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	if (vasprintf(&k->value, fmt, ap) < 0)
		k->value = NULL;
	if (!k->value)
		nchecks--;	/* out of memory: no half check */
	va_end(ap);
}

/** dr_param() - one parameter of the loaded module, for the JSON output */
void dr_param(const char *name, const char *value)
{
	if (!params)
		params = json_object_new_object();
	json_object_object_add(params, name, value ? json_object_new_string(value) : NULL);
}

/** dr_path() - @path under $GP_DOCTOR_ROOT, in @buf */
const char *dr_path(const char *path, char *buf, size_t len)
{
	const char *root = getenv("GP_DOCTOR_ROOT");

	snprintf(buf, len, "%s%s", root ? root : "", path);
	return buf;
}

/**
 * dr_read() - the start of a file under the root, without its last newline
 * @path: absolute path (the root is prepended)
 * @buf: result ("" on error)
 * @len: its size
 *
 * Return: 0, or -errno (-EACCES: needs root).
 */
int dr_read(const char *path, char *buf, size_t len)
{
	char p[4096];
	ssize_t n;
	int fd, e;

	buf[0] = '\0';
	fd = open(dr_path(path, p, sizeof(p)), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0) {
		buf[0] = '\0';
		return e == EPERM ? -EACCES : -e;
	}
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return 0;
}

bool dr_exists(const char *path)
{
	char p[4096];

	return !access(dr_path(path, p, sizeof(p)), F_OK);
}

/** dr_have() - @cmd is an executable on $PATH */
bool dr_have(const char *cmd)
{
	const char *path = getenv("PATH");
	char dir[4096], f[4400];
	const char *s, *e;

	if (!path)
		return false;
	for (s = path; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, ':');
		snprintf(dir, sizeof(dir), "%.*s", (int)(e - s), s);
		snprintf(f, sizeof(f), "%s/%s", *dir ? dir : ".", cmd);
		if (!access(f, X_OK))
			return true;
	}
	return false;
}

/**
 * dr_run_len() - run a command from $PATH, its output (stdout and stderr) kept
 * @argv: the command
 * @out: result, malloc'ed and terminated (free it)
 * @olen: its length (binary output may hold NULs)
 * @max: most bytes kept
 *
 * Return: its exit status, 127 when it is not there, -1 when it could not run.
 */
int dr_run_len(char *const argv[], char **out, size_t *olen, size_t max)
{
	size_t len = 0, cap = 4096;
	char *buf, sink[4096];
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	*out = NULL;
	*olen = 0;
	if (!dr_have(argv[0]))
		return 127;
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		int nul = open("/dev/null", O_RDWR);

		dup2(nul, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	buf = malloc(cap);
	for (;;) {
		if (buf && len + 1 == cap && cap < max + 1) {
			char *nb = realloc(buf, cap * 2);

			if (nb) {
				buf = nb;
				cap *= 2;
			}
		}
		if (!buf || len + 1 == cap)
			n = read(fds[0], sink, sizeof(sink));	/* past @max: drained */
		else if ((n = read(fds[0], buf + len, cap - 1 - len)) > 0)
			len += n;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
	}
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (buf)
		buf[len] = '\0';
	*out = buf;
	*olen = buf ? len : 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/**
 * dr_run() - run a command from $PATH, its output captured (stderr too)
 * @argv: the command
 * @out: result, malloc'ed and terminated (free it), or NULL: not kept
 * @max: most bytes kept
 *
 * Return: its exit status, 127 when it is not there, -1 when it could not run.
 */
int dr_run(char *const argv[], char **out, size_t max)
{
	char *buf;
	size_t len;
	int ret = dr_run_len(argv, &buf, &len, max);

	if (out)
		*out = buf;
	else
		free(buf);
	return ret;
}

/**
 * dr_field() - the value of "key: value" (modinfo) or "key value" in @text
 * @text: lines
 * @key: with its separator ("filename:")
 * @buf: result, trimmed ("" when not there)
 * @len: its size
 *
 * Return: @buf, or NULL when there is no such line.
 */
const char *dr_field(const char *text, const char *key, char *buf, size_t len)
{
	const char *l, *v, *e;
	size_t k = strlen(key);

	buf[0] = '\0';
	for (l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, k))
			continue;
		for (v = l + k; *v == ' ' || *v == '\t'; v++)
			;
		e = strchrnul(v, '\n');
		snprintf(buf, len, "%.*s", (int)(e - v), v);
		return buf;
	}
	return NULL;
}

static void print_words(const struct dr_ctx *c, const int *count)
{
	const char *l, *e;
	int i;

	printf("gpreemptctl doctor: kernel %s, %s\n", c->release,
	       c->root ? "as root" : "not root (what needs root is 'unknown')");
	for (i = 0; i < nchecks; i++) {
		/* a value of several lines: the next ones indented */
		printf("%-8s %-12s", dr_names[checks[i].st], checks[i].name);
		for (l = checks[i].value; l; l = *e ? e + 1 : NULL) {
			e = strchrnul(l, '\n');
			fputs(l == checks[i].value ? " " : "                      ", stdout);
			/* a kernel log line may carry a process name: no control bytes */
			for (; l < e; l++)
				putchar((unsigned char)*l < 0x20 || *l == 0x7f ? '?' : *l);
			putchar('\n');
		}
		if (checks[i].fix[0])
			printf("%-21s -> %s\n", "", checks[i].fix);
	}
	printf("%d ok, %d warn, %d fail, %d unknown\n", count[DR_OK], count[DR_WARN],
	       count[DR_FAIL], count[DR_UNKNOWN]);
}

static void print_json(const struct dr_ctx *c, const int *count)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array(), *k;
	int i;

	json_object_object_add(o, "kernel", json_object_new_string(c->release));
	json_object_object_add(o, "root", json_object_new_boolean(c->root));
	for (i = 0; i < nchecks; i++) {
		k = json_object_new_object();
		json_object_object_add(k, "name", json_object_new_string(checks[i].name));
		json_object_object_add(k, "status", json_object_new_string(dr_names[checks[i].st]));
		json_object_object_add(k, "value", json_object_new_string(checks[i].value));
		json_object_object_add(k, "fix", checks[i].fix[0] ?
				       json_object_new_string(checks[i].fix) : NULL);
		if (!strcmp(checks[i].name, "parameters") && params) {
			json_object_object_add(k, "parameters", params);
			params = NULL;
		}
		json_object_array_add(a, k);
	}
	json_object_object_add(o, "checks", a);
	k = json_object_new_object();
	for (i = 0; i < DR_NR; i++)
		json_object_object_add(k, dr_names[i], json_object_new_int(count[i]));
	json_object_object_add(o, "summary", k);
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/**
 * dr_print() - every recorded check, in words or JSON
 * @c: the kernel release and whether doctor runs as root
 * @json: JSON (-j) instead of words
 *
 * Return: how many checks failed.
 */
int dr_print(const struct dr_ctx *c, bool json)
{
	int count[DR_NR] = { 0 }, i;

	for (i = 0; i < nchecks; i++)
		count[checks[i].st]++;
	if (json)
		print_json(c, count);
	else
		print_words(c, count);
	json_object_put(params);
	params = NULL;
	for (i = 0; i < nchecks; i++)
		free(checks[i].value);
	nchecks = 0;
	return count[DR_FAIL];
}
