#!/usr/bin/env bash
# A Docker engine to build beeburst's images from their Dockerfiles on a machine like ours
# (root, no registry reachable; /work/shared/ENVIRONMENT.md), without touching the host's
# default Docker socket, iptables or routes:
#   - Debian's docker.io, its dockerd in a network namespace of its own (started with
#     `nsenter --net`; `ip netns exec` remounts /sys and hides the cgroup v1 mounts), with its
#     own data root, exec root and socket, no bridge and no iptables rules;
#   - one veth pair from the host into that namespace and an HTTP proxy (tinyproxy) listening
#     on the host's end only: build steps run in the namespace's network (--network host) and
#     reach Debian's mirror and the Go module proxy through it - the host's own path out, no
#     routing or NAT;
#   - base images made offline (no registry answers here): a Debian bookworm root file system
#     from debootstrap, the same plus the host's Go toolchain, and a static base with a nonroot
#     user, each `docker import`ed under beeburst.local/ and passed to the Dockerfiles as
#     build-args (their defaults stay the public images).
#
#   hack/docker.sh up          # install what is missing (docker.io, tinyproxy, debootstrap), start
#   hack/docker.sh bases       # make the offline base images (once; --force makes them again)
#   hack/docker.sh build       # make docker-build-manager docker-build-agent on those bases
#   hack/docker.sh save DIR    # docker save them into DIR/manager.tar and DIR/agent.tar
#   hack/docker.sh images DIR  # up + bases + build + save: what `IMAGE_BUILDER=docker hack/cluster.sh load` runs
#   hack/docker.sh build-args  # the `docker build` arguments for these bases and the proxy
#   hack/docker.sh env         # the line that points a shell's docker at this engine
#   hack/docker.sh status
#   hack/docker.sh running     # exits 0 when dockerd answers
#   hack/docker.sh host        # its DOCKER_HOST (what KIND_DOCKER_HOST is set to for kind)
#   hack/docker.sh down        # stop dockerd and the proxy, remove the namespace (images kept)
#   hack/docker.sh purge       # down, then remove the data root (images, build cache, bases)
#
# The default socket (/var/run/docker.sock) is never used: hack/cluster.sh takes a cluster
# from kind when plain `docker info` answers, and `make test` must keep using the testbed.
# The images are named by VERSION (IMG_TAG, default dev) under REGISTRY (default beeburst):
# beeburst/manager:dev and beeburst/agent:dev, the names the testbed's e2e suite runs.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

# Not "beeburst-*": the testbed's teardown ends every process in a namespace named so.
NETNS=${BB_DOCKER_NETNS:-bbdocker}
DATA=${BB_DOCKER_DATA:-/var/lib/beeburst-docker}
RUN=${BB_DOCKER_RUN:-/run/beeburst-docker}
SOCK=$RUN/docker.sock
RUNTIME=$DATA/bin/docker-runc
# 10.218.0.0/30: a range the testbed (10.213-10.215) does not use.
HOST_VETH=bbdocker0 HOST_IP=10.218.0.1 NS_IP=10.218.0.2
PROXY_PORT=3128
PROXY=http://$HOST_IP:$PROXY_PORT
# Debian's client (20.10, the daemon's own version) builds with the daemon's built-in BuildKit
# under DOCKER_BUILDKIT=1; a newer client would want the buildx plugin for that.
DOCKER=${BB_DOCKER_CLI:-/usr/bin/docker}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
TAG=${IMG_TAG:-dev}
REGISTRY=${REGISTRY:-beeburst}
BASE_DEBIAN=beeburst.local/debian:$SUITE-slim
BASE_STATIC=beeburst.local/static:nonroot

