#!/usr/bin/env bash
# Imports image tars (docker-archive or OCI, e.g. from hack/image/build.sh) into the
# containerd of every testbed node, where pods use them with imagePullPolicy Never or
# IfNotPresent (there is no registry).
#
#   hack/testbed/load-image.sh IMAGE.tar...
set -euo pipefail
# shellcheck source=hack/testbed/lib.sh
source "$(dirname "$0")/lib.sh"
[ $# -gt 0 ] || die "usage: load-image.sh IMAGE.tar..."
socks=("$STATE"/nodes/*/containerd.sock)
[ -S "${socks[0]}" ] || die "no testbed node found under $STATE (run hack/testbed/up.sh)"
pids=()
for sock in "${socks[@]}"; do
  node=$(basename "$(dirname "$sock")")
  (
    for tar in "$@"; do
      out=$(ctr --address "$sock" -n k8s.io images import "$tar" 2>&1) || { echo "$node: import of $tar failed: $out" >&2; exit 1; }
      echo "$node: $(echo "$out" | grep -o 'docker.io/[^ ]*' | sort -u | tr '\n' ' ')"
    done
  ) &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
