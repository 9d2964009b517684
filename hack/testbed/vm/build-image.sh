#!/usr/bin/env bash
# Builds what a QEMU worker of the testbed boots: Debian's cloud kernel, a small initramfs that
# finds the root disk, and a root file system image with a Debian bookworm userland (containerd,
# runc, the CNI plugins, iptables, ...) from Debian packages. Nothing of Kubernetes or of any
# file system under test is in it: the kubelet, kube-proxy, certificates and a kernel module
# come per node on a seed disk at boot (hack/testbed/up.sh --vm-workers).
#
#   hack/testbed/vm/build-image.sh OUTDIR [KERNEL_RELEASE]
#
# KERNEL_RELEASE (e.g. 6.1.0-56-cloud-amd64) must be a Debian linux-image-* package; default:
# the newest cloud kernel Debian offers. A module given to the testbed must be built for it
# (up.sh reads the module's vermagic and asks for that release).
# Writes OUTDIR/{vmlinuz,initrd.img,rootfs.img,release}; skips the build when they exist.
# Needs root (debootstrap). Installs what it lacks of debootstrap, busybox-static, kmod, QEMU,
# socat and cpio; e2fsprogs (mke2fs -d: no loop mount) comes with hack/testbed/deps.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build-image.sh OUTDIR [KERNEL_RELEASE]}
release=${2:-}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
log() { printf '%s vm-image: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [ -z "$release" ]; then
  release=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}')
  [ -n "$release" ] || die "cannot find Debian's cloud kernel (apt-cache depends linux-image-cloud-amd64)"
fi
[[ $release =~ ^[0-9A-Za-z.+-]+$ ]] || die "bad kernel release '$release'"
if [ -f "$out/rootfs.img" ] && [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ] && [ "$(cat "$out/release" 2>/dev/null)" = "$release" ]; then
  log "cached: $out ($release)"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap)"
export DEBIAN_FRONTEND=noninteractive
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx switch_root && ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' || need+=(busybox-static)
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v socat >/dev/null || need+=(socat)
command -v cpio >/dev/null || need+=(cpio)
PATH=$PATH:/usr/sbin:/sbin command -v depmod >/dev/null || need+=(kmod)   # depmod, modprobe below
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/beeburst-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs

# The userland: what a Kubernetes worker needs, from Debian packages. tini is PID 1 (it reaps
# orphans: containerd shims re-parent to it); socat exposes containerd's socket to the host on
# the testbed's own bridge, so the host imports images into the guest like into any node.
pkgs=containerd,runc,containernetworking-plugins,iptables,iproute2,kmod,util-linux,mount,e2fsprogs,procps,conntrack,ca-certificates,tini,socat,ethtool,iputils-ping
log "debootstrap bookworm ($pkgs)"
debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
  || die "debootstrap failed: $(tail -5 "$work/debootstrap.log")"

# The kernel, unpacked (no maintainer scripts: the initramfs is ours), and its modules' index.
log "kernel linux-image-$release"
(cd "$work" && apt-get download "linux-image-$release" >/dev/null 2>&1) || die "no Debian package linux-image-$release"
dpkg-deb -x "$work"/linux-image-"$release"_*.deb "$work/kernel"
cp "$work/kernel/boot/vmlinuz-$release" "$work/vmlinuz"
mkdir -p "$root/lib/modules"
cp -a "$work/kernel/lib/modules/$release" "$root/lib/modules/"
depmod -b "$root" "$release"

# The initramfs: busybox, the modules that reach the root disk, and an init that mounts it.
log "initramfs"
ir=$work/initramfs
mkdir -p "$ir"/{bin,dev,proc,sys,newroot,lib/modules}
cp /bin/busybox "$ir/bin/busybox"
# In dependency order (modprobe resolves it against the unpacked kernel's index), e.g.
# virtio_ring before virtio.
for f in $(for m in virtio_pci virtio_blk; do modprobe -d "$root" -S "$release" --show-depends "$m"; done | awk '$1 == "insmod" {print $2}'); do
  case $f in *.ko) ;; *) die "compressed module $f: the initramfs' busybox insmod takes plain .ko" ;; esac
  [ -e "$ir/lib/modules/$(basename "$f")" ] && continue
  cp "$f" "$ir/lib/modules/"
  basename "$f" .ko >> "$ir/lib/modules/order"
done
cp "$here/initramfs-init" "$ir/init"
chmod +x "$ir/init"
(cd "$ir" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.img"

# The node's own setup, run by tini as PID 1.
install -m 0755 "$here/guest-init.sh" "$root/sbin/beeburst-init"
mkdir -p "$root/seed" "$root/mnt/nvme" "$root/var/lib/kubelet" "$root/etc/cni/net.d"
echo "beeburst-vm" > "$root/etc/hostname"
: > "$root/etc/machine-id"
# containerd and the packages' services are never started by a service manager here.
rm -f "$root"/etc/systemd/system/multi-user.target.wants/*.service
printf 'nameserver 127.0.0.1\n' > "$root/etc/resolv.conf"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

# The root disk: ext4 filled from the directory (mke2fs -d; no loop device, no mount). Each
# node boots a copy-on-write overlay of it, so the image stays pristine.
log "root file system image"
used=$(du -sm "$root" | cut -f1)
mke2fs -q -t ext4 -L beeburst-root -d "$root" -E root_owner=0:0 "$work/rootfs.img" "$((used + 4096))M"

mkdir -p "$out"
mv "$work/vmlinuz" "$work/initrd.img" "$work/rootfs.img" "$out/"
echo "$release" > "$out/release"
log "done in $(( $(date +%s) - t0 )) s: $out ($(du -sh "$out" | cut -f1))"
