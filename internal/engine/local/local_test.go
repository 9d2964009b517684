package local

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
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
