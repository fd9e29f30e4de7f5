package engine

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	main := func(v string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: v}, Settings: s}
	}
	user := &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
		Deps:     []*debug.Module{{Path: "golang.org/x/net", Version: "v0.1.0"}, {Path: modulePath, Version: "v0.4.0"}},
		Settings: vcs("fedcba9876543210fedcba9876543210fedcba98", "true")}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install @version", main("v1.2.3", nil), "v1.2.3"},
		{"go build in a checkout (pseudo-version names the commit)", main("v0.0.0-20260101120000-0123456789ab+dirty", vcs(rev, "true")), "v0.0.0-20260101120000-0123456789ab+dirty"},
		{"a version and a commit it does not name", main("v1.2.3", vcs(rev, "false")), "v1.2.3+0123456789ab"},
		{"a version and a modified tree", main("v1.2.3", vcs(rev, "true")), "v1.2.3+0123456789ab-dirty"},
		{"no version, a commit", main("(devel)", vcs(rev, "false")), "dev-0123456789ab"},
		{"no version, a modified tree", main("(devel)", vcs(rev, "true")), "dev-0123456789ab-dirty"},
		{"no version, no commit (go run, a test binary)", main("(devel)", nil), "dev"},
		{"a user's module that requires rollcheck: its version, not the user's commit", user, "v0.4.0"},
		{"a user's module, rollcheck not listed", &debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}}, "dev"},
	} {
		if got := versionOf(tc.bi); got != tc.want {
			t.Errorf("%s: versionOf = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// ROLLCHECK_VERSION, which make e2e sets from git describe, comes before the build info.
func TestVersionEnv(t *testing.T) {
	t.Setenv("ROLLCHECK_VERSION", "v9.9.9-3-gabc")
	if got := Version(); got != "v9.9.9-3-gabc" {
		t.Errorf("Version() = %q", got)
	}
}
