// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * host.c - gpreemptctl doctor's host checks: IBT, lockdown, Secure
 * Boot and whether gpreempt.ko is signed for them, whether this kernel
 * loads modules at all, kprobes, cgroup v2 (hybrid too) and bpffs, the
 * container hooks and runtimes (NRI v0.1 and v2), the loaded module and its
 * parameters, and gpreempt's last error in the kernel log.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "gpreemptctl.h"
#include "report.h"
#include "checks.h"

#define NEEDS_ROOT "unknown (needs root)"
#define SB_VAR "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
/* DKMS's signing certificate: its own default, and Ubuntu's (shim-signed) */
static const char * const mok_certs[] = {
	"/var/lib/dkms/mok.pub", "/var/lib/shim-signed/mok/MOK.der",
};
#define SIGN_FIX "sign it with DKMS's key and enroll that key: README.md, 'Secure Boot'"

/* Does a line of the file at @path contain the word @w (after a space or
 * at the start, before a space, '=' or the end)?  1, 0, or -errno.
 */
static int file_has(const char *path, const char *w)
{
	char p[4096], line[8192], *s;
	size_t n = strlen(w);
	int found = 0;
	FILE *f = fopen(dr_path(path, p, sizeof(p)), "re");

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		for (s = line; !found && (s = strstr(s, w)); s++)
			found = (s == line || s[-1] == ' ' || s[-1] == '\t') &&
				strchr(" \t\n=", s[n]);
	fclose(f);
	return found;
}

static void check_ibt(void)
{
	int r = file_has("/proc/cpuinfo", "ibt");

	if (r < 0)
		dr_add("ibt", DR_UNKNOWN, NULL, "/proc/cpuinfo cannot be read");
	else
		dr_add("ibt", DR_OK, NULL, r ?
		       "on: gpreempt calls sealed functions through static_call only, and checks each indirect target for ENDBR (docs/kernels.md)" :
		       "off (the CPU or kernel has no IBT)");
}

static void check_lockdown(struct dr_ctx *c)
{
	char v[128], *b, *e;
	int r = dr_read("/sys/kernel/security/lockdown", v, sizeof(v));

	if (r == -EACCES) {
		dr_add("lockdown", DR_UNKNOWN, "run doctor as root", NEEDS_ROOT);
		return;
	}
	b = strchr(v, '[');
	e = b ? strchr(b, ']') : NULL;
	if (r || !b || !e) {
		dr_add("lockdown", DR_OK, NULL, "no lockdown (no /sys/kernel/security/lockdown)");
		return;
	}
	*e = '\0';
	c->lockdown = strcmp(b + 1, "none");
	dr_add("lockdown", DR_OK, NULL, "%s%s", b + 1,
	       c->lockdown ? ": only signed modules load (see module-sig)" : "");
}

static void check_secureboot(struct dr_ctx *c)
{
	char *argv[] = { "mokutil", "--sb-state", NULL };
	unsigned char var[8];
	char *out = NULL, p[512];
	FILE *f;
	size_t n;

	if (!dr_run(argv, &out, 4096) && out && strstr(out, "SecureBoot")) {
		c->sb_known = true;
		c->sb_on = !!strstr(out, "enabled");
	} else if (!dr_exists("/sys/firmware/efi")) {
		c->sb_known = true;
	} else if ((f = fopen(dr_path(SB_VAR, p, sizeof(p)), "re"))) {
		n = fread(var, 1, sizeof(var), f);
		fclose(f);
		c->sb_known = n == 5;
		c->sb_on = n == 5 && var[4] == 1;
	}
	free(out);
	if (!c->sb_known)
		dr_add("secureboot", DR_UNKNOWN, "install mokutil", "an EFI system, state unknown");
	else if (!dr_exists("/sys/firmware/efi"))
		dr_add("secureboot", DR_OK, NULL, "off (not booted through EFI)");
	else
		dr_add("secureboot", DR_OK, NULL, "%s%s", c->sb_on ? "on" : "off",
		       c->sb_on ? ": only signed modules load (see module-sig)" : "");
}

