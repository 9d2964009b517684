package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EngineType names the file system that backs a burst buffer.
// +kubebuilder:validation:Enum=beegfs;local
type EngineType string

const (
	// EngineBeeGFS is an ad-hoc BeeGFS 8 instance over the nodes' local drives (BeeOND's
	// layout). Every workload node needs the BeeGFS client kernel module.
	EngineBeeGFS EngineType = "beegfs"
	// EngineLocal is private node-local scratch: one directory per node, no shared
	// namespace, no kernel module. Runs anywhere.
	EngineLocal EngineType = "local"
)

// LinkEncoding is the line code of a network link; the usable data rate is the signalling
// rate times the encoding's efficiency.
// +kubebuilder:validation:Enum="8b/10b";"64b/66b";"128b/130b";"256b/257b";"none"
type LinkEncoding string

// Encodings known to the limits engine.
const (
	Encoding8b10b    LinkEncoding = "8b/10b"
	Encoding64b66b   LinkEncoding = "64b/66b"
	Encoding128b130b LinkEncoding = "128b/130b"
	Encoding256b257b LinkEncoding = "256b/257b"
	EncodingNone     LinkEncoding = "none"
)

// ValidationProfile selects how much of the staged limit method runs before Ready.
// +kubebuilder:validation:Enum=none;quick;standard
type ValidationProfile string

const (
	// ProfileNone runs stage 1 only: limits computed from the hardware, nothing measured.
	ProfileNone ValidationProfile = "none"
	// ProfileQuick runs stage 2 (component probes) and a short stage-3 sweep.
	ProfileQuick ValidationProfile = "quick"
	// ProfileStandard runs stage 2, the full stage-3 sweep with stage-4 monitoring, and the
	// workload benchmarks (shared file, random 4 KiB, metadata).
	ProfileStandard ValidationProfile = "standard"
)

// TeardownPolicy says when a burst buffer goes away.
// +kubebuilder:validation:Enum=AfterWorkload;AfterTTL;Manual
type TeardownPolicy string

const (
	// TeardownAfterWorkload tears down once every workload pod has completed (and stage-out
	// has finished).
	TeardownAfterWorkload TeardownPolicy = "AfterWorkload"
	// TeardownAfterTTL tears down spec.teardown.ttl after the burst buffer became Ready.
	TeardownAfterTTL TeardownPolicy = "AfterTTL"
	// TeardownManual tears down only when the BurstBuffer is deleted.
	TeardownManual TeardownPolicy = "Manual"
)

// BurstBufferSpec is what the user asks for: a file system over some nodes' local drives, for
// one job. Fields that decide where data lives are immutable after creation.
//
// +kubebuilder:validation:XValidation:rule="!has(self.layout) || !has(self.layout.metadataServers) || (has(self.nodes) && has(self.nodes.count) ? self.layout.metadataServers <= self.nodes.count : has(self.target) || self.layout.metadataServers <= 1)",message="layout.metadataServers must not exceed nodes.count: every metadata server runs on its own node; lower layout.metadataServers or raise nodes.count"
// +kubebuilder:validation:XValidation:rule="!has(self.layout) || !has(self.layout.stripeWidth) || (has(self.nodes) && has(self.nodes.count) ? self.layout.stripeWidth <= self.nodes.count * (has(self.layout.storageTargetsPerNode) ? self.layout.storageTargetsPerNode : 1) : has(self.target) || self.layout.stripeWidth <= (has(self.layout.storageTargetsPerNode) ? self.layout.storageTargetsPerNode : 1))",message="layout.stripeWidth must not exceed the number of storage targets (nodes.count x layout.storageTargetsPerNode); lower the stripe width or add nodes"
// +kubebuilder:validation:XValidation:rule="!has(self.validation) || !has(self.validation.sweep) || !has(self.validation.sweep.nodes) || (has(self.nodes) && has(self.nodes.count) ? self.validation.sweep.nodes.all(n, n <= self.nodes.count) : has(self.target) || self.validation.sweep.nodes.all(n, n <= 1))",message="validation.sweep.nodes may not name more nodes than nodes.count"
// +kubebuilder:validation:XValidation:rule="!has(self.layout) || !has(self.layout.chunkSizePolicy) || self.layout.chunkSizePolicy != 'Auto' || !has(self.engine) || self.engine == 'beegfs'",message="layout.chunkSizePolicy Auto tunes BeeGFS's stripe chunk size: it needs engine beegfs (the local engine has no chunks)"
// +kubebuilder:validation:XValidation:rule="!has(self.layout) || !has(self.layout.chunkSizePolicy) || self.layout.chunkSizePolicy != 'Auto' || !has(self.validation) || !has(self.validation.profile) || self.validation.profile != 'none'",message="layout.chunkSizePolicy Auto measures each chunk size on the new file system: it needs validation.profile quick or standard, not none"
// +kubebuilder:validation:XValidation:rule="!has(self.validation) || !has(self.validation.compareWith) || !has(self.validation.profile) || self.validation.profile != 'none'",message="validation.compareWith runs the ideal workload on the burst buffer and on the other storage: it needs validation.profile quick or standard, not none"
// +kubebuilder:validation:XValidation:rule="!has(self.validation) || !has(self.validation.compareWith) || !has(self.validation.compareWith.nodeLocal) || !has(self.engine) || self.engine != 'local' || (has(self.validation.compareWith.nodeLocal.path) && self.validation.compareWith.nodeLocal.path != (has(self.storage) && has(self.storage.path) ? self.storage.path : '/mnt/nvme'))",message="validation.compareWith.nodeLocal would compare the local engine with its own drive: give another nodeLocal.path, or compare with a persistentVolumeClaim"
// +kubebuilder:validation:XValidation:rule="has(self.target) == has(oldSelf.target)",message="target cannot be added or removed after creation: it chose the nodes; create a new BurstBuffer to change it"
// +kubebuilder:validation:XValidation:rule="!has(self.hardware) || !has(self.hardware.colocated) || !self.hardware.colocated || !has(self.hardware.clients) || !has(self.hardware.servers) || !has(self.hardware.clients.nodes) || !has(self.hardware.servers.nodes) || self.hardware.clients.nodes == self.hardware.servers.nodes",message="hardware.colocated means clients and servers are the same nodes: hardware.clients.nodes and hardware.servers.nodes must be equal"
type BurstBufferSpec struct {
	// engine is the file system: "beegfs" (default; needs the BeeGFS client kernel module on
	// every workload node) or "local" (private node-local scratch, runs anywhere).
	// Immutable.
	// +kubebuilder:default=beegfs
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="engine is immutable; create a new BurstBuffer to change it"
	// +optional
	Engine EngineType `json:"engine,omitempty"`

	// nodes selects the nodes that carry the burst buffer. Immutable.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodes is immutable; create a new BurstBuffer to change where it lives"
	// +optional
	Nodes NodesSpec `json:"nodes,omitzero"`

	// target is what the job needs from its burst buffer: aggregate bandwidth over all its
	// nodes, space, and optionally a metadata rate. Bandwidths are decimal bytes per second
	// ("2G" is 2e9 B/s, not bits), capacity is bytes ("4Ti").
	//
	// How it meets nodes.count:
	//   - without nodes.count, the operator chooses the count: the smallest number of the
	//     candidate nodes (those nodes.selector selects; with nodes.fromWorkload, the
	//     workload's nodes first) whose stage-1 limit meets every figure with marginPercent to
	//     spare, fed with the best figure it has for each node - measured by a stage-2 probe
	//     within validation.reuseComponentResultsFor, else documented (spec.hardware, then the
	//     node's hardware.beeburst.io/* labels), else discovered (a link's speed);
	//   - with nodes.count, the count is yours: the operator checks the target against those
	//     nodes and says what would meet it.
	//
	// Either way status.target shows the decision (each node's figure and where it came from,
	// the predicted limits, the margins), and after stage 3 the TargetMet condition says
	// whether the measured figures meet the target and, when they do not, the bottleneck and
	// what would meet it: so many more nodes, or that the network caps it. A target that no
	// count of the candidate nodes can meet is not an error: the operator takes the count that
	// comes closest, says why it falls short (TargetMet False, reason TargetUnreachable) and
	// carries on. Immutable: it chooses the nodes at creation. See docs/sizing.md.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="target is immutable: it chose the nodes at creation; create a new BurstBuffer to change it"
	// +optional
	Target *TargetSpec `json:"target,omitempty"`

	// storage says where on each node the burst buffer keeps its data. Immutable: data lives
	// there from the first directory the operator creates.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage is immutable: data lives at storage.path from the start; create a new BurstBuffer to change it"
	// +optional
	Storage StorageSpec `json:"storage,omitzero"`

	// layout is the file system's shape: metadata servers, targets, striping. Ignored by the
	// local engine. Immutable: the metadata servers' nodes and the target directories are laid
	// out at creation.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="layout is immutable: metadata servers and storage targets are laid out at creation; create a new BurstBuffer to change it"
	// +optional
	Layout LayoutSpec `json:"layout,omitzero"`

	// hardware holds documented figures for stage 1 of the limit method (theory from the
	// hardware). Everything is optional: what is not given is discovered from the nodes
	// (node labels, probes) and the status says where each figure came from.
	// +optional
	Hardware *HardwareSpec `json:"hardware,omitempty"`

	// validation selects which stages of the limit method run before the burst buffer is
	// Ready.
	// +kubebuilder:default={}
	// +optional
	Validation ValidationSpec `json:"validation,omitzero"`

	// workload selects the pods that use the burst buffer and where they see it.
	// +kubebuilder:default={}
	// +optional
	Workload WorkloadSpec `json:"workload,omitzero"`

	// stageIn lists data copied into the burst buffer before the workload's pods start.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	StageIn []StageSpec `json:"stageIn,omitempty"`

	// stageOut lists data copied out of the burst buffer after the workload finished. Data
	// named here is never deleted before it was copied, unless teardown.hurry is true.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	StageOut []StageSpec `json:"stageOut,omitempty"`

	// teardown says when the burst buffer goes away.
	// +kubebuilder:default={}
	// +optional
	Teardown TeardownSpec `json:"teardown,omitzero"`

	// beegfs holds settings of the beegfs engine. Ignored by the local engine.
	// +optional
	BeeGFS *BeeGFSSpec `json:"beegfs,omitempty"`
}

