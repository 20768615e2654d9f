// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gpu.c - gpreemptctl doctor's kernel and GPU checks: the kernel
 * release against the tested ones, its headers, amdgpu (loaded; in-tree or
 * DKMS; its version), whether the running amdgpu is the file modprobe would
 * load (GNU build ids), the KFD layout source a build would use (BTF, an
 * amdgpu-dkms tree, or none), CWSR, HWS or MES per GPU and what a park
 * costs there, every GPU and partition against gpreempt's device limit,
 * and whether amdgpu makes DRM user queues gpreempt cannot see.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gpreemptctl.h"
#include "report.h"
#include "elf.h"
#include "checks.h"
#include "gp_maps.h"

#define NEEDS_ROOT "unknown (needs root)"
#define AMDGPU "/sys/module/amdgpu"

/* The kernel series gpreempt was tested on (docs/kernels.md). */
static const int tested[][2] = { { 6, 1 }, { 6, 12 }, { 7, 3 } };

static void check_kernel(struct dr_ctx *c)
{
	char p[256];
	int maj = 0, min = 0;
	size_t i;

	if (sscanf(c->release, "%d.%d", &maj, &min) != 2) {
		dr_add("kernel", DR_UNKNOWN, NULL, "%s: not a version", c->release);
	} else if (maj < 6 || (maj == 6 && min < 1)) {
		dr_add("kernel", DR_FAIL, "run Linux 6.1 or later (docs/kernels.md)",
		       "%s: older than 6.1, the oldest kernel gpreempt supports", c->release);
	} else {
		for (i = 0; i < sizeof(tested) / sizeof(tested[0]); i++)
			if (tested[i][0] == maj && tested[i][1] == min)
				break;
		if (i < sizeof(tested) / sizeof(tested[0]))
			dr_add("kernel", DR_OK, NULL, "%s (a tested series: %d.%d)", c->release,
			       maj, min);
		else
			dr_add("kernel", DR_WARN,
			       "nothing to do; the layout is read from this kernel's amdgpu and checked at insmod, which refuses a mismatch (docs/kernels.md)",
			       "%s: supported (6.1 or later) but not tested (tested: 6.1, 6.12, 7.3)",
			       c->release);
	}
	snprintf(p, sizeof(p), "/lib/modules/%s/build", c->release);
	if (dr_exists(p))
		dr_add("headers", DR_OK, NULL, "%s", p);
	else
		dr_add("headers", DR_WARN,
		       "install linux-headers-$(uname -r) (Debian, Ubuntu) or kernel-devel-$(uname -r) (RHEL family): make and DKMS need them",
		       "no kernel headers (%s): gpreempt cannot be built here", p);
}

/* The file modprobe loads for @mod on this kernel (modinfo -n), or "". */
static void module_file(struct dr_ctx *c, const char *mod, char *file, size_t len)
{
	char *argv[] = { "modinfo", "-k", c->release, "-n", (char *)mod, NULL };
	char *out = NULL;

	file[0] = '\0';
	if (!dr_run(argv, &out, 4096) && out && out[0] == '/')
		snprintf(file, len, "%.*s", (int)strcspn(out, "\n"), out);
	free(out);
}

static bool is_dkms_path(const char *file)
{
	return strstr(file, "/updates/") || strstr(file, "/extra/") || strstr(file, "/dkms/");
}

