package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// podLifecycleDoc is the page most of the claims come from.
const podLifecycleDoc = "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"

// Finding is one claim of the documents rollcheck is built on, and what a run's rows measured
// of it. A claim that does not hold is a finding to report, not a failing test.
type Finding struct {
	Claim  string `json:"claim"`
	Source string `json:"source"`
	// Quote is the source's own sentence.
	Quote string `json:"quote"`
	// Rows names the rows measured; N is how many pods (or disruptions) were.
	Rows []string `json:"rows,omitempty"`
	N    int      `json:"n"`
	// Measured says what was measured, p50 and max; Tolerance the slack allowed.
	Measured  string `json:"measured"`
	Tolerance string `json:"tolerance,omitempty"`
	// Held is true or false when measured, nil when no row of the run measured it (Measured
	// then says which rows would).
	Held *bool `json:"held,omitempty"`
}

// watchLag is how late a watch event may arrive after what it reports.
const watchLag = 250 * time.Millisecond

// lifecycleTolerance is the slack of a moment compared with its claim: watch events and app
// lines arrive within a few hundred milliseconds, a container status gives its exit to the
// second.
const lifecycleTolerance = 1500 * time.Millisecond

// Lifecycle measures each claim over the rows' terminations (check.Times).
func Lifecycle(rows []Row) []Finding {
	return []Finding{
		pastGrace(rows), killAtGraceEnd(rows), forcedDelete(rows), replacement(rows),
		terminalPhase(rows),
		stopSignal(rows),
		pid1(rows),
		kubeletRestart(rows),
		stopSignalField(rows),
		classicSidecar(rows),
		nativeSidecar(rows),
	}
}

// kubeletRestart: a kubelet restarted during a termination starts it over, with the full grace
// period from the restart.
func kubeletRestart(rows []Row) Finding {
	restartOf := func(r Row, t check.Termination) (time.Duration, bool) {
		for _, d := range r.Disruptions {
			if d.Kind.Info().RestartsKubelet && !d.KubeletBack.IsZero() && !t.Deleting.Before(d.Started) && (d.Complete.IsZero() || t.Deleting.Before(d.Complete)) {
				return d.KubeletBack.Sub(t.Deleting), true
			}
		}
		return 0, false
	}
	return claim{
		Finding: Finding{Claim: "A kubelet restarted while a pod terminates starts the termination over, with the full grace period again: a container that ignores SIGTERM is killed a whole grace period after the kubelet is back, not at the end of the first",
			Source: podLifecycleDoc, Tolerance: "±" + (2 * lifecycleTolerance).String() + " (the kubelet takes a moment to take the pod up again)",
			Quote: "If the kubelet or the container runtime's management service is restarted while waiting for processes to terminate, the cluster retries from the start including the full original grace period."},
		rows: func(r Row) bool { return r.Config.Disruption.Info().RestartsKubelet },
		terms: func(r Row, t check.Termination) bool {
			_, ok := restartOf(r, t)
			return ok && t.Exit > 0 && t.How == check.EndedKilled
		},
		none: "no row restarted a kubelet during a termination (make e2e-slow runs the kubelet-restart row)",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			var fromDel, fromBack, again []time.Duration
			ok := true
			for i, t := range ts {
				back, _ := restartOf(of[i], t)
				g := grace(of[i])
				fromDel, fromBack = append(fromDel, t.Exit), append(fromBack, t.Exit-back)
				if t.SIGTERMAgain > 0 {
					again = append(again, t.SIGTERMAgain-back)
				}
				ok = ok && t.ExitNear(back+g, 2*lifecycleTolerance)
			}
			return ok, fmt.Sprintf("SIGKILL %s after the deletion, %s after the kubelet was back (grace %s); a second SIGTERM in %d of %d pods, %s after the kubelet was back",
				dist(fromDel), dist(fromBack), grace(of[0]), len(again), len(ts), dist(again))
		},
	}.measure(rows)
}

