// SPDX-License-Identifier: GPL-2.0
/*
 * btf-layout - generate gpreempt's KFD layout header from BTF.
 *
 * Usage: btf-layout [--from <what>] [--build-id <hex>] <base.btf> <split.btf>
 *                   <layout.spec> > gp_layout.h
 *
 * <base.btf> is raw vmlinux BTF (/sys/kernel/btf/vmlinux, or the .BTF section
 * of a vmlinux), <split.btf> the KFD provider's raw module BTF
 * (/sys/kernel/btf/amdgpu, or the .BTF section of amdgpu.ko).  The spec lists
 * what gpreempt relies on:
 *
 *   struct [?]<name> <field>[.<member>]... [?<optional field>]...
 *   hook   [?]<function> <param>...    argument positions of a probed function
 *   call   <function> <prototype> [| <tag>: <prototype>]...
 *                                      prototype gpreempt calls through kallsyms
 *   optype <struct>.<member> <prototype>
 *                                      a function-pointer member gpreempt
 *                                      calls through (dqm->ops): its type
 *   enum   <ENUMERATOR>...             enumerator values
 *   oneof  <have>...                   at least one GP_HAVE_<have> is 1
 *
 * '?' marks what some kernels lack: GP_HAVE_<struct>[__<field>] or
 * GP_HAVE_<function> is emitted as 0 or 1.  A call may list alternative
 * prototypes; the one the kernel has wins, and GP_HAVE_<function>__<tag> says
 * which (the untagged first one is the base).  Anything else missing, or a
 * prototype matching none of the alternatives, is reported by name and the
 * tool exits 1, so the build stops there.
 *
 * The header ends with GP_LAYOUT_CHECKS(): every member offset and size,
 * parameter position and enumerator value above, which insmod compares with
 * the running KFD's own BTF (module/kfd/layout_check.c, review finding C2), and
 * GP_LAYOUT_FROM / GP_LAYOUT_BUILD_ID: the binary the layout was made from
 * (--from, --build-id), for the message and for KFDs without BTF.  Those two
 * name a binary; they are not part of the layout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>

static struct btf *base, *btf;
static int errors;

/* GP_LAYOUT_CHECKS() entries, emitted at the end. */
static char checks[256][200];
static int n_checks;

static void check(const char *fmt, ...)
{
	va_list ap;

	if (n_checks == (int)(sizeof(checks) / sizeof(checks[0]))) {
		fprintf(stderr, "btf-layout: more than %d checks\n", n_checks);
		exit(1);
	}
	va_start(ap, fmt);
	vsnprintf(checks[n_checks++], sizeof(checks[0]), fmt, ap);
	va_end(ap);
}

/* GP_HAVE_* emitted so far, for 'oneof'. */
static struct {
	char name[160];
	int val;
} haves[64];
static int n_haves;

static void have(const char *name, int val)
{
	printf("#define GP_HAVE_%s %d\n", name, val);
	if (n_haves < (int)(sizeof(haves) / sizeof(haves[0]))) {
		snprintf(haves[n_haves].name, sizeof(haves[0].name), "%s", name);
		haves[n_haves++].val = val;
	}
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "btf-layout: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	errors++;
}

/* Find a named type of @kind, preferring the module's own (split) types. */
static int find_type(const char *name, int kind)
{
	int n = btf__type_cnt(btf), first = btf__type_cnt(base), id;

	for (id = first; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_kind(t) == kind && !strcmp(btf__name_by_offset(btf, t->name_off), name) &&
		    !(kind == BTF_KIND_STRUCT && btf_vlen(t) == 0))
			return id;
	}
	for (id = 1; id < first; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_kind(t) == kind && !strcmp(btf__name_by_offset(btf, t->name_off), name) &&
		    !(kind == BTF_KIND_STRUCT && btf_vlen(t) == 0))
			return id;
	}
	return -ENOENT;
}

static int skip_mods(int id)
{
	for (;;) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		switch (btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			break;
		default:
			return id;
		}
	}
}

