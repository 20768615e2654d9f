// SPDX-License-Identifier: GPL-2.0
//
// cri-client - a small CRI client for the containerd test (crictl, cri-tools,
// is not packaged in Debian bookworm or trixie): what the kubelet does for a
// pod with one container, through the CRI gRPC API of Debian's
// golang-github-kubernetes-cri-api-dev (runtime.v1), on a unix socket.
//
//	run NAME [OPTION...] -- CMD [ARG...]
//	      RunPodSandbox (host network, the pod's cgroup parent), then
//	      CreateContainer and StartContainer of one container in it.
//	      Prints "POD CONTAINER MS": the ids and the milliseconds that
//	      CreateContainer + StartContainer took.  When the creation or the
//	      start fails, the pod is removed and the runtime's message is
//	      printed on stderr (exit 1).  Options:
//	        --pod-ann K=V   an annotation on the pod (metadata.annotations)
//	        --ann K=V       an annotation on the container
//	        --cgroup-parent P  the pod's cgroup parent (default
//	                        /kubepods/besteffort/pod<NAME>)
//	        --image REF     (default gp.local/bb:1)
//	        --mount HOST:CTR   a read-only bind mount
//	        --device PATH   a device node, read-write (what a device
//	                        plugin's Allocate gives the kubelet)
//	        --cdi NAME      a CDI device ("amd.com/gpu=0"), in the
//	                        container's CDIDevices (what the kubelet
//	                        passes for a DRA claim or a CDI device plugin)
//	        --user UID      run as UID, restricted as Pod Security's
//	                        "restricted" level asks: no privilege
//	                        escalation, every capability dropped, the
//	                        runtime's default seccomp profile
//	        --uid UID       the pod's UID (default uid-NAME)
//	        --qos CLASS     besteffort (default) or burstable: the pod's
//	                        cgroup parent /kubepods/CLASS/pod<UID>, and
//	                        for burstable a CPU request of 250m (shares)
//	        --log DIR       the container's output, in CRI's log format,
//	                        to DIR/NAME.log
//	        --env K=V       an environment variable
//	rm POD       StopContainer + RemoveContainer of each of its containers
//	             (as the kubelet does), then StopPodSandbox and
//	             RemovePodSandbox
//	pid CTR      the container's process id (ContainerStatus, verbose)
//	state CTR    its state, and its exit code once exited
//	             ("CONTAINER_EXITED 0")
//	ps           the containers: "ID NAME STATE POD", one a line
//	version      the runtime's name and version
//	pause        the sandbox image's entrypoint: waits for SIGTERM or SIGINT
//
// --socket PATH (default /run/containerd/containerd.sock) and --timeout
// (default 120s: TCG guests are slow) come before the command.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, " ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "cri-client: "+format+"\n", a...)
	os.Exit(1)
}

func kv(list []string) map[string]string {
	m := map[string]string{}
	for _, s := range list {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			die("%q: expected KEY=VALUE", s)
		}
		m[k] = v
	}
	return m
}

type client struct {
	rt  cri.RuntimeServiceClient
	ctx context.Context
}

