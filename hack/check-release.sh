#!/usr/bin/env bash
# Checks that one version flows into everything a release publishes, the way the release
# workflow makes it (make release-artifacts, make docker-buildx), without pushing anything:
#   - the packaged chart: version without the v, appVersion with it, and the images it runs
#     by default tagged with it;
#   - the krew archive: its kubectl-beeburst says the version, the manifest names it, and the
#     manifest's sha256 is the archive's;
#   - the image builds: tags and the VERSION build-arg (make -n docker-buildx).
# `make helm-lint` runs it. HELM names the helm to use.
set -euo pipefail
cd "$(dirname "$0")/.."
helm=${HELM:-helm}
v=v9.8.7-rc.1 chart=9.8.7-rc.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-release: $*" >&2; exit 1; }

make -s helm-package VERSION=$v RELEASE_DIR="$tmp" HELM="$helm" >/dev/null
pkg=$tmp/beeburst-$chart.tgz
[ -f "$pkg" ] || fail "make helm-package VERSION=$v made no $pkg"
meta=$(tar -xzOf "$pkg" beeburst/Chart.yaml)
grep -qx "version: $chart" <<<"$meta" || fail "the chart's version is not $chart:"$'\n'"$meta"
grep -qx "appVersion: $v" <<<"$meta" || fail "the chart's appVersion is not $v:"$'\n'"$meta"
rendered=$("$helm" template beeburst "$pkg" --namespace beeburst-system)
grep -q "image: \"ghcr.io/beeburst/manager:$v\"" <<<"$rendered" || fail "the packaged chart does not run ghcr.io/beeburst/manager:$v"
grep -q -- "--agent-image=ghcr.io/beeburst/agent:$v" <<<"$rendered" || fail "the packaged chart does not run ghcr.io/beeburst/agent:$v"

cp plugins/beeburst.yaml "$tmp/krew.yaml"
# Without -trimpath: the same compiled packages as the unit tests', so CI compiles them once.
OUT=$tmp MANIFEST=$tmp/krew.yaml KREW_BUILD_FLAGS='' PLATFORMS=linux/$(go env GOARCH) hack/krew-release.sh $v 2>/dev/null
archive=$tmp/kubectl-beeburst_${v}_linux_$(go env GOARCH).tar.gz
mkdir "$tmp/x" && tar -C "$tmp/x" -xzf "$archive"
[ -f "$tmp/x/LICENSE" ] || fail "$archive has no LICENSE"
out=$("$tmp/x/kubectl-beeburst" version)
[[ $out == "kubectl-beeburst $v "* ]] || fail "the archive's plugin says \"$out\", not $v"
grep -q "^  version: $v$" "$tmp/krew.yaml" || fail "the krew manifest does not name $v"
sum=$(sha256sum "$archive" | cut -d' ' -f1)
grep -q "sha256: \"$sum\"" "$tmp/krew.yaml" || fail "the krew manifest lacks the archive's sha256 $sum"
grep -q "releases/download/$v/kubectl-beeburst_${v}_linux_$(go env GOARCH).tar.gz" "$tmp/krew.yaml" || fail "the krew manifest's uri does not name $v"

builds=$(make -s -n docker-buildx VERSION=$v)
for img in ghcr.io/beeburst/manager:$v ghcr.io/beeburst/agent:$v; do
  grep -q -- "-t $img " <<<"$builds" || fail "make docker-buildx VERSION=$v does not build $img:"$'\n'"$builds"
done
[ "$(grep -c -- "--build-arg VERSION=$v" <<<"$builds")" -eq 2 ] || fail "make docker-buildx does not stamp both binaries with $v"
grep -q -- "--platform linux/amd64,linux/arm64" <<<"$builds" || fail "make docker-buildx is not multi-arch"
echo "check-release: $v flows into the chart ($chart, appVersion $v, its images), the krew archive and manifest, and the image builds"