/* Render a type the way C spells it in a prototype ("struct queue *"). */
static void type_str(int id, char *buf, size_t len)
{
	const struct btf_type *t;
	char inner[200];

	if (id == 0) {
		snprintf(buf, len, "void");
		return;
	}
	t = btf__type_by_id(btf, id);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		type_str(t->type, inner, sizeof(inner));
		snprintf(buf, len, "%s%s*", inner, inner[strlen(inner) - 1] == '*' ? "" : " ");
		return;
	case BTF_KIND_CONST:
		type_str(t->type, inner, sizeof(inner));
		snprintf(buf, len, "const %s", inner);
		return;
	case BTF_KIND_VOLATILE:
	case BTF_KIND_TYPE_TAG:
		type_str(t->type, buf, len);
		return;
	case BTF_KIND_STRUCT:
		snprintf(buf, len, "struct %s", btf__name_by_offset(btf, t->name_off));
		return;
	case BTF_KIND_UNION:
		snprintf(buf, len, "union %s", btf__name_by_offset(btf, t->name_off));
		return;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		snprintf(buf, len, "enum %s", btf__name_by_offset(btf, t->name_off));
		return;
	case BTF_KIND_FWD:
		snprintf(buf, len, "%s %s", btf_kflag(t) ? "union" : "struct",
			 btf__name_by_offset(btf, t->name_off));
		return;
	case BTF_KIND_FUNC_PROTO:
		snprintf(buf, len, "fnptr");
		return;
	default:
		snprintf(buf, len, "%s", btf__name_by_offset(btf, t->name_off));
	}
}

/* Byte offset of a (possibly dotted) member path; size in *size. */
static long member_off(int sid, const char *path, long *size)
{
	char name[128], *dot;
	long off = 0;

	snprintf(name, sizeof(name), "%s", path);
	for (char *cur = name; cur; cur = dot) {
		const struct btf_type *t = btf__type_by_id(btf, skip_mods(sid));
		const struct btf_member *m;
		int i, found = 0;

		dot = strchr(cur, '.');
		if (dot)
			*dot++ = '\0';
		if (!btf_is_composite(t))
			return -1;
		m = btf_members(t);
		for (i = 0; i < btf_vlen(t); i++, m++) {
			if (strcmp(btf__name_by_offset(btf, m->name_off), cur))
				continue;
			if (btf_member_bit_offset(t, i) % 8)
				return -1;
			off += btf_member_bit_offset(t, i) / 8;
			sid = m->type;
			found = 1;
			break;
		}
		if (!found)
			return -1;
	}
	*size = btf__resolve_size(btf, sid);
	return off;
}

static void do_struct(char *args)
{
	char *sname = strtok(args, " \t"), *f;
	int opt_struct = *sname == '?', sid;

	sname += opt_struct;
	sid = find_type(sname, BTF_KIND_STRUCT);
	if (opt_struct)
		have(sname, sid >= 0);
	if (sid < 0) {
		if (!opt_struct)
			fail("struct %s: not in the KFD provider's BTF", sname);
		return;
	}
	printf("#define GP_SIZEOF_%s %lld\n", sname, (long long)btf__resolve_size(btf, sid));
	while ((f = strtok(NULL, " \t"))) {
		int optional = *f == '?';
		char macro[160], *c;
		long off, size;

		if (optional)
			f++;
		snprintf(macro, sizeof(macro), "%s__%s", sname, f);
		for (c = macro; *c; c++)
			if (*c == '.')
				*c = '_';
		off = member_off(sid, f, &size);
		if (off < 0) {
			if (optional) {
				have(macro, 0);
				continue;
			}
			fail("struct %s has no field '%s' (layout changed?)", sname, f);
			continue;
		}
		if (optional)
			have(macro, 1);
		printf("#define GP_OFF_%s %ld\n#define GP_SZ_%s %ld\n", macro, off, macro, size);
		check("FIELD(\"%s\", \"%s\", %ld, %ld)", sname, f, off, size);
	}
}

static const struct btf_type *func_proto(const char *fname)
{
	int id = find_type(fname, BTF_KIND_FUNC);

	if (id < 0)
		return NULL;
	return btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
}

static void emit_typedef(const struct btf_type *proto, const char *fname);

static void do_hook(char *args)
{
	char *fname = strtok(args, " \t"), *pname;
	int optional = *fname == '?';
	const struct btf_type *proto = func_proto(fname + optional);

	fname += optional;
	if (optional)
		have(fname, !!proto);
	if (!proto) {
		if (!optional)
			fail("function %s: not in the KFD provider's BTF (renamed or inlined?)",
			     fname);
		return;
	}
	printf("#define GP_NARGS_%s %d\n", fname, btf_vlen(proto));
	emit_typedef(proto, fname);
	while ((pname = strtok(NULL, " \t"))) {
		const struct btf_param *p = btf_params(proto);
		int i;

		for (i = 0; i < btf_vlen(proto); i++, p++)
			if (!strcmp(btf__name_by_offset(btf, p->name_off), pname))
				break;
		if (i == btf_vlen(proto)) {
			fail("function %s has no parameter '%s'", fname, pname);
			continue;
		}
		printf("#define GP_ARG_%s__%s %d\n", fname, pname, i);
		check("ARG(\"%s\", \"%s\", %d, %d)", fname, pname, i, btf_vlen(proto));
	}
}

