package bench

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const toolsDir = "../../testdata/tools"

func readTool(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(toolsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type want struct {
	op        Operation
	bps       float64 // bytes/s; 0 = must be absent
	ops       float64 // ops/s; 0 = must be absent; -1 = any positive
	procs     int
	nodes     int
	runtime   float64
	stonewall float64
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b))
}

func TestParseRealOutputs(t *testing.T) {
	cases := []struct {
		tool, file string
		want       []want
	}{
		// fio client mode, 2 servers, group_reporting: "All clients" = 9684647936 B / 3.060 s.
		{"fio", "client-hl.stdout", []want{{op: OpWrite, bps: 9684647936 / 3.060, ops: -1, procs: 4, nodes: 2, runtime: 3.060}}},
		// fio client mode without group_reporting: 4 job entries, "All clients" sums them.
		{"fio", "fio-client-nogroup.stdout", []want{{op: OpWrite, bps: 4228907008 / 1.001, ops: -1, procs: 4, nodes: 2, runtime: 1.001}}},
		// filecreate: results under "read", iops = creates/s; no bytes.
		{"fio", "filecreate.json", []want{{op: OpCreate, ops: 4000 / 0.291, procs: 2, runtime: 0.291}}},
		{"fio", "fio-filecreate-plain.json", []want{{op: OpCreate, ops: 1000 / 0.345, procs: 2, runtime: 0.345}}},
		{"fio", "fio-filestat.json", []want{{op: OpStat, ops: 1000 / 0.010, procs: 2, runtime: 0.010}}},
		{"fio", "fio-filedelete.json", []want{{op: OpDelete, ops: 1000 / 0.060, procs: 2, runtime: 0.060}}},
		{"fio", "fio-write.json", []want{{op: OpWrite, bps: 9936306176 / 2.001, ops: -1, procs: 2, runtime: 2.001}}},
		{"fio", "fio-randread.json", []want{{op: OpRandRead, bps: 660045824 / 2.001, ops: 161144 / 2.001, procs: 1, runtime: 2.001}}},
		{"iperf3", "iperf3-P4.json", []want{{op: OpTransfer, bps: 12598342874.953712 / 8, procs: 4, runtime: 3.002984}}},
		{"iperf3", "iperf3-P1.json", []want{{op: OpTransfer, bps: 23215039442.85622 / 8, procs: 1, runtime: 2.000489}}},
		{"ior", "ior-nn.json", []want{
			{op: OpWrite, bps: 1523.8225 * mib, ops: 1523.8225, procs: 4, nodes: 1, runtime: 0.1696},
			{op: OpRead, bps: 22491.9257 * mib, ops: 22491.9257, procs: 4, nodes: 1, runtime: 0.0114},
		}},
		{"ior", "ior-n1-write.json", []want{{op: OpWrite, bps: 806.0857 * mib, ops: 17980.8149, procs: 4, nodes: 1, runtime: 3.3665, stonewall: 325.7347 * mib * 4}}},
		{"mdtest", "mdtest-easy.stdout", []want{
			{op: OpCreate, ops: 15624.881, procs: 4, nodes: 1, runtime: 0.512},
			{op: OpStat, ops: 374132.328, procs: 4, nodes: 1, runtime: 0.021},
			{op: OpReadFile, ops: 215128.368, procs: 4, nodes: 1, runtime: 0.037},
			{op: OpDelete, ops: 95771.571, procs: 4, nodes: 1, runtime: 0.084},
		}},
		// Four phased runs (-C, -T, -E, -r): each figure from the run that ran the phase, the
		// zeros of the others ignored.
		{"mdtest", "mdtest-phased.stdout", []want{
			{op: OpCreate, ops: 33597.722, procs: 4, nodes: 1, runtime: 6.118},
			{op: OpStat, ops: 109687.517, procs: 4, nodes: 1, runtime: 1.874},
			{op: OpReadFile, ops: 69274.748, procs: 4, nodes: 1, runtime: 2.967},
			{op: OpDelete, ops: 46694.665, procs: 4, nodes: 1, runtime: 4.402},
		}},
		// The per-rank CSV of the mdtest-easy run: its "all" row, tasks from the rank rows
		// (the CSV does not say the nodes).
		{"mdtest", "mdtest-easy-rank.csv", []want{
			{op: OpCreate, ops: 15624.881, procs: 4, runtime: 5.1200389942e-01},
			{op: OpStat, ops: 374132.328, procs: 4, runtime: 2.1382808705e-02},
			{op: OpReadFile, ops: 215128.368, procs: 4, runtime: 3.7187099379e-02},
			{op: OpDelete, ops: 95771.571, procs: 4, runtime: 8.3532095344e-02},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p, err := Parse(c.tool, readTool(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if p.Tool != c.tool {
				t.Errorf("tool %q", p.Tool)
			}
			if len(p.Results) != len(c.want) {
				t.Fatalf("got %d results %+v, want %d", len(p.Results), p.Results, len(c.want))
			}
			for i, w := range c.want {
				r := p.Results[i]
				if r.Operation != w.op {
					t.Errorf("[%d] operation %q, want %q", i, r.Operation, w.op)
				}
				if !near(r.BytesPerSecond, w.bps) {
					t.Errorf("[%d] bytesPerSecond %v, want %v", i, r.BytesPerSecond, w.bps)
				}
				if w.ops == -1 {
					if r.OpsPerSecond <= 0 {
						t.Errorf("[%d] opsPerSecond %v, want positive", i, r.OpsPerSecond)
					}
				} else if !near(r.OpsPerSecond, w.ops) {
					t.Errorf("[%d] opsPerSecond %v, want %v", i, r.OpsPerSecond, w.ops)
				}
				if r.Processes != w.procs || r.Nodes != w.nodes {
					t.Errorf("[%d] processes/nodes %d/%d, want %d/%d", i, r.Processes, r.Nodes, w.procs, w.nodes)
				}
				if !near(r.RuntimeSeconds, w.runtime) {
					t.Errorf("[%d] runtime %v, want %v", i, r.RuntimeSeconds, w.runtime)
				}
				if !near(r.StonewallBytesPerSecond, w.stonewall) {
					t.Errorf("[%d] stonewall %v, want %v", i, r.StonewallBytesPerSecond, w.stonewall)
				}
			}
		})
	}
}

// The fio figures must agree with fio's own: bw_bytes of a single group, and in client mode
// the "All clients" bw_bytes (fio rounds to whole bytes/s, KiB for bw).
func TestFioAgreesWithItsOwnSummary(t *testing.T) {
	p, err := ParseFio(readTool(t, "client-hl.stdout"))
	if err != nil {
		t.Fatal(err)
	}
	// "All clients": "bw" : 3090739 KiB/s.
	if got, want := p.Results[0].BytesPerSecond, 3090739.0*1024; math.Abs(got-want)/want > 1e-3 {
		t.Errorf("All clients %v B/s, fio says %v", got, want)
	}
	if len(p.Results[0].Clients) != 2 {
		t.Fatalf("clients %+v", p.Results[0].Clients)
	}
	var sum float64
	for _, c := range p.Results[0].Clients {
		sum += c.BytesPerSecond
	}
	// Each server's rate is over its own runtime; the sum is at least the aggregate.
	if sum < p.Results[0].BytesPerSecond {
		t.Errorf("per-client sum %v below aggregate %v", sum, p.Results[0].BytesPerSecond)
	}
	w, err := ParseFio(readTool(t, "fio-write.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Results[0].BytesPerSecond, 4965670252.0; math.Abs(got-want)/want > 1e-3 {
		t.Errorf("write %v B/s, fio says %v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	trunc := func(file string, keep float64) []byte {
		b := readTool(t, file)
		return b[:int(float64(len(b))*keep)]
	}
	cases := []struct {
		name, tool string
		out        []byte
		msg        string
	}{
		{"fio truncated", "fio", trunc("fio-write.json", 0.5), "truncated"},
		{"fio client truncated", "fio", trunc("client-hl.stdout", 0.7), "truncated"},
		{"fio text only", "fio", []byte("fio: failed to open file\n"), "no JSON object"},
		{"fio empty", "fio", nil, "empty"},
		{"fio garbled", "fio", []byte("{\"jobs\": [ {\"jobname\": \"x\", \"read\": {\"io_bytes\": zz}}]}"), "garbled"},
		{"fio no jobs", "fio", []byte(`{"fio version": "fio-3.33", "jobs": []}`), "no jobs"},
		{"fio zero io", "fio", []byte(`{"jobs": [{"jobname": "x", "job options": {"rw": "write"}, "write": {"io_bytes": 0, "runtime": 0}}]}`), "no I/O"},
		{"fio job error", "fio", []byte(`{"jobs": [{"jobname": "x", "error": 5, "write": {"io_bytes": 1, "runtime": 1}}]}`), "error 5"},
		{"fio trim", "fio", []byte(`{"jobs": [{"jobname": "x", "job options": {"rw": "trim"}, "trim": {"io_bytes": 1, "runtime": 1}}]}`), "rw=trim"},
		{"fio bytes in zero time", "fio", []byte(`{"jobs": [{"jobname": "x", "job options": {"rw": "write"}, "write": {"io_bytes": 10, "total_ios": 1, "runtime": 0}}]}`), "zero runtime"},
		{"iperf3 error key", "iperf3", readTool(t, "iperf3-error.json"), "unable to connect to server"},
		{"iperf3 truncated", "iperf3", trunc("iperf3-P4.json", 0.9), "truncated"},
		{"iperf3 no end", "iperf3", []byte(`{"start": {}, "intervals": [], "end": {}}`), "sum_received"},
		{"ior no summary", "ior", []byte(`{"Version": "4.1.0", "tests": []}`), "summaryFormat=JSON"},
		{"ior truncated", "ior", trunc("ior-nn.json", 0.8), "truncated"},
		{"ior zero bw", "ior", []byte(`{"summary": [{"operation": "write", "numTasks": 1, "bwMeanMIB": 0}]}`), "bwMeanMIB"},
		{"ior nan bw", "ior", []byte(`{"summary": [{"operation": "write", "numTasks": 1, "bwMeanMIB": -nan}]}`), "bwMeanMIB"},
		{"mdtest truncated", "mdtest", []byte(strings.Split(string(readTool(t, "mdtest-easy.stdout")), "-- finished")[0]), "truncated"},
		{"mdtest cut in table", "mdtest", trunc("mdtest-easy.stdout", 0.6), "cannot be read"},
		{"mdtest cut early", "mdtest", trunc("mdtest-easy.stdout", 0.35), "SUMMARY rate"},
		{"mdtest no table", "mdtest", []byte("mdtest: cannot create directory\n"), "SUMMARY rate"},
		// Absurd magnitudes: refused with the bound, never clamped.
		{"iperf3 1e29 TB/s", "iperf3", []byte(`{"start": {"test_start": {"protocol": "TCP", "num_streams": 1}},
		  "end": {"sum_received": {"seconds": 10, "bytes": 1e42, "bits_per_second": 8e41}}}`),
			"end.sum_received: bandwidth 1e+41 bytes/s is more than 100 PB/s (1e+17 bytes/s)"},
		{"iperf3 negative streams", "iperf3", []byte(`{"start": {"test_start": {"protocol": "TCP", "num_streams": -4}},
		  "end": {"sum_received": {"seconds": 10, "bytes": 1e10, "bits_per_second": 8e9}}}`), "processes -4 is not from 0"},
		{"iperf3 bytes beyond int64", "iperf3", []byte(`{"start": {"test_start": {"protocol": "TCP", "num_streams": 1}},
		  "end": {"sum_received": {"seconds": 1e7, "bytes": 1e20, "bits_per_second": 8e13}}}`), "bytes 1e+20 is not a count"},
		{"fio absurd bytes", "fio", []byte(`{"jobs": [{"jobname": "x", "job options": {"rw": "write"}, "write": {"io_bytes": 1e30, "total_ios": 1, "runtime": 1000}}]}`),
			"write: bandwidth 1e+30 bytes/s is more than 100 PB/s"},
		{"fio absurd runtime", "fio", []byte(`{"jobs": [{"jobname": "x", "job options": {"rw": "write"}, "write": {"io_bytes": 1e6, "total_ios": 1, "runtime": 1e300}}]}`),
			"runtime 1e+297 s is more than a year"},
		{"fio absurd numjobs", "fio", []byte(`{"jobs": [{"jobname": "x", "job options": {"rw": "write", "numjobs": "4611686018427387904"}, "write": {"io_bytes": 1e6, "total_ios": 1, "runtime": 1000}}]}`),
			"numjobs 4611686018427387904 is more than"},
		{"ior 1e300 MiB/s", "ior", []byte(`{"summary": [{"operation": "write", "numTasks": 1, "bwMeanMIB": 1e300}]}`), "write: bandwidth 1.048576e+306 bytes/s is more than 100 PB/s"},
		{"mdtest garbled row", "mdtest", []byte("SUMMARY rate: (of 1 iterations)\n   File creation   12.0 abc 11.0 0.0\n-- finished at x --\n"), "not a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(c.tool, c.out)
			if err == nil {
				t.Fatalf("no error; parsed %+v", p)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Tool != c.tool {
				t.Fatalf("error %v does not name tool %s", err, c.tool)
			}
			if !strings.HasPrefix(err.Error(), c.tool+": ") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q, want it to contain %q", err, c.msg)
			}
		})
	}
}

func TestFioOperationFromOptionsNotName(t *testing.T) {
	// A job named "read" that writes: the operation is write.
	out := []byte(`{"global options": {"rw": "read"}, "jobs": [
	  {"jobname": "read", "job options": {"rw": "randwrite"}, "write": {"io_bytes": 4096, "total_ios": 1, "runtime": 1000}},
	  {"jobname": "create", "write": {"io_bytes": 0}, "read": {"io_bytes": 8192, "total_ios": 2, "runtime": 1000}}]}`)
	p, err := ParseFio(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Results) != 2 || p.Results[0].Operation != OpRandWrite || p.Results[1].Operation != OpRead {
		t.Fatalf("%+v", p.Results)
	}
	mixed := []byte(`{"jobs": [{"jobname": "m", "job options": {"rw": "randrw", "ioengine": "libaio"},
	  "read": {"io_bytes": 4096, "total_ios": 1, "runtime": 1000}, "write": {"io_bytes": 8192, "total_ios": 2, "runtime": 1000}}]}`)
	p, err = ParseFio(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Results) != 2 || p.Results[0].Operation != OpRandRead || !p.Results[0].Mixed || p.Results[1].Operation != OpRandWrite {
		t.Fatalf("%+v", p.Results)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1M": 1 << 20, "4k": 4096, "1GiB": 1 << 30, "512": 512, "2g": 2 << 30, "10MB": 10 << 20} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "1Q", "99999999999T"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}
