#!/usr/bin/env bash
# Creates the kind cluster of hack/kind/config.yaml (one control plane, cordoned, and two workers
# with a host directory each at /mnt/nvme) and writes its kubeconfig to bin/kind-NAME.kubeconfig.
# hack/cluster.sh loads the images into it.
#
#   hack/kind/create.sh [NAME]                     # kind on the default Docker engine
#   KIND_DOCKER_HOST=unix:///run/beeburst-docker/docker.sock hack/kind/create.sh [NAME]
#
# On hack/docker.sh's engine (our machines: dockerd in a network namespace of its own, no
# registry) the node image is built offline (hack/kind/node-image.sh), config-netns.yaml is
# appended to the config, and, in place of kind's default CNI (kindnetd, which cannot be built
# here), each node gets the CNI configuration kindnetd writes - ptp and host-local over the
# node's pod CIDR, portmap - and a route to every other node's pod CIDR via that node. Those
# routes live in the node containers: nodes restarted by Docker lose them, and a cluster whose
# nodes are not Ready is deleted and made again.
set -euo pipefail
name=${1:-beeburst}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kind=$here/kind.sh
NETNS_SOCK=unix://${BB_DOCKER_RUN:-/run/beeburst-docker}/docker.sock
export KUBECONFIG=$repo/bin/kind-$name.kubeconfig
mkdir -p "$repo/bin" /tmp/beeburst-kind/worker-1/nvme /tmp/beeburst-kind/worker-2/nvme

log() { echo "kind: $*" >&2; }
d() { DOCKER_HOST=${KIND_DOCKER_HOST:-${DOCKER_HOST:-}} docker "$@"; }

# cordon: the control plane takes no workloads and has no /mnt/nvme; a burst buffer chosen by
# count alone (spec.nodes.count, the first Ready, schedulable nodes by name) goes to the workers.
cordon() { kubectl cordon -l node-role.kubernetes.io/control-plane >&2; }

netns_engine=false
[ "${KIND_DOCKER_HOST:-}" = "$NETNS_SOCK" ] && netns_engine=true

if "$kind" get clusters 2>/dev/null | grep -qx "$name"; then
  "$kind" get kubeconfig --name "$name" > "$KUBECONFIG"
  if kubectl wait nodes --all --for=condition=Ready --timeout=30s >/dev/null 2>&1; then
    log "cluster $name exists"
    cordon
    exit 0
  fi
  # Its node containers stopped (the engine was restarted) or never became Ready: on
  # hack/docker.sh's engine their routes are gone with them. Make it again.
  log "cluster $name exists but its nodes are not Ready: deleting it"
  "$kind" delete cluster --name "$name"
fi

# A new cluster's drives start empty: what an earlier cluster's burst buffers left in these
# host directories (deleting a cluster removes its nodes, not them) is not this one's.
rm -rf /tmp/beeburst-kind/worker-1/nvme /tmp/beeburst-kind/worker-2/nvme
mkdir -p /tmp/beeburst-kind/worker-1/nvme /tmp/beeburst-kind/worker-2/nvme

if ! $netns_engine; then
  "$kind" create cluster --name "$name" --config "$here/config.yaml" --kubeconfig "$KUBECONFIG" --wait 2m
  cordon
  exit 0
fi

start=$SECONDS
image=$("$here/node-image.sh")
config=$(mktemp)
trap 'rm -f "$config"' EXIT
cat "$here/config.yaml" "$here/config-netns.yaml" > "$config"
# kind mounts the host's /lib/modules into every node; this machine has none.
mkdir -p /lib/modules
"$kind" create cluster --name "$name" --config "$config" --image "$image" --kubeconfig "$KUBECONFIG"

# kindnetd's part: every node's pod CIDR (the controller manager assigns them as nodes join).
declare -A cidr ip
nodes=$("$kind" get nodes --name "$name")
for n in $nodes; do
  for _ in $(seq 60); do
    cidr[$n]=$(kubectl get node "$n" -o jsonpath='{.spec.podCIDR}' 2>/dev/null || true)
    [ -n "${cidr[$n]}" ] && break
    sleep 1
  done
  [ -n "${cidr[$n]}" ] || { log "node $n has no pod CIDR after 60 s"; exit 1; }
  ip[$n]=$(d inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$n")
done
for n in $nodes; do
  d exec -i "$n" sh -c 'cat > /etc/cni/net.d/10-kindnet.conflist' <<EOF
{
  "cniVersion": "0.3.1",
  "name": "kindnet",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "/run/cni-ipam-state",
        "routes": [{"dst": "0.0.0.0/0"}],
        "ranges": [[{"subnet": "${cidr[$n]}"}]]
      },
      "mtu": 1500
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
  for m in $nodes; do
    [ "$m" = "$n" ] || d exec "$n" ip route replace "${cidr[$m]}" via "${ip[$m]}"
  done
  log "$n: pod CIDR ${cidr[$n]}, node IP ${ip[$n]}"
done
kubectl wait nodes --all --for=condition=Ready --timeout=3m
cordon
kubectl -n kube-system rollout status deployment/coredns --timeout=3m
log "cluster $name is up in $(( SECONDS - start )) s (KUBECONFIG=$KUBECONFIG)"
