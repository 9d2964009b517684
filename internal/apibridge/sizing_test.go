package apibridge

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/sizing"
)

func i64(v int64) *int64 { return &v }

func TestTargetFromSpec(t *testing.T) {
	got := TargetFromSpec(&v1alpha1.TargetSpec{WriteBytesPerSecond: q("250M"), ReadBytesPerSecond: q("1G"), Capacity: q("10Gi"),
		MetadataOperationsPerSecond: i64(5000), MarginPercent: 15})
	want := sizing.Target{Write: 250e6, Read: 1e9, Capacity: 10 << 30, MetadataOps: 5000, Margin: 0.15}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if (TargetFromSpec(nil) != sizing.Target{}) {
		t.Error("nil target is not empty")
	}
}

func TestMinNodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *v1alpha1.BurstBufferSpec
		want int
	}{
		{"nothing", nil, 1},
		{"defaults", &v1alpha1.BurstBufferSpec{Layout: v1alpha1.LayoutSpec{MetadataServers: 1, StorageTargetsPerNode: 1}}, 1},
		{"metadata servers", &v1alpha1.BurstBufferSpec{Layout: v1alpha1.LayoutSpec{MetadataServers: 3}}, 3},
		{"stripe width over targets per node", &v1alpha1.BurstBufferSpec{Layout: v1alpha1.LayoutSpec{MetadataServers: 1, StorageTargetsPerNode: 2, StripeWidth: i32(5)}}, 3},
		{"the sweep's largest node count", &v1alpha1.BurstBufferSpec{Validation: v1alpha1.ValidationSpec{Sweep: &v1alpha1.SweepSpec{Nodes: []int32{1, 4, 2}}}}, 4},
		{"the local engine has no layout", &v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Layout: v1alpha1.LayoutSpec{MetadataServers: 3}}, 1},
	} {
		if got := MinNodes(tc.spec); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestCandidate(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{
		v1alpha1.LabelLinkRateBitsPerSecond: "1G", v1alpha1.LabelDiskWriteBytesPerSecond: "150M", v1alpha1.LabelDiskReadBytesPerSecond: "300M",
	}
	cached := &nodecache.Figures{Node: "w1", StoragePath: "/mnt/nvme", MeasuredTime: now.Add(-10 * time.Minute),
		DeviceWriteBytesPerSecond: 152e6, DeviceReadBytesPerSecond: 301e6, NetworkBytesPerSecond: 117e6, FreeBytes: 4 << 30,
		Hardware: &bench.Hardware{LinkMbps: 10000}}
	spec := &v1alpha1.HardwareSpec{Devices: &v1alpha1.DevicesHardware{PerNode: 2, WriteBytesPerSecond: q("100M")}}

	c := Candidate(CandidateInput{Name: "w1", Tier: 0, Workload: true, Spec: spec, Labels: labels, Cached: cached, StoragePath: "/mnt/nvme"})
	if c.Name != "w1" || !c.Workload || len(c.Link) != 3 || len(c.DeviceWrite) != 3 || len(c.DeviceRead) != 2 || len(c.Capacity) != 1 {
		t.Fatalf("candidate %+v", c)
	}
	best := func(evs []sizing.Evidence, fresh time.Duration) sizing.Evidence { return sizing.Best(evs, now, fresh) }
	if b := best(c.Link, time.Hour); b.Source != sizing.SourceMeasured || b.Value != 117e6 {
		t.Errorf("fresh link %+v", b)
	}
	if b := best(c.Link, time.Minute); b.Source != sizing.SourceLabel || b.Value != 125e6 || b.Detail != "1G" {
		t.Errorf("stale measurement: label link %+v", b)
	}
	if b := best(c.DeviceWrite, time.Minute); b.Source != sizing.SourceSpec || b.Value != 200e6 || b.Detail != "2 x 100M" {
		t.Errorf("spec devices x per node %+v", b)
	}
	if b := best(c.DeviceRead, time.Minute); b.Source != sizing.SourceLabel || b.Value != 300e6 {
		t.Errorf("label device read %+v", b)
	}

	// Another drive: the cached device figures and free space do not count; the discovered
	// interface speed does.
	c = Candidate(CandidateInput{Name: "w1", Labels: map[string]string{}, Cached: cached, StoragePath: "/scratch",
		Discovered: &v1alpha1.NodeHardware{Capacity: q("100Gi")}})
	if len(c.DeviceWrite) != 0 || len(c.Capacity) != 1 || c.Capacity[0].Source != sizing.SourceDiscovered ||
		!strings.Contains(c.Capacity[0].Detail, "upper bound") {
		t.Errorf("other path: %+v", c)
	}
	if b := best(c.Link, time.Minute); b.Source != sizing.SourceDiscovered || b.Value != 1.25e9 {
		t.Errorf("discovered link %+v", b)
	}
}

func TestOfflineRequest(t *testing.T) {
	// The testbed file: local engine, no count: chosen among maxNodes.
	spec := &v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineLocal, Hardware: &v1alpha1.HardwareSpec{
		Devices: &v1alpha1.DevicesHardware{WriteBytesPerSecond: q("150M"), ReadBytesPerSecond: q("300M")}}}
	req, err := OfflineRequest(spec.Hardware, spec, sizing.Target{Write: 250e6, Margin: 0.1}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if req.Count != 0 || !req.Local || len(req.Candidates) != 8 || req.Candidates[7].Name != "node-8" || req.FixedClients != nil {
		t.Errorf("request %+v", req)
	}
	d, err := sizing.Plan(req)
	if err != nil || d.Count != 2 || d.State != sizing.StatePredicted {
		t.Errorf("plan %v: %+v", err, d)
	}

	// The paper: five I/O nodes given, 64 clients fixed.
	req, err = OfflineRequest(omnipath(), nil, sizing.Target{Write: 100e9, Margin: 0.1}, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if req.Count != 5 || req.FixedClients == nil || req.FixedClients.Nodes != 64 || len(req.Candidates) != 5 {
		t.Errorf("request %+v", req)
	}
	d, err = sizing.Plan(req)
	if err != nil || d.State != sizing.StateUnreachable || d.MoreNodes != 5 || d.Cause != sizing.CauseTooFewNodes {
		t.Errorf("plan %v: %s", err, d.Message)
	}

	// A manifest with nodes.count checks it, with the layout's minimum and capacity cap.
	spec = &v1alpha1.BurstBufferSpec{Nodes: v1alpha1.NodesSpec{Count: 3}, Layout: v1alpha1.LayoutSpec{MetadataServers: 2},
		Storage:  v1alpha1.StorageSpec{CapacityPerNode: q("1Ti")},
		Hardware: &v1alpha1.HardwareSpec{Servers: &v1alpha1.ServersHardware{Link: lnk("25G", "64b/66b")}}}
	req, err = OfflineRequest(spec.Hardware, spec, sizing.Target{Write: 1e9}, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if req.Count != 3 || req.MinNodes != 2 || req.MetadataServers != 2 || req.CapacityPerNode != 1<<40 || req.Local ||
		req.Candidates[0].Link[0].Value != 25e9*64/66/8 {
		t.Errorf("request %+v", req)
	}
	if _, err := OfflineRequest(nil, nil, sizing.Target{Write: 1}, 0); err == nil {
		t.Error("accepted 0 nodes")
	}
}

func TestDecisionAndVerdictToAPI(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cands := []sizing.Candidate{
		{Name: "worker-1", Workload: true, DeviceWrite: []sizing.Evidence{{Value: 150.742e6, Source: sizing.SourceMeasured, MeasuredTime: now.Add(-time.Minute)}}},
		{Name: "worker-2", DeviceWrite: []sizing.Evidence{{Value: 150e6, Source: sizing.SourceLabel}}},
	}
	target := sizing.Target{Write: 250e6, Margin: 0.1}
	d, err := sizing.Plan(sizing.Request{Target: target, Candidates: cands, Local: true, Now: now, FreshFor: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ts := DecisionToAPI(d, now)
	if ts.State != v1alpha1.TargetPredicted || ts.Mode != v1alpha1.TargetChoose || ts.NodeCount != 2 || ts.CandidateNodes != 2 ||
		len(ts.Nodes) != 2 || ts.Nodes[0].WriteSource != "measured" || *ts.Nodes[0].WriteBytesPerSecond != 150742000 ||
		ts.Nodes[0].MeasuredTime == nil || !ts.Nodes[0].Workload || ts.Nodes[1].WriteSource != "label" || ts.Nodes[1].MeasuredTime != nil ||
		ts.Write == nil || *ts.Write.PredictedBytesPerSecond != 300742000 || ts.Write.PredictedBottleneck != "devices" ||
		*ts.Write.PredictedMarginPercent != 20 || ts.Write.Met != nil || ts.DecidedTime == nil || ts.Read != nil {
		t.Errorf("status %+v write %+v nodes %+v", ts, ts.Write, ts.Nodes)
	}
	if s, r, _ := TargetCondition(ts); s != metav1.ConditionUnknown || r != v1alpha1.ReasonTargetPredicted {
		t.Errorf("condition %s %s", s, r)
	}

	// After stage 3: not met for 1 GB/s.
	h := limits.Hardware{Local: true, Clients: limits.Clients{Nodes: 2, ProcessesPerNode: 1}, Servers: []limits.ServerNode{
		{Name: "worker-1", Devices: 1, DeviceWrite: limits.Bytes(150.742e6)}, {Name: "worker-2", Devices: 1, DeviceWrite: limits.Bytes(152.634e6)}}}
	pts := []limits.Point{{Nodes: 2, ProcessesPerNode: 4, Operation: limits.Write, BytesPerSecond: 301.583e6},
		{Nodes: 1, ProcessesPerNode: 4, Operation: limits.Write, BytesPerSecond: 151e6}}
	v, err := sizing.Assess(sizing.AssessInput{Target: sizing.Target{Write: 1e9, Margin: 0.1}, Hardware: h, Points: pts, Tolerance: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	ts.Write.TargetBytesPerSecond = 1e9
	ApplyVerdict(ts, v)
	w := ts.Write
	if ts.State != v1alpha1.TargetNotMet || ts.Cause != v1alpha1.CauseTooFewNodes || ts.MoreNodes == nil || *ts.MoreNodes != 6 ||
		*w.MeasuredBytesPerSecond != 301583000 || *w.MeasuredMarginPercent != -70 || w.Met == nil || *w.Met || w.Bottleneck != "devices" ||
		*w.MoreNodes != 6 || !strings.Contains(ts.Message, "Target not met") {
		t.Errorf("after the verdict %+v write %+v", ts, w)
	}
	if s, r, m := TargetCondition(ts); s != metav1.ConditionFalse || r != v1alpha1.ReasonTargetNotMet || !strings.Contains(m, "6 more nodes") {
		t.Errorf("condition %s %s %s", s, r, m)
	}

	// A verdict that cannot tell keeps the prediction.
	ts2 := DecisionToAPI(d, now)
	v, _ = sizing.Assess(sizing.AssessInput{Target: target, Hardware: h})
	ApplyVerdict(ts2, v)
	if ts2.State != v1alpha1.TargetPredicted || ts2.Write.Met != nil {
		t.Errorf("unknown verdict changed the state: %+v", ts2)
	}
}

func TestChunkAndComparisonToAPI(t *testing.T) {
	plan := sizing.ChunkPlan{Pattern: sizing.PatternLargeSequential, Sizes: []int64{512 << 10, 4 << 20},
		Measures: []sizing.Measure{sizing.MeasureWrite, sizing.MeasureRead}}
	c := sizing.ChooseChunkSize(plan, []sizing.ChunkResult{
		{Size: 512 << 10, Figures: map[sizing.Measure]float64{sizing.MeasureWrite: 1e9, sizing.MeasureRead: 2e9}},
		{Size: 4 << 20, Figures: map[sizing.Measure]float64{sizing.MeasureWrite: 1.3e9, sizing.MeasureRead: 2.2e9}},
	}, nil)
	cs := ChunkChoiceToAPI(c)
	if cs.Size.String() != "4Mi" || cs.Policy != v1alpha1.ChunkSizeAuto || cs.Pattern != v1alpha1.PatternLargeSequential ||
		len(cs.Candidates) != 2 || cs.Candidates[0].Size.String() != "512Ki" || *cs.Candidates[0].ScorePerMille != 1000 ||
		!cs.Candidates[1].Chosen || *cs.Candidates[1].WriteBytesPerSecond != 1.3e9 || cs.Candidates[1].WriteOpsPerSecond != nil {
		t.Errorf("chunk status %+v", cs)
	}

	cmp := ComparisonToAPI(sizing.Compare(sizing.CompareInput{With: "claim results",
		BurstBuffer: map[limits.Operation]float64{limits.Write: 3.4e9}, Other: map[limits.Operation]float64{limits.Write: 1e9}}))
	if cmp.With != "claim results" || len(cmp.Operations) != 1 || *cmp.Operations[0].RatioPerMille != 3400 ||
		!strings.HasPrefix(cmp.Message, "the burst buffer is 3.4x faster than claim results for large sequential writes") {
		t.Errorf("comparison %+v", cmp)
	}

	// As `kubectl beeburst limits` prints them.
	lines := strings.Join(append(ChunkSizeLines(cs), ComparisonLines(cmp)...), "\n")
	for _, want := range []string{
		"chunk size 4Mi (Auto, LargeSequential): 4Mi chosen for large sequential I/O",
		"  chunk size 512Ki: write 1 GB/s, read 2 GB/s, score 1.00",
		"  chunk size 4Mi: write 1.3 GB/s, read 2.2 GB/s, score 1.20, chosen",
		"compared with claim results",
		"  write: burst buffer 3.4 GB/s, claim results 1 GB/s (x3.40)",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("lines lack %q:\n%s", want, lines)
		}
	}
	if ChunkSizeLines(nil) != nil || ComparisonLines(nil) != nil {
		t.Error("lines without a status")
	}
}

func TestTruncate(t *testing.T) {
	if got := shorten.Cut(strings.Repeat("é", 10), 9); got != "ééé..." || len(got) > 9 {
		t.Errorf("%q", got)
	}
	if got := shorten.Cut("short", 10); got != "short" {
		t.Errorf("%q", got)
	}
}

// With no nodes.count (a target chose it), the limits are computed for the nodes chosen.
func TestDefaultsForChosenCount(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{Spec: v1alpha1.BurstBufferSpec{Target: &v1alpha1.TargetSpec{WriteBytesPerSecond: q("1G")}},
		Status: v1alpha1.BurstBufferStatus{Nodes: []v1alpha1.NodeStatus{{Name: "a"}, {Name: "b"}, {Name: "c"}}}}
	if d := DefaultsFor(bb); d.Nodes != 3 || d.Engine != v1alpha1.EngineBeeGFS {
		t.Errorf("defaults %+v", d)
	}
	bb.Status.Nodes = nil
	if d := DefaultsFor(bb); d.Nodes != 1 {
		t.Errorf("before nodes are chosen: %+v", d)
	}
	bb.Spec.Nodes.Count = 2
	bb.Status.Nodes = []v1alpha1.NodeStatus{{Name: "a"}}
	if d := DefaultsFor(bb); d.Nodes != 2 {
		t.Errorf("nodes.count given: %+v", d)
	}
}

func TestMetadataPerServer(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	alone := &nodecache.Conditions{Exclusive: true}
	fig := func(node string, rate int64, age time.Duration, by string, c *nodecache.Conditions) nodecache.Figures {
		return nodecache.Figures{Node: node, Metadata: &nodecache.MetadataFigure{CreatesPerSecondPerServer: rate, Servers: 2,
			StoragePath: "/mnt/nvme", MeasuredTime: now.Add(-age), MeasuredBy: by, Conditions: c}}
	}
	for _, tc := range []struct {
		name   string
		cached []nodecache.Figures
		value  float64
		detail string
		note   string
	}{
		{"nothing cached", nil, 0, "", ""},
		{"device figures only", []nodecache.Figures{{Node: "a", DeviceWriteBytesPerSecond: 1}}, 0, "", ""},
		{"the newest fresh one", []nodecache.Figures{fig("a", 4000, 20*time.Minute, "hpc/old", alone), fig("b", 5000, 10*time.Minute, "hpc/new", alone)},
			5000, "on b by hpc/new at 2026-11-21T11:50:00Z, 2 metadata server(s)", ""},
		{"fresh before stale", []nodecache.Figures{fig("a", 9000, 30*time.Hour, "hpc/old", alone), fig("b", 5000, 10*time.Minute, "hpc/new", alone)},
			5000, "on b by hpc/new", ""},
		{"only stale: none, and said so", []nodecache.Figures{fig("a", 9000, 30*time.Hour, "hpc/old", alone)},
			0, "", "the per-server rate measured on a by hpc/old at 2026-11-20T06:00:00Z, 2 metadata server(s) is 30h0m0s old, older than validation.reuseComponentResultsFor (1h0m0s)"},
		{"not alone: never", []nodecache.Figures{fig("a", 9000, time.Minute, "hpc/x", &nodecache.Conditions{Exclusive: true, OtherPods: []string{"o/p"}})}, 0, "", ""},
		{"another drive", []nodecache.Figures{func() nodecache.Figures {
			f := fig("a", 9000, time.Minute, "hpc/x", alone)
			f.Metadata.StoragePath = "/scratch"
			return f
		}()}, 0, "", ""},
	} {
		got := MetadataPerServer(tc.cached, "/mnt/nvme", now, time.Hour)
		if tc.value == 0 {
			if got.Known() || got.Note != tc.note {
				t.Errorf("%s: got %+v, want unknown with note %q", tc.name, got, tc.note)
			}
			continue
		}
		if got.Value != tc.value || got.Source != sizing.SourceMeasured || !strings.HasPrefix(got.Detail, tc.detail) {
			t.Errorf("%s: got %+v, want %g measured %q", tc.name, got, tc.value, tc.detail)
		}
	}
}
