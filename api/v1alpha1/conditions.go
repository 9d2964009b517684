package v1alpha1

import "sort"

// Finalizer guards teardown: it is added before the operator creates anything on a node and
// removed only after stage-out finished and the node-local directories are gone.
const Finalizer = "beeburst.io/teardown"

// SchedulingGate is the gate the operator lifts from workload pods once the burst buffer is
// Ready.
const SchedulingGate = "beeburst.io/ready"

// AnnotationGateHeld marks a workload pod whose burst buffer (the UID it holds) is being
// deleted while the pod still carried SchedulingGate: that burst buffer never lifts its gate.
// Deletion sets it before it judges which pods still use the burst buffer, so that no pod
// leaves the gate after that judgement. A burst buffer created again under the name releases
// the pod.
const AnnotationGateHeld = "beeburst.io/gate-held"

// AnnotationReleasedBy marks a workload pod whose SchedulingGate the burst buffer with the UID
// it holds lifted. Deletion waits for such a pod whatever spec.workload.selector says by then:
// a selector narrowed after the release does not make a pod that may write to the burst
// buffer's directory stop using it.
const AnnotationReleasedBy = "beeburst.io/released-by"

// Labels.
const (
	// LabelBurstBuffer names the burst buffer a workload pod uses (the default workload
	// selector) and marks the operator's own children.
	LabelBurstBuffer = "beeburst.io/burst-buffer"

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

	// ConditionChunkSizeChosen is set only with layout.chunkSizePolicy Auto: Unknown while
	// the chunk sizes are measured (after stage 2, before stage 3), True once one was chosen
	// from their figures and set on the file system's root, False when none could be (a
	// budget too small to compare two sizes, runs that gave nothing to compare, the local
	// engine); status.chunkSize has the figures. It does not hold up Ready.
	ConditionChunkSizeChosen = "ChunkSizeChosen"
	// ConditionCompared is set only with validation.compareWith: Unknown while the ideal
	// workload runs on the other storage, True once status.comparison has both figures, False
	// when the other storage could not be measured (the message says what to fix). It does
	// not hold up Ready.
	ConditionCompared = "Compared"
	// ConditionClaimBound is the workload's PersistentVolumeClaim (spec.workload.claimName):
	// False while the burst buffer is not Ready (pods that mount the claim wait), True once
	// its volume is bound, False during deletion while pods still use it. It does not hold up
	// Ready.
	ConditionClaimBound = "ClaimBound"
)

