package proxies

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Time limits of the Debian steps.
const (
	// aptUpdateTimeout bounds one apt-get update (the package lists of every configured repository).
	aptUpdateTimeout = 5 * time.Minute
	// debTimeout bounds one apt-get download of one package, or one dpkg-deb -x.
	debTimeout = 3 * time.Minute
	// lddTimeout bounds one ldd.
	lddTimeout = time.Minute
)

// A debPackage is one Debian package of a proxy's image: the proxy's own, or one whose shared
// libraries it may link. Host: the package is installed on this machine, whose files ldd finds
// there; else it is downloaded.
type debPackage struct {
	name, version string
	host          bool
}

func (p debPackage) String() string {
	from := "download"
	if p.host {
		from = "host"
	}
	return fmt.Sprintf("%s=%s (%s)", p.name, p.version, from)
}

// debPlan returns the Debian packages of the image of a proxy packaged as pkg at upstream
// version upstream: pkg itself (always downloaded, at apt's candidate version, which must be
// of that upstream version), then the library packages it depends on, transitively, each
// installed on the host (at its installed version) or else to download (at its candidate
// version), sorted by name. Only dependencies named lib* are followed: Debian puts shared
// libraries in lib* packages, and the other dependencies (adduser, nginx-common, iproute2)
// hold nothing the binary links. ldd decides which of their files the image gets
// (debRootfs); the plan's versions are in the image's tag. apt and dpkg are asked once per
// level of dependencies (apt-cache takes about a second a call on a host without apt's
// binary cache, as Debian's container images are).
//
// apt-get update runs (time-limited, retried) when apt knows no candidate for pkg.
func debPlan(ctx context.Context, pkg, upstream string, logf func(string, ...any)) ([]debPackage, error) {
	recs, err := aptCandidates(ctx, pkg)
	if err != nil {
		if _, uerr := run(ctx, logf, aptUpdate()); uerr != nil {
			return nil, fmt.Errorf("%w; then %w", err, uerr)
		}
		if recs, err = aptCandidates(ctx, pkg); err != nil {
			return nil, fmt.Errorf("%w: is a Debian 12 (bookworm) repository configured?", err)
		}
	}
	main := recs[pkg]
	if v := stripEpoch(main.version); v != upstream && !strings.HasPrefix(v, upstream+"-") {
		return nil, fmt.Errorf("apt's candidate for %s is %s, not the pinned upstream version %s: the host is not Debian 12 (bookworm)?", pkg, main.version, upstream)
	}
	seen := map[string]bool{pkg: true}
	var libs []debPackage
	for next := main.deps; len(next) > 0; {
		var level []string
		for _, name := range next {
			if !seen[name] && strings.HasPrefix(name, "lib") {
				seen[name] = true
				level = append(level, name)
			}
		}
		next = nil
		if len(level) == 0 {
			break
		}
		installed := dpkgInstalled(ctx, level...)
		var absent []string
		for _, name := range level {
			if rec, ok := installed[name]; ok {
				libs = append(libs, debPackage{name: name, version: rec.version, host: true})
				next = append(next, rec.deps...)
			} else {
				absent = append(absent, name)
			}
		}
		if len(absent) == 0 {
			continue
		}
		recs, err := aptCandidates(ctx, absent...)
		if err != nil {
			return nil, fmt.Errorf("libraries of %s not installed on the host: %w", pkg, err)
		}
		for _, name := range absent {
			libs = append(libs, debPackage{name: name, version: recs[name].version})
			next = append(next, recs[name].deps...)
		}
	}
	slices.SortFunc(libs, func(a, b debPackage) int { return strings.Compare(a.name, b.name) })
	return append([]debPackage{{name: pkg, version: main.version}}, libs...), nil
}

// A debRecord is a package's version and dependencies.
type debRecord struct {
	version string
	deps    []string
}

// aptCandidates is the record of apt's candidate version of each of names (apt-cache show
// --no-all-versions); an error when apt has none for one of them.
func aptCandidates(ctx context.Context, names ...string) (map[string]debRecord, error) {
	out, err := quick(ctx, append([]string{"apt-cache", "show", "--no-all-versions"}, names...)...)
	if err != nil {
		return nil, fmt.Errorf("apt has no candidate for %s: %w", strings.Join(names, ", "), err)
	}
	recs := map[string]debRecord{}
	var name string
	var rec debRecord
	for _, l := range strings.Split(out+"\n", "\n") {
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "":
			if name != "" && rec.version != "" {
				recs[name] = rec
			}
			name, rec = "", debRecord{}
		case "Package":
			name = v
		case "Version":
			rec.version = v
		case "Pre-Depends", "Depends":
			rec.deps = append(rec.deps, parseDepends(v)...)
		}
	}
	for _, n := range names {
		if _, ok := recs[n]; !ok {
			return nil, fmt.Errorf("apt has no candidate for %s", n)
		}
	}
	return recs, nil
}

// dpkgInstalled is the record of each of names that is installed on the host.
func dpkgInstalled(ctx context.Context, names ...string) map[string]debRecord {
	// dpkg-query fails when one of the names is not known at all, after printing the others.
	out, _ := quick(ctx, append([]string{"dpkg-query", "-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Version}\t${Pre-Depends}, ${Depends}\n"}, names...)...)
	recs := map[string]debRecord{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "\t")
		if len(f) == 4 && strings.HasPrefix(f[1], "ii") {
			recs[f[0]] = debRecord{version: f[2], deps: parseDepends(f[3])}
		}
	}
	return recs
}