// NodesSpec selects nodes.
type NodesSpec struct {
	// selector restricts the candidate nodes by label. Empty: any schedulable node.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// count is how many nodes carry the burst buffer. Empty: with spec.target the operator
	// chooses the count from the target (status.target says why), without one it is 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Count int32 `json:"count,omitempty"`

	// fromWorkload places the burst buffer on the nodes of its workload (the pods
	// spec.workload selects): nodes where its pods already run come first, then nodes where
	// its unscheduled pods (held by the beeburst.io/ready gate) could be scheduled, the nodes
	// that fit the most pods first, ties by name. A pod fits a node when its nodeSelector and
	// required node affinity match it and it tolerates the node's NoSchedule and NoExecute
	// taints; resource requests and pod affinity are not considered. selector and count still
	// apply. Until a workload pod exists the burst buffer waits (condition Provisioned False,
	// reason WaitingForWorkload). false: the first count nodes by name.
	// +optional
	FromWorkload bool `json:"fromWorkload,omitempty"`
}

// StorageSpec is the node-local storage of each node.
type StorageSpec struct {
	// path is the absolute node-local path where the drive is mounted (the "NVMe"). The
	// burst buffer keeps its data in a directory of its own below it (beeburst/<namespace>.<name>),
	// which the operator's node tasks create and remove as root. Written plainly: letters,
	// digits and . _ - + @, no empty, "." or ".." segment, no trailing "/". The operator uses
	// only paths below the roots its administrator allows (the manager's
	// --allowed-storage-roots, Helm value storage.allowedRoots; by default /mnt, /scratch,
	// /local, /nvme and /var/lib/beeburst) and otherwise fails the burst buffer with reason
	// StoragePathNotAllowed before anything runs on a node; system directories (/etc, /usr,
	// /proc, /home, ...) are refused here whatever that setting says.
	// +kubebuilder:default="/mnt/nvme"
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^(/[A-Za-z0-9._+@-]+)+$')",message="storage.path must be an absolute path of letters, digits and . _ - + @ with no empty segment and no trailing '/', e.g. /mnt/nvme"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.]?(/|$)')",message="storage.path must not contain '.' or '..' segments"
	// +kubebuilder:validation:XValidation:rule="!['/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/proc', '/root', '/run', '/sbin', '/sys', '/usr', '/var/run', '/var/log', '/var/lib/kubelet', '/var/lib/containerd', '/var/lib/docker', '/var/lib/etcd'].exists(p, self == p || self.startsWith(p + '/')) && !(self in ['/var', '/var/lib'])",message="storage.path must not be a system directory or below one (/bin, /boot, /dev, /etc, /home, /lib*, /proc, /root, /run, /sbin, /sys, /usr, /var/run, /var/log, /var/lib/{kubelet,containerd,docker,etcd}; nor /var or /var/lib): the operator creates and removes directories there as root"
	// +optional
	Path string `json:"path,omitempty"`

	// capacityPerNode is the space the burst buffer may use on each node, at most 1Pi. Empty:
	// what the drive has free. The stage-2 device probe checks it against the space free on
	// each node (validation profiles quick and standard): a node with less fails the burst
	// buffer with reason InsufficientCapacity naming the node.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="storage.capacityPerNode must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1Pi'))",message="storage.capacityPerNode must be at most 1Pi"
	// +optional
	CapacityPerNode *resource.Quantity `json:"capacityPerNode,omitempty"`
}

// LayoutSpec is the shape of a BeeGFS instance.
type LayoutSpec struct {
	// metadataServers is the number of metadata services, placed on the first nodes (as in
	// BeeOND). Must not exceed nodes.count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	MetadataServers int32 `json:"metadataServers,omitempty"`

	// storageTargetsPerNode is the number of storage targets on each node.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +kubebuilder:default=1
	// +optional
	StorageTargetsPerNode int32 `json:"storageTargetsPerNode,omitempty"`

	// chunkSize is the BeeGFS stripe chunk size: a power of two from 64Ki to 512Mi.
	// +kubebuilder:default="512Ki"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isInteger() && quantity(string(self)).asInteger() in [65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864, 134217728, 268435456, 536870912]",message="layout.chunkSize must be a power of two from 64Ki to 512Mi, e.g. 512Ki or 1Mi"
	// +optional
	ChunkSize *resource.Quantity `json:"chunkSize,omitempty"`

	// chunkSizePolicy: Fixed (default) uses chunkSize. Auto measures 2-4 chunk sizes for
	// spec.workload.pattern on the new file system before stage 3 - chunkSize first, the
	// baseline, then the sizes that pattern favours, as many as a quarter of
	// validation.timeBudget allows - each in a directory of its own, and keeps the best as the
	// root directory's stripe pattern; a size must beat chunkSize by more than 5% to replace it.
	// status.chunkSize shows the figures that chose it. beegfs engine only; needs
	// validation.profile quick or standard.
	// +optional
	ChunkSizePolicy ChunkSizePolicy `json:"chunkSizePolicy,omitempty"`

	// stripeWidth is the number of storage targets each file is striped over. Empty: 4, or
	// all targets when there are fewer. Must not exceed the number of storage targets.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16384
	// +optional
	StripeWidth *int32 `json:"stripeWidth,omitempty"`
}

