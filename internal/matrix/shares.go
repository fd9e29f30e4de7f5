package matrix

import "github.com/rollcheck/rollcheck/check"

// A negative control that accepts several phases is for the first (check.Outcome.Mechanism): at
// least check.MinMechanismShare of its failures must be in it. That number follows one rule,
// the higher of 25 % and half the lowest share any recorded run below measured
// (mechanismFloor), and a test holds it to this table, so that it moves only with its data.

// mechanismRun is one recorded run of a row that accepts several phases: how many of its
// failures were attributed to the row's mechanism (the first phase), of how many in all.
type mechanismRun struct {
	// Source is where the figures are: a commit whose docs/matrix.md table has the row, a
	// replay fixture (internal/replay/testdata), or the row's own text (its Why).
	Source string
	// Mechanism and Failures: failures in the row's mechanism, and all its failures.
	Mechanism, Failures int
}

// Share is the run's share of failures in the mechanism.
func (r mechanismRun) Share() float64 { return float64(r.Mechanism) / float64(r.Failures) }

// mechanismShares are the recorded runs of every row that accepts several phases, by the row's
// variant name and disruption (mechanismKey); each run's failures by phase as its source gives
// them. The rows' texts (internal/matrix/rows.go) say more of each run.
var mechanismShares = map[string][]mechanismRun{
	// pinned-connection (also sigkill): every run of docs/matrix.md's tables.
	"ignore-sigterm-keepalive rollout-restart": {
		{"37a6655", 89, 89}, {"9e7ad37", 65, 72}, {"5c8fec1", 43, 72}, {"ed8a70e", 27, 70},
		{"9380efd", 61, 61}, {"29cc3a1", 74, 74}, {"97cc8d8", 58, 63}, {"9915c0b", 44, 57},
		{"b36d06d", 53, 61}, {"6360eb6", 48, 54}, {"e792f04", 54, 67}, {"d302316", 72, 78},
	},
	// in-flight-cut (also propagation, pinned-connection): the three make e2e-all runs whose
	// figures the row's text keeps (seven earlier runs: 74 to 98 %, counts not kept).
	"h2c-exit rollout-restart": {
		{"row text, e2e-all 1", 511, 520}, {"row text, e2e-all 2", 400, 404}, {"row text, e2e-all 3", 401, 530},
		{"make e2e-families 2026-11-29, run 1", 285, 332}, {"make e2e-families 2026-11-29, run 2", 249, 470},
	},
	// in-flight-cut (also propagation, pinned-connection): make e2e-families's runs of 2026-11-29.
	"http2-tls-exit rollout-restart": {
		{"row text, make e2e-families 2026-11-29, run 1", 325, 430}, {"make e2e-families 2026-11-29, run 2", 342, 430},
	},
	// in-flight-cut (also propagation).
	"grpc-exit rollout-restart": {
		{"internal/replay/testdata/kind-grpc.tar.gz", 495, 622},
		{"make e2e-families 2026-11-29, run 1", 337, 719}, {"make e2e-families 2026-11-29, run 2", 505, 728},
	},
	// connection-age (also in-flight-cut).
	"grpc-max-age rollout-restart": {
		{"internal/replay/testdata/kind-grpc.tar.gz", 100, 214},
	},
	// proxy-no-upstream (also proxy-propagation): every failure of the two runs the row's text
	// names was proxy-no-upstream; their counts were not kept, so no run is listed.
	"nginx-static-prestop-5s rollout-restart": nil,
	// proxy-propagation (also in-flight-cut): the three runs with 500 ms requests.
	"nginx-keepalive-exit rollout-restart": {
		{"row text, run 1 (internal/replay/testdata/kind-proxy.tar.gz)", 51, 101}, {"row text, run 2", 76, 129}, {"row text, run 3", 43, 93},
		{"make e2e-families 2026-11-29, run 1", 91, 127}, {"make e2e-families 2026-11-29, run 2", 67, 104},
	},
	// propagation (also in-flight-cut): examples/check's as-is row, the README's real run.
	"as-is rollout-restart": {
		{"README.md, a real run", 255, 255},
	},
}

// mechanismKey is a row's key in mechanismShares.
func mechanismKey(name string, d check.DisruptionKind) string { return name + " " + string(d) }

// mechanismFloor is the rule's share: the higher of 25 % and half the lowest recorded share.
func mechanismFloor() float64 {
	lowest := 1.0
	for _, runs := range mechanismShares {
		for _, r := range runs {
			lowest = min(lowest, r.Share())
		}
	}
	return max(0.25, lowest/2)
}
