set -eu
conf=/tmp/beegfs-client.conf
printf '%s' "$CLIENT_CONF" > "$conf"
mkdir -p "$MOUNT_POINT"
unmount() {
  umount "$MOUNT_POINT" 2>/dev/null || umount -l "$MOUNT_POINT" 2>/dev/null || true
  rmdir "$MOUNT_POINT" 2>/dev/null || true
  exit 0
}
trap unmount TERM INT
if ! grep -qs " $MOUNT_POINT beegfs " /proc/mounts; then
  mount -t beegfs beegfs_nodev "$MOUNT_POINT" -ocfgFile="$conf",_netdev
fi
echo "mounted at $MOUNT_POINT"
while :; do sleep 3600 & wait $!; done
