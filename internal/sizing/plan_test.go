package sizing

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/beeburst/beeburst/internal/limits"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ev(v float64, src Source) []Evidence { return []Evidence{{Value: v, Source: src}} }

func measured(v float64, age time.Duration) Evidence {
	return Evidence{Value: v, Source: SourceMeasured, MeasuredTime: now.Add(-age)}
}

// node is a candidate with label figures: device write and read in bytes/s, link in bytes/s
// (0: unknown).
func node(name string, write, read, link float64) Candidate {
	c := Candidate{Name: name, Tier: 2}
	if write > 0 {
		c.DeviceWrite = ev(write, SourceLabel)
	}
	if read > 0 {
		c.DeviceRead = ev(read, SourceLabel)
	}
	if link > 0 {
		c.Link = ev(link, SourceLabel)
	}
	return c
}

// testbed is the device-bound testbed: 150 MB/s write, 300 MB/s read, 1 Gbit/s links.
func testbed(n int) []Candidate {
	var out []Candidate
	for i := range n {
		out = append(out, node("worker-"+string(rune('1'+i)), 150e6, 300e6, 125e6))
	}
	return out
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		// want
		state     State
		count     int
		cause     string
		more      int
		mds       int
		thin      bool
		chosen    []string // names of the chosen nodes, in order (nil: not checked)
		sources   map[string]Source
		msg, note []string // substrings of the message, of the notes
		excluded  int
	}{
		{
			name:  "met with the minimum count: the testbed's 250 MB/s needs both nodes",
			req:   Request{Target: Target{Write: 250e6, Margin: 0.1}, Candidates: testbed(3), Local: true},
			state: StatePredicted, count: 2,
			msg:  []string{"Chose 2 of 3 candidate nodes", "300 MB/s predicted (devices), +20% against 250 MB/s", "1 node would give 150 MB/s write"},
			note: []string{"no fresh measurement of these nodes: the prediction stands on documented or discovered figures (device write: 2 label)"},
		},
		{
			name:  "unmet, too few nodes: 1 GB/s on the 2-node testbed needs 6 more",
			req:   Request{Target: Target{Write: 1e9, Margin: 0.1}, Candidates: testbed(2), Local: true},
			state: StateUnreachable, count: 2, cause: CauseTooFewNodes, more: 6,
			msg: []string{"No count of the 2 usable candidate nodes meets the target", "-70% against 1 GB/s", "6 more like worker-1 (8 in all)"},
		},
		{
			name: "unmet, the network caps it: a 100 Gbit/s fabric under nodes of 3 GB/s",
			req: Request{Target: Target{Write: 20e9, Margin: 0.1}, Candidates: func() []Candidate {
				var cs []Candidate
				for i := range 16 {
					cs = append(cs, node("n"+string(rune('a'+i)), 3e9, 6e9, 3.125e9))
				}
				return cs
			}(), Fabric: limits.Fabric{Bisection: limits.Bytes(12.5e9)}},
			state: StateUnreachable, count: 5, cause: CauseNetworkCaps, mds: 1,
			msg: []string{"the closest is 5 nodes", "15 GB/s predicted (devices)", "The network caps it: the fabric's bisection of 12.5 GB/s"},
		},
		{
			name: "no fresh figures: stale measurements lose to labels, and the notes say so",
			req: Request{Target: Target{Write: 250e6, Margin: 0.1}, Local: true, Now: now, FreshFor: time.Hour, Candidates: []Candidate{
				{Name: "a", DeviceWrite: []Evidence{measured(160e6, 3*time.Hour), {Value: 150e6, Source: SourceLabel}}},
				{Name: "b", DeviceWrite: []Evidence{measured(140e6, 2*time.Hour), {Value: 150e6, Source: SourceLabel}}},
			}},
			state: StatePredicted, count: 2, sources: map[string]Source{"a": SourceLabel, "b": SourceLabel},
			note: []string{"no fresh measurement of these nodes", "a: device write: measured 3h ago, stale (older than 1h): label figure used"},
		},
		{
			name: "only a stale measurement: used, and said so",
			req: Request{Target: Target{Write: 100e6, Margin: 0.1}, Local: true, Now: now, FreshFor: time.Hour, Candidates: []Candidate{
				{Name: "a", DeviceWrite: []Evidence{measured(160e6, 48*time.Hour)}},
			}},
			state: StatePredicted, count: 1, sources: map[string]Source{"a": SourceMeasuredStale},
			note: []string{"a: device write: only a stale measurement (48h ago, older than 1h) gives it"},
		},
		{
			name: "mixed sources: fresh measured beats label beats spec for each node, the faster node first",
			req: Request{Target: Target{Write: 400e6, Margin: 0.1}, Local: true, Now: now, FreshFor: time.Hour, Candidates: []Candidate{
				{Name: "spec-only", DeviceWrite: ev(150e6, SourceSpec)},
				{Name: "labelled", DeviceWrite: []Evidence{{Value: 150e6, Source: SourceSpec}, {Value: 200e6, Source: SourceLabel}}},
				{Name: "measured", DeviceWrite: []Evidence{{Value: 150e6, Source: SourceSpec}, {Value: 200e6, Source: SourceLabel}, measured(310e6, 10*time.Minute)}},
			}},
			// Label vs spec: spec ranks first for a node (documented for this burst buffer).
			state: StatePredicted, count: 2, chosen: []string{"measured", "spec-only"},
			sources: map[string]Source{"measured": SourceMeasured, "spec-only": SourceSpec},
			note:    []string{"figures used: device write: 1 measured, 1 spec"},
		},
		{
			name: "read and write together: the read needs more nodes than the write",
			req:  Request{Target: Target{Write: 250e6, Read: 1e9, Margin: 0.1}, Candidates: testbed(6), Local: true},
			// write 2 nodes; read 1.1 GB/s needs 4 x 300 MB/s.
			state: StatePredicted, count: 4,
			msg: []string{"write: 600 MB/s predicted (devices), +140%", "read: 1.2 GB/s predicted (devices), +20% against 1 GB/s"},
		},
		{
			name: "read and write on beegfs: the links bound reads",
			req:  Request{Target: Target{Write: 250e6, Read: 500e6, Margin: 0.1}, Candidates: testbed(4)},
			// 2 nodes: write Bd 300, read min(Bd 600, links 2 x 125 x 2/1 = 500) = 500 < 550;
			// 3 nodes: read min(900, 3 x 125 x 3/2 = 562.5) = 562.5.
			state: StatePredicted, count: 3, mds: 1,
			msg: []string{"read: 562.5 MB/s predicted (network)"},
		},
		{
			name: "beegfs stripes evenly: the slowest chosen node bounds every node's share",
			req: Request{Target: Target{Write: 500e6, Margin: 0.1}, Candidates: []Candidate{
				node("slow", 100e6, 200e6, 1.25e9), node("fast-1", 300e6, 600e6, 1.25e9), node("fast-2", 300e6, 600e6, 1.25e9)}},
			state: StatePredicted, count: 2, mds: 1, chosen: []string{"fast-1", "fast-2"},
			msg: []string{"write: 600 MB/s predicted (devices)"},
		},
		{
			name: "beegfs: a slow node does not help, one more fast node would",
			req: Request{Target: Target{Write: 700e6, Margin: 0.1}, Candidates: []Candidate{
				node("slow", 100e6, 200e6, 1.25e9), node("fast-1", 300e6, 600e6, 1.25e9), node("fast-2", 300e6, 600e6, 1.25e9)}},
			// 3 nodes: 3 x 100 MB/s; the closest is the two fast ones (600 MB/s), and a third
			// like them gives 900 MB/s >= 770.
			state: StateUnreachable, count: 2, mds: 1, cause: CauseTooFewNodes, more: 1,
			msg: []string{"No count of the 3 usable candidate nodes meets the target; the closest is 2 nodes", "1 more like fast-1 (3 in all)"},
		},
		{
			name: "capacity target: the count that holds it",
			req: Request{Target: Target{Capacity: 10 << 30, Margin: 0.1}, Local: true, Candidates: []Candidate{
				{Name: "a", Capacity: ev(4<<30, SourceDiscovered)}, {Name: "b", Capacity: ev(4<<30, SourceDiscovered)},
				{Name: "c", Capacity: ev(4<<30, SourceDiscovered)}, {Name: "d", Capacity: ev(4<<30, SourceDiscovered)},
			}},
			state: StatePredicted, count: 3, msg: []string{"capacity: 12 GiB over 3 nodes, +20% against 10 GiB asked"},
		},
		{
			name: "capacity capped per node: short, and more nodes (or a larger capacityPerNode) would do",
			req: Request{Target: Target{Capacity: 10 << 30, Margin: 0.1}, Local: true, CapacityPerNode: 2 << 30, Candidates: []Candidate{
				{Name: "a", Capacity: ev(4<<30, SourceMeasured)}, {Name: "b", Capacity: ev(4<<30, SourceMeasured)},
			}},
			state: StateUnreachable, count: 2, cause: CauseNodeCapacity, more: 3,
			msg: []string{"capacity: 4 GiB over 2 nodes", "Too few nodes' space (at most storage.capacityPerNode 2 GiB each"},
		},
		{
			name: "nodes of the workload first, even when another node is faster",
			req: Request{Target: Target{Write: 250e6, Margin: 0.1}, Local: true, Candidates: []Candidate{
				{Name: "fast", Tier: 2, DeviceWrite: ev(1e9, SourceLabel)},
				{Name: "wl-fits", Tier: 1, Workload: true, DeviceWrite: ev(150e6, SourceLabel)},
				{Name: "wl-runs", Tier: 0, Workload: true, DeviceWrite: ev(150e6, SourceLabel)},
			}},
			state: StatePredicted, count: 2, chosen: []string{"wl-runs", "wl-fits"},
		},
		{
			name:  "check mode: the given nodes meet it",
			req:   Request{Target: Target{Write: 250e6, Margin: 0.1}, Candidates: testbed(2), Count: 2, Local: true},
			state: StatePredicted, count: 2, msg: []string{"The 2 nodes given meet the target with the 10% margin"},
		},
		{
			name:  "check mode: the given node falls short, one more would do",
			req:   Request{Target: Target{Write: 250e6, Margin: 0.1}, Candidates: testbed(1), Count: 1, Local: true},
			state: StateUnreachable, count: 1, cause: CauseTooFewNodes, more: 1,
			msg: []string{"The 1 node given fall short", "1 more like worker-1 (2 in all)"},
		},
		{
			name:  "thin margin: met only without it",
			req:   Request{Target: Target{Write: 290e6, Margin: 0.1}, Candidates: testbed(2), Local: true},
			state: StatePredicted, count: 2, thin: true,
			msg: []string{"no count meets the target with the 10% margin, and 2 is the fewest that meets it without", "under the 10% margin"},
		},
		{
			name: "no node has the figure: the minimum is taken and stage 2 will tell",
			req: Request{Target: Target{Write: 250e6, Margin: 0.1}, Local: true, MinNodes: 2,
				Candidates: []Candidate{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
			state: StateUnknown, count: 2, cause: CauseUnknownFigures, excluded: 3,
			msg: []string{"Cannot size: no candidate node has the figures the target needs (a (no device write figure"},
		},
		{
			name:  "beegfs without any link: one node is predictable, more are not",
			req:   Request{Target: Target{Write: 250e6, Margin: 0.1}, Candidates: testbed2NoLinks()},
			state: StateUnknown, count: 1, cause: CauseUnknownFigures, mds: 1,
			note: []string{"the link of a, b is known nowhere"},
		},
		{
			name:  "the layout's minimum: two metadata servers need two nodes",
			req:   Request{Target: Target{Write: 100e6, Margin: 0.1}, Candidates: testbed(3), MinNodes: 1, MetadataServers: 2},
			state: StatePredicted, count: 2, mds: 2,
		},
		{
			name: "metadata servers from a measured per-server figure",
			req: Request{Target: Target{Write: 100e6, MetadataOps: 50000, Margin: 0.1}, Candidates: testbed(4),
				MetadataOpsPerServer: Evidence{Value: 20000, Source: SourceMeasured, MeasuredTime: now, Detail: "on worker-1 by hpc/first at 2026-11-21T11:50:00Z"}},
			// 55000 / 20000 -> 3 metadata servers, so at least 3 nodes.
			state: StatePredicted, count: 3, mds: 3, msg: []string{"Metadata: 3 metadata server(s) for 50k creates/s at 20k per server (measured on worker-1 by hpc/first at 2026-11-21T11:50:00Z)"},
		},
		{
			name: "only a metadata target: as many nodes as the metadata servers it needs",
			req: Request{Target: Target{MetadataOps: 12000, Margin: 0.1}, Candidates: testbed(4), MetadataServers: 1,
				MetadataOpsPerServer: Evidence{Value: 5000, Source: SourceMeasured, MeasuredTime: now, Detail: "on a by hpc/first at 2026-11-21T11:50:00Z"}},
			// 13200 / 5000 = 2.64 -> 3 metadata servers, one per node.
			state: StatePredicted, count: 3, mds: 3, msg: []string{"Chose 3 of 4 candidate nodes: no bandwidth or capacity asked, so the layout's minimum, at least one node per metadata server. Metadata: 3 metadata server(s) for 12k creates/s at 5k per server (measured on a by hpc/first"},
		},
		{
			name:  "metadata without a per-server figure: the layout's count, checked later",
			req:   Request{Target: Target{MetadataOps: 50000, Margin: 0.1}, Candidates: testbed(2)},
			state: StatePredicted, count: 1, mds: 1, msg: []string{"no fresh per-server figure is known, so layout.metadataServers (1) stays"},
		},
		{
			name: "metadata with only a stale per-server figure: the layout's count, and the stale one named",
			req: Request{Target: Target{MetadataOps: 50000, Margin: 0.1}, Candidates: testbed(2), MetadataServers: 1,
				MetadataOpsPerServer: Evidence{Source: SourceUnknown, Note: "a per-server rate on a by hpc/first was measured 30h0m0s ago"}},
			state: StatePredicted, count: 1, mds: 1,
			msg: []string{"no fresh per-server figure is known (a per-server rate on a by hpc/first was measured 30h0m0s ago), so layout.metadataServers (1) stays"},
		},
		{
			name: "metadata beyond 64 servers",
			req: Request{Target: Target{MetadataOps: 1e7, Margin: 0.1}, Candidates: testbed(2),
				MetadataOpsPerServer: Evidence{Value: 20000, Source: SourceSpec}},
			state: StateUnreachable, cause: CauseMetadataServers, count: 1, mds: 1,
			msg: []string{"would need 550 metadata servers, more than the 64 allowed"},
		},
		{
			name: "clients on other nodes (the paper): the count sizes the servers",
			req: Request{Target: Target{Write: 100e9, Margin: 0.1}, Candidates: omnipathServers(32),
				FixedClients: &limits.Clients{Nodes: 64, ProcessesPerNode: 32, Link: limits.Bytes(100e9 * 64 / 66 / 8)}},
			// 110 GB/s / 12.121 GB/s per server = 9.08 -> 10 servers.
			state: StatePredicted, count: 10, mds: 1, msg: []string{"121.212 GB/s predicted (servers)"},
		},
		{
			name: "the paper's 5 servers checked against 55 GB/s",
			req: Request{Target: Target{Write: 55e9, Margin: 0.1}, Candidates: omnipathServers(5), Count: 5,
				FixedClients: &limits.Clients{Nodes: 64, ProcessesPerNode: 32, Link: limits.Bytes(100e9 * 64 / 66 / 8)}},
			state: StatePredicted, count: 5, mds: 1, msg: []string{"60.606 GB/s predicted (servers), +10% against 55 GB/s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.req.Now.IsZero() {
				tc.req.Now = now
			}
			d, err := Plan(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			all := d.Message + "\n" + strings.Join(d.Notes, "\n")
			if d.State != tc.state || d.Count != tc.count || d.Cause != tc.cause || d.MoreNodes != tc.more || d.ThinMargin != tc.thin ||
				(!tc.req.Local && d.MetadataServers != tc.mds) || (tc.req.Local && d.MetadataServers != 0) {
				t.Errorf("state %s count %d cause %q more %d thin %v mds %d; want %s %d %q %d %v %d\n%s",
					d.State, d.Count, d.Cause, d.MoreNodes, d.ThinMargin, d.MetadataServers, tc.state, tc.count, tc.cause, tc.more, tc.thin, tc.mds, all)
			}
			if tc.chosen != nil {
				var got []string
				for _, n := range d.Nodes {
					got = append(got, n.Name)
				}
				if strings.Join(got, ",") != strings.Join(tc.chosen, ",") {
					t.Errorf("chosen %v, want %v", got, tc.chosen)
				}
			}
			for name, src := range tc.sources {
				found := false
				for _, n := range d.Nodes {
					if n.Name == name {
						found = true
						if n.Write == nil || n.Write.Source != src {
							t.Errorf("node %s: write %+v, want source %s", name, n.Write, src)
						}
					}
				}
				if !found {
					t.Errorf("node %s not chosen", name)
				}
			}
			for _, m := range tc.msg {
				if !strings.Contains(d.Message, m) {
					t.Errorf("message lacks %q:\n%s", m, d.Message)
				}
			}
			for _, n := range tc.note {
				if !strings.Contains(strings.Join(d.Notes, "\n"), n) {
					t.Errorf("notes lack %q:\n%s", n, strings.Join(d.Notes, "\n"))
				}
			}
			if len(d.Excluded) != tc.excluded {
				t.Errorf("excluded %v, want %d", d.Excluded, tc.excluded)
			}
			if _, err := json.Marshal(d); err != nil {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

func testbed2NoLinks() []Candidate {
	return []Candidate{node("a", 150e6, 300e6, 0), node("b", 150e6, 300e6, 0)}
}

func omnipathServers(n int) []Candidate {
	var out []Candidate
	for i := range n {
		out = append(out, Candidate{Name: "io" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Link: ev(100e9*64/66/8, SourceSpec)})
	}
	return out
}

// The chosen count is the smallest that meets the target: every count below it falls short.
func TestPlanChoosesTheSmallestCount(t *testing.T) {
	for _, target := range []float64{100e6, 150e6, 151e6, 300e6, 450e6, 1.2e9} {
		d, err := Plan(Request{Target: Target{Write: target}, Candidates: testbed(8), Local: true})
		if err != nil {
			t.Fatal(err)
		}
		want := int(math.Ceil(target / 150e6))
		if d.Count != want || d.State != StatePredicted {
			t.Errorf("target %g: %d nodes (%s), want %d: %s", target, d.Count, d.State, want, d.Message)
		}
		for _, st := range d.Steps {
			if st.Nodes < d.Count && st.Meets {
				t.Errorf("target %g: %d nodes already meet it", target, st.Nodes)
			}
		}
	}
}

// The prediction is internal/limits' stage-1 limit of the chosen nodes, to the byte.
func TestPlanUsesTheLimitsFormulas(t *testing.T) {
	d, err := Plan(Request{Target: Target{Write: 250e6, Read: 500e6, Margin: 0.1}, Candidates: testbed(4)})
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limits.Compute(d.Model)
	if err != nil {
		t.Fatal(err)
	}
	if d.Write.Predicted != lim.Write.Limit || d.Read.Predicted != lim.Read.Limit || d.Read.Formula != lim.Read.Formula ||
		!strings.Contains(d.Read.Formula, "co-located") {
		t.Errorf("decision %v %v, limits %v %v", d.Write.Predicted, d.Read.Predicted, lim.Write.Limit, lim.Read.Limit)
	}
}

func TestPlanInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"no figure", Request{Candidates: testbed(1)}, "at least one figure"},
		{"negative", Request{Target: Target{Write: -1}}, "must not be negative"},
		{"absurd", Request{Target: Target{Write: 1e30}}, "faster than any real hardware"},
		{"margin", Request{Target: Target{Write: 1, Margin: 2}}, "margin must be from 0 to 1"},
		{"check more than given", Request{Target: Target{Write: 1}, Count: 3, Candidates: testbed(2)}, "only 2 nodes given"},
		{"fixed clients for scratch", Request{Target: Target{Write: 1}, Local: true, FixedClients: &limits.Clients{}}, "fixed client side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Plan(tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestBest(t *testing.T) {
	fresh := measured(100, time.Minute)
	stale := measured(90, 2*time.Hour)
	for _, tc := range []struct {
		name string
		evs  []Evidence
		want Source
		val  float64
		note string
	}{
		{"nothing", nil, SourceUnknown, 0, ""},
		{"fresh measurement first", []Evidence{{Value: 1, Source: SourceSpec}, fresh, {Value: 2, Source: SourceLabel}}, SourceMeasured, 100, ""},
		{"spec before label", []Evidence{{Value: 2, Source: SourceLabel}, {Value: 1, Source: SourceSpec}}, SourceSpec, 1, ""},
		{"label before discovered", []Evidence{{Value: 3, Source: SourceDiscovered}, {Value: 2, Source: SourceLabel}}, SourceLabel, 2, ""},
		{"discovered before stale", []Evidence{stale, {Value: 3, Source: SourceDiscovered}}, SourceDiscovered, 3, "stale (older than 1h)"},
		{"stale alone", []Evidence{stale}, SourceMeasuredStale, 90, "only a stale measurement"},
		{"newest of two fresh", []Evidence{measured(1, 30*time.Minute), measured(2, time.Minute)}, SourceMeasured, 2, ""},
		{"future time is stale", []Evidence{{Value: 5, Source: SourceMeasured, MeasuredTime: now.Add(time.Hour)}}, SourceMeasuredStale, 5, "future"},
		{"no time is stale", []Evidence{{Value: 5, Source: SourceMeasured}}, SourceMeasuredStale, 5, "unknown time"},
		{"zero and NaN are absent", []Evidence{{Value: 0, Source: SourceMeasured, MeasuredTime: now}, {Value: math.NaN(), Source: SourceSpec}, {Value: 4, Source: SourceLabel}}, SourceLabel, 4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Best(tc.evs, now, time.Hour)
			if got.Source != tc.want || (tc.val != 0 && got.Value != tc.val) || !strings.Contains(got.Note, tc.note) {
				t.Errorf("got %+v, want %s %g note %q", got, tc.want, tc.val, tc.note)
			}
		})
	}
	// reuse disabled (0s): every measurement is stale.
	if got := Best([]Evidence{fresh}, now, 0); got.Source != SourceMeasuredStale {
		t.Errorf("with no reuse window: %+v", got)
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[float64]string{512: "512 B", 1 << 30: "1 GiB", 7461 << 20: "7.29 GiB", 1.5 * (1 << 40): "1.5 TiB"} {
		if got := limits.FormatCapacity(in); got != want {
			t.Errorf("limits.FormatCapacity(%g) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[time.Duration]string{time.Hour: "1h", 90 * time.Second: "1m30s", 150 * time.Minute: "2h30m", 0: "0s"} {
		if got := formatDuration(in); got != want {
			t.Errorf("formatDuration(%s) = %q, want %q", in, got, want)
		}
	}
}
