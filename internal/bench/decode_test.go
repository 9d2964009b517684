package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeReport(t *testing.T) {
	r := bigReport()
	for _, limit := range []int{1 << 30, TerminationMessageLimit} {
		b, err := r.Compact(limit)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeReport(b); err != nil {
			t.Errorf("compacted to %d: %v", limit, err)
		}
	}
	failed, _ := json.Marshal(Report{Command: "probe-device", Phase: PhaseFailed, Message: "fio is not installed"})
	if _, err := DecodeReport(failed); err != nil {
		t.Errorf("failed report: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*Report)
		want string
	}{
		{"1e29 TB/s", func(r *Report) { r.Results[0].BytesPerSecond = 1e41 },
			`report of "ideal": result 1: write: bandwidth 1e+41 bytes/s is more than 100 PB/s`},
		{"negative processes", func(r *Report) { r.Results[1].Processes = -1 }, "result 2: read: processes -1 is not from 0"},
		{"sweep point", func(r *Report) { r.Sweep[0].Results[0].RuntimeSeconds = 1e300 }, "sweep point 1, result 1: write: runtime 1e+300 s is more than a year"},
		{"sweep grid", func(r *Report) { r.Sweep[1].Nodes = 0 }, "sweep point 2: 0 nodes x 2 processes is outside"},
		{"monitor", func(r *Report) { r.Monitor.Devices[3].Intervals[7] = 1e300 }, "monitor: nvme3n1: 1e+300 bytes/s is more than 100 PB/s"},
		{"phase", func(r *Report) { r.Phase = "done" }, `unknown phase "done"`},
		{"link", func(r *Report) { r.Hardware = &Hardware{LinkMbps: 4294967295} }, "hardware: link speed 4294967295 Mb/s is not from 0 to 1e+08"},
		{"free", func(r *Report) { r.FreeBytes = new(int64(-5)) }, "freeBytes -5 is negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := bigReport()
			c.edit(&r)
			b, _ := json.Marshal(r)
			_, err := DecodeReport(b)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line containing %q", err, c.want)
			}
		})
	}
	if _, err := DecodeReport([]byte("agent: no such command")); err == nil || !strings.Contains(err.Error(), "unreadable report") {
		t.Errorf("text: %v", err)
	}
}

// FuzzDecodeReport: reports come from pods' termination messages. No panic; an accepted
// report stays accepted when compacted to the termination message's size (what the agent
// does to it), and the figures of an accepted report are within the bounds.
func FuzzDecodeReport(f *testing.F) {
	full, _ := json.Marshal(bigReport())
	compact, _ := bigReport().Compact(TerminationMessageLimit)
	f.Add(full)
	f.Add(compact)
	for _, name := range []string{"fio-write.json", "iperf3-P4.json", "mdtest-phased.stdout"} {
		p, err := Parse(map[string]string{"fio-write.json": ToolFio, "iperf3-P4.json": ToolIperf3, "mdtest-phased.stdout": ToolMdtest}[name], readTool(f, name))
		if err != nil {
			f.Fatal(err)
		}
		b, _ := json.Marshal(Report{Command: "workload", Tool: p.Tool, Phase: PhaseSucceeded, Results: p.Results})
		f.Add(b)
	}
	f.Add([]byte(`{"phase": "failed", "message": "x"}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		r, err := DecodeReport(msg)
		if err != nil {
			return
		}
		b, err := r.Compact(TerminationMessageLimit)
		if err != nil {
			return // even the skeleton does not fit: the agent reports that instead
		}
		if _, err := DecodeReport(b); err != nil {
			t.Fatalf("accepted report rejected after Compact: %v", err)
		}
		for _, res := range r.Results {
			checkFigure(t, res.Operation, "bytesPerSecond", res.BytesPerSecond, 1e17)
			checkFigure(t, res.Operation, "opsPerSecond", res.OpsPerSecond, 1e15)
		}
	})
}

func TestReportMessage(t *testing.T) {
	if got := ReportMessage(`{"command":"check-module","phase":"failed","message":"kernel module missing: x"}`); got != "kernel module missing: x" {
		t.Errorf("report: %q", got)
	}
	if got := ReportMessage("DeadlineExceeded: Pod was active too long"); got != "DeadlineExceeded: Pod was active too long" {
		t.Errorf("raw text: %q", got)
	}
}
