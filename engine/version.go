package engine

import (
	"os"
	"runtime/debug"
	"strings"
)

// modulePath is rollcheck's module, as the build info of a binary names it.
const modulePath = "github.com/rollcheck/rollcheck"

// Version is rollcheck's version, which every row records and `rollcheck --version` prints:
// $ROLLCHECK_VERSION when set (make e2e sets it from git describe), else what the Go toolchain
// stamped into the binary (versionOf): a binary that go install built from a module version
// says that version.
func Version() string {
	if v := os.Getenv("ROLLCHECK_VERSION"); v != "" {
		return v
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionOf(bi)
}

// versionOf is rollcheck's version by a binary's build info:
//
//   - built as rollcheck's own main module: its module version (go install …@v1.2.3 gives
//     "v1.2.3"; a go build in a checkout gives a pseudo-version, which names the commit
//     already), with the commit the toolchain read from git (vcs.revision, 12 digits, and
//     "-dirty" when vcs.modified) appended when the version does not name it: "v1.2.3+0123456789ab";
//     with no module version ("(devel)"), "dev-0123456789ab[-dirty]", or "dev" with no commit either;
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
	rev, dirty := "", ""
	for _, kv := range bi.Settings {
		switch {
		case kv.Key == "vcs.revision" && len(kv.Value) >= 12:
			rev = kv.Value[:12]
		case kv.Key == "vcs.modified" && kv.Value == "true":
			dirty = "-dirty"
		}
	}
	v := bi.Main.Version
	switch {
	case !known(v) && rev == "":
		return "dev"
	case !known(v):
		return "dev-" + rev + dirty
	case rev == "" || strings.Contains(v, rev):
		return v
	}
	return v + "+" + rev + dirty
}

// known reports whether v is a module version, not the toolchain's "no version" marks.
func known(v string) bool { return v != "" && v != "(devel)" }
