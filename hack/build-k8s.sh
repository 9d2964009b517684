#!/usr/bin/env bash
# Builds Kubernetes components and etcd from Go module sources (no downloads of prebuilt
# binaries: setup-envtest and release tarballs are not reachable from our machines).
#
#   hack/build-k8s.sh OUTDIR COMPONENT...
#
# COMPONENT is any of kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy
# etcd, and kubeadm and kubectl (kind's node image: hack/kind/node-image.sh). Binaries already in OUTDIR are kept (the cache); a fresh machine builds them, about
# 5-6 minutes cold on 2 cores for the kubernetes set and 1 minute for etcd.
#
# Why the throw-away module: k8s.io/kubernetes' go.mod replaces its staging modules
# (k8s.io/api, ...) with local paths, which do not exist in the module cache, so a consumer
# must replace each of them with the published v0.x.y of the same release.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
out=${1:?usage: build-k8s.sh OUTDIR COMPONENT...}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)

k8s=()
want_etcd=false
for c in "$@"; do
  [ -x "$out/$c" ] && continue
  case "$c" in
    etcd) want_etcd=true ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|kubeadm|kubectl) k8s+=("$c") ;;
    *) echo "build-k8s: unknown component $c" >&2; exit 2 ;;
  esac
done

export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
work=$(mktemp -d)
ticker=
trap 'rm -rf "$work"; [ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true' EXIT

# progress LABEL CMD...: runs CMD and prints a line every PROGRESS_EVERY seconds (60) while it
# runs - a cold build is minutes of silence otherwise, which reads as a hang - with the
# elapsed time and how many packages the Go build cache has gained (a rough gauge of work).
progress() {
  local label=$1 start=$SECONDS cache
  shift
  cache=$(go env GOCACHE)
  local before
  before=$(find "$cache" -name '*-a' 2>/dev/null | wc -l)
  ( while sleep "${PROGRESS_EVERY:-60}"; do
      echo "build-k8s: $label: still building, $(( (SECONDS - start) / 60 )) min, $(( $(find "$cache" -name '*-a' 2>/dev/null | wc -l) - before )) packages compiled"
    done ) &
  ticker=$!
  local rc=0
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  ticker=
  echo "build-k8s: $label: done in $(( SECONDS - start )) s"
  return $rc
}

if [ ${#k8s[@]} -gt 0 ]; then
  echo "build-k8s: building ${k8s[*]} ${K8S_VERSION} into $out (cold: ~6 min on 2 cores)"
  mkdir -p "$work/k8s" && cd "$work/k8s"
  go mod init beeburst.local/build-k8s >/dev/null 2>&1
  go mod edit -require "k8s.io/kubernetes@${K8S_VERSION}"
  gomod=$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  staging=${K8S_VERSION/v1./v0.}
  for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod"); do
    go mod edit -replace "$m=$m@$staging"
  done
  # The tool module inherits kubernetes' own pins only if they are copied in.
  go mod edit -go="$(sed -n 's/^go //p' "$gomod")"
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  pkgs=()
  for c in "${k8s[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  printf 'package tools\n\nimport (\n' > tools.go
  for p in "${pkgs[@]}"; do printf '\t_ "%s"\n' "$p" >> tools.go; done
  printf ')\n' >> tools.go
  sed -i '1i //go:build tools\n' tools.go
  go mod tidy -e >/dev/null 2>&1 || true
  progress "${k8s[*]}" go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}" -o "$out/" "${pkgs[@]}"
fi

if $want_etcd; then
  echo "build-k8s: building etcd ${ETCD_VERSION} into $out (cold: ~1 min)"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init beeburst.local/build-etcd >/dev/null 2>&1
  cat > main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >/dev/null 2>&1
  go mod tidy >/dev/null 2>&1
  progress etcd go build -trimpath -ldflags "-s -w" -o "$out/etcd" .
fi
ls -l "$out"
