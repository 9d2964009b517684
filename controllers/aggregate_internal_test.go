package controllers

import (
	"math"
	"testing"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
)

// TestAggregate: a shared file system's point is what it moved (total bytes over the slowest
// runtime); nodes that share nothing add their own rates, so one node's slower end does not
// lower the other's figure. The figures are a point of the testbed's (2 nodes x 4 processes,
// 290 MiB each; one node's run ended 0.6 s late in its final flush).
func TestAggregate(t *testing.T) {
	mib := int64(1 << 20)
	runs := []nodeRun{
		{node: "a", write: bench.Result{Bytes: 290 * mib, RuntimeSeconds: 2.02}},
		{node: "b", write: bench.Result{Bytes: 290 * mib, RuntimeSeconds: 2.604}},
	}
	shared := aggregate(runs, limits.Write, true)
	if want := float64(580*mib) / 2.604; math.Abs(shared-want) > 1 {
		t.Errorf("shared: %.0f B/s, want %.0f (total over the slowest)", shared, want)
	}
	own := aggregate(runs, limits.Write, false)
	if want := float64(290*mib)/2.02 + float64(290*mib)/2.604; math.Abs(own-want) > 1 {
		t.Errorf("independent nodes: %.0f B/s, want %.0f (the sum of their rates)", own, want)
	}
	if own <= shared {
		t.Errorf("independent %.0f <= shared %.0f", own, shared)
	}
	if got := aggregate([]nodeRun{{write: bench.Result{}}}, limits.Write, false); got != 0 {
		t.Errorf("no runtime: %v, want 0", got)
	}
}
