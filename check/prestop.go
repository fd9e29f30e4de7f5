package check

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PreStop is a container's preStop hook: the one a Variant gives the app's container, or the
// one a row ran with (Applied.PreStop). In a Variant set exactly one of None, Sleep, Exec and
// HTTPGet; a row read from the user's own manifests may also hold TCPSocket.
type PreStop struct {
	// None is no preStop hook (in a Variant: remove any).
	None bool `json:"none,omitempty"`
	// Sleep is Kubernetes' native sleep action (GA in 1.34): no shell or sleep binary needed
	// in the image. Whole seconds.
	Sleep time.Duration `json:"sleep,omitempty"`
	// Exec runs this command in the container.
	Exec []string `json:"exec,omitempty"`
	// HTTPGet is a path the kubelet GETs on the app's port.
	HTTPGet string `json:"httpGet,omitempty"`
	// TCPSocket is a deprecated tcpSocket hook found in a user's manifest (the kubelet only
	// logs it); a Variant cannot set it.
	TCPSocket bool `json:"tcpSocket,omitempty"`
}

// NativeSleep is the preStop a tune probe or a recommendation sets for d: no hook for 0, else
// Kubernetes' native sleep action (whole seconds).
func NativeSleep(d time.Duration) PreStop {
	if d == 0 {
		return PreStop{None: true}
	}
	return PreStop{Sleep: d}
}

// String is the short form the reports show: "none", "sleep:5s", "exec:<command>",
// "httpGet:<path>" or "tcpSocket".
func (ps PreStop) String() string {
	switch {
	case ps.Sleep != 0:
		return fmt.Sprintf("sleep:%ds", int64(ps.Sleep/time.Second))
	case ps.Exec != nil:
		return "exec:" + strings.Join(ps.Exec, " ")
	case ps.HTTPGet != "":
		return "httpGet:" + ps.HTTPGet
	case ps.TCPSocket:
		return "tcpSocket"
	}
	return "none"
}

// Duration is how long the hook holds the container before SIGTERM, when that can be known
// without running it: none is 0; a native sleep its length; an exec whose command is a sleep
// ("sleep 5", "/bin/sleep 1.5", `sh -c "sleep 5"`, a multi-call binary's applet such as
// "busybox sleep 5" or the sample app's "/app sleep 5s") and an httpGet with a ?sleep=<duration>
// query (the sample app's) the length they name. Anything else: false. It is the one reading of
// a preStop's length: check, init and audit all ask it.
func (ps PreStop) Duration() (time.Duration, bool) {
	switch {
	case ps.Sleep != 0:
		return ps.Sleep, true
	case ps.Exec != nil:
		return execSleep(ps.Exec)
	case ps.HTTPGet != "":
		if _, q, ok := strings.Cut(ps.HTTPGet, "?"); ok {
			if v, err := url.ParseQuery(q); err == nil && v.Get("sleep") != "" {
				if d, err := time.ParseDuration(v.Get("sleep")); err == nil && d >= 0 {
					return d, true
				}
			}
		}
		return 0, false
	case ps.TCPSocket:
		return 0, false
	}
	return 0, true
}

// execSleep reads `sleep N` (N seconds, or a duration: 5s), also as the one command of a shell's
// -c argument and as a multi-call binary's applet (`busybox sleep 5`, `/app sleep 5s`).
func execSleep(cmd []string) (time.Duration, bool) {
	shell := func(s string) bool { b := path.Base(s); return b == "sh" || b == "bash" || b == "ash" || b == "dash" }
	if len(cmd) == 3 && shell(cmd[0]) && cmd[1] == "-c" {
		cmd = strings.Fields(cmd[2])
		if len(cmd) > 0 && cmd[0] == "exec" {
			cmd = cmd[1:]
		}
	}
	if len(cmd) == 3 && cmd[1] == "sleep" && !shell(cmd[0]) {
		cmd = cmd[1:]
	}
	if len(cmd) != 2 || path.Base(cmd[0]) != "sleep" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(cmd[1], 64); err == nil {
		if secs >= 0 && secs < 1e6 { // NaN and ±Inf fail both
			return time.Duration(secs * float64(time.Second)), true
		}
		return 0, false
	}
	if d, err := time.ParseDuration(cmd[1]); err == nil && d >= 0 {
		return d, true
	}
	return 0, false
}

// preStopOf is the typed form of a container's preStop hook.
func preStopOf(c *corev1.Container) PreStop {
	if c == nil || c.Lifecycle == nil || c.Lifecycle.PreStop == nil {
		return PreStop{None: true}
	}
	switch h := c.Lifecycle.PreStop; {
	case h.Sleep != nil:
		return PreStop{Sleep: time.Duration(h.Sleep.Seconds) * time.Second}
	case h.Exec != nil:
		return PreStop{Exec: slices.Clone(h.Exec.Command)}
	case h.HTTPGet != nil:
		return PreStop{HTTPGet: h.HTTPGet.Path}
	case h.TCPSocket != nil:
		return PreStop{TCPSocket: true}
	}
	return PreStop{None: true}
}

func (ps *PreStop) check() []error {
	if ps == nil {
		return nil
	}
	n := 0
	var errs []error
	if ps.None {
		n++
	}
	if ps.Sleep != 0 {
		n++
		if ps.Sleep < time.Second || ps.Sleep > 5*time.Minute || ps.Sleep%time.Second != 0 {
			errs = append(errs, fmt.Errorf("preStop sleep %s: want whole seconds from 1s to 5m", ps.Sleep))
		}
	}
	if ps.Exec != nil {
		n++
		if len(ps.Exec) == 0 || ps.Exec[0] == "" {
			errs = append(errs, errors.New("preStop exec: empty command"))
		}
	}
	if ps.HTTPGet != "" {
		n++
		if !strings.HasPrefix(ps.HTTPGet, "/") {
			errs = append(errs, fmt.Errorf("preStop httpGet %q: the path must start with /", ps.HTTPGet))
		}
	}
	if ps.TCPSocket {
		errs = append(errs, errors.New("preStop tcpSocket: a Variant cannot set it (deprecated; the kubelet ignores it)"))
	}
	if n != 1 {
		errs = append(errs, fmt.Errorf("preStop: set exactly one of none, sleep, exec and httpGet (%d set)", n))
	}
	return errs
}

// handler is the hook a PreStop asks for, nil for None. An httpGet goes to the app's port in
// the scheme the port speaks: HTTPS when the load's protocol says the app serves TLS there
// (loadgen.ProtocolHTTP2); the kubelet does not verify the certificate.
func (ps *PreStop) handler(port int32, scheme corev1.URIScheme) *corev1.LifecycleHandler {
	switch {
	case ps.Sleep != 0:
		return &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: int64(ps.Sleep / time.Second)}}
	case ps.Exec != nil:
		return &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: slices.Clone(ps.Exec)}}
	case ps.HTTPGet != "":
		return &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: ps.HTTPGet, Port: intstr.FromInt32(port), Scheme: scheme}}
	}
	return nil
}
