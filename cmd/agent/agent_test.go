package main

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/limits"
)

func agent(t *testing.T, args ...string) (int, *bench.Report, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(args, &out, &errb)
	var r bench.Report
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("stdout is not a Report: %v\n%s", err, out.String())
		}
	}
	return code, &r, errb.String()
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			// `make test` installs the tools and sets BEEBURST_REQUIRE_TOOLS: there a
			// missing tool fails the test instead of silently skipping the real runs.
			if os.Getenv("BEEBURST_REQUIRE_TOOLS") != "" {
				t.Fatalf("%s is not installed (run hack/host-tools.sh)", tool)
			}
			t.Skipf("%s is not installed (run hack/host-tools.sh)", tool)
		}
	}
}

// assertEmpty checks that the agent left nothing behind in dir.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
	}
}

func checkResult(t *testing.T, r *bench.Result, op bench.Operation) {
	t.Helper()
	if r == nil {
		t.Fatalf("no %s result", op)
	}
	if !(r.BytesPerSecond > 0) || !(r.RuntimeSeconds > 0) || r.Processes < 1 {
		t.Errorf("%s: implausible %+v", op, r)
	}
	if r.Bytes > 0 && math.Abs(float64(r.Bytes)/r.RuntimeSeconds-r.BytesPerSecond)/r.BytesPerSecond > 1e-9 {
		t.Errorf("%s: %d bytes in %v s is not %v B/s", op, r.Bytes, r.RuntimeSeconds, r.BytesPerSecond)
	}
}

func TestRealDeviceProbe(t *testing.T) {
	needTools(t, "fio")
	dir, tmp := t.TempDir(), t.TempDir()
	tl, full := filepath.Join(tmp, "termination-log"), filepath.Join(tmp, "report.json")
	code, r, stderr := agent(t, "probe-device", "--dir", dir, "--size", "16M", "--jobs", "2", "--runtime", "1s",
		"--monitor-interval", "200ms", "--termination-log", tl, "--output", full)
	if code != 0 || r.Phase != bench.PhaseSucceeded {
		t.Fatalf("exit %d, report %+v\n%s", code, r, stderr)
	}
	w, rd := bench.Find(r.Results, bench.OpWrite), bench.Find(r.Results, bench.OpRead)
	checkResult(t, w, bench.OpWrite)
	checkResult(t, rd, bench.OpRead)
	if w.Processes != 2 || rd.Processes != 2 {
		t.Errorf("processes %d/%d", w.Processes, rd.Processes)
	}
	if r.FreeBytes == nil || *r.FreeBytes <= 0 {
		t.Errorf("the probe must report the free space it found (the burst buffer's capacity): %v", r.FreeBytes)
	}
	if r.Tools.Fio == "" || r.Monitor == nil || r.Monitor.Samples < 2 {
		t.Errorf("tools %+v monitor %+v", r.Tools, r.Monitor)
	}
	tlb, err := os.ReadFile(tl)
	if err != nil || len(tlb) >= bench.TerminationMessageLimit || !json.Valid(tlb) {
		t.Errorf("termination log: %d bytes, valid %v, %v", len(tlb), json.Valid(tlb), err)
	}
	if fb, err := os.ReadFile(full); err != nil || !json.Valid(fb) {
		t.Errorf("full report: %v", err)
	}
	assertEmpty(t, dir)
	checkDeviceBytes(t, dir, w, rd)
	t.Logf("device write %.0f MB/s, read %.0f MB/s", w.BytesPerSecond/1e6, rd.BytesPerSecond/1e6)
}

// checkDeviceBytes: a local run names the block device under dir and counts at least its
// own bytes on it (direct I/O passes through the device; other work on a shared machine
// adds to the count). A directory without a block device of its own (tmpfs) names none.
func checkDeviceBytes(t *testing.T, dir string, results ...*bench.Result) {
	t.Helper()
	hasDevice := newDeviceMeter(dir) != nil
	for _, r := range results {
		switch {
		case !hasDevice && (r.Device != "" || r.DeviceBytes != 0):
			t.Errorf("%s: device %q %d bytes under a directory without a block device", r.Operation, r.Device, r.DeviceBytes)
		case hasDevice && (r.Device == "" || r.DeviceBytes < r.Bytes):
			t.Errorf("%s: device %q moved %d bytes, fewer than the run's own %d", r.Operation, r.Device, r.DeviceBytes, r.Bytes)
		}
	}
}

