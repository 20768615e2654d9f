// SPDX-License-Identifier: GPL-2.0
/*
 * hookparse.c - the container hook's input, without side effects (so the
 * unit test, test/unit/test_hook.c, runs it on the host): the OCI state
 * (createRuntime, poststop) or the NRI v0.1 request read with json-c, the
 * gpreempt.io/priority value, a cgroup v2 line of /proc/PID/cgroup, an NRI
 * cgroupsPath (cgroupfs or systemd form), and the "container" lines of
 * /etc/gpreempt.conf.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "gpreemptctl.h"

static int why_set(char *why, size_t wlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int why_set(char *why, size_t wlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, wlen, fmt, ap);
	va_end(ap);
	return -1;
}

/**
 * hook_id_ok() - a container id that is safe as a file name
 * @id: text
 *
 * Return: true for 1..128 of [A-Za-z0-9_.-], not starting with '.' or '-'.
 */
bool hook_id_ok(const char *id)
{
	size_t i, n = strlen(id);

	if (!n || n >= HOOK_ID_LEN || id[0] == '.' || id[0] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]) && !strchr("_.-", id[i]))
			return false;
	return true;
}

/**
 * hook_prio() - the value of gpreempt.io/priority, strictly: low, normal,
 * high, or 0..15 in decimal without sign, space or leading zeros
 * @v: text
 * @prio: result
 *
 * Return: 0, or -1 when @v is none of them.
 */
int hook_prio(const char *v, int *prio)
{
	size_t n = strlen(v);

	if (!strcmp(v, "low"))
		*prio = GP_PRIO_LOW;
	else if (!strcmp(v, "normal"))
		*prio = GP_PRIO_NORMAL;
	else if (!strcmp(v, "high"))
		*prio = GP_PRIO_HIGH;
	else if (n == 1 && isdigit((unsigned char)v[0]))
		*prio = v[0] - '0';
	else if (n == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5')
		*prio = 10 + v[1] - '0';
	else
		return -1;
	return 0;
}

/*
 * Printable, bounded copy of a value for a one-line message: control and
 * non-ASCII bytes become '?', long values end in "...".
 */
static void printable(const char *s, char *out, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < len; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i])
		memcpy(out + i, "...", 3), i += 3;
	out[i] = '\0';
}

/**
 * hook_refusal() - the one line that refuses a container with a bad value
 * @value: the annotation's value (any bytes)
 * @buf: result
 * @len: its size
 */
void hook_refusal(const char *value, char *buf, size_t len)
{
	char v[48];

	printable(value, v, sizeof(v));
	snprintf(buf, len,
		 "annotation %s=\"%s\" refused: expected low, normal, high or 0..%d",
		 HOOK_ANNOTATION, v, GP_PRIO_MAX);
}

