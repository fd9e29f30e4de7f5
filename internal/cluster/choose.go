package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// BuildOffline is what ChooseNodeImage returns when the offline node image is to be used: the
// scripts build it (scripts/node-image.sh, cached), which only bash does. BuildOfflineContainerd2
// is its containerd 2 variant's (scripts/node-image-containerd.sh).
const (
	BuildOffline            = "offline"
	BuildOfflineContainerd2 = knobs.OfflineContainerd2
)

// ChooseNodeImage decides which kind node image make uses, by ROLLCHECK_NODE_IMAGE, and says
// why through logf:
//   - auto (the default): kind's upstream image if the Docker engine has it or can pull it
//     within ROLLCHECK_PULL_TIMEOUT (one try), else the offline one;
//   - upstream: kind's upstream image, pulled if missing; an error when it cannot be;
//   - offline: rollcheck's offline image;
//   - offline-containerd2: its variant with containerd CONTAINERD_VERSION (2.3 or later, which
//     takes lifecycle.stopSignal), never kind's upstream image (v0.30.0's containerd 2.1.4 does not);
//   - an image reference: that image, which the Docker engine must have.
//
// It returns the reference, BuildOffline or BuildOfflineContainerd2. docker runs the docker CLI (run, in production).
func ChooseNodeImage(ctx context.Context, getenv func(string) string, docker func(ctx context.Context, args ...string) (string, error), logf func(string, ...any)) (string, error) {
	if errs := knobs.Check(func(k string) string {
		if k == knobs.EnvNodeImage || k == knobs.EnvPullTimeout {
			return getenv(k)
		}
		return ""
	}, false); len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	want, _ := knobs.Get(getenv, knobs.EnvNodeImage)
	switch want {
	case knobs.SourceOffline:
		logf("node image: offline (%s=offline)", knobs.EnvNodeImage)
		return BuildOffline, nil
	case knobs.OfflineContainerd2:
		logf("node image: the offline one with containerd 2 (%s=%s: a runtime that takes lifecycle.stopSignal)", knobs.EnvNodeImage, want)
		return BuildOfflineContainerd2, nil
	case knobs.SourceUpstream, "auto":
	default:
		if _, err := docker(ctx, "image", "inspect", want); err != nil {
			return "", fmt.Errorf("%s=%s: no such image in the Docker engine", knobs.EnvNodeImage, want)
		}
		logf("node image: %s (%s, %s)", want, knobs.EnvNodeImage, knobs.ImageSource(want))
		return want, nil
	}
	up := kinddefaults.Image
	if _, err := docker(ctx, "image", "inspect", up); err == nil {
		logf("node image: %s (upstream: present locally)", up)
		return up, nil
	}
	v, _ := knobs.Get(getenv, knobs.EnvPullTimeout)
	secs, _ := strconv.Atoi(v)
	what := "one try"
	if want == "auto" {
		what = "one try: auto falls back to the offline image"
	}
	logf("waiting up to %ds for: docker pull %s (%s)", secs, up, what)
	pctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second)
	_, err := docker(pctx, "pull", "-q", up)
	timedOut := pctx.Err() == context.DeadlineExceeded
	cancel()
	if err == nil {
		logf("node image: %s (upstream: pulled)", up)
		return up, nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	why := lastLine(err.Error())
	if timedOut {
		why = fmt.Sprintf("no answer within %ds", secs)
	}
	if want == knobs.SourceUpstream {
		return "", fmt.Errorf("%s=upstream but %s cannot be pulled: %s", knobs.EnvNodeImage, up, why)
	}
	logf("node image: offline (kind's upstream image %s cannot be pulled: %s)", up, why)
	return BuildOffline, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}

// Docker runs the docker CLI: ChooseNodeImage's docker in production.
func Docker(ctx context.Context, args ...string) (string, error) { return run(ctx, "docker", args...) }
