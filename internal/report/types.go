package report

import (
	"time"

	"github.com/rollcheck/rollcheck/internal/observe"
	"github.com/rollcheck/rollcheck/internal/scenario"
	"github.com/rollcheck/rollcheck/loadgen"
)

// Versions records what a result was measured with.
type Versions struct {
	Rollcheck   string `json:"rollcheck"`
	Go          string `json:"go"`
	Vegeta      string `json:"vegeta"`
	Kubernetes  string `json:"kubernetes"`
	Kind        string `json:"kind"`
	NodeImage   string `json:"nodeImage"`
	ImageSource string `json:"nodeImageSource"` // upstream | offline
}

// Row is the result of one spec: one Scenario under one disruption.
type Row struct {
	Suite    string            `json:"suite"`
	Scenario scenario.Scenario `json:"scenario"`
	Started  time.Time         `json:"started"`
	Duration time.Duration     `json:"duration"`
	Summary  loadgen.Summary   `json:"summary"`
	Verdict  scenario.Verdict  `json:"verdict"`
	// Buckets is the load timeline (100 ms buckets from Summary's start), for the HTML timeline.
	Buckets []loadgen.Bucket `json:"buckets,omitempty"`
	// LoadStarted is when the load started (loadgen.Result.Started): Buckets are offsets from
	// it, and the Summary has no start of its own. Zero means Started.
	LoadStarted time.Time `json:"loadStarted,omitzero"`
	// Timeline is the lifecycle of the pods and endpoints during the run.
	Timeline *observe.Timeline `json:"timeline,omitempty"`
	// Artifacts are paths relative to the artifacts directory (raw vegeta results, full ledger).
	Artifacts map[string]string `json:"artifacts,omitempty"`
	Versions  Versions          `json:"versions"`
}

// Run is a whole conformance run: every row, in the order they ran.
type Run struct {
	Generated time.Time `json:"generated"`
	Versions  Versions  `json:"versions"`
	Rows      []Row     `json:"rows"`
}
