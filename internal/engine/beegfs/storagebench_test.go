package beegfs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/golden"
)

func TestStorageBenchPlanFor(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		name              string
		targets           int
		write, free       int64
		seconds           int
		wantSize          int64
		wantTasks         int
		wantStreamsOnNode int
	}{
		// 500 MB/s x 3 s over 4 streams = 375e6 B, rounded up to whole MiB.
		{"one target", 1, 500e6, 100 << 30, 3, 358 * mi, 4, 4},
		{"two targets share the four streams", 2, 500e6, 100 << 30, 3, 358 * mi, 2, 4},
		{"three targets: two streams each", 3, 600e6, 100 << 30, 10, 954 * mi, 2, 6},
		{"half the least free space at most", 1, 2e9, 1 << 30, 10, 128 * mi, 4, 4},
		{"no measured rate: 256 MiB", 1, 0, 0, 3, 256 * mi, 4, 4},
		{"never below 16 MiB", 1, 1e6, 0, 3, 16 * mi, 4, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := StorageBenchPlanFor(c.targets, c.write, c.free, c.seconds)
			if p.SizePerTask != c.wantSize || p.TasksPerTarget != c.wantTasks || p.BlockSize != mi || !p.DirectIO {
				t.Errorf("got %+v, want size %d (%d MiB), %d tasks, 1 MiB blocks, direct I/O", p, c.wantSize, c.wantSize/mi, c.wantTasks)
			}
			if s := p.TasksPerTarget * c.targets; s != c.wantStreamsOnNode {
				t.Errorf("%d streams per node, want %d", s, c.wantStreamsOnNode)
			}
		})
	}
}

