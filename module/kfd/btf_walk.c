// SPDX-License-Identifier: GPL-2.0
/*
 * btf_walk.c - read raw (split) BTF without libbpf: what layout_check.c needs
 * to compare the running KFD with the layout gpreempt was built for.
 *
 * The blob comes from /sys/kernel/btf/<module> (validated by the kernel when
 * the module loaded) or, in the unit test, from an ELF's .BTF section; every
 * offset is bounds-checked all the same, so a damaged blob is an error, not a
 * fault.  Member lookup descends into anonymous structs and unions, as C
 * name lookup does: kfdsim places its fields that way.
 *
 * over 400 lines: one bounds-checked reader of one format, also built in
 * user space by the unit tests; split, its checks would live in two files.
 */
#include "kfd/btf_walk.h"

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#define gp_calloc(n, size) kvcalloc(n, size, GFP_KERNEL)
#define gp_free(p) kvfree(p)
#else
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define gp_calloc(n, size) calloc(n, size)
#define gp_free(p) free(p)
#endif

#define GP_BTF_MAGIC 0xeB9F
#define GP_BTF_MAX_DEPTH 32	/* typedef/const/array chains, nested anonymous members */

/*
 * The encoding as of 7.x, whatever uapi header this is built with: 7.x
 * widened the kind to 7 bits and vlen to 24 (bits that were zero before)
 * and appended a layout section to the header, which this reader skips.
 * The header alone differs in size between the two (24 and 32 bytes), and a
 * 7.x kernel's vmlinux BTF still has the short one.
 */
#define GP_BTF_KIND(info) (((info) >> 24) & 0x7f)
#define GP_BTF_VLEN(info) ((info) & 0xffffff)
#define GP_BTF_KFLAG(info) ((info) >> 31)

struct gp_btf_header {
	u16 magic;
	u8 version;
	u8 flags;
	u32 hdr_len;
	u32 type_off;
	u32 type_len;
	u32 str_off;
	u32 str_len;
};

