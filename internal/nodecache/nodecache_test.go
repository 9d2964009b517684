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
