package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// Each claim is measured over the rows that can show it, held or not, and said not measured
// when no row can.
func TestLifecycle(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	row := func(name string, d check.DisruptionKind, pre time.Duration, grace int64, ts ...check.Termination) Row {
		ps := check.PreStop{None: true}
		if pre > 0 {
			ps = check.NativeSleep(pre)
		}
		return Row{Config: check.Applied{Name: name, PreStop: ps, GraceSeconds: grace, Disruption: d, Count: 1}, Times: check.NewTimes(ts, nil)}
	}
	rows := []Row{
		row("past", check.DeletePod, 10*s, 4, check.Termination{Pod: "a", SIGTERM: 4100 * ms, Exit: 6800 * ms, How: "killed"}),
		row("slow", check.DeletePod, 2*s, 3, check.Termination{Pod: "b", SIGTERM: 2 * s, Exit: 4500 * ms, How: "killed", FinalPhase: "Failed",
			Replacement: "b2", ReplacementCreated: 50 * ms, ReplacementReady: 2 * s, Overlap: 2500 * ms}),
		row("forced", check.ForceDelete, 0, 30, check.Termination{Pod: "c", Exit: 2 * s, Gone: 10 * ms}),
	}
	shell := row("pid1-shell", check.RolloutRestart, 2*s, 10, check.Termination{Pod: "d", Exit: 10300 * ms, How: "killed"})
	shell.Config.OnSIGTERM = "drain@shell"
	tini := row("pid1-tini", check.RolloutRestart, 2*s, 10, check.Termination{Pod: "e", SIGTERM: 2 * s, Exit: 2010 * ms, How: "own"})
	tini.Config.OnSIGTERM = "drain@tini"
	quit := row("stopsignal-image", check.RolloutRestart, 5*s, 15, check.Termination{Pod: "f", SIGTERM: 5 * s, Exit: 5300 * ms, How: "own"})
	quit.Config.OnSIGTERM = "drain/SIGQUIT@stopsignal"
	term := row("stopsignal-missing", check.RolloutRestart, 5*s, 15, check.Termination{Pod: "g", Exit: 5400 * ms, ExitUncertainty: s, How: "own"})
	term.Config.OnSIGTERM = "drain/SIGQUIT"
	rows = append(rows, shell, tini, quit, term)
	fs := Lifecycle(rows)
	by := map[string]Finding{}
	for _, f := range fs {
		by[strings.Fields(f.Claim)[0]+" "+strings.Fields(f.Claim)[1]+" "+strings.Fields(f.Claim)[2]] = f
	}
	want := map[string]bool{
		"A preStop hook": true, "A container still": true, "A forced delete": true, "The ReplicaSet creates": true,
		"The stop signal": true, "The kubelet moves": true, "The container runtime": true,
	}
	for k, h := range want {
		f, ok := by[k]
		if n := map[string]int{"The stop signal": 2, "A container still": 2, "The container runtime": 2}[k]; !ok || f.Held == nil || *f.Held != h || f.N != max(n, 1) {
			t.Errorf("%s: %+v", k, f)
		}
	}
	// A pod killed 8 s after a 4 s grace period: the past-grace claim does not hold.
	rows[0] = row("past", check.DeletePod, 10*s, 4, check.Termination{Pod: "a", SIGTERM: 4 * s, Exit: 12 * s, How: "killed"})
	if f := Lifecycle(rows)[0]; f.Held == nil || *f.Held {
		t.Errorf("late kill: %+v", f)
	}
	// Without rows, every claim is not measured, and says so.
	for _, f := range Lifecycle(nil) {
		if f.Held != nil || !strings.HasPrefix(f.Measured, "not measured in this run") || f.Quote == "" || f.Source == "" {
			t.Errorf("no rows: %+v", f)
		}
	}
}