static void check_amdgpu(struct dr_ctx *c, char *file, size_t len)
{
	char ver[128], run[130], disk[130], note[] = AMDGPU "/notes/.note.gnu.build-id";
	int r, d;

	module_file(c, "amdgpu", file, len);
	c->amdgpu = dr_exists(AMDGPU);
	dr_read(AMDGPU "/version", ver, sizeof(ver));
	if (!c->amdgpu) {
		if (file[0])
			dr_add("amdgpu", DR_FAIL,
			       "modprobe amdgpu (it needs an AMD GPU; gpreempt attaches to its KFD)",
			       "not loaded (modprobe would load %s)", file);
		else
			dr_add("amdgpu", DR_FAIL,
			       "install amdgpu-dkms (ROCm) or use a kernel with CONFIG_DRM_AMDGPU and CONFIG_HSA_AMD",
			       "not loaded, and no amdgpu module for %s", c->release);
		return;
	}
	if (ver[0] || is_dkms_path(file))
		dr_add("amdgpu", DR_OK, NULL, "loaded, amdgpu-dkms %s (%s)", ver[0] ? ver : "",
		       file[0] ? file : "file unknown");
	else
		dr_add("amdgpu", DR_OK, NULL, "loaded, in-tree (%s)", file[0] ? file : "built in");
	if (!dr_exists("/sys/class/kfd/kfd"))
		dr_add("kfd", DR_FAIL,
		       "use an amdgpu built with CONFIG_HSA_AMD (ROCm's amdgpu-dkms has it)",
		       "amdgpu has no KFD (/sys/class/kfd/kfd): no compute queues to preempt");

	r = dr_sys_build_id(note, run, sizeof(run));
	d = file[0] ? dr_file_build_id(file, disk, sizeof(disk)) : -ENOENT;
	if (r == -EACCES)
		dr_add("amdgpu-id", DR_UNKNOWN, "run doctor as root", NEEDS_ROOT ": %s", note);
	else if (r)
		dr_add("amdgpu-id", DR_UNKNOWN, NULL, "the running amdgpu has no build id (%s)", note);
	else if (d == -EACCES)
		dr_add("amdgpu-id", DR_UNKNOWN, "run doctor as root", NEEDS_ROOT ": %s", file);
	else if (d)
		dr_add("amdgpu-id", DR_UNKNOWN, "install xz-utils and zstd to read compressed modules",
		       "running %s; the build id of %s cannot be read", run,
		       file[0] ? file : "the module file");
	else if (strcmp(run, disk))
		dr_add("amdgpu-id", DR_FAIL,
		       "reboot (or reload amdgpu) into the new amdgpu, then rebuild gpreempt (dkms install --force gpreempt/0.1)",
		       "the running amdgpu (build id %s) is not the one on disk (%s: %s): an amdgpu or amdgpu-dkms upgrade waits for a reboot",
		       run, file, disk);
	else
		dr_add("amdgpu-id", DR_OK, NULL, "the running amdgpu is %s (build id %s)", file, run);
}

/* The amdgpu version `dkms status -k KVER amdgpu` names (dkms 2 and 3), or "". */
static void dkms_amdgpu(struct dr_ctx *c, char *ver, size_t len)
{
	char *argv[] = { "dkms", "status", "-k", c->release, "amdgpu", NULL };
	char *out = NULL, *l, *save = NULL, f[3][128];
	int n;

	ver[0] = '\0';
	if (dr_run(argv, &out, 1 << 16) || !out) {
		free(out);
		return;
	}
	for (l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l[strcspn(l, ":")] = '\0';
		n = sscanf(l, "%127[^,], %127[^,], %127[^,]", f[0], f[1], f[2]);
		if (n >= 2 && !strncmp(f[0], "amdgpu/", 7) && !strcmp(f[1], c->release)) {
			snprintf(ver, len, "%.120s", f[0] + 7);
			break;
		}
		if (n == 3 && !strcmp(f[0], "amdgpu") && !strcmp(f[2], c->release)) {
			snprintf(ver, len, "%.127s", f[1]);
			break;
		}
	}
	free(out);
}

static void check_layout(struct dr_ctx *c)
{
	char ver[128], tree[256], cfg[512], pre[512], text[8192];
	bool btf_opt;

	if (dr_exists("/sys/kernel/btf/amdgpu") && dr_exists("/sys/kernel/btf/vmlinux")) {
		dr_add("layout", DR_OK, NULL,
		       "BTF of the running amdgpu (/sys/kernel/btf/amdgpu): exact, checked again at insmod");
		return;
	}
	dkms_amdgpu(c, ver, sizeof(ver));
	if (ver[0]) {
		snprintf(tree, sizeof(tree), "/usr/src/amdgpu-%s", ver);
		snprintf(pre, sizeof(pre), "%s/amd/dkms/pre-build.sh", tree);
		snprintf(cfg, sizeof(cfg), "/var/lib/dkms/amdgpu/%s/build/amd/dkms/config/config.h",
			 ver);
		btf_opt = !dr_read(pre, text, sizeof(text)) && strstr(text, "AMDGPU_BTF");
		if (!dr_exists(tree))
			dr_add("layout", DR_FAIL, "reinstall the amdgpu-dkms package",
			       "none: dkms built amdgpu %s for this kernel, but %s is gone", ver, tree);
		else if (dr_exists(pre) || dr_exists(cfg))
			dr_add("layout", btf_opt ? DR_WARN : DR_OK,
			       btf_opt ? "for the exact layout, rebuild amdgpu with BTF: AMDGPU_BTF=1 dkms install --force amdgpu/<version> (docs/kernels.md)" : NULL,
			       "amdgpu-dkms source %s, %s; the build pins the build id of the amdgpu on disk (amdgpu-id)",
			       tree, dr_exists(pre) ? "configured for this kernel by its amd/dkms/pre-build.sh" : cfg);
		else
			dr_add("layout", DR_FAIL,
			       "rebuild amdgpu with BTF (docs/kernels.md, 'On a ROCm DKMS machine'), or make KFD_DKMS_CONFIG=<config.h>",
			       "none: %s has no configure step (amd/dkms/pre-build.sh) and no config.h of its build (%s)",
			       tree, cfg);
		return;
	}
	if (!c->amdgpu)
		dr_add("layout", DR_UNKNOWN, "modprobe amdgpu, then run doctor again",
		       "amdgpu is not loaded (its BTF, /sys/kernel/btf/amdgpu, appears when it is) and dkms built no amdgpu for this kernel");
	else
		dr_add("layout", DR_FAIL,
		       "use a kernel with CONFIG_DEBUG_INFO_BTF_MODULES, or amdgpu-dkms, or make KFD_SRC=<this amdgpu's source> (docs/kernels.md)",
		       "none: the running amdgpu has no BTF and dkms built no amdgpu for this kernel");
}

