#!/usr/bin/env bash
# Brings up a real Kubernetes cluster on this host, without Docker: a control plane (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler) in its own network namespace and K
# worker nodes, each in its own network + mount namespace with its own containerd, kubelet and
# kube-proxy, a tc-shaped link and a loop-device "NVMe" at /mnt/nvme whose bandwidth is capped.
# See hack/testbed/README.md.
#
#   hack/testbed/up.sh [--workers K] [--link-rate 1Gbit] [--disk-write-rate 200MB]
#       [--disk-read-rate 300MB] [--disk-size 4G]
#       [--node-link-rate worker-2=500Mbit]... [--node-disk-write-rate worker-2=100MB]...
#       [--node-disk-read-rate worker-2=200MB]...
#       [--document-link-rate 1Gbit] [--document-disk-write-rate 300MB]
#       [--document-disk-read-rate 300MB]
#       [--vm-workers K] [--vm-module FILE.ko]... [--vm-memory MiB] [--vm-cpus N]
#
# Rates: link in bits/s (tc notation: 1Gbit, 500Mbit; "none" = unshaped), disk in bytes/s
# (200MB = 200*10^6, 200MiB = 200*2^20; "none" = uncapped). --document-* set the figures
# labelled on the Node objects (the "documented" hardware) when they must differ from the real
# shaping; by default a node documents what it really has.
# --vm-workers K: the last K workers are QEMU guests with their own (Debian cloud) kernel
# instead of namespaces of this host (hack/testbed/vm/node.sh), loading each --vm-module at
# boot (e.g. the BeeGFS client, beegfs.ko; the guest's kernel is the one the first module was
# built for); their disk caps are per node (QEMU's drive throttling), not per container.
# Environment: TESTBED_DIR (state, default /tmp/beeburst-testbed), CACHE_DIR,
# TESTBED_KEEP_ON_FAILURE=1 (leave a failed start up for debugging; down.sh cleans it).
set -euo pipefail
# shellcheck source=hack/testbed/lib.sh
source "$(dirname "$0")/lib.sh"
# The testbed's daemons must not inherit the caller's testbed lock (lib.sh testbed_exclusive):
# it belongs to the run, not to the testbed it leaves up.
exec 9>&-

workers=2 link=1Gbit dwrite=200MB dread=300MB disk_size=4G
vm_workers=0 vm_memory=2048 vm_cpus=2 vm_modules=()
doc_link="" doc_dwrite="" doc_dread=""
declare -A n_link=() n_dwrite=() n_dread=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers=$2; shift 2 ;;
    --link-rate) link=$2; shift 2 ;;
    --disk-write-rate) dwrite=$2; shift 2 ;;
    --disk-read-rate) dread=$2; shift 2 ;;
    --disk-size) disk_size=$2; shift 2 ;;
    --node-link-rate) n_link[${2%%=*}]=${2#*=}; shift 2 ;;
    --node-disk-write-rate) n_dwrite[${2%%=*}]=${2#*=}; shift 2 ;;
    --node-disk-read-rate) n_dread[${2%%=*}]=${2#*=}; shift 2 ;;
    --document-link-rate) doc_link=$2; shift 2 ;;
    --document-disk-write-rate) doc_dwrite=$2; shift 2 ;;
    --document-disk-read-rate) doc_dread=$2; shift 2 ;;
    --vm-workers) vm_workers=$2; shift 2 ;;
    --vm-module) vm_modules+=("$(realpath "$2")"); shift 2 ;;
    --vm-memory) vm_memory=$2; shift 2 ;;
    --vm-cpus) vm_cpus=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[[ $workers =~ ^[0-9]+$ ]] && [ "$workers" -ge 1 ] && [ "$workers" -le 40 ] || die "--workers must be 1..40"
