// SPDX-License-Identifier: GPL-2.0
//
// nri-runtime - the runtime side of NRI v2 for tests: the NRI project's own
// pkg/adaptation (what containerd 1.7 and 2.x link), driven by commands on
// stdin, one result line per command on stdout:
//
//	run ID CGROUPSPATH PID [PRIO [pod]]
//	                               CreateContainer, then StartContainer, in
//	                               a pod of its own (PRIO: the
//	                               gpreempt.io/priority value, on the
//	                               container, or with "pod" on the pod)
//	stop ID                        StopContainer, then RemoveContainer
//
// Results: "N ok" or "N error: [CreateContainer: |StartContainer: ]TEXT" (N
// counts the commands from 1).  Every
// plugin (re)connection is synchronized with the running containers and
// prints "sync CONTAINERS".  Each container is in a pod of its own.  Plugins connect to --socket.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"

	nri "github.com/containerd/nri/pkg/adaptation"
)

var (
	mu   sync.Mutex
	out  = bufio.NewWriter(os.Stdout)
	pods = map[string]*nri.PodSandbox{}
	ctrs = map[string]*nri.Container{}
)

func say(format string, a ...interface{}) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(out, format+"\n", a...)
	out.Flush()
}

func syncFn(ctx context.Context, cb nri.SyncCB) error {
	mu.Lock()
	list := []*nri.Container{}
	plist := []*nri.PodSandbox{}
	for id, c := range ctrs {
		list = append(list, c)
		plist = append(plist, pods[id])
	}
	mu.Unlock()
	_, err := cb(ctx, plist, list)
	say("sync %d", len(list))
	return err
}

func updateFn(context.Context, []*nri.ContainerUpdate) ([]*nri.ContainerUpdate, error) {
	return nil, nil
}

func main() {
	socket := flag.String("socket", "", "the NRI socket plugins connect to")
	dir := flag.String("plugin-dir", "", "an empty directory: no pre-installed plugins")
	flag.Parse()
	r, err := nri.New("nri-runtime", "test", syncFn, updateFn, nri.WithSocketPath(*socket),
		nri.WithPluginPath(*dir), nri.WithPluginConfigPath(*dir))
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Start(); err != nil {
		log.Fatal(err)
	}
	defer r.Stop()
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	for n := 1; in.Scan(); n++ {
		f := strings.Fields(in.Text())
		err = nil
		switch {
		case len(f) >= 4 && len(f) <= 6 && f[0] == "run":
			pid, _ := strconv.Atoi(f[3])
			pod := &nri.PodSandbox{Id: "pod-" + f[1], Name: "pod-" + f[1], Namespace: "default",
				Uid: "u-" + f[1], Annotations: map[string]string{}}
			c := &nri.Container{Id: f[1], PodSandboxId: pod.Id, Name: "c-" + f[1],
				State: nri.ContainerState_CONTAINER_CREATED, Pid: uint32(pid),
				Annotations: map[string]string{},
				Linux:       &nri.LinuxContainer{CgroupsPath: f[2]}}
			if len(f) == 6 && f[5] == "pod" {
				pod.Annotations["gpreempt.io/priority"] = f[4]
			} else if len(f) >= 5 {
				c.Annotations["gpreempt.io/priority"] = f[4]
			}
			_, err = r.CreateContainer(ctx, &nri.CreateContainerRequest{Pod: pod, Container: c})
			if err != nil {
				err = fmt.Errorf("CreateContainer: %w", err)
			} else if err = r.StartContainer(ctx, &nri.StateChangeEvent{Pod: pod, Container: c}); err != nil {
				err = fmt.Errorf("StartContainer: %w", err)
			}
			if err == nil {
				c.State = nri.ContainerState_CONTAINER_RUNNING
				mu.Lock()
				ctrs[c.Id] = c
				pods[c.Id] = pod
				mu.Unlock()
			}
		case len(f) == 2 && f[0] == "stop":
			mu.Lock()
			c, pod := ctrs[f[1]], pods[f[1]]
			delete(ctrs, f[1])
			delete(pods, f[1])
			mu.Unlock()
			if c == nil {
				err = fmt.Errorf("no container %s", f[1])
				break
			}
			c.State = nri.ContainerState_CONTAINER_STOPPED
			_, err = r.StopContainer(ctx, &nri.StopContainerRequest{Pod: pod, Container: c})
			if err == nil {
				err = r.RemoveContainer(ctx, &nri.StateChangeEvent{Pod: pod, Container: c})
			}
		default:
			err = fmt.Errorf("unknown command %q", in.Text())
		}
		if err != nil {
			say("%d error: %s", n, strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			say("%d ok", n)
		}
	}
}
