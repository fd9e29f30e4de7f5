#!/usr/bin/env bash
# `make release`: the rollcheck CLI as static binaries (CGO_ENABLED=0, -trimpath, stripped) for
# linux and darwin on amd64 and arm64, named rollcheck-VERSION-OS-ARCH, and rollcheck's image for
# linux on each (rollcheck-image-VERSION-linux-ARCH.tar: what rollcheck gate runs), with their SHA256SUMS
# (sha256sum's format: `sha256sum -c SHA256SUMS` checks them), in $ARTIFACTS/release; then the
# list of files with sizes and checksums, and the version `go install` takes for this commit.
# VERSION: the environment's, else `git describe --tags --always --dirty`. It is stamped into
# each binary (engine.version, what `rollcheck --version` prints), and each records its commit
# (-buildvcs=true, whatever GOFLAGS says: -trimpath keeps the stamp out of the build information,
# and a darwin binary's ROLLCHECK_LINUX_EXECUTABLE is checked to be the same build by the commit
# Go records in both). Nothing is downloaded but Go
# modules: all of them first, under a time limit; each build then runs offline, under its own.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_PREFIX=release
need go "install Go (>= 1.25)"
need sha256sum "install coreutils"
cd "$REPO_ROOT"

PLATFORMS=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
MODULE=github.com/rollcheck/rollcheck

if [ -z "${VERSION:-}" ]; then
  VERSION=$(git describe --tags --always --dirty 2>/dev/null) \
    || die "VERSION is not set and git describe found no commit: make release VERSION=v1.2.3"
fi
# It goes into file names and into -ldflags: one word of letters, digits and . _ + -.
[[ $VERSION =~ ^[0-9A-Za-z][0-9A-Za-z._+-]*$ ]] \
  || { log "ERROR: VERSION=\"$VERSION\": want letters, digits and . _ + - only (v1.2.3, a git describe)"; exit 2; }
OUT=$ARTIFACTS/release

# pseudo_version: what `go install $MODULE/cmd/rollcheck@...` takes for HEAD: its tag when HEAD
# has one, else, with no tag before it, v0.0.0-<commit time, UTC>-<12 hex digits> (the form Go
# derives); else (a tag before it) the commit itself, which go resolves. Empty outside git.
pseudo_version() {
  local commit time tag
  commit=$(git rev-parse --verify --quiet HEAD) || return 0
  tag=$(git tag --points-at HEAD --list 'v[0-9]*' | sort -V | tail -n 1)
  if [ -n "$tag" ]; then echo "$tag"; return 0; fi
  if git describe --tags --abbrev=0 --match 'v[0-9]*' >/dev/null 2>&1; then echo "${commit:0:12}"; return 0; fi
  time=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y%m%d%H%M%S "$commit")
  echo "v0.0.0-$time-${commit:0:12}"
}

mkdir -p "$OUT"
rm -f "$OUT"/rollcheck-* "$OUT/SHA256SUMS"
retry_timeout 3 300 "go mod download (the modules in go.mod)" -- go mod download
files=()
for p in "${PLATFORMS[@]}"; do
  os=${p%/*} arch=${p#*/}
  f=rollcheck-$VERSION-$os-$arch
  retry_timeout 2 1200 "go build $f" -- env GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 GOPROXY=off \
    go build -trimpath -buildvcs=true -ldflags "-s -w -X $MODULE/engine.version=$VERSION" -o "$OUT/$f" ./cmd/rollcheck
  files+=("$f")
done

# The binary this machine runs says the version it was stamped with (ROLLCHECK_VERSION, which
# would override the stamp, left out).
host=$OUT/rollcheck-$VERSION-$(go env GOHOSTOS)-$(go env GOHOSTARCH)
if [ -x "$host" ]; then
  said=$(env -u ROLLCHECK_VERSION "$host" --version) || die "$host --version failed"
  [ "$said" = "rollcheck $VERSION" ] || die "$host --version says \"$said\", want \"rollcheck $VERSION\""
  log "$(basename "$host") --version: $said"
  # The image rollcheck gate and serve run in, and their load pods (docs/gate.md): each Linux
  # binary's load image, as an image archive beside it (docker save's format), made in process by
  # the binary this machine runs (of the other architecture's binary: the same build).
  for arch in amd64 arm64; do
    f=rollcheck-image-$VERSION-linux-$arch.tar
    log "waiting up to 300s for: the image of rollcheck-$VERSION-linux-$arch ($f)"
    ref=$(ROLLCHECK_LINUX_EXECUTABLE=$OUT/rollcheck-$VERSION-linux-$arch timeout 300 \
      "$host" cluster load-image --archive "$OUT/$f" --arch "$arch") || die "the image of rollcheck-$VERSION-linux-$arch failed or took over 300 s"
    log "$f: $ref (docker load -i $f; kind load image-archive $f; crane push $f REGISTRY/rollcheck/load:TAG)"
    files+=("$f")
  done
fi

(cd "$OUT" && sha256sum "${files[@]}" >SHA256SUMS)
echo "rollcheck $VERSION: $OUT"
while read -r sum f; do
  printf '  %10s bytes  sha256 %s  %s\n' "$(stat -c %s "$OUT/$f")" "$sum" "$f"
done <"$OUT/SHA256SUMS"
printf '  %10s bytes  %71s  %s\n' "$(stat -c %s "$OUT/SHA256SUMS")" "" SHA256SUMS
pv=$(pseudo_version)
if [ -n "$pv" ]; then
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "go install: none: these binaries hold uncommitted changes (HEAD is $pv)"
  else
    echo "go install: $MODULE/cmd/rollcheck@$pv (this commit, once it is on main)"
  fi
fi