/* Bytes that follow struct btf_type for @t, or -1 for a kind we do not know. */
static long gp_btf_extra(const struct btf_type *t)
{
	u32 vlen = GP_BTF_VLEN(t->info);

	switch (GP_BTF_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/**
 * gp_btf_open() - index a raw BTF blob
 * @b: filled in; gp_btf_close() frees it
 * @data: the blob, which must outlive @b
 * @len: its size
 * @base: for split BTF (a module's), the BTF it extends; else NULL
 *
 * Return: 0, -EINVAL for a blob that is not BTF or is damaged, -EPROTO for a
 * type kind this reader does not know (a newer kernel), or -ENOMEM.
 */
int gp_btf_open(struct gp_btf *b, const void *data, size_t len, const struct gp_btf *base)
{
	const struct gp_btf_header *h = data;
	const char *types;
	size_t pos, body;
	u32 n = 0, pass;

	memset(b, 0, sizeof(*b));
	if (len < sizeof(*h) || h->magic != GP_BTF_MAGIC || h->version != 1 ||
	    h->hdr_len < sizeof(*h) || h->hdr_len > len)
		return -EINVAL;
	body = len - h->hdr_len;
	if (h->type_off > body || h->type_len > body - h->type_off ||
	    h->str_off > body || h->str_len > body - h->str_off ||
	    (h->str_len && ((const char *)data)[h->hdr_len + h->str_off + h->str_len - 1]))
		return -EINVAL;
	types = (const char *)data + h->hdr_len + h->type_off;
	b->data = data;
	b->len = len;
	b->strs = (const char *)data + h->hdr_len + h->str_off;
	b->str_len = h->str_len;
	b->base = base;
	b->first_id = base ? base->first_id + base->n_types : 1;
	b->first_str = base ? base->first_str + base->str_len : 0;

	/* Pass 0 counts the types, pass 1 indexes them. */
	for (pass = 0; pass < 2; pass++) {
		for (pos = 0, n = 0; pos < h->type_len; n++) {
			const struct btf_type *t = (const void *)(types + pos);
			long extra;

			if (h->type_len - pos < sizeof(*t))
				goto bad;
			extra = gp_btf_extra(t);
			if (extra < 0) {
				gp_btf_close(b);
				return -EPROTO;
			}
			if ((size_t)extra > h->type_len - pos - sizeof(*t))
				goto bad;
			if (pass)
				b->types[n] = t;
			pos += sizeof(*t) + extra;
		}
		if (!pass) {
			b->types = gp_calloc(n ? n : 1, sizeof(*b->types));
			if (!b->types)
				return -ENOMEM;
		}
	}
	b->n_types = n;
	return 0;
bad:
	gp_btf_close(b);
	return -EINVAL;
}

/**
 * gp_btf_close() - free what gp_btf_open() allocated
 * @b: an opened (or zeroed) gp_btf
 */
void gp_btf_close(struct gp_btf *b)
{
	gp_free(b->types);
	b->types = NULL;
	b->n_types = 0;
}

static const struct btf_type *gp_btf_type(const struct gp_btf *b, u32 id)
{
	while (b && id < b->first_id)
		b = b->base;
	if (!b || id == 0 || id - b->first_id >= b->n_types)
		return NULL;
	return b->types[id - b->first_id];
}

static const char *gp_btf_str(const struct gp_btf *b, u32 off)
{
	while (b && off < b->first_str)
		b = b->base;
	if (!b || off - b->first_str >= b->str_len)
		return "";
	return b->strs + (off - b->first_str);
}

static u32 gp_btf_kind(const struct btf_type *t)
{
	return GP_BTF_KIND(t->info);
}

static u32 gp_btf_vlen(const struct btf_type *t)
{
	return GP_BTF_VLEN(t->info);
}

/* A named type of @kind, the split blob's own first (as btf-layout does). */
static u32 gp_btf_find(const struct gp_btf *b, const char *name, u32 kind)
{
	for (; b; b = b->base) {
		u32 i;

		for (i = 0; i < b->n_types; i++) {
			const struct btf_type *t = b->types[i];

			if (gp_btf_kind(t) != kind || strcmp(gp_btf_str(b, t->name_off), name))
				continue;
			if (kind == BTF_KIND_STRUCT && !gp_btf_vlen(t))
				continue;
			return b->first_id + i;
		}
	}
	return 0;
}

/* Skip typedef/const/volatile/restrict/type_tag. */
static const struct btf_type *gp_btf_strip(const struct gp_btf *b, u32 id, u32 *out)
{
	const struct btf_type *t;
	int depth;

	for (depth = 0; depth < GP_BTF_MAX_DEPTH; depth++) {
		t = gp_btf_type(b, id);
		if (!t)
			return NULL;
		switch (gp_btf_kind(t)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_CONST:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			if (out)
				*out = id;
			return t;
		}
	}
	return NULL;
}

/* sizeof() of type @id, or -1. */
static long gp_btf_size(const struct gp_btf *b, u32 id, int depth)
{
	const struct btf_type *t = gp_btf_strip(b, id, NULL);
	const struct btf_array *a;
	long elem;

	if (!t || depth > GP_BTF_MAX_DEPTH)
		return -1;
	switch (gp_btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FLOAT:
		return t->size;
	case BTF_KIND_PTR:
		return sizeof(void *);
	case BTF_KIND_ARRAY:
		a = (const void *)(t + 1);
		elem = gp_btf_size(b, a->type, depth + 1);
		return elem < 0 ? -1 : elem * a->nelems;
	default:
		return -1;
	}
}

/*
 * Member @name of composite @t, searching anonymous struct/union members as
 * C does; its bit offset from the start of @t in *@bits and its type in *@type.
 */
static bool gp_btf_find_member(const struct gp_btf *b, const struct btf_type *t,
			       const char *name, u32 *bits, u32 *type, int depth)
{
	const struct btf_member *m = (const void *)(t + 1);
	bool kflag = GP_BTF_KFLAG(t->info);
	u32 i;

	if (depth > GP_BTF_MAX_DEPTH)
		return false;
	for (i = 0; i < gp_btf_vlen(t); i++, m++) {
		u32 moff = kflag ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		const char *mname = gp_btf_str(b, m->name_off);
		const struct btf_type *mt;

		if (*mname) {
			if (strcmp(mname, name))
				continue;
			*bits = moff;
			*type = m->type;
			return true;
		}
		mt = gp_btf_strip(b, m->type, NULL);
		if (!mt || (gp_btf_kind(mt) != BTF_KIND_STRUCT &&
			    gp_btf_kind(mt) != BTF_KIND_UNION))
			continue;
		if (gp_btf_find_member(b, mt, name, bits, type, depth + 1)) {
			*bits += moff;
			return true;
		}
	}
	return false;
}

/**
 * gp_btf_member() - offset and size of a member of a struct
 * @b: the module's BTF
 * @sname: the struct's name
 * @path: the member, "a" or "a.b" for a member of a member
 * @off: its byte offset from the start of the struct
 * @size: its size in bytes
 *
 * Return: 0, -ENOENT if the struct or a member is missing, -EINVAL if a
 * member is a bitfield or its size cannot be resolved.
 */
int gp_btf_member(const struct gp_btf *b, const char *sname, const char *path,
		  u32 *off, u32 *size)
{
	u32 sid = gp_btf_find(b, sname, BTF_KIND_STRUCT), total = 0;
	const char *cur = path;
	long sz;

	if (!sid)
		return -ENOENT;
	while (*cur) {
		const char *dot = strchr(cur, '.');
		size_t n = dot ? (size_t)(dot - cur) : strlen(cur);
		const struct btf_type *t = gp_btf_strip(b, sid, NULL);
		char name[64];
		u32 bits;

		if (!t || (gp_btf_kind(t) != BTF_KIND_STRUCT && gp_btf_kind(t) != BTF_KIND_UNION))
			return -ENOENT;
		if (n >= sizeof(name))
			return -ENOENT;
		memcpy(name, cur, n);
		name[n] = '\0';
		if (!gp_btf_find_member(b, t, name, &bits, &sid, 0))
			return -ENOENT;
		if (bits % 8)
			return -EINVAL;
		total += bits / 8;
		cur += n + (dot ? 1 : 0);
	}
	sz = gp_btf_size(b, sid, 0);
	if (sz < 0)
		return -EINVAL;
	*off = total;
	*size = sz;
	return 0;
}

/**
 * gp_btf_param() - position of a function's parameter
 * @b: the module's BTF
 * @fname: the function
 * @pname: the parameter's name
 * @idx: its position, from 0
 * @nargs: how many parameters the function has
 *
 * Return: 0, or -ENOENT if the function or the parameter is missing.
 */
int gp_btf_param(const struct gp_btf *b, const char *fname, const char *pname,
		 int *idx, int *nargs)
{
	u32 fid = gp_btf_find(b, fname, BTF_KIND_FUNC);
	const struct btf_type *proto = fid ? gp_btf_type(b, gp_btf_type(b, fid)->type) : NULL;
	const struct btf_param *p;
	u32 i;

	if (!proto || gp_btf_kind(proto) != BTF_KIND_FUNC_PROTO)
		return -ENOENT;
	*nargs = gp_btf_vlen(proto);
	if (!pname)
		return 0;
	p = (const void *)(proto + 1);
	for (i = 0; i < gp_btf_vlen(proto); i++, p++) {
		if (!strcmp(gp_btf_str(b, p->name_off), pname)) {
			*idx = i;
			return 0;
		}
	}
	return -ENOENT;
}

/**
 * gp_btf_enum() - value of an enumerator
 * @b: the module's BTF
 * @name: the enumerator
 * @val: its value
 *
 * Return: 0, or -ENOENT.
 */
int gp_btf_enum(const struct gp_btf *b, const char *name, s64 *val)
{
	for (; b; b = b->base) {
		u32 i, j;

		for (i = 0; i < b->n_types; i++) {
			const struct btf_type *t = b->types[i];
			const struct btf_enum *e = (const void *)(t + 1);

			if (gp_btf_kind(t) != BTF_KIND_ENUM)
				continue;
			for (j = 0; j < gp_btf_vlen(t); j++, e++) {
				if (!strcmp(gp_btf_str(b, e->name_off), name)) {
					*val = e->val;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

/**
 * gp_btf_verify() - does a KFD's BTF have the layout gpreempt was built with?
 * @b: the running KFD provider's BTF
 * @items: the layout (GP_LAYOUT_CHECKS() of gp_layout.h)
 * @n: how many items
 * @why: on a mismatch, the first difference in words, "<what>: <running>, built
 *       for <built>"
 * @len: size of @why
 *
 * Return: the number of items that differ (0: the same layout), or a negative
 * errno if none could be checked.
 */
int gp_btf_verify(const struct gp_btf *b, const struct gp_layout_item *items, int n,
		  char *why, size_t len)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		const struct gp_layout_item *it = &items[i];
		char msg[200];
		int ret, idx = -1, nargs;
		u32 off, size;
		s64 val;

		msg[0] = '\0';
		switch (it->kind) {
		case GP_LI_FIELD:
			ret = gp_btf_member(b, it->a, it->b, &off, &size);
			if (ret)
				snprintf(msg, sizeof(msg), "struct %s.%s: %s, built for offset %d",
					 it->a, it->b, ret == -ENOENT ? "missing" : "unreadable",
					 it->x);
			else if (off != (u32)it->x || size != (u32)it->y)
				snprintf(msg, sizeof(msg),
					 "struct %s.%s: offset %u size %u, built for offset %d size %d",
					 it->a, it->b, off, size, it->x, it->y);
			break;
		case GP_LI_ARG:
			ret = gp_btf_param(b, it->a, it->b, &idx, &nargs);
			if (ret)
				snprintf(msg, sizeof(msg), "%s(%s%s): missing", it->a,
					 it->b ? "... " : "", it->b ? it->b : "");
			else if (nargs != it->y || (it->b && idx != it->x))
				snprintf(msg, sizeof(msg),
					 "%s(): %s%s%d of %d parameters, built for %d of %d",
					 it->a, it->b ? it->b : "", it->b ? " is " : "",
					 it->b ? idx + 1 : nargs, nargs,
					 it->b ? it->x + 1 : it->y, it->y);
			break;
		case GP_LI_ENUM:
			ret = gp_btf_enum(b, it->a, &val);
			if (ret)
				snprintf(msg, sizeof(msg), "enumerator %s: missing", it->a);
			else if (val != it->val)
				snprintf(msg, sizeof(msg), "%s = %lld, built for %lld", it->a,
					 (long long)val, (long long)it->val);
			break;
		}
		if (!msg[0])
			continue;
		if (!bad++ && why && len)
			snprintf(why, len, "%s", msg);
	}
	return bad;
}