// HardwareSpec holds the documented hardware figures that stage 1 computes limits from. Rates
// are quantities: "100G" is 100e9 bits per second, "3G" bytes per second 3e9 (decimal).
type HardwareSpec struct {
	// clients are the nodes running the job's processes.
	// +optional
	Clients *ClientsHardware `json:"clients,omitempty"`

	// servers are the nodes running storage services. In a burst buffer these are the same
	// nodes as the clients (see colocated).
	// +optional
	Servers *ServersHardware `json:"servers,omitempty"`

	// fabric is the network between clients and servers. Empty: non-blocking, no service
	// traffic.
	// +optional
	Fabric *FabricHardware `json:"fabric,omitempty"`

	// devices are the storage devices of each server node. Empty: not a known limit (the
	// status says so).
	// +optional
	Devices *DevicesHardware `json:"devices,omitempty"`

	// colocated says clients and storage servers are the same nodes (a burst buffer): only
	// (Ns-1)/Ns of each client's data crosses the network. Empty: inferred - true when
	// clients.nodes and servers.nodes are equal (a BurstBuffer's own nodes, the default), false
	// when they differ; the formula in the status says which was used.
	// +optional
	Colocated *bool `json:"colocated,omitempty"`
}

// ClientsHardware describes the client side.
type ClientsHardware struct {
	// nodes is the number of client nodes (M). Empty: the burst buffer's node count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// processesPerNode is the number of client processes per node (N); each gets link/N.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +optional
	ProcessesPerNode *int32 `json:"processesPerNode,omitempty"`

	// link is each client node's network link.
	// +optional
	Link *LinkHardware `json:"link,omitempty"`
}

// ServersHardware describes the storage server side.
type ServersHardware struct {
	// nodes is the number of storage server nodes (Ns). Empty: the burst buffer's node count.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// link is each server node's network link.
	// +optional
	Link *LinkHardware `json:"link,omitempty"`
}

// LinkHardware is one node's network link.
type LinkHardware struct {
	// rateBitsPerSecond is the link's signalling rate in bits per second, e.g. "100G".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="link rateBitsPerSecond must be greater than zero, e.g. 100G"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('100T'))",message="link rateBitsPerSecond must be at most 100T (100 Tbit/s)"
	RateBitsPerSecond resource.Quantity `json:"rateBitsPerSecond"`

	// encoding is the line code applied to the signalling rate: 8b/10b, 64b/66b, 128b/130b,
	// 256b/257b or none (the rate is already the data rate).
	// +kubebuilder:default="none"
	// +optional
	Encoding LinkEncoding `json:"encoding,omitempty"`
}

// FabricHardware is the network fabric between clients and servers.
type FabricHardware struct {
	// bisectionBitsPerSecond is the fabric's bisection bandwidth as a data rate (no encoding
	// is applied to it). Empty: non-blocking (min of the client and server sides).
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="fabric bisectionBitsPerSecond must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1E'))",message="fabric bisectionBitsPerSecond must be at most 1E (1 Ebit/s)"
	// +optional
	BisectionBitsPerSecond *resource.Quantity `json:"bisectionBitsPerSecond,omitempty"`

	// serviceTrafficBitsPerSecond is traffic that shares the transport network (metadata,
	// locks, monitoring) and is subtracted from it.
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isLessThan(quantity('0'))",message="fabric serviceTrafficBitsPerSecond must not be negative"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1E'))",message="fabric serviceTrafficBitsPerSecond must be at most 1E (1 Ebit/s)"
	// +optional
	ServiceTrafficBitsPerSecond *resource.Quantity `json:"serviceTrafficBitsPerSecond,omitempty"`
}

// DevicesHardware is the storage devices of each server node.
type DevicesHardware struct {
	// perNode is the number of devices per node.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	PerNode int32 `json:"perNode,omitempty"`

	// writeBytesPerSecond is one device's sequential write bandwidth, e.g. "3G".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="devices writeBytesPerSecond must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1T'))",message="devices writeBytesPerSecond must be at most 1T (1 TB/s per device)"
	// +optional
	WriteBytesPerSecond *resource.Quantity `json:"writeBytesPerSecond,omitempty"`

	// readBytesPerSecond is one device's sequential read bandwidth, e.g. "6G".
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="devices readBytesPerSecond must be greater than zero"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1T'))",message="devices readBytesPerSecond must be at most 1T (1 TB/s per device)"
	// +optional
	ReadBytesPerSecond *resource.Quantity `json:"readBytesPerSecond,omitempty"`
}

// ValidationSpec selects the stages of the limit method that run before Ready.
type ValidationSpec struct {
	// profile: none (stage 1 only), quick (component probes + a short sweep, about a minute),
	// standard (full sweep with monitoring + workload benchmarks).
	// +kubebuilder:default=quick
	// +optional
	Profile ValidationProfile `json:"profile,omitempty"`

	// sweep overrides the profile's stage-3 grid.
	// +optional
	Sweep *SweepSpec `json:"sweep,omitempty"`

	// timeBudget bounds the whole validation, from 1s to 24h. Over budget, it stops, what was
	// measured is published and the Validated condition says it was cut short.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="validation.timeBudget must be a duration from 1s to 24h, such as 90s, 10m or 1h30m"
	// +optional
	TimeBudget Duration `json:"timeBudget,omitempty"`

	// minimumEfficiencyPercent is the lowest acceptable efficiency (measured best / stage-1
	// limit) in percent; below it a BelowExpectation warning is published.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=50
	// +optional
	MinimumEfficiencyPercent int32 `json:"minimumEfficiencyPercent,omitempty"`

	// stragglerPercent: a node whose stage-4 figure is more than this share below the median
	// is a straggler.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=20
	// +optional
	StragglerPercent int32 `json:"stragglerPercent,omitempty"`

	// reuseComponentResultsFor: stage-2 results of a node younger than this are reused
	// instead of probing the node again; at most 168h (a week). 0s: always probe.
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) <= duration('168h')",message="validation.reuseComponentResultsFor must be a duration from 0s to 168h, such as 0s, 30m or 24h"
	// +optional
	ReuseComponentResultsFor Duration `json:"reuseComponentResultsFor,omitempty"`

	// compareWith names other storage - a PersistentVolumeClaim, or a node-local directory -
	// on which the ideal workload runs too, so that status.comparison shows the burst buffer
	// beside what the job would use without it.
	// +optional
	CompareWith *CompareWithSpec `json:"compareWith,omitempty"`
}