static const char *str_field(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/**
 * hook_parse() - read an OCI state or an NRI v0.1 request
 * @buf: the JSON text (need not be terminated)
 * @len: its length
 * @nri: an NRI v0.1 request ({"state", "id", "pid", "spec": {"cgroupsPath",
 *	"annotations"}}), else an OCI state ({"id", "status", "pid",
 *	"annotations"})
 * @r: result
 * @why: on failure, why (one line)
 * @wlen: its size
 *
 * Only the fields the hook needs are read; every other one may be anything.
 * A value of gpreempt.io/priority that is not a string is a bad value.
 *
 * Return: 0 or -1.
 */
int hook_parse(const char *buf, size_t len, bool nri, struct hook_req *r, char *why, size_t wlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *root = NULL, *ann = NULL, *spec, *v;
	enum json_tokener_error jerr;
	const char *s;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	if (!tok)
		return why_set(why, wlen, "out of memory");
	if (len > INT32_MAX) {
		why_set(why, wlen, "input too long");
		goto out;
	}
	/* RFC 8259 only: no single quotes, no trailing commas. */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, buf, len);
	jerr = json_tokener_get_error(tok);
	if (jerr == json_tokener_continue) {
		why_set(why, wlen, "the JSON ends early");
		goto out;
	}
	if (!root || jerr != json_tokener_success) {
		why_set(why, wlen, "not JSON: %s at byte %zu", json_tokener_error_desc(jerr),
			json_tokener_get_parse_end(tok));
		goto out;
	}
	/* Only white space may follow the object. */
	for (s = buf + json_tokener_get_parse_end(tok); s < buf + len; s++) {
		if (!isspace((unsigned char)*s)) {
			why_set(why, wlen, "more than one JSON value on stdin");
			goto out;
		}
	}
	if (!json_object_is_type(root, json_type_object)) {
		why_set(why, wlen, "expected a JSON object");
		goto out;
	}
	s = str_field(root, "id");
	if (!s || !hook_id_ok(s)) {
		why_set(why, wlen, "no usable container \"id\" (1..%d of A-Z a-z 0-9 _ . -)",
			HOOK_ID_LEN - 1);
		goto out;
	}
	snprintf(r->id, sizeof(r->id), "%s", s);
	if (json_object_object_get_ex(root, "pid", &v)) {
		if (!json_object_is_type(v, json_type_int)) {
			why_set(why, wlen, "\"pid\" is not a number");
			goto out;
		}
		errno = 0;
		r->pid = json_object_get_int64(v) > 0 && json_object_get_int64(v) <= INT32_MAX ?
			 (int)json_object_get_int64(v) : 0;
	}
	s = str_field(root, nri ? "state" : "status");
	snprintf(r->state, sizeof(r->state), "%s", s ? s : "");
	if (nri) {
		s = str_field(root, "sandboxID");
		snprintf(r->sandbox_id, sizeof(r->sandbox_id), "%s", s ? s : "");
		if (json_object_object_get_ex(root, "spec", &spec) &&
		    json_object_is_type(spec, json_type_object)) {
			s = str_field(spec, "cgroupsPath");
			if (s && strlen(s) >= sizeof(r->cgroups_path)) {
				why_set(why, wlen, "\"cgroupsPath\" too long");
				goto out;
			}
			snprintf(r->cgroups_path, sizeof(r->cgroups_path), "%s", s ? s : "");
			json_object_object_get_ex(spec, "annotations", &ann);
		}
	} else {
		json_object_object_get_ex(root, "annotations", &ann);
	}
	if (ann && json_object_is_type(ann, json_type_object) &&
	    json_object_object_get_ex(ann, HOOK_ANNOTATION, &v)) {
		r->has_prio = true;
		if (json_object_is_type(v, json_type_string)) {
			s = json_object_get_string(v);
			printable(s, r->prio_text, sizeof(r->prio_text));
			/* "high\u0000x" is not "high" */
			r->prio_ok = strlen(s) == (size_t)json_object_get_string_len(v) &&
				     strlen(s) < sizeof(r->prio_text) && !hook_prio(s, &r->prio);
		} else {
			printable(json_object_to_json_string(v), r->prio_text,
				  sizeof(r->prio_text));
		}
	}
	ret = 0;
out:
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

/**
 * hook_cgroup_line() - the cgroup v2 path in the text of /proc/PID/cgroup
 * @text: the file's content
 * @out: the path ("/libpod_parent/libpod-ID"), relative to the reader's
 *	cgroup namespace
 * @len: its size
 *
 * Return: 0, or -1 when there is no "0::" line.
 */
int hook_cgroup_line(const char *text, char *out, size_t len)
{
	const char *l = text, *e;

	while (*l) {
		e = strchrnul(l, '\n');
		if (!strncmp(l, "0::", 3) && l[3] == '/' && (size_t)(e - l - 3) < len) {
			memcpy(out, l + 3, e - l - 3);
			out[e - l - 3] = '\0';
			return 0;
		}
		l = *e ? e + 1 : e;
	}
	return -1;
}

/* A container's cgroup leaf: "[PREFIX-]<64 hex digits>[.scope]" -> the id. */
static void kube_ctr(const char *c, size_t n, char *ctr)
{
	const char *d = memrchr(c, '-', n);
	size_t i;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	if (d && d < c + n) {
		n -= d + 1 - c;
		c = d + 1;
	}
	if (n != HOOK_CTR_LEN - 1)
		return;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)c[i]) || isupper((unsigned char)c[i]))
			return;
	memcpy(ctr, c, n);
	ctr[n] = '\0';
}

/*
 * A pod's cgroup: "pod<uid>" under a kubepods directory (cgroupfs driver),
 * or "[PREFIX-]kubepods[-QOS]-pod<uid>.slice" (systemd driver, '-' in the
 * uid escaped as '_'; kind's nested kubelet has the prefix "kubelet-") ->
 * the uid.  Return: whether @c is one.
 */
