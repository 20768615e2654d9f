// SPDX-License-Identifier: GPL-2.0
/*
 * test_layout_check - module/kfd/btf_walk.c, the reader insmod uses to prove the
 * running KFD has the layout gpreempt was built with (review finding C2),
 * run on real BTF: the build's own amdgpu.ko, kfdsim.ko, other kernels'
 * amdgpu.ko, and damaged blobs.
 *
 * Usage: test_layout_check <vmlinux.btf> <kfd.btf> [<label> <vmlinux.btf> <kfd.btf> <same|differs>]...
 *   The first pair is the BTF the layout (gp_layout.h) was generated from;
 *   each further quadruple is another KFD and whether it must match.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include "kfd/btf_walk.h"
#include "tap.h"
/* gp_layout.h's prototypes spell kernel types. */
typedef uint64_t u64;
#include "gp_layout.h"

static const struct gp_layout_item items[] = {
	GP_LAYOUT_CHECKS(GP_LAYOUT_FIELD, GP_LAYOUT_ARG, GP_LAYOUT_ENUMV)
};
#define N_ITEMS ((int)(sizeof(items) / sizeof(items[0])))

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "test_layout_check: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	buf = malloc(n ? n : 1);
	if (!buf || fread(buf, 1, n, f) != (size_t)n) {
		fprintf(stderr, "test_layout_check: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Open base + split; -errno of the split's open. */
static int open_pair(const char *vmlinux, const char *kfd, struct gp_btf *base,
		     struct gp_btf *mod, void **bufs)
{
	size_t len;
	int ret;

	bufs[0] = slurp(vmlinux, &len);
	ret = gp_btf_open(base, bufs[0], len, NULL);
	if (ret)
		return ret;
	bufs[1] = slurp(kfd, &len);
	return gp_btf_open(mod, bufs[1], len, base);
}

static void close_pair(struct gp_btf *base, struct gp_btf *mod, void **bufs)
{
	gp_btf_close(mod);
	gp_btf_close(base);
	free(bufs[0]);
	free(bufs[1]);
}

int main(int argc, char **argv)
{
	struct gp_btf base, mod;
	struct gp_layout_item skew[N_ITEMS];
	char why[256], name[300];
	void *bufs[2];
	int i, bad, all = 1;

	if (argc < 3 || (argc - 3) % 4) {
		fprintf(stderr, "usage: %s <vmlinux.btf> <kfd.btf> [<label> <vmlinux.btf> <kfd.btf> same|differs]...\n",
			argv[0]);
		return 2;
	}
	tap_start(0);
	tap_ok(open_pair(argv[1], argv[2], &base, &mod, bufs) == 0, "%s: BTF opens (split on vmlinux)",
	       GP_LAYOUT_FROM);
	printf("# %d layout items, %u vmlinux types, %u KFD types\n", N_ITEMS, base.n_types,
	       mod.n_types);

	why[0] = '\0';
	bad = gp_btf_verify(&mod, items, N_ITEMS, why, sizeof(why));
	tap_ok(bad == 0, "the layout verifies against the BTF it was generated from%s", why[0] ? "" : "");
	if (bad)
		printf("# %d differ; first: %s\n", bad, why);

	/* Every single-item skew is caught, and the message names it. */
	for (i = 0; i < N_ITEMS; i++) {
		memcpy(skew, items, sizeof(skew));
		if (skew[i].kind == GP_LI_ENUM)
			skew[i].val++;
		else if (skew[i].kind == GP_LI_ARG && !skew[i].b)
			skew[i].y++;
		else
			skew[i].x += 8;
		why[0] = '\0';
		bad = gp_btf_verify(&mod, skew, N_ITEMS, why, sizeof(why));
		if (bad != 1 || !strstr(why, skew[i].b && skew[i].kind == GP_LI_FIELD ?
						 skew[i].b : skew[i].a)) {
			snprintf(name, sizeof(name), "%s%s%s", skew[i].a, skew[i].b ? "." : "",
				 skew[i].b ? skew[i].b : "");
			printf("# skewed %s: %d reported: %s\n", name, bad, why);
			all = 0;
		}
	}
	tap_ok(all, "each of the layout items%s, skewed alone, is the one difference reported",
	       "");

	/* Damaged blobs are errors, never reads out of bounds (ASan). */
	{
		size_t len = ((const struct btf_header *)mod.data)->hdr_len + 64;
		struct gp_btf cut;
		char *trunc = malloc(len);

		memcpy(trunc, mod.data, len);
		((struct btf_header *)trunc)->type_len = 1u << 30;
		tap_ok(gp_btf_open(&cut, trunc, len, &base) == -EINVAL, "%s", "a blob whose type section overruns it is refused");
		memcpy(trunc, mod.data, len);
		((struct btf_header *)trunc)->magic = 0;
		tap_ok(gp_btf_open(&cut, trunc, len, &base) == -EINVAL, "%s", "a blob without the BTF magic is refused");
		free(trunc);
	}
	{
		const struct btf_header *h = mod.data;
		char *copy = malloc(mod.len);
		struct btf_type *t;
		struct gp_btf unk;

		memcpy(copy, mod.data, mod.len);
		t = (void *)(copy + h->hdr_len + h->type_off);
		t->info = (t->info & ~(0x1fu << 24)) | (30u << 24);
		tap_ok(gp_btf_open(&unk, copy, mod.len, &base) == -EPROTO, "%s",
		       "a type kind newer than this reader is -EPROTO, not a guess");
		free(copy);
	}
	close_pair(&base, &mod, bufs);

	/* Other KFDs: kfdsim (must match), other kernels' amdgpu (must not). */
	for (i = 3; i + 3 < argc; i += 4) {
		int want_same = !strcmp(argv[i + 3], "same"), ret;

		ret = open_pair(argv[i + 1], argv[i + 2], &base, &mod, bufs);
		if (ret) {
			tap_ok(0, "%s: BTF opens", argv[i]);
			close_pair(&base, &mod, bufs);
			continue;
		}
		why[0] = '\0';
		bad = gp_btf_verify(&mod, items, N_ITEMS, why, sizeof(why));
		snprintf(name, sizeof(name), "%s: %s", argv[i],
			 want_same ? "has the layout gpreempt was built with" :
				     "is refused by the layout gpreempt was built with");
		tap_ok(want_same ? bad == 0 : bad > 0, "%s", name);
		if (bad)
			printf("# %s: %d item(s) differ; first: %s\n", argv[i], bad, why);
		for (int j = 0, shown = 0; bad && j < N_ITEMS && shown < 4; j++)
			if (gp_btf_verify(&mod, &items[j], 1, why, sizeof(why)) && ++shown)
				printf("#   %s\n", why);
		close_pair(&base, &mod, bufs);
	}
	return tap_done();
}