// stopSignalField: lifecycle.stopSignal replaces the image's STOPSIGNAL and SIGTERM.
// The claim holds only with a runtime that supports the field: where the runtime reported no
// effective stop signal, the claim is not measured (its condition is not met), and says so.
func stopSignalField(rows []Row) Finding {
	f := claim{
		Finding: Finding{Claim: "lifecycle.stopSignal (alpha, ContainerStopSignals) makes the runtime send that signal instead of the image's STOPSIGNAL or SIGTERM: an app that stops on SIGQUIT hears it",
			Source: "https://kubernetes.io/blog/2025/05/14/kubernetes-v1-33-updates-to-container-lifecycle/", Tolerance: "±" + lifecycleTolerance.String() + " around the preStop's end",
			Quote: "If a container has a custom stop signal defined in its lifecycle, the container runtime would use the signal defined in the lifecycle to kill the container, given that the container runtime also supports custom stop signals."},
		rows:  func(r Row) bool { return r.Config.StopSignal != "" && notForced(r) },
		terms: exited,
		none:  "no row set lifecycle.stopSignal (make e2e-stopsignal runs the stopsignal-field row, on a node image whose containerd takes it)",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			heard := 0
			ok := true
			runtimes := map[string]bool{}
			reported := map[string]bool{}
			for i, t := range ts {
				pre, _ := preStop(of[i])
				runtimes[of[i].Versions.Runtime], reported[of[i].StopSignalReported] = true, true
				if t.SIGTERM > 0 {
					heard++
				}
				ok = ok && t.SIGTERM > 0 && nearMoment(t.SIGTERM, pre) && t.How == check.EndedOwn
			}
			return ok, fmt.Sprintf("the app heard its stop signal in %d of %d pods; runtime %s, effective stop signal it reported: %s",
				heard, len(ts), strings.Join(keys(runtimes), ", "), strings.Join(keys(reported), ", "))
		},
	}.measure(rows)
	supported := false
	for _, r := range rows {
		supported = supported || (r.Config.StopSignal != "" && r.StopSignalReported == r.Config.StopSignal)
	}
	if f.Held != nil && !supported {
		f.Held = nil
		f.Measured = "not measured in this run: the runtime reported no effective stop signal, so it does not support the field (the claim's condition); measured anyway: " + f.Measured
	}
	return f
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		if k == "" {
			k = "none"
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sidecarDoc is the page of the native sidecar claim.
const sidecarDoc = "https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/"

func frontExited(_ Row, t check.Termination) bool {
	return t.Front != nil && t.Front.Exit > 0 && t.Exit > 0
}

// classicSidecar: a classic sidecar is stopped with the app, in parallel: its preStop (or, with
// none, its SIGTERM) starts at the deletion, whatever the app's own preStop is.
func classicSidecar(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "A classic sidecar is stopped together with the app: its own preStop, then SIGTERM, start at the deletion, in parallel with the app's, so a sidecar with a shorter preStop than the app's exits first",
			Source: podLifecycleDoc, Tolerance: "±" + lifecycleTolerance.String(),
			Quote: "Otherwise, the containers in the Pod receive the TERM signal at different times and in an arbitrary order. If the order of shutdowns matters, consider using a preStop hook to synchronize (or switch to using sidecar containers)."},
		rows: func(r Row) bool {
			sc, ok := r.Config.FrontSidecar()
			return ok && !sc.Native && notForced(r)
		},
		terms: frontExited,
		none:  "no row ran a classic sidecar in front of the app (the matrix's sidecar-classic rows do)",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			var sig []time.Duration
			first, shorter := 0, 0
			ok := true
			for i, t := range ts {
				sc, _ := of[i].Config.FrontSidecar()
				scPre, _ := sc.PreStop.Duration()
				appPre, _ := preStop(of[i])
				f := t.Front
				if f.SIGTERM > 0 {
					sig = append(sig, f.SIGTERM-scPre)
					ok = ok && nearMoment(f.SIGTERM, scPre)
				}
				if f.Exit < t.Exit-t.ExitUncertainty {
					first++
				}
				if scPre < appPre {
					shorter++
					ok = ok && f.Exit < t.Exit-t.ExitUncertainty
				}
			}
			return ok, fmt.Sprintf("the sidecar's SIGTERM from the end of its own preStop (counted from the deletion): %s (n %d, its lines); it exited before the app in %d of %d pods, %d of which had a shorter preStop than the app's", dist(sig), len(sig), first, len(ts), shorter)
		},
	}.measure(rows)
}