func TestStorageBenchGolden(t *testing.T) {
	in := testInstance(2)
	p := StorageBenchPlanFor(TargetsPerNode(in.BB), 500e6, 100<<30, 3)
	pod := in.StorageBenchPod(p)
	golden.Assert(t, "storagebench-pod.yaml", golden.YAML(t, pod))
	golden.Assert(t, "storagebench.sh", []byte(in.StorageBenchScript(p)))

	// Same placement, mounts and privileges as the readiness check; only its own script,
	// deadline and grace period differ.
	ready := in.ReadyPod()
	if pod.Spec.NodeName != ready.Spec.NodeName || !pod.Spec.HostNetwork ||
		pod.Spec.Containers[0].Image != ready.Spec.Containers[0].Image {
		t.Error("StorageBench must run like the readiness check: management node, host network, the CLI image")
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Secret == nil || pod.Spec.Containers[0].VolumeMounts[0].MountPath != AuthDir {
		t.Error("StorageBench needs the auth Secret mounted like the readiness check")
	}
	if sc := pod.Spec.Containers[0].SecurityContext; sc.Privileged != nil || *sc.AllowPrivilegeEscalation || len(sc.Capabilities.Add) != 0 {
		t.Error("StorageBench runs unprivileged: the storage servers do the I/O")
	}
}

// runStorageBenchScript runs the task script with sh against a stand-in for the beegfs CLI
// that prints the given outputs (testdata/storagebench, derived from the CLI's printing code)
// (or at an absolute path) and exits with the given codes. It returns the termination log, the script's exit code and
// the CLI calls.
func runStorageBenchScript(t *testing.T, in Instance, writeOut, readOut string, writeExit, readExit int) (string, int, []string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	fake := `#!/bin/sh
echo "$*" >> "$SB_DIR/calls"
case "$*" in
  *"benchmark start"*"--read"*) cat "$SB_READ"; exit $SB_READ_EXIT ;;
  *"benchmark start"*) cat "$SB_WRITE"; exit $SB_WRITE_EXIT ;;
  *"benchmark cleanup"*) echo "Cleaning up storage benchmark folder on each target..." >&2; exit 0 ;;
esac
echo "unexpected call: $*" >&2
exit 2
`
	if err := os.WriteFile(filepath.Join(dir, "beegfs"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	script := in.StorageBenchScript(StorageBenchPlanFor(TargetsPerNode(in.BB), 500e6, 100<<30, 3))
	script = strings.ReplaceAll(script, "/dev/termination-log", filepath.Join(dir, "termination-log"))
	script = strings.ReplaceAll(script, "out=/tmp/storagebench", "out="+filepath.Join(dir, "sb"))
	sample := func(name string) string {
		if filepath.IsAbs(name) {
			return name
		}
		return filepath.Join("testdata", "storagebench", name)
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "SB_DIR="+dir,
		"SB_WRITE="+sample(writeOut), "SB_READ="+sample(readOut),
		"SB_WRITE_EXIT="+strconv.Itoa(writeExit), "SB_READ_EXIT="+strconv.Itoa(readExit))
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	msg, err := os.ReadFile(filepath.Join(dir, "termination-log"))
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	return string(msg), code, strings.Split(strings.TrimSpace(string(calls)), "\n")
}

// twoTargets is testInstance(2) with two storage targets per node: IDs 1, 2 and 17, 18, as in
// the samples.
func twoTargets() Instance {
	in := testInstance(2)
	in.BB.Spec.Layout.StorageTargetsPerNode = 2
	return in
}

func TestStorageBenchScriptAndParser(t *testing.T) {
	in := twoTargets()
	msg, code, calls := runStorageBenchScript(t, in, "write-ok.out", "read-ok.out", 0, 0)
	if code != 0 {
		t.Fatalf("script exited %d:\n%s", code, msg)
	}
	golden.Assert(t, "storagebench-termination-log.txt", []byte(msg))
	if len(calls) != 4 || !strings.Contains(calls[0], "benchmark cleanup") || !strings.Contains(calls[2], "--read") || !strings.Contains(calls[3], "benchmark cleanup") {
		t.Errorf("want cleanup, write, read, cleanup; got %q", calls)
	}
	for _, want := range []string{"--raw", "--mgmtd-addr=10.0.0.1:18010", "--size=375390208", "--block-size=1048576", "--num-tasks=2", "--odirect", "--wait=2s", "--verbose", "--unadorned"} {
		if !strings.Contains(calls[1], want) {
			t.Errorf("write call %q lacks %s", calls[1], want)
		}
	}

	res, err := ParseStorageBench(msg, in.Nodes, 2)
	if err != nil {
		t.Fatal(err)
	}
	// KiB/s from the samples, times 1024.
	wantTargets := []bench.StorageBenchTarget{
		{ID: 1, Node: "worker-01", Write: 1524113 * 1024, Read: 2911873 * 1024},
		{ID: 2, Node: "worker-01", Write: 1498732 * 1024, Read: 2893406 * 1024},
		{ID: 17, Node: "worker-02", Write: 1610042 * 1024, Read: 3021771 * 1024},
		{ID: 18, Node: "worker-02", Write: 1587355 * 1024, Read: 2987650 * 1024},
	}
	if len(res.Targets) != len(wantTargets) {
		t.Fatalf("targets %+v", res.Targets)
	}
	for i, w := range wantTargets {
		if res.Targets[i] != w {
			t.Errorf("target %d: got %+v, want %+v", i, res.Targets[i], w)
		}
	}
	if n := res.Nodes["worker-01"]; n.Targets != 2 || n.Write != (1524113+1498732)*1024 || n.Read != (2911873+2893406)*1024 {
		t.Errorf("worker-01: %+v", n)
	}
	if n := res.Nodes["worker-02"]; n.Targets != 2 || n.Write != (1610042+1587355)*1024 {
		t.Errorf("worker-02: %+v", n)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes: %v", res.Notes)
	}

	sum := StorageBenchOutcome{Done: true, Result: res}.Summary(StorageBenchPlanFor(2, 500e6, 100<<30, 3), time.Unix(0, 0))
	if len(sum.Targets) != 4 || sum.Targets[2].ID != 17 || sum.Targets[2].Node != "worker-02" || sum.TasksPerTarget != 2 ||
		!strings.Contains(sum.Tool, "StorageBench") || !strings.Contains(sum.Tool, "--odirect") || sum.MeasuredTime == nil || sum.Message != "" {
		t.Errorf("summary %+v", sum)
	}
}

func TestStorageBenchScriptReportsNodeErrors(t *testing.T) {
	in := testInstance(2) // one target per node: IDs 1 and 17
	msg, code, _ := runStorageBenchScript(t, in, "write-error.out", "read-ok.out", 0, 0)
	if code != 0 {
		t.Fatalf("the CLI exits 0 on a failed benchmark, so does the script; got %d", code)
	}
	_, err := ParseStorageBench(msg, in.Nodes, 1)
	if err == nil {
		t.Fatal("a storage node's error must fail the run")
	}
	for _, want := range []string{"write: 1 storage node(s) report an error", "s:2 node_storage_2 error status I/O error from worker", "does not have: [2 18]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "(no error)") || strings.Contains(err.Error(), "NODE ID") {
		t.Errorf("error %q repeats rows without errors", err)
	}
	sum := StorageBenchOutcome{Done: true, Failure: err.Error()}.Summary(StorageBenchPlanFor(1, 0, 0, 3), time.Unix(0, 0))
	if sum.Message != err.Error() || len(sum.Targets) != 0 || sum.MeasuredTime != nil {
		t.Errorf("a failed run's summary says why and has no figures: %+v", sum)
	}
}

func TestStorageBenchScriptWhenTheCLIFails(t *testing.T) {
	in := testInstance(2)
	dir := t.TempDir()
	failed := filepath.Join(dir, "failed.out")
	if err := os.WriteFile(failed, []byte("Starting storage benchmark...\nError: unable to connect to the management service at 10.0.0.1:18010\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, code, calls := runStorageBenchScript(t, in, failed, "read-ok.out", 1, 0)
	if code == 0 {
		t.Error("the script must fail when the CLI does")
	}
	for _, c := range calls {
		if strings.Contains(c, "--read") {
			t.Error("no read run after a failed write run")
		}
	}
	_, err := ParseStorageBench(msg, in.Nodes, 1)
	if err == nil || !strings.Contains(err.Error(), "beegfs benchmark start (write) exited 1") || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("got %v\nfrom:\n%s", err, msg)
	}
}

func TestParseStorageBench(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "storagebench", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	nodes := []string{"a", "b"}
	ok := "== write (exit 0) ==\n" + read("write-ok.out") + "== read (exit 0) ==\n" + read("read-ok.out")
	counts := strings.Split(read("write-ok.out"), "\n")[4] // the "Overall Benchmark Status" counts

	// The older CLI's boxed tables without --raw: borders ignored, whole IEC units.
	old := "== write (exit 0) ==\n" + read("write-old-cli.out") + "== read (exit 0) ==\n" +
		"| read | 3GiB/s | s:1 | target_storage_1 | node_storage_1 |\n| read | 2.50 GiB/s | s:17 | target_storage_17 | node_storage_2 |\n"
	res, err := ParseStorageBench(old, nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes["a"].Write != 1<<30 || res.Nodes["b"].Write != 2<<30 || res.Nodes["a"].Read != 3<<30 || res.Nodes["b"].Read != 5<<29 {
		t.Errorf("old CLI: %+v", res.Nodes)
	}

	// A cleanup that failed leaves the figures standing, with a note.
	res, err = ParseStorageBench(ok+"== cleanup (exit 1) ==\nError: cleanup not possible\n", nodes, 2)
	if err != nil || len(res.Targets) != 4 || len(res.Notes) != 2 || !strings.Contains(res.Notes[1], "exited 1") {
		t.Errorf("cleanup failure: %v %+v", err, res)
	}

	for _, c := range []struct {
		name, msg, want string
		targets         int
	}{
		{"empty", "", "no write run in the output", 2},
		{"not a StorageBench output", "stopped before the end (the benchmark was stopped and its files removed)", "no read run", 2},
		{"write only", "== write (exit 0) ==\n" + read("write-ok.out") + "== read (exit 1) ==\n", "beegfs benchmark start (read) exited 1", 2},
		{"a target without figures", ok, "no write and read figure for target(s) 3 (a); 19 (b)", 3},
		{"figures of foreign targets", ok, "does not have: [2 18]", 1},
		{"zero throughput", strings.Replace(ok, "read  2987650kiB/s  s:18", "read        0kiB/s  s:18", 1), "target(s) 18 (b)", 2},
		{"still running", strings.Replace(ok, counts, "0 0 0 1 0 0 0 1 0", 1), "1 storage node(s) still running", 2},
		{"cut at the kubelet's 4 KiB", ok[:len(ok)-180], "target(s) 2 (a); 17 (b); 18 (b)", 2},
		{"unreadable number", strings.Replace(ok, "1524113kiB/s", "1.2.3kiB/s", 1), "target(s) 1 (a)", 2},
		// Absurd or garbled figures are refused, never converted or summed into a wrap-around.
		{"absurd throughput", strings.Replace(ok, "1524113kiB/s", "99999999999999999999kiB/s", 1),
			`a target's throughput of 1.024e+23 bytes/s is more than 1 TB/s`, 2},
		{"target ID beyond 16 bits", strings.Replace(ok, "s:18", "s:99999999999999999999", 1), `target ID "99999999999999999999" is not a BeeGFS target ID`, 2},
		{"a target twice in one run", strings.Replace(ok, "s:18", "s:17", 1), "a second write figure for target 17 in one run", 2},
		{"error count too long", strings.Replace(ok, counts, "0 0 99999999999999999999 0 0 0 0 2 0", 1), `the error count "99999999999999999999" cannot be read`, 2},
		{"exit code too long", strings.Replace(ok, "== read (exit 0) ==", "== read (exit 99999999999999999999) ==", 1), "(read) exited -1", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseStorageBench(c.msg, nodes, c.targets)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
