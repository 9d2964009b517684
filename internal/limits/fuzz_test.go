package limits

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The sweep and monitoring files are users' own (kubectl beeburst estimate --sweep,
// --monitoring), and documented hardware is whatever a spec or a file says. The targets check
// that nothing panics, that what is accepted is within the bounds and reads back the same
// from its own CSV, and that no computed limit has to be clamped to be published.

func seedCSV(f *testing.F, extra ...string) {
	b, err := os.ReadFile("../../testdata/limits/omnipath-sweep.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(string(b[:len(b)/2]))
	for _, s := range extra {
		f.Add(s)
	}
}

func inBounds(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && v <= MaxBytesPerSecond }

func FuzzParseSweepCSV(f *testing.F) {
	seedCSV(f, "nodes,processesPerNode,operation,bytesPerSecond\n1,2,write,905600000\n2,1,read,1.5e9\n",
		"\ufeff# c\r\noperation, bytesPerSecond, Nodes, processesPerNode\r\n\r\nWRITE, 10, 4, 8\r\n",
		"nodes,processesPerNode,operation,bytesPerSecond\n1,1,write,1e300\n",
		"nodes,processesPerNode,operation,bytesPerSecond\n64,64,read,5.0310e10\n32,32,write,50943200000\n",
		"nodes,processesPerNode,operation,bytesPerSecond\n\"1\",\"1\",write,1\n",
		"nodes,processesPerNode,operation,bytesPerSecond\n1,1,write,1e400\n",
		"# c\n\ufeffnodes,processesPerNode,operation,bytesPerSecond\r\n", "", "\"")
	f.Fuzz(func(t *testing.T, in string) {
		pts, err := ParseSweepCSV(strings.NewReader(in))
		if err != nil {
			if pts != nil {
				t.Fatalf("points %v with error %v", pts, err)
			}
			return
		}
		if len(pts) == 0 {
			t.Fatal("no points and no error")
		}
		var b strings.Builder
		w := csv.NewWriter(&b)
		_ = w.Write(strings.Split(SweepCSVHeader, ","))
		for _, p := range pts {
			if err := p.validate(); err != nil || !inBounds(p.BytesPerSecond) {
				t.Fatalf("accepted %+v: %v", p, err)
			}
			_ = w.Write([]string{strconv.Itoa(p.Nodes), strconv.Itoa(p.ProcessesPerNode), string(p.Operation),
				strconv.FormatFloat(p.BytesPerSecond, 'g', -1, 64)})
		}
		w.Flush()
		again, err := ParseSweepCSV(strings.NewReader(b.String()))
		if err != nil || !reflect.DeepEqual(pts, again) {
			t.Fatalf("round trip: %v\n%v\n%v", err, pts, again)
		}
	})
}

func FuzzParseMonitoringCSV(f *testing.F) {
	seedCSV(f, "node,operation,bytesPerSecond\nio-1,write,10400000000\nio-2,read,1e9\n", "node,operation,bytesPerSecond\n\"a,b\",write,1\n",
		"node,operation,bytesPerSecond\n")
	f.Fuzz(func(t *testing.T, in string) {
		figs, err := ParseMonitoringCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		var b strings.Builder
		w := csv.NewWriter(&b)
		_ = w.Write(strings.Split(MonitoringCSVHeader, ","))
		for _, nf := range figs {
			if nf.Node == "" || strings.IndexFunc(nf.Node, unicode.IsControl) >= 0 || !nf.BytesPerSecond.Known() ||
				!inBounds(nf.BytesPerSecond.Value()) || (nf.Operation != Write && nf.Operation != Read) {
				t.Fatalf("accepted %+v", nf)
			}
			_ = w.Write([]string{nf.Node, string(nf.Operation), strconv.FormatFloat(nf.BytesPerSecond.Value(), 'g', -1, 64)})
		}
		w.Flush()
		again, err := ParseMonitoringCSV(strings.NewReader(b.String()))
		if err != nil || !reflect.DeepEqual(figs, again) {
			t.Fatalf("round trip: %v\n%v\n%v", err, figs, again)
		}
		if _, err := FindStragglers(figs, 0.2); err != nil && !strings.Contains(err.Error(), "has two") {
			t.Fatalf("stragglers of accepted figures: %v", err)
		}
	})
}

// FuzzCompute: documented hardware with any figures. Accepted hardware yields limits whose
// every known term is within MaxBytesPerSecond, so rounding it to whole bytes per second (the
// API's int64) never clamps.
func FuzzCompute(f *testing.F) {
	f.Add(uint16(4), uint16(32), uint16(4), uint16(2), 100e9, 200e9, 3e9, 6e9, 1e9, uint8(1), false, true)
	f.Add(uint16(16), uint16(64), uint16(8), uint16(1), 100e9, 0.0, 2e9, 0.0, 0.0, uint8(0), false, false)
	f.Add(uint16(1), uint16(1), uint16(1), uint16(4096), 8e41, 1e30, 1e300, 1e12, 0.0, uint8(4), true, false)
	encs := []Encoding{EncodingNone, Encoding64b66b, Encoding8b10b, Encoding128b130b, Encoding256b257b}
	f.Fuzz(func(t *testing.T, clients, ppn, servers, devices uint16, link, bisection, devW, devR, service float64, enc uint8, local, colocated bool) {
		l := &Link{RateBitsPerSecond: link, Encoding: encs[int(enc)%len(encs)]}
		u := Uniform{ClientNodes: int(clients), ProcessesPerNode: int(ppn), ClientLink: l, ServerNodes: int(servers), ServerLink: l,
			DevicesPerNode: int(devices), ServiceTrafficBitsPerSecond: service, Local: local, Colocated: colocated}
		if bisection != 0 {
			u.BisectionBitsPerSecond = &bisection
		}
		if devW != 0 {
			u.DeviceWriteBytesPerSecond = &devW
		}
		if devR != 0 {
			u.DeviceReadBytesPerSecond = &devR
		}
		h, err := u.Expand()
		if err != nil {
			return
		}
		lim, err := Compute(h)
		if err != nil {
			return
		}
		for _, ol := range []OperationLimit{lim.Write, lim.Read} {
			for _, fig := range []Figure{ol.Clients, ol.Servers, ol.Network, ol.Devices, ol.Limit, ol.PerProcess} {
				if fig.Known() && !inBounds(fig.Value()) {
					t.Fatalf("%s: term %v out of bounds in %+v", ol.Operation, fig.Value(), ol)
				}
			}
			if ol.ParallelismLimit != nil && *ol.ParallelismLimit < 0 {
				t.Fatalf("%s: parallelism %d", ol.Operation, *ol.ParallelismLimit)
			}
		}
		if _, err := json.Marshal(lim); err != nil {
			t.Fatal(err)
		}
	})
}