// The parsed fio figures must agree with fio's own summary of the same run.
func TestRealFioAgreesWithFio(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	for _, op := range []bench.Operation{bench.OpWrite, bench.OpRead} {
		plan, err := bench.DataPlan(op, bench.SeqOptions{Name: "agree", Dir: dir, Procs: 2, BlockSize: 1 << 20, Size: 16 << 20,
			Runtime: time.Second, Direct: true, Unlink: op == bench.OpRead})
		if err != nil {
			t.Fatal(err)
		}
		plan.Global = append(plan.Global, bench.KV{K: "group_reporting", V: "1"})
		jf := filepath.Join(t.TempDir(), "job.fio")
		if err := os.WriteFile(jf, []byte(plan.JobFile()), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runTool(t.Context(), "fio", "--output-format=json", jf)
		if err != nil {
			t.Fatal(err)
		}
		p, err := bench.ParseFio(out)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Jobs []map[string]struct {
				BWBytes float64 `json:"bw_bytes"`
				IOPS    float64 `json:"iops"`
			} `json:"jobs"`
		}
		// Only the direction sections decode; other keys are skipped.
		_ = json.Unmarshal(out, &raw)
		own := raw.Jobs[0][string(map[bench.Operation]string{bench.OpWrite: "write", bench.OpRead: "read"}[op])]
		got := bench.Find(p.Results, op)
		checkResult(t, got, op)
		if math.Abs(got.BytesPerSecond-own.BWBytes)/own.BWBytes > 0.001 || math.Abs(got.OpsPerSecond-own.IOPS)/own.IOPS > 0.001 {
			t.Errorf("%s: parsed %v B/s %v IOPS, fio says %v B/s %v IOPS", op, got.BytesPerSecond, got.OpsPerSecond, own.BWBytes, own.IOPS)
		}
	}
	assertEmpty(t, dir)
}

func TestRealIdealSweep(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	for _, n := range []string{"1", "2"} {
		code, r, stderr := agent(t, "ideal", "--dir", dir, "--procs", n, "--size", "16M", "--runtime", "1s", "-q")
		if code != 0 {
			t.Fatalf("N=%s: exit %d %+v\n%s", n, code, r, stderr)
		}
		checkResult(t, bench.Find(r.Results, bench.OpWrite), bench.OpWrite)
		checkResult(t, bench.Find(r.Results, bench.OpRead), bench.OpRead)
		w, rd := bench.Find(r.Results, bench.OpWrite), bench.Find(r.Results, bench.OpRead)
		if got := w.Processes; got != atoiDefault(n, 0) {
			t.Errorf("N=%s: %d processes", n, got)
		}
		// Each phase says when it ended, the write before the read, both within the run: a
		// point's runs on several nodes of one file system are added up over the time they
		// spanned together.
		if w.End.Before(r.StartTime) || !rd.End.After(w.End) || rd.End.After(r.EndTime) {
			t.Errorf("N=%s: run %s..%s, write ended %s, read ended %s", n, r.StartTime, r.EndTime, w.End, rd.End)
		}
		assertEmpty(t, dir)
	}
}

