package nodetask

// Components: the app.kubernetes.io/component label of every object the operator creates,
// declared once. A pod's name is <burst buffer>-<component>-<index> (Name), so these are also
// what `kubectl get pods` shows; selectors (probes, teardown, tidying) match on them.
const (
	// The local engine.
	ComponentPrepare = "prep"
	// ComponentClean removes a burst buffer's directories on a node (both engines); the
	// controller does not wait for it before teardown (it is teardown).
	ComponentClean = "clean"

	// The beegfs engine: module check, services, readiness and striping tasks, clients, and
	// the instance's ConfigMap.
	ComponentModuleCheck = "modcheck"
	ComponentMgmtd       = "mgmtd"
	ComponentMeta        = "meta"
	ComponentStorage     = "storage"
	ComponentReady       = "ready"
	ComponentStripe      = "stripe"
	ComponentClient      = "client"
	ComponentConfig      = "config"
	// ComponentChunkSet sets the stripe chunk size of a directory (layout.chunkSizePolicy
	// Auto: each candidate's directory, then the chosen size on the root).
	ComponentChunkSet = "chunkset"

	// Stage 2: the device probe, the network probe's server and client, BeeGFS StorageBench.
	ComponentProbeDevice    = "probe-dev"
	ComponentProbeNetServer = "probe-nets"
	ComponentProbeNetClient = "probe-netc"
	ComponentStorageBench   = "storagebench"
	// Stage 3: the ideal-workload sweep (its pods and the ConfigMap holding the sweep).
	ComponentSweep = "sweep"
	// Software factors after stage 3: the workload benchmark pods.
	ComponentBench = "bench"
	// ComponentChunk: the short runs of each candidate chunk size, before stage 3.
	ComponentChunk = "chunk"
	// ComponentCompare: the ideal workload on the storage validation.compareWith names (and
	// on the burst buffer at the same point when the sweep did not measure it).
	ComponentCompare = "compare"
	// ComponentNodeLock labels the per-node measuring Leases.
	ComponentNodeLock = "node-lock"

	// ComponentWorkloadEnv labels the workload's environment ConfigMap.
	ComponentWorkloadEnv = "workload-env"
)