func (c *client) run(args []string) {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var podAnn, ann, mounts, devices, cdi, env multi
	fs.Var(&podAnn, "pod-ann", "an annotation on the pod (K=V)")
	fs.Var(&ann, "ann", "an annotation on the container (K=V)")
	fs.Var(&mounts, "mount", "HOST:CTR, read-only")
	fs.Var(&devices, "device", "a device node")
	fs.Var(&cdi, "cdi", "a CDI device name")
	fs.Var(&env, "env", "an environment variable (K=V)")
	user := fs.Int64("user", -1, "run as this uid, restricted")
	uid := fs.String("uid", "", "the pod's UID")
	qos := fs.String("qos", "besteffort", "besteffort or burstable")
	logDir := fs.String("log", "", "the container's log directory")
	parent := fs.String("cgroup-parent", "", "the pod's cgroup parent")
	image := fs.String("image", "gp.local/bb:1", "the container's image")
	if len(args) < 1 {
		die("run NAME [OPTION...] -- CMD...")
	}
	name := args[0]
	fs.Parse(args[1:])
	cmd := fs.Args()
	if len(cmd) == 0 {
		die("run %s: no command", name)
	}
	if *uid == "" {
		*uid = "uid-" + name
	}
	if *qos != "besteffort" && *qos != "burstable" {
		die("--qos %q: expected besteffort or burstable", *qos)
	}
	if *parent == "" {
		if *uid == "uid-"+name {
			*parent = "/kubepods/" + *qos + "/pod" + name
		} else {
			*parent = "/kubepods/" + *qos + "/pod" + *uid
		}
	}
	node := &cri.NamespaceOption{Network: cri.NamespaceMode_NODE, Pid: cri.NamespaceMode_CONTAINER,
		Ipc: cri.NamespaceMode_POD}
	// no hostname: runc sets none in the node's UTS namespace (host network)
	pcfg := &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: name, Uid: *uid, Namespace: "default"},
		LogDirectory: *logDir,
		Annotations:  kv(podAnn),
		Labels:       map[string]string{"app": name},
		Linux: &cri.LinuxPodSandboxConfig{CgroupParent: *parent,
			SecurityContext: &cri.LinuxSandboxSecurityContext{NamespaceOptions: node}},
	}
	pr, err := c.rt.RunPodSandbox(c.ctx, &cri.RunPodSandboxRequest{Config: pcfg})
	if err != nil {
		die("RunPodSandbox %s: %v", name, err)
	}
	pod := pr.PodSandboxId
	ccfg := &cri.ContainerConfig{
		Metadata:    &cri.ContainerMetadata{Name: name},
		Image:       &cri.ImageSpec{Image: *image},
		Command:     cmd[:1],
		Args:        cmd[1:],
		Annotations: kv(ann),
		Labels:      map[string]string{"app": name},
		Linux: &cri.LinuxContainerConfig{
			SecurityContext: &cri.LinuxContainerSecurityContext{NamespaceOptions: node},
		},
	}
	for _, m := range mounts {
		h, ct, ok := strings.Cut(m, ":")
		if !ok {
			die("--mount %q: expected HOST:CTR", m)
		}
		ccfg.Mounts = append(ccfg.Mounts, &cri.Mount{HostPath: h, ContainerPath: ct, Readonly: true})
	}
	for _, d := range devices {
		ccfg.Devices = append(ccfg.Devices, &cri.Device{HostPath: d, ContainerPath: d, Permissions: "rw"})
	}
	for _, d := range cdi {
		ccfg.CDIDevices = append(ccfg.CDIDevices, &cri.CDIDevice{Name: d})
	}
	if *logDir != "" {
		ccfg.LogPath = name + ".log"
	}
	for k, v := range kv(env) {
		ccfg.Envs = append(ccfg.Envs, &cri.KeyValue{Key: k, Value: v})
	}
	if *qos == "burstable" {
		// the kubelet's shares for a 250m CPU request, no limit
		ccfg.Linux.Resources = &cri.LinuxContainerResources{CpuShares: 256}
	}
	if *user >= 0 {
		sc := ccfg.Linux.SecurityContext
		sc.RunAsUser = &cri.Int64Value{Value: *user}
		sc.NoNewPrivs = true
		sc.Capabilities = &cri.Capability{DropCapabilities: []string{"ALL"}}
		sc.Seccomp = &cri.SecurityProfile{ProfileType: cri.SecurityProfile_RuntimeDefault}
	}
	t0 := time.Now()
	cr, err := c.rt.CreateContainer(c.ctx, &cri.CreateContainerRequest{PodSandboxId: pod,
		Config: ccfg, SandboxConfig: pcfg})
	if err == nil {
		_, err = c.rt.StartContainer(c.ctx, &cri.StartContainerRequest{ContainerId: cr.ContainerId})
	}
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-client: %s: %v\n", name, err)
		c.rm(pod)
		os.Exit(1)
	}
	fmt.Printf("%s %s %.1f\n", pod, cr.ContainerId, ms)
}

