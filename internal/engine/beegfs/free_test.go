package beegfs

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
)

// gib is n GiB, as a report's free bytes.
func gib(n int64) *int64 { return new(n << 30) }

// checkedPod is the i-th node's module check pod, ended with a report of free bytes free (nil:
// an agent that does not report it).
func checkedPod(in Instance, i int, node string, free *int64) *corev1.Pod {
	pod := in.ModuleCheckPod(i, node)
	b, _ := json.Marshal(bench.Report{Command: "check-module", Phase: bench.PhaseSucceeded, Node: node, FreeBytes: free})
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: string(b)}}}}}
	return pod
}

// Once the file system is up, Provision still gives the space each node's module check found
// free before the services wrote there: what a burst buffer that reuses other burst buffers'
// figures shows as its own. A report without it (an older agent) leaves the node unknown, and
// a module check pod that is gone is not made again.
func TestProvisionOnceUpGivesTheCheckedFreeSpace(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	in := testInstance(2)
	bb := in.BB
	bb.Status.Mount = &v1alpha1.MountStatus{Path: bb.Spec.Workload.MountPath, HostPath: MountPoint(bb)}
	bb.Status.BeeGFS = &v1alpha1.BeeGFSStatus{ConnPortShift: in.Shift, ManagementAddress: "10.0.0.1:8008"}
	checked := func(i int, node string, free *int64) *corev1.Pod { return checkedPod(in, i, node, free) }
	node := func(name, ip string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	}
	nodes := in.Nodes
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want map[string]int64
	}{
		{"both reported", []*corev1.Pod{checked(0, nodes[0], gib(5)), checked(1, nodes[1], gib(7))}, map[string]int64{nodes[0]: 5 << 30, nodes[1]: 7 << 30}},
		{"an older agent's report", []*corev1.Pod{checked(0, nodes[0], gib(5)), checked(1, nodes[1], nil)}, map[string]int64{nodes[0]: 5 << 30}},
		{"a full node", []*corev1.Pod{checked(0, nodes[0], gib(5)), checked(1, nodes[1], gib(0))}, map[string]int64{nodes[0]: 5 << 30, nodes[1]: 0}},
		{"a check pod gone", []*corev1.Pod{checked(1, nodes[1], gib(7))}, map[string]int64{nodes[1]: 7 << 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&corev1.Pod{}).
				WithObjects(node(nodes[0], "10.0.0.1"), node(nodes[1], "10.0.0.2"))
			for _, p := range tc.pods {
				b = b.WithObjects(p)
			}
			c := b.Build()
			e := Engine{Client: c, AgentImage: in.AgentImage}
			res, err := e.Provision(context.Background(), bb, nodes)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(res.FreeBytes, tc.want) {
				t.Errorf("free bytes %v, want %v", res.FreeBytes, tc.want)
			}
			var pods corev1.PodList
			if err := c.List(context.Background(), &pods); err != nil {
				t.Fatal(err)
			}
			for _, p := range pods.Items {
				if p.Name == in.ModuleCheckPod(0, nodes[0]).Name && len(tc.pods) == 1 {
					t.Errorf("the module check pod %s was made again once the file system was up", p.Name)
				}
			}
		})
	}
}

// A spec.storage.capacityPerNode larger than what a node's module check found free stops
// provisioning before anything is allocated or started; nodes whose free space is unknown
// do not stop it.
func TestProvisionStopsWhereTheCapacityDoesNotFit(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	in := testInstance(2)
	want := resource.MustParse("4Gi")
	nodes := in.Nodes
	checked := func(i int, node string, free *int64) *corev1.Pod { return checkedPod(in, i, node, free) }
	for _, tc := range []struct {
		name     string
		capacity *resource.Quantity
		free     [2]*int64
		stopped  string // the engine's message when it stops
	}{
		{"one node short", &want, [2]*int64{gib(5), gib(3)}, nodes[1] + " has less space free than spec.storage.capacityPerNode 4Gi"},
		{"both fit", &want, [2]*int64{gib(5), gib(4)}, ""},
		{"one unknown, the other fits", &want, [2]*int64{nil, gib(5)}, ""},
		{"one full, no capacity asked for", nil, [2]*int64{gib(5), gib(0)}, nodes[1] + " has no space free at spec.storage.path"},
		{"no capacity asked for", nil, [2]*int64{gib(5), gib(1)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := in.BB.DeepCopy()
			bb.Spec.Storage.CapacityPerNode = tc.capacity
			c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&corev1.Pod{}).
				WithObjects(checked(0, nodes[0], tc.free[0]), checked(1, nodes[1], tc.free[1])).Build()
			res, err := Engine{Client: c, AgentImage: in.AgentImage}.Provision(context.Background(), bb, nodes)
			stopped := res.Reason == v1alpha1.ReasonInsufficientCapacity
			if stopped != (tc.stopped != "") {
				t.Fatalf("stopped %v (%s: %s, err %v), want %q", stopped, res.Reason, res.Message, err, tc.stopped)
			}
			if stopped && (err != nil || res.Ready || !strings.Contains(res.Message, tc.stopped)) {
				t.Errorf("ready %v, err %v, message %q", res.Ready, err, res.Message)
			}
		})
	}
}