/* Is gpreempt.ko installed for this kernel, signed, and by a key the kernel takes? */
static void check_signature(struct dr_ctx *c)
{
	char *argv[] = { "modinfo", "-k", c->release, "gpreempt", NULL };
	char *test[] = { "mokutil", "--test-key", NULL, NULL };
	char file[1024], signer[256], sig_id[256], p[512], fix[256], *out = NULL, *tout = NULL;
	bool need;
	size_t i;
	int r;

	r = file_has("/sys/module/module/parameters/sig_enforce", "Y");
	c->sig_enforce = r > 0 || file_has("/proc/cmdline", "module.sig_enforce=1") > 0;
	need = c->sb_on || c->lockdown || c->sig_enforce;
	if (dr_run(argv, &out, 1 << 16) || !out || !dr_field(out, "filename:", file, sizeof(file))) {
		dr_add("module-sig", DR_WARN,
		       "build and install it: README.md, 'On a ROCm machine' (make module, then DKMS)",
		       "gpreempt.ko is not installed for %s (modinfo gpreempt)", c->release);
		free(out);
		return;
	}
	dr_field(out, "signer:", signer, sizeof(signer));
	dr_field(out, "sig_id:", sig_id, sizeof(sig_id));
	free(out);
	if (!signer[0]) {
		dr_add("module-sig", need ? DR_FAIL : DR_OK, need ? SIGN_FIX : NULL,
		       "%s is not signed%s", file,
		       need ? ": Secure Boot, lockdown or sig_enforce refuses it" :
		       " (not needed: no Secure Boot, lockdown or sig_enforce)");
		return;
	}
	for (i = 0; c->sb_on && i < sizeof(mok_certs) / sizeof(mok_certs[0]); i++) {
		if (!dr_exists(mok_certs[i]))
			continue;
		test[2] = (char *)dr_path(mok_certs[i], p, sizeof(p));
		dr_run(test, &tout, 4096);
		if (tout && strstr(tout, "not enrolled")) {
			snprintf(fix, sizeof(fix),
				 "mokutil --import %s, reboot, enroll the key in MokManager",
				 mok_certs[i]);
			dr_add("module-sig", DR_FAIL, fix,
			       "%s is signed by %s, but DKMS's key %s is not enrolled", file, signer,
			       mok_certs[i]);
			free(tout);
			return;
		}
		free(tout);
		tout = NULL;
	}
	dr_add("module-sig", DR_OK, NULL, "%s is signed by %s (%s)", file, signer,
	       sig_id[0] ? sig_id : "?");
}

/*
 * Can this kernel load a module at all?  kernel.modules_disabled=1 refuses
 * every load until reboot; no /proc/modules is a kernel without modules;
 * lockdown, module.sig_enforce (sysfs or the command line) and Secure Boot
 * refuse unsigned ones (module-sig says whether gpreempt.ko is signed).
 */
static void check_modload(struct dr_ctx *c)
{
	char v[16], why[128];
	int r = dr_read("/proc/sys/kernel/modules_disabled", v, sizeof(v));

	if (!r && strcmp(v, "0")) {
		dr_add("modload", DR_FAIL,
		       "remove kernel.modules_disabled=1 (/etc/sysctl.d, the boot scripts) and reboot: it cannot be cleared at run time",
		       "kernel.modules_disabled=%s: this kernel loads no module until reboot, gpreempt included", v);
		return;
	}
	if (r && !dr_exists("/proc/modules")) {
		dr_add("modload", DR_FAIL, "use a kernel with CONFIG_MODULES=y",
		       "no /proc/modules and no kernel.modules_disabled: this kernel loads no modules");
		return;
	}
	snprintf(why, sizeof(why), "%s%s%s", c->lockdown ? " lockdown" : "",
		 c->sig_enforce ? " module.sig_enforce=1" : "", c->sb_on ? " Secure-Boot" : "");
	if (why[0])
		dr_add("modload", DR_OK, NULL,
		       "modules load, signed ones only (%s): see module-sig", why + 1);
	else
		dr_add("modload", DR_OK, NULL,
		       "modules load (modules_disabled=0, no lockdown, no sig_enforce, no Secure Boot)");
}

static void check_kprobes(struct dr_ctx *c)
{
	char cfg[256], v[16];
	int r;

	r = dr_read("/sys/kernel/debug/kprobes/enabled", v, sizeof(v));
	if (!r && !strcmp(v, "0")) {
		dr_add("kprobes", DR_FAIL, "echo 1 > /sys/kernel/debug/kprobes/enabled",
		       "kprobes are disabled (/sys/kernel/debug/kprobes/enabled is 0)");
		return;
	}
	snprintf(cfg, sizeof(cfg), "/boot/config-%s", c->release);
	r = file_has(cfg, "CONFIG_KPROBES=y");
	if (r > 0) {
		dr_add("kprobes", DR_OK, NULL, "CONFIG_KPROBES=y (%s)", cfg);
		return;
	}
	if (!r) {
		dr_add("kprobes", DR_FAIL, "use a kernel with CONFIG_KPROBES=y",
		       "%s has no CONFIG_KPROBES=y: gpreempt cannot hook amdkfd", cfg);
		return;
	}
	r = file_has("/proc/kallsyms", "register_kprobe");
	if (r > 0)
		dr_add("kprobes", DR_OK, NULL, "register_kprobe in /proc/kallsyms");
	else if (!r)
		dr_add("kprobes", DR_FAIL, "use a kernel with CONFIG_KPROBES=y",
		       "no register_kprobe in /proc/kallsyms: gpreempt cannot hook amdkfd");
	else
		dr_add("kprobes", DR_UNKNOWN, NULL, "no %s and no /proc/kallsyms", cfg);
}

