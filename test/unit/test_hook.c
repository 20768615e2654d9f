// SPDX-License-Identifier: GPL-2.0
/*
 * test_hook.c - unit tests of the container hook's input handling
 * (tools/gpreemptctl/common/hookparse.c): the OCI states podman 4.3.1 + crun pass
 * (recorded in the test guest), NRI v0.1 requests, the annotation's values,
 * /proc/PID/cgroup, cgroupsPath forms, the "container" lines of
 * gpreempt.conf, and hostile input.  TAP output and exit status of
 * test/unit/tap.h (test/unit/hook.sh).
 */
#include <stdlib.h>
#include <string.h>
#include "gpreemptctl.h"
#include "tap.h"

const char *prog = "test_hook";

/* createRuntime and poststop states of one podman 4.3.1 + crun 1.8.1 container */
static const char podman_create[] =
	"{\"ociVersion\":\"1.0\",\"id\":\"adc0ceea820a34df052d2366946ce238ec8ed2c0a26c381b8b0cb3b1a8e5b810\","
	"\"pid\":208,\"root\":\"/tmp/c/vfs/dir/30d290ea3a221fcd45cc0ecd42cc33e14b3e4dad2874449005831dbc83424b18\","
	"\"bundle\":\"/tmp/c/vfs-containers/adc0ceea820a34df052d2366946ce238ec8ed2c0a26c381b8b0cb3b1a8e5b810/userdata\","
	"\"status\":\"created\",\"annotations\":{\"gpreempt.io/priority\":\"high\",\"io.container.manager\":\"libpod\","
	"\"io.kubernetes.cri-o.Created\":\"2026-11-24T06:00:19.979237642Z\",\"io.kubernetes.cri-o.TTY\":\"false\","
	"\"io.podman.annotations.autoremove\":\"TRUE\",\"io.podman.annotations.init\":\"FALSE\","
	"\"io.podman.annotations.privileged\":\"FALSE\",\"io.podman.annotations.publish-all\":\"FALSE\","
	"\"org.opencontainers.image.stopSignal\":\"15\"}}";
static const char podman_poststop[] =
	"{\"ociVersion\":\"1.0.2-dev\",\"id\":\"adc0ceea820a34df052d2366946ce238ec8ed2c0a26c381b8b0cb3b1a8e5b810\","
	"\"status\":\"stopped\",\"bundle\":\"/tmp/c/vfs-containers/adc0ceea820a34df052d2366946ce238ec8ed2c0a26c381b8b0cb3b1a8e5b810/userdata\","
	"\"annotations\":{\"gpreempt.io/priority\":\"high\",\"io.kubernetes.cri-o.TTY\":\"false\","
	"\"io.podman.annotations.autoremove\":\"TRUE\",\"io.podman.annotations.init\":\"FALSE\","
	"\"io.podman.annotations.privileged\":\"FALSE\",\"io.podman.annotations.publish-all\":\"FALSE\"}}";
/* the request containerd 1.6's NRI v0.1 client marshals (nri/types/v1) */
static const char nri_create[] =
	"{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"5f3c0a\",\"sandboxID\":\"9e1b2d\",\"pid\":4242,"
	"\"spec\":{\"resources\":{\"cpu\":{\"shares\":2}},\"namespaces\":{\"pid\":\"/proc/4242/ns/pid\"},"
	"\"cgroupsPath\":\"kubepods-besteffort-pod1234.slice:cri-containerd:5f3c0a\","
	"\"annotations\":{\"gpreempt.io/priority\":\"12\",\"io.kubernetes.cri.container-type\":\"container\"}},"
	"\"labels\":{\"app\":\"infer\"}}";

static int parse(const char *s, bool nri, struct hook_req *r, char *why)
{
	return hook_parse(s, strlen(s), nri, r, why, 256);
}

