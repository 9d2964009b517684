// The spec: what the user asks for (engine, nodes, storage, layout, validation, workload,
// teardown, BeeGFS settings). Hardware figures are in hardware_types.go, copies in staging_types.go,
// sizing in target_types.go.

package v1alpha1

import (
	"time"

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

	// reuseSweep: with the quick profile, a burst buffer on the same nodes, storage path,
	// engine, layout and sweep grid as one validated within reuseComponentResultsFor -
	// components and sweep measured with the nodes to themselves, nothing cut short or
	// disturbed - takes that one's stage-2 and stage-3 figures instead of measuring again, and
	// is Ready in seconds; status.limits.components.reusedFrom and sweep.reusedFrom name the
	// source and when it measured. false: always measure the sweep (and the links).
	// +kubebuilder:default=true
	// +optional
	ReuseSweep *bool `json:"reuseSweep,omitempty"`

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
// +kubebuilder:validation:XValidation:rule="has(self.claimName) == has(oldSelf.claimName) && (!has(self.claimName) || self.claimName == oldSelf.claimName)",message="workload.claimName is immutable: pods may already name the claim; create a new BurstBuffer to change it"
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

	// claimName is the PersistentVolumeClaim the operator creates in the BurstBuffer's
	// namespace for the workload: a pod that mounts it waits (Pending, unbound claim) until
	// the burst buffer is Ready, and is then placed on the burst buffer's nodes by the
	// scheduler - no label, scheduling gate or hostPath needed, so it works under Pod Security
	// "baseline". With engine beegfs the claim is ReadWriteMany and every pod sees one shared
	// file system; with engine local it is ReadWriteOnce and each pod sees its own node's
	// private directory. Empty: the BurstBuffer's name. Immutable.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')",message="workload.claimName must be a DNS subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	ClaimName string `json:"claimName,omitempty"`

	// pattern is how the job's processes do their I/O: LargeSequential (each process its own
	// files, large sequential blocks - N-N), SharedFile (one shared file, each process its own
	// segments - N-1) or SmallRandom (4 KiB random). layout.chunkSizePolicy Auto tunes the
	// chunk size for it. Empty: LargeSequential. Immutable.
	// +optional
	Pattern WorkloadPattern `json:"pattern,omitempty"`
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
	// preference (connInterfacesList). Empty: each node's InternalIP only (the address the
	// other nodes reach it by). Each is a Linux interface name: 1-15
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
	// without a licence, so a burst buffer over 6 or more nodes needs one there. A licence in
	// turn admits metadata and storage servers on as many machines as it names, and every node
	// runs a storage server. Either refusal fails the burst buffer (condition reason
	// LicenseRequired). Empty: no licence.
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

// MaxReuseComponentResultsFor is the longest validation.reuseComponentResultsFor the CRD's
// rule admits (keep the two in step): no measured figure is reused, nor kept for reuse,
// longer than this.
const MaxReuseComponentResultsFor = 168 * time.Hour