/* The mount point of the first file system of @type, or "". */
static int mount_of(const char *type, char *dir, size_t len)
{
	char p[256], line[4096], mp[2048], t[64];
	FILE *f = fopen(dr_path("/proc/self/mounts", p, sizeof(p)), "re");

	dir[0] = '\0';
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %2047s %63s", mp, t) == 2 && !strcmp(t, type)) {
			snprintf(dir, len, "%s", mp);
			break;
		}
	fclose(f);
	return 0;
}

static void check_mounts(void)
{
	char d[2048], v1[2048];

	if (mount_of("cgroup2", d, sizeof(d)))
		dr_add("cgroup2", DR_UNKNOWN, NULL, "/proc/self/mounts cannot be read");
	else if (d[0] && !mount_of("cgroup", v1, sizeof(v1)) && v1[0])
		dr_add("cgroup2", DR_WARN,
		       "boot with systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all; until then write cgroup rules under the v2 mount",
		       "hybrid: cgroup v2 on %s and v1 hierarchies (%s): runtimes put containers in v1, so container rules may find no cgroup of their own, and /sys/fs/cgroup/... paths are not v2's",
		       d, v1);
	else if (d[0])
		dr_add("cgroup2", DR_OK, NULL, "mounted on %s", d);
	else
		dr_add("cgroup2", DR_WARN,
		       "boot with systemd.unified_cgroup_hierarchy=1 (RHEL 8, Ubuntu 20.04)",
		       "no cgroup v2: cgroup rules and the container hook need it (pid, comm and queue rules work)");
	mount_of("bpf", d, sizeof(d));
	if (d[0])
		dr_add("bpffs", DR_OK, NULL, "mounted on %s", d);
	else
		dr_add("bpffs", DR_OK, NULL,
		       "not mounted (not needed: gpreempt's maps are found by id, not pinned)");
}

/* gpreempt's hooks.d file, and the executable it names ("hook": {"path": ...}). */
static void oci_hook(bool runtime)
{
	static const char * const dirs[] = {
		"/usr/share/containers/oci/hooks.d", "/etc/containers/oci/hooks.d",
	};
	char f[512], text[4096];
	struct json_object *o = NULL, *h, *path;
	const char *bin;
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(f, sizeof(f), "%s/gpreempt-create.json", dirs[i]);
		if (!dr_read(f, text, sizeof(text)))
			break;
	}
	if (i == 2) {
		dr_add("oci-hook", runtime ? DR_WARN : DR_OK,
		       runtime ? "make install (it installs the hooks.d files)" : NULL,
		       "not installed%s", runtime ? ", and podman or CRI-O is here" :
		       " (no podman or CRI-O)");
		return;
	}
	o = json_tokener_parse(text);
	bin = o && json_object_object_get_ex(o, "hook", &h) &&
	      json_object_object_get_ex(h, "path", &path) ? json_object_get_string(path) : NULL;
	if (!bin)
		dr_add("oci-hook", DR_FAIL, "make install again", "%s: no hook.path", f);
	else if (!dr_exists(bin))
		dr_add("oci-hook", DR_FAIL, "make install again with the PREFIX gpreemptctl is in",
		       "%s names %s, which does not exist", f, bin);
	else
		dr_add("oci-hook", DR_OK, NULL, "%s (runs %s)", f, bin);
	json_object_put(o);
}

/* "X.Y" after @key in a runtime's --version output: major and minor. */
static bool runtime_version(const char *cmd, int *maj, int *min, char *ver, size_t len)
{
	char *argv[] = { (char *)cmd, "--version", NULL };
	char *out = NULL, *s;
	bool ok = false;

	ver[0] = '\0';
	if (dr_run(argv, &out, 4096) == 127 || !out) {
		free(out);
		return false;
	}
	for (s = out; *s; s++)
		if (*s >= '0' && *s <= '9' && sscanf(s, "%d.%d", maj, min) == 2) {
			snprintf(ver, len, "%.*s", (int)strcspn(s, " \n"), s);
			ok = true;
			break;
		}
	free(out);
	return ok;
}

