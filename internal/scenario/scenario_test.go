package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// good is a valid scenario after WithDefaults, for tests to vary.
func good() Scenario {
	return Scenario{
		Name: "prestop-sleep-drain", Why: "test",
		PreStop: PreStopSleep, PreStopSeconds: 5, OnSIGTERM: ShutdownDrain, DrainDelay: 2 * time.Second,
		GraceSeconds: 30, RequestDuration: 100 * time.Millisecond, KeepAlive: true,
		Disruption: RolloutRestart, Expect: Zero(),
	}.WithDefaults()
}

func TestWithDefaults(t *testing.T) {
	s := Scenario{Name: "x"}.WithDefaults()
	if s.PreStop != PreStopNone || s.Count != DefaultCount || s.Replicas != DefaultReplicas ||
		s.Rate != DefaultRate || s.Settle != DefaultSettle {
		t.Errorf("WithDefaults = %+v", s)
	}
	set := Scenario{Name: "x", PreStop: PreStopExec, Count: 1, Replicas: 2, Rate: 50, Settle: time.Second}
	if got := set.WithDefaults(); got.PreStop != PreStopExec || got.Count != 1 || got.Replicas != 2 ||
		got.Rate != 50 || got.Settle != time.Second {
		t.Errorf("WithDefaults changed set fields: %+v", got)
	}
}