func (c *client) rm(pod string) {
	l, err := c.rt.ListContainers(c.ctx, &cri.ListContainersRequest{
		Filter: &cri.ContainerFilter{PodSandboxId: pod}})
	if err != nil {
		die("ListContainers: %v", err)
	}
	for _, ct := range l.Containers {
		if _, err := c.rt.StopContainer(c.ctx, &cri.StopContainerRequest{ContainerId: ct.Id,
			Timeout: 10}); err != nil {
			die("StopContainer %s: %v", ct.Id, err)
		}
		if _, err := c.rt.RemoveContainer(c.ctx, &cri.RemoveContainerRequest{ContainerId: ct.Id}); err != nil {
			die("RemoveContainer %s: %v", ct.Id, err)
		}
	}
	if _, err := c.rt.StopPodSandbox(c.ctx, &cri.StopPodSandboxRequest{PodSandboxId: pod}); err != nil {
		die("StopPodSandbox %s: %v", pod, err)
	}
	if _, err := c.rt.RemovePodSandbox(c.ctx, &cri.RemovePodSandboxRequest{PodSandboxId: pod}); err != nil {
		die("RemovePodSandbox %s: %v", pod, err)
	}
}

func (c *client) pid(id string) {
	s, err := c.rt.ContainerStatus(c.ctx, &cri.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		die("ContainerStatus %s: %v", id, err)
	}
	var info struct {
		Pid int `json:"pid"`
	}
	if err := json.Unmarshal([]byte(s.Info["info"]), &info); err != nil || info.Pid == 0 {
		die("ContainerStatus %s: no pid in its info (%v)", id, err)
	}
	fmt.Println(info.Pid)
}

func (c *client) state(id string) {
	s, err := c.rt.ContainerStatus(c.ctx, &cri.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		die("ContainerStatus %s: %v", id, err)
	}
	if s.Status.State == cri.ContainerState_CONTAINER_EXITED {
		fmt.Println(s.Status.State, s.Status.ExitCode)
	} else {
		fmt.Println(s.Status.State)
	}
}

func (c *client) ps() {
	l, err := c.rt.ListContainers(c.ctx, &cri.ListContainersRequest{})
	if err != nil {
		die("ListContainers: %v", err)
	}
	for _, ct := range l.Containers {
		fmt.Println(ct.Id, ct.Metadata.GetName(), ct.State, ct.PodSandboxId)
	}
}

func pause() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}

func main() {
	socket := flag.String("socket", "/run/containerd/containerd.sock", "the runtime's CRI socket")
	timeout := flag.Duration("timeout", 120*time.Second, "for each command")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		die("a command: run, rm, pid, state, ps, version, pause")
	}
	if args[0] == "pause" {
		pause()
		return
	}
	conn, err := grpc.NewClient("unix://"+*socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		die("%s: %v", *socket, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	c := &client{rt: cri.NewRuntimeServiceClient(conn), ctx: ctx}
	switch {
	case args[0] == "run":
		c.run(args[1:])
	case args[0] == "rm" && len(args) == 2:
		c.rm(args[1])
	case args[0] == "pid" && len(args) == 2:
		c.pid(args[1])
	case args[0] == "state" && len(args) == 2:
		c.state(args[1])
	case args[0] == "ps" && len(args) == 1:
		c.ps()
	case args[0] == "version" && len(args) == 1:
		v, err := c.rt.Version(c.ctx, &cri.VersionRequest{})
		if err != nil {
			die("Version: %v", err)
		}
		fmt.Println(v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion)
	default:
		die("unknown command or arguments: %s", strings.Join(args, " "))
	}
}
