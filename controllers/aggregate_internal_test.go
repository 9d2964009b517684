package controllers

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
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

// TestAggregateSharedRunsApart: runs on one file system that did not run at once count over
// the time they spanned together (less spanTolerance of the runtime: their start times are a
// little late), so the bytes a node moved while the other had not started are not counted as
// moved beside it; runs at once count over the slowest runtime, and a report without end
// times (an older agent) too.
func TestAggregateSharedRunsApart(t *testing.T) {
	mib := int64(1 << 20)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run := func(node string, end time.Duration) nodeRun {
		return nodeRun{node: node, write: bench.Result{Bytes: 200 * mib, RuntimeSeconds: 2, End: t0.Add(end)}}
	}
	for _, tc := range []struct {
		name    string
		runs    []nodeRun
		seconds float64 // the time the figure counts over
	}{
		{"at once", []nodeRun{run("a", 2*time.Second), run("b", 2*time.Second)}, 2},
		{"50 ms apart: within the tolerance", []nodeRun{run("a", 2*time.Second), run("b", 2050*time.Millisecond)}, 2},
		{"150 ms apart", []nodeRun{run("a", 2*time.Second), run("b", 2150*time.Millisecond)}, 2.05},
		{"1 s apart", []nodeRun{run("a", 2*time.Second), run("b", 3*time.Second)}, 2.9},
		{"one after the other", []nodeRun{run("a", 2*time.Second), run("b", 4*time.Second)}, 3.9},
		{"no end times", []nodeRun{{node: "a", write: bench.Result{Bytes: 200 * mib, RuntimeSeconds: 2}}, run("b", 9*time.Second)}, 2},
	} {
		got := aggregate(tc.runs, limits.Write, true)
		if want := float64(400*mib) / tc.seconds; math.Abs(got-want) > 1 {
			t.Errorf("%s: %.0f B/s, want %.0f (400 MiB over %.2f s)", tc.name, got, want, tc.seconds)
		}
		// Each node's own storage: the sum of the rates, whenever each ran.
		if own, want := aggregate(tc.runs, limits.Write, false), float64(400*mib)/2; math.Abs(own-want) > 1 {
			t.Errorf("%s, independent nodes: %.0f B/s, want %.0f", tc.name, own, want)
		}
	}
}

// TestTogether: on a shared file system (beegfs) a point's runs start together - each waits,
// through markers in one directory of that file system, for the point's runs on the other
// nodes - while runs on node-local storage, and a point of one node, start as their pods do.
func TestTogether(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bb", UID: "uid-1"},
		Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineBeeGFS, Storage: v1alpha1.StorageSpec{Path: "/mnt/nvme"}}}
	name := func(j int) string { return nodetask.RunName(bb, nodetask.ComponentSweep, 1, j) + "-r2" }
	sweepPod := func(i int) *corev1.Pod {
		pod := nodetask.SweepPod(bb, "img", 1, i, fmt.Sprintf("n%d", i), 4, 2)
		pod.Name += "-r2"
		return pod
	}
	args := strings.Join(together(bb, sweepPod(1), 3, name).Spec.Containers[0].Args, " ")
	want := fmt.Sprintf("--chain-dir %s/.beeburst-start/uid-1/%s --chain-name %s --chain-start-with %s,%s --chain-shared",
		nodetask.FileSystemMount, name(0), name(1), name(0), name(2))
	if !strings.HasSuffix(args, want) {
		t.Errorf("beegfs, 3 nodes: args %q, want them to end with %q", args, want)
	}
	plain := strings.Join(sweepPod(0).Spec.Containers[0].Args, " ")
	if got := strings.Join(together(bb, sweepPod(0), 1, name).Spec.Containers[0].Args, " "); got != plain {
		t.Errorf("beegfs, 1 node: %q, want %q", got, plain)
	}
	bb.Spec.Engine = v1alpha1.EngineLocal
	if got := strings.Join(together(bb, sweepPod(0), 3, name).Spec.Containers[0].Args, " "); got != plain {
		t.Errorf("local: %q, want %q", got, plain)
	}
}

// TestNotAtOnce: a beegfs point whose runs started more than a tenth of their runtime (and
// 250 ms) apart is disturbed, naming the node that started last; runs at once, one node, a
// local point (each node its own storage) and reports without end times are not.
func TestNotAtOnce(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	run := func(node string, end time.Duration) nodeRun {
		return nodeRun{node: node, write: bench.Result{Bytes: 1 << 28, RuntimeSeconds: 2, End: t0.Add(end)}}
	}
	if got := notAtOnce(true, []nodeRun{run("a", 2*time.Second), run("b", 2240*time.Millisecond)}); got != "" {
		t.Errorf("240 ms apart, under the floor: %q, want none", got)
	}
	if got := notAtOnce(true, []nodeRun{run("a", 2*time.Second)}); got != "" {
		t.Errorf("one node: %q, want none", got)
	}
	apart := []nodeRun{run("a", 2*time.Second), run("c", 2100*time.Millisecond), run("b", 7*time.Second)}
	if got, want := notAtOnce(true, apart), "node b: its run started 5.0 s after the point's first, in runs of 2.0 s (the point's runs did not run at once)"; got != want {
		t.Errorf("5 s apart: %q, want %q", got, want)
	}
	if got := notAtOnce(true, []nodeRun{{node: "a", write: bench.Result{RuntimeSeconds: 2}}, run("b", 9*time.Second)}); got != "" {
		t.Errorf("no end times: %q, want none", got)
	}
	if got := notAtOnce(false, apart); got != "" {
		t.Errorf("local: %q, want none", got)
	}
}
