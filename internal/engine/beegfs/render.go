package beegfs

import (
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// AuthDir is where the auth Secret is mounted in every BeeGFS container.
const AuthDir = "/etc/beeburst/auth"

// ConfigDir is where the instance's ConfigMap (ConfigMapFor) is mounted in the service pods.
const ConfigDir = "/etc/beeburst/config"

// LicenseDir is where spec.beegfs.licenseSecret is mounted in the management pod.
const LicenseDir = "/etc/beeburst/license"

// KeyLicense is the key of spec.beegfs.licenseSecret that holds the licence certificate
// (mgmtd --license-cert-file; /etc/beegfs/license.pem in a package install).
const KeyLicense = "license.pem"

// Instance is what every rendered configuration of one burst buffer needs to know.
type Instance struct {
	BB        *v1alpha1.BurstBuffer
	Nodes     []string
	Shift     int32
	MgmtdHost string // an address of the management node that the other nodes reach
	// Addresses are the nodes' addresses other nodes reach them on (NodeAddress: the
	// InternalIP), by node name: each service and client is restricted to its node's.
	Addresses map[string]string
	Images    Images
	// AgentImage runs the node tasks (module check, directory removal).
	AgentImage string
}

func (in Instance) licenseSecret() string {
	if in.BB.Spec.BeeGFS == nil {
		return ""
	}
	return in.BB.Spec.BeeGFS.LicenseSecret
}

// InterfaceFilters are the network interfaces a node's BeeGFS service or client may use and
// advertise, most preferred first, as BeeGFS 8 filters ("[name|*] [address|*] ..."; the C++
// services' and the client's findNicPosition/NicAddressFilter, mgmtd's --interfaces NicFilter).
// Unrestricted, every daemon advertises every interface it sees (the pod bridge, container
// veths), and peers then try addresses they cannot reach; so by default each node is restricted
// to the address the cluster knows it by (its InternalIP), which is the one the other nodes
// reach. spec.beegfs.interfaces (names) replaces that. Nil when neither is known.
func (in Instance) InterfaceFilters(node string) []string {
	if ifs := in.interfaces(); len(ifs) > 0 {
		return ifs
	}
	if a := in.Addresses[node]; a != "" && net.ParseIP(a) != nil {
		return []string{"* " + a}
	}
	return nil
}

// InterfacesKey is the ConfigMap key (and file name under ConfigDir) of a node's filters.
func InterfacesKey(node string) string { return "interfaces." + node }

// MgmtdConfigKey is the ConfigMap key of mgmtd's configuration file.
const MgmtdConfigKey = "mgmtd.toml"

// MgmtdConfig is mgmtd's configuration file (TOML, the kebab-case keys of its flags;
// beegfs-rust mgmtd/src/config.rs). Only what cannot be a plain argument lives here: the
// interface filters contain spaces, and the official images start mgmtd with an unquoted $@
// (beegfs-containers servers/start.sh), which would split them.
func (in Instance) MgmtdConfig() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# beegfs-mgmtd configuration of burst buffer %s/%s, rendered by beeburst\n", in.BB.Namespace, in.BB.Name)
	place := PlacementFor(in.BB, in.Nodes)
	if f := in.InterfaceFilters(place.Mgmtd); len(f) > 0 {
		q := make([]string, len(f))
		for i, s := range f {
			q[i] = strconv.Quote(s)
		}
		fmt.Fprintf(&b, "interfaces = [%s]\n", strings.Join(q, ", "))
	}
	return b.String()
}

// InterfacesFile is a node's connInterfacesFile for the C++ services: one filter per line
// (common AbstractConfig::initInterfacesList, ICommonConfig::loadStringListFile).
func (in Instance) InterfacesFile(node string) string {
	f := in.InterfaceFilters(node)
	if len(f) == 0 {
		return ""
	}
	return strings.Join(f, "\n") + "\n"
}

func (in Instance) authOn() bool {
	return in.BB.Spec.BeeGFS == nil || !in.BB.Spec.BeeGFS.AuthenticationDisabled
}

func (in Instance) interfaces() []string {
	if in.BB.Spec.BeeGFS == nil {
		return nil
	}
	return in.BB.Spec.BeeGFS.Interfaces
}

