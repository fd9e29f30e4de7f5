package report

import (
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// Row and Versions are the engine's: the reports read what Run returned.
type (
	Row      = check.Row
	Versions = check.Versions
)

// SchemaVersion is the version of conformance.json's schema (Run.SchemaVersion,
// docs/conformance.schema.json). It goes up when a field is removed or changes its type or
// meaning; a field added leaves it as it is, so a reader ignores fields it does not know.
// Version 2 renamed a row's config.settle to config.quiet (ReadRun reads either).
const SchemaVersion = 2

// Run is a whole conformance run: every row, in the order they ran. It is conformance.json.
type Run struct {
	// SchemaVersion is the schema the file follows (SchemaVersion when written; 0 in a file
	// written before the field existed, whose fields are those of version 1).
	SchemaVersion int `json:"schemaVersion"`
	// Generated is when the reports were written.
	Generated time.Time `json:"generated"`
	// Versions are what the rows were measured with: rollcheck, Kubernetes, kind, the node
	// image, Go, vegeta (the first row's that has any).
	Versions Versions `json:"versions"`
	// Rows are the rows, in the order they started.
	Rows []Row `json:"rows"`
	// Counts are the rows by verdict (Summarize), retried rows among them.
	Counts Counts `json:"counts"`
	// Stats are the rows grouped over their repeated runs (Group); set only when a row repeats.
	Stats []RowStats `json:"stats,omitempty"`
	// Propagation is endpoint propagation pooled over the run's rows (Pool); nil when no row
	// was explained.
	Propagation *PooledPropagation `json:"propagation,omitempty"`
	// Lifecycle is each claim of the termination lifecycle and what the rows measured of it.
	Lifecycle []Finding `json:"lifecycle,omitempty"`
}
