package selfimage

import (
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
)

// A Build says which build of rollcheck an executable is, as Go records it in every binary
// (debug/buildinfo): the module version `go install …@VERSION` gives, and the commit a build in
// a checkout was made from. The load pods speak with the process that made their image, so on a
// machine whose own build no pod can run (a Mac) the Linux build it is made of must be the same.
type Build struct {
	// Path is the main package's path (Command for rollcheck itself; a user's program that
	// imports rollcheck's packages has its own). Version is the version of rollcheck's module
	// built in: the main module's for rollcheck itself ("(devel)" for a build in a checkout
	// without VCS stamping), else the one the program requires ("" when it replaces it).
	Path, Version string
	// Revision is the commit of a build of rollcheck in its checkout (vcs.revision), Modified
	// whether its tree had changes (vcs.modified); empty for a program of another module.
	Revision string
	Modified bool
	// Stamp is the version the build was stamped with (-ldflags -X …/engine.version=V, as make
	// release stamps each binary with git describe): what names a build made with -buildvcs=false.
	Stamp string
}

// stampFlag is the linker flag that stamps rollcheck's version (engine.version).
const stampFlag = "-X " + Module + "/engine.version="

// String names b in a line: "v0.0.0-20261129…-abcdef123456", "commit abcdef123456 (modified)".
func (b Build) String() string {
	var parts []string
	if b.Version != "" && b.Version != "(devel)" {
		parts = append(parts, b.Version)
	}
	if b.Revision != "" {
		r := "commit " + short(b.Revision)
		if b.Modified {
			r += " with uncommitted changes"
		}
		parts = append(parts, r)
	}
	if b.Stamp != "" {
		parts = append(parts, "stamped "+b.Stamp)
	}
	if len(parts) == 0 {
		return "a build with no version, commit or stamp"
	}
	return strings.Join(parts, ", ")
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// ReadBuild reads the Build of the executable at path, or of the running one when path is "".
func ReadBuild(path string) (Build, error) {
	var (
		bi  *debug.BuildInfo
		err error
	)
	if path == "" {
		var ok bool
		if bi, ok = debug.ReadBuildInfo(); !ok {
			return Build{}, errors.New("the running executable holds no Go build information")
		}
	} else if bi, err = buildinfo.ReadFile(path); err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return Build{}, fmt.Errorf("not an executable Go can read: %w", err)
		}
		return Build{}, fmt.Errorf("its Go build information: %w", err)
	}
	return buildOf(bi), nil
}

func buildOf(bi *debug.BuildInfo) Build {
	b := Build{Path: bi.Path}
	if bi.Main.Path != Module {
		// A program that imports rollcheck's packages: the rollcheck it requires, unless it
		// replaces it (a local directory: no version says which).
		for _, d := range bi.Deps {
			if d.Path == Module && d.Replace == nil {
				b.Version = d.Version
			}
		}
		return b
	}
	b.Version = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "-ldflags":
			if _, v, ok := strings.Cut(s.Value, stampFlag); ok {
				b.Stamp, _, _ = strings.Cut(v, " ")
			}
		}
	}
	return b
}

// pseudoRevision is the commit prefix of a pseudo-version (v0.0.0-20261129120000-abcdef123456,
// v1.2.4-0.2026…-abcdef123456).
var pseudoRevision = regexp.MustCompile(`-(?:0\.)?\d{14}-([0-9a-f]{12})(?:\+incompatible)?$`)

// Query is what `go install COMMAND@QUERY` takes to build b again: its module version, else its
// commit (which the module proxy resolves); "" when b names neither, or is a checkout with
// uncommitted changes (no query builds that).
func (b Build) Query() string {
	switch {
	case b.Version != "" && b.Version != "(devel)":
		return b.Version
	case b.Revision != "" && !b.Modified:
		return b.Revision
	}
	return ""
}

// SameBuild says, in one line, why executables of builds a and b may not be the same rollcheck,
// or nil when they are: the same command, and the same module version, or the same commit (a
// pseudo-version's commit prefix counts), or, for builds that record neither, the same stamp
// (make release's, git describe: "-dirty" for uncommitted changes); never with uncommitted
// changes.
func SameBuild(a, b Build) error {
	differ := func(why string) error {
		return fmt.Errorf("it is %s, and this rollcheck is %s: %s (use rollcheck's linux build of this version)", b, a, why)
	}
	if b.Path != Command {
		return fmt.Errorf("it is %s, not the rollcheck command (%s)", cmp.Or(b.Path, "a program of no known path"), Command)
	}
	if a.Modified || b.Modified || strings.HasSuffix(a.Stamp, "-dirty") || strings.HasSuffix(b.Stamp, "-dirty") {
		return differ("a build with uncommitted changes is like no other")
	}
	rev := func(x Build) string {
		if x.Revision != "" {
			return x.Revision
		}
		if m := pseudoRevision.FindStringSubmatch(x.Version); m != nil {
			return m[1]
		}
		return ""
	}
	version := func(x Build) string {
		if x.Version == "(devel)" {
			return ""
		}
		return x.Version
	}
	switch ra, rb, va, vb := rev(a), rev(b), version(a), version(b); {
	case va != "" && vb != "":
		if va != vb {
			return differ("not the same version")
		}
		return nil
	case ra != "" && rb != "":
		if !strings.HasPrefix(ra, rb) && !strings.HasPrefix(rb, ra) {
			return differ("not the same commit")
		}
		return nil
	case a.Stamp != "" && b.Stamp != "":
		if a.Stamp != b.Stamp {
			return differ("not the same stamp")
		}
		return nil
	}
	return differ("nothing says they are the same")
}
