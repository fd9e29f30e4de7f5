package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rollcheck/rollcheck/internal/knobs"
)

// An Entry is how the sample app's image starts it, which decides who is PID 1 and so who gets
// the container's stop signal.
type Entry string

const (
	// EntryExec: ENTRYPOINT ["/app"], the app is PID 1 (the sample app image as built).
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

// entryFiles are, per Entry, the Debian package and the file in it that the image adds, and the
// image's ENTRYPOINT.
var entryFiles = map[Entry]struct {
	pkg, path, as string
	entrypoint    string
}{
	EntryShell: {"busybox-static", "bin/busybox", "sh", `["/bin/sh", "/entrypoint.sh"]`},
	EntryTini:  {"tini", "usr/bin/tini-static", "tini", `["/tini", "--", "/app"]`},
}

// debTimeout bounds one apt-get download (or apt-get update) of the packages EntryImage needs.
const debTimeout = 2 * time.Minute

// EntryImage builds the sample app image app started the way e says (EntryShell, EntryTini) as
// an image FROM app (a local image: nothing is pulled), tagged <app repo>-<e>:<app tag>, and
// loads it into the cluster's nodes. EntryExec returns app itself. The shell or init comes from
// Debian's package, downloaded once into ROLLCHECK_CACHE/debs with apt-get (a time limit and
// one retry, after an apt-get update).
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
	ref := fmt.Sprintf("%s-%s:%s", repo, e, tag)
	if _, err := run(ctx, "docker", "image", "inspect", ref); err != nil {
		dir, err := os.MkdirTemp("", "rollcheck-entry-image-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		df := fmt.Sprintf("FROM %s\n", app)
		if e == EntryStopSignal {
			df += "STOPSIGNAL SIGQUIT\n"
		} else {
			bin, err := debFile(ctx, f.pkg, f.path, c.Logf)
			if err != nil {
				return "", fmt.Errorf("entry %s: %w", e, err)
			}
			if err := copyFile(bin, filepath.Join(dir, f.as)); err != nil {
				return "", err
			}
			if err := os.Chmod(filepath.Join(dir, f.as), 0o755); err != nil {
				return "", err
			}
			df += fmt.Sprintf("COPY %s /%s\n", f.as, map[Entry]string{EntryShell: "bin/sh", EntryTini: "tini"}[e])
			if e == EntryShell {
				if err := os.WriteFile(filepath.Join(dir, "entrypoint.sh"), []byte(entryScript), 0o755); err != nil {
					return "", err
				}
				df += "COPY entrypoint.sh /entrypoint.sh\n"
			}
			df += "ENTRYPOINT " + f.entrypoint + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			return "", err
		}
		bctx, cancel := context.WithTimeout(ctx, imageBuildTimeout)
		defer cancel()
		if _, err := runIn(bctx, dir, []string{"DOCKER_BUILDKIT=0"}, "docker", "build", "-q", "-t", ref, "."); err != nil {
			return "", fmt.Errorf("docker build %s: %w", ref, err)
		}
		pruneImages(ctx, image{what: "app (" + string(e) + ")", repo: repo + "-" + string(e)}, ref, c.Logf)
	}
	if err := c.LoadImages(ctx, []string{ref}); err != nil {
		return "", err
	}
	return ref, nil
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