// SweepSpec is the stage-3 grid: every combination of nodes x processesPerNode.
type SweepSpec struct {
	// nodes are the client node counts (M) to try.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1024
	// +optional
	Nodes []int32 `json:"nodes,omitempty"`

	// processesPerNode are the processes per node (N) to try.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=256
	// +optional
	ProcessesPerNode []int32 `json:"processesPerNode,omitempty"`

	// blockSize is the size of each write or read call.
	// +kubebuilder:default="1Mi"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('4Ki'))",message="validation.sweep.blockSize must be larger than 4Ki"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1Gi'))",message="validation.sweep.blockSize must be at most 1Gi"
	// +optional
	BlockSize *resource.Quantity `json:"blockSize,omitempty"`

	// durationSeconds is how long each point of the grid runs (stonewalled).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=600
	// +kubebuilder:default=5
	// +optional
	DurationSeconds int32 `json:"durationSeconds,omitempty"`
}

// WorkloadSpec says which pods use the burst buffer and where they see it.
// +kubebuilder:validation:XValidation:rule="has(self.pattern) == has(oldSelf.pattern) && (!has(self.pattern) || self.pattern == oldSelf.pattern)",message="workload.pattern is immutable: the chunk size was chosen for it at creation"
type WorkloadSpec struct {
	// selector picks the workload's pods in the BurstBuffer's namespace. Pods it selects that
	// carry the beeburst.io/ready scheduling gate stay unscheduled until the burst buffer is
	// Ready. Empty: pods labelled beeburst.io/burst-buffer=<name>.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// mountPath is where the file system appears inside the workload's containers (and
	// BEEBURST_PATH in the job's environment ConfigMap): an absolute path of letters, digits and
	// . _ - + @, not /proc, /sys or /dev or below.
	// +kubebuilder:default="/mnt/beeburst"
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^(/[A-Za-z0-9._+@-]+)+$')",message="workload.mountPath must be an absolute path of letters, digits and . _ - + @ with no empty segment and no trailing '/', e.g. /mnt/beeburst"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.]?(/|$)')",message="workload.mountPath must not contain '.' or '..' segments"
	// +kubebuilder:validation:XValidation:rule="!['/proc', '/sys', '/dev'].exists(p, self == p || self.startsWith(p + '/'))",message="workload.mountPath must not be /proc, /sys or /dev or below: the container runtime owns them"
	// +optional
	MountPath string `json:"mountPath,omitempty"`

	// pattern is how the job's processes do their I/O: LargeSequential (each process its own
	// files, large sequential blocks - N-N), SharedFile (one shared file, each process its own
	// segments - N-1) or SmallRandom (4 KiB random). layout.chunkSizePolicy Auto tunes the
	// chunk size for it. Empty: LargeSequential. Immutable.
	// +optional
	Pattern WorkloadPattern `json:"pattern,omitempty"`
}

// StageSpec is one copy between the burst buffer and durable storage: a PersistentVolumeClaim
// in the BurstBuffer's namespace or an object store (S3 API). A claim should be mountable on
// every node of the burst buffer (ReadWriteMany, or ReadOnlyMany for stage-in): the copy runs
// on all of them at once. A ReadWriteOnce claim works too, one node at a time. An object store
// is always copied by all nodes at once.
// +kubebuilder:validation:XValidation:rule="has(self.persistentVolumeClaim) != has(self.s3)",message="exactly one of persistentVolumeClaim and s3 is required"
type StageSpec struct {
	// path is the directory inside the burst buffer, relative to its root.
	// +kubebuilder:default="."
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="path must be relative to the burst buffer's root and must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="path must not contain control characters"
	// +optional
	Path string `json:"path,omitempty"`

	// persistentVolumeClaim is the durable side of the copy (or s3).
	// +optional
	PersistentVolumeClaim PVCSource `json:"persistentVolumeClaim,omitzero"`

	// s3 is the durable side of the copy as an object store (or persistentVolumeClaim).
	// +optional
	S3 *S3Source `json:"s3,omitempty"`
}

// S3Source names a prefix in an S3 bucket (AWS S3, or any server of the S3 API such as MinIO
// or Ceph RGW). Stage-in copies every object below the prefix; stage-out uploads each file
// under the prefix and its path, never overwriting an object (see docs/workloads.md).
type S3Source struct {
	// url is s3://bucket or s3://bucket/prefix.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/([^/?#]+/)*[^/?#]*)?$`
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(p, p == '..')",message="s3.url must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="s3.url must not contain control characters"
	URL string `json:"url"`

	// endpoint is the server's URL (http or https), for object stores other than AWS S3;
	// empty: AWS S3.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^/?#]+/?$`
	// +kubebuilder:validation:XValidation:rule="!self.matches('[@[:space:][:cntrl:]]')",message="s3.endpoint must be http(s)://host[:port] without user information ('@'), whitespace or control characters; credentials belong in credentialsSecret"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// region of the bucket; empty: asked from the server.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9_.-]*$')",message="s3.region must be letters, digits and - _ . such as eu-central-1"
	// +optional
	Region string `json:"region,omitempty"`

	// credentialsSecret names a Secret in the BurstBuffer's namespace with the keys
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optionally AWS_SESSION_TOKEN. Without it
	// the copy pods use the environment's default credentials (e.g. IRSA or an instance role).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="s3.credentialsSecret must be a Secret name: lower-case letters, digits, '-' and '.'"
	// +optional
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// PVCSource names a directory on a PersistentVolumeClaim.
type PVCSource struct {
	// claimName is the claim's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="persistentVolumeClaim.claimName must be a claim name: lower-case letters, digits, '-' and '.'"
	ClaimName string `json:"claimName"`

	// path is a directory on the claim, relative to its root.
	// +kubebuilder:default="."
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.contains('..')",message="persistentVolumeClaim.path must be relative and must not contain '..'"
	// +kubebuilder:validation:XValidation:rule="!self.matches('[[:cntrl:]]')",message="persistentVolumeClaim.path must not contain control characters"
	// +optional
	Path string `json:"path,omitempty"`
}

// TeardownSpec says when the burst buffer goes away.
// +kubebuilder:validation:XValidation:rule="!has(self.policy) || self.policy != 'AfterTTL' || has(self.ttl)",message="teardown.ttl is required when teardown.policy is AfterTTL"
type TeardownSpec struct {
	// policy: AfterWorkload (default: once every workload pod completed and stage-out
	// finished), AfterTTL (ttl after Ready), Manual (when the BurstBuffer is deleted).
	// +kubebuilder:default=AfterWorkload
	// +optional
	Policy TeardownPolicy `json:"policy,omitempty"`

	// ttl is the lifetime after Ready for policy AfterTTL: from 1s to 8760h (a year).
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|ms|s|m|h))+)$') && duration(self) >= duration('1s') && duration(self) <= duration('8760h')",message="teardown.ttl must be a positive duration of at most 8760h, such as 30m or 12h"
	// +optional
	TTL Duration `json:"ttl,omitempty"`

	// hurry skips stage-out at teardown and deletion. Data named in stageOut is then lost:
	// set it only when you mean it. It also makes every deletion finish: a pod that does not
	// stop within the operator's bound is deleted without grace, and a node whose data cannot
	// be removed in time is given up (status.nodes[].removal: Abandoned, a Warning event
	// DataLeftOnNode names it).
	// +optional
	Hurry bool `json:"hurry,omitempty"`
}

