//go:build e2e

package gotest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/kindcluster"
)

// TestRollout acquires the kind cluster the ROLLCHECK_* knobs describe (rollcheck's own,
// reused when it runs), builds the sample app's image into it, runs one row and fails unless
// the verdict is pass. The row goes to $ARTIFACTS/gotest (else _artifacts/gotest).
func TestRollout(t *testing.T) {
	// Within go test's -timeout (10 minutes unless told), keeping a minute for the release.
	limit := 15 * time.Minute
	if d, ok := t.Deadline(); ok {
		limit = time.Until(d) - time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	art := os.Getenv("ARTIFACTS")
	if art == "" {
		art = "_artifacts"
	}
	art = filepath.Join(art, "gotest")

	kc, err := kindcluster.Acquire(ctx,
		kindcluster.FromEnv(), // ROLLCHECK_NODE_IMAGE, ROLLCHECK_KEEP_CLUSTER, …
		kindcluster.WithLogger(t.Logf),
		kindcluster.WithLogsDir(filepath.Join(art, "cluster-logs")))
	if err != nil {
		t.Fatalf("a kind cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			kc.MarkFailed() // the cluster's logs go to the logs directory
		}
		if err := kc.Release(context.Background()); err != nil {
			t.Errorf("release the cluster: %v", err)
		}
	})

	image, err := kc.SampleAppImage(ctx)
	if err != nil {
		t.Fatalf("the sample app's image: %v", err)
	}
	plan, err := rolloutPlan(image).Resolve() // TestPlan checks it without a cluster
	if err != nil {
		t.Fatalf("the plan is refused: %v", err)
	}
	// The row goes to art/rows, however it ended: rollcheck report art renders it.
	row, err := engine.Run(ctx, kc.Target(), plan, engine.WithArtifacts(art))
	if row != nil {
		t.Logf("row in %s: %s", filepath.Join(art, "rows"), row.Summary)
	}
	if err != nil {
		t.Fatalf("the row did not run to the end: %v", err)
	}
	if row.Verdict.Status != check.Pass {
		t.Fatalf("%s: %s, want pass: %s", row.Config, row.Verdict.Status, row.Verdict.Reason)
	}
	t.Logf("%s: %s: %s", row.Config, row.Verdict.Status, row.Verdict.Reason)
}
