#!/usr/bin/env bash
# Runs kind at the version go.mod pins (sigs.k8s.io/kind, which hack/kind's config test also
# decodes with), against the Docker engine KIND_DOCKER_HOST names when it is set (on our
# machines, hack/docker.sh's: unix:///run/beeburst-docker/docker.sock), else the default one.
# A `kind` on the PATH of that version is used; otherwise it is installed into bin/ from the
# Go module proxy (about 20 s).
#
#   hack/kind/kind.sh ARGS...    e.g. hack/kind/kind.sh get clusters
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
version=$(cd "$repo" && go list -m -f '{{.Version}}' sigs.k8s.io/kind)
bin=$repo/bin/kind-$version/kind
if [ ! -x "$bin" ]; then
  if command -v kind >/dev/null && kind version 2>/dev/null | grep -q "^kind $version "; then
    bin=$(command -v kind)
  else
    echo "kind.sh: installing kind $version into ${bin%/kind}" >&2
    (cd "$repo" && GOBIN=${bin%/kind} GOFLAGS=-buildvcs=false go install "sigs.k8s.io/kind@$version")
  fi
fi
if [ -n "${KIND_DOCKER_HOST:-}" ]; then
  export DOCKER_HOST=$KIND_DOCKER_HOST
fi
exec "$bin" "$@"
