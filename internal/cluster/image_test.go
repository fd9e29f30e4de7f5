package cluster

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPrunableAppImages(t *testing.T) {
	const (
		t1 = "rollcheck/app:20250101-100000-aaaaaaaaaaaa"
		t2 = "rollcheck/app:20250102-100000-bbbbbbbbbbbb"
		t3 = "rollcheck/app:20250103-100000-cccccccccccc"
		t4 = "rollcheck/app:20250104-100000-dddddddddddd"
		t5 = "rollcheck/app:20250105-100000-eeeeeeeeeeee"
	)
	cases := []struct {
		name    string
		refs    []string
		current string
		want    []string
	}{
		{"nothing to prune", []string{t5, t4}, t5, nil},
		{"keeps the new one and the two newest others", []string{t1, t5, t3, t2, t4}, t5, []string{t2, t1}},
		{"never the one just built, even if older", []string{t1, t2, t3, t4, t5}, t1, []string{t3, t2}},
		{"just built, not listed yet", []string{t1, t2, t3}, t5, []string{t1}},
		{"other tags and repositories left alone", []string{
			t1, t2, t3, t4, "rollcheck/app:dev", "rollcheck/app:<none>", "other/app:20250101-100000-aaaaaaaaaaaa",
			"rollcheck/kind-node:v1.34.3-0123456789ab", "<none>:<none>",
		}, t5, []string{t2, t1}},
		{"duplicates counted once", []string{t1, t1, t2, t2, t3, t3}, t5, []string{t1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := prunableAppImages(c.refs, c.current, 3); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("prunable %v, want %v", got, c.want)
			}
		})
	}
	if got := prunableAppImages([]string{t1, t2}, t5, 1); !reflect.DeepEqual(got, []string{t2, t1}) {
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