/*
 * gpreempt's own device limit: GP_POLICY_MAX_DEVS (module/policy/policy.h),
 * 64 kfd_nodes, 8 x MI300X in CPX; a node past it shares the last slot, so
 * queues of different GPUs would compete.  Queues per device: GP_MAX_QUEUES.
 */
#define DR_MAX_DEVS 64

struct dr_gpu_node {
	unsigned long id, gfx;
};

static int node_cmp(const void *a, const void *b)
{
	const struct dr_gpu_node *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* KFD's GPU nodes (gfx_target_version != 0), sorted by node number; -errno. */
static int kfd_gpus(struct dr_gpu_node **out)
{
	char d[128], props[4096], line[64], *end;
	struct dr_gpu_node *v = NULL, *nv;
	size_t n = 0, cap = 0;
	struct dirent *e;
	unsigned long id;
	DIR *dir;

	*out = NULL;
	dir = opendir(dr_path("/sys/class/kfd/kfd/topology/nodes", d, sizeof(d)));
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		id = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end)
			continue;
		snprintf(d, sizeof(d), "/sys/class/kfd/kfd/topology/nodes/%.32s/properties",
			 e->d_name);
		if (dr_read(d, props, sizeof(props)) ||
		    !dr_field(props, "gfx_target_version ", line, sizeof(line)) ||
		    !strtoul(line, NULL, 10))
			continue;	/* a CPU node */
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].id = id;
		v[n++].gfx = strtoul(line, NULL, 10);
	}
	closedir(dir);
	if (n)
		qsort(v, n, sizeof(*v), node_cmp);
	*out = v;
	return n;
}

/*
 * MES schedules a GPU's queues from gfx11 on: amdgpu_discovery.c sets
 * adev->enable_mes for GC 11.x and 12.x whatever amdgpu.mes says (6.12:
 * amdgpu_discovery.c:2370-2388), and KFD takes it as enable_mes
 * (amdgpu_amdkfd.c:187).  Before gfx11 it is HWS (or NO_HWS).
 */
static bool gpu_mes(unsigned long gfx)
{
	return gfx >= 110000;
}

/* The GPUs and partitions, sorted, against gpreempt's device limit. */
static void check_gpus(int n)
{
	if (n <= 0)
		return;
	if (n > DR_MAX_DEVS)
		dr_add("gpus", DR_WARN,
		       "use fewer partitions (amd-smi set --compute-partition SPX or DPX), or run LC and BE only on the first 64 KFD nodes",
		       "%d GPUs and partitions (KFD nodes), past gpreempt's limit of %d devices: nodes past it share the last device's slot, so their queues compete",
		       n, DR_MAX_DEVS);
	else
		dr_add("gpus", DR_OK, NULL,
		       "%d GPU%s and partitions (KFD nodes); gpreempt manages up to %d devices, %d queues each",
		       n, n == 1 ? "" : "s", DR_MAX_DEVS, GP_MAX_QUEUES);
}

