package bench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func bigReport() Report {
	r := Report{Command: "ideal", Tool: ToolFio, Phase: PhaseSucceeded, Node: "node-1",
		StartTime: time.Unix(0, 0).UTC(), EndTime: time.Unix(10, 0).UTC(), Tools: Tools{Fio: "fio-3.33", Iperf3: "3.12"}}
	var clients []ClientResult
	for i := 0; i < 64; i++ {
		clients = append(clients, ClientResult{Host: fmt.Sprintf("10.0.0.%d:8765", i), BytesPerSecond: 1e9 + float64(i), Processes: 8, RuntimeSeconds: 10})
	}
	r.Results = []Result{{Operation: OpWrite, BytesPerSecond: 5e10, OpsPerSecond: 5e4, Processes: 512, Nodes: 64, RuntimeSeconds: 10, Clients: clients},
		{Operation: OpRead, BytesPerSecond: 6e10, Processes: 512, Nodes: 64, RuntimeSeconds: 10, Clients: clients}}
	m := &MonitorSummary{IntervalSeconds: 1, Samples: 600}
	for i := 0; i < 20; i++ {
		series := make([]float64, 600)
		for j := range series {
			series[j] = float64(j) * 1e6
		}
		m.Interfaces = append(m.Interfaces, Throughput{Name: fmt.Sprintf("eth%d", i), PeakBytesPerSecond: float64(100 - i), Intervals: series})
		m.Devices = append(m.Devices, Throughput{Name: fmt.Sprintf("nvme%dn1", i), PeakBytesPerSecond: float64(100 - i), Intervals: series})
	}
	r.Monitor = m
	for n := 1; n <= 64; n *= 2 {
		r.Sweep = append(r.Sweep, SweepPoint{Nodes: 1, ProcessesPerNode: n, Results: r.Results})
	}
	return r
}

