package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// The node image choice make e2e, make check and make cluster take, with a fake docker CLI:
// local images are in local, a pull succeeds when pullable.
func TestChooseNodeImage(t *testing.T) {
	cases := []struct {
		name, want string
		local      []string
		pullable   bool
		ref, wrong string // the reference returned; a problem it must name
		says       string // in the log
	}{
		{name: "auto, upstream present locally", want: "auto", local: []string{kinddefaults.Image}, ref: kinddefaults.Image, says: "upstream: present locally"},
		{name: "auto, upstream pullable", want: "auto", pullable: true, ref: kinddefaults.Image, says: "upstream: pulled"},
		{name: "auto, no registry: offline, says why", want: "auto", ref: BuildOffline, says: "cannot be pulled: docker pull: exit status 1: Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host"},
		{name: "default is auto", ref: BuildOffline, says: "offline (kind's upstream image"},
		{name: "forced offline", want: "offline", pullable: true, ref: BuildOffline, says: "ROLLCHECK_NODE_IMAGE=offline"},
		{name: "forced offline-containerd2: built, never upstream", want: "offline-containerd2", local: []string{kinddefaults.Image}, pullable: true, ref: BuildOfflineContainerd2, says: "ROLLCHECK_NODE_IMAGE=offline-containerd2"},
		{name: "forced upstream, no registry: error", want: "upstream", wrong: "ROLLCHECK_NODE_IMAGE=upstream but " + kinddefaults.Image + " cannot be pulled"},
		{name: "explicit missing ref: error", want: "example/none:v1", wrong: "no such image"},
		{name: "explicit offline ref", want: "rollcheck/kind-node:v9", local: []string{"rollcheck/kind-node:v9"}, ref: "rollcheck/kind-node:v9", says: "offline"},
		{name: "bad value: one-line error", want: "bogus", wrong: "want auto, upstream, offline, offline-containerd2 or an image reference"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran []string
			docker := func(ctx context.Context, args ...string) (string, error) {
				ran = append(ran, strings.Join(args, " "))
				switch {
				case args[0] == "image" && args[1] == "inspect":
					for _, l := range c.local {
						if l == args[2] {
							return "[]", nil
						}
					}
					return "", errors.New("docker image inspect: exit status 1: Error: No such image")
				case args[0] == "pull" && c.pullable:
					return "", nil
				case args[0] == "pull":
					return "", errors.New("docker pull: exit status 1: Error response from daemon: Get \"https://registry-1.docker.io/v2/\": dial tcp: lookup registry-1.docker.io: no such host")
				}
				return "", fmt.Errorf("unexpected docker %v", args)
			}
			var log strings.Builder
			env := map[string]string{knobs.EnvNodeImage: c.want}
			ref, err := ChooseNodeImage(context.Background(), func(k string) string { return env[k] }, docker,
				func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) })
			if c.wrong != "" {
				if err == nil || !strings.Contains(err.Error(), c.wrong) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ref %q, error %v; want one line containing %q", ref, err, c.wrong)
				}
				return
			}
			if err != nil || ref != c.ref || !strings.Contains(log.String(), c.says) {
				t.Fatalf("ref %q, error %v, log %q; want %q and a log saying %q (docker ran %q)", ref, err, log.String(), c.ref, c.says, ran)
			}
		})
	}
}

// A pull that hangs is stopped at ROLLCHECK_PULL_TIMEOUT, and auto falls back to the offline image.
func TestChooseNodeImagePullTimeout(t *testing.T) {
	docker := func(ctx context.Context, args ...string) (string, error) {
		if args[0] == "pull" {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return "", errors.New("no such image")
	}
	env := map[string]string{knobs.EnvPullTimeout: "1"}
	var log strings.Builder
	ref, err := ChooseNodeImage(context.Background(), func(k string) string { return env[k] }, docker,
		func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) })
	if err != nil || ref != BuildOffline || !strings.Contains(log.String(), "waiting up to 1s for: docker pull") || !strings.Contains(log.String(), "no answer within 1s") {
		t.Fatalf("ref %q, error %v, log %q", ref, err, log.String())
	}
}
