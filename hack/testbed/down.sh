#!/usr/bin/env bash
# Tears the testbed down and leaves the host as it was: no processes, mounts, network
# namespaces, interfaces, loop devices, cgroups or iptables rules of the testbed, host sysctls
# restored. Idempotent; works after a failed or partial start (it finds what is left by name,
# cgroup and backing file, not only through the state directory).
#
#   hack/testbed/down.sh [--purge]     # --purge also deletes $TESTBED_DIR/logs
set -uo pipefail
# shellcheck source=hack/testbed/lib.sh
source "$(dirname "$0")/lib.sh"
purge=false
[ "${1:-}" = --purge ] && purge=true

# kill_wait SIGNAL TIMEOUT PID...: signal, then wait until gone (SIGKILL after TIMEOUT s).
kill_wait() {
  local sig=$1 timeout=$2 p k=0; shift 2
  [ $# -gt 0 ] || return 0
  kill "-$sig" "$@" 2>/dev/null
  while :; do
    local alive=()
    # Zombies count as gone: their parent (often init) reaps them in its own time.
    for p in "$@"; do
      kill -0 "$p" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ] && alive+=("$p")
    done
    [ ${#alive[@]} -eq 0 ] && return 0
    k=$((k + 1))
    if [ $k -ge $((timeout * 10)) ]; then kill -KILL "${alive[@]}" 2>/dev/null; sleep 0.2; return 0; fi
    sleep 0.1
  done
}
pidof_state() { [ -f "$STATE/pids/$1" ] && cat "$STATE/pids/$1"; }

# 1. Order matters (ENVIRONMENT.md): workloads, kubelets, containerd, then the control plane
#    with etcd last (kube-apiserver hangs on SIGTERM when etcd went first).
if [ -d "$STATE/pids" ]; then
  # shellcheck disable=SC2046
  kill_wait TERM 3 $(for f in "$STATE"/pids/kubelet-* "$STATE"/pids/kube-proxy-*; do [ -f "$f" ] && cat "$f"; done)
fi
[ -n "${TESTBED_DEBUG:-}" ] && log "kubelets, kube-proxies stopped"
# Pods: every process in a node's cgroup root (containers and their sandboxes).
pod_pids() {
  local d
  for d in /sys/fs/cgroup/pids/"${TB_CG_PREFIX}"worker-*; do
    [ -d "$d" ] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
  done
}
# shellcheck disable=SC2046
kill_wait KILL 5 $(pod_pids)
if [ -d "$STATE/pids" ]; then
  # shellcheck disable=SC2046
  kill_wait TERM 3 $(for f in "$STATE"/pids/containerd-*; do [ -f "$f" ] && cat "$f"; done)
  [ -n "${TESTBED_DEBUG:-}" ] && log "pods, containerd stopped"
  # The cluster's state is thrown away: no need to wait for graceful shutdowns.
  # shellcheck disable=SC2046
  kill_wait KILL 2 $(pidof_state kube-scheduler) $(pidof_state kube-controller-manager) $(pidof_state kube-apiserver)
  # shellcheck disable=SC2046
  kill_wait TERM 2 $(pidof_state etcd)
fi
[ -n "${TESTBED_DEBUG:-}" ] && log "control plane stopped"
# 2. Whatever is left: every process in a testbed cgroup (daemons, shims, node namespace
#    holders, pods) or in a testbed network namespace.
for _ in 1 2 3 4 5; do
  left=$( { cg_pids; for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${TB_NS_PREFIX}"); do ns_pids "$ns"; done; } | sort -u)
  [ -z "$left" ] && break
  # shellcheck disable=SC2086
  kill_wait KILL 3 $left
done
[ -n "${left:-}" ] && log "WARNING: processes still alive: $left"

[ -n "${TESTBED_DEBUG:-}" ] && log "sweep done"
# 3. Mounts: the nodes' mounts lived in their own mount namespaces and went with their last
#    process; these are only for a host-side leftover under the state dir or the NVMe path.
for m in $(awk -v s="$STATE" '$2 == s || index($2, s"/") == 1 {print $2}' /proc/self/mounts | sort -r); do
  umount -l "$m" 2>/dev/null
done
# 4. Loop devices backed by the nodes' NVMe files (also after the state dir lost track).
for img in "$STATE"/nodes/*/nvme.img; do
  [ -e "$img" ] || continue
  for dev in $(losetup -j "$img" -O NAME -n 2>/dev/null); do
    k=0
    until losetup -d "$dev" 2>/dev/null && ! losetup "$dev" >/dev/null 2>&1; do
      k=$((k + 1)); [ $k -ge 50 ] && { log "WARNING: cannot detach $dev"; break; }; sleep 0.1
    done
  done
done
for dev in $(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | awk -v s="$STATE/nodes/" 'index($2, s) == 1 {print $1}'); do
  losetup -d "$dev" 2>/dev/null
done
[ -n "${TESTBED_DEBUG:-}" ] && log "loop devices detached"
# 5. Network: namespaces (their interfaces, routes, qdiscs and kube-proxy/kubelet iptables
#    rules live and die inside them), then the host bridge and any stray veth end.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${TB_NS_PREFIX}"); do
  ip netns delete "$ns" 2>/dev/null || log "WARNING: cannot delete netns $ns"
done
for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^bbtb'); do
  ip link delete "$l" 2>/dev/null
done
# 6. cgroups (all hierarchies), deepest first.
for c in /sys/fs/cgroup/*/; do
  for top in "$c${TB_CG_PREFIX}"*; do
    [ -d "$top" ] || continue
    find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null
    [ -d "$top" ] && log "WARNING: cgroup $top remains"
  done
done
# 7. Host sysctls the kubelet changed, and mount-point directories up.sh created.
if [ -f "$STATE/sysctls.saved" ]; then
  while IFS='=' read -r k v; do [ -n "$k" ] && sysctl -qw "$k=$v" 2>/dev/null; done < "$STATE/sysctls.saved"
  rm -f "$STATE/sysctls.saved"
fi
if [ -f "$STATE/created-dirs" ]; then
  sort -r "$STATE/created-dirs" | while read -r d; do
    [ -n "$d" ] && [ -d "$d" ] || continue
    [ -z "$(find "$d" -mindepth 1 -maxdepth 1 ! -name utab.lock)" ] || continue   # someone else uses it now
    mountpoint -q "$d" && umount "$d" 2>/dev/null
    rm -f "$d/utab.lock"
    rmdir "$d" 2>/dev/null
  done
  rm -f "$STATE/created-dirs"
fi
# 8. State: keep the logs for a post-mortem unless --purge. hardware.env goes: its presence
#    tells tests that a testbed is up.
if [ -d "$STATE" ]; then
  find "$STATE" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} + 2>/dev/null
  $purge && rm -rf "$STATE"
fi
log "down"