/* gpreempt-nri, the NRI v2 plugin: where the DaemonSet (gpreempt-node.sh)
 * and a bare-metal install put it, its unit, and a process of that name.
 */
static const char * const nri2_bins[] = {
	"/opt/gpreempt/sbin/gpreempt-nri", "/usr/local/sbin/gpreempt-nri",
	"/usr/sbin/gpreempt-nri", "/usr/local/bin/gpreempt-nri", "/usr/bin/gpreempt-nri",
};

static const char * const nri2_units[] = {
	"/etc/systemd/system/gpreempt-nri.service", "/usr/lib/systemd/system/gpreempt-nri.service",
	"/lib/systemd/system/gpreempt-nri.service",
};

static const char * const nri2_socks[] = { "/var/run/nri/nri.sock", "/run/nri/nri.sock" };

/* The first pid whose /proc/PID/comm is gpreempt-nri, or 0. */
static long nri2_pid(void)
{
	char d[256], f[300], comm[32];
	struct dirent *e;
	long pid = 0;
	DIR *dir = opendir(dr_path("/proc", d, sizeof(d)));

	if (!dir)
		return 0;
	while (!pid && (e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(f, sizeof(f), "/proc/%.32s/comm", e->d_name);
		if (!dr_read(f, comm, sizeof(comm)) && !strcmp(comm, "gpreempt-nri"))
			pid = strtol(e->d_name, NULL, 10);
	}
	closedir(dir);
	return pid;
}

/* true when gpreempt-nri runs and the runtime's NRI socket is there */
static bool check_nri2(void)
{
	const char *bin = NULL, *unit = NULL, *sock = NULL;
	long pid = nri2_pid();
	size_t i;

	for (i = 0; !bin && i < sizeof(nri2_bins) / sizeof(nri2_bins[0]); i++)
		if (dr_exists(nri2_bins[i]))
			bin = nri2_bins[i];
	for (i = 0; !unit && i < sizeof(nri2_units) / sizeof(nri2_units[0]); i++)
		if (dr_exists(nri2_units[i]))
			unit = nri2_units[i];
	for (i = 0; !sock && i < sizeof(nri2_socks) / sizeof(nri2_socks[0]); i++)
		if (dr_exists(nri2_socks[i]))
			sock = nri2_socks[i];
	if (pid && sock) {
		dr_add("nri-v2", DR_OK, NULL,
		       "gpreempt-nri (NRI v2) runs (pid %ld), %s is there: gpreempt.io/priority works on containerd 1.7+/2.x and CRI-O 1.26+",
		       pid, sock);
		return true;
	}
	if (pid)
		dr_add("nri-v2", DR_WARN,
		       "enable NRI in the runtime: containerd's config.toml [plugins.\"io.containerd.nri.v1.nri\"] disable = false, then restart containerd",
		       "gpreempt-nri runs (pid %ld), but there is no NRI socket (/var/run/nri/nri.sock): the runtime has NRI off",
		       pid);
	else if (bin || unit)
		dr_add("nri-v2", DR_WARN,
		       "systemctl enable --now gpreempt-nri, or check the gpreempt DaemonSet's pod",
		       "gpreempt-nri is installed (%s) but not running: gpreempt.io/priority does nothing on containerd 1.7+/2.x",
		       bin ? bin : unit);
	else
		dr_add("nri-v2", DR_OK, NULL, "NRI v2 plugin gpreempt-nri not installed");
	return false;
}

static void check_runtimes(void)
{
	char ver[64], conf[4096];
	int maj = 0, min = 0, r;
	bool plugin, v2;

	oci_hook(dr_have("podman") || dr_have("crio"));
	plugin = dr_exists("/opt/nri/bin/gpreempt");
	r = dr_read("/etc/nri/conf.json", conf, sizeof(conf));
	if (plugin && (r || !strstr(conf, "gpreempt")))
		dr_add("nri", DR_WARN, "add the plugin to /etc/nri/conf.json (share/gpreempt/nri-conf.json)",
		       "/opt/nri/bin/gpreempt is there, but /etc/nri/conf.json does not name it");
	else
		dr_add("nri", DR_OK, NULL, plugin ? "NRI v0.1 plugin /opt/nri/bin/gpreempt" :
		       "NRI v0.1 plugin not installed");
	v2 = check_nri2();
	if (runtime_version("containerd", &maj, &min, ver, sizeof(ver))) {
		if ((maj > 1 || (maj == 1 && min >= 7)) && v2)
			dr_add("containerd", DR_OK, NULL,
			       "%s (NRI v2): gpreempt-nri gives containers their gpreempt.io/priority",
			       ver);
		else if (maj > 1 || (maj == 1 && min >= 7))
			dr_add("containerd", DR_WARN,
			       "deploy gpreempt-nri (deploy/base/gpreempt.yaml, or its unit on bare metal) with NRI on, or run LC and BE with gpreemptctl set/exec or cgroup rules (docs/containers.md)",
			       "%s: runs no NRI v0.1 plugin and gpreempt-nri (NRI v2) is not running, so gpreempt.io/priority does nothing",
			       ver);
		else
			dr_add("containerd", plugin ? DR_OK : DR_WARN,
			       plugin ? NULL : "make install (it installs the NRI v0.1 plugin)",
			       "%s (NRI v0.1)%s", ver, plugin ? "" : ": the gpreempt plugin is not installed");
	}
	if (runtime_version("crio", &maj, &min, ver, sizeof(ver)))
		dr_add("cri-o", DR_OK, NULL, "%s (runs the OCI hooks.d files)", ver);
}

static void check_module(void)
{
	char d[512], f[512], v[256], list[4096];
	struct dirent *e;
	size_t o = 0;
	DIR *dir;
	int r;

	if (!dr_exists("/sys/module/gpreempt")) {
		dr_add("module", DR_WARN, "modprobe gpreempt, or systemctl enable --now gpreempt",
		       "gpreempt is not loaded");
		return;
	}
	dr_read("/sys/module/gpreempt/initstate", v, sizeof(v));
	dr_add("module", DR_OK, NULL, "gpreempt is loaded (%s)", v[0] ? v : "?");
	list[0] = '\0';
	dir = opendir(dr_path("/sys/module/gpreempt/parameters", d, sizeof(d)));
	if (!dir) {
		dr_add("parameters", DR_UNKNOWN, NULL, "no /sys/module/gpreempt/parameters");
		return;
	}
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "/sys/module/gpreempt/parameters/%.200s", e->d_name);
		r = dr_read(f, v, sizeof(v));
		dr_param(e->d_name, r ? NULL : v);
		o += snprintf(list + o, o < sizeof(list) ? sizeof(list) - o : 0, "%s%s=%s",
			      o ? " " : "", e->d_name, r == -EACCES ? "(root)" : r ? "?" : v);
	}
	closedir(dir);
	dr_add("parameters", DR_OK, NULL, "%s", list[0] ? list : "none");
}

