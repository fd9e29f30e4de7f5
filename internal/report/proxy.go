package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// writeProxy writes the rows whose load went through a proxy in front of the app: who answered
// each failure (the proxy itself or the app), the phases, the proxy's window and the verdict.
func writeProxy(p func(string, ...any), rows []Row) {
	var through []Row
	for _, r := range rows {
		if r.Config.LoadURL != "" {
			through = append(through, r)
		}
	}
	if len(through) == 0 {
		return
	}
	p("\n## Through a proxy\n\n")
	p("The load went to an address in front of the app. A failure is the proxy's own when it answered 5xx without the app's pod header (the app names its pod in its answers); the proxy's window is deletion → the last request it sent to the deleted pod; stale pods are those it still sent to after they were gone; the DNS window is deletion → the first answer of the cluster's DNS without the pod's address (asked by the load pods every 250 ms), with the TTL it gave. Where the proxy names the upstream it chose in a header, every request maps to its pod by the pod's address; where it does not, a failure the app did not answer is matched to a pod by time only, and its attribution says so.\n\n")
	p("%s", proxyTable.markdownHeader())
	for _, r := range through {
		own, app := ProxyClasses(r)
		window, stale, phases, dns := "—", "—", "—", "—"
		if ex := r.Explanation; ex != nil {
			window = durationsCell(ex.Propagation.Proxy)
			stale = fmt.Sprint(ex.Propagation.ProxyStale)
			phases = phaseList(ex.Phases)
			if len(r.DNS) > 0 {
				dns = fmt.Sprintf("%s · TTL %ds", durationsCell(ex.Propagation.DNS), ex.Propagation.DNSTTL)
			}
		}
		if !r.Summary.ProxyTold && r.Summary.Failed > 0 {
			own = "not told (the app named no pod)"
		}
		c := rowCells(r)
		via := r.Config.LoadURL
		if r.Config.LoadHost != "" {
			via += " (Host " + r.Config.LoadHost + ")"
		}
		if h := r.Config.UpstreamHeader; h != "" {
			via += "; upstream named in " + h
		}
		cols := []string{c.Scenario, via, own, app, phases, window, stale, dns, string(r.Verdict.Status)}
		for i := range cols {
			cols[i] = mdEscape(cols[i])
		}
		p("| %s |\n", strings.Join(cols, " | "))
	}
}

// ProxyClasses splits a row's failures by who gave them: the proxy's own answers (ProxyClass)
// and the rest (the app's answers, transport errors), each as "class n, class n" or "0".
func ProxyClasses(r Row) (own, rest string) {
	var o, a []string
	classes := make([]loadgen.Class, 0, len(r.Summary.Failures))
	for c := range r.Summary.Failures {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, c := range classes {
		n := r.Summary.Failures[c]
		if n == 0 {
			continue
		}
		s := fmt.Sprintf("%s %d", c, n)
		if c.IsProxy() {
			o = append(o, s)
		} else {
			a = append(a, s)
		}
	}
	join := func(ss []string) string {
		if len(ss) == 0 {
			return "0"
		}
		return strings.Join(ss, ", ")
	}
	return join(o), join(a)
}

// phaseList is "proxy-propagation 40, sigkill 2" in rule order, or "—".
func phaseList(m map[timeline.Phase]int) string {
	var out []string
	for _, ph := range timeline.Phases {
		if n := m[ph]; n > 0 {
			out = append(out, fmt.Sprintf("%s %d", ph, n))
		}
	}
	if len(out) == 0 {
		return "—"
	}
	return strings.Join(out, ", ")
}
