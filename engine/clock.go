package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/check"
)

// loadClockPort is the port on which a load pod answers GET /clock (rollcheck-load --clock-port).
const loadClockPort = 8089

// clockSamples is how many times measureClock reads a pod's clock; the fastest round trip wins.
const clockSamples = 5

// measureClock reads the load pod's clock through the API server's pod proxy clockSamples times
// and keeps the sample with the shortest round trip, as NTP does: the pod read its clock
// somewhere within that round trip, so its offset from the midpoint is known within half of it.
// A clock that cannot be read is recorded with its error, never a failed row: on kind the
// offset is zero by construction, and elsewhere the times are then taken as they are.
func measureClock(ctx context.Context, cs kubernetes.Interface, ns, pod string) check.LoadClock {
	lc := check.LoadClock{Pod: pod}
	best := time.Duration(-1)
	var lastErr error
	for range clockSamples {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		t0 := time.Now()
		b, err := cs.CoreV1().Pods(ns).ProxyGet("http", pod, strconv.Itoa(loadClockPort), "/clock", nil).DoRaw(rctx)
		t1 := time.Now()
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
		if err != nil {
			lastErr = fmt.Errorf("clock answer %.40q: %w", b, err)
			continue
		}
		lc.Samples++
		if rtt := t1.Sub(t0); best < 0 || rtt < best {
			best = rtt
			lc.Offset, lc.Uncertainty = at.Sub(t0.Add(rtt/2)), rtt/2
		}
	}
	if lc.Samples == 0 && lastErr != nil {
		lc.Error = lastErr.Error()
	}
	return lc
}
