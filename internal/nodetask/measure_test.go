package nodetask

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/golden"
)

const testImage = "ghcr.io/beeburst/agent:test"

func testBB(engine v1alpha1.EngineType, profile v1alpha1.ValidationProfile) *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: "hpc", UID: types.UID("0b6e2f4a-uid")},
	}
	bb.Spec.Engine = engine
	bb.Spec.Storage.Path = "/mnt/nvme"
	bb.Spec.Validation.Profile = profile
	bb.Status.Mount = &v1alpha1.MountStatus{HostPath: "/mnt/nvme/beeburst/hpc.scratch"}
	bb.Status.TaskNamespace = "beeburst-system"
	return bb
}

// TestMeasuringPodsGolden: the pods of stages 2-4 and of the workload benchmarks, for both
// profiles and engines where they differ (probe runtimes; host network for BeeGFS's links
// and for a device probe that discovers a link).
func TestMeasuringPodsGolden(t *testing.T) {
	quick := testBB(v1alpha1.EngineLocal, v1alpha1.ProfileQuick)
	std := testBB(v1alpha1.EngineBeeGFS, v1alpha1.ProfileStandard)
	golden.Assert(t, "probe-device.yaml", golden.YAML(t,
		DeviceProbePod(quick, testImage, 0, "node-a", "", 1),
		DeviceProbePod(std, testImage, 1, "node-b", "10.0.0.2", 1)))
	// A second round's pod sits beside the first's: the first round's result stays readable.
	if first, second := DeviceProbePod(quick, testImage, 1, "node-b", "", 1).Name, DeviceProbePod(quick, testImage, 1, "node-b", "", 2).Name; first == second || second != first+"-r2" {
		t.Errorf("device probe names: round 1 %q, round 2 %q; want round 2 = round 1 + \"-r2\"", first, second)
	}
	golden.Assert(t, "probe-network.yaml", golden.YAML(t,
		NetServerPod(quick, testImage, 0, "node-a"),
		NetClientPod(quick, testImage, 0, "node-b", "10.244.0.10"),
		NetServerPod(std, testImage, 1, "node-b"),
		NetClientPod(std, testImage, 1, "node-a", "10.0.0.2")))
	golden.Assert(t, "sweep.yaml", golden.YAML(t, SweepPod(std, testImage, 3, 1, "node-b", 8, 5)))
	golden.Assert(t, "workload.yaml", golden.YAML(t, WorkloadPod(std, testImage, 2, 1, "node-b", "metadata", 4)))
	claim := &corev1.Volume{Name: "compare", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}}
	golden.Assert(t, "chunk.yaml", golden.YAML(t,
		ChunkPod(std, testImage, 2, 1, "node-b", FileSystemMount+"/.beeburst-chunks/1Mi", "", 4, 3),
		ChunkPod(std, testImage, 0, 0, "node-a", FileSystemMount+"/.beeburst-chunks/64Ki", "random4k", 4, 3)))
	golden.Assert(t, "compare.yaml", golden.YAML(t,
		ComparePod(std, testImage, 0, 1, "node-b", 4, 3, claim, true),
		ComparePod(std, testImage, 1, 0, "node-a", 4, 3, nil, false)))
}

// TestRunNamesDoNotCollide: a series' (run, node) pairs have names of their own, past 1000
// nodes too.
func TestRunNamesDoNotCollide(t *testing.T) {
	bb := testBB(v1alpha1.EngineLocal, v1alpha1.ProfileStandard)
	seen := map[string][2]int{}
	for k := range 3 {
		for _, i := range []int{0, 1, 999, 1000, 1001, 2000} {
			name := RunName(bb, ComponentSweep, k, i)
			if prev, ok := seen[name]; ok {
				t.Fatalf("run %d node %d and run %d node %d are both %s", k, i, prev[0], prev[1], name)
			}
			seen[name] = [2]int{k, i}
		}
	}
	if got := SweepPod(bb, testImage, 1, 1000, "n", 1, 5).Name; got != NamespaceTag("hpc")+"-scratch-sweep-1-1000" {
		t.Errorf("sweep pod name %s", got)
	}
}

// TestSweepBlockSize: validation.sweep.blockSize reaches every run of the sweep's workload
// (the sweep, the chunk-size runs, the comparison); without it the agent's 1 MiB applies.
func TestSweepBlockSize(t *testing.T) {
	bb := testBB(v1alpha1.EngineBeeGFS, v1alpha1.ProfileStandard)
	pods := func() []*corev1.Pod {
		return []*corev1.Pod{SweepPod(bb, testImage, 0, 0, "node-a", 4, 5),
			ChunkPod(bb, testImage, 0, 0, "node-a", FileSystemMount+"/.beeburst-chunks/1Mi", "", 4, 3),
			ComparePod(bb, testImage, 1, 0, "node-a", 4, 3, nil, false)}
	}
	for _, p := range pods() {
		if slices.Contains(p.Spec.Containers[0].Args, "--bs") {
			t.Errorf("%s: --bs without validation.sweep.blockSize", p.Name)
		}
	}
	q := resource.MustParse("4Mi")
	bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{BlockSize: &q}
	for _, p := range pods() {
		args := p.Spec.Containers[0].Args
		if i := slices.Index(args, "--bs"); i < 0 || i+1 >= len(args) || args[i+1] != "4194304" {
			t.Errorf("%s: args %q, want --bs 4194304", p.Name, args)
		}
	}
}
