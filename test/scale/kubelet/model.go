// Package kubelet is a simulated kubelet for the control-plane benchmark (make bench-scale)
// and the envtest suite: it runs the operator's one-shot task pods to completion without
// containers. It reports what a kubelet reports (the pod pending, its container running, the
// container's exit with the termination message, then the pod's phase) and answers each task
// with the agent's report (bench.Report) computed from a per-node model of the hardware,
// honouring the quick profile's chain of runs on each node (agentapi.Chain).
//
// It exercises the operator's control plane - watches, reconciles, API requests, locks - at a
// scale no testbed reaches. Its figures are the model's, not a measurement of anything.
package kubelet

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

// Node is one simulated node and its hardware.
type Node struct {
	Name string
	// IP is the node's InternalIP.
	IP string
	// WriteBytesPerSecond and ReadBytesPerSecond are its device's sequential rates with
	// enough processes; LinkBytesPerSecond its link's data rate.
	WriteBytesPerSecond, ReadBytesPerSecond, LinkBytesPerSecond float64
	// FreeBytes is the free space of its storage path; FileSystemBytes its size.
	FreeBytes, FileSystemBytes int64
}

// Documented figures of the model's nodes, as their hardware.beeburst.io/* labels say: a
// 100 Gb/s link, a drive of 2 GB/s write and 3.5 GB/s read.
const (
	DocumentedLinkBitsPerSecond   = 100_000_000_000
	DocumentedWriteBytesPerSecond = 2_000_000_000
	DocumentedReadBytesPerSecond  = 3_500_000_000
	fileSystemBytes               = 3_840_000_000_000
)

// NewNode is node i of the model: a name, an address and hardware close to the documented
// figures (93-99% of them), with one node in fifty a straggler whose drive writes at 60%.
// The same i always gives the same node.
func NewNode(i int) Node {
	u := unit(fmt.Sprintf("node-%d", i))
	write := DocumentedWriteBytesPerSecond * (0.93 + 0.06*u)
	if i%50 == 49 {
		write *= 0.6
	}
	return Node{
		Name:                NodeName(i),
		IP:                  fmt.Sprintf("10.%d.%d.%d", 64+i/65536, (i/256)%256, i%256),
		WriteBytesPerSecond: write,
		ReadBytesPerSecond:  DocumentedReadBytesPerSecond * (0.93 + 0.06*unit(fmt.Sprintf("read-%d", i))),
		LinkBytesPerSecond:  DocumentedLinkBitsPerSecond / 8 * (0.95 + 0.03*unit(fmt.Sprintf("link-%d", i))),
		FreeBytes:           fileSystemBytes * 9 / 10,
		FileSystemBytes:     fileSystemBytes,
	}
}

// NodeName is the name of node i.
func NodeName(i int) string { return fmt.Sprintf("sim-%04d", i) }

// processEfficiency is the share of a device's rate that procs processes reach: one process
// cannot keep an NVMe drive busy, four nearly can.
func processEfficiency(procs int) float64 {
	if procs < 1 {
		procs = 1
	}
	return 1 - 0.45*math.Pow(0.35, float64(procs-1))
}

// tcpEfficiency is the share of a link's data rate iperf3 reads over TCP: the share the
// operator expects of a link at its documented rate.
const tcpEfficiency = limits.TCPGoodputShare

// jitter is a deterministic factor in [1-spread, 1] for key: runs of the same task on the
// same node read slightly differently, as real ones do, but every run of the benchmark reads
// the same.
func jitter(key string, spread float64) float64 { return 1 - spread*unit(key) }

// unit maps key to [0, 1).
func unit(key string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return float64(h.Sum64()%1_000_000) / 1_000_000
}

// Object is the Node object a kubelet registers for n, Ready, with the labels and the
// address the operator reads: hostname, the documented hardware (hardware.beeburst.io/*)
// and an InternalIP.
func (n Node) Object() *corev1.Node {
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{
			corev1.LabelHostname: n.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			v1alpha1.LabelLinkRateBitsPerSecond:   "100G",
			v1alpha1.LabelDiskWriteBytesPerSecond: fmt.Sprint(DocumentedWriteBytesPerSecond),
			v1alpha1.LabelDiskReadBytesPerSecond:  fmt.Sprint(DocumentedReadBytesPerSecond),
		}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: n.IP}, {Type: corev1.NodeHostName, Address: n.Name}},
			Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
				corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("63"), corev1.ResourceMemory: resource.MustParse("250Gi"),
				corev1.ResourcePods: resource.MustParse("110")},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", OperatingSystem: "linux", Architecture: "amd64",
				ContainerRuntimeVersion: "sim://1", KernelVersion: "6.1.0"},
		},
	}
}

// Register creates n's Node object with its status, as its kubelet would.
func Register(ctx context.Context, c kubernetes.Interface, n Node) error {
	obj := n.Object()
	created, err := c.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Status = obj.Status
	_, err = c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}
