#!/bin/sh
# PID 1 of a testbed QEMU worker (hack/testbed/up.sh --vm-workers). The root disk is the shared
# Debian image (hack/testbed/vm/build-image.sh); everything that makes this guest a particular
# node comes from the seed disk (/dev/vdb): node.env, the kubelet and kube-proxy binaries,
# their configuration and certificates, and kernel modules to load (e.g. the BeeGFS client).
# The "NVMe" is /dev/vdc, an ext4 made by the host, whose bandwidth QEMU throttles.
#
# Logs: this script's lines on the serial console, the daemons' on a virtio console (hvc0);
# the host writes both under $TESTBED_DIR/logs/.
if [ "$$" = 1 ] && [ "${1:-}" != boot ]; then
  # tini reaps orphans (containerd shims re-parent to PID 1) and forwards signals.
  exec /usr/bin/tini -s -g -- "$0" boot
fi
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
log() { echo "beeburst-init: $*" > /dev/console; }
fail() { log "FAILED: $*"; exec sleep infinity; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# Pods live in child cgroups: the root hands every controller down.
echo "+cpuset +cpu +io +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
# Mounts propagate between hostPath volumes as on a real node (Bidirectional, HostToContainer).
mount --make-rshared /
modprobe virtio_console 2>/dev/null
mount -o ro /dev/vdb /seed || fail "no seed disk"
# shellcheck disable=SC1091
. /seed/node.env
hostname "$NODE_NAME"
echo "$NODE_NAME" > /etc/hostname
printf '127.0.0.1 localhost\n%s %s\n' "$NODE_IP" "$NODE_NAME" > /etc/hosts
# The machine UUID (meta and storage servers need one) is QEMU's -uuid, seen in the DMI table.
log "$NODE_NAME up, machine uuid $(cat /sys/class/dmi/id/product_uuid 2>/dev/null || echo none)"

for m in overlay br_netfilter bridge veth nf_conntrack sch_tbf virtio_net; do modprobe "$m" 2>/dev/null; done
ip link set lo up
i=0
until ip link show eth0 >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); [ $i -lt 200 ] || fail "no eth0"; done
ip addr add "$NODE_IP/$NODE_PREFIX" dev eth0
ip link set eth0 up
# No default route: nothing leaves the testbed. Other nodes' pod networks via those nodes,
# Services via eth0 so kube-proxy's DNAT can apply to local traffic.
for r in $NODE_ROUTES; do ip route add "${r%%@*}" via "${r#*@}"; done
ip route add "$SERVICE_CIDR" dev eth0
sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.ipv6.conf.all.disable_ipv6=1
# The link out of the node (the host shapes the way in, on the tap device).
if [ "${LINK_RATE_BPS:-0}" -gt 0 ]; then
  burst=$((LINK_RATE_BPS / 8 / 100)); [ "$burst" -lt 131072 ] && burst=131072
  tc qdisc replace dev eth0 root tbf rate "${LINK_RATE_BPS}bit" burst "$burst" latency 50ms
fi

for ko in /seed/modules/*.ko; do
  [ -f "$ko" ] || continue
  if insmod "$ko" 2>/tmp/insmod.err; then log "loaded $(basename "$ko")"; else log "cannot load $(basename "$ko"): $(cat /tmp/insmod.err)"; fi
done

mount -o discard /dev/vdc "$NVME_PATH" || fail "cannot mount the NVMe disk at $NVME_PATH"
chmod 0777 "$NVME_PATH"

mkdir -p /etc/containerd /var/lib/kubelet/pki /etc/kubernetes /var/log/pods
cp /seed/cni.conflist /etc/cni/net.d/10-beeburst.conflist
cp /seed/kubelet.yaml /seed/kubelet.kubeconfig /seed/kube-proxy.yaml /seed/kube-proxy.kubeconfig /seed/ca.crt /etc/kubernetes/
cp /seed/resolv.conf /etc/kubernetes/resolv.conf
cat > /etc/containerd/config.toml <<EOF
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/beeburst/pause:dev"
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
EOF
out=/dev/hvc0; [ -c "$out" ] || out=/dev/console
run() { # run NAME CMD...: a daemon whose output goes to the host, line by line with its name
  name=$1; shift
  ( "$@" 2>&1 | sed -u "s/^/$name: /" > "$out" ) &
}
run containerd containerd
i=0
until [ -S /run/containerd/containerd.sock ]; do sleep 0.2; i=$((i + 1)); [ $i -lt 300 ] || fail "containerd did not start"; done
# containerd's socket on the testbed bridge only (the host imports images through it).
run socat socat "TCP-LISTEN:$CONTAINERD_PORT,bind=$NODE_IP,fork,reuseaddr" UNIX-CONNECT:/run/containerd/containerd.sock
run kubelet /seed/bin/kubelet --config /etc/kubernetes/kubelet.yaml --kubeconfig /etc/kubernetes/kubelet.kubeconfig \
  --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --node-labels "$NODE_LABELS" --v=0
run kube-proxy /seed/bin/kube-proxy --config /etc/kubernetes/kube-proxy.yaml --v=0
log "containerd, kubelet, kube-proxy started"
wait
