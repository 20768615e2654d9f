// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * version.c - gpreemptctl version (-V, --version): the tool's version and,
 * when gpreempt is loaded, what the loaded module tells about itself.
 *
 * The module's version is this tool's (bpf/gp_version.h), in
 * /sys/module/gpreempt/version; srcversion (a checksum of its sources) and
 * its GNU build id (/sys/module/gpreempt/notes/.note.gnu.build-id, readable
 * by any user) tell two builds of one version apart.
 * The KFD layout source it was built from (amdgpu BTF or a source tree) is
 * not exposed by the module (only named in its refusal at insmod), so it is
 * "unknown".  Whether its maps match this tool is checked when they can be
 * opened (root).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli.h"

#define SYS_MOD "/sys/module/gpreempt"

/* The GNU build id note of the loaded module, as hex, or "". */
static void build_id(char *hex, size_t len)
{
	unsigned char n[256];
	unsigned int namesz, descsz, type, off, i;
	size_t got;
	FILE *f = fopen(SYS_MOD "/notes/.note.gnu.build-id", "r");

	hex[0] = '\0';
	if (!f)
		return;
	got = fread(n, 1, sizeof(n), f);
	fclose(f);
	if (got < 12)
		return;
	memcpy(&namesz, n, 4);
	memcpy(&descsz, n + 4, 4);
	memcpy(&type, n + 8, 4);
	off = 12 + ((namesz + 3) & ~3u);
	if (type != 3 || namesz != 4 || memcmp(n + 12, "GNU", 4) || off + descsz > got ||
	    2 * descsz + 1 > len)
		return;
	for (i = 0; i < descsz; i++)
		snprintf(hex + 2 * i, 3, "%02x", n[off + i]);
}

static void jfield(const char *key, const char *v, bool comma)
{
	printf("%s\"%s\":", comma ? "," : "", key);
	if (v && *v)
		json_str(v, strlen(v));
	else
		printf("null");
}

/** cmd_version() - the tool's version; the loaded module's, if any */
int cmd_version(struct ctl *c, int argc, char **argv)
{
	char ver[64], src[64], bid[128], state[32], libbpf[32];
	const char *maps = NULL, *layout = "unknown";
	bool loaded = !access(SYS_MOD, F_OK);
	int ret;

	(void)argc;
	(void)argv;
	snprintf(libbpf, sizeof(libbpf), "%u.%u", libbpf_major_version(),
		 libbpf_minor_version());
	read_line(SYS_MOD "/version", ver, sizeof(ver));
	read_line(SYS_MOD "/srcversion", src, sizeof(src));
	read_line(SYS_MOD "/initstate", state, sizeof(state));
	build_id(bid, sizeof(bid));
	if (loaded) {
		err_quiet = true;
		ret = maps_open(c);
		err_quiet = false;
		maps = ret == EX_OK ? "match" : ret == EX_PERM ? "not readable (needs root)" :
		       ret == EX_NOTLOADED ? "missing" : "do not match this gpreemptctl";
	}
	if (c->json) {
		printf("{\"gpreemptctl\":{");
		jfield("version", GP_TOOL_VERSION, false);
		jfield("libbpf", libbpf, true);
		printf("},\"module\":");
		if (!loaded) {
			printf("null}\n");
			return EX_OK;
		}
		printf("{");
		jfield("version", ver, false);
		jfield("srcversion", src, true);
		jfield("build_id", bid, true);
		jfield("initstate", state, true);
		jfield("layout_source", layout, true);
		jfield("maps", maps, true);
		printf("}}\n");
		return EX_OK;
	}
	printf("gpreemptctl %s\nusing libbpf v%s\n", GP_TOOL_VERSION, libbpf);
	if (!loaded) {
		printf("module: gpreempt is not loaded\n");
		return EX_OK;
	}
	printf("module: gpreempt %s\n", *state ? state : "loaded");
	printf("  version:       %s\n", *ver ? ver : "unknown (the module sets none)");
	if (*src)
		printf("  srcversion:    %s\n", src);
	printf("  build id:      %s\n", *bid ? bid : "unknown");
	printf("  layout source: %s (the module does not expose it)\n", layout);
	printf("  maps:          %s\n", maps);
	return EX_OK;
}
