package cluster

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/check"
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

// The tag of a build is the build context's hash: the same content, the same tag; of the form
// pruning knows, never :latest. Each repository is pruned apart.
func TestImageTag(t *testing.T) {
	sum := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ref := imageTag(LoadImageRepo, sum)
	if ref != "rollcheck/load:0123456789ab" {
		t.Fatalf("tag %q", ref)
	}
	repo, tag, _ := strings.Cut(ref, ":")
	if repo != LoadImageRepo || !imageTagForm.MatchString(tag) || check.ValidLoadImage(ref) != nil {
		t.Fatalf("%q: not a tag of the form pruning knows, or not an image reference", ref)
	}
	refs := []string{"rollcheck/load:cccccccccccc", "rollcheck/load:20250102-100000-bbbbbbbbbbbb",
		"rollcheck/app:aaaaaaaaaaaa", "rollcheck/load:aaaaaaaaaaaa"}
	if got, want := prunableImages(LoadImageRepo, refs, ref, 3), []string{refs[3]}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prunable load images %v, want %v (never an app image)", got, want)
	}
}

// The hash covers every file of the build context and where one ends.
func TestFilesHash(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, ab := write("a", "FROM scratch\n"), write("b", "binary"), write("ab", "FROM scratch\nbinary")
	h1, err := filesHash(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := filesHash(a, b); h2 != h1 {
		t.Fatalf("the same files hash to %s and %s", h1, h2)
	}
	if h3, _ := filesHash(ab, write("empty", "")); h3 == h1 {
		t.Fatal("files cut elsewhere hash the same")
	}
	write("b", "binary 2")
	if h4, _ := filesHash(a, b); h4 == h1 {
		t.Fatal("a changed binary hashes the same")
	}
}

// TestBuildLoadImage runs the load image's build against fake go and docker CLIs: the binary
// is built static from cmd/rollcheck-load, the build context holds it and the Dockerfile next to
// the main, the tag is the context's hash, and then the image goes to the nodes (none here). A
// second build of the same content finds its tag in the Docker engine and builds nothing.
func TestBuildLoadImage(t *testing.T) {
	dir := t.TempDir()
	calls, have := filepath.Join(dir, "calls"), filepath.Join(dir, "have")
	src, err := filepath.Abs("../../cmd/rollcheck-load")
	if err != nil {
		t.Fatal(err)
	}
	fakeTool(t, dir, "go", `echo "CGO_ENABLED=$CGO_ENABLED go $*" >>`+calls+`
case "$1" in
  list) echo "`+src+`" ;;
  build) while [ $# -gt 1 ]; do [ "$1" = -o ] && out=$2; shift; done; echo "static binary" >"$out" ;;
  *) exit 1 ;;
esac
`)
	// The fake engine has the images docker build tagged (listed in $have).
	fakeTool(t, dir, "docker", `echo "docker $*" >>`+calls+`
case "$1 $2" in
  "build -q") ls >>`+calls+`; grep -q '^COPY rollcheck-load /rollcheck-load$' Dockerfile || exit 1; echo "$4" >>`+have+` ;;
  "image ls") ;;
  "image inspect") [ "$3" = -f ] && { echo sha256:0123; exit 0; }; grep -qx "$3" `+have+` 2>/dev/null ;;
  *) exit 1 ;;
esac
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	f := &fakeKind{}
	c := &Cluster{Options: Options{Name: "rollcheck", Logf: t.Logf}, kind: f}
	_, err = c.BuildLoadImage(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no nodes") {
		t.Fatalf("error %v, want the fake's cluster to have no nodes to load into", err)
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^CGO_ENABLED=\S* go list -f \{\{\.Dir\}\} ` + regexp.QuoteMeta(LoadPackage) + `
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags -s -w -o \S+/rollcheck-load ` + regexp.QuoteMeta(LoadPackage) + `
docker image inspect (rollcheck/load:[0-9a-f]{12})
docker build -q -t (rollcheck/load:[0-9a-f]{12}) \.
Dockerfile
rollcheck-load
docker image ls --format \{\{\.Repository\}\}:\{\{\.Tag\}\} rollcheck/load
docker image inspect -f \{\{\.Id\}\} (rollcheck/load:\S+)
$`)
	m := want.FindSubmatch(b)
	if m == nil || string(m[1]) != string(m[2]) || string(m[2]) != string(m[3]) {
		t.Fatalf("calls:\n%s\nwant them to match, one tag throughout:\n%s", b, want)
	}
	ref := string(m[1])

	// The same content again: the same tag, found, not built again.
	if err := os.Remove(calls); err != nil {
		t.Fatal(err)
	}
	got, err := BuildLoadPodImage(context.Background(), t.Logf)
	if err != nil || got != ref {
		t.Fatalf("BuildLoadPodImage = %q, %v; want %q", got, err, ref)
	}
	b, _ = os.ReadFile(calls)
	if strings.Contains(string(b), "docker build") || !strings.HasSuffix(string(b), "docker image inspect "+ref+"\n") {
		t.Fatalf("calls:\n%s\nwant the binary built, its tag found, no docker build and nothing loaded", b)
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
