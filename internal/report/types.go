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

// Run is a whole conformance run: every row, in the order they ran.
type Run struct {
	Generated time.Time `json:"generated"`
	Versions  Versions  `json:"versions"`
	Rows      []Row     `json:"rows"`
	// Stats are the rows grouped over their repeated runs (Group); set only when a row repeats.
	Stats []RowStats `json:"stats,omitempty"`
	// Propagation is endpoint propagation pooled over the run's rows (Pool); nil when no row
	// was explained.
	Propagation *PooledPropagation `json:"propagation,omitempty"`
	// Lifecycle is each claim of the termination lifecycle and what the rows measured of it.
	Lifecycle []Finding `json:"lifecycle,omitempty"`
}
