set -eu
conf=/tmp/beegfs-client-$BB_UID.conf
printf '%s' "$CLIENT_CONF" > "$conf"
# Nothing may stat the mount point before a stale mount is gone: a stat on a mount whose
# servers are gone blocks for minutes (connCommRetrySecs), hence -c (no canonicalisation).
if grep -qs " $MOUNT_POINT beegfs " /proc/mounts && ! grep -qs " $MOUNT_POINT beegfs .*cfgFile=$conf" /proc/mounts; then
  echo "detaching a stale beegfs mount at $MOUNT_POINT (not this burst buffer's)"
  umount -l -c "$MOUNT_POINT"
fi
mkdir -p "$MOUNT_POINT"
unmount() {
  timeout 20 umount -c "$MOUNT_POINT" 2>/dev/null || timeout 5 umount -f -c "$MOUNT_POINT" 2>/dev/null || umount -l -c "$MOUNT_POINT" 2>/dev/null || true
  rmdir "$MOUNT_POINT" 2>/dev/null || true
  exit 0
}
trap unmount TERM INT
if ! grep -qs " $MOUNT_POINT beegfs " /proc/mounts; then
  if ! out=$(mount -t beegfs beegfs_nodev "$MOUNT_POINT" -ocfgFile="$conf",_netdev 2>&1); then
    # The kernel client says why in the kernel log (a refused registration, an unreachable
    # management service): keep its last words for the operator's condition.
    { echo "mount failed: $out"; dmesg 2>/dev/null | grep -i beegfs | tail -n 5; } | tee /dev/termination-log >&2
    rmdir "$MOUNT_POINT" 2>/dev/null || true
    exit 1
  fi
fi
echo "mounted at $MOUNT_POINT"
# The mount is watched from here: one that goes away ends the container with its reason (the
# kubelet restarts it, and it mounts again), which the operator tells from a readiness probe
# that timed out on a busy node. /proc/mounts is read, the mount point never stat'ed.
while grep -qs " $MOUNT_POINT beegfs .*cfgFile=$conf" /proc/mounts; do sleep 5 & wait $!; done
echo "mount lost: $MOUNT_POINT is no longer mounted" | tee /dev/termination-log >&2
exit 1
