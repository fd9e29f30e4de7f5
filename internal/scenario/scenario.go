package scenario

import (
	"fmt"
	"regexp"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/oneline"
)

// PreStopAction is what the container's preStop hook does.
type PreStopAction string

// PreStop actions.
const (
	PreStopNone  PreStopAction = "none"  // no hook
	PreStopExec  PreStopAction = "exec"  // exec "sleep N" in the container
	PreStopSleep PreStopAction = "sleep" // the native sleep action (GA in Kubernetes 1.34)
	PreStopHTTP  PreStopAction = "http"  // httpGet to the app's /prestop?sleep=Ns
)

// Shutdown is what the app does on SIGTERM (the sample app's --shutdown modes).
type Shutdown string

// Shutdown modes.
const (
	ShutdownExit   Shutdown = "exit"   // stop at once; in-flight requests are dropped
	ShutdownDrain  Shutdown = "drain"  // stop accepting, finish in-flight requests, exit
	ShutdownIgnore Shutdown = "ignore" // keep serving until SIGKILL
)

// DisruptionKind and Outcome are the engine's; the aliases keep the matrix rows short.
type (
	DisruptionKind = check.DisruptionKind
	Outcome        = check.Outcome
	Verdict        = check.Verdict
	Status         = check.Status
)

// Disruption kinds.
const (
	RolloutRestart = check.RolloutRestart
	DeletePod      = check.DeletePod
	ForceDelete    = check.ForceDelete
	ScaleDown      = check.ScaleDown
)

// Expectations and statuses.
const (
	ExpectZero     = check.ExpectZero
	ExpectAtMost   = check.ExpectAtMost
	ExpectFailures = check.ExpectFailures
	Pass           = check.Pass
	Fail           = check.Fail
	HarnessFault   = check.HarnessFault
)

// Outcome constructors.
var (
	Zero     = check.Zero
	AtMost   = check.AtMost
	Failures = check.Failures
)

// Defaults for the fields a Scenario may leave zero.
const (
	DefaultCount    = 3
	DefaultReplicas = 3
	// DefaultRate is far below what the 2-core reference machine holds, so a missed rate
	// points at the harness, not at the app.
	DefaultRate   = 100
	DefaultSettle = 3 * time.Second
)

// Scenario is one row of the conformance table.
type Scenario struct {
	// Name is a short identifier: lower-case letters, digits and dashes (it names namespaces and files).
	Name string `json:"name"`
	// Why explains, from the mechanics, why Expect is the right outcome.
	Why string `json:"why"`

	PreStop        PreStopAction `json:"preStop"`
	PreStopSeconds int           `json:"preStopSeconds,omitempty"`
	OnSIGTERM      Shutdown      `json:"onSIGTERM"`
	// DrainDelay: drain mode keeps serving this long after SIGTERM before it closes the listener.
	DrainDelay      time.Duration `json:"drainDelay,omitempty"`
	GraceSeconds    int64         `json:"terminationGracePeriodSeconds"`
	RequestDuration time.Duration `json:"requestDuration"`
	KeepAlive       bool          `json:"keepAlive"`
	// Method is the load's HTTP method (default GET). With keep-alive on, Go's client silently
	// retries a GET whose reused connection the server closed; a POST is not replayable, so it
	// shows what happens to requests on connections pinned to a dying pod.
	Method string `json:"method"`

	Disruption DisruptionKind `json:"disruption"`
	// Count is how many times the disruption is repeated, each after the rollout settled.
	Count    int `json:"count"`
	Replicas int `json:"replicas"`
	// Rate is the load in requests per second.
	Rate int `json:"rate"`
	// Settle is the load time before the first and after the last disruption.
	Settle time.Duration `json:"settle"`

	Expect Outcome `json:"expect"`
}

