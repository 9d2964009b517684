package beegfs

import (
	"fmt"
	"path"
	"slices"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Version is the BeeGFS release the default images are pinned to: 8.3.1, the newest release
// (ThinkParQ/beegfs tag 8.3.1, November 2026), against which the engine ran end to end here
// (docs/beegfs.md: built from the public sources, the same release on every piece). The
// official images are built per release by ThinkParQ/beegfs-containers' CI from the Git tag;
// the tag is not checked against the registry from here (no registry access on our machines).
const Version = "8.3.1"

// Default images. ThinkParQ publishes server images only (ThinkParQ/beegfs-containers,
// README: "only server images exist today"); the tools image with the `beegfs` CLI and
// mount(8) is ours, built from the Dockerfile where the internet is reachable.
const (
	DefaultMgmtdImage   = "ghcr.io/thinkparq/beegfs-mgmtd:" + Version
	DefaultMetaImage    = "ghcr.io/thinkparq/beegfs-meta:" + Version
	DefaultStorageImage = "ghcr.io/thinkparq/beegfs-storage:" + Version
	DefaultClientImage  = "ghcr.io/beeburst/beegfs-tools:" + Version
)

// Images resolves spec.beegfs.images against the defaults.
type Images struct{ Mgmtd, Meta, Storage, Client string }

// ImagesFor returns the images of bb.
func ImagesFor(bb *v1alpha1.BurstBuffer) Images {
	im := Images{DefaultMgmtdImage, DefaultMetaImage, DefaultStorageImage, DefaultClientImage}
	if bb.Spec.BeeGFS == nil || bb.Spec.BeeGFS.Images == nil {
		return im
	}
	s := bb.Spec.BeeGFS.Images
	for _, p := range []struct {
		dst *string
		src v1alpha1.ImageReference
	}{{&im.Mgmtd, s.Management}, {&im.Meta, s.Metadata}, {&im.Storage, s.Storage}, {&im.Client, s.Client}} {
		if p.src != "" {
			*p.dst = string(p.src)
		}
	}
	return im
}

// Base ports of BeeGFS 8 (doc.beegfs.io "Network Configuration"; defaults in the sources:
// common AbstractConfig connStoragePort 8003, connClientPort 8004, connMetaPort 8005,
// connMgmtdPort 8008; mgmtd config.rs beemsg_port 8008 and grpc_port 8010).
const (
	BaseStoragePort = 8003
	BaseClientPort  = 8004
	BaseMetaPort    = 8005
	BaseMgmtdPort   = 8008
	BaseGRPCPort    = 8010
)

// Port shifts. A shift moves all five ports; one burst buffer uses 8003+s..8010+s, so shifts a
// multiple of ShiftStep apart never overlap. The first shift is ShiftStart, not 0: a node may
// also run a site-wide BeeGFS on the default ports. The last one keeps every port below 30000,
// where the NodePort range (30000-32767) and the Linux ephemeral range (32768-60999) begin.
const (
	ShiftStart = 10000
	ShiftStep  = 10
	ShiftMax   = 21980
)

// Ports are the shifted ports of one instance.
type Ports struct{ Storage, Client, Meta, Mgmtd, GRPC int32 }

// PortsFor applies a shift to the base ports.
func PortsFor(shift int32) Ports {
	return Ports{BaseStoragePort + shift, BaseClientPort + shift, BaseMetaPort + shift, BaseMgmtdPort + shift, BaseGRPCPort + shift}
}

// AllocateShift returns the smallest free shift, given the shifts of the other BeeGFS burst
// buffers that share at least one node with this one. Pure, so that the rule is tested alone;
// the engine gathers used from the other BurstBuffers' status.beegfs.connPortShift.
func AllocateShift(used []int32) (int32, error) {
	taken := map[int32]bool{}
	for _, u := range used {
		taken[u] = true
	}
	for s := int32(ShiftStart); s <= ShiftMax; s += ShiftStep {
		if !taken[s] {
			return s, nil
		}
	}
	return 0, fmt.Errorf("no free BeeGFS port shift: %d burst buffers already share these nodes", len(taken))
}

// Placement is where each service runs: BeeOND's layout (beeond(8): management on the first
// node, metadata on the first m nodes, storage on all), every node a client.
type Placement struct {
	Mgmtd   string
	Meta    []string
	Storage []string
	Clients []string
}

// PlacementFor places the services over the burst buffer's nodes (in status order): metadata
// servers as MetadataServers says; storage and clients go on every node, as the nodes were
// chosen for that.
func PlacementFor(bb *v1alpha1.BurstBuffer, nodes []string) Placement {
	m := min(MetadataServers(bb), len(nodes))
	p := Placement{Meta: append([]string(nil), nodes[:m]...), Storage: append([]string(nil), nodes...), Clients: append([]string(nil), nodes...)}
	if len(nodes) > 0 {
		p.Mgmtd = nodes[0]
	}
	return p
}

// MetadataServers is how many metadata servers the burst buffer runs. Once its nodes are
// recorded, their roles say (decided once, with the nodes: the data lives there); before,
// spec.layout.metadataServers, or more when spec.target's decision sized them from a
// per-server rate (status.target.metadataServers); at least 1.
func MetadataServers(bb *v1alpha1.BurstBuffer) int {
	recorded := 0
	for _, n := range bb.Status.Nodes {
		if slices.Contains(n.Roles, v1alpha1.RoleMetadata) {
			recorded++
		}
	}
	if recorded > 0 {
		return recorded
	}
	m := max(int(bb.Spec.Layout.MetadataServers), 1)
	if t := bb.Status.Target; bb.Spec.Target != nil && t != nil {
		m = max(m, int(t.MetadataServers))
	}
	return m
}

// TargetsPerNode is spec.layout.storageTargetsPerNode (default 1).
func TargetsPerNode(bb *v1alpha1.BurstBuffer) int {
	return max(1, int(bb.Spec.Layout.StorageTargetsPerNode))
}

// Numeric IDs. BeeGFS node IDs and target IDs are 16-bit; nodes are at most 1024 (CRD) and
// targets per node at most 16, so index*16+t+1 stays below 2^16 and never collides. They are
// the only names the engine gives: mgmtd derives the aliases the CLI shows from them
// (node_meta_<id>, node_storage_<id>, target_meta_<id>, target_storage_<id>; beegfs-rust
// mgmtd/src/db/node.rs and target.rs).
func MetaNodeID(i int) int         { return i + 1 }
func StorageNodeID(i int) int      { return i + 1 }
func StorageTargetID(i, t int) int { return i*16 + t + 1 }

// Directories. Everything of a burst buffer lives below nodetask.DataDir
// (<storage path>/beeburst/<namespace>.<name>), so `agent dir remove` of that one directory
// removes all targets. Containers see the storage path at nodetask.HostMount.
func mgmtdDir(bb *v1alpha1.BurstBuffer) string {
	return path.Join(nodetask.InHost(bb, nodetask.DataDir(bb)), "mgmtd")
}
func metaDir(bb *v1alpha1.BurstBuffer) string {
	return path.Join(nodetask.InHost(bb, nodetask.DataDir(bb)), "meta")
}
func storageDir(bb *v1alpha1.BurstBuffer, t int) string {
	return path.Join(nodetask.InHost(bb, nodetask.DataDir(bb)), "storage", fmt.Sprintf("t%02d", t))
}

// MountRoot holds the client mount points on the host. It is deliberately outside the data
// directory: a mount leaked by a killed client pod must never be below a directory that teardown
// removes recursively (that would hang on a dead BeeGFS, or delete through it).
const MountRoot = "/run/beeburst"

// MountPoint is where the client mounts the file system on every node.
func MountPoint(bb *v1alpha1.BurstBuffer) string {
	return path.Join(MountRoot, bb.Namespace+"."+bb.Name)
}

// Striping is the root directory's stripe pattern from spec.layout.
type Striping struct {
	ChunkSize  string // in the CLI's syntax: 512ki, 1Mi
	NumTargets int
}

// StripingFor applies spec.layout: chunk size (default 512Ki, BeeGFS' own default) and stripe
// width (default 4, BeeGFS' own default, or all targets when there are fewer).
func StripingFor(bb *v1alpha1.BurstBuffer, nodes int) Striping {
	chunk := int64(512 << 10)
	if q := bb.Spec.Layout.ChunkSize; q != nil && q.Value() > 0 {
		chunk = q.Value()
	}
	targets := nodes * TargetsPerNode(bb)
	width := min(4, targets)
	if w := bb.Spec.Layout.StripeWidth; w != nil && *w > 0 {
		width = min(int(*w), targets)
	}
	return Striping{ChunkSize: chunkFlag(chunk), NumTargets: width}
}

// chunkFlag writes a chunk size the way `beegfs entry set --chunk-size` reads it: "Suffixes
// 'ki' (Kibibytes) and 'Mi' (Mebibytes) are allowed" (beegfs-go ctl/internal/cmd/entry/set.go).
func chunkFlag(b int64) string {
	if b >= 1<<20 && b%(1<<20) == 0 {
		return fmt.Sprintf("%dMi", b>>20)
	}
	return fmt.Sprintf("%dki", b>>10)
}

// Shares reports whether two node lists overlap.
func Shares(a, b []string) bool {
	set := map[string]bool{}
	for _, n := range a {
		set[n] = true
	}
	for _, n := range b {
		if set[n] {
			return true
		}
	}
	return false
}
