#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Kubernetes deployment (deploy/, docs/containers.md "Kubernetes") on the
# host, without a cluster: the manifests parse (python3-yaml) and say what
# the node script needs (privileged, hostPID, GPU node affinity, a volume for
# every host path it writes); deploy/gpreempt-node.sh passes bash -n and
# shellcheck; and it runs against a fake node, a directory tree, with stub
# dkms, modinfo and nsenter on PATH.  There it must install the module through DKMS
# and load it, put gpreemptctl, /etc/gpreempt.conf (the ConfigMap's),
# /etc/modprobe.d, the hooks.d files and the NRI v0.1 plugin where CRI-O,
# podman and containerd 1.6 read them, change nothing when run again, keep
# the node's file when the ConfigMap is refused, merge into an existing NRI
# conf.json, and leave the node as it found it after uninstall, a node's own
# gpreempt DKMS build and gpreemptctl included; rebuild after an amdgpu-dkms
# upgrade (a build records the amdgpu build id it pinned), at most once, and
# tell a refusal for amdgpu's build id from a rejected signature; rebuild
# for a new image only when the module's inputs changed (not docs); keep
# everything when the pod stops unless GPREEMPT_ON_STOP says otherwise;
# report health (loaded, the monitor's tick count moving, idle allowed for)
# and keep the NFD feature file only while healthy.  The
# ConfigMap's module parameters cannot put anything else into
# /etc/modprobe.d (an "install" line there would run as root on the node).
# The hook itself: test/unit/hook.sh (host) and test/vm/oci-podman.sh
# (guest).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 111
CTL=$PWD/build/gpreemptctl
SCRIPT=$PWD/deploy/gpreempt-node.sh
t=$(mktemp -d)
trap '[ -n "${GP_KEEP:-}" ] || rm -rf "$t"' EXIT

# --- the manifests -----------------------------------------------------------
if ! python3 -c 'import yaml' 2>/dev/null; then
	tap_not_ok "deploy: python3-yaml is installed (apt-get install python3-yaml)"
	tap_bail "no python3-yaml"
fi
tap_check "deploy: the manifests parse (gpreempt.yaml, example-pods.yaml, dra-pods.yaml)" python3 - <<'EOF'
import yaml
for f in ["deploy/base/gpreempt.yaml", "deploy/example-pods.yaml", "deploy/dra-pods.yaml"]:
    docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
    assert docs, f + ": no document"
    for d in docs:
        assert d.get("apiVersion") and d.get("kind") and d["metadata"].get("name"), f + ": " + repr(d)[:80]
EOF

# DRA (deploy/dra-pods.yaml): the LC and BE pods share one named
# ResourceClaim of AMD's DeviceClass, so one GPU on one node, without
# privilege, hostPath or a Pod Security exception; annotated high and low,
# Burstable.  A claim template (one GPU each), a privileged container or a
# hostPath fails here.
tap_check "deploy: the DRA pods share one ResourceClaim (gpu.amd.com), unprivileged, no hostPath, high and low, Burstable" python3 - <<'EOF2'
import yaml
docs = [d for d in yaml.safe_load_all(open("deploy/dra-pods.yaml")) if d]
claims = [d for d in docs if d["kind"] == "ResourceClaim"]
assert len(claims) == 1 and claims[0]["apiVersion"] == "resource.k8s.io/v1", claims
req = claims[0]["spec"]["devices"]["requests"]
assert len(req) == 1 and req[0]["exactly"]["deviceClassName"] == "gpu.amd.com" and \
    req[0]["exactly"].get("count", 1) == 1, req
name = claims[0]["metadata"]["name"]
prios = []
for d in docs:
    if d["kind"] == "Namespace":
        assert "pod-security.kubernetes.io/enforce" not in d["metadata"].get("labels", {}), d
    if d["kind"] != "Deployment":
        continue
    t = d["spec"]["template"]
    spec = t["spec"]
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimName": name}], spec["resourceClaims"]
    assert not spec.get("volumes") and not spec.get("hostPID") and not spec.get("hostNetwork"), d["metadata"]["name"]
    for c in spec["containers"]:
        assert not c.get("securityContext", {}).get("privileged"), c["name"]
        r = c["resources"]
        assert r["claims"] == [{"name": "gpu"}] and "cpu" in r["requests"] and "memory" in r["requests"], c["name"]
    prios.append(t["metadata"]["annotations"]["gpreempt.io/priority"])
assert sorted(prios) == ["high", "low"], prios
EOF2

# The DaemonSet, as JSON lines for the checks below.
python3 - >"$t/ds.txt" <<'EOF'
import yaml
docs = {d["kind"]: d for d in yaml.safe_load_all(open("deploy/base/gpreempt.yaml")) if d}
ds = docs["DaemonSet"]
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
vols = {v["name"]: v for v in pod["volumes"]}
print("kinds", " ".join(sorted(docs)))
print("hostPID", pod.get("hostPID"))
print("privileged", c["securityContext"].get("privileged"))
print("command", " ".join(c["command"]))
print("sa", pod.get("serviceAccountName"), docs["ServiceAccount"]["metadata"]["name"])
print("ns", ds["metadata"]["namespace"], docs["ConfigMap"]["metadata"]["namespace"])
print("selector", ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"])
for term in pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]:
    for e in term["matchExpressions"]:
        print("affinity", e["key"], e["operator"], ",".join(e.get("values", [])))
for e in c["env"]:
    print("env", e["name"], e["value"])
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    if "hostPath" in v:
        print("mount", m["mountPath"], v["hostPath"]["path"], "ro" if m.get("readOnly") else "rw")
    elif "configMap" in v:
        print("configmap", m["mountPath"], v["configMap"]["name"], docs["ConfigMap"]["metadata"]["name"])
print("configkeys", " ".join(sorted(docs["ConfigMap"]["data"])))
print("image", c["image"])
for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
    if probe in c:
        print("probe", probe, " ".join(c[probe]["exec"]["command"]))
m = [x for x in pod["containers"] if x["name"] == "metrics"]
if m:
    m = m[0]
    sc = m.get("securityContext", {})
    print("metrics command", " ".join(m["command"]))
    print("metrics port", " ".join("%s %s" % (p["name"], p["containerPort"]) for p in m.get("ports", [])))
    print("metrics sec", sc.get("privileged"), sc.get("allowPrivilegeEscalation"),
          ",".join(sc.get("capabilities", {}).get("drop", [])),
          ",".join(sorted(sc.get("capabilities", {}).get("add", []))))
    print("metrics image", m["image"] == c["image"])
    for mm in m.get("volumeMounts", []):
        v = vols[mm["name"]]
        print("metrics mount", mm["mountPath"], v["hostPath"]["path"], "ro" if mm.get("readOnly") else "rw")
EOF
ds() { grep "^$1 " "$t/ds.txt" | cut -d' ' -f2-; }
tap_check "deploy: ServiceAccount, ConfigMap, DaemonSet in one namespace, the pod uses the account" \
	sh -c "[ '$(ds kinds)' = 'ConfigMap DaemonSet ServiceAccount' ] && [ '$(ds sa)' = 'gpreempt gpreempt' ] &&
	       [ '$(ds ns)' = 'kube-system kube-system' ] && [ '$(ds selector)' = True ]"
tap_check "deploy: the DaemonSet is privileged and hostPID (modprobe, BPF maps, nsenter)" \
	sh -c "[ '$(ds hostPID)' = True ] && [ '$(ds privileged)' = True ]"
tap_check "deploy: it runs on nodes labelled by AMD's GPU operator (NFD) or the ROCm labeller" \
	sh -c "ds() { grep \"^\$1 \" '$t/ds.txt' | cut -d' ' -f2-; }
	       ds affinity | grep -qx 'feature.node.kubernetes.io/amd-gpu In true' &&
	       ds affinity | grep -qx 'amd.com/gpu.family Exists '"
tap_check "deploy: the ConfigMap is mounted where the script reads it, with gpreempt.conf and module-params" \
	sh -c "[ '$(ds configmap)' = '/config gpreempt-config gpreempt-config' ] &&
	       [ '$(ds configkeys)' = 'gpreempt.conf module-params' ] &&
	       grep -qx 'env GPREEMPT_CONFIG_DIR /config' '$t/ds.txt'"
tap_check "deploy: the DaemonSet keeps gpreempt when its pod stops (GPREEMPT_ON_STOP keep: a rolling update never unprotects a node)" \
	grep -qx 'env GPREEMPT_ON_STOP keep' "$t/ds.txt"
tap_check "deploy: startup, liveness and readiness probes run gpreempt-node health" \
	sh -c "grep '^probe ' '$t/ds.txt' | tr '\n' ';' |
	       grep -qx 'probe startupProbe /usr/local/sbin/gpreempt-node health;probe livenessProbe /usr/local/sbin/gpreempt-node health;probe readinessProbe /usr/local/sbin/gpreempt-node health;'"