// fio client mode on loopback: one fio server on 127.0.0.1, the agent as its client.
func TestRealIdealClientMode(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startBackground(t.Context(), "fio", "--server=ip:127.0.0.1,"+itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	if err := waitListening(t.Context(), srv, port, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	code, r, stderr := agent(t, "ideal", "--dir", dir, "--procs", "2", "--size", "8M", "--runtime", "1s", "-q",
		"--clients", "127.0.0.1:"+itoa(port))
	if code != 0 {
		t.Fatalf("exit %d %+v\n%s", code, r, stderr)
	}
	w := bench.Find(r.Results, bench.OpWrite)
	checkResult(t, w, bench.OpWrite)
	checkResult(t, bench.Find(r.Results, bench.OpRead), bench.OpRead)
	if w.Nodes != 1 || w.Processes != 2 {
		t.Errorf("nodes %d processes %d", w.Nodes, w.Processes)
	}
	assertEmpty(t, dir)
}

func TestRealNetProbeLoopback(t *testing.T) {
	needTools(t, "iperf3")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	// Two process pairs, so the aggregate is summed over pairs.
	servers, err := startIperf3Servers(t.Context(), "127.0.0.1", port, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer stopAll(servers)
	code, r, stderr := agent(t, "net-client", "--host", "127.0.0.1", "--port", itoa(port), "--pairs", "2", "--streams", "2", "--time", "1s", "-q")
	if code != 0 {
		t.Fatalf("exit %d %+v\n%s", code, r, stderr)
	}
	x := bench.Find(r.Results, bench.OpTransfer)
	if x == nil || !(x.BytesPerSecond > 0) || x.Processes != 4 || len(x.Clients) != 2 {
		t.Fatalf("%+v", r.Results)
	}
	if sum := x.Clients[0].BytesPerSecond + x.Clients[1].BytesPerSecond; math.Abs(sum-x.BytesPerSecond) > 1 {
		t.Errorf("pairs sum %v, aggregate %v", sum, x.BytesPerSecond)
	}
	t.Logf("loopback %.2f Gbit/s", x.BytesPerSecond*8/1e9)

	// One more single run, against iperf3's own summary of the same test.
	servers2, err := startIperf3Servers(t.Context(), "127.0.0.1", port+2, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer stopAll(servers2)
	out, err := runTool(t.Context(), "iperf3", bench.Iperf3ClientArgs("127.0.0.1", port+2, 1, time.Second)...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := bench.ParseIperf3(out)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	if got, own := p.Results[0].BytesPerSecond*8, raw.End.SumReceived.BitsPerSecond; got != own || own <= 0 {
		t.Errorf("parsed %v bit/s, iperf3 says %v", got, own)
	}
}

// TestRealNetProbeCountsWhatItsInterfaceSent: the client reports what the interface it sent
// through (lo, for 127.0.0.1) sent and received while it measured; another iperf3 flow on the
// same interface beside it shows as bytes the probe did not send. Other packages' tests may
// use the loopback interface at the same time, so a lone probe is held to a lower bound only.
func TestRealNetProbeCountsWhatItsInterfaceSent(t *testing.T) {
	needTools(t, "iperf3")
	port := func() int {
		t.Helper()
		p, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	probe := func(p int) *bench.Result {
		t.Helper()
		servers, err := startIperf3Servers(t.Context(), "127.0.0.1", p, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		defer stopAll(servers)
		code, r, stderr := agent(t, "net-client", "--host", "127.0.0.1", "--port", itoa(p), "--time", "2s", "-q")
		if code != 0 {
			t.Fatalf("exit %d %+v\n%s", code, r, stderr)
		}
		x := bench.Find(r.Results, bench.OpTransfer)
		// On lo every byte sent is received too.
		if x == nil || x.Bytes <= 0 || x.Interface != "lo" || x.InterfaceSentBytes < x.Bytes || x.InterfaceReceivedBytes < x.Bytes {
			t.Fatalf("want interface lo with at least the probe's own bytes each way: %+v", r.Results)
		}
		return x
	}
	foreign := func(x *bench.Result) string {
		return limits.ForeignLinkTraffic(x.Interface, float64(x.InterfaceSentBytes), float64(x.InterfaceReceivedBytes), float64(x.Bytes), x.Retransmits)
	}
	alone := probe(port())
	t.Logf("alone: lo sent %d bytes, the probe %d", alone.InterfaceSentBytes, alone.Bytes)

	// Another flow on lo for the whole probe.
	otherPort := port()
	other, err := startIperf3Servers(t.Context(), "127.0.0.1", otherPort, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer stopAll(other)
	flow, err := startBackground(t.Context(), "iperf3", bench.Iperf3ClientArgs("127.0.0.1", otherPort, 4, 10*time.Second)...)
	if err != nil {
		t.Fatal(err)
	}
	defer flow.stop()
	time.Sleep(500 * time.Millisecond)
	beside := probe(port())
	t.Logf("beside another flow: lo sent %d bytes, the probe %d", beside.InterfaceSentBytes, beside.Bytes)
	if f := foreign(beside); f == "" {
		t.Errorf("another flow beside the probe went unseen: lo sent %d bytes, the probe %d", beside.InterfaceSentBytes, beside.Bytes)
	} else {
		t.Log(f)
	}
}

func TestRealRunSmoke(t *testing.T) {
	needTools(t, "fio", "iperf3")
	dir := t.TempDir()
	code, r, stderr := agent(t, "run", "--dir", dir, "--profile", "smoke")
	if code != 0 {
		t.Fatalf("exit %d %+v\n%s", code, r, stderr)
	}
	if len(r.Sweep) != 2 || bench.Find(r.Results, bench.OpTransfer) == nil || r.Analysis == nil {
		t.Errorf("report %+v", r)
	}
	if !strings.Contains(stderr, "stage 3 - ideal workload") {
		t.Errorf("no summary on stderr:\n%s", stderr)
	}
	assertEmpty(t, dir)
}

func TestRealWorkloadsFio(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	for kind, ops := range map[string][]bench.Operation{
		"sharedfile": {bench.OpWrite, bench.OpRead},
		"random4k":   {bench.OpRandWrite, bench.OpRandRead},
		"metadata":   {bench.OpCreate, bench.OpStat, bench.OpDelete},
	} {
		code, r, stderr := agent(t, "workload", "--kind", kind, "--dir", dir, "--procs", "2", "--size", "8M", "--runtime", "1s", "--files", "200", "-q")
		if code != 0 {
			t.Fatalf("%s: exit %d %+v\n%s", kind, code, r, stderr)
		}
		for _, op := range ops {
			x := bench.Find(r.Results, op)
			if x == nil || !(x.OpsPerSecond > 0) {
				t.Errorf("%s: %s missing or zero: %+v", kind, op, r.Results)
			}
		}
		assertEmpty(t, dir)
	}
}

// SIGTERM stops the tool, removes its files and reports "cancelled".
func TestCancelOnSIGTERM(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	// A SIGTERM that arrives when the agent's handler is not installed must not kill the
	// test binary.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGTERM)
	defer signal.Stop(guard)
	go func() {
		// Wait until fio runs (its files exist), then signal this process.
		for i := 0; i < 200; i++ {
			if m, _ := filepath.Glob(filepath.Join(dir, ".beeburst-probe-*", "probe.*")); len(m) > 0 {
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	start := time.Now()
	code, r, _ := agent(t, "probe-device", "--dir", dir, "--size", "16M", "--jobs", "1", "--runtime", "30s", "-q")
	if code != exitCancelled || r.Phase != bench.PhaseCancelled {
		t.Fatalf("exit %d phase %q message %q", code, r.Phase, r.Message)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	assertEmpty(t, dir)
	if out, _ := exec.Command("pgrep", "-f", dir).Output(); len(out) > 0 {
		t.Errorf("processes left: %s", out)
	}
}

func TestDeadline(t *testing.T) {
	needTools(t, "fio")
	dir := t.TempDir()
	code, r, _ := agent(t, "probe-device", "--dir", dir, "--size", "16M", "--jobs", "1", "--runtime", "30s", "--timeout", "2s", "-q")
	if code != exitFailed || r.Phase != bench.PhaseFailed || !strings.Contains(r.Message, "deadline") {
		t.Fatalf("exit %d phase %q message %q", code, r.Phase, r.Message)
	}
	assertEmpty(t, dir)
}

func TestParseCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := execute([]string{"parse", "--tool", "fio", "../../testdata/tools/client-hl.stdout"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var p struct {
		Tool    string
		Results []struct {
			Operation      string
			BytesPerSecond *float64
			OpsPerSecond   *float64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p.Tool != "fio" || len(p.Results) != 1 || p.Results[0].Operation != "write" || p.Results[0].BytesPerSecond == nil {
		t.Errorf("%s", out.String())
	}
	out.Reset()
	errb.Reset()
	if code := execute([]string{"parse", "--tool", "iperf3", "../../testdata/tools/iperf3-error.json"}, &out, &errb); code != exitFailed {
		t.Errorf("iperf3 error output: exit %d", code)
	}
	if !strings.Contains(errb.String(), "iperf3: ") || out.Len() != 0 {
		t.Errorf("stderr %q stdout %q", errb.String(), out.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestMonitorCommand(t *testing.T) {
	code, r, stderr := agent(t, "monitor", "--interval", "100ms", "--duration", "450ms", "-q")
	if code != 0 || r.Monitor == nil || r.Monitor.Samples < 4 || r.Monitor.IntervalSeconds != 0.1 {
		t.Fatalf("exit %d monitor %+v\n%s", code, r.Monitor, stderr)
	}
}

func TestMissingToolIsAClearError(t *testing.T) {
	if _, err := exec.LookPath("mdtest"); err == nil {
		t.Skip("mdtest is installed")
	}
	dir := t.TempDir()
	code, r, _ := agent(t, "workload", "--kind", "metadata", "--tool", "mdtest", "--dir", dir, "-q")
	if code != exitFailed || !strings.Contains(r.Message, "mdtest is not installed") || r.Tools.Mdtest != "" {
		t.Fatalf("exit %d message %q tools %+v", code, r.Message, r.Tools)
	}
	assertEmpty(t, dir)
}

func TestDirCreateRemove(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "beeburst", "ns.bb")
	var out, errb bytes.Buffer
	if code := execute([]string{"-q", "dir", "create", "--path", dir}, &out, &errb); code != exitOK {
		t.Fatalf("create: exit %d: %s", code, errb.String())
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Fatalf("create: %v %v", fi, err)
	}
	// The space free for the burst buffer, as statfs(2) says of the directory.
	rep, err := bench.DecodeReport(out.Bytes())
	if err != nil {
		t.Fatalf("create's report: %v: %s", err, out.String())
	}
	if want, err := freeBytes(dir); err != nil || rep.FreeBytes == nil || math.Abs(float64(*rep.FreeBytes)-float64(want)) > 64<<20 {
		t.Fatalf("create reported %v bytes free, statfs says %d (%v)", rep.FreeBytes, want, err)
	}
	out.Reset()
	if err := os.WriteFile(filepath.Join(dir, "result"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The chain markers of its validation go with it; a neighbour's stay.
	markers := filepath.Join(root, "beeburst", ".chain.ns.bb", "uid")
	neighbour := filepath.Join(root, "beeburst", ".chain.ns.other", "uid")
	for _, m := range []string{markers, neighbour} {
		if err := os.MkdirAll(m, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if code := execute([]string{"-q", "dir", "remove", "--path", dir}, &out, &errb); code != exitOK {
		t.Fatalf("remove: exit %d: %s", code, errb.String())
	}
	for _, gone := range []string{dir, filepath.Dir(markers)} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Fatalf("remove left %s: %v", gone, err)
		}
	}
	if _, err := os.Stat(neighbour); err != nil {
		t.Fatalf("remove took a neighbour's markers: %v", err)
	}
	// A path that is not a burst buffer's directory is refused, never removed.
	for _, bad := range []string{root, "/etc", filepath.Join(root, "beeburst"), "relative/beeburst/x", filepath.Join(root, "beeburst", "..", "x")} {
		if code := execute([]string{"-q", "dir", "remove", "--path", bad}, &out, &errb); code == exitOK {
			t.Errorf("remove %q succeeded", bad)
		}
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("root removed: %v", err)
	}
}

func TestCheckModule(t *testing.T) {
	dir := t.TempDir()
	proc, sys := filepath.Join(dir, "proc"), filepath.Join(dir, "sys")
	if err := os.MkdirAll(filepath.Join(sys, "module", "ext4"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "modules"), []byte("overlay 151552 0 - Live 0x0\nbeegfs 1000 1 - Live 0x0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		code int
	}{{"beegfs", 0}, {"ext4", 0}, {"lustre", 1}} {
		code, r, _ := agent(t, "-q", "check-module", "--name", tc.name, "--proc-root", proc, "--sys-root", sys)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (%s)", tc.name, code, tc.code, r.Message)
		}
		if tc.code != 0 && (!strings.HasPrefix(r.Message, ModuleMissingPrefix) || !strings.Contains(r.Message, "modprobe lustre")) {
			t.Errorf("%s: unclear message %q", tc.name, r.Message)
		}
	}
	if ModuleMissingPrefix != beegfs.ModuleMissingPrefix {
		t.Error("the operator (internal/engine/beegfs) recognises a missing module by this prefix: keep them equal")
	}
	if code, _, _ := agent(t, "-q", "check-module", "--name", "../etc"); code != 1 {
		t.Errorf("a bad module name must fail, got exit %d", code)
	}

	// --machine-uuid: BeeGFS servers need the DMI product_uuid (this host has none, like the
	// testbed's namespace nodes; QEMU guests get one with -uuid).
	code, r, _ := agent(t, "-q", "check-module", "--name", "beegfs", "--machine-uuid", "--proc-root", proc, "--sys-root", sys)
	if code != 1 || !strings.HasPrefix(r.Message, MachineUUIDMissingPrefix) || !strings.Contains(r.Message, "spec.engine: local") {
		t.Errorf("no DMI: exit %d, message %q", code, r.Message)
	}
	if MachineUUIDMissingPrefix != beegfs.MachineUUIDMissingPrefix {
		t.Error("the operator (internal/engine/beegfs) recognises a missing machine UUID by this prefix: keep them equal")
	}
	dmi := filepath.Join(sys, "class", "dmi", "id")
	if err := os.MkdirAll(dmi, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dmi, "product_uuid"), []byte("not-a-uuid\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if code, r, _ = agent(t, "-q", "check-module", "--name", "beegfs", "--machine-uuid", "--proc-root", proc, "--sys-root", sys); code != 1 || !strings.Contains(r.Message, "not a UUID") {
		t.Errorf("bad DMI uuid: exit %d, message %q", code, r.Message)
	}
	const id = "62656562-7572-4374-8000-000000000001"
	if err := os.WriteFile(filepath.Join(dmi, "product_uuid"), []byte(id+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(sys, "module", "beegfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sys, "module", "beegfs", "version"), []byte("8.3.1\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	code, r, _ = agent(t, "-q", "check-module", "--name", "beegfs", "--machine-uuid", "--proc-root", proc, "--sys-root", sys)
	if want := "the beegfs kernel module is loaded (version 8.3.1); machine uuid " + id; code != 0 || r.Message != want {
		t.Errorf("with DMI: exit %d, message %q, want %q", code, r.Message, want)
	}
	if r.FreeBytes != nil {
		t.Errorf("free space reported without --free-path: %d", *r.FreeBytes)
	}

	// --free-path: the space free where the burst buffer's targets go, as statfs(2) says.
	storage := t.TempDir()
	code, r, _ = agent(t, "-q", "check-module", "--name", "beegfs", "--proc-root", proc, "--sys-root", sys, "--free-path", storage)
	if want, err := freeBytes(storage); code != 0 || err != nil || r.FreeBytes == nil || math.Abs(float64(*r.FreeBytes)-float64(want)) > 64<<20 {
		t.Errorf("--free-path: exit %d, reported %v bytes free, statfs says %d (%v)", code, r.FreeBytes, want, err)
	}
	code, r, _ = agent(t, "-q", "check-module", "--name", "beegfs", "--proc-root", proc, "--sys-root", sys, "--free-path", filepath.Join(storage, "missing"))
	if code != 0 || r.FreeBytes != nil {
		t.Errorf("an unreadable --free-path leaves the space unknown and the module's answer standing: exit %d, %v bytes", code, r.FreeBytes)
	}
}

// The stage subcommand end to end: totals in the Report and the termination message, a
// conflict as a failed Report that names the file.
func TestStage(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "in", "data"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	term := filepath.Join(t.TempDir(), "termination-log")
	code, r, _ := agent(t, "-q", "--termination-log", term, "stage",
		"--from", filepath.Join(src, "in"), "--to", filepath.Join(dst, "in"),
		"--from", filepath.Join(src, "missing"), "--to", filepath.Join(dst, "missing"), "--missing-ok")
	if code != exitOK || r.Stage == nil || r.Stage.Files != 1 || r.Stage.Bytes != 10 || len(r.Stage.MissingSources) != 1 {
		t.Fatalf("exit %d, report %+v", code, r.Stage)
	}
	var compact bench.Report
	if b, err := os.ReadFile(term); err != nil || json.Unmarshal(b, &compact) != nil || compact.Stage == nil || compact.Stage.Bytes != 10 {
		t.Fatalf("termination message lacks the totals: %s %v", b, err)
	}

	if err := os.WriteFile(filepath.Join(dst, "in", "data"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, r, _ = agent(t, "-q", "stage", "--from", filepath.Join(src, "in"), "--to", filepath.Join(dst, "in"))
	if code != exitFailed || !strings.Contains(r.Message, "already exists with different content") {
		t.Fatalf("conflict: exit %d message %q", code, r.Message)
	}
	if code, _, _ := agent(t, "-q", "stage", "--from", src); code != exitUsage {
		t.Errorf("unpaired --from: exit %d, want %d", code, exitUsage)
	}

	// A beegfs burst buffer's copy on a node whose client mount is gone sees the empty
	// mount point: here, a directory on the machine's own file system. It copies nothing
	// and fails, where a copy of "nothing" would let the teardown remove the targets.
	code, r, _ = agent(t, "-q", "stage", "--from", filepath.Join(src, "in"), "--to", filepath.Join(t.TempDir(), "in"), "--beegfs", src)
	if code != exitFailed || !strings.Contains(r.Message, "BeeGFS file system is not mounted on this node") || r.Stage != nil {
		t.Fatalf("copy from a file system that is not BeeGFS: exit %d, message %q, report %+v", code, r.Message, r.Stage)
	}
}

// requireFileSystem accepts the file system type a directory has (BeeGFS is not mounted
// here: the type of a temporary directory stands in for it) and refuses any other.
func TestRequireFileSystem(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if err := requireFileSystem(dir, uint32(st.Type), "this"); err != nil {
		t.Errorf("its own type refused: %v", err)
	}
	if err := requireFileSystem(dir, beegfsMagic, "BeeGFS"); err == nil || !strings.Contains(err.Error(), "0x19830326") {
		t.Errorf("not BeeGFS, accepted or unclear: %v", err)
	}
	if err := requireFileSystem(filepath.Join(dir, "gone"), beegfsMagic, "BeeGFS"); err == nil {
		t.Error("a missing directory accepted")
	}
}

// The stage subcommand with an object store on one side (gofakes3 in the process): a round
// trip through s3:// with the credentials from the environment under the URL's env-prefix,
// mixed with a directory pair in one run, and the message when credentials are missing.
func TestStageS3(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("store"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	src, dst := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "data"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("S3_0_AWS_ACCESS_KEY_ID", "id")
	t.Setenv("S3_0_AWS_SECRET_ACCESS_KEY", "secret")
	url := "s3://store/run-7?env-prefix=S3_0_&endpoint=" + srv.URL
	code, r, _ := agent(t, "-q", "stage", "--s3-region", "us-east-1", "--from", src, "--to", url,
		"--from", src, "--to", filepath.Join(dst, "copy"))
	if code != exitOK || r.Stage == nil || r.Stage.Files != 2 || r.Stage.Bytes != 20 {
		t.Fatalf("stage-out: exit %d, report %+v %s", code, r.Stage, r.Message)
	}
	code, r, _ = agent(t, "-q", "stage", "--s3-region", "us-east-1", "--from", url, "--to", filepath.Join(dst, "in"))
	if code != exitOK || r.Stage == nil || r.Stage.Files != 1 {
		t.Fatalf("stage-in: exit %d, report %+v %s", code, r.Stage, r.Message)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "in", "data")); err != nil || string(b) != "0123456789" {
		t.Fatalf("staged in %q %v", b, err)
	}

	t.Setenv("S3_0_AWS_SECRET_ACCESS_KEY", "")
	code, r, _ = agent(t, "-q", "stage", "--from", url, "--to", filepath.Join(dst, "in"))
	if code != exitFailed || !strings.Contains(r.Message, "not AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("half the credentials: exit %d message %q", code, r.Message)
	}
	if code, _, _ := agent(t, "-q", "stage", "--from", url, "--to", url); code != exitUsage {
		t.Errorf("s3 to s3: exit %d, want %d", code, exitUsage)
	}
}

func atoiDefault(s string, d int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return d
	}
	return n
}