// Condition reasons. Every reason any part of the operator sets is declared here, once, and
// given its kind in reasonKinds below: the kind decides the phase (a Terminal reason makes
// the burst buffer Failed, a Degraded one Degraded) and the event type. A Reason constant
// without a kind fails `go test ./api/...`, so a new reason cannot be forgotten.
const (
	ReasonPending            = "Pending"
	ReasonReconciling        = "Reconciling"
	ReasonNodesNotFound      = "NodesNotFound"
	ReasonNodesSelected      = "NodesSelected"
	ReasonWaitingForWorkload = "WaitingForWorkload"
	ReasonEstimated          = "Estimated"
	ReasonHardwareUnknown    = "HardwareUnknown"
	ReasonInvalidHardware    = "InvalidHardware"
	ReasonProvisioning       = "Provisioning"
	ReasonProvisioned        = "Provisioned"
	// ReasonPrepareFailed: the local engine could not create the burst buffer's directory
	// on a node (spec.storage.path missing, no permission).
	ReasonPrepareFailed = "PrepareFailed"
	ReasonProbing       = "Probing"
	// ReasonRemeasuring: a figure is measured a second time before it is published: the
	// devices or links after a sweep figure was above their limit
	// (status.limits.components.deviceProbeRound, networkProbeRound), or a sweep point far
	// below the limit or disturbed by other work (status.limits.sweep.remeasured).
	ReasonRemeasuring         = "Remeasuring"
	ReasonMeasured            = "Measured"
	ReasonReused              = "Reused"
	ReasonProbeFailed         = "ProbeFailed"
	ReasonSweeping            = "Sweeping"
	ReasonValidated           = "Validated"
	ReasonCutShort            = "CutShort"
	ReasonSkipped             = "Skipped"
	ReasonClientModuleMissing = "ClientModuleMissing"
	ReasonMounted             = "Mounted"
	ReasonStaging             = "Staging"
	ReasonStaged              = "Staged"
	ReasonStageFailed         = "StageFailed"
	ReasonNothingToStage      = "NothingToStage"
	ReasonReady               = "Ready"
	ReasonNotReady            = "NotReady"
	ReasonDeleting            = "Deleting"

	// ReasonQueuedForNode: a node of the burst buffer is being measured by another burst
	// buffer; at most one measures a node at a time, and this one waits its turn (the message
	// names the node and the holder). The time budget starts when the turn comes.
	ReasonQueuedForNode = "QueuedForNode"

	// Stage-in and stage-out, besides Staging, Staged, StageFailed, WaitingForWorkload.
	// ReasonClaimNotFound: a claim named in the spec does not exist (yet).
	ReasonClaimNotFound = "ClaimNotFound"
	// ReasonSecretNotFound: an object store's credentialsSecret does not exist (yet).
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonNodeGone: a node holding data is gone; its data cannot be staged out. The other
	// nodes are staged out; the gone node alone holds the teardown.
	ReasonNodeGone = "NodeGone"
	// ReasonNamespaceDeleting: the burst buffer's namespace is being deleted, and Kubernetes
	// creates no pods in it: the copies cannot run. The data stays on the nodes.
	ReasonNamespaceDeleting = "NamespaceDeleting"
	// ReasonSkippedByHurry: spec.teardown.hurry skipped the stage-out.
	ReasonSkippedByHurry = "SkippedByHurry"
	// ReasonCopyUnschedulable: a copy pod could not be scheduled on its node for longer than
	// the operator waits (the message names the node and the scheduler's reason). The data
	// stays where it is.
	ReasonCopyUnschedulable = "CopyUnschedulable"

	// ReasonTeardownStuck: deletion waits for something on a node that does not happen (a
	// pod that does not start or does not end); the message names the node and what to do.
	ReasonTeardownStuck = "TeardownStuck"

	// The beegfs engine's reasons (Provisioned and ClientsMounted conditions).
	ReasonModuleCheckFailed  = "ModuleCheckFailed"
	ReasonPortShiftExhausted = "PortShiftExhausted"
	ReasonSecretConflict     = "SecretConflict"
	ReasonServicesNotReady   = "ServicesNotReady"
	ReasonStripingFailed     = "StripingFailed"
	ReasonMounting           = "Mounting"

	// ReasonMachineUUIDMissing: a node has no machine UUID (DMI product_uuid), without which
	// BeeGFS 8 metadata and storage servers refuse to register.
	ReasonMachineUUIDMissing = "MachineUUIDMissing"
	// ReasonLicenseRequired: the management service refused clients, or servers on more
	// machines than its licence allows, for want of a licence.
	ReasonLicenseRequired = "LicenseRequired"
	// ReasonLicenseSecretMissing: spec.beegfs.licenseSecret names a Secret that does not
	// exist (yet); the services wait for it.
	ReasonLicenseSecretMissing = "LicenseSecretMissing"
	// ReasonConfigConflict: the burst buffer's BeeGFS ConfigMap exists but belongs to
	// something else.
	ReasonConfigConflict = "ConfigConflict"
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
	// ReasonPodSecurityRefused: the API server refused one of the operator's pods for the
	// Pod Security level of its namespace (the operator's own: its host-level pods need
	// privileged); the operator retries until the namespace allows them.
	ReasonPodSecurityRefused = "PodSecurityRefused"

	// Pods that cannot start, as the kubelet or the scheduler reported it (read from the
	// pods' conditions, container states and events within seconds, not at a deadline).
	// ReasonStoragePathMissing: spec.storage.path does not exist on a node (the kubelet's
	// hostPath check failed); the message names the nodes. Nothing was written there.
	ReasonStoragePathMissing = "StoragePathMissing"
	// ReasonImagePullFailed: a node cannot pull an image the operator's pods need (not found,
	// access denied, an unknown registry, an invalid name); the message names the node, the
	// image and the kubelet's words. The kubelet keeps trying: the burst buffer goes on by
	// itself if the pull succeeds.
	ReasonImagePullFailed = "ImagePullFailed"
	// ReasonPodCannotStart: a pod the file system needs cannot start on its node as it is -
	// the kubelet refused it (a host port in use, too little memory) or a host path it needs
	// is missing; the message names the node, the pod and the kubelet's reason.
	ReasonPodCannotStart = "PodCannotStart"

	// The file system went away after it was up (the Provisioned condition goes False again,
	// and the phase back to Provisioning, until it is back). A readiness probe that fails on
	// a busy node is neither: only a component that is really gone is.
	// ReasonMountLost: a node's BeeGFS client exited or its pod is gone - the mount is missing
	// there; the client mounts again when the kubelet restarts it.
	ReasonMountLost = "MountLost"
	// ReasonServiceExited: a BeeGFS service (management, metadata, storage) exited or its pod
	// is gone; the message names the service, the node and its last words.
	ReasonServiceExited = "ServiceExited"

	// The ChunkSizeChosen condition (layout.chunkSizePolicy Auto).
	// ReasonChunkSizeTuning: the chunk sizes are being measured, one after another.
	ReasonChunkSizeTuning = "ChunkSizeTuning"
	// ReasonChunkSizeChosen: a size was chosen from the measured figures (layout.chunkSize
	// itself when no other beat it) and is the root directory's stripe pattern.
	ReasonChunkSizeChosen = "ChunkSizeChosen"
	// ReasonChunkSizeNotTuned: nothing could be compared - the time budget allows fewer than
	// two runs, the runs failed, the budget ran out, or the engine has no chunks (local);
	// layout.chunkSize stays and the message says why.
	ReasonChunkSizeNotTuned = "ChunkSizeNotTuned"

	// The Compared condition (validation.compareWith), besides ClaimNotFound.
	// ReasonComparing: the ideal workload runs on the other storage.
	ReasonComparing = "Comparing"
	// ReasonCompared: status.comparison has the burst buffer beside the other storage.
	ReasonCompared = "Compared"
	// ReasonComparisonFailed: the ideal workload failed on the other storage (or the time
	// budget ran out first); the message names the node and the cause.
	ReasonComparisonFailed = "ComparisonFailed"
	// ReasonClaimNotMountable: the claim to compare with cannot be used for the workload -
	// read-only, or its pod could not be scheduled on the burst buffer's node in time.
	ReasonClaimNotMountable = "ClaimNotMountable"
	// ReasonComparePathNotAllowed: compareWith.nodeLocal.path is not below a root the
	// operator allows (--allowed-storage-roots); nothing ran there.
	ReasonComparePathNotAllowed = "ComparePathNotAllowed"
	// ReasonComparePathMissing: compareWith.nodeLocal.path does not exist on a node (the
	// kubelet's hostPath check failed); nothing was compared, the message names the nodes.
	ReasonComparePathMissing = "ComparePathMissing"

	// The ClaimBound condition (the workload's PersistentVolumeClaim).
	// ReasonClaimWaiting: the claim exists and is bound once the burst buffer is Ready; pods
	// that mount it wait until then.
	ReasonClaimWaiting = "ClaimWaiting"
	// ReasonClaimBound: the claim is bound to the burst buffer's volume.
	ReasonClaimBound = "ClaimBound"
	// ReasonClaimConflict: a PersistentVolumeClaim of that name exists in the namespace and is
	// not this burst buffer's; name another in spec.workload.claimName.
	ReasonClaimConflict = "ClaimConflict"
	// ReasonClaimInUse: deletion waits for the pods that still mount the claim (the message
	// names them) before anything is removed.
	ReasonClaimInUse = "ClaimInUse"
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

// ReasonKind is what a condition reason means for the burst buffer as a whole.
type ReasonKind int

const (
	// ReasonKindProgress: in progress, done, or waiting for something that comes by itself.
	ReasonKindProgress ReasonKind = iota
	// ReasonKindAttention: waiting for something a person may have to provide or fix (a
	// node, a claim, a Secret, a stuck pod); the operator goes on by itself once it is
	// there. A Warning event; the phase does not change.
	ReasonKindAttention
	// ReasonKindDegraded: the file system works, a measurement failed. Phase Degraded.
	ReasonKindDegraded
	// ReasonKindTerminal: the burst buffer cannot go on until a person changes the spec or
	// the nodes. Phase Failed.
	ReasonKindTerminal
)

// reasonKinds gives every reason above its kind.
var reasonKinds = map[string]ReasonKind{
	ReasonPending:               ReasonKindProgress,
	ReasonReconciling:           ReasonKindProgress,
	ReasonNodesNotFound:         ReasonKindAttention,
	ReasonNodesSelected:         ReasonKindProgress,
	ReasonWaitingForWorkload:    ReasonKindProgress,
	ReasonEstimated:             ReasonKindProgress,
	ReasonHardwareUnknown:       ReasonKindProgress,
	ReasonInvalidHardware:       ReasonKindDegraded,
	ReasonProvisioning:          ReasonKindProgress,
	ReasonProvisioned:           ReasonKindProgress,
	ReasonPrepareFailed:         ReasonKindTerminal,
	ReasonProbing:               ReasonKindProgress,
	ReasonRemeasuring:           ReasonKindProgress,
	ReasonMeasured:              ReasonKindProgress,
	ReasonReused:                ReasonKindProgress,
	ReasonProbeFailed:           ReasonKindDegraded,
	ReasonSweeping:              ReasonKindProgress,
	ReasonValidated:             ReasonKindProgress,
	ReasonCutShort:              ReasonKindProgress,
	ReasonSkipped:               ReasonKindProgress,
	ReasonClientModuleMissing:   ReasonKindTerminal,
	ReasonMounted:               ReasonKindProgress,
	ReasonStaging:               ReasonKindProgress,
	ReasonStaged:                ReasonKindProgress,
	ReasonStageFailed:           ReasonKindTerminal,
	ReasonNothingToStage:        ReasonKindProgress,
	ReasonReady:                 ReasonKindProgress,
	ReasonNotReady:              ReasonKindProgress,
	ReasonDeleting:              ReasonKindProgress,
	ReasonQueuedForNode:         ReasonKindProgress,
	ReasonClaimNotFound:         ReasonKindAttention,
	ReasonSecretNotFound:        ReasonKindAttention,
	ReasonNodeGone:              ReasonKindTerminal,
	ReasonNamespaceDeleting:     ReasonKindTerminal,
	ReasonSkippedByHurry:        ReasonKindProgress,
	ReasonCopyUnschedulable:     ReasonKindTerminal,
	ReasonTeardownStuck:         ReasonKindAttention,
	ReasonModuleCheckFailed:     ReasonKindAttention,
	ReasonPortShiftExhausted:    ReasonKindTerminal,
	ReasonSecretConflict:        ReasonKindTerminal,
	ReasonServicesNotReady:      ReasonKindAttention,
	ReasonStripingFailed:        ReasonKindAttention,
	ReasonMounting:              ReasonKindProgress,
	ReasonMachineUUIDMissing:    ReasonKindTerminal,
	ReasonLicenseRequired:       ReasonKindTerminal,
	ReasonLicenseSecretMissing:  ReasonKindAttention,
	ReasonConfigConflict:        ReasonKindTerminal,
	ReasonInvalidSpec:           ReasonKindTerminal,
	ReasonStoragePathNotAllowed: ReasonKindTerminal,
	ReasonInsufficientCapacity:  ReasonKindTerminal,
	ReasonPodSecurityRefused:    ReasonKindAttention,
	ReasonStoragePathMissing:    ReasonKindTerminal,
	ReasonImagePullFailed:       ReasonKindTerminal,
	ReasonPodCannotStart:        ReasonKindTerminal,
	ReasonMountLost:             ReasonKindAttention,
	ReasonServiceExited:         ReasonKindAttention,
	ReasonTargetPredicted:       ReasonKindProgress,
	ReasonTargetUnreachable:     ReasonKindAttention,
	ReasonTargetMet:             ReasonKindProgress,
	ReasonTargetNotMet:          ReasonKindAttention,
	ReasonTargetUnknown:         ReasonKindProgress,
	ReasonChunkSizeTuning:       ReasonKindProgress,
	ReasonChunkSizeChosen:       ReasonKindProgress,
	ReasonChunkSizeNotTuned:     ReasonKindAttention,
	ReasonComparing:             ReasonKindProgress,
	ReasonCompared:              ReasonKindProgress,
	ReasonComparisonFailed:      ReasonKindAttention,
	ReasonClaimNotMountable:     ReasonKindAttention,
	ReasonComparePathNotAllowed: ReasonKindAttention,
	ReasonComparePathMissing:    ReasonKindAttention,
	ReasonClaimWaiting:          ReasonKindProgress,
	ReasonClaimBound:            ReasonKindProgress,
	ReasonClaimConflict:         ReasonKindAttention,
	ReasonClaimInUse:            ReasonKindAttention,
}

// KindOf is the kind of a reason; an undeclared reason counts as Progress (and fails the
// api tests before it can ship).
func KindOf(reason string) ReasonKind { return reasonKinds[reason] }

// ReasonsOfKind lists the declared reasons of a kind, sorted.
func ReasonsOfKind(k ReasonKind) []string {
	var out []string
	for r, kind := range reasonKinds {
		if kind == k {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}
