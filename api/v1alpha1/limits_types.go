// The staged limits (stage 1 estimate, stage 2 components, stage 3 sweep, stage 4 monitoring)
// and the warnings the figures raised.

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
	// deviceProbeRound is 2 when the devices were measured a second time: the sweep read
	// above a device-bound limit of the first round, and a probe disturbed by other work on
	// its node reads low, while caching reads high - a second probe tells which. Each figure
	// above is the higher of the two rounds, except where the first read more than 5% above
	// the documented figure (caching) or was reused from another burst buffer's probe: there
	// the second round's stands. The first round's are
	// in nodes[].deviceWrite/deviceRead.firstRoundBytesPerSecond. Unset: measured once.
	// +optional
	DeviceProbeRound int32 `json:"deviceProbeRound,omitempty"`
	// networkProbeRound is 2 when the links were measured a second time: the sweep read
	// above a network- or server-bound limit of the first round, and a link probe disturbed
	// by other work reads low. The figures above are the higher of the two rounds (the
	// first round's in nodes[].network.firstRoundBytesPerSecond). Unset: measured once.
	// +optional
	NetworkProbeRound int32 `json:"networkProbeRound,omitempty"`
	// reusedFrom names the burst buffer whose validation these figures come from, when they
	// were not measured for this one (validation.reuseSweep).
	// +optional
	ReusedFrom *ReusedFrom `json:"reusedFrom,omitempty"`
}

// ReusedFrom is where reused figures were measured.
type ReusedFrom struct {
	// burstBuffer is the source, namespace/name.
	BurstBuffer string `json:"burstBuffer"`
	// measuredTime is when its validation ended.
	MeasuredTime metav1.Time `json:"measuredTime"`
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
	// measuredBytesPerSecond is what the probe measured; measured twice, the higher of the
	// two rounds (interference only lowers a device's or a link's throughput).
	// +optional
	MeasuredBytesPerSecond *int64 `json:"measuredBytesPerSecond,omitempty"`
	// firstRoundBytesPerSecond is the first round's figure when the component was measured
	// a second time (status.limits.components.deviceProbeRound, networkProbeRound).
	// +optional
	FirstRoundBytesPerSecond *int64 `json:"firstRoundBytesPerSecond,omitempty"`
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
	// remeasured are the points measured a second time before the sweep was published: a
	// best point far below the stage-2 limit, or one measured while other work ran on its
	// nodes. The analysis above uses each point's higher round: interference only lowers a
	// capped device's or link's throughput.
	// +listType=atomic
	// +optional
	Remeasured []RemeasuredPoint `json:"remeasured,omitempty"`
	// reusedFrom names the burst buffer whose sweep this is, when it was not measured for
	// this one (validation.reuseSweep).
	// +optional
	ReusedFrom *ReusedFrom `json:"reusedFrom,omitempty"`
}

// Reasons a sweep point is measured a second time (remeasuredPoint.reason).
const (
	// RemeasureFarBelowLimit: the best point measured under remeasureBelowPercent of the
	// stage-2 limit that its nodes and devices were measured to give.
	RemeasureFarBelowLimit = "FarBelowLimit"
	// RemeasureNodeBusy: other work ran on one of the point's nodes while it measured.
	RemeasureNodeBusy = "NodeBusy"
)

// RemeasuredPoint is a sweep point measured twice, with both rounds' figures.
type RemeasuredPoint struct {
	// point is where in the grid.
	Point SweepPoint `json:"point"`
	// reason it was measured again: FarBelowLimit or NodeBusy.
	Reason string `json:"reason"`
	// message says why, with the figures.
	// +optional
	Message string `json:"message,omitempty"`
	// rounds are the point's measurements in order: the first, then the second once it
	// ended.
	// +listType=atomic
	Rounds []PointRound `json:"rounds"`
}

// PointRound is one measurement of a sweep point.
type PointRound struct {
	// writeBytesPerSecond is the point's aggregate write bandwidth in this round.
	WriteBytesPerSecond int64 `json:"writeBytesPerSecond"`
	// readBytesPerSecond is the point's aggregate read bandwidth in this round.
	// +optional
	ReadBytesPerSecond int64 `json:"readBytesPerSecond,omitempty"`
	// disturbedBy names what ran on the point's nodes beside this round (other burst
	// buffers' pods, bytes on a node's device that the run did not move); empty: the nodes
	// were the run's own.
	// +listType=atomic
	// +optional
	DisturbedBy []string `json:"disturbedBy,omitempty"`
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
	// reusedFrom names the burst buffer whose validation these figures come from, when they
	// were not measured for this one (validation.reuseSweep).
	// +optional
	ReusedFrom *ReusedFrom `json:"reusedFrom,omitempty"`
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
	// WarningNodeBusy: other work (another burst buffer's pods, or bytes on the node's
	// device that the run did not move) ran on a node while its device was probed, or while
	// a sweep point measured in both of its rounds; the figures are published but not kept
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
