package nodetask

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
)

// The measuring pods of stages 2-4 and of the workload benchmarks: what each runs (an
// agentapi request) and how it sits on its node. Pure functions of the burst buffer, golden-
// tested in measure_test.go; the controller decides when to run them.

// NetProbePort is the iperf3 server's port of the network probe.
const NetProbePort = 5201

// RunName names a pod of a series that runs on several nodes several times: the sweep's
// points, the workload benchmarks' kinds. <bb>-<component>-<run>-<index>: the run (the k-th
// point or kind) and the node's index are separate parts, so no two (run, node) pairs share a
// name however many nodes there are - an index folded into one number (run*1000 + node) would
// give run 1, node 0 the name of run 0, node 1000.
func RunName(bb *v1alpha1.BurstBuffer, component string, run, index int) string {
	return TaskName(bb, fmt.Sprintf("%s-%s-%d-%d", bb.Name, component, run, index))
}

// probeRuntime is how long a stage-2 probe measures: short for the quick profile, long
// enough for a steady figure with the standard one. quick's 2 s runs read the testbed's
// caps within 2.5% of its 3 s runs (docs/architecture.md, "How long the quick profile
// takes"); an earlier verdict against them, 11-17% low on 400 MB/s read caps, was the host
// disk under the testbed's loop devices, which 3 s runs then read as low.
func probeRuntime(bb *v1alpha1.BurstBuffer) time.Duration {
	if bb.Spec.Validation.Profile == v1alpha1.ProfileStandard {
		return 10 * time.Second
	}
	return QuickRunSeconds * time.Second
}

// QuickRunSeconds is how long each run of the quick profile measures: the device probes,
// the links and each phase of the sweep's points.
const QuickRunSeconds = 2

// The device probe's fio jobs and block size.
const (
	probeJobs      = 4
	probeBlockSize = "1M"
)

// DeviceProbeMethod is how DeviceProbePod measures bb's devices, in words: a figure cached
// from another method (the quick profile's short runs for a standard-profile burst buffer,
// which a drive's write cache can lift) does not stand for this one.
func DeviceProbeMethod(bb *v1alpha1.BurstBuffer) string {
	return fmt.Sprintf("fio, direct I/O, %s per phase, %d jobs, %s blocks", probeRuntime(bb), probeJobs, probeBlockSize)
}

// DeviceProbePod runs fio on the node's burst buffer directory: write, then read, direct
// I/O, large blocks, several jobs, sized from free space, files removed afterwards. The agent
// also reads the device's model from sysfs and, given linkAddress, the speed of the
// interface that carries it: only then does the pod run in the host network, since a pod's
// own network namespace shows its veth, not the node's interface. round is the probe's round
// (status.limits.components.deviceProbeRound): a second round's pods have their own names,
// beside the first round's, whose results stay readable.
func DeviceProbePod(bb *v1alpha1.BurstBuffer, image string, i int, node, linkAddress string, round int) *corev1.Pod {
	req := agentapi.ProbeDevice{
		Dir: InHost(bb, DataDir(bb)), Runtime: probeRuntime(bb), Jobs: probeJobs, BlockSize: probeBlockSize, LinkAddress: linkAddress,
		Globals: agentapi.Globals{Timeout: 3 * time.Minute},
	}
	pod := Pod(bb, Spec{
		Component: ComponentProbeDevice, Index: i, Node: node, Image: image,
		Args: req.Args(), DeadlineSeconds: 300, MountStorage: true, HostNetwork: linkAddress != "",
	})
	if round > 1 {
		pod.Name += fmt.Sprintf("-r%d", round)
	}
	return pod
}

// The network probes run in the host network, for both engines: the figure is the node's
// link, the one its documentation (spec.hardware, labels) describes and the one the per-node
// cache hands a later burst buffer - a beegfs one, whose services and clients use the host
// network. Between pods, the pod network (veth, bridge, iptables, an overlay) can be far
// slower than the node's link: 9 MB/s against the 37 MB/s BeeGFS moved between the testbed's
// QEMU guests, where a sweep was then refused as above its limit, and 1.3 MB/s against a
// documented 25 MB/s for the local engine. The server listens on all the node's addresses, so
// the client can be started at once, towards the node's InternalIP.

// NetServerPod is the k-th pair's iperf3 server, on node.
func NetServerPod(bb *v1alpha1.BurstBuffer, image string, k int, node string) *corev1.Pod {
	req := agentapi.NetServer{Port: NetProbePort, OneOff: true, Globals: agentapi.Globals{Timeout: 2 * time.Minute}}
	return Pod(bb, Spec{
		Component: ComponentProbeNetServer, Index: k, Node: node, Image: image,
		Args: req.Args(), DeadlineSeconds: 180, HostNetwork: true,
	})
}

// NetClientPod is the k-th pair's iperf3 client, on node, sending to the server at
// serverIP. It retries a server not yet listening for a minute.
func NetClientPod(bb *v1alpha1.BurstBuffer, image string, k int, node, serverIP string) *corev1.Pod {
	req := agentapi.NetClient{
		Host: serverIP, Port: NetProbePort, Streams: 4, Time: probeRuntime(bb), ConnectTimeout: time.Minute,
		Globals: agentapi.Globals{Timeout: 2 * time.Minute},
	}
	return Pod(bb, Spec{
		Component: ComponentProbeNetClient, Index: k, Node: node, Image: image,
		Args: req.Args(), DeadlineSeconds: 180, HostNetwork: true,
	})
}

