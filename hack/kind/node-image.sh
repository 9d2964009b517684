#!/usr/bin/env bash
# Builds a kind node image offline, for machines that reach Debian's mirror and the Go module
# proxy but no container registry (ours: /work/shared/ENVIRONMENT.md). A machine with a
# normal Docker does not need it: kind's own kindest/node images work there.
#
#   hack/kind/node-image.sh [--force]   # prints the image's name: beeburst.local/kind-node:<k8s version>
#
# What goes in, all built here:
#   - the base: kind's images/base (the kind module go.mod pins: its entrypoint, systemd units
#     and containerd configuration, unchanged) on Debian bookworm with Debian's containerd,
#     runc and CNI plugins, and crictl from its Go module (hack/kind/base.Dockerfile);
#   - kubeadm, kubelet and kubectl built from k8s.io/kubernetes (hack/build-k8s.sh, the
#     binaries the testbed runs);
#   - the images kubeadm's control plane runs, under the names kubeadm asks for, built from
#     the same sources at the versions kubeadm names: kube-apiserver, kube-controller-manager,
#     kube-scheduler and kube-proxy from the Kubernetes binaries, etcd and CoreDNS from their
#     Go modules; the sandbox (pause) image is hack/image's static Go pause, named as kind's
#     containerd configuration names it;
#   - kind's default StorageClass (its local-path-provisioner manifest, as kind writes it into
#     its node images) with local-path-provisioner built from its Go module and a helper image
#     of Debian's sh, mkdir and rm, both named beeburst.local/... in the manifest.
# Not in it: kindnetd, kind's default CNI, whose Go module (in kind's repository, with a go.mod
# of its own) the module proxy does not serve. hack/kind/create.sh disables the default CNI on
# such clusters and gives each node the CNI configuration and routes kindnetd would write.
#
# The image is assembled the way `kind build node-image` assembles one (kind's
# pkg/build/nodeimage: binaries copied into a container of the base, images imported into its
# containerd without unpacking, then `docker commit`), without kind's registry pulls.
# Everything is cached: the Kubernetes binaries in ~/.cache/beeburst/k8s-<version>, the rest in
# ~/.cache/beeburst/kind; a warm rebuild takes about a minute. Uses hack/docker.sh's engine.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

K8S_VERSION=${K8S_VERSION:-v1.36.3}
CRICTL_VERSION=v1.34.0
LOCAL_PATH_VERSION=v0.0.30
K8S_BIN=${K8S_BIN:-$HOME/.cache/beeburst/k8s-$K8S_VERSION}
CACHE=${KIND_CACHE:-$HOME/.cache/beeburst/kind}
KIND_VERSION=$(go list -m -f '{{.Version}}' sigs.k8s.io/kind)
KIND_DIR=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kind)
BASE=beeburst.local/kind-base:$KIND_VERSION
NODE=beeburst.local/kind-node:$K8S_VERSION
PROVISIONER=beeburst.local/local-path-provisioner:$LOCAL_PATH_VERSION
HELPER=beeburst.local/local-path-helper:bookworm
SOCK=${BB_DOCKER_RUN:-/run/beeburst-docker}/docker.sock
force=${1:-}