// BeeGFSSpec holds settings of the beegfs engine.
type BeeGFSSpec struct {
	// images of the BeeGFS services.
	// +optional
	Images *BeeGFSImages `json:"images,omitempty"`

	// interfaces are the network interfaces BeeGFS services and clients use, in order of
	// preference (connInterfacesList). Empty: all. Each is a Linux interface name: 1-15
	// printable characters (IFNAMSIZ), no whitespace, '/' or ':', not "." or ".."; nor ',' or
	// '#', which would split or end the rendered list.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=15
	// +kubebuilder:validation:XValidation:rule="self.all(i, i.matches('^[[:graph:]]{1,15}$') && !i.matches('[/:,#]') && i != '.' && i != '..')",message="beegfs.interfaces: each must be a Linux interface name: 1-15 printable characters without whitespace, '/', ':', ',' or '#', and not '.' or '..'"
	// +optional
	Interfaces []string `json:"interfaces,omitempty"`

	// authenticationDisabled turns off connection authentication and TLS. Only for
	// debugging: anyone who reaches the nodes' ports can then read and write the data.
	// +optional
	AuthenticationDisabled bool `json:"authenticationDisabled,omitempty"`

	// licenseSecret names a Secret in the burst buffer's namespace whose key license.pem is
	// the BeeGFS licence certificate; the management service loads it (--license-cert-file).
	// BeeGFS 8.3.1 runs without one (with warnings); later releases admit at most 5 clients
	// without a licence, so a burst buffer over 6 or more nodes needs one there (condition
	// reason LicenseRequired). Empty: no licence.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="beegfs.licenseSecret is immutable: the management service reads it only at start"
	// +optional
	LicenseSecret string `json:"licenseSecret,omitempty"`
}

// BeeGFSImages are container images of BeeGFS 8 services.
type BeeGFSImages struct {
	// management image. Empty: ghcr.io/thinkparq/beegfs-mgmtd pinned by the operator.
	// +optional
	Management ImageReference `json:"management,omitempty"`
	// metadata image. Empty: ghcr.io/thinkparq/beegfs-meta pinned by the operator.
	// +optional
	Metadata ImageReference `json:"metadata,omitempty"`
	// storage image. Empty: ghcr.io/thinkparq/beegfs-storage pinned by the operator.
	// +optional
	Storage ImageReference `json:"storage,omitempty"`
	// client image with the beegfs CLI and client tools. Empty: pinned by the operator.
	// +optional
	Client ImageReference `json:"client,omitempty"`
}

// ImageReference is a container image: [registry[:port]/]repository[:tag][@sha256:digest],
// e.g. ghcr.io/thinkparq/beegfs-meta:8.3.1.
// +kubebuilder:validation:MaxLength=512
// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?([.][A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]+)?/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$')",message="must be an image reference such as ghcr.io/thinkparq/beegfs-meta:8.3.1 (registry, lower-case repository, tag, digest)"
type ImageReference string

// Phase is a one-word summary of where a burst buffer is in its life. Conditions carry the
// detail; the phase is for `kubectl get`.
type Phase string

// Phases, in the order a healthy burst buffer passes them.
const (
	PhasePending        Phase = "Pending"
	PhaseProvisioning   Phase = "Provisioning"
	PhaseMeasuring      Phase = "Measuring"
	PhaseStagingIn      Phase = "StagingIn"
	PhaseReady          Phase = "Ready"
	PhaseStagingOut     Phase = "StagingOut"
	PhaseTearingDown    Phase = "TearingDown"
	PhaseDegraded       Phase = "Degraded"
	PhaseFailed         Phase = "Failed"
	PhaseStageOutFailed Phase = "StageOutFailed"
)

