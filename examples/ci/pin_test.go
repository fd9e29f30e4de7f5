package ci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/internal/fill"
	"github.com/rollcheck/rollcheck/spec"
)

// A check file as the README or an example shows it to users. complete: a file that runs as it
// is (its manifests are beside it), so its values are validated too (spec.Check.Plans), not only
// its fields decoded.
type checkFile struct {
	name     string
	data     []byte
	dir      string // what its relative paths are relative to
	path     string // its file, for a complete one
	complete bool
}

var (
	yamlBlock  = regexp.MustCompile("(?ms)^```yaml\n(.*?)^```")
	checkKind  = regexp.MustCompile(`(?m)^kind: Check\s*$`)
	shownField = regexp.MustCompile(`(?m)^(\s*)# ([a-zA-Z]+: .*)$`)
)

// checkFiles are the check files users copy: the README's ```yaml blocks of kind Check, each as
// shown and, when it shows fields in comments (`# stopSignal: SIGQUIT`), with them uncommented;
// and every *.yaml of kind Check under examples/.
func checkFiles(t *testing.T) []checkFile {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var files []checkFile
	for i, m := range yamlBlock.FindAllSubmatch(readme, -1) {
		if !checkKind.Match(m[1]) {
			continue
		}
		name := fmt.Sprintf("README.md's check file %d", i+1)
		files = append(files, checkFile{name: name, data: m[1], dir: "../.."})
		if shown := shownField.ReplaceAll(m[1], []byte("$1$2")); !bytes.Equal(shown, m[1]) {
			files = append(files, checkFile{name: name + " with its commented fields", data: shown, dir: "../.."})
		}
	}
	if len(files) == 0 {
		t.Fatal("README.md: no ```yaml block of kind: Check")
	}
	readmeFiles := len(files)
	err = filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".yaml" {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && checkKind.Match(b) {
			files = append(files, checkFile{name: filepath.Join("examples", strings.TrimPrefix(p, "../")), data: b,
				dir: filepath.Dir(p), path: p, complete: true})
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files)-readmeFiles < 3 {
		t.Fatalf("found %d check files under examples/: the walk missed them", len(files)-readmeFiles)
	}
	return append(files, checkFile{name: "a check file with every field docs/check-file.md documents", data: everyField(t), dir: "."})
}

// everyField is a check file that sets every field of spec.Check, each list with one item: what
// docs/check-file.md documents (it is generated from these types), so that a pinned version
// older than a documented field refuses it ("unknown field"). Its values decode; they need not
// validate.
func everyField(t *testing.T) []byte {
	t.Helper()
	var c spec.Check
	fill.Every(reflect.ValueOf(&c).Elem())
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// Every check file the README and the examples show is one this tree's spec package takes.
func TestShownCheckFilesParse(t *testing.T) {
	for _, f := range checkFiles(t) {
		c, err := spec.Parse(f.data, f.dir)
		if err == nil && f.complete {
			_, _, err = c.Plans()
		}
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
		}
	}
}

// pincheck is the program the pinned commit's spec package is built into: for each argument,
// PATH or plans:PATH, a line PATH<tab>the problem when spec.Load (and then Plans) refuses it.
const pincheck = `package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/rollcheck/rollcheck/spec"
)

func main() {
	for _, a := range os.Args[1:] {
		path, plans := strings.CutPrefix(a, "plans:")
		c, err := spec.Load(path)
		if err == nil && plans {
			_, _, err = c.Plans()
		}
		if err != nil {
			fmt.Printf("%s\t%s\n", path, strings.Join(strings.Fields(err.Error()), " "))
		}
	}
}
`

// The rollcheck the workflow installs takes every check file the README and the examples show
// (check files are decoded strictly: a field it does not know is an error). The test builds
// the pinned commit's own spec package, from this repository's history, and has it load each:
// what a user who copies the workflow and a check file from the README gets.
func TestPinnedVersionTakesTheShownCheckFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the pinned commit's spec package")
	}
	v, commit := pinnedCommit(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("git", "-C", "../..", "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := archive.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s | tar -x: %v\n%s", commit, err, out)
	}
	if err := archive.Wait(); err != nil {
		t.Fatalf("git archive %s: %v", commit, err)
	}
	main := filepath.Join(src, "internal", "pincheck", "main.go")
	if err := os.MkdirAll(filepath.Dir(main), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(main, []byte(pincheck), 0o644); err != nil {
		t.Fatal(err)
	}
	// -trimpath: the build cache keeps the commit's packages from one run to the next.
	bin := filepath.Join(t.TempDir(), "pincheck")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./internal/pincheck")
	build.Dir, build.Env = src, append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the spec package of %s (ROLLCHECK_PIN %s): %v\n%s", commit[:12], v, err, out)
	}

	dir := t.TempDir()
	var args []string
	names := map[string]string{}
	for i, f := range checkFiles(t) {
		p := filepath.Join(dir, fmt.Sprintf("check-%d.yaml", i))
		if f.complete {
			p, _ = filepath.Abs(f.path)
			args = append(args, "plans:"+p)
		} else if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		} else {
			args = append(args, p)
		}
		names[p] = f.name
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("the spec package of %s: %v", commit[:12], err)
	}
	refused := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if p, problem, ok := strings.Cut(l, "\t"); ok {
			refused++
			t.Errorf("%s: rollcheck %s refuses it: %s", names[p], v, strings.TrimPrefix(problem, p+": "))
		}
	}
	if refused > 0 {
		t.Errorf("ROLLCHECK_PIN %s in examples/ci/rollcheck.yaml is older than what the README, the examples and docs/check-file.md show: "+
			"pin a commit of main that takes them, such as the newest (this checkout's HEAD is %s; `make release` prints it)", v, headPseudoVersion(t))
		return
	}
	t.Logf("rollcheck %s takes all %d check files", v, len(args))
}