/* The last gpreempt line of the kernel log that reports an error. */
static void check_dmesg(struct dr_ctx *c)
{
	static const char * const bad[] = {
		"error", "refus", "fail", "cannot", "disarm", "rejected", "invalid", "mismatch",
	};
	char *argv[] = { "dmesg", NULL }, *out = NULL, *l, *save = NULL, *last = NULL;
	size_t i;
	int r = dr_run(argv, &out, 8 << 20);

	if (r == 127)
		dr_add("dmesg", DR_UNKNOWN, NULL, "no dmesg command");
	else if (r || !out)
		dr_add("dmesg", DR_UNKNOWN, c->root ? NULL : "run doctor as root",
		       c->root ? "the kernel log cannot be read" : NEEDS_ROOT);
	if (r || !out) {
		free(out);
		return;
	}
	for (l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		/* an unsigned module's "module verification failed: ... -
		 * tainting kernel" is a taint, not an error
		 */
		if (!strstr(l, "gpreempt") || strstr(l, "tainting kernel"))
			continue;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strcasestr(l, bad[i]))
				last = l;
	}
	if (last)
		dr_add("dmesg", DR_WARN, "read the line (docs/kernels.md, 'At insmod', explains refusals)",
		       "last gpreempt error: %.900s", last);
	else
		dr_add("dmesg", DR_OK, NULL, "no gpreempt error in the kernel log");
	free(out);
}

/** dr_host() - the host checks */
void dr_host(struct dr_ctx *c)
{
	check_ibt();
	check_lockdown(c);
	check_secureboot(c);
	check_signature(c);
	check_modload(c);
	check_kprobes(c);
	check_mounts();
	check_runtimes();
	check_module();
	check_dmesg(c);
}
