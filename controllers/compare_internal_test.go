package controllers

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/sizing"
)

// Where the comparison runs: the same point on both sides, within what the other storage
// allows.
func TestComparePoint(t *testing.T) {
	points := []limits.Point{
		{Nodes: 1, ProcessesPerNode: 4, Operation: limits.Write, BytesPerSecond: 150e6},
		{Nodes: 1, ProcessesPerNode: 4, Operation: limits.Read, BytesPerSecond: 200e6},
		{Nodes: 2, ProcessesPerNode: 1, Operation: limits.Write, BytesPerSecond: 200e6},
		{Nodes: 2, ProcessesPerNode: 1, Operation: limits.Read, BytesPerSecond: 300e6},
		{Nodes: 2, ProcessesPerNode: 4, Operation: limits.Write, BytesPerSecond: 290e6},
		{Nodes: 2, ProcessesPerNode: 4, Operation: limits.Read, BytesPerSecond: 390e6},
	}
	bb := &v1alpha1.BurstBuffer{Spec: v1alpha1.BurstBufferSpec{Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick}}}
	bb.Status.Limits = &v1alpha1.LimitsStatus{Sweep: &v1alpha1.SweepLimits{Write: &v1alpha1.SweepResult{
		BestBytesPerSecond: 290e6, Best: v1alpha1.SweepPoint{Nodes: 2, ProcessesPerNode: 4}}}}
	for _, tc := range []struct {
		name      string
		points    []limits.Point
		maxNodes  int
		m, n      int
		write     float64
		noFigures bool
	}{
		{name: "the best point fits", points: points, maxNodes: 2, m: 2, n: 4, write: 290e6},
		{name: "one node: the best the sweep measured on one", points: points, maxNodes: 1, m: 1, n: 4, write: 150e6},
		{name: "one node, not in the sweep: the burst buffer runs it", points: points[2:], maxNodes: 1, m: 1, n: 4, noFigures: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, n, f := comparePoint(bb, tc.points, tc.maxNodes)
			if m != tc.m || n != tc.n || (f == nil) != tc.noFigures || (f != nil && f[limits.Write] != tc.write) {
				t.Errorf("got %d x %d %v, want %d x %d write %v (no figures %v)", m, n, f, tc.m, tc.n, tc.write, tc.noFigures)
			}
		})
	}
}

// A chunk size's figures are the nodes' sums: bandwidth as the sweep sums it, operations
// per second added; a node without the measure leaves the size without it.
func TestSumMeasure(t *testing.T) {
	reps := []bench.Report{
		{Results: []bench.Result{{Operation: bench.OpWrite, BytesPerSecond: 100e6, Bytes: 300e6, RuntimeSeconds: 3},
			{Operation: bench.OpRandWrite, OpsPerSecond: 1000}}},
		{Results: []bench.Result{{Operation: bench.OpWrite, BytesPerSecond: 50e6, Bytes: 200e6, RuntimeSeconds: 4}}},
	}
	if v, ok := sumMeasure(reps, sizing.MeasureWrite); !ok || v != 125e6 {
		t.Errorf("write %v %v, want 500 MB over the slowest 4 s", v, ok)
	}
	if _, ok := sumMeasure(reps, sizing.MeasureRandWrite); ok {
		t.Error("a node without randwrite leaves the size without it")
	}
	if v, ok := sumMeasure(reps[:1], sizing.MeasureRandWrite); !ok || v != 1000 {
		t.Errorf("randwrite %v %v", v, ok)
	}
	if _, ok := sumMeasure(nil, sizing.MeasureWrite); ok {
		t.Error("no reports, no figure")
	}
}

// The runs' shape: the grid's largest process count up to 4, the sweep's seconds.
func TestChunkShape(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{Spec: v1alpha1.BurstBufferSpec{Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileQuick}}}
	if p, s := chunkShape(bb, 2); p != 4 || s != 2 {
		t.Errorf("quick: %d processes, %d s", p, s)
	}
	bb.Spec.Validation.Profile = v1alpha1.ProfileStandard
	bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{ProcessesPerNode: []int32{8, 16}, DurationSeconds: 10}
	if p, s := chunkShape(bb, 2); p != 8 || s != 10 {
		t.Errorf("standard, 8 and 16 processes: %d processes, %d s", p, s)
	}
}

// TestComparePodOf: a comparison side's runs start together on a shared file system - the
// burst buffer's with beegfs (markers on it), a claim on the other side (markers on the
// claim) - and as their pods start on node-local storage, the local engine's and on one node.
func TestComparePodOf(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bb", UID: "uid-1"},
		Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineBeeGFS, Storage: v1alpha1.StorageSpec{Path: "/mnt/nvme"}}}
	r := &BurstBufferReconciler{AgentImage: "img"}
	s := &scope{bb: bb, nodes: []string{"n0", "n1", "n2"}}
	claim := compareTarget{volume: corev1.Volume{Name: "other", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "results"}}}, scheduled: true}
	local := compareTarget{volume: corev1.Volume{Name: "other", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/scratch"}}}}
	args := func(t compareTarget, side, i, m int) string {
		return strings.Join(r.comparePodOf(s, t, side, i, m, 4, 2).Spec.Containers[0].Args, " ")
	}
	name := func(t compareTarget, side, j int) string { return r.comparePod(s, t, side, j, s.nodes[j], 4, 2).Name }
	for _, tc := range []struct {
		what    string
		t       compareTarget
		side, m int
		mount   string // "": not together
		local   bool
	}{
		{"beegfs, the burst buffer's side", local, sideBurstBuffer, 3, nodetask.FileSystemMount, false},
		{"a claim", claim, sideOther, 3, nodetask.CompareMount, false},
		{"a claim on one node", claim, sideOther, 1, "", false},
		{"a node-local path", local, sideOther, 3, "", false},
		{"local, the burst buffer's side", local, sideBurstBuffer, 3, "", true},
	} {
		bb.Spec.Engine = v1alpha1.EngineBeeGFS
		if tc.local {
			bb.Spec.Engine = v1alpha1.EngineLocal
		}
		got := args(tc.t, tc.side, 1, tc.m)
		if tc.mount == "" {
			if strings.Contains(got, "--chain") {
				t.Errorf("%s: args %q, want no chain", tc.what, got)
			}
			continue
		}
		want := fmt.Sprintf("--chain-dir %s/.beeburst-start/uid-1/%s --chain-name %s --chain-start-with %s,%s --chain-shared",
			tc.mount, name(tc.t, tc.side, 0), name(tc.t, tc.side, 1), name(tc.t, tc.side, 0), name(tc.t, tc.side, 2))
		if !strings.HasSuffix(got, want) {
			t.Errorf("%s: args %q, want them to end with %q", tc.what, got, want)
		}
	}
}