// WithDefaults fills the zero fields that have defaults.
func (s Scenario) WithDefaults() Scenario {
	if s.PreStop == "" {
		s.PreStop = PreStopNone
	}
	if s.Method == "" {
		s.Method = "GET"
	}
	if s.Count == 0 {
		s.Count = DefaultCount
	}
	if s.Replicas == 0 {
		s.Replicas = DefaultReplicas
	}
	if s.Rate == 0 {
		s.Rate = DefaultRate
	}
	if s.Settle == 0 {
		s.Settle = DefaultSettle
	}
	return s
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

// Validate checks a Scenario (after WithDefaults) and reports every problem at once, so
// that an impossible row fails before any cluster work.
func (s Scenario) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !nameRE.MatchString(s.Name) {
		bad("name %q: want 1-40 lower-case letters, digits and dashes", s.Name)
	}
	switch s.PreStop {
	case PreStopNone:
		if s.PreStopSeconds != 0 {
			bad("preStop none with preStopSeconds %d", s.PreStopSeconds)
		}
	case PreStopExec, PreStopSleep, PreStopHTTP:
		if s.PreStopSeconds < 1 || s.PreStopSeconds > 300 {
			bad("preStop %s: preStopSeconds %d, want 1 to 300", s.PreStop, s.PreStopSeconds)
		}
	default:
		bad("preStop %q: want none, exec, sleep or http", s.PreStop)
	}
	switch s.OnSIGTERM {
	case ShutdownExit, ShutdownDrain, ShutdownIgnore:
	default:
		bad("onSIGTERM %q: want exit, drain or ignore", s.OnSIGTERM)
	}
	if s.DrainDelay < 0 || s.DrainDelay > 5*time.Minute {
		bad("drainDelay %s: want 0 to 5m", s.DrainDelay)
	}
	if s.DrainDelay > 0 && s.OnSIGTERM != ShutdownDrain {
		bad("drainDelay %s only applies to onSIGTERM drain, not %s", s.DrainDelay, s.OnSIGTERM)
	}
	if s.GraceSeconds < 0 || s.GraceSeconds > 600 {
		bad("terminationGracePeriodSeconds %d: want 0 to 600", s.GraceSeconds)
	}
	if s.RequestDuration < 0 || s.RequestDuration > time.Minute {
		bad("requestDuration %s: want 0 to 1m", s.RequestDuration)
	}
	if s.Method != "GET" && s.Method != "POST" {
		bad("method %q: want GET or POST", s.Method)
	}
	switch s.Disruption {
	case RolloutRestart, DeletePod, ForceDelete, ScaleDown:
	default:
		bad("disruption %q: want rollout-restart, delete-pod, force-delete or scale-down", s.Disruption)
	}
	if s.Count < 1 || s.Count > 20 {
		bad("count %d: want 1 to 20", s.Count)
	}
	if s.Replicas < 1 || s.Replicas > 10 {
		bad("replicas %d: want 1 to 10", s.Replicas)
	}
	if s.Disruption == ScaleDown && s.Replicas < 2 {
		bad("scale-down needs at least 2 replicas, got %d", s.Replicas)
	}
	if s.Rate < 1 || s.Rate > 2000 {
		bad("rate %d req/s: want 1 to 2000", s.Rate)
	}
	if s.Settle < 0 || s.Settle > 5*time.Minute {
		bad("settle %s: want 0 to 5m", s.Settle)
	}
	if err := s.Expect.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("scenario %q: %w", s.Name, oneline.Join(errs))
	}
	return nil
}

// String names the row, e.g. "preStop=sleep:5s sigterm=drain grace=30s keepalive=off rollout-restart×3".
func (s Scenario) String() string {
	pre := string(s.PreStop)
	if s.PreStop != PreStopNone && s.PreStop != "" {
		pre = fmt.Sprintf("%s:%ds", s.PreStop, s.PreStopSeconds)
	}
	sig := string(s.OnSIGTERM)
	if s.DrainDelay > 0 {
		sig += "+" + s.DrainDelay.String()
	}
	ka := "off"
	if s.KeepAlive {
		ka = "on"
	}
	if s.Method != "GET" && s.Method != "" {
		ka += " " + s.Method
	}
	req := ""
	if s.RequestDuration > 0 {
		req = " req=" + s.RequestDuration.String()
	}
	return fmt.Sprintf("%s: preStop=%s sigterm=%s grace=%ds%s keepalive=%s %s×%d",
		s.Name, pre, sig, s.GraceSeconds, req, ka, s.Disruption, s.Count)
}
