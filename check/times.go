package check

import (
	"fmt"
	"time"
)

// Termination is one deleted pod's termination as the row saw it, every moment measured from
// its deletion (the Pod's deletionTimestamp as this process received it). A zero duration is a
// moment not seen: SIGTERM is seen only when the app says so (a "sigterm" lifecycle line), which
// apps nobody here wrote do not.
type Termination struct {
	Pod      string    `json:"pod"`
	Deleting time.Time `json:"deleting"`
	// SIGTERM is deletion → the app's "sigterm" line, and SIGTERMAgain → its second one (a stop
	// signal sent again, as by a kubelet that restarted during the termination).
	SIGTERM      time.Duration `json:"sigterm,omitempty"`
	SIGTERMAgain time.Duration `json:"sigtermAgain,omitempty"`
	// Exit is deletion → the container's exit, at the latest: the exit happened within
	// ExitUncertainty before it (0 with the app's own "exiting" line; up to a second from a
	// container status, whose finishedAt has one-second resolution).
	Exit            time.Duration `json:"exit,omitempty"`
	ExitUncertainty time.Duration `json:"exitUncertainty,omitempty"`
	// How is how the process ended: "own" (it exited by itself), "killed" (SIGKILL at the end
	// of the grace period) or "" (no evidence).
	How string `json:"how,omitempty"`
	// Gone is deletion → the Pod object gone from the API, and FinalPhase the phase its last
	// state had (Failed or Succeeded once the kubelet finished its termination; Running when
	// the object went first, as a forced delete makes it).
	Gone       time.Duration `json:"gone,omitempty"`
	FinalPhase string        `json:"finalPhase,omitempty"`
	// Replacement is the pod that took this one's place (the pod not deleted in the row whose
	// creation is nearest the deletion), ReplacementCreated its creation and ReplacementReady
	// its endpoint turning ready, both from the deletion (negative: before it). Overlap is
	// ReplacementReady → Exit: how long old and new served side by side (negative: a gap).
	Replacement        string        `json:"replacement,omitempty"`
	ReplacementCreated time.Duration `json:"replacementCreated,omitempty"`
	ReplacementReady   time.Duration `json:"replacementReady,omitempty"`
	Overlap            time.Duration `json:"overlap,omitempty"`
	// Front is the end of the sidecar in front of the app (App.Container), when the pod has one.
	Front *SidecarEnd `json:"front,omitempty"`
}

// SidecarEnd is a sidecar container's end, measured from the pod's deletion as Termination's
// moments are: its preStop's start and its SIGTERM (its own lines, when it writes them) and its
// exit.
type SidecarEnd struct {
	Container       string        `json:"container"`
	PreStop         time.Duration `json:"preStop,omitempty"`
	SIGTERM         time.Duration `json:"sigterm,omitempty"`
	Exit            time.Duration `json:"exit,omitempty"`
	ExitUncertainty time.Duration `json:"exitUncertainty,omitempty"`
	How             string        `json:"how,omitempty"`
}

// How a process ended (Termination.How).
const (
	EndedOwn    = "own"    // it exited by itself
	EndedKilled = "killed" // SIGKILL
)

// ExitNear tells whether t's exit window (Exit, its latest moment, less ExitUncertainty: a
// container status gives the exit to the second, and may arrive late) meets want within tol.
func (t Termination) ExitNear(want, tol time.Duration) bool {
	return t.Exit >= want-tol && t.Exit-t.ExitUncertainty <= want+tol
}

// Times are what a row's configuration costs in time.
type Times struct {
	// Terminations are the deleted pods', in order of deletion.
	Terminations []Termination `json:"terminations,omitempty"`
	// SIGTERM, Exit and Gone summarise the terminations' moments over the pods where they were
	// seen (Durations.N says how many).
	SIGTERM Durations `json:"sigterm"`
	Exit    Durations `json:"exit"`
	Gone    Durations `json:"gone"`
	// Overlap summarises the terminations' Overlap, where both ends were seen.
	Overlap Durations `json:"overlap"`
	// Killed counts the terminations that ended in SIGKILL.
	Killed int `json:"killed"`
	// Disruption summarises the disruptions' durations: start → the Deployment settled
	// (DisruptionResult.Complete).
	Disruption Durations `json:"disruption"`
}

// NewTimes summarises terminations and the disruptions' durations.
func NewTimes(terms []Termination, ds []DisruptionResult) *Times {
	t := &Times{Terminations: terms}
	var sig, exit, gone, dis, over []time.Duration
	for _, x := range terms {
		if x.SIGTERM > 0 {
			sig = append(sig, x.SIGTERM)
		}
		if x.Exit > 0 {
			exit = append(exit, x.Exit)
		}
		if x.Gone > 0 {
			gone = append(gone, x.Gone)
		}
		if x.Replacement != "" && x.ReplacementReady != 0 && x.Exit > 0 {
			over = append(over, x.Overlap)
		}
		if x.How == EndedKilled {
			t.Killed++
		}
	}
	for _, d := range ds {
		if !d.Complete.IsZero() && d.Complete.After(d.Started) {
			dis = append(dis, d.Complete.Sub(d.Started))
		}
	}
	t.SIGTERM, t.Exit, t.Gone, t.Disruption, t.Overlap = Summarize(sig), Summarize(exit), Summarize(gone), Summarize(dis), Summarize(over)
	return t
}

// TerminationString is "exit p50 1.2s · max 30s (3 of 9 killed)", or "—" with nothing measured.
func (t *Times) TerminationString() string {
	if t == nil || t.Exit.N == 0 {
		return "—"
	}
	s := fmt.Sprintf("p50 %s · max %s", round(t.Exit.P50), round(t.Exit.Max))
	if t.Killed > 0 {
		s += fmt.Sprintf(" (%d of %d killed)", t.Killed, len(t.Terminations))
	}
	return s
}

// DisruptionString is "p50 14.1s · max 15.0s", or "—" with nothing measured.
func (t *Times) DisruptionString() string {
	if t == nil || t.Disruption.N == 0 {
		return "—"
	}
	return fmt.Sprintf("p50 %s · max %s", round(t.Disruption.P50), round(t.Disruption.Max))
}

// round is d to 100 ms (to 10 ms below a second).
func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}