// nativeSidecar: a native sidecar is stopped only after the app's containers have exited.
func nativeSidecar(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "A native sidecar (an init container with restartPolicy Always) is stopped only after the app's containers have exited",
			Source: sidecarDoc, Tolerance: "the sidecar's exit window not before the app's",
			Quote: "Upon Pod termination, the kubelet postpones terminating sidecar containers until the main application container has fully stopped."},
		rows: func(r Row) bool {
			sc, ok := r.Config.FrontSidecar()
			return ok && sc.Native && notForced(r)
		},
		terms: frontExited,
		none:  "no row ran a native sidecar in front of the app (the matrix's sidecar-native rows do)",
		judge: func(ts []check.Termination, _ []Row) (bool, string) {
			var after, sig, pre []time.Duration
			ok := true
			for _, t := range ts {
				f := t.Front
				after = append(after, f.Exit-t.Exit)
				if f.SIGTERM > 0 {
					sig = append(sig, f.SIGTERM-t.Exit)
				}
				if f.PreStop > 0 {
					pre = append(pre, f.PreStop)
				}
				ok = ok && f.Exit >= t.Exit-t.ExitUncertainty
			}
			m := fmt.Sprintf("the sidecar's exit after the app's: %s (n %d); its SIGTERM after the app's exit: %s (n %d, its lines)", dist(after), len(after), dist(sig), len(sig))
			if len(pre) > 0 {
				m += fmt.Sprintf("; its own preStop started %s after the deletion (n %d, its lines)", dist(pre), len(pre))
			}
			return ok, m
		},
	}.measure(rows)
}

func notMeasured(claim, quote, why string) Finding {
	return Finding{Claim: claim, Source: podLifecycleDoc, Quote: quote, Measured: "not measured in this run: " + why}
}

// terminationsOf returns the rows that match and their terminations that match.
func terminationsOf(rows []Row, rowOK func(Row) bool, termOK func(Row, check.Termination) bool) (names []string, ts []check.Termination, of []Row) {
	for _, r := range rows {
		if r.Times == nil || !rowOK(r) {
			continue
		}
		n := 0
		for _, t := range r.Times.Terminations {
			if termOK(r, t) {
				ts, of = append(ts, t), append(of, r)
				n++
			}
		}
		if n > 0 {
			names = append(names, r.Config.Name+" ("+r.Config.DisruptionString()+")")
		}
	}
	return names, ts, of
}

func held(b bool) *bool { return &b }

func dist(ds []time.Duration) string {
	s := check.Summarize(ds)
	if s.N == 0 {
		return "—"
	}
	return fmt.Sprintf("p50 %s, max %s", s.P50.Round(10*time.Millisecond), s.Max.Round(10*time.Millisecond))
}

func nearMoment(d, want time.Duration) bool {
	return d >= want-lifecycleTolerance && d <= want+lifecycleTolerance
}

func grace(r Row) time.Duration { return time.Duration(r.Config.GraceSeconds) * time.Second }

func preStop(r Row) (time.Duration, bool) {
	d, ok := r.Config.PreStop.Duration()
	return d, ok && d > 0
}

// claim is one measurable claim: which rows and terminations show it, and how they are judged.
type claim struct {
	Finding
	rows  func(Row) bool
	terms func(Row, check.Termination) bool
	// none says what would measure the claim when no termination does.
	none string
	// judge says whether the terminations (and their rows) hold the claim, and what they measured.
	judge func(ts []check.Termination, of []Row) (bool, string)
}

// measure applies c to rows.
func (c claim) measure(rows []Row) Finding {
	f := c.Finding
	names, ts, of := terminationsOf(rows, c.rows, c.terms)
	if len(ts) == 0 {
		f.Measured = "not measured in this run: " + c.none
		return f
	}
	ok, measured := c.judge(ts, of)
	f.Rows, f.N, f.Held, f.Measured = names, len(ts), held(ok), measured
	return f
}

func notForced(r Row) bool { return !r.Config.Disruption.Info().Forced }

// unrestarted: a graceful termination that no kubelet restart started over (the grace period
// claims count from the deletion).
func unrestarted(r Row) bool { return notForced(r) && !r.Config.Disruption.Info().RestartsKubelet }

func exited(_ Row, t check.Termination) bool { return t.Exit > 0 }

