package scaffold

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/internal/audit"
)

// One manifest, one preStop: init (Find, which check's Plan reads the same way) and audit read a
// `sh -c "sleep 5"` hook, and an httpGet with a sleep query, as the same known length. Before
// they shared check.PreStop.Duration, audit read 5 s and check and init an unknown hook.
func TestOneManifestOnePreStop(t *testing.T) {
	web, err := os.ReadFile("../../spec/testdata/web.yaml") // a Deployment with no lifecycle
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hook string
		want time.Duration
	}{
		{`exec: {command: [sh, -c, "sleep 5"]}`, 5 * time.Second},
		{`exec: {command: [/bin/busybox, sleep, "4"]}`, 4 * time.Second},
		{`httpGet: {path: "/prestop?sleep=3s", port: 8080}`, 3 * time.Second},
	} {
		file := filepath.Join(t.TempDir(), "app.yaml")
		manifest := string(web) + "        lifecycle: {preStop: {" + tc.hook + "}}\n"
		if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		files, err := ReadManifests(file)
		if err != nil {
			t.Fatal(err)
		}
		found, err := Find(files.Objects, "")
		if err != nil {
			t.Fatal(err)
		}
		initSays, initKnows := found.PreStop.Duration()
		inv, err := audit.ReadManifests(file)
		if err != nil {
			t.Fatal(err)
		}
		inv.Join()
		if len(inv.Workloads) != 1 {
			t.Fatalf("%s: audit found %d workloads", tc.hook, len(inv.Workloads))
		}
		auditSays := inv.Workloads[0].PreStop()
		if !initKnows || initSays != tc.want || !auditSays.Known() || auditSays.Sleep.D() != tc.want {
			t.Errorf("%s: init (and check) read %s (known %t), audit %s (known %t); want both %s", tc.hook, initSays, initKnows, auditSays.Sleep.D(), auditSays.Known(), tc.want)
		}
	}
}
