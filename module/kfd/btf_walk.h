/* SPDX-License-Identifier: GPL-2.0 */
/*
 * btf_walk.h - a small reader of raw BTF, split BTF included: enough to find
 * a struct member's offset and size, a function's parameters and an
 * enumerator's value.  Pure C with no kernel calls but the allocator, so the
 * same file builds into the module (layout_check.c) and into a user-space
 * unit test that runs it on real amdgpu.ko and kfdsim.ko BTF.
 */
#ifndef GP_BTF_WALK_H
#define GP_BTF_WALK_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <uapi/linux/btf.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/btf.h>
#define u8 __u8
#define u16 __u16
#define u32 __u32
#define s64 __s64
#endif

/**
 * struct gp_btf - one parsed BTF blob
 * @data: the raw blob (not owned)
 * @len: its size in bytes
 * @strs: its string section
 * @str_len: the size of @strs
 * @types: @types[i] is the type with id @first_id + i
 * @n_types: how many types the blob defines
 * @first_id: the id of its first type (1, or the base's type count + 1)
 * @first_str: the offset of its first string (0, or the base's string size)
 * @base: the BTF a split blob extends (vmlinux for a module), or NULL
 */
struct gp_btf {
	const void *data;
	size_t len;
	const char *strs;
	u32 str_len;
	const struct btf_type **types;
	u32 n_types;
	u32 first_id;
	u32 first_str;
	const struct gp_btf *base;
};

/**
 * struct gp_layout_item - one fact of the layout gpreempt was built with
 * @kind: GP_LI_FIELD, GP_LI_ARG or GP_LI_ENUM
 * @a: struct, function or enumerator name
 * @b: member path or parameter name (NULL: the parameter count only)
 * @x: member offset, or parameter position
 * @y: member size, or parameter count
 * @val: enumerator value
 */
struct gp_layout_item {
	int kind;
	const char *a, *b;
	int x, y;
	s64 val;
};

enum { GP_LI_FIELD, GP_LI_ARG, GP_LI_ENUM };

/* Expanders for GP_LAYOUT_CHECKS() of the generated gp_layout.h. */
#define GP_LAYOUT_FIELD(s, f, off, size) { GP_LI_FIELD, s, f, off, size, 0 },
#define GP_LAYOUT_ARG(fn, p, idx, nargs) { GP_LI_ARG, fn, p, idx, nargs, 0 },
#define GP_LAYOUT_ENUMV(e, v) { GP_LI_ENUM, e, NULL, 0, 0, v },

int gp_btf_open(struct gp_btf *b, const void *data, size_t len, const struct gp_btf *base);
void gp_btf_close(struct gp_btf *b);
int gp_btf_member(const struct gp_btf *b, const char *sname, const char *path,
		  u32 *off, u32 *size);
int gp_btf_param(const struct gp_btf *b, const char *fname, const char *pname,
		 int *idx, int *nargs);
int gp_btf_enum(const struct gp_btf *b, const char *name, s64 *val);
int gp_btf_verify(const struct gp_btf *b, const struct gp_layout_item *items, int n,
		  char *why, size_t len);

#endif /* GP_BTF_WALK_H */
