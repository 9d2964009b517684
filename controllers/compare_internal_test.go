package controllers

import (
	"testing"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
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