static bool kube_pod(const char *c, size_t n, bool under_kube, char *pod)
{
	const char *u = NULL, *end = c + n, *k = memmem(c, n, "kubepods-", 9);
	size_t i;

	if (k && n > 6 && !memcmp(end - 6, ".slice", 6)) {
		for (u = end - 6; u > k + 8 && memcmp(u - 4, "-pod", 4); u--)
			;
		if (u == k + 8)
			return false;
		end -= 6;
	} else if (under_kube && n > 3 && !memcmp(c, "pod", 3)) {
		u = c + 3;
	} else {
		return false;
	}
	if (end - u < 1 || end - u >= HOOK_POD_LEN)
		return false;
	for (i = 0; u + i < end; i++) {
		if (!isxdigit((unsigned char)u[i]) && u[i] != '-' && u[i] != '_')
			return false;
		pod[i] = u[i] == '_' ? '-' : u[i];
	}
	pod[i] = '\0';
	return true;
}

/**
 * hook_kube_ids() - the pod UID and container id a kubelet's cgroup path names
 * @cg: a cgroup v2 path: "/kubepods.slice/kubepods-burstable.slice/
 *	kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope" (systemd
 *	driver) or "/kubepods/burstable/pod<uid>/<id>" (cgroupfs driver)
 * @pod: HOOK_POD_LEN bytes: the pod's UID, with systemd's escapes undone,
 *	or "" when @cg is no pod's
 * @ctr: HOOK_CTR_LEN bytes: the 64-digit container id of the leaf right
 *	under the pod's cgroup, or "" (the pod's own cgroup, or no pod's)
 *
 * Only a path from a top-level kubepods cgroup (or kind's kubelet.slice)
 * names a pod: a "kubepods-pod<uid>.slice" a user creates under a delegated
 * subtree does not, so no user's queues are labelled as another's pod.
 */
void hook_kube_ids(const char *cg, char *pod, char *ctr)
{
	const char *c = cg, *e;
	bool kube = false, in_pod = false;
	size_t n;

	pod[0] = ctr[0] = '\0';
	if (*cg != '/')
		return;
	for (; *c; c = e) {
		while (*c == '/')
			c++;
		e = strchrnul(c, '/');
		n = e - c;
		if (!n)
			break;
		/* top-level cgroups are root's: no user names one */
		if (c == cg + 1 && !memmem(c, n, "kubepods", 8) &&
		    (n != 13 || memcmp(c, "kubelet.slice", 13)))
			return;
		if (in_pod) {
			kube_ctr(c, n, ctr);
			return;
		}
		if (kube_pod(c, n, kube, pod)) {
			in_pod = true;
			continue;
		}
		if (memmem(c, n, "kubepods", 8))
			kube = true;
	}
}

/*
 * "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice" (systemd's slice
 * nesting), "-.slice" or "" -> "".
 */
static int slice_path(const char *slice, char *out, size_t len)
{
	size_t n = strlen(slice), o = 0, i;
	const char *base;

	out[0] = '\0';
	if (!n || !strcmp(slice, "-.slice"))
		return 0;
	if (n <= 6 || strcmp(slice + n - 6, ".slice") || strchr(slice, '/'))
		return -1;
	base = slice;
	n -= 6;
	for (i = 0; i <= n; i++) {
		if (i < n && base[i] != '-')
			continue;
		if (!i || base[i - 1] == '-')
			return -1;	/* "-a.slice", "a--b.slice" */
		if (o + i + 8 >= len)
			return -1;
		o += snprintf(out + o, len - o, "/%.*s.slice", (int)i, base);
	}
	return 0;
}

/**
 * hook_cgroups_path() - the cgroup directory of an OCI cgroupsPath, relative
 * to the cgroup2 root
 * @spec: "/kubepods/besteffort/pod<uid>/<id>" (cgroupfs driver), or
 *	"kubepods-besteffort-pod<uid>.slice:cri-containerd:<id>" (systemd
 *	driver: SLICE:PREFIX:NAME -> SLICE's nesting/PREFIX-NAME.scope)
 * @out: result, starting with '/'
 * @len: its size
 *
 * Return: 0, or -1 for a path that is neither form, contains "..", or has
 * an empty or "." component ("/.", "//", "a//b", "a/").
 */