func TestValidateAccepts(t *testing.T) {
	for name, mod := range map[string]func(*Scenario){
		"as is":                 func(*Scenario) {},
		"no preStop":            func(s *Scenario) { s.PreStop, s.PreStopSeconds = PreStopNone, 0 },
		"exec preStop":          func(s *Scenario) { s.PreStop = PreStopExec },
		"http preStop":          func(s *Scenario) { s.PreStop, s.PreStopSeconds = PreStopHTTP, 300 },
		"preStop of 1 s":        func(s *Scenario) { s.PreStopSeconds = 1 },
		"exit":                  func(s *Scenario) { s.OnSIGTERM, s.DrainDelay = ShutdownExit, 0 },
		"ignore":                func(s *Scenario) { s.OnSIGTERM, s.DrainDelay = ShutdownIgnore, 0 },
		"grace 0":               func(s *Scenario) { s.GraceSeconds = 0 },
		"grace 600":             func(s *Scenario) { s.GraceSeconds = 600 },
		"instant requests":      func(s *Scenario) { s.RequestDuration = 0 },
		"delete pod":            func(s *Scenario) { s.Disruption = DeletePod },
		"force delete":          func(s *Scenario) { s.Disruption = ForceDelete },
		"scale down 2 replicas": func(s *Scenario) { s.Disruption, s.Replicas = ScaleDown, 2 },
		"one replica":           func(s *Scenario) { s.Replicas, s.Disruption = 1, DeletePod },
		"bounds":                func(s *Scenario) { s.Count, s.Replicas, s.Rate, s.Settle = 20, 10, 2000, 0 },
		"at most":               func(s *Scenario) { s.Expect = AtMost(0.005) },
		"failures":              func(s *Scenario) { s.Expect = Failures() },
		"failures of classes": func(s *Scenario) {
			s.Expect = Failures(loadgen.ClassReset, loadgen.ClassEOF, loadgen.HTTP5xxClass(503))
		},
		"one-char name": func(s *Scenario) { s.Name = "a" },
		"40-char name":  func(s *Scenario) { s.Name = strings.Repeat("a1-", 13) + "z" },
	} {
		t.Run(name, func(t *testing.T) {
			s := good()
			mod(&s)
			if err := s.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Scenario)
		want string // a part of the message that names the field
	}{
		{"empty name", func(s *Scenario) { s.Name = "" }, `name "": want 1-40 lower-case`},
		{"upper case", func(s *Scenario) { s.Name = "Bad" }, `name "Bad"`},
		{"underscore", func(s *Scenario) { s.Name = "a_b" }, `name "a_b"`},
		{"leading dash", func(s *Scenario) { s.Name = "-a" }, `name "-a"`},
		{"trailing dash", func(s *Scenario) { s.Name = "a-" }, `name "a-"`},
		{"41 chars", func(s *Scenario) { s.Name = strings.Repeat("a", 41) }, "name \"" + strings.Repeat("a", 41)},
		{"unknown preStop", func(s *Scenario) { s.PreStop = "sidecar" }, `preStop "sidecar": want none, exec, sleep or http`},
		{"preStop none with seconds", func(s *Scenario) { s.PreStop = PreStopNone }, "preStop none with preStopSeconds 5"},
		{"preStop without seconds", func(s *Scenario) { s.PreStopSeconds = 0 }, "preStop sleep: preStopSeconds 0, want 1 to 300"},
		{"negative preStop", func(s *Scenario) { s.PreStop, s.PreStopSeconds = PreStopExec, -5 }, "preStop exec: preStopSeconds -5"},
		{"long preStop", func(s *Scenario) { s.PreStop, s.PreStopSeconds = PreStopHTTP, 301 }, "preStop http: preStopSeconds 301"},
		{"no SIGTERM mode", func(s *Scenario) { s.OnSIGTERM, s.DrainDelay = "", 0 }, `onSIGTERM "": want exit, drain or ignore`},
		{"unknown SIGTERM mode", func(s *Scenario) { s.OnSIGTERM, s.DrainDelay = "panic", 0 }, `onSIGTERM "panic"`},
		{"negative drain delay", func(s *Scenario) { s.DrainDelay = -time.Second }, "drainDelay -1s: want 0 to 5m"},
		{"long drain delay", func(s *Scenario) { s.DrainDelay = 6 * time.Minute }, "drainDelay 6m0s"},
		{"drain delay without drain", func(s *Scenario) { s.OnSIGTERM = ShutdownExit }, "drainDelay 2s only applies to onSIGTERM drain, not exit"},
		{"negative grace", func(s *Scenario) { s.GraceSeconds = -1 }, "terminationGracePeriodSeconds -1: want 0 to 600"},
		{"long grace", func(s *Scenario) { s.GraceSeconds = 601 }, "terminationGracePeriodSeconds 601"},
		{"negative request duration", func(s *Scenario) { s.RequestDuration = -time.Millisecond }, "requestDuration -1ms: want 0 to 1m"},
		{"long request duration", func(s *Scenario) { s.RequestDuration = 2 * time.Minute }, "requestDuration 2m0s"},
		{"no disruption", func(s *Scenario) { s.Disruption = "" }, `disruption "": want rollout-restart`},
		{"unknown disruption", func(s *Scenario) { s.Disruption = "drain" }, `disruption "drain"`},
		{"negative count", func(s *Scenario) { s.Count = -1 }, "count -1: want 1 to 20"},
		{"big count", func(s *Scenario) { s.Count = 21 }, "count 21"},
		{"negative replicas", func(s *Scenario) { s.Replicas = -1 }, "replicas -1: want 1 to 10"},
		{"many replicas", func(s *Scenario) { s.Replicas = 11 }, "replicas 11"},
		{"scale down 1 replica", func(s *Scenario) { s.Disruption, s.Replicas = ScaleDown, 1 }, "scale-down needs at least 2 replicas, got 1"},
		{"negative rate", func(s *Scenario) { s.Rate = -5 }, "rate -5 req/s: want 1 to 2000"},
		{"high rate", func(s *Scenario) { s.Rate = 2001 }, "rate 2001 req/s"},
		{"negative settle", func(s *Scenario) { s.Settle = -time.Second }, "settle -1s: want 0 to 5m"},
		{"long settle", func(s *Scenario) { s.Settle = time.Hour }, "settle 1h0m0s"},
		{"no expectation", func(s *Scenario) { s.Expect = Outcome{} }, `expect "": want zero-failures, at-most, failures-expected or bounds`},
		{"at most 0", func(s *Scenario) { s.Expect = AtMost(0) }, "expect at-most 0: want a ratio between 0 and 1"},
		{"at most 100%", func(s *Scenario) { s.Expect = AtMost(1) }, "expect at-most 1"},
		{"at most negative", func(s *Scenario) { s.Expect = AtMost(-0.1) }, "expect at-most -0.1"},
		{"failures of ok", func(s *Scenario) { s.Expect = Failures(loadgen.ClassReset, loadgen.ClassOK) }, `expect failures of class "ok": not a failure class`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.mod(&s)
			err := s.Validate()
			if err == nil {
				t.Fatalf("Validate: no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %q, want it to contain %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "scenario "+quote(s.Name)+": ") {
				t.Errorf("Validate: %q does not start by naming the scenario", err)
			}
		})
	}
}

func quote(s string) string { return `"` + s + `"` }

func TestValidateReportsEveryProblem(t *testing.T) {
	s := good()
	s.GraceSeconds, s.Rate, s.Disruption = -1, 0, "nope"
	err := s.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"terminationGracePeriodSeconds -1", "rate 0", `disruption "nope"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %q lacks %q", err, want)
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		s    Scenario
		want string
	}{
		{good(), "prestop-sleep-drain: preStop=sleep:5s sigterm=drain+2s grace=30s req=100ms keepalive=on rollout-restart×3"},
		{Scenario{Name: "naive", OnSIGTERM: ShutdownExit, Disruption: DeletePod, Count: 1}.WithDefaults(),
			"naive: preStop=none sigterm=exit grace=0s keepalive=off delete-pod×1"},
		{Scenario{Name: "hook", PreStop: PreStopExec, PreStopSeconds: 10, OnSIGTERM: ShutdownIgnore, GraceSeconds: 15,
			Disruption: ScaleDown, Count: 2}.WithDefaults(),
			"hook: preStop=exec:10s sigterm=ignore grace=15s keepalive=off scale-down×2"},
		{Scenario{Name: "http", PreStop: PreStopHTTP, PreStopSeconds: 3, OnSIGTERM: ShutdownDrain, GraceSeconds: 5,
			RequestDuration: 2 * time.Second, KeepAlive: true, Disruption: ForceDelete}.WithDefaults(),
			"http: preStop=http:3s sigterm=drain grace=5s req=2s keepalive=on force-delete×3"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("String() = %q\n            want %q", got, tc.want)
		}
	}
}

func TestValidateErrorIsOneLine(t *testing.T) {
	s := Scenario{Name: "Bad Name", PreStop: "later", OnSIGTERM: "panic", GraceSeconds: -1, Disruption: "meteor"}.WithDefaults()
	err := s.Validate()
	if err == nil {
		t.Fatal("an impossible scenario was accepted")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line, got %q", err)
	}
	for _, want := range []string{"name", "preStop", "onSIGTERM", "terminationGracePeriodSeconds", "disruption"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