func TestCompactFitsTerminationMessage(t *testing.T) {
	r := bigReport()
	full, _ := json.Marshal(r)
	b, err := r.Compact(TerminationMessageLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > TerminationMessageLimit || len(full) <= TerminationMessageLimit {
		t.Fatalf("compact %d bytes (full %d)", len(b), len(full))
	}
	var c Report
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	// The aggregates survive; detail goes first; the original is untouched.
	if !c.Truncated || len(c.Results) != 2 || c.Results[0].BytesPerSecond != 5e10 || c.Results[0].Clients != nil {
		t.Errorf("compact results %+v", c.Results)
	}
	if c.Monitor == nil || len(c.Monitor.Interfaces) == 0 || c.Monitor.Interfaces[0].Name != "eth0" || c.Monitor.Interfaces[0].Intervals != nil {
		t.Errorf("compact monitor %+v", c.Monitor)
	}
	if r.Results[0].Clients == nil || r.Monitor.Interfaces[0].Intervals == nil || len(r.Monitor.Interfaces) != 20 {
		t.Error("Compact changed the original report")
	}
	// A small report is unchanged.
	small := Report{Command: "parse", Phase: PhaseFailed, Message: "fio: truncated"}
	b, _ = small.Compact(TerminationMessageLimit)
	if strings.Contains(string(b), "truncated\":true") {
		t.Errorf("small report truncated: %s", b)
	}
	// A long message is cut, not the report failing.
	long := Report{Command: "x", Phase: PhaseFailed, Message: strings.Repeat("e", 10000)}
	if b, err := long.Compact(TerminationMessageLimit); err != nil || len(b) > TerminationMessageLimit {
		t.Errorf("long message: %d bytes, %v", len(b), err)
	}
}

func TestPlans(t *testing.T) {
	p, err := DataPlan(OpWrite, SeqOptions{Name: "ideal", Dir: "/bb", Procs: 4, BlockSize: 1 << 20, Size: 64 << 20, Runtime: 3 * time.Second, Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	jf := p.JobFile()
	for _, want := range []string{"[global]", "rw=write", "numjobs=4", "direct=1", "time_based=1", "runtime=3", "size=67108864", "end_fsync=1", "fallocate=none", "filename_format=$jobname.$jobnum.$filenum", "[ideal]"} {
		if !strings.Contains(jf, want+"\n") {
			t.Errorf("job file lacks %q:\n%s", want, jf)
		}
	}
	if p.Get("rw") != "write" {
		t.Error("Get")
	}
	r, _ := DataPlan(OpRandRead, SeqOptions{Dir: "/bb", Procs: 1, BlockSize: 4096, Size: 1 << 20, Runtime: time.Second, IODepth: 16, SharedFile: true})
	if r.Get("ioengine") != "libaio" || r.Get("iodepth") != "16" || r.Get("offset_increment") == "" || r.Get("end_fsync") != "" {
		t.Errorf("random shared plan:\n%s", r.JobFile())
	}
	if _, err := DataPlan(OpCreate, SeqOptions{Dir: "/bb", Procs: 1, BlockSize: 1, Size: 1, Runtime: time.Second}); err == nil {
		t.Error("data plan for create")
	}
	if _, err := DataPlan(OpWrite, SeqOptions{Dir: "/bb", Procs: 1, BlockSize: 1 << 20, Size: 1 << 10, Runtime: time.Second}); err == nil {
		t.Error("size below block accepted")
	}
	md, err := MetadataPlans("/bb", 2, 100)
	if err != nil || len(md) != 3 || md[0].Get("ioengine") != "filecreate" || md[2].Op != OpDelete {
		t.Errorf("metadata plans %+v %v", md, err)
	}
}

func TestSizing(t *testing.T) {
	// 10% of 10 GiB over 4 processes = 256 MiB each, under the 1 GiB cap.
	if s, err := DeviceSize(10<<30, 4, 1<<20, 1<<30, 0.10); err != nil || s != 256<<20 {
		t.Errorf("DeviceSize = %d, %v", s, err)
	}
	if s, _ := DeviceSize(1<<40, 4, 1<<20, 1<<30, 0.10); s != 1<<30 {
		t.Errorf("cap: %d", s)
	}
	if _, err := DeviceSize(1<<20, 4, 1<<20, 1<<30, 0.10); err == nil || !strings.Contains(err.Error(), "not enough free space") {
		t.Errorf("tiny disk: %v", err)
	}
	w := Result{MinBytesPerProcess: 10<<20 + 5}
	if s, _ := ReadBackSize(w, 64<<20, 1<<20); s != 10<<20 {
		t.Errorf("read back partial: %d", s)
	}
	if s, _ := ReadBackSize(Result{MinBytesPerProcess: 100 << 20}, 64<<20, 1<<20); s != 64<<20 {
		t.Errorf("read back full: %d", s)
	}
	if _, err := ReadBackSize(Result{MinBytesPerProcess: 1}, 64<<20, 1<<20); err == nil {
		t.Error("nothing written accepted")
	}
}

func TestIORAndMdtestArgs(t *testing.T) {
	a := strings.Join(IORArgs(IOROptions{Dir: "/bb/", Transfer: 1 << 20, Block: 1 << 30, Stonewall: 30 * time.Second, JSONFile: "/tmp/s.json"}), " ")
	for _, want := range []string{"-w -r", "-F", "-D 30", "stoneWallingWearOut=1", "summaryFormat=JSON", "summaryFile=/tmp/s.json", "-o /bb/ior.file"} {
		if !strings.Contains(a, want) {
			t.Errorf("ior args %q lack %q", a, want)
		}
	}
	if a := strings.Join(IORArgs(IOROptions{Dir: "/bb", SharedFile: true, Random: true, Transfer: 4096, Block: 1 << 20}), " "); strings.Contains(a, "-F") || !strings.Contains(a, "-z") {
		t.Errorf("shared random: %q", a)
	}
	if a := strings.Join(MdtestArgs("/bb/md", 1000), " "); !strings.Contains(a, "-n 1000") || !strings.Contains(a, "-d /bb/md") {
		t.Errorf("mdtest %q", a)
	}
}

// Get returns the value of option k (job options over global), or "".
func (p FioPlan) Get(k string) string {
	for _, j := range p.Jobs {
		for _, kv := range j.Options {
			if kv.K == k {
				return kv.V
			}
		}
	}
	for _, kv := range p.Global {
		if kv.K == k {
			return kv.V
		}
	}
	return ""
}