// SweepPod is node i's part of the k-th stage-3 point: procs processes of the ideal workload
// on the file system as the workload sees it, for seconds each way, sampling the node's
// /proc every 500 ms (stage 4).
func SweepPod(bb *v1alpha1.BurstBuffer, image string, k, i int, node string, procs, seconds int) *corev1.Pod {
	req := agentapi.Ideal{
		Dir: FileSystemMount, Procs: procs, Runtime: time.Duration(seconds) * time.Second, BlockSize: sweepBlockSize(bb),
		Globals: agentapi.Globals{Timeout: 3 * time.Minute, MonitorInterval: 500 * time.Millisecond},
	}
	pod := Pod(bb, Spec{
		Component: ComponentSweep, Index: i, Node: node, Image: image,
		Args: req.Args(), DeadlineSeconds: 300, MountFileSystem: true,
	})
	pod.Name = RunName(bb, ComponentSweep, k, i)
	return pod
}

// sweepBlockSize is validation.sweep.blockSize in bytes for the agent's --bs, "" for its
// default (1 MiB, the API's default too). The chunk-size runs and the comparison run the
// sweep's workload, so they use it as well.
func sweepBlockSize(bb *v1alpha1.BurstBuffer) string {
	if sw := bb.Spec.Validation.Sweep; sw != nil && sw.BlockSize != nil {
		return strconv.FormatInt(sw.BlockSize.Value(), 10)
	}
	return ""
}

// WorkloadPod is node i's part of the k-th workload benchmark (kind: agentapi.Kind*).
func WorkloadPod(bb *v1alpha1.BurstBuffer, image string, k, i int, node, kind string, procs int) *corev1.Pod {
	req := agentapi.Workload{
		Kind: kind, Dir: FileSystemMount, Procs: procs, Runtime: 5 * time.Second,
		Globals: agentapi.Globals{Timeout: 3 * time.Minute},
	}
	pod := Pod(bb, Spec{
		Component: ComponentBench, Index: i, Node: node, Image: image,
		Args: req.Args(), DeadlineSeconds: 300, MountFileSystem: true,
	})
	pod.Name = RunName(bb, ComponentBench, k, i)
	return pod
}

// ChunkPod is node i's run of the k-th chunk size of layout.chunkSizePolicy Auto, in that
// size's directory dir of the file system: the ideal workload for large sequential I/O
// (kind ""), else the workload benchmark of that kind (sharedfile, random4k).
func ChunkPod(bb *v1alpha1.BurstBuffer, image string, k, i int, node, dir, kind string, procs, seconds int) *corev1.Pod {
	g := agentapi.Globals{Timeout: 3 * time.Minute}
	runtime := time.Duration(seconds) * time.Second
	args := agentapi.Ideal{Dir: dir, Procs: procs, Runtime: runtime, BlockSize: sweepBlockSize(bb), Globals: g}.Args()
	if kind != "" {
		args = agentapi.Workload{Kind: kind, Dir: dir, Procs: procs, Runtime: runtime, Globals: g}.Args()
	}
	pod := Pod(bb, Spec{
		Component: ComponentChunk, Index: i, Node: node, Image: image,
		Args: args, DeadlineSeconds: 300, MountFileSystem: true,
	})
	pod.Name = RunName(bb, ComponentChunk, k, i)
	return pod
}

// CompareMount is where a comparison pod of validation.compareWith sees the other storage.
const CompareMount = "/compare"

// ComparePod is node i's ideal workload for validation.compareWith on one side (side 0: the
// other storage, side 1: the burst buffer). other is the other storage's volume, mounted at
// CompareMount; nil runs on the burst buffer. scheduled: the pod goes through the scheduler
// (pinned to node by affinity), so that a claim's volume is attached where it can be.
func ComparePod(bb *v1alpha1.BurstBuffer, image string, side, i int, node string, procs, seconds int, other *corev1.Volume, scheduled bool) *corev1.Pod {
	req := agentapi.Ideal{Dir: CompareMount, Procs: procs, Runtime: time.Duration(seconds) * time.Second,
		BlockSize: sweepBlockSize(bb), Globals: agentapi.Globals{Timeout: 3 * time.Minute}}
	spec := Spec{Component: ComponentCompare, Index: i, Node: node, Image: image, DeadlineSeconds: 300}
	if other == nil {
		req.Dir, spec.MountFileSystem = FileSystemMount, true
	} else {
		spec.Volumes = []corev1.Volume{*other}
		spec.Mounts = []corev1.VolumeMount{{Name: other.Name, MountPath: CompareMount}}
		spec.Scheduled = scheduled
		// A user's claim is mounted beside it, in the burst buffer's namespace; a node-local
		// path is a host path, in the task namespace.
		spec.InBurstBufferNamespace = other.PersistentVolumeClaim != nil
	}
	spec.Args = req.Args()
	pod := Pod(bb, spec)
	pod.Name = CompareName(bb, side, i, spec.InBurstBufferNamespace)
	return pod
}

// CompareName is the name of ComparePod's pod of node i on side: a run's name in the task
// namespace, the burst buffer's own in its namespace (a user's claim beside it).
func CompareName(bb *v1alpha1.BurstBuffer, side, i int, inBurstBufferNamespace bool) string {
	if inBurstBufferNamespace {
		return fmt.Sprintf("%s-%s-%d-%d", bb.Name, ComponentCompare, side, i)
	}
	return RunName(bb, ComponentCompare, side, i)
}
