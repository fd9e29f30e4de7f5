package engine

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		s := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}}
		if at != "" {
			s = append(s, debug.BuildSetting{Key: "vcs.time", Value: at})
		}
		return append(s, debug.BuildSetting{Key: "vcs.modified", Value: modified})
	}
	const rev, at = "0123456789abcdef0123456789abcdef01234567", "2026-01-01T12:00:00Z"
	main := func(v string, s []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: v}, Settings: s}
	}
	user := &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
		Deps:     []*debug.Module{{Path: "golang.org/x/net", Version: "v0.1.0"}, {Path: modulePath, Version: "v0.4.0"}},
		Settings: vcs("fedcba9876543210fedcba9876543210fedcba98", at, "true")}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install @version", main("v1.2.3", nil), "v1.2.3"},
		{"go install @latest (a pseudo-version)", main("v0.0.0-20261127082607-eca5722e5c6d", nil), "v0.0.0-20261127082607-eca5722e5c6d"},
		{"go build in a checkout (the pseudo-version names the commit)", main("v0.0.0-20260101120000-0123456789ab", vcs(rev, at, "false")), "v0.0.0-20260101120000-0123456789ab"},
		{"go build in a modified checkout (the toolchain says +dirty)", main("v0.0.0-20260101120000-0123456789ab+dirty", vcs(rev, at, "true")), "v0.0.0-20260101120000-0123456789ab+dirty"},
		{"go build at a tag", main("v1.2.3", vcs(rev, at, "false")), "v1.2.3"},
		{"a version, a modified tree it does not name", main("v1.2.3", vcs(rev, at, "true")), "v1.2.3+dirty"},
		{"no version, a commit and its time", main("(devel)", vcs(rev, at, "false")), "dev-20260101120000-0123456789ab"},
		{"no version, a commit of another zone's time", main("(devel)", vcs(rev, "2026-01-01T13:00:00+01:00", "false")), "dev-20260101120000-0123456789ab"},
		{"no version, a modified tree", main("(devel)", vcs(rev, at, "true")), "dev-20260101120000-0123456789ab+dirty"},
		{"no version, a commit without its time", main("(devel)", vcs(rev, "", "true")), "dev-0123456789ab+dirty"},
		{"no version, a short revision", main("(devel)", vcs("abc123", at, "false")), "dev-20260101120000-abc123"},
		{"no version, no commit (go run, a test binary, a git worktree)", main("(devel)", nil), "dev"},
		{"an empty version", main("", nil), "dev"},
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

// A version stamped at link time (-ldflags -X ...engine.version=) comes after ROLLCHECK_VERSION
// and before the build info.
func TestVersionLinkerStamp(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3-pkg"
	t.Setenv("ROLLCHECK_VERSION", "")
	if got := Version(); got != "v1.2.3-pkg" {
		t.Errorf("Version() = %q, want the stamp", got)
	}
	t.Setenv("ROLLCHECK_VERSION", "v9.9.9")
	if got := Version(); got != "v9.9.9" {
		t.Errorf("Version() = %q, want ROLLCHECK_VERSION over the stamp", got)
	}
}
