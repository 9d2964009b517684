package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file holds the API of sizing: a burst buffer sized from what the job needs
// (spec.target, status.target), its chunk size tuned for the job's access pattern
// (layout.chunkSizePolicy, workload.pattern, status.chunkSize) and its figures compared with
// the storage the job would use otherwise (validation.compareWith, status.comparison). The
// rules behind them are in internal/sizing and docs/sizing.md.

// TargetSpec is what the job needs from its burst buffer; spec.target's documentation (on
// the field, which is what kubectl explain shows) says how it meets spec.nodes.count.
//
// +kubebuilder:validation:XValidation:rule="has(self.writeBytesPerSecond) || has(self.readBytesPerSecond) || has(self.capacity) || has(self.metadataOperationsPerSecond)",message="target must name at least one figure: writeBytesPerSecond, readBytesPerSecond, capacity or metadataOperationsPerSecond"
type TargetSpec struct {
	// writeBytesPerSecond is the aggregate write bandwidth the job needs, in bytes per second
	// (decimal: "2G" is 2 GB/s), more than 0 and at most 1P (1 PB/s, beyond any file system
	// ever measured: a larger figure is a unit mistake).
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="target.writeBytesPerSecond must be greater than zero, e.g. 2G (2 GB/s)"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1P'))",message="target.writeBytesPerSecond must be at most 1P (1 PB/s); it is in bytes per second, e.g. 2G for 2 GB/s"
	// +optional
	WriteBytesPerSecond *resource.Quantity `json:"writeBytesPerSecond,omitempty"`

	// readBytesPerSecond is the aggregate read bandwidth the job needs, as
	// writeBytesPerSecond.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="target.readBytesPerSecond must be greater than zero, e.g. 4G (4 GB/s)"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1P'))",message="target.readBytesPerSecond must be at most 1P (1 PB/s); it is in bytes per second, e.g. 4G for 4 GB/s"
	// +optional
	ReadBytesPerSecond *resource.Quantity `json:"readBytesPerSecond,omitempty"`

	// capacity is the space the job needs over all nodes, more than 0 and at most 1Ei (1024
	// nodes of 1Pi). Each node counts with the space free at spec.storage.path, at most
	// spec.storage.capacityPerNode.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="target.capacity must be greater than zero, e.g. 2Ti"
	// +kubebuilder:validation:XValidation:rule="!quantity(string(self)).isGreaterThan(quantity('1Ei'))",message="target.capacity must be at most 1Ei"
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`

	// metadataOperationsPerSecond is the file creates per second the job needs over all its
	// processes, from 1 to 1e10. Stage 1 has no metadata term: the operator sizes the metadata
	// servers only from a measured per-server figure, and otherwise keeps
	// layout.metadataServers and checks the target against the metadata benchmark of the
	// standard validation profile.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000000
	// +optional
	MetadataOperationsPerSecond *int64 `json:"metadataOperationsPerSecond,omitempty"`

	// marginPercent is how far the predicted (stage-1) limit must exceed each figure before a
	// node count counts as meeting it, from 0 to 100: the file system reaches only part of its
	// hardware limit (the paper's BeeGFS 84%, private scratch about 99%). A count that meets a
	// figure only without the margin is taken when no count meets it with one, and the status
	// says the margin is thin.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	MarginPercent int32 `json:"marginPercent,omitempty"`
}

// TargetMode says who chose the node count.
// +kubebuilder:validation:Enum=Choose;Check
type TargetMode string

const (
	// TargetChoose: spec.nodes.count was not given; the operator chose it from the target.
	TargetChoose TargetMode = "Choose"
	// TargetCheck: spec.nodes.count was given; the target is checked against those nodes.
	TargetCheck TargetMode = "Check"
)

// TargetState is where the target stands.
// +kubebuilder:validation:Enum=Predicted;Met;NotMet;Unreachable;Unknown
type TargetState string

const (
	// TargetPredicted: the stage-1 model of the chosen nodes meets every figure; stage 3 has
	// not measured it yet (or validation.profile none never will).
	TargetPredicted TargetState = "Predicted"
	// TargetMetState: stage 3 measured every figure at or above its target.
	TargetMetState TargetState = "Met"
	// TargetNotMet: stage 3 measured a figure below its target.
	TargetNotMet TargetState = "NotMet"
	// TargetUnreachable: even the stage-1 model of the candidate nodes falls short (of the
	// given nodes, with nodes.count).
	TargetUnreachable TargetState = "Unreachable"
	// TargetUnknown: a figure the decision needs is known nowhere, or the measurement that
	// would tell is not valid.
	TargetUnknown TargetState = "Unknown"
)

// Shortfall causes: why a target is not (or cannot be) met. status.target.cause.
const (
	// CauseNetworkCaps: the network (a fabric's bisection less its service traffic) bounds
	// the limit whatever the node count.
	CauseNetworkCaps = "NetworkCaps"
	// CauseTooFewNodes: more nodes like these would meet it, but there are not enough
	// candidates (or nodes.count gave fewer).
	CauseTooFewNodes = "TooFewNodes"
	// CauseNodeCapacity: the nodes' space (free space, or storage.capacityPerNode) falls short.
	CauseNodeCapacity = "NodeCapacity"
	// CauseUnknownFigures: a figure the prediction needs is known nowhere.
	CauseUnknownFigures = "UnknownFigures"
	// CauseEfficiency: the hardware allows the target but the file system reached too little
	// of it, and the sweep cannot say whether more nodes would help.
	CauseEfficiency = "Efficiency"
	// CauseMetadataServers: more metadata servers would be needed than the layout allows.
	CauseMetadataServers = "MetadataServers"
)

// ConditionTargetMet is the condition of spec.target: Unknown while only predicted, True
// once stage 3 measured every figure at or above its target, False when it did not or when
// no count can meet it. Set only on burst buffers with a target.
const ConditionTargetMet = "TargetMet"

// Reasons of the TargetMet condition.
const (
	// ReasonTargetPredicted: the stage-1 model meets the target; not measured yet.
	ReasonTargetPredicted = "TargetPredicted"
	// ReasonTargetUnreachable: the stage-1 model of the candidate (or given) nodes falls short.
	ReasonTargetUnreachable = "TargetUnreachable"
	// ReasonTargetMet: stage 3 measured it.
	ReasonTargetMet = "TargetMet"
	// ReasonTargetNotMet: stage 3 measured less; the message names the bottleneck and what
	// would meet it.
	ReasonTargetNotMet = "TargetNotMet"
	// ReasonTargetUnknown: the figures to decide are missing, or the measurement is not valid.
	ReasonTargetUnknown = "TargetUnknown"
)

// SourceMeasuredStale is a figure measured by a stage-2 probe longer ago than
// validation.reuseComponentResultsFor: used only when nothing fresher or documented gives it.
const SourceMeasuredStale = "measured-stale"

// TargetStatus is the decision spec.target led to and, after stage 3, whether it was met. It
// stays small: figures per chosen node and per operation, no sweep points.
type TargetStatus struct {
	// state: Predicted, Met, NotMet, Unreachable or Unknown.
	State TargetState `json:"state"`
	// mode: Choose (the operator chose nodeCount) or Check (spec.nodes.count gave it).
	Mode TargetMode `json:"mode"`
	// nodeCount is the number of nodes chosen (or given).
	NodeCount int32 `json:"nodeCount"`
	// metadataServers is the number of metadata servers chosen (beegfs engine).
	// +optional
	MetadataServers int32 `json:"metadataServers,omitempty"`
	// candidateNodes is the number of nodes the choice was made among.
	// +optional
	CandidateNodes int32 `json:"candidateNodes,omitempty"`
	// nodes are the chosen nodes with the figures they contribute and where each came from.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Nodes []TargetNode `json:"nodes,omitempty"`
	// write is the write bandwidth target: predicted, then measured.
	// +optional
	Write *TargetBandwidth `json:"write,omitempty"`
	// read is the read bandwidth target: predicted, then measured.
	// +optional
	Read *TargetBandwidth `json:"read,omitempty"`
	// capacity is the capacity target.
	// +optional
	Capacity *TargetCapacity `json:"capacity,omitempty"`
	// metadata is the metadata rate target.
	// +optional
	Metadata *TargetMetadata `json:"metadata,omitempty"`
	// cause says why the target is not met or cannot be: NetworkCaps, TooFewNodes,
	// NodeCapacity, UnknownFigures, Efficiency or MetadataServers. Empty when it is met or
	// predicted.
	// +optional
	Cause string `json:"cause,omitempty"`
	// moreNodes is how many more nodes like these the model predicts would meet the target,
	// when that is the answer (cause TooFewNodes, or an unmet target after stage 3).
	// +optional
	MoreNodes *int32 `json:"moreNodes,omitempty"`
	// message is the decision and, after stage 3, the verdict, in sentences.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Message string `json:"message,omitempty"`
	// decidedTime is when the nodes were chosen.
	// +optional
	DecidedTime *metav1.Time `json:"decidedTime,omitempty"`
}

// TargetNode is one chosen node's contribution. A figure is absent when the target does not
// need it (a write-only target shows no read figure) or nothing gives it.
type TargetNode struct {
	// name of the node.
	Name string `json:"name"`
	// workload is true for a node where the workload's pods run or can run (preferred).
	// +optional
	Workload bool `json:"workload,omitempty"`
	// writeBytesPerSecond is the node's device write bandwidth the prediction used.
	// +optional
	WriteBytesPerSecond *int64 `json:"writeBytesPerSecond,omitempty"`
	// writeSource: measured, measured-stale, spec, label, discovered or unknown.
	// +optional
	WriteSource string `json:"writeSource,omitempty"`
	// readBytesPerSecond is the node's device read bandwidth the prediction used.
	// +optional
	ReadBytesPerSecond *int64 `json:"readBytesPerSecond,omitempty"`
	// readSource, as writeSource.
	// +optional
	ReadSource string `json:"readSource,omitempty"`
	// networkBytesPerSecond is the node's link data rate the prediction used (after
	// encoding). Absent where no data crosses the network (local engine, one node).
	// +optional
	NetworkBytesPerSecond *int64 `json:"networkBytesPerSecond,omitempty"`
	// networkSource, as writeSource.
	// +optional
	NetworkSource string `json:"networkSource,omitempty"`
	// capacity is the space the node contributes.
	// +optional
	Capacity *resource.Quantity `json:"capacity,omitempty"`
	// capacitySource, as writeSource.
	// +optional
	CapacitySource string `json:"capacitySource,omitempty"`
	// measuredTime is when the node's measured figures were measured.
	// +optional
	MeasuredTime *metav1.Time `json:"measuredTime,omitempty"`
}

// TargetBandwidth is one bandwidth target: the stage-1 prediction for the chosen nodes, then
// what stage 3 measured.
type TargetBandwidth struct {
	// targetBytesPerSecond is spec.target's figure.
	TargetBytesPerSecond int64 `json:"targetBytesPerSecond"`
	// predictedBytesPerSecond is the stage-1 limit of the chosen nodes. Absent when a figure
	// it needs is unknown.
	// +optional
	PredictedBytesPerSecond *int64 `json:"predictedBytesPerSecond,omitempty"`
	// predictedBottleneck is the smallest term of that limit: clients, servers, network or
	// devices.
	// +optional
	PredictedBottleneck string `json:"predictedBottleneck,omitempty"`
	// predictedMarginPercent is predicted / target - 1, in percent; negative when short.
	// +optional
	PredictedMarginPercent *int32 `json:"predictedMarginPercent,omitempty"`
	// measuredBytesPerSecond is stage 3's best.
	// +optional
	MeasuredBytesPerSecond *int64 `json:"measuredBytesPerSecond,omitempty"`
	// measuredMarginPercent is measured / target - 1, in percent; negative when short.
	// +optional
	MeasuredMarginPercent *int32 `json:"measuredMarginPercent,omitempty"`
	// bottleneck is the component that limits after stage 3: the bottleneck of the limit
	// recomputed from measured figures (stage 2), else stage 1's.
	// +optional
	Bottleneck string `json:"bottleneck,omitempty"`
	// met says whether stage 3 measured the target. Absent until then.
	// +optional
	Met *bool `json:"met,omitempty"`
	// moreNodes is how many more nodes like these would meet it, when the data can tell.
	// +optional
	MoreNodes *int32 `json:"moreNodes,omitempty"`
	// message explains this figure's prediction and verdict.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// TargetCapacity is the capacity target.
type TargetCapacity struct {
	// target is spec.target.capacity.
	Target resource.Quantity `json:"target"`
	// predicted is the space of the chosen nodes, as far as it is known before they are
	// probed.
	// +optional
	Predicted *resource.Quantity `json:"predicted,omitempty"`
	// predictedMarginPercent is predicted / target - 1, in percent.
	// +optional
	PredictedMarginPercent *int32 `json:"predictedMarginPercent,omitempty"`
	// measured is status.capacity once the device probes ran.
	// +optional
	Measured *resource.Quantity `json:"measured,omitempty"`
	// met says whether the measured capacity meets the target.
	// +optional
	Met *bool `json:"met,omitempty"`
}

// TargetMetadata is the metadata rate target.
type TargetMetadata struct {
	// targetOperationsPerSecond is spec.target.metadataOperationsPerSecond.
	TargetOperationsPerSecond int64 `json:"targetOperationsPerSecond"`
	// perServerOperationsPerSecond is the per-metadata-server figure the choice of
	// metadataServers used; absent when none was known.
	// +optional
	PerServerOperationsPerSecond *int64 `json:"perServerOperationsPerSecond,omitempty"`
	// measuredOperationsPerSecond is the metadata benchmark's file creates per second.
	// +optional
	MeasuredOperationsPerSecond *int64 `json:"measuredOperationsPerSecond,omitempty"`
	// met says whether the measured rate meets the target.
	// +optional
	Met *bool `json:"met,omitempty"`
	// message explains the choice of metadata servers and the verdict.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// ChunkSizePolicy says how the beegfs engine's stripe chunk size is chosen.
// +kubebuilder:validation:Enum=Fixed;Auto
type ChunkSizePolicy string

const (
	// ChunkSizeFixed uses layout.chunkSize.
	ChunkSizeFixed ChunkSizePolicy = "Fixed"
	// ChunkSizeAuto measures 2-4 chunk sizes for spec.workload.pattern and keeps the best.
	ChunkSizeAuto ChunkSizePolicy = "Auto"
)

// WorkloadPattern is how the job's processes do their I/O; it decides which chunk sizes
// layout.chunkSizePolicy Auto tries and by which figures it ranks them.
// +kubebuilder:validation:Enum=LargeSequential;SharedFile;SmallRandom
type WorkloadPattern string

const (
	// PatternLargeSequential: each process writes and reads its own files in large
	// sequential blocks (N-N, file per process) - the ideal workload of stage 3.
	PatternLargeSequential WorkloadPattern = "LargeSequential"
	// PatternSharedFile: all processes write and read one shared file, each its own
	// segments (N-1), in blocks of the sweep's block size.
	PatternSharedFile WorkloadPattern = "SharedFile"
	// PatternSmallRandom: small (4 KiB) random reads and writes; ranked by operations per
	// second.
	PatternSmallRandom WorkloadPattern = "SmallRandom"
)

// ChunkSizeStatus is the chunk size in use and, with policy Auto, the figures that chose it.
type ChunkSizeStatus struct {
	// size is the stripe chunk size of the file system's root directory.
	Size resource.Quantity `json:"size"`
	// policy is layout.chunkSizePolicy.
	Policy ChunkSizePolicy `json:"policy"`
	// pattern is the workload pattern the sizes were ranked for.
	// +optional
	Pattern WorkloadPattern `json:"pattern,omitempty"`
	// candidates are the sizes measured, layout.chunkSize (the baseline) first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Candidates []ChunkSizeCandidate `json:"candidates,omitempty"`
	// message says why this size: which figures beat the baseline by how much, or why the
	// baseline stayed (a tie, a budget too small to compare, a failed run).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// ChunkSizeCandidate is one chunk size's short run.
type ChunkSizeCandidate struct {
	// size is the chunk size.
	Size resource.Quantity `json:"size"`
	// writeBytesPerSecond measured (LargeSequential, SharedFile).
	// +optional
	WriteBytesPerSecond *int64 `json:"writeBytesPerSecond,omitempty"`
	// readBytesPerSecond measured (LargeSequential, SharedFile).
	// +optional
	ReadBytesPerSecond *int64 `json:"readBytesPerSecond,omitempty"`
	// writeOpsPerSecond measured (SmallRandom).
	// +optional
	WriteOpsPerSecond *int64 `json:"writeOpsPerSecond,omitempty"`
	// readOpsPerSecond measured (SmallRandom).
	// +optional
	ReadOpsPerSecond *int64 `json:"readOpsPerSecond,omitempty"`
	// scorePerMille is the geometric mean of its figures over the baseline's, in
	// thousandths: 1000 is as fast as layout.chunkSize.
	// +optional
	ScorePerMille *int32 `json:"scorePerMille,omitempty"`
	// chosen marks the size in use.
	// +optional
	Chosen bool `json:"chosen,omitempty"`
	// message says why a size was not ranked (its run failed, a figure above its limit).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// CompareWithSpec names the storage to compare the burst buffer with: the same ideal workload
// runs there too, and status.comparison shows both side by side. Exactly one of its fields.
// +kubebuilder:validation:XValidation:rule="has(self.persistentVolumeClaim) != has(self.nodeLocal)",message="validation.compareWith needs exactly one of persistentVolumeClaim and nodeLocal"
type CompareWithSpec struct {
	// persistentVolumeClaim is a claim in the BurstBuffer's namespace (the storage the job
	// would use otherwise). The ideal workload's best point runs there with as many nodes as
	// the claim's access modes allow (ReadWriteOnce: one).
	// +optional
	PersistentVolumeClaim *PVCSource `json:"persistentVolumeClaim,omitempty"`

	// nodeLocal is a directory on each node's own disk: every node runs its share of the
	// ideal workload there, privately.
	// +optional
	NodeLocal *NodeLocalComparison `json:"nodeLocal,omitempty"`
}

// NodeLocalComparison is a node-local directory to compare with.
type NodeLocalComparison struct {
	// path is the node-local directory, with the rules of storage.path (and the operator's
	// allowed roots). Empty: storage.path itself - the burst buffer's own drives without the
	// file system on top (beegfs engine only: the local engine is that already). The benchmark
	// writes below a directory of its own there and removes it.
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:XValidation:rule="self.matches('^(/[A-Za-z0-9._+@-]+)+$')",message="compareWith.nodeLocal.path must be an absolute path of letters, digits and . _ - + @ with no empty segment and no trailing '/', e.g. /scratch"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(^|/)[.][.]?(/|$)')",message="compareWith.nodeLocal.path must not contain '.' or '..' segments"
	// +kubebuilder:validation:XValidation:rule="!['/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/proc', '/root', '/run', '/sbin', '/sys', '/usr', '/var/run', '/var/log', '/var/lib/kubelet', '/var/lib/containerd', '/var/lib/docker', '/var/lib/etcd'].exists(p, self == p || self.startsWith(p + '/')) && !(self in ['/var', '/var/lib'])",message="compareWith.nodeLocal.path must not be a system directory or below one (/bin, /boot, /dev, /etc, /home, /lib*, /proc, /root, /run, /sbin, /sys, /usr, /var/run, /var/log, /var/lib/{kubelet,containerd,docker,etcd}; nor /var or /var/lib)"
	// +optional
	Path string `json:"path,omitempty"`
}

// ComparisonStatus is the burst buffer beside the storage validation.compareWith names.
type ComparisonStatus struct {
	// with names the other storage, e.g. "claim results" or "node-local /scratch".
	With string `json:"with"`
	// workload is what ran on both, e.g. "large sequential writes and reads, 2 nodes x 4
	// processes".
	// +optional
	Workload string `json:"workload,omitempty"`
	// operations are the figures side by side.
	// +listType=map
	// +listMapKey=operation
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Operations []ComparedOperation `json:"operations,omitempty"`
	// message is the verdict in a sentence, e.g. "the burst buffer is 3.4x faster than claim
	// results for large sequential writes".
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// ComparedOperation is one operation on both.
type ComparedOperation struct {
	// operation: write or read.
	Operation string `json:"operation"`
	// burstBufferBytesPerSecond is the burst buffer's figure.
	// +optional
	BurstBufferBytesPerSecond *int64 `json:"burstBufferBytesPerSecond,omitempty"`
	// otherBytesPerSecond is the other storage's figure.
	// +optional
	OtherBytesPerSecond *int64 `json:"otherBytesPerSecond,omitempty"`
	// ratioPerMille is the burst buffer's figure over the other's, in thousandths (3400:
	// 3.4 times as fast).
	// +optional
	RatioPerMille *int32 `json:"ratioPerMille,omitempty"`
	// verdict is the comparison in words.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Verdict string `json:"verdict,omitempty"`
}
