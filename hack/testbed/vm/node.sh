# The host side of a testbed worker that is a QEMU guest (sourced by hack/testbed/up.sh).
# Why a VM: a node of the testbed's other kind is a network + mount namespace of this host and
# shares its kernel, which cannot load modules here; a guest has its own kernel, so it can load
# a file system's client module (BeeGFS) the way a real HPC node does.
#
# The guest: Debian's cloud kernel and a Debian userland (vm/build-image.sh), booted under
# QEMU's TCG (KVM opens here but does not run guests) with
#   vda  a copy-on-write overlay of the shared root image,
#   vdb  the node's seed disk (vm_seed): identity, kubelet, kube-proxy, certificates, modules,
#   vdc  the "NVMe": ext4 on a sparse file, read and write bandwidth capped by QEMU's drive
#        throttling (a cap per node, on everything the guest writes, buffered or not),
#   eth0 a tap device on the testbed bridge (bbtb-wN), shaped with tc on both ends,
# and -uuid, which gives the guest the machine UUID (DMI product_uuid) real servers have.
# containerd's socket is reachable from the host through socat on the bridge, at the same
# path as a namespace node's ($STATE/nodes/worker-N/containerd.sock), so image loading and
# every ctr command work the same on both kinds.
# shellcheck shell=bash

VM_CONTAINERD_PORT=10010

# vm_uuid N: a stable, distinct machine UUID per node.
vm_uuid() { printf '62656562-7572-4374-8000-%012d\n' "$1"; }

# vm_seed I DIR: the seed disk's files for worker-I (kubelet config paths are the guest's).
vm_seed() {
  local i=$1 d=$2 n=worker-$1 routes="" j
  mkdir -p "$d/bin" "$d/modules"
  cp "$K8S_BIN/kubelet" "$K8S_BIN/kube-proxy" "$d/bin/"
  for m in "${vm_modules[@]}"; do cp "$m" "$d/modules/"; done
  for j in $(seq 1 "$workers"); do
    [ "$j" = "$i" ] || routes+="$(worker_podcidr "$j")@$(worker_ip "$j") "
  done
  cat > "$d/node.env" <<EOF
NODE_NAME=$n
NODE_IP=$(worker_ip "$i")
NODE_PREFIX=24
NODE_ROUTES="$routes"
NODE_LABELS="$3"
SERVICE_CIDR=$TB_SERVICE_CIDR
LINK_RATE_BPS=${R_LINK[$n]}
NVME_PATH=$TB_NVME_PATH
CONTAINERD_PORT=$VM_CONTAINERD_PORT
EOF
  cp "$pki/ca.crt" "$d/ca.crt"
  cp "$STATE/resolv.conf" "$d/resolv.conf"
  kubeconfig "$d/kubelet.kubeconfig" "https://$TB_CP_IP:6443" "kubelet-$n"
  cp "$STATE/cp/kube-proxy.kubeconfig" "$d/kube-proxy.kubeconfig"
  cat > "$d/cni.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "beeburst", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(worker_podcidr "$i")"}]], "routes": [{"dst": "0.0.0.0/0"}]}}
]}
EOF
  cat > "$d/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(worker_ip "$i")
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
failSwapOn: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
resolvConf: /etc/kubernetes/resolv.conf
clusterDomain: cluster.local
serializeImagePulls: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: /etc/kubernetes/ca.crt}
authorization: {mode: Webhook}
EOF
  cat > "$d/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: /etc/kubernetes/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $TB_CLUSTER_CIDR
hostnameOverride: $n
bindAddress: $(worker_ip "$i")
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: {localhostNodePorts: false}
nodePortAddresses: [primary]
EOF
}

# vm_node_up I LABELS: disks, tap, QEMU, and containerd reachable from the host with the base
# images imported.
vm_node_up() {
  local i=$1 labels=$2 n=worker-$1 nd tap mac
  nd=$STATE/nodes/$n
  mkdir -p "$nd/seed"
  tap=$(worker_veth "$i")
  ip tuntap add dev "$tap" mode tap
  sysctl -qw "net.ipv6.conf.$tap.disable_ipv6=1"
  ip link set "$tap" master "$TB_BRIDGE" up
  tc_shape "$tap" "${R_LINK[$n]}"                 # switch -> node; the guest shapes node -> switch
  vm_seed "$i" "$nd/seed" "$labels"
  mke2fs -q -t ext4 -L seed -d "$nd/seed" "$nd/seed.img" "$(( $(du -sm "$nd/seed" | cut -f1) + 16 ))M"
  qemu-img create -q -f qcow2 -b "$VM_IMAGE_DIR/rootfs.img" -F raw "$nd/root.qcow2"
  truncate -s "$disk_size" "$nd/nvme.img"
  mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 -L "nvme-$n" "$nd/nvme.img"
  echo vm > "$nd/kind"
  local throttle=""
  [ "${R_DW[$n]}" -gt 0 ] && throttle+=",throttling.bps-write=${R_DW[$n]}"
  [ "${R_DR[$n]}" -gt 0 ] && throttle+=",throttling.bps-read=${R_DR[$n]}"
  mac=$(printf '52:54:00:be:%02x:%02x' $((i / 256)) $((i % 256)))
  # TCG with one host thread per vCPU (thread=multi).
  start "qemu-$n" "$STATE/logs/$n-qemu.log" qemu-system-x86_64 -machine q35 -accel tcg,thread=multi \
    -cpu max -smp "$vm_cpus" -m "$vm_memory" -uuid "$(vm_uuid "$i")" -name "$n" \
    -kernel "$VM_IMAGE_DIR/vmlinuz" -initrd "$VM_IMAGE_DIR/initrd.img" \
    -append "console=ttyS0 root=/dev/vda rw panic=10 quiet" -no-reboot \
    -drive "file=$nd/root.qcow2,if=virtio,format=qcow2,cache=unsafe" \
    -drive "file=$nd/seed.img,if=virtio,format=raw,readonly=on" \
    -drive "file=$nd/nvme.img,if=virtio,format=raw,cache=none,aio=threads,discard=unmap$throttle" \
    -netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" -device "virtio-net-pci,netdev=n0,mac=$mac" \
    -device virtio-serial-pci -chardev "file,id=daemons,path=$STATE/logs/$n-daemons.log" -device virtconsole,chardev=daemons \
    -serial "file:$STATE/logs/$n-console.log" -display none -monitor none -nodefaults
  # The host end of containerd's socket, where every testbed script expects it.
  start "socat-$n" "$STATE/logs/$n-socat.log" socat "UNIX-LISTEN:$nd/containerd.sock,fork,unlink-early" \
    "TCP:$(worker_ip "$i"):$VM_CONTAINERD_PORT"
  local k=0
  until ctr --address "$nd/containerd.sock" version >/dev/null 2>&1; do
    sleep 1; k=$((k + 1))
    [ $k -lt "${VM_BOOT_TIMEOUT:-300}" ] || die "$n: the guest's containerd is not reachable after ${k}s (see $STATE/logs/$n-console.log, $n-daemons.log)"
    kill -0 "$(cat "$STATE/pids/qemu-$n")" 2>/dev/null || die "$n: QEMU exited: $(tail -3 "$STATE/logs/$n-qemu.log")"
  done
  log "$n: guest up, containerd reachable after ${k}s"
  for tar in "$TB_TOOLS/pause-$key.tar" "$TB_TOOLS/tools-$tools_key.tar"; do
    ctr --address "$nd/containerd.sock" -n k8s.io images import "$tar" >/dev/null \
      || die "$n: image import of $tar failed"
  done
}
