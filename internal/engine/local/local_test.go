package local

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/golden"
)

// goldenYAML compares an object, as YAML, with testdata/NAME.yaml.
func goldenYAML(t *testing.T, name string, obj any) {
	t.Helper()
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, name+".yaml", got)
}

func testBB() *v1alpha1.BurstBuffer {
	return &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: "hpc", UID: types.UID("1234")},
		Spec: v1alpha1.BurstBufferSpec{
			Engine:   v1alpha1.EngineLocal,
			Storage:  v1alpha1.StorageSpec{Path: "/mnt/nvme"},
			Workload: v1alpha1.WorkloadSpec{MountPath: "/mnt/beeburst"},
		},
		Status: v1alpha1.BurstBufferStatus{TaskNamespace: "beeburst-system"},
	}
}

func TestPodsGolden(t *testing.T) {
	bb := testBB()
	goldenYAML(t, "prepare-pod", PreparePod(bb, "beeburst/agent:dev", 1, "worker-2"))
	goldenYAML(t, "clean-pod", CleanPod(bb, "beeburst/agent:dev", 0, "worker-1"))
}

func TestPodsRunWithoutPrivilege(t *testing.T) {
	for _, pod := range []*corev1.Pod{PreparePod(testBB(), "img", 0, "n"), CleanPod(testBB(), "img", 0, "n")} {
		sc := pod.Spec.Containers[0].SecurityContext
		if sc.Privileged != nil && *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: must not be privileged", pod.Name)
		}
		if pod.Spec.HostNetwork || pod.Spec.HostPID {
			t.Errorf("%s: needs no host namespaces", pod.Name)
		}
		if *pod.Spec.Volumes[0].HostPath.Type != corev1.HostPathDirectory {
			t.Errorf("%s: a missing storage path must fail, not be created", pod.Name)
		}
	}
}

// Provision reads the space each prepare pod found free after it made the directory; a
// report without it (an older agent) leaves the node unknown, and 0 is a full file system.
func TestProvisionReadsFreeSpace(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	bb := testBB()
	done := func(i int, node, msg string) *corev1.Pod {
		pod := PreparePod(bb, "img", i, node)
		pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: msg}}}}}
		return pod
	}
	report := func(node string, free *int64) string {
		b, _ := json.Marshal(bench.Report{Command: "dir-create", Phase: bench.PhaseSucceeded, Node: node, FreeBytes: free})
		return string(b)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&corev1.Pod{}).
		WithObjects(done(0, "n1", report("n1", new(int64(5<<30)))), done(1, "n2", report("n2", nil)), done(2, "n3", report("n3", new(int64(0))))).Build()
	e := &Engine{Client: c, AgentImage: "img"}
	res, err := e.Provision(context.Background(), bb, []string{"n1", "n2", "n3"})
	if err != nil || !res.Ready {
		t.Fatalf("ready %v, err %v: every prepare pod succeeded", res.Ready, err)
	}
	// n2's agent did not say (unknown); n3's file system is full.
	if want := map[string]int64{"n1": 5 << 30, "n3": 0}; !maps.Equal(res.FreeBytes, want) {
		t.Errorf("free bytes %v, want %v", res.FreeBytes, want)
	}
}