log() { echo "docker.sh: $*" >&2; }
die() { log "$*"; exit 1; }
d() { DOCKER_HOST=unix://$SOCK DOCKER_BUILDKIT=1 "$DOCKER" "$@"; }
running() { [ -S "$SOCK" ] && d version >/dev/null 2>&1; }
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

install() {
  local want=()
  command -v dockerd >/dev/null && [ -x "$DOCKER" ] || want+=(docker.io)
  command -v tinyproxy >/dev/null || want+=(tinyproxy)
  command -v debootstrap >/dev/null || want+=(debootstrap)
  [ ${#want[@]} -eq 0 ] && return
  log "installing ${want[*]} (apt)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${want[@]}" >/dev/null \
    || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${want[@]}" >/dev/null; }
  # The packages' service units do not run here (no systemd); nothing listens on the default socket.
}

# stop NAME: end the process of $RUN/NAME.pid (ours), TERM then KILL after 30 s.
stop() {
  local f=$RUN/$1.pid p
  if pid_alive "$f"; then
    p=$(cat "$f")
    kill "$p"
    for _ in $(seq 60); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$p" 2>/dev/null && { log "$1 ($p) did not stop in 30 s: killing it"; kill -9 "$p"; }
  fi
  rm -f "$f"
}

network() {
  [ -e "/run/netns/$NETNS" ] || ip netns add "$NETNS"
  if ! ip link show "$HOST_VETH" >/dev/null 2>&1; then
    # A proxy still bound to an address that went with an earlier veth: start it afresh.
    stop tinyproxy
    ip link add "$HOST_VETH" type veth peer name eth0 netns "$NETNS"
    ip addr add "$HOST_IP/30" dev "$HOST_VETH"
    ip link set "$HOST_VETH" up
    ip -n "$NETNS" addr add "$NS_IP/30" dev eth0
    ip -n "$NETNS" link set eth0 up
    ip -n "$NETNS" link set lo up
  fi
}

proxy() {
  pid_alive "$RUN/tinyproxy.pid" && return
  cat > "$RUN/tinyproxy.conf" <<EOF
User nobody
Group nogroup
Port $PROXY_PORT
Listen $HOST_IP
Allow $NS_IP
ConnectPort 443
Timeout 600
MaxClients 64
LogLevel Warning
EOF
  # fd 9 is the testbed's lock when a caller holds it: a daemon must not keep it.
  setsid tinyproxy -d -c "$RUN/tinyproxy.conf" >"$RUN/tinyproxy.log" 2>&1 9>&- &
  echo $! > "$RUN/tinyproxy.pid"
}

# runtime builds hack/docker-runc, dockerd's default OCI runtime: privileged containers (kind's
# nodes) get the capabilities this machine has instead of failing on those it lacks.
runtime() {
  [ -x "$RUNTIME" ] && [ "$RUNTIME" -nt hack/docker-runc/main.go ] && return
  mkdir -p "$(dirname "$RUNTIME")"
  CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$RUNTIME" ./hack/docker-runc
}

up() {
  install
  mkdir -p "$DATA" "$RUN"
  network
  proxy
  if running; then log "dockerd is running (DOCKER_HOST=unix://$SOCK)"; return; fi
  runtime
  log "starting dockerd in network namespace $NETNS (socket $SOCK, data $DATA)"
  DOCKER_RUNC_LOG=$RUN/docker-runc.log setsid nsenter --net="/run/netns/$NETNS" dockerd \
    --iptables=false --ip-masq=false --bridge=none \
    --add-runtime "caps=$RUNTIME" --default-runtime caps \
    --data-root "$DATA/engine" --exec-root "$RUN/exec" --pidfile "$RUN/dockerd.pid" \
    -H "unix://$SOCK" >"$RUN/dockerd.log" 2>&1 9>&- &
  for _ in $(seq 60); do running && { log "dockerd is up: $(d version --format '{{.Server.Version}}')"; return; }; sleep 0.5; done
  tail -n 20 "$RUN/dockerd.log" >&2
  die "dockerd did not answer on $SOCK within 30 s (log: $RUN/dockerd.log)"
}

down() {
  stop dockerd
  stop tinyproxy
  ip link del "$HOST_VETH" 2>/dev/null || true
  [ -e "/run/netns/$NETNS" ] && ip netns del "$NETNS"
  log "stopped (images and build cache kept in $DATA; hack/docker.sh purge removes them)"
}

purge() {
  down
  rm -rf "$DATA" "$RUN"
}

go_image() { echo "beeburst.local/golang:$(go env GOVERSION | sed 's/^go//')-$SUITE"; }

# bases makes the three base images. The build steps reach the internet through the host's own
# path out, so the Debian base trusts what the host trusts: the host's extra CA certificates
# (/usr/local/share/ca-certificates; on our machines an egress proxy's) are added to it. They
# are in these local bases only, never in the public ones the release builds from.
bases() {
  running || die "dockerd is not running: hack/docker.sh up"
  local force=${1:-} gi
  gi=$(go_image)
  if [ "$force" != --force ] && d image inspect "$BASE_DEBIAN" "$gi" "$BASE_STATIC" >/dev/null 2>&1; then
    log "base images present: $BASE_DEBIAN $gi $BASE_STATIC"; return
  fi
  local start=$SECONDS root=$DATA/bases/rootfs static=$DATA/bases/static
  rm -rf "$root" "$static"; mkdir -p "$root" "$static"
  log "debootstrap $SUITE (minbase + ca-certificates) from $DEBIAN_MIRROR"
  debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$root" "$DEBIAN_MIRROR" >"$DATA/bases/debootstrap.log" 2>&1 \
    || { tail -n 20 "$DATA/bases/debootstrap.log" >&2; die "debootstrap failed"; }
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
  fi
  rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -c . | d import --change 'CMD ["bash"]' - "$BASE_DEBIAN" >/dev/null
  # The Go toolchain of the host (the one that builds everything else here) as /usr/local/go,
  # laid out like the golang image (GOPATH /go).
  local goroot
  goroot=$(go env GOROOT)
  tar --numeric-owner -c -C "$root" . -C "$(dirname "$goroot")" --transform="s,^$(basename "$goroot"),usr/local/go," "$(basename "$goroot")" |
    d import --change 'ENV PATH=/usr/local/go/bin:/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV GOPATH=/go' --change 'ENV GOTOOLCHAIN=local' --change 'WORKDIR /go' - "$gi" >/dev/null
  # A distroless-like static base: passwd/group with nonroot (65532), /tmp, CA certificates.
  mkdir -p "$static"/{etc/ssl/certs,tmp,home/nonroot}
  chmod 1777 "$static/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$static/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' > "$static/etc/group"
  cp "$root/etc/ssl/certs/ca-certificates.crt" "$static/etc/ssl/certs/"
  chown 65532:65532 "$static/home/nonroot"
  tar -C "$static" --numeric-owner -c . | d import --change 'USER 65532:65532' - "$BASE_STATIC" >/dev/null
  rm -rf "$root" "$static"
  log "base images made in $(( SECONDS - start )) s: $BASE_DEBIAN $gi $BASE_STATIC"
}

# build_args: what the Dockerfiles need here - the local bases, and the proxy for the build
# steps (http_proxy and https_proxy are Docker's predefined build-args: used by RUN, never
# stored in the image).
build_args() {
  echo "--network host --build-arg http_proxy=$PROXY --build-arg https_proxy=$PROXY" \
    "--build-arg GOLANG_IMAGE=$(go_image) --build-arg BASE_IMAGE=$BASE_STATIC --build-arg DEBIAN_IMAGE=$BASE_DEBIAN"
}

# build: the manager and agent images. The beegfs-tools image needs ThinkParQ's package
# repository, which cannot be reached from here (its name does not resolve): not built.
build() {
  running || die "dockerd is not running: hack/docker.sh up"
  local start=$SECONDS
  DOCKER_HOST=unix://$SOCK make -s docker-build-manager docker-build-agent CONTAINER_TOOL="$DOCKER" \
    REGISTRY="$REGISTRY" VERSION="$TAG" DOCKER_BUILD_ARGS="$(build_args)"
  log "built $REGISTRY/manager:$TAG and $REGISTRY/agent:$TAG in $(( SECONDS - start )) s"
  d image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^$REGISTRY/(manager|agent):$TAG " >&2
}

save() {
  local dir=${1:?usage: hack/docker.sh save DIR}
  mkdir -p "$dir"
  d save -o "$dir/manager.tar" "$REGISTRY/manager:$TAG"
  d save -o "$dir/agent.tar" "$REGISTRY/agent:$TAG"
  log "saved $dir/manager.tar $dir/agent.tar (docker-archive)"
}

status() {
  if running; then
    echo "dockerd: running in netns $NETNS, DOCKER_HOST=unix://$SOCK ($(d version --format '{{.Server.Version}}'))"
    d image ls
  else
    echo "dockerd: not running"
  fi
  pid_alive "$RUN/tinyproxy.pid" && echo "proxy: $PROXY (pid $(cat "$RUN/tinyproxy.pid"))" || echo "proxy: not running"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  purge) purge ;;
  bases) bases "${2:-}" ;;
  build) build ;;
  save) save "${2:-}" ;;
  images) up; bases; build; save "${2:?usage: hack/docker.sh images DIR}" ;;
  build-args) build_args ;;
  env) echo "export DOCKER_HOST=unix://$SOCK DOCKER_BUILDKIT=1  # and use $DOCKER (the daemon's own client)" ;;
  status) status ;;
  running) running ;;
  host) echo "unix://$SOCK" ;;
  *) sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d'; exit 2 ;;
esac