static void check_sched(struct dr_ctx *c)
{
	char v[64], mes[64], *list = NULL;
	struct dr_gpu_node *g = NULL;
	int r, n, i, hws = 0, nmes = 0;
	size_t o = 0, len;
	const char *policy;

	if (!c->amdgpu) {
		dr_add("cwsr", DR_UNKNOWN, NULL, "amdgpu is not loaded");
		dr_add("scheduler", DR_UNKNOWN, NULL, "amdgpu is not loaded");
		return;
	}
	r = dr_read(AMDGPU "/parameters/cwsr_enable", v, sizeof(v));
	if (r == -EACCES)
		dr_add("cwsr", DR_UNKNOWN, "run doctor as root", NEEDS_ROOT);
	else if (r)
		dr_add("cwsr", DR_UNKNOWN, NULL, "amdgpu has no cwsr_enable parameter");
	else if (!strcmp(v, "0") || !strcmp(v, "N"))
		dr_add("cwsr", DR_FAIL,
		       "remove amdgpu.cwsr_enable=0 (kernel command line, /etc/modprobe.d) and reboot",
		       "off (cwsr_enable=%s): gpreempt parks nothing, an unmap would drain waves", v);
	else
		dr_add("cwsr", DR_OK, NULL, "on (cwsr_enable=%s)", v);

	r = dr_read(AMDGPU "/parameters/sched_policy", v, sizeof(v));
	policy = r ? "HWS" : !strcmp(v, "2") ? "NO_HWS" : !strcmp(v, "1") ?
		 "HWS (no oversubscription)" : "HWS";
	if (dr_read(AMDGPU "/parameters/mes", mes, sizeof(mes)))
		snprintf(mes, sizeof(mes), "?");
	n = kfd_gpus(&g);
	len = n > 0 ? (size_t)n * 96 + 1 : 1;
	list = calloc(1, len);
	for (i = 0; list && i < n; i++) {
		bool m = gpu_mes(g[i].gfx);

		if (m)
			nmes++;
		else
			hws++;
		o += snprintf(list + o, len - o, "%snode %lu: gfx%lu%lx%lx, %s%s", i ? "\n" : "",
			      g[i].id, g[i].gfx / 10000, g[i].gfx / 100 % 100, g[i].gfx % 100,
			      m ? "MES" : policy, m ? ": a park unmaps that one queue" :
			      strcmp(policy, "NO_HWS") ? ": a park remaps the whole GPU" : "");
	}
	if (n == -EACCES)
		dr_add("scheduler", DR_UNKNOWN, "run doctor as root", NEEDS_ROOT);
	else if (n <= 0 || !list)
		dr_add("scheduler", DR_FAIL, "check lspci and dmesg for amdgpu's errors",
		       "no AMD GPU in KFD's topology (/sys/class/kfd/kfd/topology/nodes): nothing to preempt");
	else if (!strcmp(policy, "NO_HWS") && !nmes)
		dr_add("scheduler", DR_WARN,
		       "remove amdgpu.sched_policy=2 for the suspend backend",
		       "sched_policy=2 (NO_HWS): queues are parked by eviction only\n%s", list);
	else if (hws)
		dr_add("scheduler", DR_WARN,
		       "expected on gfx9 (MI100, MI200, MI300): observe with enable=0 first, then watch gpreemptctl stats (lc_preempt_ns); hysteresis_us and remap_budget bound how often it remaps (docs/parameters.md, docs/parking.md)",
		       "sched_policy=%s, mes=%s: %d GPU%s under HWS, where every park and unpark unmaps and remaps every queue of that GPU (every process on it, LC's too); %d under MES (one queue)\n%s",
		       r ? "?" : v, mes, hws, hws == 1 ? "" : "s", nmes, list);
	else
		dr_add("scheduler", DR_OK, NULL,
		       "sched_policy=%s, mes=%s: every GPU under MES, a park unmaps one queue\n%s",
		       r ? "?" : v, mes, list);
	check_gpus(n);
	free(list);
	free(g);
}

/*
 * DRM user queues (amdgpu_userq) are made through amdgpu's DRM file, not
 * KFD: gpreempt never sees them.  amdgpu.user_queue (7.3: amdgpu_drv.c:1103,
 * -1 auto (default), 0 off, 1 on, 2 on with kernel queues off): -1 and 0
 * leave disable_uq set on gfx11 and gfx12 (gfx_v11_0.c:5382,
 * gfx_v12_0.c:3980); gfx 9.4.3 never enables them (gfx_v9_4_3.c:2625).
 * 6.12 has no such parameter and no user queues.
 */
static void check_userq(struct dr_ctx *c)
{
	char v[32];
	int r;

	if (!c->amdgpu)
		return;
	r = dr_read(AMDGPU "/parameters/user_queue", v, sizeof(v));
	if (r == -EACCES)
		dr_add("userq", DR_UNKNOWN, "run doctor as root", NEEDS_ROOT);
	else if (r)
		dr_add("userq", DR_OK, NULL,
		       "amdgpu has no user_queue parameter: no DRM user queues, every compute queue is KFD's");
	else if (!strcmp(v, "-1") || !strcmp(v, "0"))
		dr_add("userq", DR_OK, NULL,
		       "user_queue=%s: amdgpu creates no DRM user queues, every compute queue is KFD's", v);
	else
		dr_add("userq", DR_WARN,
		       "run LC and BE through ROCm's KFD path (HSA runtime), or boot with amdgpu.user_queue=0",
		       "user_queue=%s: amdgpu creates DRM user queues (gfx11, gfx12), which are not KFD queues: gpreempt neither sees nor parks them, so work on them is never preempted for LC",
		       v);
}

/** dr_gpu() - the kernel and GPU checks */
void dr_gpu(struct dr_ctx *c)
{
	char file[1024];

	check_kernel(c);
	check_amdgpu(c, file, sizeof(file));
	check_layout(c);
	check_sched(c);
	check_userq(c);
}
