package v1alpha1

// Finalizer guards teardown: it is added before the operator creates anything on a node and
// removed only after stage-out finished and the node-local directories are gone.
const Finalizer = "beeburst.io/teardown"

// SchedulingGate is the gate the operator lifts from workload pods once the burst buffer is
// Ready.
const SchedulingGate = "beeburst.io/ready"

// Labels.
const (
	// LabelBurstBuffer names the burst buffer a workload pod uses (the default workload
	// selector) and marks the operator's own children.
	LabelBurstBuffer = "beeburst.io/burst-buffer"
	// LabelNodePrefix + <namespace>.<name> is set on the nodes carrying a burst buffer, so
	// workloads can use node affinity.
	LabelNodePrefix = "bb.beeburst.io/"

	// Documented hardware figures of a node (stage 1), e.g. set by the testbed or by an
	// administrator. Values are quantities: "1G" bits/s, "300M" bytes/s. The encoding label
	// writes 64b/66b as "64b66b" (label values cannot hold "/"); absent means none.
	LabelLinkRateBitsPerSecond   = "hardware.beeburst.io/link-rate-bits-per-second"
	LabelLinkEncoding            = "hardware.beeburst.io/link-encoding"
	LabelDiskWriteBytesPerSecond = "hardware.beeburst.io/disk-write-bytes-per-second"
	LabelDiskReadBytesPerSecond  = "hardware.beeburst.io/disk-read-bytes-per-second"
)

// Condition types. Ready summarises the others.
const (
	ConditionReady              = "Ready"
	ConditionLimitsEstimated    = "LimitsEstimated"
	ConditionProvisioned        = "Provisioned"
	ConditionComponentsMeasured = "ComponentsMeasured"
	ConditionValidated          = "Validated"
	ConditionClientsMounted     = "ClientsMounted"
	ConditionStagedIn           = "StagedIn"
	ConditionStagedOut          = "StagedOut"
)

// Condition reasons.
const (
	ReasonPending             = "Pending"
	ReasonReconciling         = "Reconciling"
	ReasonNodesNotFound       = "NodesNotFound"
	ReasonNodesSelected       = "NodesSelected"
	ReasonWaitingForWorkload  = "WaitingForWorkload"
	ReasonEstimated           = "Estimated"
	ReasonHardwareUnknown     = "HardwareUnknown"
	ReasonInvalidHardware     = "InvalidHardware"
	ReasonProvisioning        = "Provisioning"
	ReasonProvisioned         = "Provisioned"
	ReasonNotImplemented      = "NotImplemented"
	ReasonProbing             = "Probing"
	ReasonMeasured            = "Measured"
	ReasonReused              = "Reused"
	ReasonProbeFailed         = "ProbeFailed"
	ReasonSweeping            = "Sweeping"
	ReasonValidated           = "Validated"
	ReasonCutShort            = "CutShort"
	ReasonSkipped             = "Skipped"
	ReasonClientModuleMissing = "ClientModuleMissing"
	// ReasonMachineUUIDMissing: a node has no machine UUID (DMI product_uuid), without which
	// BeeGFS 8 metadata and storage servers refuse to register.
	ReasonMachineUUIDMissing = "MachineUUIDMissing"
	// ReasonLicenseRequired: the management service refused clients for want of a licence.
	ReasonLicenseRequired    = "LicenseRequired"
	ReasonMounted            = "Mounted"
	ReasonStaging            = "Staging"
	ReasonStaged             = "Staged"
	ReasonStageFailed        = "StageFailed"
	ReasonNothingToStage     = "NothingToStage"
	ReasonReady              = "Ready"
	ReasonNotReady           = "NotReady"
	ReasonDeleting           = "Deleting"
	ReasonWaitingForStageOut = "WaitingForStageOut"
	// ReasonInvalidSpec: a value the operator cannot use reached it - a label selector the
	// CRD schema cannot check, a value stored through an older CRD before a rule refused it,
	// or an object the manager cannot decode at all; the message names the field. Nothing is
	// created until it is fixed.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonStoragePathNotAllowed: spec.storage.path is not below a root the operator's
	// administrator allows (--allowed-storage-roots); nothing is created on any node.
	ReasonStoragePathNotAllowed = "StoragePathNotAllowed"
	// ReasonInsufficientCapacity: a node has less free space at spec.storage.path than
	// spec.storage.capacityPerNode, as the stage-2 device probe saw it.
	ReasonInsufficientCapacity = "InsufficientCapacity"
)

// Conditions that generic tools read (kstatus: kubectl wait, Argo CD, Flux, cli-utils). They
// summarise the others for tools that know nothing of burst buffers; their reasons are those
// of the condition they summarise. Both are "abnormal-true": False when all is well.
const (
	// ConditionReconciling is True while the operator is still working towards Ready on its
	// own (choosing nodes, provisioning, measuring, staging in) or tearing down; its reason
	// and message are those of the stage it waits for.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the burst buffer cannot progress without a person: phase
	// Failed (a refused spec, a missing kernel module, a failed copy), Degraded (a measurement
	// failed, so it never becomes Ready) or StageOutFailed; its reason and message are those
	// of the condition that failed.
	ConditionStalled = "Stalled"
)