// The sidecar claims: a classic sidecar without preStop exits at once, before the app in its
// preStop; a native one after the app; either claim fails on the other order.
func TestLifecycleSidecars(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	row := func(name string, native bool, scPre time.Duration, ts ...check.Termination) Row {
		sc := check.Sidecar{Name: "proxy", Front: true, Native: native, PreStop: check.NativeSleep(scPre)}
		return Row{Config: check.Applied{Name: name, PreStop: check.NativeSleep(5 * s), GraceSeconds: 30, Disruption: check.RolloutRestart, Count: 1,
			Sidecars: []check.Sidecar{sc}}, Times: check.NewTimes(ts, nil)}
	}
	classic := row("sidecar-classic", false, 0, check.Termination{Pod: "a", SIGTERM: 5 * s, Exit: 5100 * ms, How: "own",
		Front: &check.SidecarEnd{Container: "proxy", SIGTERM: 20 * ms, Exit: 30 * ms, How: "own"}})
	native := row("sidecar-native", true, 0, check.Termination{Pod: "b", SIGTERM: 5 * s, Exit: 5100 * ms, How: "own",
		Front: &check.SidecarEnd{Container: "proxy", SIGTERM: 5200 * ms, Exit: 5210 * ms, How: "own"}})
	fs := Lifecycle([]Row{classic, native})
	if f := findClaim(t, fs, "A classic sidecar"); f.Held == nil || !*f.Held || f.N != 1 || !strings.Contains(f.Measured, "exited before the app in 1 of 1 pods") {
		t.Errorf("classic: %+v", f)
	}
	if f := findClaim(t, fs, "A native sidecar"); f.Held == nil || !*f.Held || f.N != 1 {
		t.Errorf("native: %+v", f)
	}
	// Orders swapped: neither holds.
	classic.Times.Terminations[0].Front.Exit = 6 * s
	native.Times.Terminations[0].Front.Exit = 2 * s
	fs = Lifecycle([]Row{classic, native})
	if f := findClaim(t, fs, "A classic sidecar"); f.Held == nil || *f.Held {
		t.Errorf("classic after the app: %+v", f)
	}
	if f := findClaim(t, fs, "A native sidecar"); f.Held == nil || *f.Held {
		t.Errorf("native before the app: %+v", f)
	}
}

// The kubelet-restart claim: a kill a whole grace period after the kubelet came back holds it,
// a kill at the first grace period's end does not; the stopSignal claim is not measured where
// the runtime reported no effective stop signal.
func TestLifecycleKubeletRestartAndStopSignalField(t *testing.T) {
	s := time.Second
	del := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	row := func(exit time.Duration) Row {
		return Row{Config: check.Applied{Name: "kubelet-restart", PreStop: check.PreStop{None: true}, GraceSeconds: 10, Disruption: check.KubeletRestart, Count: 1},
			Disruptions: []check.DisruptionResult{{Kind: check.KubeletRestart, N: 1, Started: del.Add(-100 * time.Millisecond), Complete: del.Add(20 * s),
				KubeletRestarted: del.Add(3 * s), KubeletBack: del.Add(3500 * time.Millisecond)}},
			Times: check.NewTimes([]check.Termination{{Pod: "a", Deleting: del, SIGTERM: 10 * time.Millisecond, SIGTERMAgain: 4 * s, Exit: exit, ExitUncertainty: s, How: "killed"}}, nil)}
	}
	if f := findClaim(t, Lifecycle([]Row{row(14 * s)}), "A kubelet restarted"); f.Held == nil || !*f.Held || f.N != 1 || !strings.Contains(f.Measured, "a second SIGTERM in 1 of 1 pods") {
		t.Errorf("restart honoured: %+v", f)
	}
	if f := findClaim(t, Lifecycle([]Row{row(10 * s)}), "A kubelet restarted"); f.Held == nil || *f.Held {
		t.Errorf("kill at the first grace period's end: %+v", f)
	}
	// A kill that a restart moved is no evidence against SIGKILL at the grace period's end.
	if f := findClaim(t, Lifecycle([]Row{row(14 * s)}), "A container still running"); f.Held != nil {
		t.Errorf("the grace-end claim counted a restarted termination: %+v", f)
	}
	ss := Row{Config: check.Applied{Name: "stopsignal-field", PreStop: check.NativeSleep(5 * s), StopSignal: "SIGQUIT", GraceSeconds: 20, Disruption: check.RolloutRestart, Count: 1},
		Versions: check.Versions{Runtime: "containerd://1.6.20"},
		Times:    check.NewTimes([]check.Termination{{Pod: "b", Exit: 5 * s, How: "own"}}, nil)}
	if f := findClaim(t, Lifecycle([]Row{ss}), "lifecycle.stopSignal"); f.Held != nil || !strings.Contains(f.Measured, "does not support the field") || !strings.Contains(f.Measured, "containerd://1.6.20") {
		t.Errorf("unsupported runtime: %+v", f)
	}
	ss.StopSignalReported, ss.Times.Terminations[0].SIGTERM = "SIGQUIT", 5*s
	if f := findClaim(t, Lifecycle([]Row{ss}), "lifecycle.stopSignal"); f.Held == nil || !*f.Held {
		t.Errorf("supported runtime: %+v", f)
	}
}