[[ $vm_workers =~ ^[0-9]+$ ]] && [ "$vm_workers" -le "$workers" ] || die "--vm-workers must be 0..--workers"
[[ $vm_memory =~ ^[0-9]+$ ]] && [ "$vm_memory" -ge 768 ] || die "--vm-memory must be at least 768 (MiB)"
[[ $vm_cpus =~ ^[0-9]+$ ]] && [ "$vm_cpus" -ge 1 ] || die "--vm-cpus must be at least 1"
for m in "${vm_modules[@]}"; do [ -f "$m" ] || die "--vm-module $m: no such file"; done
[ ${#vm_modules[@]} -eq 0 ] || [ "$vm_workers" -gt 0 ] || die "--vm-module needs --vm-workers"
# is_vm I: whether worker-I is a QEMU guest (the last --vm-workers of them).
is_vm() { [ "$1" -gt $((workers - vm_workers)) ]; }
# ~350 MiB per namespace worker (containerd, kubelet, kube-proxy, pods), a VM's memory plus
# ~250 MiB of QEMU per VM worker, ~1 GiB control plane.
avail_mb=$(awk '/MemAvailable/{print int($2/1024)}' /proc/meminfo)
need_mb=$((1024 + (workers - vm_workers) * 350 + vm_workers * (vm_memory + 250)))
[ "$need_mb" -le "$avail_mb" ] || die "$workers workers need ~$need_mb MiB, $avail_mb MiB available"
for n in "${!n_link[@]}" "${!n_dwrite[@]}" "${!n_dread[@]}"; do
  [[ $n =~ ^worker-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le "$workers" ] \
    || die "per-node override for unknown node '$n' (nodes: worker-1..worker-$workers)"
done
[ "$(id -u)" = 0 ] || die "must run as root"

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# ---------------------------------------------------------------- prerequisites (cached)
"$TB_HERE/deps.sh" >&2
"$TB_REPO/hack/build-k8s.sh" "$K8S_BIN" etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy >/dev/null
mkdir -p "$TB_TOOLS"
key=$(cat "$TB_HERE/runc-blkio/main.go" "$TB_REPO/hack/image/build.sh" "$TB_REPO/hack/image/mkarchive/main.go" \
  "$TB_REPO/hack/image/pause/main.go" | sha256sum | cut -c1-16)
tools_args=(--host-bin fio --host-bin iperf3 --host-bin sh --host-bin sleep --host-bin cat --host-bin ls
  --host-bin rm --host-bin mkdir --host-bin df --host-bin dd --host-bin curl --host-bin mount --host-bin umount --entrypoint '["/bin/sh"]')
tools_key=$key-$( { echo "${tools_args[*]}"; stat -L -c %Y "$(command -v fio)" "$(command -v iperf3)"; } | sha256sum | cut -c1-8)
if [ ! -x "$TB_TOOLS/runc-blkio-$key" ]; then
  log "building runc-blkio"
  (cd "$TB_REPO" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$TB_TOOLS/runc-blkio-$key" ./hack/testbed/runc-blkio)
fi
if [ ! -f "$TB_TOOLS/pause-$key.tar" ]; then
  "$TB_REPO/hack/image/build.sh" --pause --name beeburst/pause:dev -o "$TB_TOOLS/pause-$key.tar" >&2
fi
if [ ! -f "$TB_TOOLS/tools-$tools_key.tar" ]; then
  "$TB_REPO/hack/image/build.sh" --name beeburst/tools:dev "${tools_args[@]}" -o "$TB_TOOLS/tools-$tools_key.tar" >&2
fi
# Drop builds of older sources.
find "$TB_TOOLS" -maxdepth 1 -type f ! -name "*-$key" ! -name "pause-$key.tar" ! -name "tools-$tools_key.tar" -delete
if [ "$vm_workers" -gt 0 ]; then
  # shellcheck source=hack/testbed/vm/node.sh
  source "$TB_HERE/vm/node.sh"
  # The guest runs the kernel the (first) module was built for: its vermagic names it.
  vm_release=""
  if [ ${#vm_modules[@]} -gt 0 ]; then
    # Read from the module's .modinfo strings ("vermagic=<release> SMP ..."): no kmod needed
    # before build-image.sh installs it. Nothing in the pipe exits early (pipefail).
    vm_release=$(tr '\0' '\n' < "${vm_modules[0]}" | sed -n 's/^vermagic=\([^ ]*\).*/\1/p')
    vm_release=${vm_release%%$'\n'*}
    [ -n "$vm_release" ] || die "${vm_modules[0]}: no vermagic (not a kernel module?)"
  fi
  vm_key=$(cat "$TB_HERE"/vm/build-image.sh "$TB_HERE"/vm/initramfs-init "$TB_HERE"/vm/guest-init.sh | sha256sum | cut -c1-12)
  VM_IMAGE_DIR=$TB_TOOLS/vm-${vm_release:-default}-$vm_key
  "$TB_HERE/vm/build-image.sh" "$VM_IMAGE_DIR" $vm_release
  find "$TB_TOOLS" -maxdepth 1 -type d -name 'vm-*' ! -name "vm-*-$vm_key" -exec rm -rf {} +
fi
t_prereq=$(elapsed)

# ---------------------------------------------------------------- fresh state
if [ -e "$STATE/pids" ] || ip netns list 2>/dev/null | grep -q "^${TB_NS_PREFIX}" || ip link show "$TB_BRIDGE" >/dev/null 2>&1; then
  log "a testbed is (partly) up: tearing it down first"
  "$TB_HERE/down.sh" >&2
fi
rm -rf "$STATE"
mkdir -p "$STATE"/{pids,logs,pki,cp,nodes}
STATE=$(cd "$STATE" && pwd)

ok=false
on_exit() {
  $ok && return
  log "bring-up FAILED after $(elapsed)s; logs in $STATE/logs"
  if [ "${TESTBED_KEEP_ON_FAILURE:-}" = 1 ]; then
    log "TESTBED_KEEP_ON_FAILURE=1: left as it is; run hack/testbed/down.sh"
  else
    "$TB_HERE/down.sh" >&2 || true
  fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# Host changes to undo: sysctls the kubelet sets, directories created as mount points.
for s in $TB_SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done > "$STATE/sysctls.saved"
: > "$STATE/created-dirs"
ensure_dir() { [ -d "$1" ] || { mkdir -p "$1" && echo "$1" >> "$STATE/created-dirs"; }; }
ensure_dir "$TB_NVME_PATH"
ensure_dir /var/lib/cni
ensure_dir /var/lib/kubelet   # the device-plugin socket's path is fixed, whatever --root-dir says
# Made as a side effect by `ip netns add` (a self bind mount) and libmount (its lock file).
for d in /run/netns /run/mount; do [ -e "$d" ] || echo "$d" >> "$STATE/created-dirs"; done

# start NAME LOGFILE CMD...: a daemon in the testbed's cgroup (so down.sh finds it and all it
# forks, whatever happened), detached, its pid in $STATE/pids/NAME.
cg_daemons=/sys/fs/cgroup/pids/${TB_CG_PREFIX}testbed
mkdir -p "$cg_daemons"
start() {
  local name=$1 logf=$2; shift 2
  setsid sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg_daemons" "$@" >"$logf" 2>&1 </dev/null &
  echo $! > "$STATE/pids/$name"
}

# ---------------------------------------------------------------- resolve per-node figures
declare -A R_LINK R_DW R_DR D_LINK D_DW D_DR
for i in $(seq 1 "$workers"); do
  n=worker-$i
  R_LINK[$n]=$(parse_link_rate "${n_link[$n]:-$link}")
  R_DW[$n]=$(parse_disk_rate "${n_dwrite[$n]:-$dwrite}")
  R_DR[$n]=$(parse_disk_rate "${n_dread[$n]:-$dread}")
  D_LINK[$n]=${R_LINK[$n]}; [ -n "$doc_link" ] && D_LINK[$n]=$(parse_link_rate "$doc_link")
  D_DW[$n]=${R_DW[$n]}; [ -n "$doc_dwrite" ] && D_DW[$n]=$(parse_disk_rate "$doc_dwrite")
  D_DR[$n]=${R_DR[$n]}; [ -n "$doc_dread" ] && D_DR[$n]=$(parse_disk_rate "$doc_dread")
done

# ---------------------------------------------------------------- network
log "network: bridge $TB_BRIDGE $TB_HOST_IP/24, control plane $TB_CP_IP, $workers workers"
ip link add "$TB_BRIDGE" type bridge
sysctl -qw "net.ipv6.conf.$TB_BRIDGE.disable_ipv6=1"
ip addr add "$TB_HOST_IP/24" dev "$TB_BRIDGE"
ip link set "$TB_BRIDGE" up

# tc_shape DEV BITS [NETNS]: token bucket at BITS bits/s on DEV's egress. The burst holds 10 ms
# at the rate (at least 128 KiB, so GSO super-packets pass whole).
tc_shape() {
  local dev=$1 bits=$2 ns=${3:-} burst
  [ "$bits" -gt 0 ] || return 0
  burst=$((bits / 8 / 100)); [ "$burst" -lt 131072 ] && burst=131072
  ${ns:+ip netns exec "$ns"} tc qdisc replace dev "$dev" root tbf rate "${bits}bit" burst "$burst" latency 50ms
}
# cable NETNS HOSTVETH IP: a veth from the bridge into NETNS, eth0 there.
cable() {
  local ns=$1 veth=$2 addr=$3
  ip netns add "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  sysctl -qw "net.ipv6.conf.$veth.disable_ipv6=1"
  ip link set "$veth" master "$TB_BRIDGE" up
  ip -n "$ns" link set lo up
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
}
cable "$TB_CP_NS" bbtb-cp "$TB_CP_IP"
for i in $(seq 1 "$workers"); do
  is_vm "$i" && continue   # its tap device comes with the guest (vm_node_up)
  ns=$(worker_ns "$i")
  cable "$ns" "$(worker_veth "$i")" "$(worker_ip "$i")"
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  # Locally generated packets to Service IPs need a route before kube-proxy's DNAT applies.
  # No default route: nothing from a node can leave the testbed.
  ip -n "$ns" route add "$TB_SERVICE_CIDR" dev eth0
  tc_shape eth0 "${R_LINK[worker-$i]}" "$ns"                 # node -> switch
  tc_shape "$(worker_veth "$i")" "${R_LINK[worker-$i]}"     # switch -> node
done
for i in $(seq 1 "$workers"); do
  ip -n "$TB_CP_NS" route add "$(worker_podcidr "$i")" via "$(worker_ip "$i")"
  for j in $(seq 1 "$workers"); do
    [ "$i" = "$j" ] || is_vm "$j" || ip -n "$(worker_ns "$j")" route add "$(worker_podcidr "$i")" via "$(worker_ip "$i")"
  done
done

# ---------------------------------------------------------------- certificates
log "certificates"
pki=$STATE/pki
(
  cd "$pki"
  openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
  openssl req -x509 -new -key ca.key -subj /CN=beeburst-testbed-ca -days 3650 -out ca.crt \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
)
# mkcert NAME CN ORG EKU [SANS]
mkcert() {
  local name=$1 cn=$2 org=$3 eku=$4 sans=${5:-} subj
  subj="/CN=$cn"; [ -n "$org" ] && subj="/O=$org$subj"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key" 2>/dev/null
  openssl req -new -key "$pki/$name.key" -subj "$subj" -out "$pki/$name.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s' \
    "$eku" "${sans:+subjectAltName=$sans}" > "$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 365 -out "$pki/$name.crt" -extfile "$pki/$name.ext" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}
# kubeconfig FILE SERVER CERTNAME
kubeconfig() {
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: beeburst-testbed
  cluster:
    server: $2
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $(base64 -w0 < "$pki/$3.crt")
    client-key-data: $(base64 -w0 < "$pki/$3.key")
contexts:
- name: beeburst-testbed
  context: {cluster: beeburst-testbed, user: $3}
current-context: beeburst-testbed
EOF
}
mkcert apiserver kube-apiserver "" serverAuth \
  "IP:$TB_CP_IP,IP:127.0.0.1,IP:$TB_API_SVC_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
mkcert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters clientAuth
mkcert admin beeburst-testbed-admin system:masters clientAuth
mkcert controller-manager system:kube-controller-manager "" clientAuth
mkcert scheduler system:kube-scheduler "" clientAuth
mkcert kube-proxy system:kube-proxy "" clientAuth
kubeconfig "$STATE/kubeconfig" "https://$TB_CP_IP:6443" admin
kubeconfig "$STATE/cp/controller-manager.kubeconfig" "https://127.0.0.1:6443" controller-manager
kubeconfig "$STATE/cp/scheduler.kubeconfig" "https://127.0.0.1:6443" scheduler
kubeconfig "$STATE/cp/kube-proxy.kubeconfig" "https://$TB_CP_IP:6443" kube-proxy
for i in $(seq 1 "$workers"); do
  mkcert "kubelet-worker-$i" "system:node:worker-$i" system:nodes clientAuth
done

# ---------------------------------------------------------------- control plane
log "control plane: etcd, kube-apiserver"
cpexec=(nsenter "--net=/run/netns/$TB_CP_NS")
start etcd "$STATE/logs/etcd.log" "${cpexec[@]}" "$K8S_BIN/etcd" --name default \
  --data-dir "$STATE/cp/etcd" --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
  --initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster default=http://127.0.0.1:2380 \
  --unsafe-no-fsync --quota-backend-bytes 2147483648 --log-level warn
start kube-apiserver "$STATE/logs/kube-apiserver.log" "${cpexec[@]}" "$K8S_BIN/kube-apiserver" \
  --etcd-servers http://127.0.0.1:2379 --advertise-address "$TB_CP_IP" --bind-address 0.0.0.0 --secure-port 6443 \
  --service-cluster-ip-range "$TB_SERVICE_CIDR" --allow-privileged=true \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP,Hostname \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --enable-aggregator-routing=true --profiling=false --v=1

# ---------------------------------------------------------------- worker nodes
cat > "$STATE/resolv.conf" <<'EOF'
# beeburst testbed: no cluster DNS and no way out; pods resolve nothing but /etc/hosts.
nameserver 127.0.0.1
EOF
node_up() { # i: NVMe, node mount namespace, containerd, images
  local i=$1 n=worker-$1 ns nd loop
  ns=$(worker_ns "$i") nd=$STATE/nodes/worker-$i
  mkdir -p "$nd"/{bin,log,kubelet,volume-plugins,containerd/root,containerd/state,containerd/opt,cni/net.d,cni/ipam}
  # "NVMe": ext4 on a loop device over a sparse file. The loop device does direct I/O on its
  # file (no second copy in the host page cache; the host disk, ~900 MB/s here, is far above
  # the caps) and the file system is mounted with discard, so deleted data punches holes in
  # the sparse file instead of filling the host disk.
  truncate -s "$disk_size" "$nd/nvme.img"
  mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 -L "nvme-$n" "$nd/nvme.img"
  loop=$(losetup --find --show --direct-io=on "$nd/nvme.img")
  [ "$(cat "/sys/block/${loop#/dev/}/loop/dio" 2>/dev/null)" = 1 ] || log "$n: loop device without direct I/O (host file system refuses it)"
  echo "$loop" > "$nd/loopdev"
  local majmin
  majmin=$(printf '%d:%d' "0x$(stat -c %t "$loop")" "0x$(stat -c %T "$loop")")
  echo "$majmin" > "$nd/loopdev.majmin"
  # The node's mount namespace, held open by a sleeping process: a private /run (containerd's
  # sockets, shims, runc state and the pins of pod network namespaces die with the node), its
  # own /var/log (pod logs), /var/lib/cni (CNI result cache), /var/lib/kubelet (the kubelet's
  # device-plugin socket) and the NVMe at $TB_NVME_PATH.
  start "holder-$n" "$STATE/logs/$n-holder.log" nsenter "--net=/run/netns/$ns" \
    unshare --mount --propagation slave sh -ec '
      mount -t tmpfs -o mode=0755,size=256m tmpfs /run
      mount --bind "$1/log" /var/log
      mount -t tmpfs -o mode=0755,size=16m tmpfs /var/lib/cni
      mount -t tmpfs -o mode=0755,size=16m tmpfs /var/lib/kubelet
      mount -o discard "$2" "$3"
      chmod 0777 "$3"
      # Shared inside the node (hostPath volumes with mountPropagation Bidirectional work as
      # on a real node), still a slave of the host: nothing propagates back to the host.
      mount --make-rshared /
      touch "$1/holder.ready"
      exec sleep infinity' sh "$nd" "$loop" "$TB_NVME_PATH"
  local k=0
  until [ -e "$nd/holder.ready" ]; do
    sleep 0.05; k=$((k + 1)); [ $k -lt 200 ] || die "$n: node namespace not ready: $(cat "$STATE/logs/$n-holder.log")"
  done
  local holder
  holder=$(cat "$STATE/pids/holder-$n")
  echo "nsenter -t $holder -m -n --" > "$nd/nsenter"

  # OCI runtime: runc behind the blkio wrapper (caps per container, from its creation).
  cat > "$nd/bin/runc" <<EOF
#!/bin/sh
BEEBURST_RUNC=$(command -v runc) BEEBURST_BLKIO_DEV=$majmin BEEBURST_BLKIO_WBPS=${R_DW[$n]} \\
BEEBURST_BLKIO_RBPS=${R_DR[$n]} BEEBURST_BLKIO_LOG=$STATE/logs/$n-runc-blkio.log \\
exec $TB_TOOLS/runc-blkio-$key "\$@"
EOF
  chmod +x "$nd/bin/runc"
  cat > "$nd/cni/net.d/10-beeburst.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "beeburst", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$nd/cni/ipam",
            "ranges": [[{"subnet": "$(worker_podcidr "$i")"}]], "routes": [{"dst": "0.0.0.0/0"}]}}
]}
EOF
  cat > "$nd/containerd.toml" <<EOF
version = 2
root = "$nd/containerd/root"
state = "$nd/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$nd/containerd.sock"
[ttrpc]
  address = "$nd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$nd/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/beeburst/pause:dev"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$nd/bin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/cni/net.d"
EOF
  # shellcheck disable=SC2046
  start "containerd-$n" "$STATE/logs/$n-containerd.log" $(cat "$nd/nsenter") containerd --config "$nd/containerd.toml"
  k=0
  until ctr --address "$nd/containerd.sock" version >/dev/null 2>&1; do
    sleep 0.1; k=$((k + 1)); [ $k -lt 300 ] || die "$n: containerd did not start (see $STATE/logs/$n-containerd.log)"
  done
  for tar in "$TB_TOOLS/pause-$key.tar" "$TB_TOOLS/tools-$tools_key.tar"; do
    ctr --address "$nd/containerd.sock" -n k8s.io images import "$tar" >/dev/null \
      || die "$n: image import of $tar failed"
  done
}
# node_labels N: the documented figures, as labels the kubelet registers the node with.
node_labels() {
  local n=$1 kind=netns labels="hardware.beeburst.io/link-encoding=none"
  is_vm "${n#worker-}" && kind=vm
  # Which kind of node it is, for tests that need one (a kernel of its own: vm).
  labels+=",testbed.beeburst.io/kind=$kind"
  [ "${D_LINK[$n]}" != 0 ] && labels+=",hardware.beeburst.io/link-rate-bits-per-second=$(quantity "${D_LINK[$n]}")"
  [ "${D_DW[$n]}" != 0 ] && labels+=",hardware.beeburst.io/disk-write-bytes-per-second=$(quantity "${D_DW[$n]}")"
  [ "${D_DR[$n]}" != 0 ] && labels+=",hardware.beeburst.io/disk-read-bytes-per-second=$(quantity "${D_DR[$n]}")"
  echo "$labels"
}
log "worker nodes: NVMe, namespaces or guests, containerd, images"
pids=()
for i in $(seq 1 "$workers"); do
  if is_vm "$i"; then
    vm_node_up "$i" "$(node_labels "worker-$i")" > "$STATE/logs/worker-$i-setup.log" 2>&1 &
  else
    node_up "$i" > "$STATE/logs/worker-$i-setup.log" 2>&1 &
  fi
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || die "worker-$((i + 1)) setup failed: $(tail -5 "$STATE/logs/worker-$((i + 1))-setup.log")"
done

log "waiting for kube-apiserver"
k=0
until kc get --raw /readyz >/dev/null 2>&1; do
  sleep 0.5; k=$((k + 1)); [ $k -lt 240 ] || die "kube-apiserver not ready (see $STATE/logs/kube-apiserver.log)"
done
log "control plane: kube-controller-manager, kube-scheduler"
start kube-controller-manager "$STATE/logs/kube-controller-manager.log" "${cpexec[@]}" "$K8S_BIN/kube-controller-manager" \
  --kubeconfig "$STATE/cp/controller-manager.kubeconfig" --authentication-kubeconfig "$STATE/cp/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$STATE/cp/controller-manager.kubeconfig" --bind-address 127.0.0.1 \
  --leader-elect=false --use-service-account-credentials=true --service-account-private-key-file "$pki/sa.key" \
  --root-ca-file "$pki/ca.crt" --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --service-cluster-ip-range "$TB_SERVICE_CIDR" --allocate-node-cidrs=false --profiling=false --v=1
start kube-scheduler "$STATE/logs/kube-scheduler.log" "${cpexec[@]}" "$K8S_BIN/kube-scheduler" \
  --kubeconfig "$STATE/cp/scheduler.kubeconfig" --authentication-kubeconfig "$STATE/cp/scheduler.kubeconfig" \
  --authorization-kubeconfig "$STATE/cp/scheduler.kubeconfig" --bind-address 127.0.0.1 \
  --leader-elect=false --profiling=false --v=1

log "kubelets and kube-proxies"
for i in $(seq 1 "$workers"); do
  is_vm "$i" && continue   # the guest starts its own (vm/guest-init.sh)
  n=worker-$i nd=$STATE/nodes/worker-$i
  # Each cgroup v1 hierarchy gets the node's cgroup root; cpuset needs its cpus/mems copied.
  for c in $TB_CG_CONTROLLERS; do
    [ -d "/sys/fs/cgroup/$c" ] || continue
    mkdir -p "/sys/fs/cgroup/$c/${TB_CG_PREFIX}$n"
  done
  cat /sys/fs/cgroup/cpuset/cpuset.cpus > "/sys/fs/cgroup/cpuset/${TB_CG_PREFIX}$n/cpuset.cpus"
  cat /sys/fs/cgroup/cpuset/cpuset.mems > "/sys/fs/cgroup/cpuset/${TB_CG_PREFIX}$n/cpuset.mems"
  kubeconfig "$nd/kubelet.kubeconfig" "https://$TB_CP_IP:6443" "kubelet-$n"
  labels=$(node_labels "$n")
  cat > "$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(worker_ip "$i")
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
containerRuntimeEndpoint: unix://$nd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /${TB_CG_PREFIX}$n
failCgroupV1: false
failSwapOn: false
protectKernelDefaults: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
podLogsDir: /var/log/pods
volumePluginDir: $nd/volume-plugins
resolvConf: $STATE/resolv.conf
clusterDomain: cluster.local
serializeImagePulls: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
EOF
  # shellcheck disable=SC2046
  start "kubelet-$n" "$STATE/logs/$n-kubelet.log" $(cat "$nd/nsenter") "$K8S_BIN/kubelet" \
    --config "$nd/kubelet.yaml" --kubeconfig "$nd/kubelet.kubeconfig" --root-dir "$nd/kubelet" \
    --cert-dir "$nd/kubelet/pki" --hostname-override "$n" --node-ip "$(worker_ip "$i")" \
    --node-labels "$labels" --v=1
  cat > "$nd/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $STATE/cp/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $TB_CLUSTER_CIDR
hostnameOverride: $n
bindAddress: $(worker_ip "$i")
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Host-global knobs stay as they are: no conntrack table sizing, no route_localnet.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
nodePortAddresses: [primary]
EOF
  # shellcheck disable=SC2046
  start "kube-proxy-$n" "$STATE/logs/$n-kube-proxy.log" $(cat "$nd/nsenter") "$K8S_BIN/kube-proxy" \
    --config "$nd/kube-proxy.yaml" --v=1
done

# ---------------------------------------------------------------- figures for tests
{
  echo "# beeburst testbed hardware: real (shaped) and documented (labelled) figures per node."
  echo "# Link rates in bits/s, disk rates in bytes/s; 0 = unshaped. Disk caps: per container."
  echo "TESTBED_DIR=$STATE"
  echo "TESTBED_KUBECONFIG=$STATE/kubeconfig"
  echo "TESTBED_NODES=\"$(for i in $(seq 1 "$workers"); do printf 'worker-%s ' "$i"; done | sed 's/ $//')\""
  echo "TESTBED_NVME_PATH=$TB_NVME_PATH"
  # per-container on namespace nodes (blkio throttle), per-node on VM workers (QEMU).
  if [ "$vm_workers" = "$workers" ]; then echo "TESTBED_DISK_CAP_SCOPE=per-node"
  elif [ "$vm_workers" = 0 ]; then echo "TESTBED_DISK_CAP_SCOPE=per-container"
  else echo "TESTBED_DISK_CAP_SCOPE=mixed"; fi
  echo "TESTBED_VM_NODES=\"$(for i in $(seq 1 "$workers"); do is_vm "$i" && printf 'worker-%s ' "$i"; done | sed 's/ $//')\""
  echo "TESTBED_TOOLS_IMAGE=docker.io/beeburst/tools:dev"
  for i in $(seq 1 "$workers"); do
    n=worker-$i v=WORKER_$i
    echo "${v}_NAME=$n"
    echo "${v}_IP=$(worker_ip "$i")"
    echo "${v}_POD_CIDR=$(worker_podcidr "$i")"
    echo "${v}_LINK_RATE_BPS=${R_LINK[$n]}"
    echo "${v}_DISK_WRITE_BPS=${R_DW[$n]}"
    echo "${v}_DISK_READ_BPS=${R_DR[$n]}"
    echo "${v}_DOC_LINK_RATE_BPS=${D_LINK[$n]}"
    echo "${v}_DOC_DISK_WRITE_BPS=${D_DW[$n]}"
    echo "${v}_DOC_DISK_READ_BPS=${D_DR[$n]}"
    if is_vm "$i"; then
      echo "${v}_KIND=vm"
      echo "${v}_DISK_CAP_SCOPE=per-node"
      echo "${v}_NVME_DEVICE=virtio"
      echo "${v}_MACHINE_UUID=$(vm_uuid "$i")"
    else
      echo "${v}_KIND=netns"
      echo "${v}_DISK_CAP_SCOPE=per-container"
      echo "${v}_NVME_DEVICE=$(cat "$STATE/nodes/$n/loopdev.majmin")"
    fi
  done
} > "$STATE/hardware.env"
{
  printf '{\n  "kubeconfig": "%s",\n  "nvmePath": "%s",\n  "diskCapScope": "per-container",\n  "toolsImage": "docker.io/beeburst/tools:dev",\n  "nodes": [' "$STATE/kubeconfig" "$TB_NVME_PATH"
  for i in $(seq 1 "$workers"); do
    n=worker-$i
    [ "$i" -gt 1 ] && printf ','
    dev=virtio kind=vm; is_vm "$i" || { dev=$(cat "$STATE/nodes/$n/loopdev.majmin"); kind=netns; }
    printf '\n    {"name": "%s", "kind": "%s", "ip": "%s", "podCIDR": "%s", "nvmeDevice": "%s",\n' "$n" "$kind" "$(worker_ip "$i")" "$(worker_podcidr "$i")" "$dev"
    printf '     "real": {"linkBitsPerSecond": %s, "diskWriteBytesPerSecond": %s, "diskReadBytesPerSecond": %s},\n' "${R_LINK[$n]}" "${R_DW[$n]}" "${R_DR[$n]}"
    printf '     "documented": {"linkBitsPerSecond": %s, "diskWriteBytesPerSecond": %s, "diskReadBytesPerSecond": %s}}' "${D_LINK[$n]}" "${D_DW[$n]}" "${D_DR[$n]}"
  done
  printf '\n  ]\n}\n'
} > "$STATE/hardware.json"

log "waiting for $workers nodes to be Ready"
k=0
ready_limit=360; [ "$vm_workers" -gt 0 ] && ready_limit=1200   # guests boot under emulation
until [ "$(kc get nodes --no-headers 2>/dev/null | grep -c ' Ready ')" = "$workers" ]; do
  sleep 0.5; k=$((k + 1))
  [ $k -lt $ready_limit ] || die "nodes not Ready: $(kc get nodes 2>&1 | tr '\n' ';') (see $STATE/logs/worker-*-kubelet.log)"
done
for i in $(seq 1 "$workers"); do kc label node "worker-$i" node-role.kubernetes.io/worker= --overwrite >/dev/null; done
# Pods need their namespace's service account (and its token) before they can be created.
k=0
until kc get serviceaccount default -n default >/dev/null 2>&1; do
  sleep 0.5; k=$((k + 1)); [ $k -lt 120 ] || die "no default service account (see $STATE/logs/kube-controller-manager.log)"
done
ok=true
total=$(elapsed)
printf 'UP_SECONDS=%s\nUP_PREREQ_SECONDS=%s\nWORKERS=%s\nVM_WORKERS=%s\n' "$total" "$t_prereq" "$workers" "$vm_workers" > "$STATE/logs/timing.env"
log "up in ${total}s (prerequisites ${t_prereq}s). export KUBECONFIG=$STATE/kubeconfig; figures: $STATE/hardware.env"