// pinnedCommit is the workflow's ROLLCHECK_PIN and the full hash of the commit it names.
func pinnedCommit(t *testing.T) (version, commit string) {
	t.Helper()
	v := readWorkflow(t).Env["ROLLCHECK_PIN"]
	return v, commitOf(t, "ROLLCHECK_PIN", v)
}

// commitOf is the full hash of the commit a version names (a release tag's, or a
// pseudo-version's); what says where the version is written. A commit missing from a clone that
// lacks history (a shallow clone, a source archive) skips the test, saying so; from a full clone,
// or in CI (which clones main with its whole history), it fails the test.
func commitOf(t *testing.T, what, v string) string {
	t.Helper()
	var rev string
	switch m := pseudoVersion.FindStringSubmatch(v); {
	case releaseTag.MatchString(v):
		rev = "refs/tags/" + v
	case m != nil:
		rev = m[2]
	default:
		t.Fatalf("%s %q: want a release tag vX.Y.Z or a pseudo-version v0.0.0-<yyyymmddhhmmss>-<12 hex digits>", what, v)
	}
	full, err := git(t, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		msg := fmt.Sprintf("%s %s: no commit %s in this clone", what, v, strings.TrimPrefix(rev, "refs/tags/"))
		if shallow, err := git(t, "rev-parse", "--is-shallow-repository"); (err == nil && shallow == "false") || os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg + ", which is shallow or no git repository: CI, which clones main with its history, checks it")
	}
	return full
}

// checkVersion checks that a version users are told to install exists: a release tag of this
// repository, or the pseudo-version of a commit on this branch's history (the form go install
// accepts: v0.0.0, the commit's time in UTC, its first 12 hex digits). It returns the commit.
func checkVersion(t *testing.T, what, v string) string {
	t.Helper()
	full := commitOf(t, what, v)
	if _, err := git(t, "merge-base", "--is-ancestor", full, "HEAD"); err != nil {
		t.Errorf("%s %s: commit %s is not in this branch's history", what, v, full[:12])
	}
	if m := pseudoVersion.FindStringSubmatch(v); m != nil {
		if want := commitTime(t, full); m[1] != want {
			t.Errorf("%s %s: commit %s was made at %s UTC: want v0.0.0-%s-%s", what, v, m[2], want, want, m[2])
		}
	}
	return full
}

// commitTime is when the commit rev was made, in UTC, as a pseudo-version writes it.
func commitTime(t *testing.T, rev string) string {
	t.Helper()
	ts, err := git(t, "show", "-s", "--format=%ct", rev)
	if err != nil {
		t.Fatalf("git show %s: %v", rev, err)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(sec, 0).UTC().Format("20060102150405")
}

// headPseudoVersion is HEAD's pseudo-version (v0.0.0-<time>-<commit>), for a failure message.
func headPseudoVersion(t *testing.T) string {
	t.Helper()
	head, err := git(t, "rev-parse", "HEAD")
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("v0.0.0-%s-%s", commitTime(t, head), head[:12])
}

var changelogSection = regexp.MustCompile("(?m)^## ([0-9]{4})-([0-9]{2})-([0-9]{2}) — `([^`]*)`$")

// CHANGELOG.md's dated sections name versions that exist, made on the day they say, newest first
// (each one's commit has the older ones'); the workflow installs at least the newest, so a user
// who copies it has every change the changelog names with a version.
func TestChangelogNamesVersionsThatExist(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := changelogSection.FindAllStringSubmatch(string(b), -1)
	if len(sections) == 0 {
		t.Fatal("CHANGELOG.md: no section headed `## YYYY-MM-DD — `version``")
	}
	var newer string
	for _, m := range sections {
		what := "CHANGELOG.md's section of " + m[1] + "-" + m[2] + "-" + m[3]
		full := checkVersion(t, what, m[4])
		if pv := pseudoVersion.FindStringSubmatch(m[4]); pv != nil && pv[1][:8] != m[1]+m[2]+m[3] {
			t.Errorf("%s names %s, a commit of another day", what, m[4])
		}
		if newer == "" {
			pin, pinned := pinnedCommit(t)
			if _, err := git(t, "merge-base", "--is-ancestor", full, pinned); err != nil {
				t.Errorf("examples/ci/rollcheck.yaml installs %s, older than CHANGELOG.md's newest version %s", pin, m[4])
			}
		} else if _, err := git(t, "merge-base", "--is-ancestor", full, newer); err != nil {
			t.Errorf("%s: %s is not in the history of the section above it", what, m[4])
		}
		newer = full
	}
}