// Ports of the instance.
func (in Instance) Ports() Ports { return PortsFor(in.Shift) }

// ManagementAddress is host:port of mgmtd's gRPC service (what `beegfs --mgmtd-addr` takes).
func (in Instance) ManagementAddress() string {
	return fmt.Sprintf("%s:%d", in.MgmtdHost, in.Ports().GRPC)
}

// MgmtdArgs are the command-line flags of beegfs-mgmtd 8. mgmtd 8 is a new program (Rust,
// ThinkParQ/beegfs-rust mgmtd/src/config.rs): it has no connPortShift, so both of its ports are
// given shifted; --init runs once, from the image's beegfs_setup_1 (see MgmtdSetup).
func (in Instance) MgmtdArgs() []string {
	p := in.Ports()
	args := []string{
		"--config-file=" + path.Join(ConfigDir, MgmtdConfigKey),
		// Two arguments, not --db-file=PATH: the official images' init.py finds the database
		// (and so whether beegfs_setup_1 has run) only by an argument that is exactly
		// "--db-file" (beegfs-containers servers/init.py); with the = form it gives up with
		// "The number of setup commands does not match the number of targets" and mgmtd never
		// starts (seen with BeeGFS 8.3.1).
		"--db-file", mgmtdDB(in.BB),
		"--log-target=stderr",
		fmt.Sprintf("--beemsg-port=%d", p.Mgmtd),
		fmt.Sprintf("--grpc-port=%d", p.GRPC),
	}
	if in.authOn() {
		args = append(args,
			"--auth-file="+path.Join(AuthDir, KeyConnAuth),
			"--tls-cert-file="+path.Join(AuthDir, KeyTLSCert),
			"--tls-key-file="+path.Join(AuthDir, KeyTLSKey))
	} else {
		// Only when spec.beegfs.authenticationDisabled says so: both are on by default in
		// mgmtd 8 (auth_disable and tls_disable default false).
		args = append(args, "--auth-disable=true", "--tls-disable=true")
	}
	if in.licenseSecret() != "" {
		args = append(args, "--license-cert-file="+path.Join(LicenseDir, KeyLicense))
	}
	return args
}

// MgmtdSetup is the official image's beegfs_setup_1 for mgmtd: the image's init.py runs it
// once, when the database directory has no alreadyInitByContainer marker
// (ThinkParQ/beegfs-containers servers/init.py; the same form as the BeeGFS CSI driver's
// test file system test/env/beegfs-ubuntu/beegfs8-fs-1.yaml).
func (in Instance) MgmtdSetup() string {
	return "beegfs-mgmtd --init --db-file=" + mgmtdDB(in.BB) + " --log-target=stderr"
}

func mgmtdDB(bb *v1alpha1.BurstBuffer) string { return path.Join(mgmtdDir(bb), "mgmtd.sqlite") }

// commonArgs are the key=value arguments every C++ service (meta, storage) on node takes.
// BeeGFS services read `key=value` arguments as config entries (AbstractConfig; keys from
// common/source/common/app/config/AbstractConfig.cpp: sysMgmtdHost, connPortShift,
// connAuthFile, connDisableAuthentication; connInterfacesFile from meta/storage Config).
func (in Instance) commonArgs(node string) []string {
	args := []string{
		"sysMgmtdHost=" + in.MgmtdHost,
		fmt.Sprintf("connPortShift=%d", in.Shift),
	}
	if in.authOn() {
		args = append(args, "connAuthFile="+path.Join(AuthDir, KeyConnAuth))
	} else {
		args = append(args, "connDisableAuthentication=true")
	}
	if len(in.InterfaceFilters(node)) > 0 {
		args = append(args, "connInterfacesFile="+path.Join(ConfigDir, InterfacesKey(node)))
	}
	return args
}

// MetaArgs are beegfs-meta's arguments. storeAllowFirstRunInit=false: the directory is set up
// by beegfs-setup-meta (MetaSetup), so a missing or foreign directory fails loudly instead of
// silently becoming a new, empty metadata target.
func (in Instance) MetaArgs(node string) []string {
	return append([]string{"storeMetaDirectory=" + metaDir(in.BB), "storeAllowFirstRunInit=false"}, in.commonArgs(node)...)
}

