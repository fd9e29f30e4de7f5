package attribute

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// lastSent names, for each request, the pod it went to as far as the ledger says: the pod that
// answered (its pod header) or, through a proxy that names its upstream, the pod whose address
// it named (the last address, when a proxy tried several). It sets each Life's LastSent, and
// LastAnswered from the requests answered.
//
// direct reports whether any upstream the proxy named is a pod's address: it sends to the pods
// itself, not through a Service's virtual IP.
func lastSent(reqs []loadgen.Request, lives []Life) (named []string, direct bool) {
	byIP := map[string][]int{}
	for i := range lives {
		if lives[i].IP != "" {
			byIP[lives[i].IP] = append(byIP[lives[i].IP], i)
		}
	}
	byPod := map[string]int{}
	for i := range lives {
		byPod[lives[i].Pod] = i
	}
	named = make([]string, len(reqs))
	for i := range reqs {
		q := &reqs[i]
		pod := q.Pod
		if q.Upstream != "" {
			if up := podAt(lives, byIP[upstreamIP(q.Upstream)], q.Timestamp); up != "" {
				direct = true
				if pod == "" {
					pod = up
				}
			}
		}
		// A client that balances itself names the pod address each RPC went to.
		if pod == "" && q.Peer != "" {
			pod = podAt(lives, byIP[upstreamIP(q.Peer)], q.Timestamp)
		}
		named[i] = pod
		if j, ok := byPod[pod]; ok && pod != "" {
			if q.Timestamp.After(lives[j].LastSent) {
				lives[j].LastSent = q.Timestamp
			}
			if q.OK() && q.Timestamp.After(lives[j].LastAnswered) {
				lives[j].LastAnswered = q.Timestamp
			}
		}
	}
	return named, direct
}

// podAt picks, among the lives with one address, the pod that had it at t: a later pod may get
// a gone pod's address.
func podAt(lives []Life, idx []int, t time.Time) string {
	best := ""
	for _, i := range idx {
		l := &lives[i]
		if !l.Created.IsZero() && l.Created.After(t.Add(Tolerance)) {
			continue // created after the request: not the pod it went to
		}
		if best == "" || l.Gone.IsZero() || !l.Gone.Before(t) {
			best = l.Pod
		}
	}
	return best
}

// upstreamIP is the address of the last upstream a proxy names ("10.244.0.5:8080", nginx's
// "10.244.0.5:8080, 10.244.0.7:8080" after a retry, "[fd00::5]:8080").
func upstreamIP(up string) string {
	if i := strings.LastIndex(up, ","); i >= 0 {
		up = up[i+1:]
	}
	up = strings.TrimSpace(up)
	if h, _, err := net.SplitHostPort(up); err == nil {
		return h
	}
	return up
}

// isAddress reports whether a named upstream is an address a request was sent to (not empty,
// "-", HAProxy's "<NOSRV>", nginx's upstream group name).
func isAddress(up string) bool {
	return net.ParseIP(upstreamIP(up)) != nil
}

// proxyPropagation is the proxy-propagation rule for one pod: through a proxy, a request sent
// after the pod stopped accepting (its listener's line or exit; its deletion when neither is
// known) that the proxy sent to it (it named the pod), or that named no pod and was sent while
// the pod, no longer accepting, was still in the proxy's list: until the last request the
// proxy sent to it, or the pod's removal plus the programming lag when nothing named it.
func proxyPropagation(l *Life, named string, t0 time.Time, lag time.Duration) (match, bool) {
	if l.Deleting.IsZero() {
		return match{}, false
	}
	from, what := l.notAccepting(), "stopped accepting"
	if from.IsZero() {
		from, what = l.Deleting, "was deleted"
	}
	if t0.Before(from.Add(-Tolerance)) {
		return match{}, false
	}
	if named == l.Pod {
		return match{pod: l.Pod, dist: absDur(t0.Sub(from)), why: fmt.Sprintf("the proxy sent it to %s (named) %s after %s %s (%s)",
			l.Pod, t0.Sub(from).Round(time.Millisecond), l.Pod, what, clock(from))}, true
	}
	until, how := l.LastSent, "the last request the proxy sent to it"
	if until.IsZero() || until.Before(from) {
		until, how = l.Gone, "its removal + the programming lag"
		if until.IsZero() {
			until = l.Routed
		}
		if until.IsZero() {
			return match{}, false
		}
		until = until.Add(lag)
	}
	if t0.After(until.Add(Tolerance)) {
		return match{}, false
	}
	return match{pod: l.Pod, dist: absDur(t0.Sub(from)), why: fmt.Sprintf("sent while %s %s (%s) and was still in the proxy's list (until %s, %s); the answer named no pod, so the pod is the nearest in time",
		l.Pod, what, clock(from), clock(until), how)}, true
}
