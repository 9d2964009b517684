package nodecache

import (
	"reflect"
	"testing"
	"time"

	"github.com/beeburst/beeburst/internal/bench"
)

func TestRoundTripAndFreshness(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	alone := &Conditions{StartTime: now.Add(-11 * time.Minute), Exclusive: true, Lock: "beeburst-measure-worker-1"}
	f := Figures{Node: "worker-1", StoragePath: "/mnt/nvme", MeasuredTime: now.Add(-10 * time.Minute),
		DeviceWriteBytesPerSecond: 300e6, DeviceReadBytesPerSecond: 400e6, Conditions: alone}
	cm, err := ConfigMap("beeburst-system", f)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "beeburst-node-worker-1" || cm.Namespace != "beeburst-system" {
		t.Fatalf("name %s/%s", cm.Namespace, cm.Name)
	}
	got, err := Read(cm)
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	doubted := f
	doubted.Doubted = "burst buffer hpc/a measured the devices again: the sweep read above them"
	for _, tc := range []struct {
		name   string
		path   string
		maxAge time.Duration
		f      Figures
		want   bool
	}{
		{"young, same path", "/mnt/nvme", time.Hour, f, true},
		{"too old", "/mnt/nvme", 5 * time.Minute, f, false},
		{"other drive", "/mnt/other", time.Hour, f, false},
		{"reuse off", "/mnt/nvme", 0, f, false},
		{"incomplete", "/mnt/nvme", time.Hour, Figures{StoragePath: "/mnt/nvme", MeasuredTime: now, DeviceWriteBytesPerSecond: 1, Conditions: alone}, false},
		{"from the future", "/mnt/nvme", time.Hour, Figures{StoragePath: "/mnt/nvme", MeasuredTime: now.Add(time.Hour), DeviceWriteBytesPerSecond: 1, DeviceReadBytesPerSecond: 1, Conditions: alone}, false},
		{"no conditions recorded (an older operator's entry)", "/mnt/nvme", time.Hour, withConditions(f, nil), false},
		{"without the node's lock", "/mnt/nvme", time.Hour, withConditions(f, &Conditions{Exclusive: false}), false},
		{"beside another burst buffer's pods", "/mnt/nvme", time.Hour, withConditions(f, &Conditions{Exclusive: true, OtherPods: []string{"hpc/other-clean-0"}}), false},
		{"doubted by a second look", "/mnt/nvme", time.Hour, doubted, false},
	} {
		if got := tc.f.Fresh(tc.path, tc.maxAge, now); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
	delete(cm.Data, Key)
	if _, err := Read(cm); err == nil {
		t.Error("a ConfigMap without figures must be an error")
	}
}

func withConditions(f Figures, c *Conditions) Figures {
	f.Conditions = c
	return f
}

func TestMetadataFigureRoundTripAndFreshness(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	alone := &Conditions{StartTime: now.Add(-11 * time.Minute), Exclusive: true, Lock: "beeburst-measure-worker-1"}
	m := &MetadataFigure{CreatesPerSecondPerServer: 5000, Servers: 2, StoragePath: "/mnt/nvme",
		MeasuredTime: now.Add(-10 * time.Minute), MeasuredBy: "hpc/first", Conditions: alone}
	f := Figures{Node: "worker-1", Metadata: m}
	cm, err := ConfigMap("beeburst-system", f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(cm)
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	if f.Fresh("/mnt/nvme", time.Hour, now) {
		t.Error("a metadata figure alone is no device figure")
	}
	with := func(change func(*MetadataFigure)) *MetadataFigure {
		c := *m
		change(&c)
		return &c
	}
	for _, tc := range []struct {
		name   string
		path   string
		maxAge time.Duration
		m      *MetadataFigure
		want   bool
	}{
		{"young, same path, alone", "/mnt/nvme", time.Hour, m, true},
		{"too old", "/mnt/nvme", 5 * time.Minute, m, false},
		{"other drive", "/mnt/other", time.Hour, m, false},
		{"reuse off", "/mnt/nvme", 0, m, false},
		{"none", "/mnt/nvme", time.Hour, nil, false},
		{"no rate", "/mnt/nvme", time.Hour, with(func(c *MetadataFigure) { c.CreatesPerSecondPerServer = 0 }), false},
		{"no servers", "/mnt/nvme", time.Hour, with(func(c *MetadataFigure) { c.Servers = 0 }), false},
		{"from the future", "/mnt/nvme", time.Hour, with(func(c *MetadataFigure) { c.MeasuredTime = now.Add(time.Minute) }), false},
		{"no conditions recorded", "/mnt/nvme", time.Hour, with(func(c *MetadataFigure) { c.Conditions = nil }), false},
		{"beside another burst buffer's pods", "/mnt/nvme", time.Hour,
			with(func(c *MetadataFigure) {
				c.Conditions = &Conditions{Exclusive: true, OtherPods: []string{"hpc/other-bench-0-1"}}
			}), false},
	} {
		if got := tc.m.Fresh(tc.path, tc.maxAge, now); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTogether(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	a := &Conditions{StartTime: t0.Add(time.Second), Exclusive: true, Lock: "lock-a", Probe: "agent workload", Image: "agent:1"}
	b := &Conditions{StartTime: t0, Exclusive: true, Lock: "lock-b", Probe: "agent workload", Image: "agent:1"}
	got := Together([]*Conditions{a, b})
	want := &Conditions{StartTime: t0, Exclusive: true, Lock: "lock-a,lock-b", Probe: "agent workload", Image: "agent:1"}
	if !reflect.DeepEqual(got, want) || !got.Alone() {
		t.Fatalf("two parts alone: %+v", got)
	}
	busy := &Conditions{StartTime: t0, Exclusive: true, OtherPods: []string{"x/y", "x/z"}}
	if c := Together([]*Conditions{a, busy, {Exclusive: true, OtherPods: []string{"x/y"}}}); c.Alone() || !reflect.DeepEqual(c.OtherPods, []string{"x/y", "x/z"}) {
		t.Errorf("another burst buffer's pods beside one part: %+v", c)
	}
	if c := Together([]*Conditions{a, {StartTime: t0}}); c.Alone() {
		t.Error("a part without the node's lock makes the whole not exclusive")
	}
	traffic := &Conditions{StartTime: t0, Exclusive: true, OtherTraffic: "loop1 moved 115.3 MB that the run did not (304.1 MB of its own)"}
	if traffic.Alone() {
		t.Error("bytes on the device that the probe did not move: not alone")
	}
	if c := Together([]*Conditions{a, traffic}); c.Alone() || c.OtherTraffic != traffic.OtherTraffic {
		t.Errorf("foreign traffic beside one part: %+v", c)
	}
	if c := Together([]*Conditions{a, nil}); c.Alone() {
		t.Error("a part without conditions makes the whole not exclusive")
	}
	if Together(nil) != nil {
		t.Error("no parts: no conditions")
	}
}

func TestMetadataFromReports(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rep := func(creates float64, end time.Time) bench.Report {
		return bench.Report{Phase: bench.PhaseSucceeded, EndTime: end, Results: []bench.Result{
			{Operation: bench.OpCreate, OpsPerSecond: creates}, {Operation: bench.OpStat, OpsPerSecond: 10 * creates}}}
	}
	per, end, ok := MetadataFromReports([]bench.Report{rep(6000, t0), rep(4000, t0.Add(time.Second))}, 2)
	if !ok || per != 3000 || !end.Equal(t0.Add(time.Second)) {
		t.Errorf("two nodes, two servers: %d %v %v, want 3000 per server (the best single node's 6000 over 2), the last end", per, end, ok)
	}
	if _, _, ok := MetadataFromReports([]bench.Report{rep(6000, t0), {Phase: bench.PhaseSucceeded}}, 1); ok {
		t.Error("a node without a create rate: no figure")
	}
	if _, _, ok := MetadataFromReports(nil, 1); ok {
		t.Error("no reports: no figure")
	}
	if _, _, ok := MetadataFromReports([]bench.Report{rep(6000, t0)}, 0); ok {
		t.Error("no servers: no figure")
	}
}

// TestBest: the best device figures over the probes of one storage path that had the node to
// itself, the metadata figure kept, and evidence for a probe only beyond that probe itself.
func TestBest(t *testing.T) {
	ended := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	probe := func(by, path string, w, r int64) Figures {
		return Figures{Node: "n1", NodeUID: "uid-1", StoragePath: path, MeasuredBy: by, MeasuredTime: ended, DeviceWriteBytesPerSecond: w, DeviceReadBytesPerSecond: r}
	}
	md := &MetadataFigure{CreatesPerSecondPerServer: 9000, Servers: 1, StoragePath: "/mnt/nvme"}
	first := Next(Figures{Node: "n1", Metadata: md}, probe("hpc/a", "/mnt/nvme", 280e6, 310e6))
	if first.Metadata != md || *first.Best != (BestFigures{StoragePath: "/mnt/nvme", WriteBytesPerSecond: 280e6, ReadBytesPerSecond: 310e6, Probes: 1}) {
		t.Fatalf("first probe: %+v, best %+v", first, first.Best)
	}
	if _, ok := first.KnownBest("/mnt/nvme", "hpc/a"); ok {
		t.Error("a lone probe's own figure vouched for itself")
	}
	if again := Next(first, probe("hpc/a", "/mnt/nvme", 280e6, 310e6)); again.Best.Probes != 1 {
		t.Errorf("the same probe written again counted twice: %+v", again.Best)
	}
	if b, ok := first.KnownBest("/mnt/nvme", "hpc/b"); !ok || b.WriteBytesPerSecond != 280e6 {
		t.Errorf("another burst buffer's probe: %+v %v", b, ok)
	}
	if _, ok := first.KnownBest("/mnt/other", "hpc/b"); ok {
		t.Error("a figure of another drive was evidence")
	}
	// A disturbed second probe reads write low and read high: each figure keeps its best.
	second := Next(first, probe("hpc/b", "/mnt/nvme", 250e6, 320e6))
	if second.DeviceWriteBytesPerSecond != 250e6 || *second.Best != (BestFigures{StoragePath: "/mnt/nvme", WriteBytesPerSecond: 280e6, ReadBytesPerSecond: 320e6, Probes: 2}) {
		t.Fatalf("second probe: %+v, best %+v", second, second.Best)
	}
	if b, ok := second.KnownBest("/mnt/nvme", "hpc/b"); !ok || b.WriteBytesPerSecond != 280e6 {
		t.Errorf("two probes: %+v %v", b, ok)
	}
	// Figures a second look doubted are replaced by the next probe alone, their best kept.
	doubted := second
	doubted.Doubted = "burst buffer hpc/b measured the devices again: the sweep read above them"
	round2 := probe("hpc/b", "/mnt/nvme", 260e6, 300e6)
	round2.MeasuredTime = ended.Add(5 * time.Minute)
	if again := Next(doubted, round2); again.Doubted != "" || again.DeviceWriteBytesPerSecond != 260e6 ||
		*again.Best != (BestFigures{StoragePath: "/mnt/nvme", WriteBytesPerSecond: 280e6, ReadBytesPerSecond: 320e6, Probes: 3}) {
		t.Errorf("a probe after a doubt: %+v, best %+v", again, again.Best)
	}
	// A probe of another path starts anew; the round trip keeps the best.
	moved := Next(second, probe("hpc/c", "/mnt/other", 100e6, 200e6))
	if *moved.Best != (BestFigures{StoragePath: "/mnt/other", WriteBytesPerSecond: 100e6, ReadBytesPerSecond: 200e6, Probes: 1}) {
		t.Errorf("another path: %+v", moved.Best)
	}
	// Another machine registered under the same name (another Node UID) starts anew, its
	// metadata figure too.
	other := probe("hpc/d", "/mnt/nvme", 120e6, 130e6)
	other.NodeUID = "new-uid"
	if replaced := Next(second, other); replaced.Metadata != nil ||
		*replaced.Best != (BestFigures{StoragePath: "/mnt/nvme", WriteBytesPerSecond: 120e6, ReadBytesPerSecond: 130e6, Probes: 1}) {
		t.Errorf("another node of the same name: %+v, best %+v", replaced, replaced.Best)
	}
	cm, err := ConfigMap("beeburst-system", second)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read(cm); err != nil || !reflect.DeepEqual(got, second) {
		t.Errorf("round trip: %+v %v", got, err)
	}
	if _, ok := (Figures{}).KnownBest("/mnt/nvme", "hpc/a"); ok {
		t.Error("an empty entry was evidence")
	}
}