// MetaSetup is beegfs_setup_1 of the metadata service on the i-th node: -C do not touch the
// config file, -p directory, -s numeric node ID (beegfs-setup-meta). No -S: BeeGFS 8's setup
// scripts accept and ignore the string ID it set in 7.x (they print that it is deprecated);
// mgmtd names the node itself (node_meta_<id>, its target target_meta_<id>).
func (in Instance) MetaSetup(i int) string {
	return fmt.Sprintf("beegfs-setup-meta -C -p %s -s %d", metaDir(in.BB), MetaNodeID(i))
}

// StorageArgs are beegfs-storage's arguments on one node (all its targets).
func (in Instance) StorageArgs(node string) []string {
	dirs := make([]string, TargetsPerNode(in.BB))
	for t := range dirs {
		dirs[t] = storageDir(in.BB, t)
	}
	return append([]string{"storeStorageDirectory=" + strings.Join(dirs, ","), "storeAllowFirstRunInit=false"}, in.commonArgs(node)...)
}

// StorageSetups are the beegfs_setup_N of the storage service on the i-th node, one per target
// (-i numeric target ID; no -S, as in MetaSetup: mgmtd names the node node_storage_<id> and
// each target target_storage_<id>). The image matches each target directory to its setup
// command by substring, which is why target directories have fixed-width names (t00, t01, ...).
func (in Instance) StorageSetups(i int) []string {
	s := make([]string, TargetsPerNode(in.BB))
	for t := range s {
		s[t] = fmt.Sprintf("beegfs-setup-storage -C -p %s -s %d -i %d", storageDir(in.BB, t), StorageNodeID(i), StorageTargetID(i, t))
	}
	return s
}

// ClientConf is beegfs-client.conf for the kernel client on node. connPortShift shifts the
// client's own UDP port and the mgmtd port it contacts, the same way as on the services (the
// client's Config.c defines connPortShift, connClientPort 8004 and connMgmtdPort 8008);
// connInterfacesList takes the same filters as the services (client App.c,
// NicAddressFilter), comma-separated.
func (in Instance) ClientConf(node string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# beegfs-client.conf of burst buffer %s/%s, rendered by beeburst\n", in.BB.Namespace, in.BB.Name)
	fmt.Fprintf(&b, "sysMgmtdHost = %s\n", in.MgmtdHost)
	fmt.Fprintf(&b, "connPortShift = %d\n", in.Shift)
	if in.authOn() {
		fmt.Fprintf(&b, "connAuthFile = %s\n", path.Join(AuthDir, KeyConnAuth))
		b.WriteString("connDisableAuthentication = false\n")
	} else {
		b.WriteString("connDisableAuthentication = true\n")
	}
	if f := in.InterfaceFilters(node); len(f) > 0 {
		fmt.Fprintf(&b, "connInterfacesList = %s\n", strings.Join(f, ","))
	}
	return b.String()
}

// cli is the `beegfs` command line with the global flags that reach this instance's mgmtd
// (beegfs-go ctl/internal/config/config.go and ctl/pkg/config: --mgmtd-addr, --auth-file,
// --tls-cert-file is the certificate the server is verified with, --mount=none works without
// a local mount).
func (in Instance) cli() string {
	args := []string{"beegfs", "--mgmtd-addr=" + in.ManagementAddress(), "--mount=none"}
	if in.authOn() {
		args = append(args, "--auth-file="+path.Join(AuthDir, KeyConnAuth), "--tls-cert-file="+path.Join(AuthDir, KeyTLSCert))
	} else {
		args = append(args, "--auth-disable", "--tls-disable")
	}
	return strings.Join(args, " ")
}

// cliFunc defines the shell function bee: the beegfs CLI with this instance's global flags.
// beegfs-go verifies the licence after every command that succeeded (root.go,
// globalPersistentPostRunE) and exits 1 when mgmtd cannot verify licences at all ("Get license:
// License verification library not loaded": an mgmtd without the libbeegfs-license package,
// as ours built from the public sources). The official mgmtd image has the library and the
// CLI only warns. Cobra runs that check only after the command itself succeeded, so this one
// failure is forgiven; anything else keeps the CLI's exit code. Unforgiven, it keeps the
// readiness check failing forever (seen with 8.3.1).
func (in Instance) cliFunc() string {
	return fmt.Sprintf(`bee() {
  _r=0; _o=$(%s "$@" 2>&1) || _r=$?
  if [ $_r -ne 0 ] && printf '%%s\n' "$_o" | tail -n 3 | grep -q 'unable to verify licensed status'; then
    printf '%%s\n' "$_o" | grep -v 'unable to verify licensed status'
    return 0
  fi
  printf '%%s\n' "$_o"
  return $_r
}
`, in.cli())
}