log() { echo "node-image: $*" >&2; }
d() { DOCKER_HOST=unix://$SOCK DOCKER_BUILDKIT=1 /usr/bin/docker "$@"; }

# gobin DIR PKG@VERSION: a static build of a Go module's command into DIR (kept when present).
gobin() {
  local dir=$1 pkg=$2 name
  name=$(basename "${pkg%@*}")
  [ -x "$dir/$name" ] && return
  log "building $pkg"
  GOBIN=$dir CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local go install -trimpath -ldflags "-s -w" "$pkg"
}

if [ "$force" != --force ] && d image inspect "$NODE" >/dev/null 2>&1; then
  log "$NODE is there (--force builds it again)"
  echo "$NODE"; exit 0
fi
start=$SECONDS
hack/docker.sh up
hack/docker.sh bases
# shellcheck disable=SC2207 # word-split on purpose: a list of arguments
build_args=($(hack/docker.sh build-args))

hack/build-k8s.sh "$K8S_BIN" kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubeadm kubectl >&2

# The versions kubeadm asks for, e.g. registry.k8s.io/etcd:3.6.5-0 and coredns/coredns:v1.12.1.
images=$("$K8S_BIN/kubeadm" config images list --kubernetes-version "$K8S_VERSION")
ref() { grep -m1 "$1" <<<"$images"; }
etcd_ref=$(ref '/etcd:') coredns_ref=$(ref '/coredns:')
etcd_version=v${etcd_ref##*:}; etcd_version=${etcd_version%-*}
coredns_version=${coredns_ref##*:}
pause_ref=$(sed -n 's/^ *sandbox_image = "\(.*\)"/\1/p' "$KIND_DIR/images/base/files/etc/containerd/config.toml")
log "kubeadm $K8S_VERSION asks for $etcd_ref and $coredns_ref; kind $KIND_VERSION's sandbox is $pause_ref"

bins=$CACHE/bin
mkdir -p "$bins" "$CACHE/images"
etcd_bin=$CACHE/etcd-$etcd_version
if "$K8S_BIN/etcd" --version 2>/dev/null | grep -qx "etcd Version: ${etcd_version#v}"; then
  etcd_bin=$K8S_BIN # the testbed's etcd is that version
else
  ETCD_VERSION=$etcd_version hack/build-k8s.sh "$etcd_bin" etcd >&2
fi
gobin "$bins/coredns-$coredns_version" "github.com/coredns/coredns@$coredns_version"
gobin "$bins/local-path-provisioner-$LOCAL_PATH_VERSION" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_VERSION"
gobin "$bins/crictl-$CRICTL_VERSION" "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION"

# archive NAME FILE ARGS...: hack/image/build.sh into the cache, once per name.
archive() {
  local name=$1 file=$CACHE/images/$2; shift 2
  [ -f "$file" ] && [ "$(cat "$file.name" 2>/dev/null)" = "$name" ] && return
  hack/image/build.sh --name "$name" -o "$file" "$@" >&2
  echo "$name" > "$file.name"
}
path=(--env PATH=/usr/local/bin:/usr/bin:/bin)
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  archive "registry.k8s.io/$c:$K8S_VERSION" "$c.tar" --binary "$K8S_BIN/$c:/usr/local/bin/$c" "${path[@]}"
done
archive "$etcd_ref" etcd.tar --binary "$etcd_bin/etcd:/usr/local/bin/etcd" "${path[@]}"
archive "$coredns_ref" coredns.tar --binary "$bins/coredns-$coredns_version/coredns:/coredns"
archive "$pause_ref" pause.tar --pause
archive "$PROVISIONER" local-path-provisioner.tar \
  --binary "$bins/local-path-provisioner-$LOCAL_PATH_VERSION/local-path-provisioner:/usr/local/bin/local-path-provisioner" "${path[@]}"
archive "$HELPER" local-path-helper.tar --host-bin sh --host-bin mkdir --host-bin rm --entrypoint '["/bin/sh"]' "${path[@]}"

# kube-proxy needs iptables and conntrack with their extensions: a Debian image, as
# Kubernetes' own kube-proxy image is (distroless-iptables).
proxy_ref=registry.k8s.io/kube-proxy:$K8S_VERSION
if [ "$(cat "$CACHE/images/kube-proxy.tar.name" 2>/dev/null)" != "$proxy_ref" ]; then
  ctx=$(mktemp -d)
  cp "$K8S_BIN/kube-proxy" "$ctx/"
  cat > "$ctx/Dockerfile" <<'EOF'
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM $DEBIAN_IMAGE
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      iptables nftables conntrack ipset kmod \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*
COPY --chmod=0755 kube-proxy /usr/local/bin/kube-proxy
EOF
  d build "${build_args[@]}" -t "$proxy_ref" "$ctx" >&2
  rm -rf "$ctx"
  d save -o "$CACHE/images/kube-proxy.tar" "$proxy_ref"
  echo "$proxy_ref" > "$CACHE/images/kube-proxy.tar.name"
fi

# The base image, from kind's files.
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cp -r "$KIND_DIR/images/base/files" "$ctx/files"
chmod -R u+w "$ctx/files"
cp "$bins/crictl-$CRICTL_VERSION/crictl" "$ctx/"
log "building $BASE"
d build "${build_args[@]}" -f hack/kind/base.Dockerfile -t "$BASE" "$ctx" >&2

# kind's default StorageClass manifest (pkg/build/nodeimage/const_storage.go), our images.
awk '/^const defaultStorageManifest = `$/ {on=1; next} on && /^`$/ {exit} on' \
  "$KIND_DIR/pkg/build/nodeimage/const_storage.go" |
  sed -e "s#\` + storageProvisionerImage + \`#$PROVISIONER#" -e "s#\` + storageHelperImage + \`#$HELPER#" \
  > "$ctx/default-storage.yaml"
grep -q "image: $PROVISIONER" "$ctx/default-storage.yaml" || { log "kind's storage manifest has changed shape"; exit 1; }

# The node image, as kind's node-image builder makes it.
log "assembling $NODE"
id=$(d run -d --entrypoint=sleep --security-opt seccomp=unconfined "$BASE" infinity)
trap 'd rm -f -v "$id" >/dev/null 2>&1 || true; rm -rf "$ctx"' EXIT
for b in kubeadm kubelet kubectl; do
  d cp "$K8S_BIN/$b" "$id:/usr/bin/$b"
done
d exec "$id" chown root:root /usr/bin/kubeadm /usr/bin/kubelet /usr/bin/kubectl
d exec "$id" chmod 0755 /usr/bin/kubeadm /usr/bin/kubelet /usr/bin/kubectl
d exec "$id" sh -c "echo $K8S_VERSION > /kind/version && mkdir -p /kind/manifests"
d cp "$ctx/default-storage.yaml" "$id:/kind/manifests/default-storage.yaml"
d exec "$id" bash -c 'nohup containerd > /dev/null 2>&1 &'
d exec "$id" bash -c 'for i in $(seq 50); do [ -S /run/containerd/containerd.sock ] && ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done; exit 1'
for t in "$CACHE"/images/*.tar; do
  d exec -i "$id" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
    --all-platforms --no-unpack --digests - < "$t" >/dev/null
done
d exec "$id" ctr --namespace=k8s.io images list -q >&2
d exec "$id" pkill containerd
d commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' "$id" "$NODE" >/dev/null
log "$NODE built in $(( SECONDS - start )) s"
echo "$NODE"