/* "ret(args)"; with @name, a C typedef of the function type instead. */
static void proto_str(const struct btf_type *proto, const char *name, char *buf, size_t len)
{
	const struct btf_param *p = btf_params(proto);
	char t[256];
	size_t n;
	int i;

	type_str(proto->type, t, sizeof(t));
	if (name)
		n = snprintf(buf, len, "typedef %s%sgp_fn_%s_t(", t,
			     t[strlen(t) - 1] == '*' ? "" : " ", name);
	else
		n = snprintf(buf, len, "%s(", t);
	for (i = 0; i < btf_vlen(proto) && n < len; i++, p++) {
		type_str(p->type, t, sizeof(t));
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "", t);
	}
	if (n < len)
		snprintf(buf + n, len - n, name ? ");" : ")");
}

/* The kernel's own function type, so callers and kfdsim are compiler-checked. */
static void emit_typedef(const struct btf_type *proto, const char *fname)
{
	char decl[1024];

	proto_str(proto, fname, decl, sizeof(decl));
	printf("%s\n", decl);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* "call fn proto [| tag: proto]...": the first alternative the kernel has. */
static void do_call(char *args)
{
	char *fname = strtok(args, " \t"), *rest = strtok(NULL, ""), *alt[8], *tag[8];
	const struct btf_type *proto = func_proto(fname);
	char have_str[1024], tried[2048] = "", macro[160];
	int n = 0, i, match = -1;

	if (!proto) {
		fail("function %s: not in the KFD provider's BTF (renamed or inlined?)", fname);
		return;
	}
	for (char *a = strtok(rest, "|"); a && n < 8; a = strtok(NULL, "|")) {
		char *colon;

		a = trim(a);
		colon = strchr(a, ':');
		tag[n] = NULL;
		if (n && colon) {
			*colon = '\0';
			tag[n] = trim(a);
			a = trim(colon + 1);
		}
		alt[n++] = a;
	}
	proto_str(proto, NULL, have_str, sizeof(have_str));
	for (i = 0; i < n; i++) {
		if (match < 0 && !strcmp(have_str, alt[i]))
			match = i;
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s'%s'",
			 i ? " or " : "", alt[i]);
	}
	if (match < 0) {
		fail("function %s: the kernel has '%s', gpreempt calls %s", fname, have_str,
		     n ? tried : "?");
		return;
	}
	for (i = 1; i < n; i++) {
		if (!tag[i])
			continue;
		snprintf(macro, sizeof(macro), "%s__%s", fname, tag[i]);
		have(macro, i == match);
	}
	emit_typedef(proto, fname);
	check("ARG(\"%s\", NULL, -1, %d)", fname, btf_vlen(proto));
}

/* "optype struct.member proto": the function-pointer type of an ops member. */
static void do_optype(char *args)
{
	char *what = strtok(args, " \t"), *want = strtok(NULL, ""), *mem;
	char have_str[1024];
	const struct btf_type *t = NULL;
	const struct btf_member *m;
	int sid, i;

	mem = what ? strchr(what, '.') : NULL;
	want = want ? trim(want) : NULL;
	if (!mem || !want || !*want) {
		fail("spec: optype needs <struct>.<member> <prototype>");
		return;
	}
	*mem++ = '\0';
	sid = find_type(what, BTF_KIND_STRUCT);
	if (sid < 0) {
		fail("struct %s: not in the KFD provider's BTF", what);
		return;
	}
	t = btf__type_by_id(btf, sid);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), mem))
			break;
	if (i == btf_vlen(t)) {
		fail("struct %s has no field '%s' (layout changed?)", what, mem);
		return;
	}
	t = btf__type_by_id(btf, skip_mods(m->type));
	if (btf_kind(t) == BTF_KIND_PTR)
		t = btf__type_by_id(btf, skip_mods(t->type));
	if (btf_kind(t) != BTF_KIND_FUNC_PROTO) {
		fail("struct %s member %s: not a function pointer", what, mem);
		return;
	}
	proto_str(t, NULL, have_str, sizeof(have_str));
	if (strcmp(have_str, want))
		fail("struct %s member %s: the kernel has '%s', gpreempt calls '%s'", what, mem,
		     have_str, want);
}

static void do_oneof(char *args)
{
	char *name, list[512] = "";

	for (name = strtok(args, " \t"); name; name = strtok(NULL, " \t")) {
		for (int i = 0; i < n_haves; i++)
			if (!strcmp(haves[i].name, name) && haves[i].val)
				return;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), " %s", name);
	}
	fail("none of:%s (this KFD has neither form)", list);
}