static void test_states(void)
{
	struct hook_req r;
	char why[256];

	tap_ok(!parse(podman_create, false, &r, why) && r.pid == 208 && r.has_prio && r.prio_ok &&
	       r.prio == GP_PRIO_HIGH && !strcmp(r.state, "created") &&
	       !strncmp(r.id, "adc0ceea8", 9) && strlen(r.id) == 64,
	       "podman createRuntime state: id, pid 208, high = %d", GP_PRIO_HIGH);
	tap_ok(!parse(podman_poststop, false, &r, why) && r.pid == 0 && !strcmp(r.state, "stopped") &&
	       strlen(r.id) == 64, "podman poststop state: no pid, status stopped, same id");
	tap_ok(!parse(nri_create, true, &r, why) && r.pid == 4242 && r.prio == 12 && r.prio_ok &&
	       !strcmp(r.state, "create") && !strcmp(r.sandbox_id, "9e1b2d") &&
	       !strcmp(r.cgroups_path, "kubepods-besteffort-pod1234.slice:cri-containerd:5f3c0a"),
	       "NRI v0.1 create request: pid, state, sandboxID, spec.cgroupsPath, spec.annotations");
	tap_ok(!parse(nri_create, false, &r, why) && !r.has_prio,
	       "an NRI request read as an OCI state: no top-level annotations, no priority");
	tap_ok(!parse("{\"id\":\"x1\",\"annotations\":{\"other\":\"high\"}}", false, &r, why) &&
	       !r.has_prio, "no annotation: has_prio false");
	tap_ok(!parse("{\"id\":\"x1\"}", false, &r, why) && !r.has_prio && !r.pid,
	       "no annotations object at all");
	tap_ok(!parse("{\"id\":\"x1\",\"annotations\":null,\"pid\":-1}", false, &r, why) && !r.has_prio &&
	       !r.pid, "annotations null, pid -1 (NRI: no pid)");
	tap_ok(!parse("{\"id\":\"x1\",\"annotations\":{\"gpreempt.io/priority\":12}}", false, &r, why) &&
	       r.has_prio && !r.prio_ok && !strcmp(r.prio_text, "12"),
	       "a number, not a string: a bad value (\"12\" shown)");
	tap_ok(!parse("{\"id\":\"x1\",\"annotations\":{\"gpreempt.io/priority\":\"high\",\"gpreempt.io/priority\":\"low\"}}",
		      false, &r, why) && r.prio_ok, "a key given twice: one value, still valid");
	tap_ok(!parse(" {\"id\":\"x1\"}\n\n", false, &r, why), "white space around the object");
}

static void test_bad_input(void)
{
	static const char *const bad[] = {
		"", "   ", "{", "{\"id\":\"x1\"", "[]", "\"x\"", "null", "{\"id\":12}",
		"{\"id\":\"\"}", "{\"id\":\"../etc\"}", "{\"id\":\"a/b\"}", "{\"id\":\".hidden\"}",
		"{\"id\":\"-rf\"}", "{\"id\":\"x1\",\"pid\":\"208\"}", "{\"id\":\"x1\"} {\"id\":\"x2\"}",
		"{\"id\":\"x1\"}garbage", "{\"id\":\"x1\",}", "{'id':'x1'}",
	};
	struct hook_req r;
	char why[256], *deep, *longid;
	size_t i, d = 100000;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		tap_ok(parse(bad[i], false, &r, why) && why[0] && !strchr(why, '\n'),
		       "refused with a one-line reason: '%s' (%s)", bad[i], why);
	}
	/* Nested 100000 deep: json-c's depth limit, no stack overflow. */
	deep = malloc(2 * d + 1);
	memset(deep, '[', d);
	memset(deep + d, ']', d);
	deep[2 * d] = '\0';
	tap_ok(hook_parse(deep, 2 * d, false, &r, why, sizeof(why)) == -1,
	       "100000 nested arrays refused (%s)", why);
	free(deep);
	longid = malloc(300);
	snprintf(longid, 300, "{\"id\":\"%0200d\"}", 0);
	tap_ok(parse(longid, false, &r, why), "a 200-character id refused");
	free(longid);
	tap_ok(!hook_parse("{\"id\":\"x1\"}XXXX", 11, false, &r, why, sizeof(why)),
	       "only len bytes are read (no terminating NUL needed)");
	tap_ok(parse("{\"id\":\"x1\",\"annotations\":{\"gpreempt.io/priority\":\"hi\\u0000gh\"}}", false, &r, why) == 0 &&
	       r.has_prio && !r.prio_ok, "an embedded NUL in the value: bad value, not \"hi\"");
	tap_ok(parse("{\"id\":\"x1\",\"annotations\":{\"gpreempt.io/priority\":\"high\\u0000x\"}}", false, &r, why) == 0 &&
	       r.has_prio && !r.prio_ok, "\"high\\u0000x\" is a bad value, not high");
}

