package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// ProvideLoadImage: ROLLCHECK_LOAD_IMAGE's image is taken as it is, into no cluster when
// rollcheck's kind cluster does not exist (which is said) or when told not to load (then the
// cluster is not even looked for); an archive is made in process and written, asking no Docker
// engine and no cluster.
func TestProvideLoadImage(t *testing.T) {
	calls := failingDocker(t)
	useExecutable(t, staticExe(t))
	var lines []string
	logf := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	o := Options{Name: "rollcheck-test", LoadImage: "registry.example/rollcheck/load:v1", Logf: logf}
	for _, tc := range []struct {
		name  string
		to    LoadImageTo
		calls []string // kind's
	}{
		{"no cluster", LoadImageTo{}, []string{"List"}},
		{"--no-load", LoadImageTo{NoLoad: true}, nil},
	} {
		f := &fakeKind{clusters: []string{"other-cluster"}}
		useFakeKind(t, f)
		lines = nil
		ref, err := ProvideLoadImage(context.Background(), o, tc.to)
		if err != nil || ref != o.LoadImage {
			t.Errorf("%s: %q, %v; want %q", tc.name, ref, err, o.LoadImage)
		}
		said := slices.Contains(lines, `no kind cluster "rollcheck-test": the image is loaded into no cluster`)
		if !slices.Equal(f.calls, tc.calls) || said != (tc.calls != nil) {
			t.Errorf("%s: kind calls %q, logged %q; want calls %q, and the cluster said missing when looked for", tc.name, f.calls, lines, tc.calls)
		}
	}

	f := &fakeKind{clusters: []string{"rollcheck-test"}}
	useFakeKind(t, f)
	archive := filepath.Join(t.TempDir(), "load.tar")
	ref, err := ProvideLoadImage(context.Background(), o, LoadImageTo{Archive: archive, Arch: runtime.GOARCH})
	if err != nil || !isOwnRef(ref) || !strings.HasPrefix(ref, LoadImageRepo+":") {
		t.Fatalf("archive: %q, %v; want a content tag of %s", ref, err, LoadImageRepo)
	}
	if st, err := os.Stat(archive); err != nil || st.Size() == 0 {
		t.Errorf("archive: %v", err)
	}
	if b, _ := os.ReadFile(calls); len(b) > 0 || len(f.calls) > 0 {
		t.Errorf("archive: docker calls %q, kind calls %q; want none", b, f.calls)
	}
}
