// SPDX-License-Identifier: GPL-2.0
//
// gpreempt-nri - an NRI v2 plugin (containerd 1.7 and 2.x, CRI-O 1.26+):
// a container's gpreempt.io/priority annotation becomes a cgroup rule on the
// container's cgroup before its process runs, and goes when it stops.
//
// The rule logic is gpreemptctl hook's, not a copy of it: every event is one
// run of "gpreemptctl hook nri" with an NRI v0.1 request on stdin (the
// container's id, pid, cgroupsPath and annotations) and its result on
// stdout, so the annotation's grammar, the administrator's cap
// (/etc/gpreempt.conf), the records in /run/gpreempt/containers and the
// BPF map writes are the same as with podman, CRI-O's hooks and NRI v0.1.
//
// The value is the container's gpreempt.io/priority annotation, else its
// pod's (a Kubernetes pod's metadata.annotations).
//
//	CreateContainer    state "check": an invalid value, or a bad
//	                   "container" line, fails the creation; the runtime
//	                   shows the hook's one line to the user
//	StartContainer     state "create": the runtime calls it after the
//	                   container's cgroup and process exist, before the
//	                   process runs its command
//	StopContainer,
//	RemoveContainer    state "delete": the rule and the record go
//	Synchronize        on every (re)connection: "create" for every running
//	                   annotated container, then "gpreemptctl hook resync"
//	                   (records of gone cgroups removed, rules that no
//	                   record names removed)
//
// Exit: 0 when the runtime closed the connection on shutdown, 1 on errors.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

const annotation = "gpreempt.io/priority"

type plugin struct {
	ctl     string
	hookArg []string
	stub    stub.Stub
}

type v01Spec struct {
	CgroupsPath string            `json:"cgroupsPath,omitempty"`
	Annotations map[string]string `json:"annotations"`
}

type v01Request struct {
	Version   string  `json:"version"`
	State     string  `json:"state"`
	ID        string  `json:"id"`
	SandboxID string  `json:"sandboxID"`
	Pid       uint32  `json:"pid,omitempty"`
	Spec      v01Spec `json:"spec"`
}

type v01Result struct {
	Error    string            `json:"error"`
	Metadata map[string]string `json:"metadata"`
}

// hook runs "gpreemptctl hook nri" for one container; a non-empty error in
// its result is returned as the error (the runtime's message to the user).
func (p *plugin) hook(state string, pod *api.PodSandbox, ctr *api.Container) error {
	ann := map[string]string{}
	if v, ok := value(pod, ctr); ok {
		ann[annotation] = v
	}
	req := v01Request{Version: "0.1", State: state, ID: ctr.GetId(),
		SandboxID: pod.GetId(), Pid: ctr.GetPid(), Spec: v01Spec{Annotations: ann}}
	if l := ctr.GetLinux(); l != nil {
		req.Spec.CgroupsPath = l.GetCgroupsPath()
	}
	if state == "delete" {
		// the record names the rule: no pid, path or annotation needed
		req.Pid = 0
		req.Spec = v01Spec{Annotations: map[string]string{}}
	}
	in, err := json.Marshal(&req)
	if err != nil {
		return err
	}
	args := append(append([]string{"hook"}, p.hookArg...), "nri")
	cmd := exec.Command(p.ctl, args...)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	t0 := time.Now()
	runErr := cmd.Run()
	var res v01Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return fmt.Errorf("gpreempt: %s %s: no result from %s (%v): %s", state, ctr.GetId(),
			p.ctl, runErr, strings.TrimSpace(stderr.String()))
	}
	if res.Error != "" {
		return fmt.Errorf("gpreempt: container %s: %s", ctr.GetName(), res.Error)
	}
	if res.Metadata["gpreempt.io/cgroup"] != "" {
		log.Printf("container %.12s (%s): priority %s on %s, in %.2f ms", ctr.GetId(),
			ctr.GetName(), res.Metadata["gpreempt.io/priority"],
			res.Metadata["gpreempt.io/cgroup"], float64(time.Since(t0).Microseconds())/1e3)
	}
	return nil
}