static void do_enum(char *args)
{
	char *name;

	while ((name = strtok(args, " \t"))) {
		int n = btf__type_cnt(btf), id, found = 0;

		args = NULL;
		for (id = 1; id < n && !found; id++) {
			const struct btf_type *t = btf__type_by_id(btf, id);
			const struct btf_enum *e;
			int i;

			if (btf_kind(t) != BTF_KIND_ENUM)
				continue;
			e = btf_enum(t);
			for (i = 0; i < btf_vlen(t); i++, e++) {
				if (strcmp(btf__name_by_offset(btf, e->name_off), name))
					continue;
				printf("#define GP_ENUM_%s %d\n", name, e->val);
				check("ENUMV(\"%s\", %d)", name, e->val);
				found = 1;
				break;
			}
		}
		if (!found)
			fail("enumerator %s: not in the KFD provider's BTF", name);
	}
}

int main(int argc, char **argv)
{
	const char *from = NULL, *build_id = "", *prog = argv[0];
	char line[1024];
	FILE *spec;

	for (; argc > 2 && !strncmp(argv[1], "--", 2); argc -= 2, argv += 2) {
		if (!strcmp(argv[1], "--from"))
			from = argv[2];
		else if (!strcmp(argv[1], "--build-id") &&
			 strspn(argv[2], "0123456789abcdef") == strlen(argv[2]))
			build_id = argv[2];
		else
			break;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: %s [--from <what>] [--build-id <hex>] <base.btf> <split.btf> <layout.spec>\n",
			prog);
		return 2;
	}
	if (!from)
		from = argv[2];
	base = btf__parse_raw(argv[1]);
	if (!base) {
		fprintf(stderr, "btf-layout: cannot read base BTF %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	btf = btf__parse_raw_split(argv[2], base);
	if (!btf) {
		fprintf(stderr, "btf-layout: cannot read KFD BTF %s on base %s: %s\n", argv[2],
			argv[1], strerror(errno));
		return 1;
	}
	spec = fopen(argv[3], "r");
	if (!spec) {
		fprintf(stderr, "btf-layout: %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	printf("/* SPDX-License-Identifier: GPL-2.0 */\n");
	printf("/* Generated by scripts/btf-layout from %s; do not edit. */\n", argv[2]);
	printf("#ifndef GP_LAYOUT_H\n#define GP_LAYOUT_H\n");
	printf("struct kfd_process; struct kfd_process_device; struct kfd_node; struct kfd_dev;\n");
	printf("struct queue; struct amdgpu_bo; struct page; struct vm_area_struct;\n");
	printf("struct queue_properties; struct process_queue_manager; struct mmu_notifier;\n");
	printf("struct mm_struct; struct file; struct kfd_criu_queue_priv_data;\n");
	printf("struct device_queue_manager; struct qcm_process_device; struct mqd_update_info;\n");
	while (fgets(line, sizeof(line), spec)) {
		char *nl = strchr(line, '\n'), *kw;

		if (nl)
			*nl = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		kw = strtok(line, " \t");
		if (!kw)
			continue;
		if (!strcmp(kw, "struct"))
			do_struct(strtok(NULL, ""));
		else if (!strcmp(kw, "hook"))
			do_hook(strtok(NULL, ""));
		else if (!strcmp(kw, "call"))
			do_call(strtok(NULL, ""));
		else if (!strcmp(kw, "enum"))
			do_enum(strtok(NULL, ""));
		else if (!strcmp(kw, "oneof"))
			do_oneof(strtok(NULL, ""));
		else if (!strcmp(kw, "optype"))
			do_optype(strtok(NULL, ""));
		else
			fail("spec: unknown keyword '%s'", kw);
	}
	printf("/* What insmod checks on the running KFD: module/kfd/layout_check.c */\n");
	printf("#define GP_LAYOUT_FROM \"%s\"\n", from);
	printf("#define GP_LAYOUT_BUILD_ID \"%s\"\n", build_id);
	printf("#define GP_LAYOUT_CHECKS(FIELD, ARG, ENUMV) \\\n");
	for (int i = 0; i < n_checks; i++)
		printf("\t%s \\\n", checks[i]);
	printf("\t/* end of GP_LAYOUT_CHECKS */\n");
	printf("#endif /* GP_LAYOUT_H */\n");
	fclose(spec);
	btf__free(btf);
	btf__free(base);
	if (errors)
		fprintf(stderr, "btf-layout: %d problem(s); gpreempt cannot be built for this KFD\n",
			errors);
	return errors ? 1 : 0;
}