tap_check "deploy: a metrics container serves gpreemptctl metrics on port 9464, not privileged (SYS_ADMIN and SYS_PTRACE only), the host's cgroups read-only" \
	sh -c "ds() { grep \"^\$1 \" '$t/ds.txt' | cut -d' ' -f2-; }
	       [ \"\$(ds metrics)\" = \"\$(printf '%s\\n' 'command nsenter --target 1 --cgroup -- /usr/local/sbin/gpreemptctl metrics --listen 0.0.0.0:9464' 'port metrics 9464' 'sec False False ALL SYS_ADMIN,SYS_PTRACE' 'image True' 'mount /sys/fs/cgroup /sys/fs/cgroup ro')\" ]"
tap_check "deploy: the image is a placeholder, no registry host name" \
	sh -c "[ '$(ds image)' = '<your-registry>/gpreempt:0.1' ]"
# runtime_pkgs: the packages the Containerfile's runtime stage installs.
runtime_pkgs() {
	sed -n '/^FROM .* AS runtime$/,/^FROM /p' deploy/Containerfile | tr '\\' ' ' |
		awk '/apt-get install/ { on = 1 } on { print } /&&/ && on { exit }' |
		tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' | grep -vxE 'apt-get|install|rm|DEBIAN_FRONTEND=noninteractive' | sort | tr '\n' ' '
}
tap_check "deploy: the Containerfile's runtime target has no compiler or DKMS, and what install runs ($(runtime_pkgs)); it copies no source" \
	sh -c "[ '$(runtime_pkgs)' = 'binutils jq kmod util-linux xz-utils zstd ' ] &&
	       ! sed -n '/^FROM .* AS runtime\$/,/^FROM /p' deploy/Containerfile | grep -qE '^COPY \\. |gcc|clang|dkms |make ' &&
	       sed -n '/^FROM .* AS runtime\$/,/^FROM /p' deploy/Containerfile | grep -qx 'ENV GPREEMPT_MODULE=init'"
tap_check "deploy: the Containerfile installs the script the DaemonSet runs, and a static gpreemptctl" \
	sh -c "[ '$(ds command)' = '/usr/local/sbin/gpreempt-node run' ] &&
	       grep -q 'install -m 0755 deploy/gpreempt-node.sh /usr/local/sbin/gpreempt-node' deploy/Containerfile &&
	       grep -q 'CTL_LDLIBS=\"-static' deploy/Containerfile &&
	       grep -qx '.cache' .dockerignore && grep -qx 'build' .dockerignore"
tap_check "deploy: the Containerfile installs every interpreter and program the module's DKMS build runs (python3 included)" \
	python3 test/unit/image-tools.py
tap_check "deploy: every GPREEMPT_* the DaemonSet sets is one the script reads" \
	sh -c "ds() { grep \"^\$1 \" '$t/ds.txt' | cut -d' ' -f2-; }
	       for v in \$(ds env | cut -d' ' -f1); do grep -q \"\\\${\$v:-\" '$SCRIPT' || { echo \"\$v\"; exit 1; }; done"
# Privileged pods can unload gpreempt, so the shipped manifests confine them:
# a Namespace that admits privileged pods (Pod Security's enforce label) is
# only gpu-shared, every privileged pod is in it or is gpreempt's own
# DaemonSet in kube-system, and no shipped RBAC object lets users create pods
# anywhere (who may is the cluster's RBAC, docs/containers.md).  A second
# privileged namespace, a privileged pod elsewhere, or a binding for
# system:authenticated fails here.
tap_check "deploy: privileged pods only in gpu-shared (and gpreempt's DaemonSet), no shipped RBAC grants pod creation" python3 - <<'EOF2'
import yaml
docs = [x for f in ("deploy/base/gpreempt.yaml", "deploy/example-pods.yaml")
        for x in yaml.safe_load_all(open(f)) if x]
priv_ns = [x["metadata"]["name"] for x in docs if x["kind"] == "Namespace" and
           x["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") == "privileged"]
assert priv_ns == ["gpu-shared"], "namespaces admitting privileged pods: %r" % priv_ns
for x in docs:
    if x["kind"] not in ("Deployment", "DaemonSet", "Pod", "StatefulSet", "Job"):
        continue
    spec = x["spec"]["template"]["spec"] if "template" in x.get("spec", {}) else x["spec"]
    priv = any(c.get("securityContext", {}).get("privileged") for c in
               spec.get("containers", []) + spec.get("initContainers", []))
    where = (x["kind"], x["metadata"].get("namespace"), x["metadata"]["name"])
    if priv:
        assert where[1] == "gpu-shared" or where == ("DaemonSet", "kube-system", "gpreempt"), \
            "privileged outside gpu-shared: %r" % (where,)
for x in docs:
    assert x["kind"] not in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"), \
        "the manifests ship %s %s: who creates pods is the cluster's RBAC" % (x["kind"], x["metadata"]["name"])
EOF2

# QoS class is not a role: the example pods request cpu and memory
# (Burstable, so the LC one is not in kubepods-besteffort.slice), and the
# ConfigMap suggests no rule on the BestEffort slice, which would cap an LC
# pod without requests as much as a BE one.
tap_check "deploy: the example pods are Burstable (cpu and memory requests); the ConfigMap suggests no rule on kubepods-besteffort.slice" python3 - <<'EOF'
import yaml
docs = [x for x in yaml.safe_load_all(open("deploy/example-pods.yaml")) if x]
for x in docs:
    if x["kind"] != "Deployment":
        continue
    for c in x["spec"]["template"]["spec"]["containers"]:
        req = c.get("resources", {}).get("requests", {})
        assert "cpu" in req and "memory" in req, "%s: no cpu and memory requests: BestEffort" % x["metadata"]["name"]
cm = [x for x in yaml.safe_load_all(open("deploy/base/gpreempt.yaml")) if x and x["kind"] == "ConfigMap"][0]
for line in cm["data"]["gpreempt.conf"].splitlines():
    assert not ("besteffort" in line and line.lstrip("# ").startswith("cgroup")), line
EOF
# The example pods (the GPU sharing the docs recommend): LC and BE annotated
# with values the hook accepts, LC above BE; both on a node the DaemonSet
# runs on, BE on LC's node, both on the same GPU with /dev/kfd and /dev/dri
# mounted, privileged, in a namespace Pod Security admission lets them run in.
tap_check "deploy: example-pods.yaml: an LC and a BE pod share one GPU (annotations, node, GPU, devices, namespace)" python3 - <<'EOF'
import re, yaml
docs = [x for x in yaml.safe_load_all(open("deploy/example-pods.yaml")) if x]
ns = {x["metadata"]["name"]: x for x in docs if x["kind"] == "Namespace"}
d = {x["metadata"]["name"]: x for x in docs if x["kind"] == "Deployment"}
ds = [x for x in yaml.safe_load_all(open("deploy/base/gpreempt.yaml")) if x and x["kind"] == "DaemonSet"][0]
terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
    "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
def prio(v):
    assert isinstance(v, str) and re.fullmatch(r"low|normal|high|1[0-5]|[0-9]", v), repr(v)
    return {"low": 3, "normal": 7, "high": 12}.get(v) or int(v)
def on_ds_node(sel):   # the pod's nodeSelector satisfies one of the DaemonSet's terms
    for t in terms:
        if all((e["operator"] == "In" and sel.get(e["key"]) in e["values"]) or
               (e["operator"] == "Exists" and e["key"] in sel) for e in t["matchExpressions"]):
            return True
    return False
gpu = {}
for name in ("infer-lc", "train-be"):
    dep = d[name]
    n = dep["metadata"].get("namespace")
    assert n in ns, "%s: its namespace %r is not in the file" % (name, n)
    assert ns[n]["metadata"]["labels"].get("pod-security.kubernetes.io/enforce") == "privileged", \
        "%s: namespace %s does not admit privileged pods" % (name, n)
    spec = dep["spec"]["template"]["spec"]
    assert on_ds_node(spec.get("nodeSelector", {})), "%s: not pinned to a gpreempt node" % name
    vols = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
    for c in spec["containers"]:
        assert c.get("securityContext", {}).get("privileged") is True, "%s: not privileged" % name
        mounts = {vols.get(m["name"]): m["mountPath"] for m in c.get("volumeMounts", [])}
        for dev in ("/dev/kfd", "/dev/dri"):
            assert mounts.get(dev) == dev, "%s/%s: %s not mounted" % (name, c["name"], dev)
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        gpu[name] = env.get("ROCR_VISIBLE_DEVICES")
lc = prio(d["infer-lc"]["spec"]["template"]["metadata"]["annotations"]["gpreempt.io/priority"])
be = prio(d["train-be"]["spec"]["template"]["metadata"]["annotations"]["gpreempt.io/priority"])
assert lc > be, "LC's priority %d is not above BE's %d" % (lc, be)
assert gpu["infer-lc"] is not None and gpu["infer-lc"] == gpu["train-be"], "not one GPU: %r" % gpu
aff = d["train-be"]["spec"]["template"]["spec"]["affinity"]["podAffinity"][
    "requiredDuringSchedulingIgnoredDuringExecution"][0]
assert aff["topologyKey"] == "kubernetes.io/hostname"
assert aff["labelSelector"]["matchLabels"] == d["infer-lc"]["spec"]["template"]["metadata"]["labels"]
EOF

# --- the script --------------------------------------------------------------
tap_check "deploy: gpreempt-node.sh: bash -n" bash -n "$SCRIPT"
if command -v shellcheck >/dev/null; then
	tap_check "deploy: gpreempt-node.sh: shellcheck" shellcheck "$SCRIPT"
else
	tap_skip "deploy: gpreempt-node.sh: shellcheck" "shellcheck not installed"
fi
[ -x "$CTL" ] || { tap_not_ok "deploy: $CTL built (make tools)"; tap_bail; }

# A fake node: the host's files under $t/host (GPREEMPT_ROOT), the
# container's /lib/modules, /usr/src and /sys under $t/c.  Stub dkms and
# nsenter log every call; nsenter "loads" a module by making $t/c/sys/module/X.
H=$t/host C=$t/c
mkdir -p "$H/etc/containerd" "$H/etc/modprobe.d" "$H/usr/share/containers/oci/hooks.d" "$H/opt/gpreempt" "$H/opt/nri" \
	"$C/lib/modules/6.12.0-test/build" "$C/usr/src" "$C/sys/module/amdgpu" "$t/bin" "$t/config"
# The image's source, as much of it as the script reads.
mkdir -p "$t/src" && cp -a dkms.conf etc deploy "$t/src/"
echo node1 >"$H/etc/hostname"
printf '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n' \
	>"$H/etc/containerd/config.toml"
# Stub dkms: one state directory per version under $t/dkms (k-KVER: installed
# for KVER), dkms 3's status lines.
cat >"$t/bin/dkms" <<EOF
#!/bin/bash
echo "dkms \$*" >>"$t/calls"
st=$t/dkms cmd=\$1 v= k=
shift
while [ \$# -gt 0 ]; do case \$1 in -v) v=\$2; shift ;; -k) k=\$2; shift ;; esac; shift; done
case \$cmd in
status) for d in "\$st"/*/; do [ -d "\$d" ] || continue; V=\$(basename "\$d")
		[ -z "\$v" ] || [ "\$v" = "\$V" ] || continue
		ks=\$(ls "\$d" | sed -n 's/^k-//p')
		[ -n "\$ks" ] || { [ -n "\$k" ] || echo "gpreempt/\$V: added"; continue; }
		for K in \$ks; do [ -z "\$k" ] || [ "\$k" = "\$K" ] || continue; echo "gpreempt/\$V, \$K, x86_64: installed"; done
	done ;;
add) [ -f "$C/usr/src/gpreempt-\$v/dkms.conf" ] || { echo "no /usr/src/gpreempt-\$v" >&2; exit 2; }; mkdir -p "\$st/\$v" ;;
install) [ -d "\$st/\$v" ] || exit 3
	# The k- file holds the amdgpu build id the layout pinned: that of the
	# amdgpu.ko modinfo names (scripts/dkms-build), if there is one.
	ko=\$(modinfo -k "\$k" -n amdgpu 2>/dev/null) id=
	case \$ko in *.xz) xz -dc "\$ko" >"$t/pin.ko"; ko=$t/pin.ko ;; esac
	[ -z "\$ko" ] || id=\$(readelf -n "\$ko" | awk '/Build ID:/ { print \$3; exit }')
	echo "\$id" >"\$st/\$v/k-\$k" ;;
remove)	# dkms 3: -k KVER removes that kernel's build, and the version with its last one
	if [ -n "\$k" ]; then rm -f "\$st/\$v/k-\$k"; [ -n "\$(ls "\$st/\$v" 2>/dev/null)" ] || rm -rf "\${st:?}/\$v"
	else rm -rf "\${st:?}/\$v"; fi ;;
esac
EOF
# The container's modinfo -k KVER -n amdgpu: the amdgpu.ko $t/disk-ko names.
cat >"$t/bin/modinfo" <<EOF
#!/bin/sh
[ "\$*" = "-k 6.12.0-test -n amdgpu" ] && [ -s "$t/disk-ko" ] && cat "$t/disk-ko"
EOF
cat >"$t/bin/nsenter" <<EOF
#!/bin/sh
[ "\$1 \$2 \$3 \$4" = "--target 1 --mount --" ] || { echo "nsenter: unexpected \$*" >&2; exit 2; }
# refused: insmod gpreempt as the kernel does: STUB_SIG, a signature it
# rejects (kernel/module/signing.c, module_sig_check()); without BTF, a build
# pinned to another amdgpu build id than the loaded amdgpu's
# (module/kfd/layout_check.c); STUB_LIVE, the live check's refusal
# (module/kfd/layout_live.c).  Each logs the kernel's line in $t/dmesg.
refused() {
	n=\$((\$(cat "$t/dmesg" 2>/dev/null | wc -l) + 1))
	pin=\$(cat "$t"/dkms/*-ds/k-6.12.0-test 2>/dev/null | grep . | head -n 1)
	run=\$(od -An -v -tx1 -j16 "$C/sys/module/amdgpu/notes/.note.gnu.build-id" 2>/dev/null | tr -d ' \\n')
	if [ -n "\${STUB_SIG:-}" ]; then
		echo "[ \$n.000000] Loading of unsigned module is rejected" >>"$t/dmesg"
		echo "modprobe: ERROR: could not insert 'gpreempt': Key was rejected by service" >&2
	elif [ -n "\$pin" ] && [ "\$pin" != "\$run" ]; then
		echo "[ \$n.000000] gpreempt: amdgpu is not the binary gpreempt was built for: no BTF, build id \$run; built for /usr/src/amdgpu-6.10.5, build id \$pin; rebuild gpreempt against it" >>"$t/dmesg"
		echo "modprobe: ERROR: could not insert 'gpreempt': Invalid module format" >&2
	elif [ -n "\${STUB_LIVE:-}" ]; then
		echo "[ \$n.000000] gpreempt: live KFD objects do not match the layout gpreempt was built for (from /usr/src/amdgpu-6.10.5): pdd->process != p (PASID 32770); rebuild gpreempt against this amdgpu" >>"$t/dmesg"
		echo "modprobe: ERROR: could not insert 'gpreempt': Invalid module format" >&2
	else
		return 0
	fi
	return 1
}
shift 4
echo "host \$*" >>"$t/calls"
case "\$*" in
"modprobe -r "*) rmdir "$C/sys/module/\$3" ;;
"modprobe "*)	# as modprobe: an "install MODULE CMD" line runs CMD instead
	cmd=\$(cat "$H"/etc/modprobe.d/*.conf 2>/dev/null | sed -n "s/^install \$2 //p" | head -n 1)
	if [ -n "\$cmd" ]; then sh -c "\$cmd"; exit 0; fi
	[ "\$2" != gpreempt ] || refused || exit 1
	mkdir -p "$C/sys/module/\$2" ;;
dmesg) cat "$t/dmesg" 2>/dev/null ;;
"modinfo -p gpreempt")	# a few of module/params.c's, as modinfo prints them
	printf '%s\\n' "tick_us:Scan period while work is pending, us (uint)" "hysteresis_us:Hold time, us (uint)" \
		"backend:auto, evict or cu (backend)" "env_priority:Honour GPREEMPT_PRIORITY (bool)" ;;
*" apply "*) exit \${STUB_APPLY_RC:-0} ;;
"containerd --version") [ -n "\${STUB_CONTAINERD:-}" ] || exit 127; echo "containerd github.com/containerd/containerd v\$STUB_CONTAINERD abc" ;;
esac
exit 0
EOF
chmod +x "$t/bin/dkms" "$t/bin/nsenter" "$t/bin/modinfo"
# Debian's headers link scripts/ to /usr/lib/linux-kbuild-<version>: the
# host's, and the container's /usr/lib (outside the node's paths).
mkdir -p "$H/usr/lib/linux-kbuild-6.12/scripts" "$t/ctr-usr-lib"
printf 'container max_priority=normal\ncgroup infer.slice high\n' >"$t/config/gpreempt.conf"
printf '# scan faster\ntick_us=200\n' >"$t/config/module-params"
# node install|uninstall: sets out, rc.  The tests clean the fake node with
# GPREEMPT_ON_STOP=uninstall; GPREEMPT_ON_STOP= (empty) is the script's default.
node() {
	out=$(PATH=$t/bin:$PATH GPREEMPT_ROOT=$H GPREEMPT_CONFIG_DIR=$t/config GPREEMPT_SRC=$t/src \
		GPREEMPT_ON_STOP=${GPREEMPT_ON_STOP-uninstall} \
		GPREEMPT_CTL=$CTL GPREEMPT_USRSRC=$C/usr/src GPREEMPT_MODULES=${NODE_MODULES:-$C/lib/modules} \
		GPREEMPT_SYS=$C/sys GPREEMPT_KVER=6.12.0-test GPREEMPT_USRLIB=$t/ctr-usr-lib "$SCRIPT" "$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" >"$t/out"
}
paths() { (cd "$t" && find host c -mindepth 1 | sort); }
snapshot() {	# every path of the fake node, with its content or link target
	(cd "$t" && { find host c/usr/src c/sys -path c/usr/src/gpreempt-0.1-ds -prune -o -type f -print0 | xargs -0 -r md5sum
		      find host c/usr/src c/sys -path c/usr/src/gpreempt-0.1-ds -prune -o -type l -printf '%p -> %l\n' -o -type d -printf '%p/\n'
		    } | sort)
}
snapshot >"$t/before"
paths >"$t/paths-before"

node install
if [ $rc = 0 ]; then tap_ok "deploy: install on a fake node: exit 0"
else tap_not_ok "deploy: install on a fake node: exit 0 (exit $rc)"; printf '%s\n' "$out" | sed 's/^/# /'; fi
printf '%s\n' "$out" >"$t/install1.log"
hd=$H/usr/share/containers/oci/hooks.d
tap_check "deploy: the hooks.d files (CRI-O, podman) run /opt/gpreempt/sbin/gpreemptctl on the annotation" \
	sh -c "jq -e '.hook.path == \"/opt/gpreempt/sbin/gpreemptctl\" and .hook.args == [\"gpreemptctl\", \"hook\", \"create\"] and
	              .stages == [\"createRuntime\"] and (.when.annotations | has(\"^gpreempt\\\\.io/priority\$\"))' '$hd/gpreempt-create.json' &&
	       jq -e '.hook.path == \"/opt/gpreempt/sbin/gpreemptctl\" and .stages == [\"poststop\"]' '$hd/gpreempt-poststop.json'"
tap_check "deploy: gpreemptctl on the host at /opt/gpreempt/sbin, executable, the image's" \
	sh -c "[ -x '$H/opt/gpreempt/sbin/gpreemptctl' ] && cmp -s '$CTL' '$H/opt/gpreempt/sbin/gpreemptctl'"
tap_check "deploy: containerd 1.6's NRI v0.1: /etc/nri/conf.json names gpreempt, /opt/nri/bin/gpreempt -> gpreemptctl" \
	sh -c "jq -e '.version == \"0.1\" and ([.plugins[].type] == [\"gpreempt\"])' '$H/etc/nri/conf.json' &&
	       [ \"\$(readlink '$H/opt/nri/bin/gpreempt')\" = /opt/gpreempt/sbin/gpreemptctl ]"
tap_check "deploy: /etc/gpreempt.conf and /etc/modprobe.d/gpreempt.conf (from module-params) are the ConfigMap's, marked as ours" \
	sh -c "tail -n +2 '$H/etc/gpreempt.conf' | cmp -s - '$t/config/gpreempt.conf' &&
	       grep -vx '#.*' '$H/etc/modprobe.d/gpreempt.conf' | tr '\n' ';' | grep -qx 'softdep gpreempt pre: amdgpu;options gpreempt tick_us=200;' &&
	       head -n 1 '$H/etc/modprobe.d/gpreempt.conf' | grep -q '^# Written by the gpreempt DaemonSet' &&
	       head -n 1 '$H/etc/gpreempt.conf' | grep -q '^# Written by the gpreempt DaemonSet'"
tap_check "deploy: DKMS add and install of gpreempt/0.1-ds for the node's kernel, from a copy of the source in /usr/src" \
	sh -c "grep -qx 'dkms add -m gpreempt -v 0.1-ds' '$t/calls' && grep -qx 'dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test' '$t/calls' &&
	       grep -qx 'PACKAGE_VERSION=\"0.1-ds\"' '$C/usr/src/gpreempt-0.1-ds/dkms.conf' && [ -s '$C/usr/src/gpreempt-0.1-ds/.gpreempt-src-id' ]"
tap_check "deploy: the host's /usr/lib is mounted read-only into the pod" \
	grep -qx 'mount /host/usr/lib /usr/lib ro' "$t/ds.txt"
tap_check "deploy: the container's /usr/lib/linux-kbuild-6.12 is the host's (Debian's headers link there)" \
	sh -c "[ \"\$(readlink '$t/ctr-usr-lib/linux-kbuild-6.12')\" = '$H/usr/lib/linux-kbuild-6.12' ]"
tap_check "deploy: on the host: modinfo -p (the parameters checked), modprobe gpreempt, then apply of the new conf, then hook resync" \
	sh -c "grep '^host ' '$t/calls' | grep -v -e '--help' -e 'containerd --version' -e '^host dmesg$' | tr '\n' ';' |
	       grep -qx 'host modinfo -p gpreempt;host modprobe gpreempt;host /opt/gpreempt/sbin/gpreemptctl apply /etc/gpreempt.conf.gpreempt-new;host /opt/gpreempt/sbin/gpreemptctl hook resync;'"
tap_check "deploy: it warns that containerd's runtime lacks pod_annotations" \
	grep -q 'add pod_annotations = \["gpreempt.io/priority"\]' "$t/install1.log"
paths >"$t/paths-after"
tap_check "deploy: the script writes only below the DaemonSet's volumes" \
	sh -c "ds() { grep \"^\$1 \" '$t/ds.txt' | cut -d' ' -f2-; }
	       mounts=\$(ds mount | cut -d' ' -f1)
	       comm -13 '$t/paths-before' '$t/paths-after' | sed -e 's|^host|/host|' -e 's|^c/|/|' |
	       while read -r f; do case \$f in /sys/*) continue;; esac; ok=
		       for m in \$mounts; do case \$f in \$m/*) ok=1;; esac; done
		       [ -n \"\$ok\" ] || { echo \"\$f: no volume\"; exit 1; }; done"

# Again: nothing changes, nothing is built.
: >"$t/calls"
snapshot >"$t/after1"
node install
snapshot >"$t/after2"
tap_check "deploy: a second install: same files, no dkms add/install, no modprobe" \
	sh -c "[ $rc = 0 ] && diff '$t/after1' '$t/after2' && ! grep -qE '^dkms (add|install)|^host modprobe' '$t/calls'"

# A ConfigMap that apply refuses: the node's file stays, exit 0 (run retries).
cp "$H/etc/gpreempt.conf" "$t/good.conf"
echo 'cgroup /nonexistent high' >>"$t/config/gpreempt.conf"
STUB_APPLY_RC=6 node install
tap_check "deploy: a refused ConfigMap leaves /etc/gpreempt.conf as it was, with a warning" \
	sh -c "[ $rc = 0 ] && cmp -s '$t/good.conf' '$H/etc/gpreempt.conf' && [ ! -e '$H/etc/gpreempt.conf.gpreempt-new' ] &&
	       grep -q 'refused, /etc/gpreempt.conf is unchanged' '$t/out'"
printf 'container max_priority=normal\ncgroup infer.slice high\n' >"$t/config/gpreempt.conf"

# The ConfigMap's module parameters cannot run code on the node: modprobe.d's
# "install MODULE CMD" runs CMD as root (the stub modprobe does so too).
# Each bad ConfigMap is refused, naming its line; /etc/modprobe.d stays as it
# was and nothing runs, neither at the install's modprobe gpreempt (gpreempt
# unloaded first) nor at a later modprobe nvme.
modprobe_d() { (cd "$H/etc/modprobe.d" && md5sum ./*); }
refused() {	# refused NAME KEY LINE: a ConfigMap KEY with LINE is refused
	rm -f "$t/config/module-params" "$t/config/modprobe.conf" "$t/pwned" "$t/pwned-nvme"
	printf '%s\n' "$3" >"$t/config/$2"
	modprobe_d >"$t/md-before"
	rmdir "$C/sys/module/gpreempt" 2>/dev/null
	node install
	PATH=$t/bin:$PATH nsenter --target 1 --mount -- modprobe nvme
	rmdir "$C/sys/module/nvme" 2>/dev/null
	if [ $rc = 0 ] && modprobe_d | cmp -s - "$t/md-before" && [ ! -e "$t/pwned" ] && [ ! -e "$t/pwned-nvme" ] &&
	   grep -qF "module parameters were refused, /etc/modprobe.d/gpreempt.conf is unchanged: $2 line 1 \"$3\"" "$t/out"; then
		tap_ok "deploy: ConfigMap $2 \"$1\": refused naming the line, /etc/modprobe.d unchanged, nothing run"
	else
		tap_not_ok "deploy: ConfigMap $2 \"$1\": refused naming the line, /etc/modprobe.d unchanged, nothing run"
		{ echo "exit $rc"; ls "$t"/pwned* 2>/dev/null; diff "$t/md-before" <(modprobe_d); cat "$H/etc/modprobe.d/gpreempt.conf"; cat "$t/out"; } |
			tail -n 20 | sed 's/^/# /'
	fi
}
for key in module-params modprobe.conf; do
	refused "install gpreempt CMD" $key "install gpreempt /bin/touch $t/pwned"
	refused "install nvme CMD" $key "install nvme /bin/touch $t/pwned-nvme"
	refused "options nvme" $key "options nvme io_queue_depth=64"
	if [ $key = modprobe.conf ]; then
		tap_check "deploy: a refused modprobe.conf key says to use module-params" \
			grep -qF "put gpreempt's parameters in the module-params key, one KEY=VALUE a line" "$t/out"
	fi
	refused "blacklist amdgpu" $key "blacklist amdgpu"
	refused "softdep of another module" $key "softdep nvme pre: gpreempt"
done
refused "an unknown key" module-params "no_such_param=1"
tap_check "deploy: an unknown key's refusal lists gpreempt's parameters (modinfo -p on the host)" \
	grep -qF "gpreempt has no parameter no_such_param (it has: tick_us hysteresis_us backend env_priority" "$t/out"
refused "a value with ;" module-params "tick_us=100;touch $t/pwned"
refused "a value with \$(...)" module-params "tick_us=\$(touch $t/pwned)"
refused "a value with a space" module-params "tick_us=100 /bin/sh"
refused "options gpreempt with an unknown key" modprobe.conf "options gpreempt tick_us=100 no_such_param=1"
refused "options gpreempt with a backquote" modprobe.conf "options gpreempt tick_us=\`touch $t/pwned\`"
rm -f "$t/config/modprobe.conf"
printf '# faster\n\n  tick_us=100\nhysteresis_us=2000\nbackend=auto\n' >"$t/config/module-params"
node install
tap_check "deploy: valid module-params give softdep and one options gpreempt line, in their order" \
	sh -c "[ $rc = 0 ] && grep -vx '#.*' '$H/etc/modprobe.d/gpreempt.conf' | tr '\n' ';' |
	       grep -qx 'softdep gpreempt pre: amdgpu;options gpreempt tick_us=100 hysteresis_us=2000 backend=auto;' &&
	       ! grep -q 'refused' '$t/out'"
rm -f "$t/config/module-params"
printf '# old form\nsoftdep gpreempt pre: amdgpu\noptions gpreempt tick_us=150 env_priority=1\n' >"$t/config/modprobe.conf"
node install
tap_check "deploy: the old modprobe.conf key: its options gpreempt lines alone are converted, with a warning" \
	sh -c "[ $rc = 0 ] && grep -vx '#.*' '$H/etc/modprobe.d/gpreempt.conf' | tr '\n' ';' |
	       grep -qx 'softdep gpreempt pre: amdgpu;options gpreempt tick_us=150 env_priority=1;' &&
	       grep -q 'modprobe.conf key is deprecated' '$t/out'"
rm -f "$t/config/modprobe.conf"
# A ConfigMap with neither key, over a file an older DaemonSet copied from
# its ConfigMap verbatim (marked as ours, an install line in it): the file
# is read as the modprobe.conf key would be, and rewritten without what it
# may not keep; a valid one keeps its parameters; the node's own stays.
mark=$(sed -n 1p "$H/etc/modprobe.d/gpreempt.conf")
printf '%s\noptions gpreempt tick_us=150\ninstall nvme /bin/touch %s\n' "$mark" "$t/pwned-nvme" \
	>"$H/etc/modprobe.d/gpreempt.conf"
rm -f "$t/pwned-nvme"
node install
PATH=$t/bin:$PATH nsenter --target 1 --mount -- modprobe nvme
rmdir "$C/sys/module/nvme" 2>/dev/null
tap_check "deploy: an older DaemonSet's modprobe.d file with an install line: rewritten without parameters, with a warning, nothing run" \
	sh -c "[ $rc = 0 ] && [ ! -e '$t/pwned-nvme' ] && grep -vx '#.*' '$H/etc/modprobe.d/gpreempt.conf' | tr '\n' ';' |
	       grep -qx 'softdep gpreempt pre: amdgpu;' &&
	       grep -qF 'an earlier DaemonSet'\''s /etc/modprobe.d/gpreempt.conf was refused, rewritten without parameters: /etc/modprobe.d/gpreempt.conf line 3' '$t/out'"
printf '%s\noptions gpreempt tick_us=150\n' "$mark" >"$H/etc/modprobe.d/gpreempt.conf"
node install
tap_check "deploy: an older DaemonSet's valid modprobe.d file keeps its parameters" \
	sh -c "[ $rc = 0 ] && grep -vx '#.*' '$H/etc/modprobe.d/gpreempt.conf' | tr '\n' ';' |
	       grep -qx 'softdep gpreempt pre: amdgpu;options gpreempt tick_us=150;' && ! grep -q 'refused' '$t/out'"
printf 'options gpreempt tick_us=300\n' >"$H/etc/modprobe.d/gpreempt.conf"
node install
tap_check "deploy: the node's own modprobe.d file (not marked) is left as it is" \
	sh -c "[ $rc = 0 ] && [ \"\$(cat '$H/etc/modprobe.d/gpreempt.conf')\" = 'options gpreempt tick_us=300' ]"
printf '%s\n' "$mark" "softdep gpreempt pre: amdgpu" >"$H/etc/modprobe.d/gpreempt.conf"
printf '# scan faster\ntick_us=200\n' >"$t/config/module-params"
node install

# containerd 1.7: a warning that NRI v0.1 is not run.
STUB_CONTAINERD=1.7.24 node install
tap_check "deploy: containerd 1.7 on the node: a warning that annotations have no effect" \
	grep -q 'containerd 1.7 does not run NRI v0.1 plugins' "$t/out"

node uninstall
printf '%s\n' "$out" >"$t/uninstall.log"
tap_check "deploy: uninstall: exit 0, modprobe -r and dkms remove" \
	sh -c "[ $rc = 0 ] && grep -qx 'host modprobe -r gpreempt' '$t/calls' && grep -qx 'dkms remove -m gpreempt -v 0.1-ds --all' '$t/calls'"
snapshot >"$t/after"
tap_check "deploy: uninstall leaves the fake node as it was before install" diff "$t/before" "$t/after"

# A node with its own files: an NRI conf.json with another plugin, its own
# /etc/gpreempt.conf, a make install's hooks.d file.  Merged, backed up,
# left alone; and all of it as before after uninstall.
mkdir -p "$H/etc/nri"
echo '{"version":"0.1","plugins":[{"type":"other","conf":{"a":1}}]}' >"$H/etc/nri/conf.json"
echo 'cgroup mine.slice low' >"$H/etc/gpreempt.conf"
sed 's|@SBINDIR@|/usr/local/sbin|' etc/oci-hooks.d/gpreempt-poststop.json >"$hd/gpreempt-poststop.json"
snapshot >"$t/before2"
node install
tap_check "deploy: an existing NRI conf.json keeps its plugin and gains gpreempt" \
	sh -c "[ $rc = 0 ] && jq -e '[.plugins[].type] == [\"other\", \"gpreempt\"] and .plugins[0].conf.a == 1' '$H/etc/nri/conf.json'"
tap_check "deploy: the node's own /etc/gpreempt.conf is saved before the ConfigMap's replaces it" \
	sh -c "grep -qx 'cgroup mine.slice low' '$H/etc/gpreempt.conf.before-gpreempt-daemonset'"
node uninstall
snapshot >"$t/after3"
tap_check "deploy: uninstall restores the node's own files (NRI conf.json, gpreempt.conf)" diff "$t/before2" "$t/after3"

# A node with its own gpreempt DKMS build (make dkms-install, a package):
# /usr/src/gpreempt-0.1 without the image's id file, registered with DKMS and
# installed for another kernel; and its own /opt/gpreempt/sbin/gpreemptctl.
# The DaemonSet builds gpreempt/0.1-ds beside it, and after uninstall both
# are as they were: no dkms remove of gpreempt/0.1, the tree untouched.
mkdir -p "$C/usr/src/gpreempt-0.1" "$t/dkms/0.1" "$H/opt/gpreempt/sbin"
cp dkms.conf "$C/usr/src/gpreempt-0.1/"
echo "the node's own" >"$C/usr/src/gpreempt-0.1/marker"
: >"$t/dkms/0.1/k-6.1.0-old"
printf '#!/bin/sh\necho the node'"'"'s own\n' >"$H/opt/gpreempt/sbin/gpreemptctl"
chmod 755 "$H/opt/gpreempt/sbin/gpreemptctl"
own_dkms() { (cd "$t" && find dkms | sort); }
snapshot >"$t/before4"
own_dkms >"$t/dkms-before4"
: >"$t/calls"
node install
tap_check "deploy: a node's own gpreempt/0.1 DKMS build: install builds gpreempt/0.1-ds beside it, removes nothing of it" \
	sh -c "[ $rc = 0 ] && grep -qx 'dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test' '$t/calls' &&
	       ! grep -q '^dkms remove -m gpreempt -v 0.1 ' '$t/calls' && [ -f '$t/dkms/0.1/k-6.1.0-old' ] &&
	       grep -qx \"the node's own\" '$C/usr/src/gpreempt-0.1/marker'"
tap_check "deploy: the node's own /opt/gpreempt/sbin/gpreemptctl is saved before the image's replaces it" \
	sh -c "cmp -s '$CTL' '$H/opt/gpreempt/sbin/gpreemptctl' &&
	       grep -q \"the node's own\" '$H/opt/gpreempt/sbin/gpreemptctl.before-gpreempt-daemonset'"
node uninstall
snapshot >"$t/after4"
tap_check "deploy: uninstall: the node's own DKMS build, its tree and its gpreemptctl are as before; gpreempt/0.1-ds removed" \
	sh -c "[ $rc = 0 ] && diff '$t/before4' '$t/after4' && own_dkms() { cd '$t' && find dkms | sort; } && own_dkms | diff '$t/dkms-before4' - &&
	       grep -qx 'dkms remove -m gpreempt -v 0.1-ds --all' '$t/calls' && ! grep -q '^dkms remove -m gpreempt -v 0.1 ' '$t/calls'"

# The node's own build installed for the running kernel: DKMS has one
# gpreempt per kernel, so the install stops, says how to choose, and changes
# nothing; GPREEMPT_MODULE=skip then uses the node's module.
: >"$t/dkms/0.1/k-6.12.0-test"
: >"$t/calls"
node install
tap_check "deploy: the node's own build installed for the kernel: exit 1, says GPREEMPT_MODULE=skip, nothing removed or built" \
	sh -c "[ $rc = 1 ] && grep -q 'error: the node has its own gpreempt DKMS build for 6.12.0-test (gpreempt/0.1).*GPREEMPT_MODULE=skip' '$t/out' &&
	       ! grep -qE '^dkms (remove|add|install)' '$t/calls' && [ -f '$t/dkms/0.1/k-6.12.0-test' ] &&
	       grep -qx \"the node's own\" '$C/usr/src/gpreempt-0.1/marker' && [ ! -e '$C/usr/src/gpreempt-0.1-ds' ]"
GPREEMPT_MODULE=skip node install
tap_check "deploy: ... and with GPREEMPT_MODULE=skip the install goes on without DKMS" \
	sh -c "[ $rc = 0 ] && ! grep -qE '^dkms (remove|add|install)' '$t/calls'"
GPREEMPT_MODULE=skip node uninstall
rm -rf "$C/usr/src/gpreempt-0.1" "$t/dkms/0.1" "$H/opt/gpreempt/sbin"

# An earlier DaemonSet's build, from before the -ds name: gpreempt/0.1 whose
# tree has the id file.  It is the DaemonSet's own: replaced by 0.1-ds.
mkdir -p "$C/usr/src/gpreempt-0.1" "$t/dkms/0.1"
cp dkms.conf "$C/usr/src/gpreempt-0.1/"
echo older-image >"$C/usr/src/gpreempt-0.1/.gpreempt-src-id"
: >"$t/dkms/0.1/k-6.12.0-test"
: >"$t/calls"
node install
tap_check "deploy: an earlier DaemonSet's gpreempt/0.1 (its tree has the id file) is replaced by gpreempt/0.1-ds" \
	sh -c "[ $rc = 0 ] && grep -qx 'dkms remove -m gpreempt -v 0.1 --all' '$t/calls' && [ ! -e '$C/usr/src/gpreempt-0.1' ] &&
	       grep -qx 'dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test' '$t/calls'"
node uninstall

# After an amdgpu-dkms upgrade (docs/containers.md, "What the pod does").
# amdgpu.ko files with chosen GNU build ids (gcc -Wl,--build-id); the loaded
# amdgpu's /sys/module/amdgpu/notes/.note.gnu.build-id is the file's note
# section, as the kernel exposes it.  modinfo names the one on disk
# ($t/disk-ko); the stub dkms pins its id, and the stub modprobe refuses a
# build pinned to another id than the loaded amdgpu's, as insmod does
# without BTF.
A=$(printf 'a%.0s' $(seq 40)) B=$(printf 'b%.0s' $(seq 40)) Cid=$(printf 'c%.0s' $(seq 40))
for id in $A $B $Cid; do gcc -shared -nostdlib -Wl,--build-id=0x$id -o "$t/amdgpu-$id.ko" -x c /dev/null; done
xz -k "$t/amdgpu-$B.ko"
mkdir -p "$C/sys/module/amdgpu/notes"
boot() {	# boot ID DISK: the node runs amdgpu ID, modinfo names DISK; gpreempt not loaded
	objcopy -O binary --only-section=.note.gnu.build-id "$t/amdgpu-$1.ko" "$C/sys/module/amdgpu/notes/.note.gnu.build-id"
	printf '%s\n' "$2" >"$t/disk-ko"
	rmdir "$C/sys/module/gpreempt" 2>/dev/null || true
	: >"$t/calls"
}
record=$C/usr/src/gpreempt-0.1-ds/.gpreempt-amdgpu-6.12.0-test
dkms_calls() { grep -E '^dkms (remove|install)' "$t/calls" | tr '\n' ';'; }
loads() { grep -c '^host modprobe gpreempt$' "$t/calls"; }
boot $A "$t/amdgpu-$A.ko"
node install
boot $A "$t/amdgpu-$A.ko"
node install
tap_check "deploy: a build records the amdgpu build id it pinned; installed and amdgpu unchanged: no rebuild, loaded" \
	sh -c "[ $rc = 0 ] && [ \"\$(cat '$record')\" = $A ] && [ '$(dkms_calls)' = '' ] && [ $(loads) = 1 ] &&
	       [ -d '$C/sys/module/gpreempt' ] && grep -q 'gpreempt/0.1-ds is installed for 6.12.0-test' '$t/out'"
boot $B "$t/amdgpu-$B.ko.xz"
node install
tap_check "deploy: installed, amdgpu-dkms upgraded (another build id, .ko.xz): one line says so, dkms remove -k and install, loaded" \
	sh -c "[ $rc = 0 ] && [ \$(grep -c 'amdgpu is not the one gpreempt/0.1-ds was built for on 6.12.0-test (build id $B, built for $A' '$t/out') = 1 ] &&
	       [ '$(dkms_calls)' = 'dkms remove -m gpreempt -v 0.1-ds -k 6.12.0-test;dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test;' ] &&
	       [ $(loads) = 1 ] && [ \"\$(cat '$record')\" = $B ] && [ -d '$C/sys/module/gpreempt' ]"
# Upgraded to C and not rebooted, on a node without the build: the fresh
# build pins C, the loaded amdgpu is B.
node uninstall
boot $B "$t/amdgpu-$Cid.ko"
node install
rc1=$rc calls1="$(dkms_calls) $(loads)"
cp "$t/out" "$t/out-mismatch"
boot $Cid "$t/amdgpu-$Cid.ko"
node install
tap_check "deploy: modprobe refused for amdgpu's build id: exit 1, the kernel's line, says reboot, no Secure Boot hint, not rebuilt; after the reboot it loads" \
	sh -c "[ $rc1 = 1 ] && grep -q 'error: modprobe gpreempt was refused: gpreempt/0.1-ds is built for another amdgpu than the loaded one (the node.s kernel log: gpreempt: amdgpu is not the binary gpreempt was built for' '$t/out-mismatch' &&
	       grep -q 'Reboot the node' '$t/out-mismatch' && ! grep -qiE 'secure boot|mokutil|signature' '$t/out-mismatch' &&
	       [ '$calls1' = 'dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test; 1' ] &&
	       [ $rc = 0 ] && [ '$(dkms_calls)' = '' ] && [ $(loads) = 1 ] && [ -d '$C/sys/module/gpreempt' ]"
boot $Cid "$t/amdgpu-$Cid.ko"
STUB_SIG=1 node install
tap_check "deploy: modprobe refused for its signature: exit 1, the kernel's line, says mokutil, no amdgpu hint, not rebuilt" \
	sh -c "[ $rc = 1 ] && grep -q 'error: modprobe gpreempt was refused: the kernel rejected its signature (the node.s kernel log: Loading of unsigned module is rejected).*mokutil --import /var/lib/dkms/mok.pub' '$t/out' &&
	       ! grep -qE 'another amdgpu|rebuild' '$t/out' && [ '$(dkms_calls)' = '' ] && [ $(loads) = 1 ]"
# A build that says not which amdgpu it is for (an older DaemonSet's, or
# DKMS's AUTOINSTALL for a new kernel), pinned to A, next to C.
echo $A >"$t/dkms/0.1-ds/k-6.12.0-test"
rm -f "$record"
boot $Cid "$t/amdgpu-$Cid.ko"
node install
tap_check "deploy: a build without the record, refused for amdgpu's build id: rebuilt once, loaded" \
	sh -c "[ $rc = 0 ] && [ \$(grep -c 'was refused next to amdgpu build id $Cid.*rebuilding it once' '$t/out') = 1 ] &&
	       [ '$(dkms_calls)' = 'dkms remove -m gpreempt -v 0.1-ds -k 6.12.0-test;dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test;' ] &&
	       [ $(loads) = 2 ] && [ -d '$C/sys/module/gpreempt' ]"
# The same, but the fresh build is refused too (the live check).
echo $A >"$t/dkms/0.1-ds/k-6.12.0-test"
rm -f "$record"
boot $Cid "$t/amdgpu-$Cid.ko"
STUB_LIVE=1 node install
tap_check "deploy: a refused fresh build is not rebuilt again: one rebuild, two modprobes, exit 1 with the mismatch message" \
	sh -c "[ $rc = 1 ] && [ '$(dkms_calls)' = 'dkms remove -m gpreempt -v 0.1-ds -k 6.12.0-test;dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test;' ] &&
	       [ $(loads) = 2 ] && grep -q 'error: modprobe gpreempt was refused: gpreempt/0.1-ds does not match the loaded amdgpu (the node.s kernel log: gpreempt: live KFD objects.*built for this very amdgpu (build id $Cid).*AMDGPU_BTF=1' '$t/out'"
boot $Cid "$t/amdgpu-$Cid.ko"
STUB_LIVE=1 node install
tap_check "deploy: ... nor at the pod's restart: no build, one modprobe, exit 1 with the same message" \
	sh -c "[ $rc = 1 ] && [ '$(dkms_calls)' = '' ] && [ $(loads) = 1 ] &&
	       grep -q 'error: modprobe gpreempt was refused: gpreempt/0.1-ds does not match the loaded amdgpu' '$t/out'"
node uninstall
rm -rf "$C/sys/module/amdgpu/notes" "$t/disk-ko"

# A new image that changes only what the module's build does not read
# (docs/, README.md) keeps the node's build: no dkms remove or install, no
# reload.  One that changes module/ rebuilds and reloads.
mkdir -p "$t/src/module" "$t/src/docs"
echo 'int v = 1;' >"$t/src/module/main.c"
echo 'the docs' >"$t/src/docs/containers.md"
echo 'readme' >"$t/src/README.md"
node install
reloads() { grep -cx 'host modprobe -r gpreempt' "$t/calls"; }
: >"$t/calls"
echo 'the docs, edited' >"$t/src/docs/containers.md"
echo 'readme, edited' >"$t/src/README.md"
node install
tap_check "deploy: a new image with only docs/ and README.md changed: no dkms remove or install, no reload" \
	sh -c "[ $rc = 0 ] && [ '$(dkms_calls)' = '' ] && [ $(reloads) = 0 ] && [ $(loads) = 0 ] && [ -d '$C/sys/module/gpreempt' ]"
: >"$t/calls"
echo 'int v = 2;' >"$t/src/module/main.c"
node install
tap_check "deploy: a new image with module/ changed: dkms remove and install, gpreempt reloaded" \
	sh -c "[ $rc = 0 ] && [ '$(dkms_calls)' = 'dkms remove -m gpreempt -v 0.1-ds --all;dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test;' ] &&
	       [ $(reloads) = 1 ] && [ $(loads) = 1 ] && [ -d '$C/sys/module/gpreempt' ]"
id=$(GPREEMPT_SRC=$t/src "$SCRIPT" src-id 2>&1)
tap_check "deploy: src-id prints the id of the module's inputs, the one the node's tree records; the Containerfile writes it with src-id" \
	sh -c "[ -n '$id' ] && [ \"\$(cat '$C/usr/src/gpreempt-0.1-ds/.gpreempt-src-id')\" = '$id' ] &&
	       grep -q 'GPREEMPT_SRC=. deploy/gpreempt-node.sh src-id >.gpreempt-src-id' deploy/Containerfile"
tap_check "deploy: the source id covers every input of the module's DKMS build (scripts, Makefile recipes, module/Kbuild)" \
	python3 test/unit/image-tools.py --src-id
node uninstall
rm -rf "$t/src/module" "$t/src/docs" "$t/src/README.md"

# The build as an init step (deploy/overlays/init-build): "build" in the
# init container (DKMS), then install with GPREEMPT_MODULE=init in a runtime
# container that has no DKMS: it loads the init's build, reloads only after
# a new one, and never runs dkms.
mkdir -p "$t/src/module"
echo 'int v = 1;' >"$t/src/module/main.c"
: >"$t/calls"
GPREEMPT_MODULE=init node install
tap_check "deploy: init-build: no build from an init container yet: exit 1, says so, no dkms, nothing loaded" \
	sh -c "[ $rc = 1 ] && grep -q 'error: GPREEMPT_MODULE=init and no gpreempt/0.1-ds build on the node' '$t/out' &&
	       [ -z \"\$(grep '^dkms ' '$t/calls')\" ] && [ $(loads) = 0 ]"
: >"$t/calls"
node build
tap_check "deploy: init-build: build installs gpreempt/0.1-ds with DKMS and loads nothing" \
	sh -c "[ $rc = 0 ] && [ '$(dkms_calls)' = 'dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test;' ] && [ $(loads) = 0 ] &&
	       grep -q 'built anew' '$t/out'"
: >"$t/calls"
GPREEMPT_MODULE=init node install
tap_check "deploy: init-build: the runtime container loads that build without dkms" \
	sh -c "[ $rc = 0 ] && [ -z \"\$(grep '^dkms ' '$t/calls')\" ] && [ $(loads) = 1 ] && [ -d '$C/sys/module/gpreempt' ] &&
	       [ ! -e '$C/usr/src/gpreempt-0.1-ds/.gpreempt-reload-6.12.0-test' ]"
echo 'the docs, edited' >"$t/src/README.md"
: >"$t/calls"
node build
rc1=$rc
GPREEMPT_MODULE=init node install
tap_check "deploy: init-build: a docs-only image: build does nothing, the runtime container does not reload" \
	sh -c "[ $rc1 = 0 ] && [ $rc = 0 ] && [ '$(dkms_calls)' = '' ] && [ $(reloads) = 0 ] && [ $(loads) = 0 ]"
echo 'int v = 2;' >"$t/src/module/main.c"
: >"$t/calls"
node build
rc1=$rc
GPREEMPT_MODULE=init node install
tap_check "deploy: init-build: module/ changed: build rebuilds, the runtime container reloads, once" \
	sh -c "[ $rc1 = 0 ] && [ $rc = 0 ] && [ '$(dkms_calls)' = 'dkms remove -m gpreempt -v 0.1-ds --all;dkms install -m gpreempt -v 0.1-ds -k 6.12.0-test;' ] &&
	       [ $(reloads) = 1 ] && [ $(loads) = 1 ] && [ ! -e '$C/usr/src/gpreempt-0.1-ds/.gpreempt-reload-6.12.0-test' ]"
echo 'int v = 3;' >"$t/src/module/main.c"
GPREEMPT_MODULE=init node install
tap_check "deploy: init-build: a runtime image of another source than the node's build: exit 1, says so" \
	sh -c "[ $rc = 1 ] && grep -q 'build is of another source than this image' '$t/out'"
GPREEMPT_MODULE=init GPREEMPT_ON_STOP=uninstall node uninstall
tap_check "deploy: init-build: uninstall in the runtime container unloads, says the DKMS build stays, runs no dkms" \
	sh -c "[ $rc = 0 ] && grep -q 'this container has no DKMS' '$t/out' && [ ! -d '$C/sys/module/gpreempt' ]"
node uninstall
rm -rf "$t/src/module" "$t/src/README.md"

# A gpreemptctl whose --json status prints the tick count in $t/ticks (the
# health check reads it), or fails as with gpreempt unloaded (STUB_CTL_FAIL,
# or $t/ctl-fail for a running run).
cat >"$t/fake-ctl" <<EOF
#!/bin/sh
[ "\$*" = "--json status" ] || exit 64
if [ -n "\${STUB_CTL_FAIL:-}" ] || [ -e "$t/ctl-fail" ]; then
	echo '{"error":"gpreempt is not loaded (no BPF map named gp_queues)"}'; exit 3
fi
printf '{"stats":{"ticks":%s,"shadow_active":%s%s},"queues":[]}\n' "\$(cat "$t/ticks")" "\${STUB_SHADOW:-0}" "\${STUB_AGE:+,\"tick_age_ms\":\$STUB_AGE}"
EOF
chmod +x "$t/fake-ctl"
echo 100 >"$t/ticks"
# KFD's topology: a CPU node and a gfx1100 GPU (MES).
topo=$C/sys/class/kfd/kfd/topology/nodes
mkdir -p "$topo/0" "$topo/1" "$C/sys/module/amdgpu/parameters"
echo 'gfx_target_version 0' >"$topo/0/properties"
printf 'cpu_cores_count 0\ngfx_target_version 110000\n' >"$topo/1/properties"
echo 0 >"$C/sys/module/amdgpu/parameters/sched_policy"
nfd=$H/etc/kubernetes/node-feature-discovery/features.d/gpreempt

# run, as the DaemonSet does: ready, the NFD feature file while healthy, a
# ConfigMap change re-applied; SIGTERM (the pod deleted, an update) keeps
# gpreempt and removes the feature file.
: >"$t/calls"
PATH=$t/bin:$PATH TMPDIR=$t GPREEMPT_ROOT=$H GPREEMPT_CONFIG_DIR=$t/config GPREEMPT_SRC=$t/src \
	GPREEMPT_CTL=$t/fake-ctl GPREEMPT_USRSRC=$C/usr/src GPREEMPT_MODULES=$C/lib/modules GPREEMPT_SYS=$C/sys \
	GPREEMPT_KVER=6.12.0-test GPREEMPT_USRLIB=$t/ctr-usr-lib GPREEMPT_RESYNC_S=1 "$SCRIPT" run >"$t/run.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q '^gpreempt-node: ready' "$t/run.log" && break; sleep 0.1; done
tap_check "deploy: run: ready after the install" grep -q '^gpreempt-node: ready' "$t/run.log"
for _ in $(seq 50); do [ -e "$nfd" ] && break; sleep 0.1; done
tap_check "deploy: run: gpreempt healthy: the NFD feature file says active, park=mes (a gfx11 GPU)" \
	sh -c "[ \"\$(cat '$nfd')\" = 'gpreempt.io/active=true
gpreempt.io/park=mes' ]"
echo 'comm llama-server high' >>"$t/config/gpreempt.conf"
# Until the re-apply is done: the file is written before the apply and the
# resync run, so waiting for the file alone raced with them.
applied() {
	grep -q 'comm llama-server' "$H/etc/gpreempt.conf" 2>/dev/null &&
		grep -E 'gpreemptctl (apply|hook resync)' "$t/calls" | sed 's/.*gpreemptctl //' | tr '\n' ';' |
		grep -q '^apply [^;]*;hook resync;.*apply [^;]*;hook resync;'
}
for _ in $(seq 300); do applied && break; sleep 0.1; done
tap_check "deploy: run: a ConfigMap change is applied within GPREEMPT_RESYNC_S" \
	sh -c "grep -q 'comm llama-server high' '$H/etc/gpreempt.conf' &&
	       [ \$(grep -c 'gpreemptctl apply' '$t/calls') = 2 ]"
tap_check "deploy: run: each apply is followed by hook resync (a lowered container cap reaches running containers)" \
	sh -c "grep -E 'gpreemptctl (apply|hook resync)' '$t/calls' | sed 's/.*gpreemptctl //' | tr '\n' ';' |
	       grep -q '^apply [^;]*;hook resync;.*apply [^;]*;hook resync;'"
# A rule whose cgroup did not exist yet (kubelet makes the QoS slices after
# boot): retried while gpreemptctl apply leaves it pending.
mkdir -p "$H/run/gpreempt"
echo 'cgroup /sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice 3' >"$H/run/gpreempt/pending"
for _ in $(seq 300); do grep -q 'apply --if-pending' "$t/calls" && break; sleep 0.1; done
tap_check "deploy: run: a pending cgroup rule is retried (gpreemptctl apply --if-pending) within GPREEMPT_RESYNC_S" \
	grep -qx '.*gpreemptctl apply --if-pending /etc/gpreempt.conf' "$t/calls"
rm -f "$H/run/gpreempt/pending"
modprobe_d >"$t/md-before"
cp "$t/config/module-params" "$t/params.good"
echo "install gpreempt /bin/touch $t/pwned" >>"$t/config/module-params"
for _ in $(seq 50); do grep -q 'module parameters were refused' "$t/run.log" && break; sleep 0.1; done
tap_check "deploy: run: a changed ConfigMap with an install line is refused, /etc/modprobe.d unchanged" \
	sh -c "grep -qF 'module-params line 3 \"install gpreempt /bin/touch' '$t/run.log' &&
	       (cd '$H/etc/modprobe.d' && md5sum ./*) | cmp -s - '$t/md-before'"
cp "$t/params.good" "$t/config/module-params"
touch "$t/ctl-fail"
for _ in $(seq 50); do [ ! -e "$nfd" ] && break; sleep 0.1; done
tap_check "deploy: run: gpreempt unhealthy (status fails): the NFD feature file is removed, the log says why" \
	sh -c "[ ! -e '$nfd' ] && grep -q 'warning: unhealthy (gpreemptctl status failed: gpreempt is not loaded.*removed /etc/kubernetes/node-feature-discovery/features.d/gpreempt' '$t/run.log'"
rm -f "$t/ctl-fail"
for _ in $(seq 50); do [ -e "$nfd" ] && break; sleep 0.1; done
: >"$t/calls"
kill -TERM $pid
wait $pid
rc=$?
tap_check "deploy: run: SIGTERM with the default GPREEMPT_ON_STOP keeps gpreempt loaded, gpreemptctl, hooks and /etc files; exit 0" \
	sh -c "[ $rc = 0 ] && grep -q 'GPREEMPT_ON_STOP=keep: the node keeps gpreempt' '$t/run.log' && [ -d '$C/sys/module/gpreempt' ] &&
	       [ -x '$H/opt/gpreempt/sbin/gpreemptctl' ] && [ -f '$hd/gpreempt-create.json' ] && head -n 1 '$H/etc/gpreempt.conf' | grep -q '^# Written by the gpreempt DaemonSet' &&
	       ! grep -qE '^host modprobe -r|^dkms remove' '$t/calls'"
tap_check "deploy: run: ... and removes the NFD feature file (healthy again before; a stopped pod vouches for nothing)" \
	sh -c "grep -q 'removed /etc/kubernetes/node-feature-discovery/features.d/gpreempt\$' '$t/run.log' && [ ! -e '$nfd' ] &&
	       [ -d '${nfd%/*}' ]"
GPREEMPT_ON_STOP= node uninstall
tap_check "deploy: uninstall with no GPREEMPT_ON_STOP removes nothing (keep is the default)" \
	sh -c "[ $rc = 0 ] && [ -d '$C/sys/module/gpreempt' ] && [ -x '$H/opt/gpreempt/sbin/gpreemptctl' ] &&
	       ! grep -qE '^host modprobe -r|^dkms remove' '$t/calls'"
node uninstall
tap_check "deploy: GPREEMPT_ON_STOP=uninstall cleans the node (module unloaded, gpreemptctl removed)" \
	sh -c "[ $rc = 0 ] && grep -q 'uninstalled (uninstall)' '$t/out' && [ ! -e '$H/opt/gpreempt/sbin/gpreemptctl' ] &&
	       [ ! -d '$C/sys/module/gpreempt' ]"
sed -i '$d' "$t/config/gpreempt.conf"

GPREEMPT_ON_STOP=keep node uninstall
tap_check "deploy: GPREEMPT_ON_STOP=keep: uninstall removes nothing" \
	sh -c "[ $rc = 0 ] && grep -q 'keeps gpreempt' '$t/out'"
# health: gpreempt loaded and its monitor thread ticking, as gpreemptctl
# --json status says (a fake one printing $t/ticks); a stuck count fails
# only past two idle_max_us and the slack, so an idle node (deep idle ticks
# up to idle_max_us apart) stays healthy, and so does shadow mode.
mkdir -p "$t/htmp"
hstate=$t/htmp/gpreempt-health
health() {	# sets out, rc; $t/hout holds out
	out=$(PATH=$t/bin:$PATH TMPDIR=$t/htmp GPREEMPT_CTL=$t/fake-ctl GPREEMPT_SYS=$C/sys GPREEMPT_ROOT=$H \
		GPREEMPT_CONFIG_DIR=$t/config GPREEMPT_SRC=$t/src GPREEMPT_KVER=6.12.0-test "$SCRIPT" health 2>&1)
	rc=$?
	printf '%s\n' "$out" >"$t/hout"
}
lines() { grep -c . "$t/hout"; }
rm -rf "$C/sys/module/gpreempt"
echo 100 >"$t/ticks"
health
tap_check "deploy: health: gpreempt not loaded: exit 1, one line saying so" \
	sh -c "[ $rc = 1 ] && [ $(lines) = 1 ] && grep -qx 'gpreempt-node: unhealthy: gpreempt is not loaded' '$t/hout'"
mkdir -p "$C/sys/module/gpreempt/parameters"
echo 500000 >"$C/sys/module/gpreempt/parameters/idle_max_us"
echo 1 >"$C/sys/module/gpreempt/parameters/enable"
rm -f "$hstate"
health
rc1=$rc lines1=$(lines)
echo 150 >"$t/ticks"
health
tap_check "deploy: health: loaded, a first reading and then a moved tick count: exit 0, one line, the count kept" \
	sh -c "[ $rc1 = 0 ] && [ $lines1 = 1 ] && [ $rc = 0 ] && [ $(lines) = 1 ] && [ \"\$(cut -d' ' -f1 '$hstate')\" = 150 ]"
now=$(date +%s)
echo "150 $((now - 100))" >"$hstate"
health
tap_check "deploy: health: the tick count stuck for 100 s (idle_max_us 0.5 s): exit 1, one line saying so" \
	sh -c "[ $rc = 1 ] && [ $(lines) = 1 ] &&
	       grep -q 'unhealthy: gpreempt.s monitor thread has not ticked for 10[0-9] s (gp_stats.ticks stays 150' '$t/hout'"
echo 10000000 >"$C/sys/module/gpreempt/parameters/idle_max_us"
echo "150 $((now - 25))" >"$hstate"
health
rc1=$rc
echo "150 $((now - 40))" >"$hstate"
health
tap_check "deploy: health: idle_max_us 10 s (deep idle): stuck 25 s is healthy, 40 s is not" \
	sh -c "[ $rc1 = 0 ] && [ $rc = 1 ]"
echo 0 >"$C/sys/module/gpreempt/parameters/enable"
echo 151 >"$t/ticks"
STUB_SHADOW=1 health
tap_check "deploy: health: shadow mode (enable=0) ticking is healthy" \
	sh -c "[ $rc = 0 ] && [ \"\$(cut -d' ' -f1 '$hstate')\" = 151 ]"
# One reading: the monitor's last tick, as gpreemptctl computes it.
echo 10000000 >"$C/sys/module/gpreempt/parameters/idle_max_us"
rm -f "$hstate"
STUB_AGE=25000 health
rc1=$rc
rm -f "$hstate"
STUB_AGE=40000 health
tap_check "deploy: health: tick_age_ms from one reading (idle_max_us 10 s): 25 s ago is healthy, 40 s is not, with no state kept" \
	sh -c "[ $rc1 = 0 ] && [ $rc = 1 ] && [ ! -e '$hstate' ] &&
	       grep -q 'unhealthy: gpreempt.s monitor thread has not ticked for 40 s' '$t/hout'"
STUB_AGE=null health
tap_check "deploy: health: tick_age_ms null (a module without last_tick_ns): the two readings as before" \
	sh -c "[ $rc = 0 ] && [ -e '$hstate' ]"
STUB_CTL_FAIL=1 health
tap_check "deploy: health: gpreemptctl status fails: exit 1, one line with its error" \
	sh -c "[ $rc = 1 ] && [ $(lines) = 1 ] &&
	       grep -q 'unhealthy: gpreemptctl status failed: gpreempt is not loaded (no BPF map named gp_queues)' '$t/hout'"
# features: the NFD feature file, as run keeps it; park by the node's
# costliest GPU; removed when unhealthy and by any uninstall.
features() {	# sets out, rc
	out=$(PATH=$t/bin:$PATH TMPDIR=$t/htmp GPREEMPT_CTL=$t/fake-ctl GPREEMPT_SYS=$C/sys GPREEMPT_ROOT=$H \
		GPREEMPT_CONFIG_DIR=$t/config GPREEMPT_SRC=$t/src GPREEMPT_KVER=6.12.0-test "$SCRIPT" features 2>&1)
	rc=$?
}
mkdir -p "$C/sys/module/gpreempt"
mkdir -p "$topo/2"
printf 'gfx_target_version 90008\n' >"$topo/2/properties"
features
tap_check "deploy: features: a gfx908 beside the gfx1100 under HWS: park=hws" \
	sh -c "[ $rc = 0 ] && grep -qx 'gpreempt.io/park=hws' '$nfd' && grep -qx 'gpreempt.io/active=true' '$nfd'"
echo 2 >"$C/sys/module/amdgpu/parameters/sched_policy"
features
tap_check "deploy: features: amdgpu.sched_policy=2: park=nohws" \
	sh -c "[ $rc = 0 ] && grep -qx 'gpreempt.io/park=nohws' '$nfd'"
rm -rf "$C/sys/module/gpreempt"
features
tap_check "deploy: features: gpreempt not loaded: exit 1, the file removed" \
	sh -c "[ $rc = 1 ] && [ ! -e '$nfd' ]"
mkdir -p "$C/sys/module/gpreempt"
mkdir -p "${nfd%/*}" && echo 'gpreempt.io/active=true' >"$nfd"	# as a run left it
GPREEMPT_ON_STOP=keep node uninstall
tap_check "deploy: uninstall with GPREEMPT_ON_STOP=keep removes the NFD feature file (and nothing else)" \
	sh -c "[ $rc = 0 ] && [ ! -e '$nfd' ] && grep -q 'keeps gpreempt' '$t/out' && [ -d '$C/sys/module/gpreempt' ]"
rm -rf "$C/sys/module/gpreempt" "$topo/2"
echo 0 >"$C/sys/module/amdgpu/parameters/sched_policy"

node bogus
tap_check "deploy: an unknown command: usage, exit 2" sh -c "[ $rc = 2 ] && grep -q usage '$t/out'"
NODE_MODULES=$t/none node install
tap_check "deploy: no kernel headers on the node: exit 1, one line saying which package" \
	sh -c "[ $rc = 1 ] && grep -q 'error: no kernel headers for 6.12.0-test on this node.*install linux-headers-6.12.0-test' '$t/out'"
tap_done