// value is the container's annotation, else its pod's: Kubernetes puts a
// pod YAML's metadata.annotations on the pod sandbox, and containerd copies
// them into the container's OCI annotations only when the runtime's
// pod_annotations lists them.
func value(pod *api.PodSandbox, ctr *api.Container) (string, bool) {
	if v, ok := ctr.GetAnnotations()[annotation]; ok {
		return v, true
	}
	v, ok := pod.GetAnnotations()[annotation]
	return v, ok
}

func annotated(pod *api.PodSandbox, ctr *api.Container) bool {
	_, ok := value(pod, ctr)
	return ok
}

func (p *plugin) Configure(_ context.Context, _, runtime, version string) (stub.EventMask, error) {
	log.Printf("connected to %s %s", runtime, version)
	return api.MustParseEventMask("CreateContainer,StartContainer,StopContainer,RemoveContainer"), nil
}

func (p *plugin) Synchronize(_ context.Context, pods []*api.PodSandbox, ctrs []*api.Container) ([]*api.ContainerUpdate, error) {
	byID := map[string]*api.PodSandbox{}
	for _, pod := range pods {
		byID[pod.GetId()] = pod
	}
	n := 0
	for _, ctr := range ctrs {
		if !annotated(byID[ctr.GetPodSandboxId()], ctr) || ctr.GetState() != api.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if err := p.hook("create", byID[ctr.GetPodSandboxId()], ctr); err != nil {
			log.Printf("synchronize: %v", err)
			continue
		}
		n++
	}
	out, err := exec.Command(p.ctl, append(append([]string{"hook"}, p.hookArg...), "resync")...).CombinedOutput()
	log.Printf("synchronized %d of %d containers; hook resync: %s%v", n, len(ctrs),
		strings.TrimSpace(string(out)), map[bool]string{true: "", false: fmt.Sprintf(" (%v)", err)}[err == nil])
	return nil, nil
}

func (p *plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	if !annotated(pod, ctr) {
		return nil, nil, nil
	}
	return nil, nil, p.hook("check", pod, ctr)
}

func (p *plugin) StartContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	if !annotated(pod, ctr) {
		return nil
	}
	return p.hook("create", pod, ctr)
}

func (p *plugin) StopContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) ([]*api.ContainerUpdate, error) {
	if !annotated(pod, ctr) {
		return nil, nil
	}
	if err := p.hook("delete", pod, ctr); err != nil {
		log.Printf("stop: %v", err)
	}
	return nil, nil
}

func (p *plugin) RemoveContainer(_ context.Context, pod *api.PodSandbox, ctr *api.Container) error {
	if !annotated(pod, ctr) {
		return nil
	}
	if err := p.hook("delete", pod, ctr); err != nil {
		log.Printf("remove: %v", err)
	}
	return nil
}

func (p *plugin) Shutdown(context.Context) {
	log.Printf("the runtime is shutting down")
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, " ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var hookArg multi
	name := flag.String("name", "gpreempt", "plugin name")
	idx := flag.String("idx", "50", "plugin index (two digits: its place among the plugins)")
	socket := flag.String("socket", "/var/run/nri/nri.sock", "the runtime's NRI socket")
	ctl := flag.String("gpreemptctl", "/usr/local/sbin/gpreemptctl", "the gpreemptctl that sets the rules")
	flag.Var(&hookArg, "hook-arg", "an option for gpreemptctl hook (repeat: --hook-arg --config --hook-arg FILE)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("gpreempt-nri: ")
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat(*ctl); err != nil {
		log.Fatalf("%v (set --gpreemptctl)", err)
	}
	p := &plugin{ctl: *ctl, hookArg: hookArg}
	s, err := stub.New(p, stub.WithPluginName(*name), stub.WithPluginIdx(*idx),
		stub.WithSocketPath(*socket), stub.WithOnClose(func() {
			log.Printf("the runtime closed the connection")
			os.Exit(0)
		}))
	if err != nil {
		log.Fatalf("cannot create the plugin: %v", err)
	}
	p.stub = s
	if err := s.Run(context.Background()); err != nil {
		log.Fatalf("%s: %v", *socket, err)
	}
}