// pastGrace: a preStop still running at the grace period's end gets 2 s more, then SIGKILL.
func pastGrace(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "A preStop hook still running when the grace period ends: the kubelet stops it, sends SIGTERM and SIGKILL 2 s later",
			Source: podLifecycleDoc, Tolerance: "±" + lifecycleTolerance.String(),
			Quote: "If the preStop hook is still running after the grace period expires, the kubelet requests a small, one-off grace period extension of 2 seconds."},
		rows: func(r Row) bool {
			d, ok := preStop(r)
			return ok && d > grace(r) && unrestarted(r)
		},
		terms: exited,
		none:  "no row had a preStop longer than its grace period (the matrix's prestop-past-grace does)",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			var sig, exit []time.Duration
			ok := true
			for i, t := range ts {
				g := grace(of[i])
				exit = append(exit, t.Exit-g)
				if t.SIGTERM > 0 {
					sig = append(sig, t.SIGTERM-g)
					ok = ok && nearMoment(t.SIGTERM, g)
				}
				ok = ok && (t.How != check.EndedKilled || t.ExitNear(g+2*time.Second, lifecycleTolerance)) && t.Exit-t.ExitUncertainty <= g+2*time.Second+lifecycleTolerance
			}
			return ok, fmt.Sprintf("from the grace period's end: SIGTERM %s (n %d, the app's lines), exit %s (n %d, %d killed); claimed: SIGTERM at 0, SIGKILL at +2s",
				dist(sig), len(sig), dist(exit), len(exit), killed(ts))
		},
	}.measure(rows)
}

// killAtGraceEnd: SIGKILL at the grace period's end, which includes the preStop, with the
// kubelet's 2 s minimum after the hook.
func killAtGraceEnd(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "A container still running at the grace period's end is SIGKILLed then; the grace period counts from the deletion and includes the preStop hook (the kubelet leaves at least 2 s after the hook)",
			Source: podLifecycleDoc, Tolerance: "±" + lifecycleTolerance.String(),
			Quote: "If any of the containers in the Pod are still running after the grace period expires, the kubelet sends the KILL signal to them."},
		rows: func(r Row) bool {
			d, _ := preStop(r)
			return d <= grace(r) && unrestarted(r)
		},
		terms: func(_ Row, t check.Termination) bool { return t.How == check.EndedKilled && t.Exit > 0 },
		none:  "no pod was SIGKILLed at its grace period's end",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			var off []time.Duration
			ok := true
			for i, t := range ts {
				d, _ := preStop(of[i])
				want := max(grace(of[i]), d+2*time.Second)
				off = append(off, t.Exit-want)
				ok = ok && t.ExitNear(want, lifecycleTolerance)
			}
			return ok, fmt.Sprintf("exit of the killed containers (the latest moment of their exit window, which a container status gives to the second) from max(grace, preStop + 2 s) after deletion: %s (n %d)", dist(off), len(ts))
		},
	}.measure(rows)
}

// forcedDelete: the Pod goes from the API at once; its containers are stopped afterwards.
func forcedDelete(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "A forced delete removes the Pod from the API at once, without waiting for the kubelet: its containers keep running a while after the Pod is gone",
			Source:    "https://kubernetes.io/docs/tasks/run-application/force-delete-stateful-set-pod/#force-deletion",
			Quote:     "Force deletions do not wait for confirmation from the kubelet that the Pod has been terminated.",
			Tolerance: "the container's exit not before the Pod was seen gone, less 250 ms (the watch's lag)"},
		rows:  func(r Row) bool { return !notForced(r) },
		terms: exited,
		none:  "no forced delete whose container exit was seen (it is seen only through the app's log stream)",
		judge: func(ts []check.Termination, _ []Row) (bool, string) {
			var gone, after []time.Duration
			ok := true
			for _, t := range ts {
				gone, after = append(gone, t.Gone), append(after, t.Exit-t.Gone)
				ok = ok && t.Exit > t.Gone-watchLag
			}
			return ok, fmt.Sprintf("deletion → Pod gone %s, whatever the app does; its container exited %s after the Pod was gone (n %d)", dist(gone), dist(after), len(ts))
		},
	}.measure(rows)
}

// replacement: the ReplicaSet does not wait for the old pod to end.
func replacement(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "The ReplicaSet creates the replacement as soon as a pod starts terminating, without waiting for it to end: old and new serve side by side",
			Source:    "https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/",
			Quote:     "A ReplicaSet's purpose is to maintain a stable set of replica Pods running at any given time.",
			Tolerance: "replacement created before the old Pod was gone (its container's exit when the Pod's removal was not seen), within the watch's lag"},
		rows: func(r Row) bool {
			// a deletion of one pod that the ReplicaSet replaces (not a scale) and no kubelet
			// restart delays
			d := r.Config.Disruption.Info()
			return d.Takes == check.TakesOne && !d.Scales && !d.RestartsKubelet
		},
		terms: func(_ Row, t check.Termination) bool { return t.Replacement != "" && t.Exit > 0 },
		none:  "no deleted pod with both its exit and a replacement seen",
		judge: func(ts []check.Termination, _ []Row) (bool, string) {
			var created, over []time.Duration
			ok := true
			for _, t := range ts {
				created = append(created, t.ReplacementCreated)
				if t.ReplacementReady != 0 {
					over = append(over, t.Overlap)
				}
				end := t.Gone
				if end == 0 {
					end = t.Exit
				}
				ok = ok && t.ReplacementCreated < end+watchLag
			}
			return ok, fmt.Sprintf("replacement created %s after the deletion; the replacement's readiness to the old container's exit (overlap) %s (n %d)", dist(created), dist(over), len(ts))
		},
	}.measure(rows)
}

