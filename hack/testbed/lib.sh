# Shared definitions of the testbed scripts (sourced, not run). One testbed per host: the
# names of network namespaces, interfaces and cgroups below are fixed.
# shellcheck shell=bash disable=SC2034

TB_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_REPO=$(cd "$TB_HERE/../.." && pwd)
STATE=${TESTBED_DIR:-/tmp/beeburst-testbed}
CACHE_DIR=${CACHE_DIR:-$HOME/.cache/beeburst}
K8S_VERSION=${K8S_VERSION:-v1.36.3}
K8S_BIN=${K8S_BIN:-$CACHE_DIR/k8s-$K8S_VERSION}
TB_TOOLS=$CACHE_DIR/testbed          # helper binaries and base images, keyed by source hash

# Addresses: all on interfaces and namespaces the testbed creates.
TB_BRIDGE=bbtb0                      # host bridge = the "switch" every node is cabled to
TB_HOST_IP=10.213.0.1                # host's address on it (kubectl reaches the API here)
TB_CP_NS=beeburst-cp
TB_CP_IP=10.213.0.2
TB_NS_PREFIX=beeburst-               # beeburst-cp, beeburst-worker-1, ...
TB_CG_PREFIX=beeburst-               # cgroups: beeburst-testbed (daemons), beeburst-worker-N (pods)
TB_CLUSTER_CIDR=10.214.0.0/16        # pods: 10.214.N.0/24 on worker-N
TB_SERVICE_CIDR=10.215.0.0/16
TB_API_SVC_IP=10.215.0.1
TB_NVME_PATH=${TB_NVME_PATH:-/mnt/nvme}
TB_CG_CONTROLLERS="cpu cpuacct cpuset memory devices freezer blkio pids systemd"
# Host sysctls the kubelet sets (it refuses to start otherwise): saved by up.sh, restored by
# down.sh so the host is left as it was.
TB_SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes"

worker_ns() { echo "${TB_NS_PREFIX}worker-$1"; }
worker_ip() { echo "10.213.0.$((10 + $1))"; }
worker_podcidr() { echo "10.214.$1.0/24"; }
worker_veth() { echo "bbtb-w$1"; }

log() { printf '%s testbed: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

kc() { kubectl --kubeconfig "$STATE/kubeconfig" "$@"; }

# shellcheck source=hack/testbed/lock.sh
source "$TB_HERE/lock.sh"

# cg_pids: every process in any testbed cgroup (pids hierarchy covers them all).
cg_pids() {
  local f
  for f in /sys/fs/cgroup/pids/"${TB_CG_PREFIX}"*; do
    [ -d "$f" ] && find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null
  done
  return 0
}

# ns_pids NSNAME: processes whose network namespace is the named one.
ns_pids() {
  local ino p
  ino=$(stat -L -c %i "/run/netns/$1" 2>/dev/null) || return 0
  for p in /proc/[0-9]*; do
    [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$ino" ] && echo "${p#/proc/}"
  done
  return 0
}

# Rates. Link: tc notation (1Gbit, 500Mbit, 100mbit, 1000000000 = bits/s). Disk: 200MB (10^6),
# 200MiB (2^20), 1GB, plain bytes/s. 0 or "none": unshaped.
parse_link_rate() {
  local v=${1,,} n u
  [[ $v == none || $v == 0 ]] && { echo 0; return; }
  [[ $v =~ ^([0-9]+)(k|m|g|t|ki|mi|gi)?(bit|bps)?$ ]] || die "bad link rate '$1' (e.g. 1Gbit, 500Mbit)"
  n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]}
  [[ ${BASH_REMATCH[3]} == bps ]] && n=$((n * 8)) # tc's "bps" means bytes per second
  case $u in
    k) n=$((n * 1000)) ;; m) n=$((n * 1000000)) ;; g) n=$((n * 1000000000)) ;; t) n=$((n * 1000000000000)) ;;
    ki) n=$((n * 1024)) ;; mi) n=$((n * 1048576)) ;; gi) n=$((n * 1073741824)) ;;
  esac
  echo "$n"
}
parse_disk_rate() {
  local v=${1,,} n u
  [[ $v == none || $v == 0 ]] && { echo 0; return; }
  [[ $v =~ ^([0-9]+)(k|m|g|ki|mi|gi)?(b|b/s)?$ ]] || die "bad disk rate '$1' (e.g. 200MB, 200MiB)"
  n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]}
  case $u in
    k) n=$((n * 1000)) ;; m) n=$((n * 1000000)) ;; g) n=$((n * 1000000000)) ;;
    ki) n=$((n * 1024)) ;; mi) n=$((n * 1048576)) ;; gi) n=$((n * 1073741824)) ;;
  esac
  echo "$n"
}
# quantity N: the shortest exact Kubernetes quantity (1000000000 -> 1G, 209715200 -> 200Mi).
quantity() {
  local n=$1 s
  [ "$n" = 0 ] && { echo 0; return; }
  for s in E:1000000000000000000 P:1000000000000000 T:1000000000000 G:1000000000 M:1000000 k:1000 \
    Ei:1152921504606846976 Pi:1125899906842624 Ti:1099511627776 Gi:1073741824 Mi:1048576 Ki:1024; do
    local d=${s#*:}
    if [ $((n % d)) -eq 0 ] && [ "$n" -ge "$d" ]; then echo "$((n / d))${s%%:*}"; return; fi
  done
  echo "$n"
}
