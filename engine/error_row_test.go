package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checktest"
	"github.com/rollcheck/rollcheck/internal/rowfile"
)

// A row that cannot run to the end is still returned, with status error and the reason, and
// written to the artifacts, so that the table counts it (a failed spec can never leave "N rows,
// N pass").
func TestRunErrorIsARow(t *testing.T) {
	p := checktest.WebPlan()
	// Nothing listens on port 1 of the loopback address: the cluster is unreachable.
	tgt := Target{RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second}, LoadURL: "http://127.0.0.1:1"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	row, err := Run(ctx, tgt, checktest.Resolve(t, p)[0], WithArtifacts(dir))
	if err == nil {
		t.Fatal("no error from an unreachable cluster")
	}
	if row == nil {
		t.Fatal("no row returned with the error")
	}
	if row.Verdict.Status != check.Error || !strings.Contains(row.Verdict.Reason, "127.0.0.1:1") {
		t.Errorf("verdict = %+v, want status error with the reason", row.Verdict)
	}
	if row.Config.Name != p.Variant.Name || row.Config.PreStop.String() != "exec:sh -c sleep 3" || row.Suite != p.Suite {
		t.Errorf("the row does not say what it was: %+v", row.Config)
	}
	// WithArtifacts: Run wrote the row itself, its error too.
	rows, err := rowfile.Read(dir)
	if err != nil || len(rows) != 1 || rows[0].Verdict.Status != check.Error {
		t.Errorf("read back %d rows (%v), want the error row Run wrote", len(rows), err)
	}
}

// A plan the caller did not resolve (check.Plan.Resolve, which refuses a bad one) is an error.
func TestRunNeedsAResolvedPlan(t *testing.T) {
	if row, err := Run(context.Background(), Target{}, nil); err == nil || row != nil {
		t.Fatalf("Run(nil) = %+v, %v; want an error", row, err)
	}
}
