package limits

import (
	"math"
	"os"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// omnipath is METHOD.md's worked example: 64 client nodes x 32 processes, 5 I/O nodes,
// Omni-Path 100 Gbit/s with 64b/66b, non-blocking fabric, devices not given.
func omnipath() Uniform {
	l := &Link{RateBitsPerSecond: 100e9, Encoding: Encoding64b66b}
	return Uniform{ClientNodes: 64, ProcessesPerNode: 32, ClientLink: l, ServerNodes: 5, ServerLink: l}
}

func mustCompute(t *testing.T, u Uniform) (Hardware, Limits) {
	t.Helper()
	h, err := u.Expand()
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	lim, err := Compute(h)
	if err != nil {
		t.Fatalf("Compute: %v", err)
	}
	return h, lim
}

func approx(t *testing.T, what string, got Figure, want float64) {
	t.Helper()
	if !got.Known() {
		t.Errorf("%s = %v, want %g", what, got, want)
		return
	}
	if math.Abs(got.Value()-want) > 1e-6*math.Abs(want)+0.5 {
		t.Errorf("%s = %.3f, want %.3f", what, got.Value(), want)
	}
}

func TestWorkedExample(t *testing.T) {
	h, lim := mustCompute(t, omnipath())
	for _, op := range Operations {
		ol := lim.For(op)
		if v, _ := ol.Limit.Int64(); v != 60606060606 {
			t.Errorf("%s limit = %d, want 60606060606 (60.606 GB/s)", op, v)
		}
		if ol.Bottleneck != ComponentServers {
			t.Errorf("%s bottleneck = %s, want servers", op, ol.Bottleneck)
		}
		// Bc = 64 links of 12.121 GB/s (METHOD.md quotes 3103.03 GB/s, 4x this; see the report).
		approx(t, "Bc", ol.Clients, 64*100e9*64/66/8)
		approx(t, "Bnet", ol.Network, 5*100e9*64/66/8)
		if ol.Devices.Known() {
			t.Errorf("Bd = %v, want unknown", ol.Devices)
		}
		if ol.ParallelismLimit == nil || *ol.ParallelismLimit != 160 {
			t.Errorf("P = %v, want 160 (5 links x 32 processes)", ol.ParallelismLimit)
		}
		if ol.Limit.String() != "60.606 GB/s" {
			t.Errorf("limit prints as %q", ol.Limit.String())
		}
		for _, want := range []string{"limit = min(Bc, Bs, Bnet) = Bs = 60.606 GB/s (servers)", "Bnet = min(Bc, Bs)",
			"non-blocking", "64/66 (64b/66b)", "Bd unknown"} {
			if !strings.Contains(ol.Formula, want) {
				t.Errorf("%s formula lacks %q:\n%s", op, want, ol.Formula)
			}
		}
	}
	if len(lim.Warnings) != 2 || lim.Warnings[0].Reason != WarningUnknownLimit {
		t.Errorf("warnings = %+v, want UnknownLimit for write and read", lim.Warnings)
	}

	f, err := os.Open("../../testdata/limits/omnipath-sweep.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	points, err := ParseSweepCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 49 {
		t.Fatalf("%d points, want 49", len(points))
	}
	sw, err := AnalyzeSweep(h, lim, points, SweepOptions{MinEfficiency: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Read != nil {
		t.Errorf("read result %+v from a write-only sweep", sw.Read)
	}
	r := sw.Write
	if v, _ := r.BestBytesPerSecond.Int64(); v != 50943200000 {
		t.Errorf("best = %d, want 50943200000 (50.9432 GB/s)", v)
	}
	if r.Best != (SweepPoint{32, 32}) {
		t.Errorf("best at %v, want 32 x 32", r.Best)
	}
	if r.Plateau != (SweepPoint{16, 8}) {
		t.Errorf("plateau at %v, want 16 x 8", r.Plateau)
	}
	if r.Efficiency == nil || math.Abs(float64(*r.Efficiency)-50943.2/60606.0606) > 1e-6 {
		t.Fatalf("efficiency = %v, want 0.8406", r.Efficiency)
	}
	if got := math.Round(float64(*r.Efficiency)*100) / 100; got != 0.84 {
		t.Errorf("efficiency rounds to %.2f, want 0.84 (the paper's)", got)
	}
	if r.EfficiencyPerMille() != 841 {
		t.Errorf("per mille = %d, want 841", r.EfficiencyPerMille())
	}
	if r.ParallelismLimit == nil || *r.ParallelismLimit != 40 {
		t.Errorf("measured P = %v, want 40 (5 links at the plateau's 8 per node)", r.ParallelismLimit)
	}
	if r.ExceedsLimit {
		t.Error("ExceedsLimit on the paper's table")
	}
	for _, w := range sw.Warnings {
		t.Errorf("unexpected warning %+v", w)
	}
}

func TestEncodings(t *testing.T) {
	for _, tc := range []struct {
		enc  string
		want float64 // data bytes/s of a 10 Gbit/s link
	}{
		{"8b/10b", 1e9},
		{"64b/66b", 10e9 * 64 / 66 / 8},
		{"128b/130b", 10e9 * 128 / 130 / 8},
		{"256b/257b", 10e9 * 256 / 257 / 8},
		{"none", 1.25e9},
	} {
		t.Run(tc.enc, func(t *testing.T) {
			e, err := ParseEncoding(tc.enc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Link{RateBitsPerSecond: 10e9, Encoding: e}.DataBytesPerSecond()
			if err != nil || math.Abs(got-tc.want) > 1e-3 {
				t.Errorf("data rate = %g, %v; want %g", got, err, tc.want)
			}
			// The encoding reaches the limit: 2 servers of one link each.
			l := &Link{RateBitsPerSecond: 10e9, Encoding: e}
			_, lim := mustCompute(t, Uniform{ClientNodes: 8, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 2, ServerLink: l})
			approx(t, "limit", lim.Write.Limit, 2*tc.want)
		})
	}
	for _, bad := range []string{"", "64b/65b", "8B/10B", "64b66b", " none"} {
		if _, err := ParseEncoding(bad); err == nil || !strings.Contains(err.Error(), "8b/10b, 64b/66b") {
			t.Errorf("ParseEncoding(%q) = %v, want an error listing the encodings", bad, err)
		}
	}
	if _, err := (Uniform{ClientNodes: 1, ProcessesPerNode: 1, ServerNodes: 1,
		ClientLink: &Link{RateBitsPerSecond: 1e9, Encoding: "9b/10b"}}).Expand(); err == nil {
		t.Error("Expand accepted an unknown encoding")
	}
}

func TestCompute(t *testing.T) {
	gbe100 := &Link{RateBitsPerSecond: 100e9, Encoding: EncodingNone} // 12.5 GB/s
	type want struct {
		limit      float64 // NaN: unknown
		bottleneck Component
		devices    float64 // NaN: unknown
		network    float64 // NaN: not applicable
	}
	nan := math.NaN()
	for _, tc := range []struct {
		name        string
		u           Uniform
		write, read want
		formula     []string
		warnings    int
	}{
		{
			name: "network-bound fabric",
			u: Uniform{ClientNodes: 16, ProcessesPerNode: 4, ClientLink: gbe100, ServerNodes: 8, ServerLink: gbe100,
				BisectionBitsPerSecond: ptr(400e9)},
			write:    want{50e9, ComponentNetwork, nan, 50e9},
			read:     want{50e9, ComponentNetwork, nan, 50e9},
			formula:  []string{"Bnet = bisection = 50 GB/s (fabric bisection 50 GB/s)"},
			warnings: 2,
		},
		{
			name: "service traffic",
			u: Uniform{ClientNodes: 16, ProcessesPerNode: 4, ClientLink: gbe100, ServerNodes: 4, ServerLink: gbe100,
				ServiceTrafficBitsPerSecond: 40e9},
			write:    want{45e9, ComponentNetwork, nan, 45e9},
			read:     want{45e9, ComponentNetwork, nan, 45e9},
			formula:  []string{"(min(Bc, Bs) - service traffic)", "service traffic 5 GB/s subtracted"},
			warnings: 2,
		},
		{
			name: "client-bound",
			u: Uniform{ClientNodes: 2, ProcessesPerNode: 4, ClientLink: gbe100, ServerNodes: 4, ServerLink: gbe100,
				DeviceWriteBytesPerSecond: ptr(7e9), DeviceReadBytesPerSecond: ptr(7e9)},
			write: want{25e9, ComponentClients, 28e9, 25e9},
			read:  want{25e9, ComponentClients, 28e9, 25e9},
		},
		{
			name: "device-bound, read and write differ",
			u: Uniform{ClientNodes: 16, ProcessesPerNode: 8, ClientLink: gbe100, ServerNodes: 4, ServerLink: gbe100,
				DevicesPerNode: 2, DeviceWriteBytesPerSecond: ptr(2e9), DeviceReadBytesPerSecond: ptr(5e9)},
			write:   want{16e9, ComponentDevices, 16e9, 50e9},
			read:    want{40e9, ComponentDevices, 40e9, 50e9},
			formula: []string{"Bd = nodes x devices per node x device", "= 4 x 2 x"},
		},
		{
			name: "write device known, read not",
			u: Uniform{ClientNodes: 16, ProcessesPerNode: 8, ClientLink: gbe100, ServerNodes: 4, ServerLink: gbe100,
				DeviceWriteBytesPerSecond: ptr(3e9)},
			write:    want{12e9, ComponentDevices, 12e9, 50e9},
			read:     want{50e9, ComponentServers, nan, 50e9},
			warnings: 1,
		},
		{
			// 4 nodes, data striped over all 4: 3/4 of each node's data crosses its link in
			// each direction, so the links allow 4 x 12.5 GB/s x 4/3.
			name: "co-located, link-bound",
			u: Uniform{ClientNodes: 4, ProcessesPerNode: 8, ClientLink: gbe100, ServerNodes: 4, ServerLink: gbe100,
				Colocated: true, DeviceWriteBytesPerSecond: ptr(20e9), DeviceReadBytesPerSecond: ptr(20e9)},
			write:   want{4 * 12.5e9 * 4 / 3, ComponentNetwork, 80e9, 4 * 12.5e9 * 4 / 3},
			read:    want{4 * 12.5e9 * 4 / 3, ComponentNetwork, 80e9, 4 * 12.5e9 * 4 / 3},
			formula: []string{"co-located", "(Ns-1)/Ns = 3/4", "full duplex", "x Ns/(Ns-1)"},
		},
		{
			name: "co-located, device-bound",
			u: Uniform{ClientNodes: 8, ProcessesPerNode: 8, ClientLink: gbe100, ServerNodes: 8, ServerLink: gbe100,
				Colocated: true, DeviceWriteBytesPerSecond: ptr(3e9), DeviceReadBytesPerSecond: ptr(6e9)},
			write: want{24e9, ComponentDevices, 24e9, 8 * 12.5e9 * 8 / 7},
			read:  want{48e9, ComponentDevices, 48e9, 8 * 12.5e9 * 8 / 7},
		},
		{
			name: "co-located, single node: no network term",
			u: Uniform{ClientNodes: 1, ProcessesPerNode: 8, ServerNodes: 1, Colocated: true,
				DeviceWriteBytesPerSecond: ptr(3e9), DeviceReadBytesPerSecond: ptr(6e9)},
			write:   want{3e9, ComponentDevices, 3e9, nan},
			read:    want{6e9, ComponentDevices, 6e9, nan},
			formula: []string{"single node (Ns = 1)", "no network term", "limit = Bd"},
		},
		{
			name: "local: no network term",
			u: Uniform{ServerNodes: 3, Local: true, DevicesPerNode: 2, ClientLink: gbe100,
				DeviceWriteBytesPerSecond: ptr(1e9), DeviceReadBytesPerSecond: ptr(2e9)},
			write:   want{6e9, ComponentDevices, 6e9, nan},
			read:    want{12e9, ComponentDevices, 12e9, nan},
			formula: []string{"local (private node-local scratch)", "no data crosses the network", "limit = Bd = 6 GB/s"},
		},
		{
			name:     "local, devices unknown: limit unknown",
			u:        Uniform{ServerNodes: 3, Local: true},
			write:    want{nan, ComponentUnknown, nan, nan},
			read:     want{nan, ComponentUnknown, nan, nan},
			formula:  []string{"limit = Bd, unknown", "not given"},
			warnings: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, lim := mustCompute(t, tc.u)
			for _, c := range []struct {
				op Operation
				w  want
			}{{Write, tc.write}, {Read, tc.read}} {
				ol := lim.For(c.op)
				if math.IsNaN(c.w.limit) {
					if ol.Limit.Known() {
						t.Errorf("%s limit = %v, want unknown", c.op, ol.Limit)
					}
				} else {
					approx(t, string(c.op)+" limit", ol.Limit, c.w.limit)
				}
				if ol.Bottleneck != c.w.bottleneck {
					t.Errorf("%s bottleneck = %s, want %s", c.op, ol.Bottleneck, c.w.bottleneck)
				}
				if math.IsNaN(c.w.devices) {
					if ol.Devices.Known() {
						t.Errorf("%s Bd = %v, want unknown", c.op, ol.Devices)
					}
				} else {
					approx(t, string(c.op)+" Bd", ol.Devices, c.w.devices)
				}
				if math.IsNaN(c.w.network) {
					if !ol.Network.NotApplicable() || !ol.Clients.NotApplicable() || ol.ParallelismLimit != nil {
						t.Errorf("%s Bnet = %v, Bc = %v, P = %v; want n/a", c.op, ol.Network, ol.Clients, ol.ParallelismLimit)
					}
				} else {
					approx(t, string(c.op)+" Bnet", ol.Network, c.w.network)
				}
				for _, f := range tc.formula {
					if !strings.Contains(ol.Formula, f) && c.op == Write {
						t.Errorf("write formula lacks %q:\n%s", f, ol.Formula)
					}
				}
			}
			if len(lim.Warnings) != tc.warnings {
				t.Errorf("warnings = %+v, want %d", lim.Warnings, tc.warnings)
			}
		})
	}
}

func TestComputeHeterogeneous(t *testing.T) {
	// Stage 2: measured, unequal nodes reuse the same formulas.
	h := Hardware{
		Clients: Clients{Nodes: 3, ProcessesPerNode: 4, Link: Bytes(10e9)},
		Servers: []ServerNode{
			{Name: "a", Link: Bytes(10e9), Devices: 1, DeviceWrite: Bytes(3e9), DeviceRead: Bytes(6e9)},
			{Name: "b", Link: Bytes(9e9), Devices: 1, DeviceWrite: Bytes(2e9), DeviceRead: Bytes(6e9)},
			{Name: "c", Link: Bytes(8e9), Devices: 2, DeviceWrite: Bytes(3e9)},
		},
		Colocated: true,
	}
	lim, err := Compute(h)
	if err != nil {
		t.Fatal(err)
	}
	approx(t, "Bs", lim.Write.Servers, 27e9*3/2)
	approx(t, "Bd write", lim.Write.Devices, 11e9)
	if lim.Read.Devices.Known() {
		t.Errorf("read Bd = %v, want unknown (node c's read figure is unknown)", lim.Read.Devices)
	}
	if !strings.Contains(lim.Read.Formula, "node c") || !strings.Contains(lim.Write.Formula, "sum over 3 nodes") {
		t.Errorf("formulas:\n%s\n%s", lim.Write.Formula, lim.Read.Formula)
	}
}

func TestComputeInvalid(t *testing.T) {
	l := &Link{RateBitsPerSecond: 100e9, Encoding: EncodingNone}
	for _, tc := range []struct {
		name string
		u    Uniform
		want string
	}{
		{"zero client nodes", Uniform{ClientNodes: 0, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l}, "clients.nodes"},
		{"zero server nodes", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 0, ServerLink: l}, "servers.nodes"},
		{"zero processes", Uniform{ClientNodes: 1, ProcessesPerNode: 0, ClientLink: l, ServerNodes: 1, ServerLink: l}, "processesPerNode"},
		{"huge server count", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1 << 30, ServerLink: l}, "servers.nodes"},
		{"no client link", Uniform{ClientNodes: 2, ProcessesPerNode: 1, ServerNodes: 1, ServerLink: l}, "clients.link"},
		{"no server link", Uniform{ClientNodes: 2, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1}, "server node 0"},
		{"zero rate", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: &Link{0, EncodingNone}, ServerNodes: 1, ServerLink: l}, "positive"},
		{"NaN device", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l,
			DeviceWriteBytesPerSecond: ptr(math.NaN())}, "device write"},
		{"co-located counts differ", Uniform{ClientNodes: 3, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 2, ServerLink: l,
			Colocated: true}, "colocated"},
		{"negative service traffic", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l,
			ServiceTrafficBitsPerSecond: -1}, "serviceTraffic"},
		{"service traffic eats the fabric", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l,
			ServiceTrafficBitsPerSecond: 100e9}, "leaves nothing"},
		// Absurd magnitudes are refused with the bound, not clamped into a limit.
		{"1e29 TB/s link", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: &Link{8e41, EncodingNone}, ServerNodes: 1, ServerLink: l},
			"link rate 8e+41 bit/s is more than 100 Tbit/s"},
		{"1e300 device", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l,
			DeviceReadBytesPerSecond: ptr(1e300)}, "device read bandwidth: 1e+300 bytes/s is more than 1 TB/s"},
		{"device sum", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: MaxNodes, ServerLink: l,
			DevicesPerNode: MaxDevicesPerNode, DeviceWriteBytesPerSecond: ptr(1e12), Local: true}, "devices: the write bandwidths add up to"},
		{"device count", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l,
			DevicesPerNode: 1 << 30}, "devices.perNode must be from 1 to 4096"},
		{"huge bisection", Uniform{ClientNodes: 1, ProcessesPerNode: 1, ClientLink: l, ServerNodes: 1, ServerLink: l,
			BisectionBitsPerSecond: ptr(1e30)}, "fabric.bisectionBitsPerSecond: as a data rate, 1.25e+29 bytes/s is more than 100 PB/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tc.u.Expand()
			if err == nil {
				_, err = Compute(h)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestSweepVerdicts(t *testing.T) {
	h, lim := mustCompute(t, omnipath())
	for _, tc := range []struct {
		name    string
		points  []Point
		opt     SweepOptions
		reasons []string
		exceeds bool
	}{
		{
			name:    "above the system limit: caching suspected",
			points:  []Point{{8, 8, Write, 40e9}, {64, 64, Write, 70e9}, {64, 32, Read, 50e9}},
			reasons: []string{WarningExceedsLimit},
			exceeds: true,
		},
		{
			// Below the system limit, but more than one client node's link can carry.
			name:    "above what the point's client links carry",
			points:  []Point{{1, 8, Write, 15e9}, {8, 8, Write, 40e9}},
			reasons: []string{WarningExceedsLimit},
			exceeds: true,
		},
		{
			name:    "below expectation",
			points:  []Point{{8, 8, Write, 20e9}, {16, 8, Write, 25e9}},
			opt:     SweepOptions{MinEfficiency: 0.5},
			reasons: []string{WarningBelowExpectation},
		},
		{
			name:   "below expectation, check off",
			points: []Point{{8, 8, Write, 20e9}, {16, 8, Write, 25e9}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw, err := AnalyzeSweep(h, lim, tc.points, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range sw.Warnings {
				got = append(got, w.Reason)
				if w.Operation != Write {
					t.Errorf("warning %+v is not about writes", w)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.reasons, ",") {
				t.Errorf("warnings %v, want %v: %+v", got, tc.reasons, sw.Warnings)
			}
			if sw.Write.ExceedsLimit != tc.exceeds {
				t.Errorf("ExceedsLimit = %v, want %v", sw.Write.ExceedsLimit, tc.exceeds)
			}
			if sw.Read != nil && sw.Read.ExceedsLimit {
				t.Errorf("read flagged: %+v", sw.Read)
			}
		})
	}

	// Ties: the best is the smallest point; the plateau prefers fewer nodes.
	sw, err := AnalyzeSweep(h, lim, []Point{{4, 8, Write, 10e9}, {2, 16, Write, 10e9}, {8, 8, Write, 9.6e9}}, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Write.Best != (SweepPoint{2, 16}) || sw.Write.Plateau != (SweepPoint{2, 16}) {
		t.Errorf("best %v plateau %v, want 2 x 16 for both", sw.Write.Best, sw.Write.Plateau)
	}

	for _, bad := range [][]Point{
		nil,
		{{0, 1, Write, 1}},
		{{1, 0, Write, 1}},
		{{1, 1, "append", 1}},
		{{1, 1, Write, -1}},
		{{1, 1, Write, math.Inf(1)}},
		{{1, 1, Write, 1}, {1, 1, Write, 2}},
	} {
		if _, err := AnalyzeSweep(h, lim, bad, SweepOptions{}); err == nil {
			t.Errorf("AnalyzeSweep(%v) accepted invalid points", bad)
		}
	}
}

func TestSweepLocal(t *testing.T) {
	// Private scratch: a point on 1 of 4 nodes is limited by that node's devices.
	h, lim := mustCompute(t, Uniform{ServerNodes: 4, Local: true, DeviceWriteBytesPerSecond: ptr(1e9),
		DeviceReadBytesPerSecond: ptr(2e9)})
	sw, err := AnalyzeSweep(h, lim, []Point{{1, 4, Write, 1.5e9}, {4, 4, Write, 3.6e9}, {4, 4, Read, 7.9e9}}, SweepOptions{MinEfficiency: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if !sw.Write.ExceedsLimit || sw.Read.ExceedsLimit {
		t.Errorf("write exceeds %v, read exceeds %v; want true, false", sw.Write.ExceedsLimit, sw.Read.ExceedsLimit)
	}
	// The warning names the point with its own limit, the devices of its one node.
	want := PointAbove{Point: SweepPoint{1, 4}, BytesPerSecond: 1.5e9, Limit: Bytes(1e9), Why: "devices of 1 nodes", Bottleneck: ComponentDevices}
	if len(sw.Warnings) == 0 || sw.Warnings[0].Above == nil || *sw.Warnings[0].Above != want {
		t.Errorf("warnings %+v, want the first above %+v", sw.Warnings, want)
	}
	if sw.Write.ParallelismLimit != nil {
		t.Errorf("P = %d for private scratch, want none", *sw.Write.ParallelismLimit)
	}
	if got := float64(*sw.Read.Efficiency); math.Abs(got-7.9/8) > 1e-9 {
		t.Errorf("read efficiency %g", got)
	}
}

func TestStragglers(t *testing.T) {
	// Like the paper's stage 4: two of five I/O nodes slower (they also hosted other services).
	figs := []NodeFigure{
		{"io-1", Write, Bytes(10.4e9)}, {"io-2", Write, Bytes(10.1e9)}, {"io-3", Write, Bytes(7.9e9)},
		{"io-4", Write, Bytes(10.3e9)}, {"io-5", Write, Bytes(7.5e9)},
		{"io-1", Read, Bytes(10e9)}, {"io-2", Read, Bytes(10e9)}, {"io-3", Read, Bytes(13e9)},
	}
	st, err := FindStragglers(figs, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(st.Nodes, ",") != "io-3,io-5" {
		t.Errorf("stragglers %v, want io-3,io-5", st.Nodes)
	}
	if st.Medians[Write] != 10.1e9 || st.Medians[Read] != 10e9 {
		t.Errorf("medians %v", st.Medians)
	}
	var got []string
	for _, w := range st.Warnings {
		if w.Reason != WarningStragglers {
			t.Errorf("reason %s", w.Reason)
		}
		got = append(got, string(w.Operation)+":"+w.Node)
	}
	if strings.Join(got, " ") != "write:io-3 write:io-5 read:io-3" {
		t.Errorf("warnings %v", got)
	}
	if !strings.Contains(st.Warnings[0].Message, "22% below the median 10.1 GB/s of 5 nodes") {
		t.Errorf("message %q", st.Warnings[0].Message)
	}
	if !strings.Contains(st.Warnings[2].Message, "above the median") {
		t.Errorf("message %q", st.Warnings[2].Message)
	}

	// Within tolerance: nothing. One node: no median to compare with.
	st, err = FindStragglers([]NodeFigure{{"a", Write, Bytes(10e9)}, {"b", Write, Bytes(9e9)}, {"c", Read, Bytes(1)}}, 0.2)
	if err != nil || len(st.Warnings) != 0 || len(st.Nodes) != 0 {
		t.Errorf("got %+v, %v; want nothing", st, err)
	}
	for _, bad := range [][]NodeFigure{
		{{"", Write, Bytes(1)}},
		{{"a", "copy", Bytes(1)}},
		{{"a", Write, Unknown}},
		{{"a", Write, Bytes(-1)}},
		{{"a", Write, Bytes(1)}, {"a", Write, Bytes(2)}},
	} {
		if _, err := FindStragglers(bad, 0.2); err == nil {
			t.Errorf("FindStragglers(%v) accepted invalid figures", bad)
		}
	}
	if _, err := FindStragglers(figs, 0); err == nil {
		t.Error("share 0 accepted")
	}
}

func TestEfficiencyPerMille(t *testing.T) {
	for _, tc := range []struct {
		eta  float64
		want int32
	}{{0.8405628, 841}, {0.8404, 840}, {0.8405, 841}, {1, 1000}, {0, 0}, {-1, 0}, {math.NaN(), 0}, {1.2, 1200}} {
		if got := EfficiencyPerMille(tc.eta); got != tc.want {
			t.Errorf("EfficiencyPerMille(%g) = %d, want %d", tc.eta, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{60606060606.06, "60.606 GB/s"}, {378787878.8, "378.788 MB/s"}, {12e9, "12 GB/s"},
		{775757575757.6, "775.758 GB/s"}, {999.9999e9, "1 TB/s"}, {512, "512 B/s"}, {0, "0 B/s"},
	} {
		if got := FormatBytesPerSecond(tc.v); got != tc.want {
			t.Errorf("FormatBytesPerSecond(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := FormatBytesPerSecondFixed(1.2e9, 2); got != "1.20 GB/s" {
		t.Errorf("fixed: %q", got)
	}
	if got := FormatBitsPerSecond(100e9); got != "100 Gbit/s" {
		t.Errorf("bits: %q", got)
	}
}

func TestSweepToleranceForMeasuredLimits(t *testing.T) {
	h := Hardware{Local: true, Clients: Clients{Nodes: 2, ProcessesPerNode: 1}, Servers: []ServerNode{
		{Name: "a", Devices: 1, DeviceWrite: Bytes(150.4e6), DeviceRead: Bytes(300e6)},
		{Name: "b", Devices: 1, DeviceWrite: Bytes(150.9e6), DeviceRead: Bytes(300e6)},
	}}
	lim, err := Compute(h)
	if err != nil {
		t.Fatal(err)
	}
	// Measured on the testbed: 301.483 MB/s against a measured 301.3 MB/s limit.
	pts := []Point{{Nodes: 2, ProcessesPerNode: 4, Operation: Write, BytesPerSecond: 301.483e6}}
	strict, err := AnalyzeSweep(h, lim, pts, SweepOptions{})
	if err != nil || !strict.Write.ExceedsLimit {
		t.Fatalf("without tolerance a figure above the limit must be flagged: %+v %v", strict.Write, err)
	}
	tol, err := AnalyzeSweep(h, lim, pts, SweepOptions{Tolerance: 0.05})
	if err != nil || tol.Write.ExceedsLimit {
		t.Fatalf("0.06%% above a measured limit is noise: %+v %v", tol.Write, err)
	}
	// Caching is still caught: 2 GB/s from 300 MB/s of devices.
	cached, _ := AnalyzeSweep(h, lim, []Point{{Nodes: 2, ProcessesPerNode: 4, Operation: Write, BytesPerSecond: 2e9}}, SweepOptions{Tolerance: 0.05})
	if !cached.Write.ExceedsLimit {
		t.Fatal("a figure far above the limit must be flagged")
	}
	if _, err := AnalyzeSweep(h, lim, pts, SweepOptions{Tolerance: -0.1}); err == nil {
		t.Fatal("a negative tolerance is invalid")
	}
}

// TestLinksMissing: a shared file system without a known client or server link has no
// stage-1 limit (the operator waits for stage 2's link measurement); the local engine and a
// co-located single node need no link.
func TestLinksMissing(t *testing.T) {
	link := Bytes(1.25e9)
	servers := func(links ...Figure) []ServerNode {
		var out []ServerNode
		for _, l := range links {
			out = append(out, ServerNode{Link: l})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		h    Hardware
		want bool
	}{
		{"every link known", Hardware{Clients: Clients{Nodes: 2, ProcessesPerNode: 1, Link: link}, Servers: servers(link, link)}, false},
		{"no client link", Hardware{Clients: Clients{Nodes: 2, ProcessesPerNode: 1}, Servers: servers(link, link)}, true},
		{"one server link unknown", Hardware{Clients: Clients{Nodes: 2, ProcessesPerNode: 1, Link: link}, Servers: servers(link, Unknown)}, true},
		{"co-located, none known", Hardware{Clients: Clients{Nodes: 2, ProcessesPerNode: 1}, Servers: servers(Unknown, Unknown), Colocated: true}, true},
		{"co-located on one node", Hardware{Clients: Clients{Nodes: 1, ProcessesPerNode: 1}, Servers: servers(Unknown), Colocated: true}, false},
		{"local", Hardware{Clients: Clients{Nodes: 2, ProcessesPerNode: 1}, Servers: servers(Unknown, Unknown), Local: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.h.LinksMissing(); got != tc.want {
				t.Errorf("LinksMissing = %v, want %v", got, tc.want)
			}
			if _, err := Compute(tc.h); tc.want && err == nil {
				t.Errorf("Compute accepted an input with a missing link")
			}
		})
	}
}
