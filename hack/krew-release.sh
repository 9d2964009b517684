#!/usr/bin/env bash
# Builds the kubectl plugin's release archives and fills a krew manifest (MANIFEST, default
# plugins/beeburst.yaml; `make release-artifacts` fills a copy of it) with their version, URIs
# and sha256 sums.
#
#   hack/krew-release.sh v0.2.0            # every platform of the manifest, into bin/release/
#   PLATFORMS=linux/amd64 hack/krew-release.sh v0.2.0    # some of them (the others keep their entries)
#   OUT=DIR MANIFEST=FILE hack/krew-release.sh v0.2.0    # elsewhere (make release-artifacts, hack/check-release.sh)
#   KREW_BUILD_FLAGS=... replaces -trimpath (a check shares the build cache of the tests)
#
# The plugin is stamped with the version (`kubectl beeburst version`), as `make build` does.
# The archives belong to the release named in the URIs (RELEASE_URL, default
# https://github.com/beeburst/beeburst/releases/download/VERSION), where the release workflow
# uploads them with the filled manifest, which then goes to krew-index. Windows is not built: the plugin links a
# Linux-only package (internal/treecopy, through internal/bench).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
version=${1:?usage: hack/krew-release.sh vX.Y.Z}
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || { echo "krew-release: $version is not vMAJOR.MINOR.PATCH" >&2; exit 2; }
url=${RELEASE_URL:-https://github.com/beeburst/beeburst/releases/download/$version}
out=${OUT:-bin/release}
manifest=${MANIFEST:-plugins/beeburst.yaml}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
mkdir -p "$out"
sed -i -E "s|^  version: .*|  version: $version|" "$manifest"
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  name=kubectl-beeburst_${version}_${os}_${arch}.tar.gz
  grep -q "matchLabels: {os: $os, arch: $arch}" "$manifest" || { echo "krew-release: $manifest has no entry for $os/$arch" >&2; exit 2; }
  stage=$(mktemp -d)
  echo "krew-release: building $os/$arch" >&2
  # shellcheck disable=SC2086 # KREW_BUILD_FLAGS is a list of flags, possibly empty
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build ${KREW_BUILD_FLAGS--trimpath} -ldflags "-s -w -X main.version=$version" -o "$stage/kubectl-beeburst" ./cmd/kubectl-beeburst
  cp README.md LICENSE "$stage/"
  tar -C "$stage" --owner=0 --group=0 --mtime='2000-01-01' -czf "$out/$name" kubectl-beeburst README.md LICENSE
  rm -rf "$stage"
  sum=$(sha256sum "$out/$name" | cut -d' ' -f1)
  # The entry of this platform: its uri and sha256 lines follow its selector.
  awk -v sel="matchLabels: {os: $os, arch: $arch}" -v uri="$url/$name" -v sum="$sum" '
    index($0, sel) { hit = 1 }
    hit && /^    uri: / { $0 = "    uri: " uri }
    hit && /^    sha256: / { $0 = "    sha256: \"" sum "\""; hit = 0 }
    { print }' "$manifest" > "$manifest.tmp" && mv "$manifest.tmp" "$manifest"
  echo "krew-release: $out/$name $sum" >&2
done
