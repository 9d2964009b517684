// The status: phase, nodes, mounts, the one-line summary `kubectl get` shows, the workload and
// the BeeGFS instance. The limits are in limits_types.go.

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

	// validationEndTime is when stages 2-4 ended: every step measured, the time budget ran
	// out, or a measurement failed (the ComponentsMeasured and Validated conditions say
	// which). Nothing is measured after it, and the nodes go to the next burst buffer.
	// +optional
	ValidationEndTime *metav1.Time `json:"validationEndTime,omitempty"`

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
	// claimName is the PersistentVolumeClaim in the BurstBuffer's namespace through which
	// pods mount the burst buffer (spec.workload.claimName); it is bound once Ready.
	// +optional
	ClaimName string `json:"claimName,omitempty"`
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