// findClaim is the finding whose claim starts with prefix.
func findClaim(t *testing.T, fs []Finding, prefix string) Finding {
	t.Helper()
	for _, f := range fs {
		if strings.HasPrefix(f.Claim, prefix) {
			return f
		}
	}
	t.Fatalf("no claim %q", prefix)
	return Finding{}
}

// A user's own check measures few claims: the report shows those, and one line for all the
// others, never a line per claim it could not measure.
func TestLifecycleReportOfAUsersCheck(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	user := Row{Suite: "check", Config: check.Applied{Name: "web", PreStop: check.NativeSleep(5 * s), GraceSeconds: 30, Disruption: check.RolloutRestart, Count: 1},
		Verdict: check.Verdict{Status: check.Pass},
		Times: check.NewTimes([]check.Termination{{Pod: "web-1", SIGTERM: 5 * s, Exit: 5100 * ms, How: "own", FinalPhase: "Succeeded",
			Replacement: "web-2", ReplacementCreated: 20 * ms, ReplacementReady: 2 * s, Overlap: 3100 * ms}}, nil)}
	run := NewRun([]Row{user})
	var measured []string
	for _, f := range run.Lifecycle {
		if f.measurable() {
			measured = append(measured, f.Claim)
		}
	}
	if len(measured) == 0 || len(measured) == len(run.Lifecycle) {
		t.Fatalf("the user's row measured %d of %d claims: the test needs some measured and some not", len(measured), len(run.Lifecycle))
	}
	page := markdown(t, run)
	_, section, _ := strings.Cut(page, "## The termination lifecycle, measured")
	for _, c := range measured {
		if !strings.Contains(section, "| "+mdEscape(c)) {
			t.Errorf("the measured claim %q is not in the table", c)
		}
	}
	if n := strings.Count(section, "not measured in this run"); n != 1 {
		t.Errorf("%d mentions of claims not measured, want one line:\n%s", n, section)
	}
	want := fmt.Sprintf("%d more lifecycle claims are not measured in this run", len(run.Lifecycle)-len(measured))
	if !strings.Contains(section, want) {
		t.Errorf("the section lacks %q:\n%s", want, section)
	}
	for _, f := range run.Lifecycle {
		if !f.measurable() && strings.Contains(section, f.Claim) {
			t.Errorf("the claim %q, not measured, has a line of its own", f.Claim)
		}
	}
	// The JSON keeps every claim, with why it was not measured.
	if len(run.Lifecycle) != len(Lifecycle(nil)) {
		t.Errorf("the run keeps %d claims, want all %d", len(run.Lifecycle), len(Lifecycle(nil)))
	}

	// No row at all: one line, no table.
	_, section, _ = strings.Cut(markdown(t, NewRun(nil)), "## The termination lifecycle, measured")
	if strings.Contains(section, "| claim |") || !strings.Contains(section, fmt.Sprintf("None of the %d lifecycle claims is measured in this run", len(Lifecycle(nil)))) {
		t.Errorf("a run without rows:\n%s", section)
	}
}