static void test_values(void)
{
	static const struct { const char *v; int prio; } ok[] = {
		{ "low", 3 }, { "normal", 7 }, { "high", 12 }, { "0", 0 }, { "9", 9 },
		{ "10", 10 }, { "15", 15 },
	};
	static const char *const bad[] = {
		"", "HIGH", "High", "16", "-1", "+1", " 1", "1 ", "01", "00", "1.0", "0x1", "1e1",
		"lowest", "low ", "99999999999999999999", "\t",
	};
	char line[256];
	size_t i;
	int p;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		tap_ok(!hook_prio(ok[i].v, &p) && p == ok[i].prio, "value '%s' = %d", ok[i].v, ok[i].prio);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_ok(hook_prio(bad[i], &p) == -1, "value '%s' refused", bad[i]);
	hook_refusal("bogus", line, sizeof(line));
	tap_ok(!strcmp(line, "annotation gpreempt.io/priority=\"bogus\" refused: expected low, normal, high or 0..15"),
	       "the refusal names the annotation and the accepted values: %s", line);
	hook_refusal("a\nb\x1b[2Jc0123456789012345678901234567890123456789", line, sizeof(line));
	tap_ok(!strchr(line, '\n') && !strchr(line, '\x1b') && strstr(line, "...\" refused"),
	       "the refusal is one printable line, the value bounded: %s", line);
}

static void test_cgroups(void)
{
	char out[PATH_MAX];

	tap_ok(!hook_cgroup_line("0::/libpod_parent/libpod-adc0\n", out, sizeof(out)) &&
	       !strcmp(out, "/libpod_parent/libpod-adc0"), "/proc/PID/cgroup, cgroup v2: %s", out);
	tap_ok(!hook_cgroup_line("12:pids:/x\n1:name=systemd:/y\n0::/kubepods/pod1/c1", out, sizeof(out)) &&
	       !strcmp(out, "/kubepods/pod1/c1"), "hybrid v1+v2: the 0:: line, no newline at the end");
	tap_ok(hook_cgroup_line("4:memory:/a\n1:cpu:/b\n", out, sizeof(out)) == -1,
	       "v1 only: no cgroup v2 path");
	tap_ok(hook_cgroup_line("0::/aaaaaaaaaaaaaaaaaaaa\n", out, 8) == -1, "a path longer than the buffer");
	tap_ok(!hook_cgroups_path("/kubepods/besteffort/pod12/c1", out, sizeof(out)) &&
	       !strcmp(out, "/kubepods/besteffort/pod12/c1"), "cgroupfs cgroupsPath: %s", out);
	tap_ok(!hook_cgroups_path("default/redis", out, sizeof(out)) && !strcmp(out, "/default/redis"),
	       "relative cgroupsPath: %s", out);
	tap_ok(!hook_cgroups_path("kubepods-besteffort-pod1234.slice:cri-containerd:5f3c0a", out, sizeof(out)) &&
	       !strcmp(out, "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/cri-containerd-5f3c0a.scope"),
	       "systemd cgroupsPath: %s", out);
	tap_ok(!hook_cgroups_path("system.slice:docker:ab12", out, sizeof(out)) &&
	       !strcmp(out, "/system.slice/docker-ab12.scope"), "systemd, one slice: %s", out);
	tap_ok(!hook_cgroups_path(":crio:ab12", out, sizeof(out)) && !strcmp(out, "/crio-ab12.scope"),
	       "systemd, no slice: %s", out);
	tap_ok(!hook_cgroups_path("machine.slice::ab12.slice", out, sizeof(out)) &&
	       !strcmp(out, "/machine.slice/ab12.slice"), "systemd, a slice as the unit: %s", out);
	tap_ok(hook_cgroups_path("/a/../../etc", out, sizeof(out)) == -1, "'..' refused");
	tap_ok(hook_cgroups_path("a.slice:b", out, sizeof(out)) == -1, "two fields refused");
	tap_ok(hook_cgroups_path("a--b.slice:p:n", out, sizeof(out)) == -1, "a bad slice name refused");
	tap_ok(hook_cgroups_path("a/b.slice:p:n", out, sizeof(out)) == -1, "a '/' in the systemd form refused");
	tap_ok(hook_cgroups_path("", out, sizeof(out)) == -1, "empty refused");
	tap_ok(hook_cgroups_path("/.", out, sizeof(out)) == -1, "S4-9: \"/.\" (the root) refused");
	tap_ok(hook_cgroups_path("//", out, sizeof(out)) == -1, "S4-9: \"//\" (the root) refused");
	tap_ok(hook_cgroups_path("/", out, sizeof(out)) == -1, "S4-9: \"/\" (the root) refused");
	tap_ok(hook_cgroups_path("a//b", out, sizeof(out)) == -1 &&
	       hook_cgroups_path("/a/./b", out, sizeof(out)) == -1 &&
	       hook_cgroups_path("/a/b/", out, sizeof(out)) == -1 &&
	       hook_cgroups_path(".", out, sizeof(out)) == -1,
	       "S4-9: an empty or \".\" component refused (a//b, /a/./b, /a/b/, .)");
}

