package cluster

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// refs are given as docker image ls lists them: newest first.
func TestPrunableAppImages(t *testing.T) {
	const (
		t1 = "rollcheck/app:20250101-100000-aaaaaaaaaaaa" // the form of earlier versions' tags
		t2 = "rollcheck/app:bbbbbbbbbbbb"
		t3 = "rollcheck/app:cccccccccccc"
		t4 = "rollcheck/app:dddddddddddd"
		t5 = "rollcheck/app:eeeeeeeeeeee"
	)
	cases := []struct {
		name    string
		refs    []string
		current string
		want    []string
	}{
		{"nothing to prune", []string{t5, t4}, t5, nil},
		{"keeps the new one and the two newest others", []string{t5, t4, t3, t2, t1}, t5, []string{t2, t1}},
		{"never the current one, even if older (reused)", []string{t5, t4, t3, t2, t1}, t1, []string{t3, t2}},
		{"just built, not listed yet", []string{t3, t2, t1}, t5, []string{t1}},
		{"other tags and repositories left alone", []string{
			t4, t3, "rollcheck/app:dev", t2, "rollcheck/app:<none>", t1, "other/app:aaaaaaaaaaaa",
			"rollcheck/kind-node:v1.34.3-0123456789ab", "<none>:<none>",
		}, t5, []string{t2, t1}},
		{"duplicates counted once", []string{t3, t3, t2, t2, t1, t1}, t5, []string{t1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := prunableImages(AppImageRepo, c.refs, c.current, 3); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("prunable %v, want %v", got, c.want)
			}
		})
	}
	if got := prunableImages(AppImageRepo, []string{t2, t1}, t5, 1); !reflect.DeepEqual(got, []string{t2, t1}) {
		t.Fatalf("keep 1: prunable %v, want both older", got)
	}
}

// TestPruneAppImages runs the pruning against a fake docker CLI: it lists, removes what the
// selection says, and shrugs off an image a container uses.
func TestPruneAppImages(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fakeTool(t, dir, "docker", `echo "$*" >>`+calls+`
case "$1 $2" in
  "image ls") printf '%s\n' rollcheck/app:20250105-100000-eeeeeeeeeeee rollcheck/app:20250104-100000-dddddddddddd \
      rollcheck/app:20250103-100000-cccccccccccc rollcheck/app:20250102-100000-bbbbbbbbbbbb rollcheck/app:20250101-100000-aaaaaaaaaaaa ;;
  "image rm") case "$3" in *bbbb*) echo "conflict: unable to remove repository reference (must force) - container 0123 is using its referenced image" >&2; exit 1 ;; esac ;;
  *) exit 1 ;;
esac
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var logs []string
	PruneAppImages(context.Background(), "rollcheck/app:20250105-100000-eeeeeeeeeeee", func(f string, a ...any) {
		logs = append(logs, f)
	})
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	want := "image ls --format {{.Repository}}:{{.Tag}} rollcheck/app\n" +
		"image rm rollcheck/app:20250102-100000-bbbbbbbbbbbb\n" +
		"image rm rollcheck/app:20250101-100000-aaaaaaaaaaaa\n"
	if string(b) != want {
		t.Fatalf("docker calls:\n%s\nwant:\n%s", b, want)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "pruned") {
		t.Fatalf("logs %q, want one line saying what was pruned", logs)
	}
}

// A prebuilt load image (ROLLCHECK_LOAD_IMAGE) the local Docker engine does not have is taken
// as it is: nothing is built, nothing loaded.
func TestLoadPodImagePrebuilt(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fakeTool(t, dir, "docker", `echo "docker $*" >>`+calls+`
exit 1
`)
	fakeTool(t, dir, "go", `echo "go $*" >>`+calls+`
exit 1
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	f := &fakeKind{}
	c := &Cluster{Options: Options{Name: "rollcheck", LoadImage: "registry.example/rollcheck/load:v1", Logf: t.Logf}, kind: f}
	ref, err := c.LoadPodImage(context.Background())
	if err != nil || ref != "registry.example/rollcheck/load:v1" {
		t.Fatalf("LoadPodImage = %q, %v", ref, err)
	}
	b, _ := os.ReadFile(calls)
	if string(b) != "docker image inspect registry.example/rollcheck/load:v1\n" || len(f.calls) > 0 {
		t.Fatalf("calls %q, kind %v: want one look into the Docker engine only", b, f.calls)
	}
}
