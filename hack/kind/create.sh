#!/usr/bin/env bash
# Creates the kind cluster of hack/kind/config.yaml (Docker needed; our CI machines have none
# and use hack/testbed instead). hack/cluster.sh loads the images into it.
#
#   hack/kind/create.sh [NAME]
set -euo pipefail
name=${1:-beeburst}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/beeburst-kind/worker-1/nvme /tmp/beeburst-kind/worker-2/nvme
if kind get clusters 2>/dev/null | grep -qx "$name"; then
  echo "kind cluster $name exists"
else
  kind create cluster --name "$name" --config "$here/config.yaml" --wait 2m
fi
kubectl config use-context "kind-$name"