static int conf(const char *text, struct hook_conf *c, char *why)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret = hook_conf_read(f, "gpreempt.conf", c, why, 256);

	fclose(f);
	return ret;
}

static void test_conf(void)
{
	struct hook_conf c;
	char why[256];

	tap_ok(!hook_conf_read(NULL, "none", &c, why, sizeof(why)) && c.max_priority == 11 &&
	       c.max_priority < GP_PRIO_HIGH,
	       "S4-4: no gpreempt.conf: annotations grant at most 11, below an administrator's high (%d)",
	       GP_PRIO_HIGH);
	tap_ok(!conf("# rules\ncgroup infer.slice high\ncomm x 3\nconfig env=on\n", &c, why) &&
	       c.max_priority == HOOK_DEFAULT_MAX, "other lines are apply's: skipped, default cap");
	tap_ok(!conf("container max_priority=normal # LC only by the admin\n", &c, why) &&
	       c.max_priority == GP_PRIO_NORMAL, "container max_priority=normal");
	tap_ok(!conf("container max_priority=3\ncontainer\tmax_priority=15\n", &c, why) && c.max_priority == 15,
	       "the last line wins; tabs");
	tap_ok(conf("cgroup a high\ncontainer max_priority=urgent\n", &c, why) == -1 &&
	       strstr(why, "gpreempt.conf:2:") && strstr(why, "out of range"), "bad value: %s", why);
	tap_ok(conf("container max_prio=3\n", &c, why) == -1 && strstr(why, "unknown container setting"),
	       "unknown key: %s", why);
	tap_ok(conf("container\n", &c, why) == -1 && strstr(why, "gpreempt.conf:1:"),
	       "a container line without a setting: %s", why);
	tap_ok(!conf("containers max_priority=urgent\n", &c, why), "another word is not a container line");
}

/* The pod and container a kubelet's cgroup path names (metrics labels). */
static void test_kube_ids(void)
{
	static const char id[] = "4f1c2a7e9d0b3c5a6e8f7d1b2c3a4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d";
	static const struct {
		const char *path, *pod, *ctr, *what;
	} t[] = {
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice/cri-containerd-%s.scope",
		  "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d", id, "systemd driver, burstable, containerd" },
		{ "/kubepods.slice/kubepods-pod1a2b_3c.slice/crio-%s.scope", "1a2b-3c", id,
		  "systemd driver, guaranteed, CRI-O" },
		{ "/kubepods/burstable/pod1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d/%s",
		  "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d", id, "cgroupfs driver, burstable" },
		{ "/kubepods/pod1a2b/%s", "1a2b", id, "cgroupfs driver, guaranteed" },
		{ "/kubepods/besteffort/pod1a2b", "1a2b", "", "the pod's own cgroup: no container" },
		{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-podab_cd.slice/cri-containerd-%s.scope",
		  "ab-cd", id, "kind's nested kubelet (prefix kubelet-)" },
		{ "/user.slice/user-1000.slice/pod1a2b/%s", "", "", "pod<hex> outside kubepods: no pod" },
		{ "/user.slice/user-1000.slice/user@1000.service/kubepods-besteffort-pod1a2b.slice/cri-containerd-%s.scope",
		  "", "", "a kubepods slice under a user's delegated subtree: no pod" },
		{ "kubepods/pod1a2b/%s", "", "", "a relative path: no pod" },
		{ "/gpp-be", "", "", "no pod" },
		{ "/kubepods/besteffort/podxyz/%s", "", "", "a uid with non-hex characters" },
		{ "/kubepods/besteffort/pod1a2b/%.60s", "1a2b", "", "a leaf that is not 64 digits" },
		{ "/kubepods/besteffort/pod1a2b/cri-containerd-%s.scope.x", "1a2b", "", "a leaf with junk after .scope" },
		{ "/kubepods/besteffort/pod0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/%s",
		  "", "", "a uid longer than the label allows" },
		{ "", "", "", "the empty path" },
	};
	char path[512], pod[HOOK_POD_LEN], ctr[HOOK_CTR_LEN];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(path, sizeof(path), t[i].path, id);
		memset(pod, 'x', sizeof(pod));
		memset(ctr, 'x', sizeof(ctr));
		hook_kube_ids(path, pod, ctr);
		tap_ok(!strcmp(pod, t[i].pod) && !strcmp(ctr, t[i].ctr), "kube ids, %s: pod \"%s\" container \"%.12s\"",
		       t[i].what, pod, ctr);
	}
}

int main(void)
{
	tap_start(0);
	test_states();
	test_bad_input();
	test_values();
	test_cgroups();
	test_conf();
	test_kube_ids();
	return tap_done();
}
