package attack

import (
	"context"
	"fmt"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// WaitServing waits until cfg.Target answers with no failure for a second from each of replicas
// pods (when the app names its pod in cfg.PodHeader; otherwise for two seconds in a row), so
// that a load starts on a programmed path: a new Service answers only once kube-proxy has
// programmed it, a little after its pods are ready. It probes at 20 req/s for a second at a
// time (cfg's Target, Timeout, PodHeader and AllowRemote are used; its rate and duration are
// not), logs through logf (nil: silent), and gives up after a minute, saying what it saw.
// Through a proxy (cfg.Proxy) replicas is a least: which pods answer is the proxy's choice.
// It probes in cfg's Protocol (without keep-alive over HTTP, so that each request may reach
// another pod); over gRPC with cfg's method, message and balancing, and with pick_first, whose
// one connection reaches one pod per probe, the pods are counted over consecutive clean probes.
func WaitServing(ctx context.Context, cfg loadgen.Config, replicas int, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	url, podHeader := cfg.Target, cfg.PodHeader
	if podHeader == "" {
		podHeader = loadgen.DefaultPodHeader
	}
	probe := loadgen.Config{Target: url, Rate: 20, Duration: time.Second, Timeout: cfg.Timeout, PodHeader: podHeader, AllowRemote: cfg.AllowRemote, Headers: cfg.Headers,
		Protocol: cfg.Protocol, GRPCMethod: cfg.GRPCMethod, GRPCMessage: cfg.GRPCMessage, Balancing: cfg.Balancing}
	// One connection per probe: the pods add up over the clean probes in a row.
	accumulate := cfg.Protocol == loadgen.ProtocolGRPC && cfg.Balancing != loadgen.BalancingRoundRobin
	pods := map[string]bool{}
	deadline := time.Now().Add(time.Minute)
	clean := 0
	for {
		a, err := Start(ctx, probe)
		if err != nil {
			return fmt.Errorf("wait serving: %w", err)
		}
		res, err := a.Wait()
		if err != nil {
			return fmt.Errorf("wait serving: %w", err)
		}
		if !accumulate {
			clear(pods)
		}
		for _, q := range res.Requests {
			if q.Pod != "" {
				pods[q.Pod] = true
			}
		}
		ok := res.Totals.Failed == 0 && res.Totals.Requests >= 20
		switch {
		case ok && (len(pods) == replicas || cfg.Proxy && len(pods) >= replicas):
			return nil
		case ok && len(pods) == 0:
			if clean++; clean >= 2 {
				logf("%s answers with no %s header: pod identity is unknown", url, podHeader)
				return nil
			}
		default:
			clean = 0
			if !ok {
				clear(pods)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the app did not answer from all %d replicas on %s within a minute (%d answered): %s", replicas, url, len(pods), res)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait serving: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
