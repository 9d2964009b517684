package limits

import (
	"strings"
	"testing"
)

func uniformHW(t *testing.T, clients, servers, ppn int, colocated bool, rate float64, enc Encoding, deviceWrite *float64) Hardware {
	t.Helper()
	l := &Link{RateBitsPerSecond: rate, Encoding: enc}
	h, err := Uniform{ClientNodes: clients, ServerNodes: servers, ProcessesPerNode: ppn, ClientLink: l, ServerLink: l,
		Colocated: colocated, DeviceWriteBytesPerSecond: deviceWrite}.Expand()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// (6) P = min(Bs, Bnet, Bd) / C with the C of (1): co-located, Bc = M x N x C x Ns/(Ns-1),
// so a process's channel is C x Ns/(Ns-1) and P counts processes of that channel.
func TestParallelismLimit(t *testing.T) {
	half := 0.5e9
	for _, c := range []struct {
		name             string
		clients, servers int
		ppn              int
		colocated        bool
		rate             float64
		enc              Encoding
		deviceWrite      *float64
		want             int64
		formula          string
	}{
		// Co-located 4 x 4: 16 processes; without the Ns/(Ns-1) on C it would be 22 = ceil(4 x 1.25 GB/s x 4/3 / (1.25 GB/s / 4)).
		{"co-located 4 x 4, links", 4, 4, 4, true, 10e9, EncodingNone, nil, 16,
			"P = min(Bs, Bnet) / (C x Ns/(Ns-1)) = 6.667 GB/s / (312.5 MB/s x 4/3) = 16 processes (4 client nodes at 4 per node)"},
		{"co-located 2 x 8, links", 2, 2, 8, true, 10e9, EncodingNone, nil, 16, ""},
		// Devices 4 x 0.5 GB/s = 2 GB/s: 2 GB/s / (312.5 MB/s x 4/3) = 4.8 (was 6.4, rounded up to 7).
		{"co-located 4 x 4, devices", 4, 4, 4, true, 10e9, EncodingNone, &half, 5, ""},
		// The paper's shared case is unchanged: 5 links x 32 processes.
		{"shared, the paper's", 64, 5, 32, false, 100e9, Encoding64b66b, nil, 160,
			"P = min(Bs, Bnet) / C = 60.606 GB/s / 378.788 MB/s = 160 processes (5 client nodes at 32 per node)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := uniformHW(t, c.clients, c.servers, c.ppn, c.colocated, c.rate, c.enc, c.deviceWrite)
			lim, err := Compute(h)
			if err != nil {
				t.Fatal(err)
			}
			ol := lim.Write
			if ol.ParallelismLimit == nil {
				t.Fatalf("no P, want %d", c.want)
			}
			if *ol.ParallelismLimit != c.want {
				t.Fatalf("P = %d, want %d\n%s", *ol.ParallelismLimit, c.want, ol.Formula)
			}
			if c.formula != "" && !strings.Contains(ol.Formula, c.formula) {
				t.Errorf("formula lacks %q:\n%s", c.formula, ol.Formula)
			}
		})
	}
}

// When the links limit a co-located burst buffer, P is at most the processes that exist.
func TestParallelismLimitColocatedAtMostProcesses(t *testing.T) {
	for m := 2; m <= 16; m++ {
		for n := 1; n <= 64; n *= 2 {
			h := uniformHW(t, m, m, n, true, 10e9, Encoding64b66b, nil)
			lim, err := Compute(h)
			if err != nil {
				t.Fatal(err)
			}
			if p := *lim.Write.ParallelismLimit; p != int64(m*n) {
				t.Errorf("%d nodes x %d: P = %d, want %d (every process, no more)", m, n, p, m*n)
			}
		}
	}
}

// Stage 3's P at the plateau's N follows the same channel.
func TestSweepParallelismLimitColocated(t *testing.T) {
	h := uniformHW(t, 4, 4, 1, true, 10e9, EncodingNone, nil)
	lim, err := Compute(h)
	if err != nil {
		t.Fatal(err)
	}
	var pts []Point
	for _, n := range []int{1, 2, 4} {
		// 4 nodes x 2 reach the plateau: 4 x 2 x 0.8 GB/s = 6.4 GB/s of the 6.667 GB/s limit.
		b := float64(4*min(n, 2)) * 0.8e9
		pts = append(pts, Point{Nodes: 4, ProcessesPerNode: n, Operation: Write, BytesPerSecond: b})
	}
	sw, err := AnalyzeSweep(h, lim, pts, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := sw.Write
	if r.Plateau != (SweepPoint{4, 2}) {
		t.Fatalf("plateau at %v, want 4 x 2", r.Plateau)
	}
	// 6.667 GB/s / (1.25 GB/s / 2 x 4/3) = 8 = 4 x 2 (it was 6.667 / 0.625 = 10.7, so 11).
	if r.ParallelismLimit == nil {
		t.Fatal("no P, want 8")
	}
	if *r.ParallelismLimit != 8 {
		t.Errorf("P = %d, want 8", *r.ParallelismLimit)
	}
}
