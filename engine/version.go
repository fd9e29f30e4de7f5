package engine

import (
	"os"
	"runtime/debug"
	"strings"
	"time"
)

// modulePath is rollcheck's module, as the build info of a binary names it.
const modulePath = "github.com/rollcheck/rollcheck"

// version is the version a packager stamps at link time, for a build that carries no module
// version and no commit (a source archive, or -buildvcs=false):
//
//	go build -ldflags "-X github.com/rollcheck/rollcheck/engine.version=v1.2.3" ./cmd/rollcheck
var version string

// Version is rollcheck's version, which every row records and `rollcheck --version` prints:
// $ROLLCHECK_VERSION when set (make e2e sets it from git describe), else the version stamped
// with -ldflags -X (the variable version), else what the Go toolchain stamped into the binary
// (versionOf): a binary that go install built from a module version says that version.
func Version() string {
	if v := os.Getenv("ROLLCHECK_VERSION"); v != "" {
		return v
	}
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(bi)
}

// versionOf is rollcheck's version by a binary's build info:
//
//   - built as rollcheck's own main module with a module version: that version, as the
//     toolchain stamped it (go install …@v1.2.3 gives "v1.2.3"; a go build in a checkout gives
//     a tag or a pseudo-version, which names the commit, with "+dirty" for a modified tree);
//     "+dirty" is added when the tree was modified and the version does not say so;
//   - with no module version ("(devel)") but the commit the toolchain read from git: "dev-",
//     the commit's time (vcs.time, UTC, as a pseudo-version writes it) and the commit
//     (vcs.revision, 12 digits), and "+dirty" when vcs.modified: "dev-20260101120000-0123456789ab+dirty";
//     "dev" with no commit either (go run, a test binary, -buildvcs=false, a git worktree, where
//     the toolchain stamps nothing: golang/go#58218);
//   - built as another module that requires rollcheck (a user's program or suite): the version
//     it requires; the vcs settings are that module's commit, not rollcheck's, and are left out.
func versionOf(bi *debug.BuildInfo) string {
	if bi.Main.Path != modulePath {
		for _, m := range bi.Deps {
			if m.Path == modulePath && known(m.Version) {
				return m.Version
			}
		}
		return "dev"
	}
	var rev, at, dirty string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value[:min(12, len(kv.Value))]
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339Nano, kv.Value); err == nil {
				at = t.UTC().Format("20060102150405")
			}
		case "vcs.modified":
			if kv.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	v := bi.Main.Version
	switch {
	case known(v) && strings.HasSuffix(v, "+dirty"):
		return v
	case known(v):
		return v + dirty
	case rev == "":
		return "dev"
	case at == "":
		return "dev-" + rev + dirty
	}
	return "dev-" + at + "-" + rev + dirty
}

// known reports whether v is a module version, not the toolchain's "no version" marks.
func known(v string) bool { return v != "" && v != "(devel)" }
