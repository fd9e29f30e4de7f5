package audit

import (
	"bytes"
	_ "embed"
	"fmt"
)

// bundledWindows is the windows file of a recorded run of rollcheck's matrix on kind (one node,
// 2 cores), as rollcheck windows extract made it of the rows in testdata/kind-run
// (TestExtractMatchesTheBundledWindows holds them to it): what rollcheck audit scores against on
// day one, before any window of the user's cluster was measured.
//
//go:embed windows-kind.json
var bundledWindows []byte

// BundledSource begins the Source of the bundled windows, so that every output they are used
// for says whose they are.
const BundledSource = "bundled with rollcheck, not your cluster's: "

// Bundled returns the windows bundled with rollcheck: a recorded kind run's, its Source saying
// so (BundledSource). Measure a cluster's own with rollcheck windows measure.
func Bundled() (*WindowsFile, error) {
	w, err := DecodeWindows(bytes.NewReader(bundledWindows))
	if err != nil {
		return nil, fmt.Errorf("the bundled windows: %w", err)
	}
	w.Measured.Source = BundledSource + w.Measured.Source
	return w, nil
}
