package cluster

import (
	"archive/tar"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/selfimage"
)

// An Entry is how the sample app's image starts it, which decides who is PID 1 and so who gets
// the container's stop signal.
type Entry string

const (
	// EntryExec: the app is PID 1 (the sample app image as made: /rollcheck agent app).
	EntryExec Entry = ""
	// EntryShell: a wrapper script run by a shell, which does a setup step and then runs the app
	// without exec, as many images start theirs: the shell stays PID 1, and a shell passes no
	// SIGTERM on to its child. The shell is Debian's static busybox (package busybox-static).
	EntryShell Entry = "shell"
	// EntryTini: a minimal init that forwards signals to the app: Debian's tini-static (package
	// tini) as PID 1.
	EntryTini Entry = "tini"
	// EntryStopSignal: the app itself as PID 1, in an image whose STOPSIGNAL is SIGQUIT, which
	// the container runtime sends instead of SIGTERM.
	EntryStopSignal Entry = "stopsignal"
)

// entryScript is EntryShell's wrapper: a setup step, then the app, without exec.
const entryScript = `#!/bin/sh
# A setup step, then the app, as many images start theirs: without exec, so this shell stays
# PID 1 and the app is its child. A shell passes no SIGTERM on to its children.
cd /
/app "$@"
`

// entryFiles are, per Entry, the Debian package and the file in it that the image adds, where,
// and the image's entrypoint.
var entryFiles = map[Entry]struct {
	pkg, path, at string
	entrypoint    []string
}{
	EntryShell: {"busybox-static", "bin/busybox", "bin/sh", []string{"/bin/sh", "/entrypoint.sh"}},
	EntryTini:  {"tini", "usr/bin/tini-static", "tini", []string{"/tini", "--", "/app"}},
}

// debTimeout bounds one apt-get download (or apt-get update) of the packages EntryImage needs.
const debTimeout = 2 * time.Minute

// EntryImage makes the sample app image app started the way e says (EntryShell, EntryTini,
// EntryStopSignal) in process, as an image over app (which this process made: BuildAppImage),
// tagged <app repo>-<e>:<app tag>, and loads it into the cluster's nodes. EntryExec returns app
// itself. The shell or init comes from Debian's package, downloaded once into
// ROLLCHECK_CACHE/debs with apt-get (a time limit and one retry, after an apt-get update); the
// wrappers run /app, the app image's link to the executable.
func (c *Cluster) EntryImage(ctx context.Context, app string, e Entry) (string, error) {
	if e == EntryExec {
		return app, nil
	}
	f, ok := entryFiles[e]
	if !ok && e != EntryStopSignal {
		return "", fmt.Errorf("entry %q: want shell, tini or stopsignal", e)
	}
	repo, tag, ok := strings.Cut(app, ":")
	if !ok {
		return "", fmt.Errorf("entry image of %s: the app image has no tag", app)
	}
	base := ownImage(app)
	if base == nil {
		return "", fmt.Errorf("entry image of %s: not an app image this process made (BuildAppImage)", app)
	}
	ref := fmt.Sprintf("%s-%s:%s", repo, e, tag)
	img, err := entryImage(ctx, base, e, f.pkg, f.path, f.at, f.entrypoint, c.Logf)
	if err != nil {
		return "", fmt.Errorf("entry %s: %w", e, err)
	}
	addOwnImage(ref, img)
	if err := c.LoadImages(ctx, []string{ref}); err != nil {
		return "", err
	}
	return ref, nil
}

// entryImage is base with e's changes: the stop signal SIGQUIT, or a layer with the file of
// Debian's pkg (path in it) at at, the shell's wrapper script, and the entrypoint.
func entryImage(ctx context.Context, base v1.Image, e Entry, pkg, path, at string, entrypoint []string, logf func(string, ...any)) (v1.Image, error) {
	cf, err := base.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	img := base
	if e == EntryStopSignal {
		cf.Config.StopSignal = "SIGQUIT"
	} else {
		bin, err := debFile(ctx, pkg, path, logf)
		if err != nil {
			return nil, err
		}
		f, err := selfimage.RegularFile(at, bin, 0o755)
		if err != nil {
			return nil, err
		}
		files := []selfimage.File{f}
		if e == EntryShell {
			files = append(files, selfimage.File{Name: "bin", Type: tar.TypeDir, Mode: 0o755},
				selfimage.BytesFile("entrypoint.sh", []byte(entryScript), 0o755))
		}
		l, err := selfimage.Layer(files)
		if err != nil {
			return nil, err
		}
		if img, err = mutate.AppendLayers(base, l); err != nil {
			return nil, err
		}
		// The config of the image with the layer: its rootfs lists the new layer too.
		if cf, err = img.ConfigFile(); err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.Config.Entrypoint = entrypoint
	}
	for i := range cf.History {
		cf.History[i].Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	}
	return mutate.ConfigFile(img, cf)
}

// debFile returns the path of file path of Debian package pkg, extracted once into
// ROLLCHECK_CACHE/debs/pkg: apt-get download (after an apt-get update when the first try
// fails), then dpkg-deb -x, each within debTimeout.
func debFile(ctx context.Context, pkg, path string, logf func(string, ...any)) (string, error) {
	cache, err := knobs.CacheDir(os.Getenv)
	if err != nil {
		return "", err
	}
	root := filepath.Join(cache, "debs", pkg)
	out := filepath.Join(root, path)
	if st, err := os.Stat(out); err == nil && st.Mode().IsRegular() {
		return out, nil
	}
	dl := filepath.Join(cache, "debs", "download-"+pkg)
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(dl)
	get := func() error {
		dctx, cancel := context.WithTimeout(ctx, debTimeout)
		defer cancel()
		_, err := runIn(dctx, dl, nil, "apt-get", "download", "-q", pkg)
		return err
	}
	logf("downloading Debian's %s (apt-get download, %s at most)", pkg, debTimeout)
	if err := get(); err != nil {
		logf("apt-get download %s: %v; apt-get update, then once more", pkg, err)
		uctx, cancel := context.WithTimeout(ctx, debTimeout)
		_, uerr := run(uctx, "apt-get", "update", "-q")
		cancel()
		if err := get(); err != nil {
			return "", fmt.Errorf("apt-get download %s: %w (apt-get update: %v)", pkg, err, uerr)
		}
	}
	debs, _ := filepath.Glob(filepath.Join(dl, pkg+"_*.deb"))
	if len(debs) != 1 {
		return "", fmt.Errorf("apt-get download %s left %d .deb files", pkg, len(debs))
	}
	tmp := root + ".tmp"
	_ = os.RemoveAll(tmp)
	xctx, cancel := context.WithTimeout(ctx, debTimeout)
	defer cancel()
	if _, err := run(xctx, "dpkg-deb", "-x", debs[0], tmp); err != nil {
		return "", fmt.Errorf("dpkg-deb -x %s: %w", filepath.Base(debs[0]), err)
	}
	if _, err := os.Stat(filepath.Join(tmp, path)); err != nil {
		_ = os.RemoveAll(tmp)
		return "", fmt.Errorf("package %s has no %s", pkg, path)
	}
	_ = os.RemoveAll(root)
	if err := os.Rename(tmp, root); err != nil {
		return "", err
	}
	return out, nil
}