// stopSignal: the runtime sends the image's STOPSIGNAL instead of SIGTERM. Rows whose app stops
// on SIGQUIT only (OnSIGTERM "…/SIGQUIT") must hear it when their image says so ("@stopsignal")
// and die at once, hearing nothing, when it does not.
func stopSignal(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "The container runtime sends the image's STOPSIGNAL instead of SIGTERM: an app that stops on SIGQUIT hears it when its image says STOPSIGNAL SIGQUIT, and is killed by SIGTERM's default action when it does not",
			Source: podLifecycleDoc, Tolerance: "±" + lifecycleTolerance.String() + " around the preStop's end",
			Quote: "Many container runtimes respect the STOPSIGNAL value defined in the container image and, if different, send the container STOPSIGNAL instead of TERM."},
		rows: func(r Row) bool {
			return notForced(r) && strings.Contains(r.Config.OnSIGTERM, "/SIGQUIT")
		},
		terms: exited,
		none:  "no row ran an app that stops on another signal (the matrix's stopsignal rows do)",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			withHeard, with, withoutHeard, without := 0, 0, 0, 0
			ok := true
			for i, t := range ts {
				pre, _ := preStop(of[i])
				if strings.HasSuffix(of[i].Config.OnSIGTERM, "@stopsignal") {
					with++
					if t.SIGTERM > 0 {
						withHeard++
					}
					ok = ok && t.SIGTERM > 0 && nearMoment(t.SIGTERM, pre) && t.How == check.EndedOwn
					continue
				}
				without++
				if t.SIGTERM > 0 {
					withoutHeard++
				}
				ok = ok && t.SIGTERM == 0 && t.How == check.EndedOwn && t.ExitNear(pre, lifecycleTolerance)
			}
			return ok, fmt.Sprintf("image with STOPSIGNAL SIGQUIT: the app heard its stop signal in %d of %d pods; without it: %d of %d, each dying at the preStop's end", withHeard, with, withoutHeard, without)
		},
	}.measure(rows)
}

// pid1: the stop signal goes to PID 1 only. Rows whose app runs behind a shell wrapper
// (OnSIGTERM "…@shell") must show no SIGTERM heard and SIGKILL at the grace period's end; rows
// whose PID 1 is the app or tini ("…@tini", the pid1 rows' exec form) must show it heard.
func pid1(rows []Row) Finding {
	entry := func(r Row) string {
		_, e, _ := strings.Cut(r.Config.OnSIGTERM, "@")
		return e
	}
	return claim{
		Finding: Finding{Claim: "The stop signal goes to PID 1 only: behind a shell that runs the app without exec, the app never hears SIGTERM and is SIGKILLed at the grace period's end; behind tini, or as PID 1 itself, it hears it",
			Source: podLifecycleDoc, Tolerance: "±" + lifecycleTolerance.String(),
			Quote: "The container runtime sends the signal to the main process in each container."},
		rows: func(r Row) bool {
			return notForced(r) && (entry(r) == "shell" || entry(r) == "tini" || strings.HasPrefix(r.Config.Name, "pid1-"))
		},
		terms: exited,
		none:  "no row ran the app behind a shell or an init (the matrix's pid1 rows do)",
		judge: func(ts []check.Termination, of []Row) (bool, string) {
			var shellExit, heardExit []time.Duration
			shellHeard, otherHeard, shellKilled := 0, 0, 0
			ok := true
			for i, t := range ts {
				g := grace(of[i])
				if entry(of[i]) == "shell" {
					shellExit = append(shellExit, t.Exit)
					if t.SIGTERM > 0 {
						shellHeard++
					}
					if t.How == check.EndedKilled {
						shellKilled++
					}
					ok = ok && t.SIGTERM == 0 && t.How == check.EndedKilled && t.ExitNear(g, lifecycleTolerance)
					continue
				}
				heardExit = append(heardExit, t.Exit)
				if t.SIGTERM > 0 {
					otherHeard++
				}
				ok = ok && t.SIGTERM > 0 && t.How == check.EndedOwn
			}
			return ok, fmt.Sprintf("behind a shell: SIGTERM heard by %d of %d pods, %d killed, exit %s after deletion; app or tini as PID 1: SIGTERM heard by %d of %d, exit %s",
				shellHeard, len(shellExit), shellKilled, dist(shellExit), otherHeard, len(heardExit), dist(heardExit))
		},
	}.measure(rows)
}

