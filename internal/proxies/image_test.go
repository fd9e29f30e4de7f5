package proxies

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseDepends(t *testing.T) {
	got := parseDepends(" libc6 (>= 2.34), libcrypt1 (>= 1:4.1.0), liblua5.3-0, libssl3:any (>= 3.0.0), debconf (>= 0.5) | debconf-2.0, , adduser")
	want := []string{"libc6", "libcrypt1", "liblua5.3-0", "libssl3", "debconf", "adduser"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseDepends = %q, want %q", got, want)
	}
}

func TestParseLdd(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibcrypt.so.1 => /lib/x86_64-linux-gnu/libcrypt.so.1 (0x00007fa2)\n" +
		"\tliblua5.3.so.0 => /tmp/x/extract/usr/lib/x86_64-linux-gnu/liblua5.3.so.0 (0x00007fa3)\n" +
		"\tlibopentracing-c-wrapper.so.0 => not found\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007fa2e)\n"
	paths, missing := parseLdd(out)
	if want := []string{"/lib/x86_64-linux-gnu/libcrypt.so.1", "/tmp/x/extract/usr/lib/x86_64-linux-gnu/liblua5.3.so.0", "/lib64/ld-linux-x86-64.so.2"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	if want := []string{"libopentracing-c-wrapper.so.0"}; !reflect.DeepEqual(missing, want) {
		t.Errorf("missing %q, want %q", missing, want)
	}
}

// fakeBin puts first on PATH the programs scripts names (shell script bodies), each logging its
// command line into the file it returns.
func fakeBin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	for name, body := range scripts {
		// One line a call: the tabs and newlines of an argument (a dpkg-query format) as spaces.
		script := "#!/bin/sh\nprintf '" + name + " %s\\n' \"$(printf '%s' \"$*\" | tr '\\t\\n' '  ')\" >>" + calls + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return calls
}

// A fake apt and dpkg: haproxy 2.6.12 depends on libc6 and libssl3 (installed), liblua5.3-0 (removed,
// its configuration left) and libopentracing-c-wrapper0 (not installed), and adduser (no
// library); the wrapper depends on libopentracing1 (not installed) and libstdc++6 (installed).
var fakeApt = map[string]string{
	"apt-cache": `[ "$1 $2" = "show --no-all-versions" ] || exit 99
shift 2
for p in "$@"; do case "$p" in
haproxy) printf 'Package: haproxy\nVersion: 2.6.12-1+deb12u4\nDepends: libc6 (>= 2.34), liblua5.3-0, libopentracing-c-wrapper0 (>= 1.1.0), libssl3 (>= 3.0.0), adduser\nPre-Depends: dpkg (>= 1.17.14)\n\n' ;;
liblua5.3-0) printf 'Package: liblua5.3-0\nVersion: 5.3.6-2\nDepends: libc6 (>= 2.14)\n\n' ;;
libopentracing-c-wrapper0) printf 'Package: libopentracing-c-wrapper0\nVersion: 1.1.3-3+b1\nDepends: libc6, libopentracing1 (>= 1.6.0), libstdc++6 (>= 11)\n\n' ;;
libopentracing1) printf 'Package: libopentracing1\nVersion: 1.6.0-4\nDepends: libc6, libstdc++6\n' ;;
nginx) printf 'Package: nginx\nVersion: 1.24.0-1\n\n' ;;
*) echo "E: No packages found" >&2; exit 100 ;;
esac; done`,
	"dpkg-query": `shift 3
rc=0
for p in "$@"; do case "$p" in
libc6) printf 'libc6\tii \t2.36-9\t, libgcc-s1\n' ;;
libgcc-s1) printf 'libgcc-s1\tii \t12.2.0-14\t, libc6\n' ;;
libssl3) printf 'libssl3\tii \t3.0.19-1\t, libc6 (>= 2.34)\n' ;;
libstdc++6) printf 'libstdc++6\tii \t12.2.0-14\t, libc6, libgcc-s1 | libgcc1\n' ;;
liblua5.3-0) printf 'liblua5.3-0\trc \t5.3.6-1\t, libc6\n' ;;
*) echo "dpkg-query: no packages found matching $p" >&2; rc=1 ;;
esac; done
exit $rc`,
	"apt-get": `exit 0`,
}

func TestDebPlan(t *testing.T) {
	fakeBin(t, fakeApt)
	plan, err := debPlan(context.Background(), "haproxy", "2.6.12", t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range plan {
		got = append(got, p.String())
	}
	want := []string{
		"haproxy=2.6.12-1+deb12u4 (download)",
		"libc6=2.36-9 (host)",
		"libgcc-s1=12.2.0-14 (host)",
		"liblua5.3-0=5.3.6-2 (download)",
		"libopentracing-c-wrapper0=1.1.3-3+b1 (download)",
		"libopentracing1=1.6.0-4 (download)",
		"libssl3=3.0.19-1 (host)",
		"libstdc++6=12.2.0-14 (host)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Another upstream version than the pinned one is refused, with apt's candidate named.
	if _, err := debPlan(context.Background(), "nginx", "1.22.1", t.Logf); err == nil || !strings.Contains(err.Error(), "1.24.0-1, not the pinned upstream version 1.22.1") {
		t.Errorf("nginx 1.24.0: %v", err)
	}
}

// When apt knows no candidate, apt-get update runs (logged with its time limit), and then the
// package is looked for again.
func TestDebPlanUpdatesLists(t *testing.T) {
	calls := fakeBin(t, map[string]string{"apt-cache": `echo "E: No packages found" >&2; exit 100`, "apt-get": "exit 0", "dpkg-query": "exit 1"})
	var logged []string
	_, err := debPlan(context.Background(), "haproxy", "2.6.12", func(f string, a ...any) { logged = append(logged, f) })
	if err == nil || !strings.Contains(err.Error(), "apt has no candidate for haproxy") {
		t.Errorf("err %v", err)
	}
	b, _ := os.ReadFile(calls)
	if want := "apt-cache show --no-all-versions haproxy\napt-get update -q\napt-cache show --no-all-versions haproxy\n"; string(b) != want {
		t.Errorf("calls:\n%s\nwant:\n%s", b, want)
	}
	if len(logged) == 0 || !strings.HasPrefix(logged[0], "waiting up to %s for: %s") {
		t.Errorf("logged %q", logged)
	}
}

// The tag changes with every input: a Debian version, the go version, the Dockerfile, the
// entrypoint's source.
func TestInputsHash(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustLookup(t, HAProxy).image
	plan := []debPackage{{name: "haproxy", version: "2.6.12-1+deb12u4"}, {name: "libc6", version: "2.36-9", host: true}}
	hash := func(plan []debPackage, goVersion, dockerfile string) string {
		t.Helper()
		h, err := inputsHash(HAProxy, r, plan, goVersion, dockerfile, dir, []string{"main.go"})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash(plan, "go1.26.8", "FROM scratch\n")
	if again := hash(plan, "go1.26.8", "FROM scratch\n"); again != base || len(base) != 64 {
		t.Fatalf("hash %q then %q", base, again)
	}
	other := []debPackage{plan[0], {name: "libc6", version: "2.36-10", host: true}}
	for name, h := range map[string]string{
		"a library's version": hash(other, "go1.26.8", "FROM scratch\n"),
		"go's version":        hash(plan, "go1.26.9", "FROM scratch\n"),
		"the Dockerfile":      hash(plan, "go1.26.8", "FROM scratch\nUSER 1\n"),
	} {
		if h == base {
			t.Errorf("%s changed, the hash did not", name)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if hash(plan, "go1.26.8", "FROM scratch\n") == base {
		t.Error("the entrypoint changed, the hash did not")
	}
}

func TestDockerfile(t *testing.T) {
	df := mustLookup(t, Nginx).image.dockerfile(Nginx, []debPackage{{name: "nginx", version: "1.22.1-9+deb12u11"}})
	for _, want := range []string{
		"FROM scratch\n", "COPY rootfs/ /\n", "USER 65532:65532\n", "EXPOSE 8080\n",
		`org.opencontainers.image.version="1.22.1-9+deb12u11"`,
		`ENTRYPOINT ["/entry","-in","/etc/proxy/nginx.conf","-out","/tmp/nginx.conf","--","/usr/sbin/nginx","-e","stderr","-c","/tmp/nginx.conf"]`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q:\n%s", want, df)
		}
	}
	df = mustLookup(t, Caddy).image.dockerfile(Caddy, nil)
	for _, want := range []string{"ENV XDG_DATA_HOME=/tmp\n", `org.opencontainers.image.version="v2.11.9"`, `"/usr/bin/caddy","run","--config","/tmp/Caddyfile","--adapter","caddyfile"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("Caddy's Dockerfile lacks %q:\n%s", want, df)
		}
	}
}

func TestBaseRootfs(t *testing.T) {
	root := t.TempDir()
	if err := baseRootfs(root); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, "tmp"))
	if err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v; want drwxrwxrwt", st.Mode(), err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if !strings.Contains(string(b), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd:\n%s", b)
	}
	if l, err := os.Readlink(filepath.Join(root, "var/run")); err != nil || l != "../run" {
		t.Errorf("/var/run -> %q, %v", l, err)
	}
}

// With nothing changed, EnsureImage finds its image in the engine and builds nothing: it asks
// apt and dpkg (the plan), docker image inspect, and nothing else.
func TestEnsureImageCached(t *testing.T) {
	scripts := map[string]string{"docker": "exit 0"}
	for k, v := range fakeApt {
		scripts[k] = v
	}
	calls := fakeBin(t, scripts)
	t.Setenv("ROLLCHECK_CACHE", t.TempDir())
	var logged []string
	ref, err := EnsureImage(context.Background(), HAProxy, func(f string, a ...any) { logged = append(logged, f) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref, "rollcheck/proxy-haproxy:") || !tagForm.MatchString(strings.TrimPrefix(ref, "rollcheck/proxy-haproxy:")) {
		t.Errorf("ref %q", ref)
	}
	b, _ := os.ReadFile(calls)
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "apt-cache ") && !strings.HasPrefix(l, "dpkg-query ") && l != "docker image inspect "+ref {
			t.Errorf("unexpected call %q", l)
		}
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "nothing built") {
		t.Errorf("logged %q", logged)
	}
	if _, err := EnsureImage(context.Background(), "envoy", nil); err == nil {
		t.Error("EnsureImage(envoy): no error")
	}
}

// prune keeps the current image and the imagesKept-1 newest others of the tag form, and leaves
// other tags alone.
func TestPrune(t *testing.T) {
	calls := fakeBin(t, map[string]string{"docker": `[ "$2" = ls ] && printf 'rollcheck/proxy-nginx:aaaaaaaaaaaa\nrollcheck/proxy-nginx:cccccccccccc\nrollcheck/proxy-nginx:dev\nrollcheck/proxy-nginx:bbbbbbbbbbbb\nrollcheck/proxy-nginx:dddddddddddd\n'; exit 0`})
	prune(context.Background(), "rollcheck/proxy-nginx", "rollcheck/proxy-nginx:cccccccccccc", t.Logf)
	b, _ := os.ReadFile(calls)
	want := "docker image ls --format {{.Repository}}:{{.Tag}} rollcheck/proxy-nginx\ndocker image rm rollcheck/proxy-nginx:dddddddddddd\n"
	if string(b) != want {
		t.Errorf("calls:\n%s\nwant:\n%s", b, want)
	}
}

// run logs what it waits for before each try, stops a try at its limit, retries, and says in
// the error how many tries of how long it gave.
func TestRunRetries(t *testing.T) {
	retryPause = time.Millisecond
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, f) }
	_, err := run(context.Background(), logf, command{what: "a stalled download", limit: 200 * time.Millisecond, tries: 2, argv: []string{"sleep", "5"}})
	if err == nil || !strings.Contains(err.Error(), "a stalled download: gave up after 2 tries of at most 200ms") || !strings.Contains(err.Error(), "no result within 200ms") {
		t.Errorf("err %v", err)
	}
	if len(logged) != 4 {
		t.Errorf("logged %q; want a wait and a failure per try", logged)
	}
	out, err := run(context.Background(), logf, command{what: "echo", limit: time.Second, argv: []string{"sh", "-c", "echo hi; echo err >&2"}})
	if err != nil || out != "hi\n" {
		t.Errorf("run echo: %q, %v", out, err)
	}
	if _, err := run(context.Background(), logf, command{what: "fail", limit: time.Second, argv: []string{"sh", "-c", "echo why >&2; exit 3"}}); err == nil || !strings.Contains(err.Error(), "exit status 3: why") {
		t.Errorf("run fail: %v", err)
	}
}

// mustLookup is p's entry in the table.
func mustLookup(t *testing.T, p Proxy) entry {
	t.Helper()
	e, ok := lookup(p)
	if !ok {
		t.Fatalf("%s is not in the table", p)
	}
	return e
}