// parseDepends reads a Depends field: the package names, the first of each list of
// alternatives, without version constraints or architecture qualifiers.
func parseDepends(field string) []string {
	var names []string
	for _, dep := range strings.Split(field, ",") {
		first, _, _ := strings.Cut(dep, "|")
		name, _, _ := strings.Cut(strings.TrimSpace(first), " ")
		name, _, _ = strings.Cut(name, "(")
		name, _, _ = strings.Cut(name, ":")
		if name != "" {
			names = append(names, name)
		}
	}
	return names
}

// stripEpoch is a Debian version without its epoch ("1:").
func stripEpoch(v string) string {
	if _, rest, ok := strings.Cut(v, ":"); ok {
		return rest
	}
	return v
}

func aptUpdate() command {
	return command{what: "apt-get update (Debian's package lists)", limit: aptUpdateTimeout, tries: 2,
		env: []string{"DEBIAN_FRONTEND=noninteractive"}, argv: []string{"apt-get", "update", "-q"}}
}

// debFile is the path of package p's .deb in the cache directory debs, downloaded with apt-get
// download (time-limited, one retry after an apt-get update) unless it is there.
func debFile(ctx context.Context, debs string, p debPackage, logf func(string, ...any)) (string, error) {
	file := filepath.Join(debs, fmt.Sprintf("%s_%s.deb", p.name, strings.ReplaceAll(p.version, ":", "%3a")))
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	dl, err := os.MkdirTemp(debs, "download-")
	if err != nil {
		return "", fmt.Errorf("download %s: %w", p.name, err)
	}
	defer os.RemoveAll(dl)
	get := command{what: fmt.Sprintf("apt-get download %s=%s", p.name, p.version), limit: debTimeout, tries: 1,
		dir: dl, argv: []string{"apt-get", "download", "-q", p.name + "=" + p.version}}
	if _, err := run(ctx, logf, get); err != nil {
		// The lists may be older than the repository, which then has another version only.
		if _, uerr := run(ctx, logf, aptUpdate()); uerr != nil {
			return "", fmt.Errorf("%w; then %w", err, uerr)
		}
		if _, err := run(ctx, logf, get); err != nil {
			return "", err
		}
	}
	got, _ := filepath.Glob(filepath.Join(dl, "*.deb"))
	if len(got) != 1 {
		return "", fmt.Errorf("apt-get download %s=%s left %d .deb files", p.name, p.version, len(got))
	}
	if err := os.Rename(got[0], file); err != nil {
		return "", fmt.Errorf("download %s: %w", p.name, err)
	}
	return file, nil
}

// debRootfs puts into rootfs the binary (an absolute path) of plan's first package and every
// shared library it links, with the dynamic loader: the plan's packages to download are
// downloaded into debs (kept there) and extracted into extract, and ldd, looking there first
// and then on the host, says which files those are. Each is copied, its symlinks followed, to
// the path ldd names (below extract: the path in the package).
func debRootfs(ctx context.Context, plan []debPackage, binary, debs, extract, rootfs string, logf func(string, ...any)) error {
	for _, p := range plan {
		if p.host {
			continue
		}
		deb, err := debFile(ctx, debs, p, logf)
		if err != nil {
			return err
		}
		x := command{what: "dpkg-deb -x " + filepath.Base(deb), limit: debTimeout, tries: 1,
			argv: []string{"dpkg-deb", "-x", deb, extract}}
		if _, err := run(ctx, logf, x); err != nil {
			return err
		}
	}
	bin := filepath.Join(extract, binary)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("package %s has no %s: %w", plan[0].name, binary, err)
	}
	var libPath []string
	for _, d := range []string{"lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib", "usr/lib"} {
		libPath = append(libPath, filepath.Join(extract, d))
	}
	out, err := run(ctx, logf, command{what: "ldd " + binary, limit: lddTimeout, tries: 1,
		env: []string{"LD_LIBRARY_PATH=" + strings.Join(libPath, ":")}, argv: []string{"ldd", bin}})
	if err != nil {
		return err
	}
	libs, missing := parseLdd(out)
	if len(missing) > 0 {
		return fmt.Errorf("%s needs %s, which neither the host nor the downloaded packages (%v) have: install the package that has it", binary, strings.Join(missing, ", "), plan)
	}
	files := append([]string{bin}, libs...)
	for _, src := range files {
		dst := src
		if rel, err := filepath.Rel(extract, src); err == nil && !strings.HasPrefix(rel, "..") {
			dst = "/" + rel
		}
		if err := copyFollowing(src, filepath.Join(rootfs, dst)); err != nil {
			return fmt.Errorf("copy %s into the image: %w", src, err)
		}
	}
	logf("%s: the binary and %d shared libraries (the loader included)", binary, len(libs))
	return nil
}

// parseLdd reads ldd's output: the absolute paths of the libraries found (the loader
// included), and the names of those not found. The vDSO has no file.
func parseLdd(out string) (paths, missing []string) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, target, arrow := strings.Cut(line, "=>")
		switch {
		case arrow && strings.HasPrefix(strings.TrimSpace(target), "not found"):
			missing = append(missing, strings.TrimSpace(name))
		case arrow:
			if p, _, _ := strings.Cut(strings.TrimSpace(target), " ("); strings.HasPrefix(p, "/") {
				paths = append(paths, p)
			}
		case strings.HasPrefix(line, "/"):
			p, _, _ := strings.Cut(line, " (")
			paths = append(paths, p)
		}
	}
	return paths, missing
}

// copyFollowing copies the file src (its symlinks followed) to dst with src's permission bits,
// making dst's directories.
func copyFollowing(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