// ReadyScript waits until mgmtd lists every metadata and storage target as reachable
// ("Online") and consistent ("Good") - services registered and targets online - and writes a
// one-line verdict to the termination log. It uses `beegfs target list --state` (columns
// reachability and consistency, beegfs-go ctl/internal/cmd/target/list.go) rather than
// `beegfs health check`, whose exit code also fails on capacity: ad-hoc targets under 10 GiB
// sit in mgmtd's emergency capacity pool and would never count as healthy.
func (in Instance) ReadyScript(timeoutSeconds int) string {
	meta, storage := len(PlacementFor(in.BB, in.Nodes).Meta), len(in.Nodes)*TargetsPerNode(in.BB)
	return fmt.Sprintf(`set -u
%swant_meta=%d; want_storage=%d
deadline=$(( $(date +%%s) + %d ))
while :; do
  meta=$(bee target list --node-type=meta --state); rc1=$?
  storage=$(bee target list --node-type=storage --state); rc2=$?
  m=$(printf '%%s\n' "$meta" | grep -ci 'online.*good')
  s=$(printf '%%s\n' "$storage" | grep -ci 'online.*good')
  if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$m" -ge $want_meta ] && [ "$s" -ge $want_storage ]; then
    echo "ready: $m of $want_meta metadata and $s of $want_storage storage targets online and good" | tee /dev/termination-log
    exit 0
  fi
  if [ $(date +%%s) -ge $deadline ]; then
    { echo "not ready: $m of $want_meta metadata and $s of $want_storage storage targets online and good; not yet:"
      printf '%%s\n%%s\n' "$meta" "$storage" | grep -vi 'online.*good' | tail -n 30; } | tee /dev/termination-log
    exit 1
  fi
  sleep 3
done
`, in.cliFunc(), meta, storage, timeoutSeconds)
}

// StripeScript applies spec.layout's striping to the file system root with
// `beegfs entry set --chunk-size --num-targets` (beegfs-go ctl/internal/cmd/entry/set.go). New
// files and directories inherit the root's pattern.
func (in Instance) StripeScript() string {
	st := StripingFor(in.BB, len(in.Nodes))
	return fmt.Sprintf(`set -eu
%sbee entry set --chunk-size=%s --num-targets=%d /
echo "root stripe pattern: chunk size %s over %d target(s)" | tee /dev/termination-log
`, in.cliFunc(), st.ChunkSize, st.NumTargets, st.ChunkSize, st.NumTargets)
}

// ClientScript mounts the file system with the kernel client and unmounts it when the pod is
// stopped. mount(8) form as BeeGFS' own client mount helper and the CSI driver use it:
// `mount -t beegfs beegfs_nodev <dir> -ocfgFile=<conf>,_netdev`. The kernel module reads
// cfgFile and connAuthFile at mount time in the mounting process' context, so the container's
// own paths work.
//
// The configuration file is named after the burst buffer's UID, and the kernel shows it in the
// mount options, so a mount is recognisably this burst buffer's. That matters after a restart:
// the container keeps a mount it finds (a restart in place), but a beegfs mount of an earlier
// burst buffer of the same name, leaked when its client was killed, is detached first instead
// of being taken for this one.
//
// Once mounted it watches the mount and exits when it is gone (the mount lost), so that a lost
// mount shows as an exited container, not as a readiness probe that fails.
//
// Unmounting must end within the pod's grace period even when the services are already gone
// (a namespace deleted with everything in it: the namespace controller stops services and
// clients at once), or the kubelet kills the container and the mount leaks. So: a clean
// unmount with a time limit, then a forced one, then a lazy one (seen with 8.3.1).
const ClientScript = `set -eu
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
`
