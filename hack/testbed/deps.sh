#!/usr/bin/env bash
# Installs what the testbed needs from the distribution's packages: containerd, runc, the CNI
# plugins, iptables, iproute2, e2fsprogs, openssl and the tools the proof pods carry (fio,
# iperf3). Idempotent and quick (no apt-get at all) when everything is present.
#
#   hack/testbed/deps.sh
set -euo pipefail

# command -> Debian package
declare -A want=(
  [containerd]=containerd
  [runc]=runc
  [ctr]=containerd
  [iptables]=iptables
  [ip]=iproute2
  [tc]=iproute2
  [mkfs.ext4]=e2fsprogs
  [openssl]=openssl
  [fio]=fio
  [iperf3]=iperf3
  [losetup]=mount
  [nsenter]=util-linux
  [conntrack]=conntrack
)
missing=()
for cmd in "${!want[@]}"; do
  PATH=$PATH:/usr/sbin:/sbin command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
done
# CNI plugins have no command on PATH.
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] \
  || missing+=(containernetworking-plugins)

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all present"
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
# --no-install-recommends: no docker.io/criu and friends; policy-rc.d: the packages' own
# services must not start (the testbed runs its own containerd per node).
policy=/usr/sbin/policy-rc.d
created_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created_policy=true
fi
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
$created_policy && rm -f "$policy"
# A package-started system containerd would be harmless (own socket) but is not wanted.
if pgrep -x containerd >/dev/null 2>&1 && [ -S /run/containerd/containerd.sock ] && command -v systemctl >/dev/null; then
  systemctl stop containerd 2>/dev/null || true
fi
echo "deps: done"