// terminalPhase: a gracefully deleted pod is Failed or Succeeded before its object goes.
func terminalPhase(rows []Row) Finding {
	return claim{
		Finding: Finding{Claim: "The kubelet moves a gracefully deleted pod to a terminal phase (Failed or Succeeded) before its object is removed (since 1.27)",
			Source:    podLifecycleDoc,
			Tolerance: "the phase of the Pod's last state, as its deletion was seen",
			Quote:     "When the kubelet has finished the termination, it moves the Pod to a terminal phase (Failed or Succeeded depending on the exit statuses of its containers). This behavior is available since Kubernetes 1.27."},
		rows:  notForced,
		terms: func(_ Row, t check.Termination) bool { return t.FinalPhase != "" },
		none:  "no gracefully deleted pod was seen gone with its phase",
		judge: func(ts []check.Termination, _ []Row) (bool, string) {
			by := map[string]int{}
			for _, t := range ts {
				by[t.FinalPhase]++
			}
			return by["Failed"]+by["Succeeded"] == len(ts), fmt.Sprintf("last phase of the deleted pods: Succeeded %d, Failed %d, other %d (n %d)",
				by["Succeeded"], by["Failed"], len(ts)-by["Failed"]-by["Succeeded"], len(ts))
		},
	}.measure(rows)
}

func killed(ts []check.Termination) int {
	n := 0
	for _, t := range ts {
		if t.How == check.EndedKilled {
			n++
		}
	}
	return n
}

// writeLifecycle writes the lifecycle section: one line per claim a row of the run measured,
// and one line for all the claims no row could (a user's own check measures few of them: eleven
// lines of "not measured" would bury the ones it did). The JSON keeps every claim, each with the
// rows that would measure it.
func writeLifecycle(p func(string, ...any), fs []Finding) {
	var shown []Finding
	for _, f := range fs {
		if f.measurable() {
			shown = append(shown, f)
		}
	}
	p("\n## The termination lifecycle, measured\n\n")
	if len(shown) > 0 {
		writeClaims(p, shown, "—")
		p("\n")
	}
	if line := notMeasuredLine(fs); line != "" {
		p("%s\n", line)
	}
}

// writeClaims writes a table of claims, one line each; unheld is the held column of a claim
// measured with its condition unmet, or not measured.
func writeClaims(p func(string, ...any), fs []Finding, unheld string) {
	p("%s", claimsTable.markdownHeader())
	for _, f := range fs {
		h := unheld
		if f.Held != nil {
			h = map[bool]string{true: "✅ held", false: "❗ did not hold (a finding)"}[*f.Held]
		}
		claim := fmt.Sprintf("%s ([source](%s): “%s”)", f.Claim, f.Source, f.Quote)
		p("| %s | %s | %s | %d | %s | %s |\n", mdEscape(claim), h, mdEscape(f.Measured), f.N, mdEscape(orDash(f.Tolerance)), mdEscape(orDash(strings.Join(f.Rows, ", "))))
	}
}

// measurable reports whether a row of the run could measure the claim: it held, did not hold,
// or was seen with its condition unmet (a runtime without the feature).
func (f Finding) measurable() bool { return f.Held != nil || f.N > 0 }

// notMeasuredLine is the one line that stands for every claim no row of the run could measure,
// or "" when there is none.
func notMeasuredLine(fs []Finding) string {
	n := 0
	for _, f := range fs {
		if !f.measurable() {
			n++
		}
	}
	switch {
	case n == 0:
		return ""
	case n == len(fs):
		return fmt.Sprintf("None of the %d lifecycle claims is measured in this run: its rows cannot show them (the built-in matrix's rows do; %s names, for each claim, the rows that would).", n, JSONFile)
	}
	return fmt.Sprintf("%d more lifecycle claims are not measured in this run: its rows cannot show them (the built-in matrix's rows do; %s names, for each claim, the rows that would).", n, JSONFile)
}