int hook_cgroups_path(const char *spec, char *out, size_t len)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char slice[256], unit[256], sp[PATH_MAX];

	if (!*spec || strstr(spec, ".."))
		return -1;
	if (!c1) {
		const char *c = spec[0] == '/' ? spec + 1 : spec, *e;

		/* S4-9: "/.", "//", "a//b", "a/./b", "a/": each would name another cgroup */
		for (;; c = e + 1) {
			e = strchrnul(c, '/');
			if (e == c || (e - c == 1 && c[0] == '.'))
				return -1;
			if (!*e)
				break;
		}
		if ((size_t)snprintf(out, len, "%s%s", spec[0] == '/' ? "" : "/", spec) >= len)
			return -1;
		return 0;
	}
	if (!c2 || strchr(c2 + 1, ':') || strchr(spec, '/') ||
	    (size_t)(c1 - spec) >= sizeof(slice) || !c2[1])
		return -1;
	memcpy(slice, spec, c1 - spec);
	slice[c1 - spec] = '\0';
	if (slice_path(slice, sp, sizeof(sp)))
		return -1;
	if (strlen(c2 + 1) > 6 && !strcmp(c2 + 1 + strlen(c2 + 1) - 6, ".slice")) {
		if ((size_t)snprintf(unit, sizeof(unit), "%s", c2 + 1) >= sizeof(unit))
			return -1;
	} else if (c2 == c1 + 1) {
		if ((size_t)snprintf(unit, sizeof(unit), "%s.scope", c2 + 1) >= sizeof(unit))
			return -1;
	} else if ((size_t)snprintf(unit, sizeof(unit), "%.*s-%s.scope", (int)(c2 - c1 - 1),
				    c1 + 1, c2 + 1) >= sizeof(unit)) {
		return -1;
	}
	if ((size_t)snprintf(out, len, "%s/%s", sp, unit) >= len)
		return -1;
	return 0;
}

/**
 * hook_conf_kv() - one KEY=VALUE of a "container" line of /etc/gpreempt.conf
 * @kv: "max_priority=PRIO"
 * @conf: result
 * @why: on failure, why
 * @wlen: its size
 *
 * Return: 0 or -1.
 */
int hook_conf_kv(const char *kv, struct hook_conf *conf, char *why, size_t wlen)
{
	const char *eq = strchr(kv, '=');

	if (!eq || (size_t)(eq - kv) != strlen("max_priority") ||
	    strncmp(kv, "max_priority", eq - kv))
		return why_set(why, wlen, "unknown container setting '%s': expected max_priority=PRIO",
			       kv);
	if (hook_prio(eq + 1, &conf->max_priority))
		return why_set(why, wlen, "container max_priority=%s out of range: expected low, normal, high or 0..%d",
			       eq + 1, GP_PRIO_MAX);
	return 0;
}

/**
 * hook_conf_read() - the "container" lines of a gpreempt.conf
 * @f: the file (NULL: none, the defaults)
 * @name: its name, for messages
 * @conf: result (max_priority defaults to HOOK_DEFAULT_MAX)
 * @why: on failure, "FILE:LINE: why"
 * @wlen: its size
 *
 * Every other line is apply's business and is skipped here.
 *
 * Return: 0 or -1.
 */
int hook_conf_read(FILE *f, const char *name, struct hook_conf *conf, char *why, size_t wlen)
{
	char line[PATH_MAX + 64], msg[256], *tok, *save, *s;
	int lineno = 0, n;

	conf->max_priority = HOOK_DEFAULT_MAX;
	while (f && fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "#\n")] = '\0';
		tok = strtok_r(line, " \t\r", &save);
		if (!tok || strcmp(tok, "container"))
			continue;
		for (n = 0, s = NULL; (tok = strtok_r(s, " \t\r", &save)); n++) {
			if (hook_conf_kv(tok, conf, msg, sizeof(msg)))
				return why_set(why, wlen, "%s:%d: %s", name, lineno, msg);
		}
		if (!n)
			return why_set(why, wlen, "%s:%d: expected 'container max_priority=PRIO'",
				       name, lineno);
	}
	return 0;
}