// BurstBufferStatus is what the operator observed and measured.
type BurstBufferStatus struct {
	// phase is a one-word summary; conditions hold the detail.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// conditions: Ready summarises; LimitsEstimated, Provisioned, ComponentsMeasured,
	// Validated, StagedIn, StagedOut and ClientsMounted tell the stages; TargetMet, on a burst
	// buffer with spec.target, whether it meets the target. Reconciling (True while the
	// operator works towards Ready or tears down) and Stalled (True when only a person can
	// help: phase Failed, Degraded or StageOutFailed) follow the kstatus conventions that
	// kubectl wait, Argo CD and Flux read. Every condition carries the observedGeneration it
	// describes.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// nodes carry the burst buffer, with their roles.
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []NodeStatus `json:"nodes,omitempty"`

	// nodeCount is the number of nodes in status.nodes.
	// +optional
	NodeCount int32 `json:"nodeCount,omitempty"`

	// nodeSelection says why these nodes were chosen (spec.nodes; with fromWorkload, which
	// workload pods run on or fit each node). The Provisioned condition repeats it.
	// +optional
	NodeSelection string `json:"nodeSelection,omitempty"`

	// capacity is the total space of the burst buffer over all nodes.
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`

	// mount says how workload pods reach the file system.
	// +optional
	Mount *MountStatus `json:"mount,omitempty"`

	// limits are the figures of the staged limit method, stage by stage.
	// +optional
	Limits *LimitsStatus `json:"limits,omitempty"`

	// summary holds human-readable figures for `kubectl get`; the typed figures are in limits.
	// +optional
	Summary *Summary `json:"summary,omitempty"`

	// warnings are findings a user should read: a component below its documented figure, a
	// measurement above its limit (caching suspected; not published), stragglers, low
	// efficiency.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Warnings []Warning `json:"warnings,omitempty"`

	// workload tells which of the workload's pods are gated and when teardown happens.
	// +optional
	Workload *WorkloadStatus `json:"workload,omitempty"`

	// stageIn is the progress of stage-in.
	// +optional
	StageIn *StageStatus `json:"stageIn,omitempty"`

	// stageOut is the progress of stage-out.
	// +optional
	StageOut *StageStatus `json:"stageOut,omitempty"`

	// beegfs holds what the operator allocated for the beegfs engine.
	// +optional
	BeeGFS *BeeGFSStatus `json:"beegfs,omitempty"`

	// target is the decision spec.target led to (the node count, each node's figure and its
	// source, the predicted limits and margins) and, after stage 3, whether it was met.
	// +optional
	Target *TargetStatus `json:"target,omitempty"`

	// chunkSize is the beegfs engine's stripe chunk size in use and, with
	// layout.chunkSizePolicy Auto, the figures that chose it.
	// +optional
	ChunkSize *ChunkSizeStatus `json:"chunkSize,omitempty"`

	// comparison is the burst buffer beside the storage validation.compareWith names.
	// +optional
	Comparison *ComparisonStatus `json:"comparison,omitempty"`

	// validationStartTime is when stage 2 started; the time budget counts from here.
	// +optional
	ValidationStartTime *metav1.Time `json:"validationStartTime,omitempty"`

	// readyTime is when the burst buffer first became Ready.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
}

// Node roles.
const (
	RoleManagement = "management"
	RoleMetadata   = "metadata"
	RoleStorage    = "storage"
	RoleClient     = "client"
)

// NodeStatus is one node of the burst buffer.
type NodeStatus struct {
	// name of the Node.
	Name string `json:"name"`
	// roles of the node: management, metadata, storage, client.
	// +listType=set
	// +optional
	Roles []string `json:"roles,omitempty"`
	// path is the burst buffer's directory on the node.
	// +optional
	Path string `json:"path,omitempty"`
	// prepared is true once the node's directory exists (local engine) or its services run.
	// +optional
	Prepared bool `json:"prepared,omitempty"`
	// hardware is the node's link rate as stage 1 uses it, with its source, and what the
	// stage-2 device probe discovered on the node.
	// +optional
	Hardware *NodeHardware `json:"hardware,omitempty"`
	// removal is set at teardown when the node's data was not removed by a clean pod:
	// NothingToRemove (spec.storage.path does not exist on the node, so nothing was ever
	// written there), NodeGone (the Node object is gone, and its data with it or out of
	// reach), Abandoned (spec.teardown.hurry gave up a node whose data could not be removed
	// in time; it stays on the node, and a Warning event DataLeftOnNode names it).
	// +kubebuilder:validation:Enum=NothingToRemove;NodeGone;Abandoned
	// +optional
	Removal NodeRemoval `json:"removal,omitempty"`
}

// NodeRemoval is what teardown did about a node's data when a clean pod did not remove it.
type NodeRemoval string

// Node removals.
const (
	RemovalNothingToRemove NodeRemoval = "NothingToRemove"
	RemovalNodeGone        NodeRemoval = "NodeGone"
	RemovalAbandoned       NodeRemoval = "Abandoned"
)

// NodeHardware is one node's hardware: the documented link rate stage 1 uses for the node and
// where it came from, and what the stage-2 device probe read from the node's sysfs. Device
// model and capacity are informational; the device's bandwidth is measured by the same probe
// (status.limits.components).
type NodeHardware struct {
	// linkBitsPerSecond is the node's link rate that stage 1 uses: a signalling rate from spec
	// or label (their encoding applies), or the data rate the kernel reports. Absent: unknown.
	// +optional
	LinkBitsPerSecond *resource.Quantity `json:"linkBitsPerSecond,omitempty"`
	// linkSource says where linkBitsPerSecond came from, the first that gives it: spec
	// (spec.hardware), label (hardware.beeburst.io/link-rate-bits-per-second on the node),
	// discovered (interfaceBitsPerSecond), else unknown.
	// +optional
	LinkSource string `json:"linkSource,omitempty"`
	// interface is the network interface that carries the node's InternalIP. Discovered only
	// where neither spec nor label documents the link: reading it needs the host network.
	// +optional
	Interface string `json:"interface,omitempty"`
	// interfaceBitsPerSecond is the speed the kernel reports for interface
	// (/sys/class/net/<interface>/speed). Absent when it reports none, or for a virtual
	// interface such as a veth, whose speed is a constant of its driver, not a link's.
	// +optional
	InterfaceBitsPerSecond *resource.Quantity `json:"interfaceBitsPerSecond,omitempty"`
	// device is the block device that holds spec.storage.path, e.g. nvme0n1p2.
	// +optional
	Device string `json:"device,omitempty"`
	// deviceModel is the model the kernel reports for the device (for a partition, its disk;
	// below device-mapper or md, the disks'), e.g. "Samsung SSD 980 PRO 1TB"; "loop" for a
	// loop device. Absent when the kernel reports none (virtio disks, for example).
	// +optional
	DeviceModel string `json:"deviceModel,omitempty"`
	// backingFile is a loop device's backing file.
	// +optional
	BackingFile string `json:"backingFile,omitempty"`
	// capacity is the size of the file system at spec.storage.path.
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// notes say what could not be discovered, and why.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Notes []string `json:"notes,omitempty"`
}

// MountStatus says how workload pods reach the file system.
type MountStatus struct {
	// path inside workload containers.
	Path string `json:"path"`
	// hostPath is the node directory mounted at path (local engine: the node-local directory;
	// beegfs: the client mount point).
	// +optional
	HostPath string `json:"hostPath,omitempty"`
	// nodeLabel is the label key=value set on the burst buffer's nodes, for workload affinity.
	// +optional
	NodeLabel string `json:"nodeLabel,omitempty"`
}

// Summary holds human-readable figures for printer columns.
type Summary struct {
	// writeLimit is the current write limit (stage 2 measured if present, else stage 1), e.g. "1.20 GB/s".
	// +optional
	WriteLimit string `json:"writeLimit,omitempty"`
	// writeMeasured is the stage-3 best write bandwidth, e.g. "1.01 GB/s".
	// +optional
	WriteMeasured string `json:"writeMeasured,omitempty"`
	// efficiency is stage-3 best / limit for writes, e.g. "0.84".
	// +optional
	Efficiency string `json:"efficiency,omitempty"`
	// bottleneck is the component that limits writes.
	// +optional
	Bottleneck string `json:"bottleneck,omitempty"`
}

// Figure sources: where a stage-1 figure came from.
const (
	SourceSpec       = "spec"
	SourceLabel      = "label"
	SourceDiscovered = "discovered"
	SourceMeasured   = "measured"
	SourceUnknown    = "unknown"
)

// LimitsStatus holds the staged limits.
type LimitsStatus struct {
	// estimated is stage 1: limits from the documented hardware figures.
	// +optional
	Estimated *EstimatedLimits `json:"estimated,omitempty"`
	// components is stage 2: each component measured on its own, beside its documented
	// figure, and the limits recomputed from the measured figures.
	// +optional
	Components *ComponentLimits `json:"components,omitempty"`
	// sweep is stage 3: the ideal workload swept over nodes x processes per node.
	// +optional
	Sweep *SweepLimits `json:"sweep,omitempty"`
	// monitoring is stage 4: per-node figures recorded during stage 3.
	// +optional
	Monitoring *MonitoringLimits `json:"monitoring,omitempty"`
	// workloads are software factors measured after stage 3, each as a share of its limit.
	// +listType=map
	// +listMapKey=name
	// +optional
	Workloads []WorkloadResult `json:"workloads,omitempty"`
}

// EstimatedLimits is stage 1.
type EstimatedLimits struct {
	// write is the write limit.
	Write OperationLimit `json:"write"`
	// read is the read limit.
	Read OperationLimit `json:"read"`
	// sources says where each hardware figure came from (spec, label, discovered, unknown).
	// +listType=map
	// +listMapKey=figure
	// +optional
	Sources []FigureSource `json:"sources,omitempty"`
}

// OperationLimit is the limit of one operation with its terms.
type OperationLimit struct {
	// clientsBytesPerSecond is Bc, the client side. Absent when unknown or when it does not
	// apply (the local engine: no process writes through a link); the formula says which.
	// +optional
	ClientsBytesPerSecond *int64 `json:"clientsBytesPerSecond,omitempty"`
	// serversBytesPerSecond is Bs, the server side. Absent when unknown or not applicable.
	// +optional
	ServersBytesPerSecond *int64 `json:"serversBytesPerSecond,omitempty"`
	// networkBytesPerSecond is Bnet, the fabric (after service traffic). Absent when no data
	// crosses the network (the local engine, a single co-located node) or when unknown.
	// +optional
	NetworkBytesPerSecond *int64 `json:"networkBytesPerSecond,omitempty"`
	// devicesBytesPerSecond is Bd; absent when the devices' figure is unknown.
	// +optional
	DevicesBytesPerSecond *int64 `json:"devicesBytesPerSecond,omitempty"`
	// limitBytesPerSecond is min of the terms.
	LimitBytesPerSecond int64 `json:"limitBytesPerSecond"`
	// bottleneck names the smallest term: clients, servers, network or devices.
	Bottleneck string `json:"bottleneck"`
	// formula is the formula used, in words and numbers.
	// +optional
	Formula string `json:"formula,omitempty"`
	// parallelismLimitProcesses is P = min(Bs, Bnet, Bd) / C: client processes it takes to
	// saturate the system.
	// +optional
	ParallelismLimitProcesses *int64 `json:"parallelismLimitProcesses,omitempty"`
}

// FigureSource says where one hardware figure came from.
type FigureSource struct {
	// figure is the name of the figure, e.g. "clients.link", "devices.write".
	Figure string `json:"figure"`
	// source: spec, label, discovered, measured or unknown.
	Source string `json:"source"`
	// value as given, e.g. "1G".
	// +optional
	Value string `json:"value,omitempty"`
}

// ComponentLimits is stage 2.
type ComponentLimits struct {
	// nodes are the per-node component figures.
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []NodeComponents `json:"nodes,omitempty"`
	// write is the write limit recomputed from measured figures.
	// +optional
	Write *OperationLimit `json:"write,omitempty"`
	// read is the read limit recomputed from measured figures.
	// +optional
	Read *OperationLimit `json:"read,omitempty"`
	// storageBench is the beegfs engine's extra component test: BeeGFS's StorageBench, every
	// storage target written and read by its own storage server (no client, no network). Its
	// per-node sums are in nodes[].storageBenchWrite/Read; the limits above stay fio's.
	// +optional
	StorageBench *StorageBenchSummary `json:"storageBench,omitempty"`
}

// StorageBenchSummary is one StorageBench run of the beegfs engine in stage 2.
type StorageBenchSummary struct {
	// tool is what ran, e.g. "beegfs benchmark start --odirect (StorageBench)".
	Tool string `json:"tool"`
	// blockSizeBytes is the size of each I/O request.
	// +optional
	BlockSizeBytes int64 `json:"blockSizeBytes,omitempty"`
	// sizePerTaskBytes is what each task wrote to its own file, then read back.
	// +optional
	SizePerTaskBytes int64 `json:"sizePerTaskBytes,omitempty"`
	// tasksPerTarget is the number of streams per storage target.
	// +optional
	TasksPerTarget int32 `json:"tasksPerTarget,omitempty"`
	// measuredTime is when the run ended.
	// +optional
	MeasuredTime *metav1.Time `json:"measuredTime,omitempty"`
	// targets are the per-target figures.
	// +listType=map
	// +listMapKey=id
	// +optional
	Targets []StorageBenchTarget `json:"targets,omitempty"`
	// message says why there are no figures (the run failed; stage 2 went on with fio's
	// figures), or what else to know about them.
	// +optional
	Message string `json:"message,omitempty"`
}

// StorageBenchTarget is one storage target's StorageBench figures.
type StorageBenchTarget struct {
	// id is the numeric BeeGFS target ID.
	ID int32 `json:"id"`
	// node the target is on.
	Node string `json:"node"`
	// writeBytesPerSecond measured by the storage server on this target.
	// +optional
	WriteBytesPerSecond int64 `json:"writeBytesPerSecond,omitempty"`
	// readBytesPerSecond measured by the storage server on this target.
	// +optional
	ReadBytesPerSecond int64 `json:"readBytesPerSecond,omitempty"`
}

// NodeComponents are one node's component figures, documented beside measured.
type NodeComponents struct {
	// name of the node.
	Name string `json:"name"`
	// network is the node's link data rate.
	// +optional
	Network *ComponentFigure `json:"network,omitempty"`
	// deviceWrite is the node's device write bandwidth.
	// +optional
	DeviceWrite *ComponentFigure `json:"deviceWrite,omitempty"`
	// deviceRead is the node's device read bandwidth.
	// +optional
	DeviceRead *ComponentFigure `json:"deviceRead,omitempty"`
	// storageBenchWrite is the node's storage targets' write bandwidth as BeeGFS's StorageBench
	// measured it on the storage server (sum over the node's targets; beegfs engine only),
	// beside the same documented device figure as deviceWrite.
	// +optional
	StorageBenchWrite *ComponentFigure `json:"storageBenchWrite,omitempty"`
	// storageBenchRead is the read counterpart of storageBenchWrite.
	// +optional
	StorageBenchRead *ComponentFigure `json:"storageBenchRead,omitempty"`
	// measuredTime is when the figures were measured; older results are reused.
	// +optional
	MeasuredTime *metav1.Time `json:"measuredTime,omitempty"`
	// reused is true when the figures came from an earlier burst buffer on this node.
	// +optional
	Reused bool `json:"reused,omitempty"`
}

// ComponentFigure is a documented figure beside its measurement.
type ComponentFigure struct {
	// documentedBytesPerSecond is the figure from spec, label or discovery.
	// +optional
	DocumentedBytesPerSecond *int64 `json:"documentedBytesPerSecond,omitempty"`
	// measuredBytesPerSecond is what the probe measured.
	// +optional
	MeasuredBytesPerSecond *int64 `json:"measuredBytesPerSecond,omitempty"`
	// source of the documented figure.
	// +optional
	Source string `json:"source,omitempty"`
}

// SweepLimits is stage 3.
type SweepLimits struct {
	// write is the analysis of the write sweep.
	// +optional
	Write *SweepResult `json:"write,omitempty"`
	// read is the analysis of the read sweep.
	// +optional
	Read *SweepResult `json:"read,omitempty"`
	// points is the number of grid points measured.
	// +optional
	Points int32 `json:"points,omitempty"`
	// configMapName names the ConfigMap (same namespace) holding the full sweep as CSV.
	// +optional
	ConfigMapName string `json:"configMapName,omitempty"`
	// cutShort is true when the time budget stopped the sweep early.
	// +optional
	CutShort bool `json:"cutShort,omitempty"`
}

// SweepPoint is one point of the grid.
type SweepPoint struct {
	// nodes is M.
	Nodes int32 `json:"nodes"`
	// processesPerNode is N.
	ProcessesPerNode int32 `json:"processesPerNode"`
}

// SweepResult is the analysis of one operation's sweep.
type SweepResult struct {
	// bestBytesPerSecond is the best aggregate, B.
	BestBytesPerSecond int64 `json:"bestBytesPerSecond"`
	// best is where B was measured.
	Best SweepPoint `json:"best"`
	// plateau is the smallest point reaching 95% of B.
	Plateau SweepPoint `json:"plateau"`
	// efficiencyPerMille is B / limit in thousandths.
	EfficiencyPerMille int32 `json:"efficiencyPerMille"`
	// parallelismLimitProcesses is P = min(Bs, Bnet, Bd) / C with C = link / N at the
	// plateau's processes per node: the client processes it takes to saturate the system.
	// +optional
	ParallelismLimitProcesses *int64 `json:"parallelismLimitProcesses,omitempty"`
}

// MonitoringLimits is stage 4.
type MonitoringLimits struct {
	// nodes are per-node figures during the best sweep point.
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []NodeMonitoring `json:"nodes,omitempty"`
	// stragglers are nodes well below the median.
	// +listType=set
	// +optional
	Stragglers []string `json:"stragglers,omitempty"`
}

// NodeMonitoring is one node's figures recorded while stage 3 ran.
type NodeMonitoring struct {
	// name of the node.
	Name string `json:"name"`
	// writeBytesPerSecond is what the node's processes achieved.
	// +optional
	WriteBytesPerSecond *int64 `json:"writeBytesPerSecond,omitempty"`
	// networkPeakBytesPerSecond is the busiest interface's peak (sent+received).
	// +optional
	NetworkPeakBytesPerSecond *int64 `json:"networkPeakBytesPerSecond,omitempty"`
	// devicePeakBytesPerSecond is the busiest device's peak (read+written).
	// +optional
	DevicePeakBytesPerSecond *int64 `json:"devicePeakBytesPerSecond,omitempty"`
}

// WorkloadResult is one workload benchmark.
type WorkloadResult struct {
	// name: sharedFile, random4k, metadata.
	Name string `json:"name"`
	// operation measured, e.g. write, randwrite, create.
	// +optional
	Operation string `json:"operation,omitempty"`
	// bytesPerSecond achieved.
	// +optional
	BytesPerSecond *int64 `json:"bytesPerSecond,omitempty"`
	// opsPerSecond achieved.
	// +optional
	OpsPerSecond *int64 `json:"opsPerSecond,omitempty"`
	// sharePercent of the stage-3 limit of its operation.
	// +optional
	SharePercent *int32 `json:"sharePercent,omitempty"`
}

// Warning reasons.
const (
	WarningExceedsLimit       = "ExceedsLimit"
	WarningBelowExpectation   = "BelowExpectation"
	WarningStragglers         = "Stragglers"
	WarningBelowDocumented    = "BelowDocumented"
	WarningUnknownLimit       = "UnknownLimit"
	WarningValidationCutShort = "ValidationCutShort"
	// WarningComponentTestFailed: an engine's extra component test (the beegfs engine's
	// StorageBench) gave no figures; stage 2 went on without them.
	WarningComponentTestFailed = "ComponentTestFailed"
	// WarningNodeBusy: other beeburst pods (another burst buffer's tasks, or its workload)
	// ran on a node while its device was probed; the figures are published but not kept
	// for reuse.
	WarningNodeBusy = "NodeBusy"
)

// Warning is one finding.
type Warning struct {
	// reason is a CamelCase code: ExceedsLimit, BelowExpectation, Stragglers, BelowDocumented.
	Reason string `json:"reason"`
	// operation concerned, if any: write or read.
	// +optional
	Operation string `json:"operation,omitempty"`
	// node concerned, if any.
	// +optional
	Node string `json:"node,omitempty"`
	// component concerned, if any: network, device.
	// +optional
	Component string `json:"component,omitempty"`
	// message for humans.
	Message string `json:"message"`
}

// WorkloadStatus tells about the workload's pods.
type WorkloadStatus struct {
	// gatedPods are pods still held by the scheduling gate.
	// +listType=set
	// +optional
	GatedPods []string `json:"gatedPods,omitempty"`
	// runningPods counts workload pods not yet completed.
	// +optional
	RunningPods int32 `json:"runningPods,omitempty"`
	// completedPods counts workload pods that completed.
	// +optional
	CompletedPods int32 `json:"completedPods,omitempty"`
	// teardownTime is when teardown will start, if known.
	// +optional
	TeardownTime *metav1.Time `json:"teardownTime,omitempty"`
	// teardownReason says why teardown starts then.
	// +optional
	TeardownReason string `json:"teardownReason,omitempty"`
}

// StagePhase is where a stage-in or stage-out copy is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type StagePhase string

// Stage phases.
const (
	StagePending   StagePhase = "Pending"
	StageRunning   StagePhase = "Running"
	StageSucceeded StagePhase = "Succeeded"
	StageFailed    StagePhase = "Failed"
)

// StageStatus is the progress of a stage-in or stage-out copy, over all nodes.
type StageStatus struct {
	// phase of the whole copy.
	// +optional
	Phase StagePhase `json:"phase,omitempty"`
	// files copied so far.
	// +optional
	Files int64 `json:"files,omitempty"`
	// bytes copied so far.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// bytesPerSecond is the copy rate: bytes over the time since the copy started (until it
	// completed).
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// skippedFiles were already at the destination with the same content (an earlier,
	// interrupted copy, or the same file from several nodes).
	// +optional
	SkippedFiles int64 `json:"skippedFiles,omitempty"`
	// startTime is when the first copy started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the copy finished.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// nodes is the copy per node.
	// +listType=map
	// +listMapKey=name
	// +optional
	Nodes []StageNodeStatus `json:"nodes,omitempty"`
	// message describes the copy: what runs, or what failed and what to do.
	// +optional
	Message string `json:"message,omitempty"`
}

// StageNodeStatus is the copy on one node.
type StageNodeStatus struct {
	// name of the node.
	Name string `json:"name"`
	// pod that copies on this node.
	// +optional
	Pod string `json:"pod,omitempty"`
	// phase of the node's copy.
	// +optional
	Phase StagePhase `json:"phase,omitempty"`
	// files copied by this node.
	// +optional
	Files int64 `json:"files,omitempty"`
	// bytes copied by this node.
	// +optional
	Bytes int64 `json:"bytes,omitempty"`
	// message: why the copy waits or failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// BeeGFSStatus is what the operator allocated for a BeeGFS instance.
type BeeGFSStatus struct {
	// connPortShift is added to every BeeGFS port so several instances share nodes.
	ConnPortShift int32 `json:"connPortShift"`
	// managementAddress is host:port of the management service (gRPC).
	// +optional
	ManagementAddress string `json:"managementAddress,omitempty"`
	// authSecretName names the connection authentication Secret.
	// +optional
	AuthSecretName string `json:"authSecretName,omitempty"`
}

// BurstBuffer is a job's own parallel file system over its nodes' local drives, with the
// performance limits measured before the job writes a byte.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name must be at most 40 characters: it prefixes the names of the pods and directories the operator creates"
// +kubebuilder:resource:shortName=bb,categories=beeburst
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Engine",type=string,JSONPath=`.spec.engine`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.capacity`
// +kubebuilder:printcolumn:name="Limit-W",type=string,JSONPath=`.status.summary.writeLimit`,description="current write limit (stage 2 if measured, else stage 1)"
// +kubebuilder:printcolumn:name="Measured-W",type=string,JSONPath=`.status.summary.writeMeasured`,description="stage-3 best write bandwidth"
// +kubebuilder:printcolumn:name="Eff",type=string,JSONPath=`.status.summary.efficiency`,description="measured / limit"
// +kubebuilder:printcolumn:name="Bottleneck",type=string,JSONPath=`.status.summary.bottleneck`,priority=1
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target.state`,priority=1,description="spec.target: Predicted, Met, NotMet, Unreachable or Unknown"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BurstBuffer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the user asks for.
	// +kubebuilder:default={}
	// +optional
	Spec BurstBufferSpec `json:"spec,omitzero"`
	// status is what the operator observed and measured.
	// +optional
	Status BurstBufferStatus `json:"status,omitzero"`

	// undecodable and statusUndecodable are set by UnmarshalJSON when spec or status could not
	// be decoded.
	undecodable       string `json:"-"`
	statusUndecodable bool   `json:"-"`
}

// BurstBufferList is a list of BurstBuffers.
//
// +kubebuilder:object:root=true
type BurstBufferList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BurstBuffer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BurstBuffer{}, &BurstBufferList{})
}
