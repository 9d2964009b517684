package beegfs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// StorageBench is BeeGFS's built-in storage-target benchmark, the engine's stage-2 component
// test of the targets alone: each storage server writes, then reads back, files on its own
// targets, with no client and no network involved (ThinkParQ/beegfs
// storage/source/components/benchmarker/StorageBenchSlave.cpp). It complements fio's device
// probe: fio measures the node's storage path, StorageBench measures it through the BeeGFS
// storage service that the file system will use.
//
// The BeeGFS 8 CLI drives it (ThinkParQ/beegfs-go ctl/internal/cmd/benchmark/benchmark.go):
//
//	beegfs benchmark start [--read] --size --block-size --num-tasks --odirect --wait=<poll>
//	beegfs benchmark stop | cleanup
//
// With --wait the CLI polls until no node is running, finishing or stopping, then prints its
// tables; --verbose adds "Benchmark Results by Target" (one row per target: type, throughput,
// target ID, target alias, node alias), --unadorned drops the borders, and the global --raw
// prints throughput as the storage server reports it: KiB/s (size*1000/(ms*1024) in
// StorageBenchSlave::getResult), "<n>kiB/s". The exit code does not tell a failed benchmark
// (errors are only in the "Overall Benchmark Status" counts and the per-node status table), so
// the parser checks those.

// ComponentStorageBench is the component of the StorageBench task pod.
const ComponentStorageBench = "storagebench"

// StorageBenchPlan is one StorageBench run: every target is written by TasksPerTarget streams,
// each to its own file of SizePerTask bytes in BlockSize requests, then read back the same way.
type StorageBenchPlan struct {
	BlockSize      int64
	SizePerTask    int64
	TasksPerTarget int
	// DirectIO: O_DIRECT on the storage servers (--odirect), as fio's device probe uses direct
	// I/O, so that neither figure is the page cache's.
	DirectIO bool
}

// Bounds of a StorageBench run's size per task.
const (
	storageBenchBlock   = 1 << 20
	storageBenchMinSize = 16 << 20
	storageBenchDefault = 256 << 20
	// storageBenchStreams is the streams per node, the device probe's fio jobs.
	storageBenchStreams = 4
)

// StorageBenchPlanFor sizes a run to last about `seconds` on the fastest node: the streams of
// a node (4, like the fio device probe's jobs, spread over the node's targets) together write
// fastestWrite x seconds. Without a measured rate it writes 256 MiB per task. The files stay on
// the targets until cleanup, so they may take at most half the least free space of a node.
func StorageBenchPlanFor(targetsPerNode int, fastestWrite, leastFree int64, seconds int) StorageBenchPlan {
	t := max(1, targetsPerNode)
	tasks := max(1, (storageBenchStreams+t-1)/t)
	streams := int64(t * tasks)
	size := int64(storageBenchDefault)
	if fastestWrite > 0 && seconds > 0 {
		size = fastestWrite * int64(seconds) / streams
	}
	if leastFree > 0 {
		size = min(size, leastFree/2/streams)
	}
	size = (size + storageBenchBlock - 1) / storageBenchBlock * storageBenchBlock
	size = max(size, storageBenchMinSize)
	return StorageBenchPlan{BlockSize: storageBenchBlock, SizePerTask: size, TasksPerTarget: tasks, DirectIO: true}
}

// StorageBenchPod runs StorageBench from the management node, like the readiness check.
func (in Instance) StorageBenchPod(p StorageBenchPlan) *corev1.Pod {
	pod := in.cliTask(ComponentStorageBench, in.StorageBenchScript(p), 900)
	// Time for `benchmark stop` and `cleanup` when the pod is stopped (validation budget cut,
	// deletion): stopping the pod does not stop the benchmark on the storage servers.
	pod.Spec.TerminationGracePeriodSeconds = ptr(int64(60))
	return pod
}

// StorageBenchScript writes, then reads, every storage target, removes the benchmark files and
// leaves the CLI's status counts, error lines and per-target rows (whitespace squeezed, the
// rows cut to type, throughput and target ID) in the termination log, each run under a
// "== <op> (exit <code>) ==" line. The kubelet keeps 4 KiB of it: about 80 targets' rows.
// The CLI runs in the background so that SIGTERM reaches the trap at once: it stops the
// benchmark and removes its files on the servers.
func (in Instance) StorageBenchScript(p StorageBenchPlan) string {
	flags := fmt.Sprintf("--size=%d --block-size=%d --num-tasks=%d", p.SizePerTask, p.BlockSize, p.TasksPerTarget)
	if p.DirectIO {
		flags += " --odirect"
	}
	return fmt.Sprintf(`set -u
B="%s --raw"
F="%s --wait=2s --verbose --unadorned"
out=/tmp/storagebench
stop() {
  $B benchmark stop >/dev/null 2>&1
  $B benchmark cleanup >/dev/null 2>&1
  echo "stopped before the end (the benchmark was stopped and its files removed)" > /dev/termination-log
  exit 143
}
trap stop TERM INT
keep() {
  sed -E -e 's/[|]/ /g' -e 's/^[[:space:]]+//' -e 's/[[:space:]]+/ /g' -e 's/ $//' \
    -e 's/^(write|read) ([0-9]+kiB\/s) (s:[0-9]+) .*/\1 \2 \3/' "$1" |
    grep -E '^(write|read) [0-9]|^UNINITIALIZED |^[0-9]+( [0-9]+){8}$|[Ee]rror|ERROR'
}
# Files of an earlier, interrupted attempt.
$B benchmark cleanup >/dev/null 2>&1
$B benchmark start $F > $out.write 2>&1 & wait $!; w=$?
r=1
if [ $w -eq 0 ]; then
  $B benchmark start --read $F > $out.read 2>&1 & wait $!; r=$?
fi
$B benchmark cleanup > $out.cleanup 2>&1 & wait $!; c=$?
{ echo "== write (exit $w) =="; keep $out.write
  echo "== read (exit $r) =="; [ $w -eq 0 ] && keep $out.read
  [ $c -eq 0 ] || { echo "== cleanup (exit $c) =="; keep $out.cleanup; }
} | head -c 4096 > /dev/termination-log
[ $w -eq 0 ] && [ $r -eq 0 ]
`, in.cli(), flags)
}

// StorageBenchTarget is one storage target's StorageBench figures.
type StorageBenchTarget struct {
	// ID is the numeric target ID (StorageTargetID), Node the Kubernetes node it is on.
	ID   int
	Node string
	// Write and Read are bytes per second (the servers report KiB/s).
	Write, Read int64
}

// StorageBenchResult is a run's figures: per target, and per node as the sum over its targets
// (the targets of a node share its storage path and ran at the same time, so the sum is the
// node's aggregate under all streams, comparable with fio's figure for the node).
type StorageBenchResult struct {
	Targets []StorageBenchTarget
	Nodes   map[string]StorageBenchNode
	// Notes are what a reader of the figures should know that does not invalidate them.
	Notes []string
}

// StorageBenchNode is one node's sum over its targets.
type StorageBenchNode struct {
	Write, Read int64
	Targets     int
}

var (
	// A "Benchmark Results by Target" row: type, throughput (raw "<n>kiB/s", or "<x> <IEC>B/s"
	// without --raw), target ID ("s:<id>", beegfs LegacyId), then alias and node alias.
	sbRowRe = regexp.MustCompile(`(?i)^(write|read)\s+([0-9]+(?:\.[0-9]+)?)\s*([kmgtpe]i)?B/s\s+s:([0-9]+)\b`)
	// The "Overall Benchmark Status" counts, under the header of the nine states.
	sbCountsRe  = regexp.MustCompile(`^[0-9]+( [0-9]+){8}$`)
	sbSectionRe = regexp.MustCompile(`^== (write|read|cleanup) \(exit ([0-9]+)\) ==$`)
)

// terminationMessageLimit is what the kubelet keeps of a termination message.
const terminationMessageLimit = 4096

// The columns of "Overall Benchmark Status", in the CLI's order (printOverallStatus).
var sbStates = []string{"uninitialized", "initialized", "error", "running", "stopping", "stopped", "finishing", "finished", "unknown"}

var iecFactor = map[string]float64{"": 1, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40, "pi": 1 << 50, "ei": 1 << 60}

// ParseStorageBench reads the StorageBench task's termination message (StorageBenchScript)
// into per-target and per-node figures. nodes are the burst buffer's nodes in order: target ID
// StorageTargetID(i, t) is on nodes[i]. Every target of every node must have a write and a
// read figure above zero, and no storage node may report an error.
func ParseStorageBench(msg string, nodes []string, targetsPerNode int) (StorageBenchResult, error) {
	type fig struct{ write, read int64 }
	figs := map[int]*fig{}
	section := ""
	exits := map[string]int{}
	var problems, notes []string
	header := false
	seen := map[string]bool{} // "<op>/<id>" rows of the current section
	for _, line := range strings.Split(msg, "\n") {
		line = strings.Join(strings.Fields(strings.ReplaceAll(line, "|", " ")), " ")
		if line == "" {
			continue
		}
		if m := sbSectionRe.FindStringSubmatch(line); m != nil {
			section = m[1]
			code, err := strconv.Atoi(m[2])
			if err != nil {
				code = -1 // not a shell's exit code: not a success either
			}
			exits[section] = code
			seen = map[string]bool{}
			continue
		}
		if strings.HasPrefix(strings.ToLower(line), "uninitialized ") {
			header = true
			continue
		}
		if header && sbCountsRe.MatchString(line) {
			header = false
			counts := strings.Fields(line)
			for _, i := range []int{2, 3, 4, 6} { // error, running, stopping, finishing
				n, err := strconv.Atoi(counts[i])
				switch {
				case err != nil:
					// Too many digits for a count of nodes: garbled, and it could hide errors.
					problems = append(problems, fmt.Sprintf("%s: the %s count %q cannot be read", section, sbStates[i], counts[i]))
				case n > 0 && i == 2:
					problems = append(problems, fmt.Sprintf("%s: %d storage node(s) report an error", section, n))
				case n > 0:
					problems = append(problems, fmt.Sprintf("%s: %d storage node(s) still %s", section, n, sbStates[i]))
				}
			}
			continue
		}
		header = false
		m := sbRowRe.FindStringSubmatch(line)
		if m == nil {
			// A storage node's status row ("Benchmark Status by Node", printed when any node
			// failed; the nodes without error say "(no error)") or the CLI's own error.
			l := strings.ToLower(line)
			if section != "" && strings.Contains(l, "error") && !strings.Contains(l, "(no error)") && !strings.HasPrefix(l, "node id ") {
				if section == "cleanup" {
					notes = append(notes, "cleanup: "+line)
				} else {
					problems = append(problems, section+": "+line)
				}
			}
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: %v", line, err)
		}
		v *= iecFactor[strings.ToLower(m[3])]
		// Bounded before the conversion to int64 (Go's conversion of a larger float is
		// implementation-defined) and so that the node sums below stay far from overflow.
		if err := limits.CheckBytesPerSecond(v, limits.MaxDeviceBytesPerSecond); err != nil {
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: a target's throughput of %w", line, err)
		}
		bps := int64(v)
		id, err := strconv.Atoi(m[4])
		if err != nil || id > math.MaxUint16 {
			// BeeGFS target IDs are 16-bit (NumNodeID).
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: target ID %q is not a BeeGFS target ID", line, m[4])
		}
		op := strings.ToLower(m[1])
		if seen[op+"/"+m[4]] {
			return StorageBenchResult{}, fmt.Errorf("StorageBench row %q: a second %s figure for target %d in one run", line, op, id)
		}
		seen[op+"/"+m[4]] = true
		f := figs[id]
		if f == nil {
			f = &fig{}
			figs[id] = f
		}
		if op == "write" {
			f.write = bps
		} else {
			f.read = bps
		}
	}
	for _, op := range []string{"write", "read"} {
		code, ok := exits[op]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("no %s run in the output", op))
		case code != 0:
			problems = append(problems, fmt.Sprintf("beegfs benchmark start (%s) exited %d", op, code))
		}
	}
	res := StorageBenchResult{Nodes: map[string]StorageBenchNode{}, Notes: notes}
	if code, ok := exits["cleanup"]; ok && code != 0 {
		// The figures stand; the files go with the targets at teardown.
		res.Notes = append(res.Notes, fmt.Sprintf("beegfs benchmark cleanup exited %d: the benchmark files stay on the targets until teardown", code))
	}
	var missing []string
	for i, node := range nodes {
		for t := range max(1, targetsPerNode) {
			id := StorageTargetID(i, t)
			f := figs[id]
			delete(figs, id)
			if f == nil || f.write <= 0 || f.read <= 0 {
				missing = append(missing, fmt.Sprintf("%d (%s)", id, node))
				continue
			}
			res.Targets = append(res.Targets, StorageBenchTarget{ID: id, Node: node, Write: f.write, Read: f.read})
			n := res.Nodes[node]
			var okW, okR bool
			n.Write, okW = addBytesPerSecond(n.Write, f.write)
			n.Read, okR = addBytesPerSecond(n.Read, f.read)
			if !okW || !okR {
				return res, fmt.Errorf("StorageBench: the targets of node %s add up to more than %s: the figures are corrupt",
					node, limits.FormatBytesPerSecond(limits.MaxBytesPerSecond))
			}
			n.Targets++
			res.Nodes[node] = n
		}
	}
	if len(missing) > 0 {
		p := "no write and read figure for target(s) " + limitList(missing, 8)
		if len(msg) >= terminationMessageLimit-100 {
			p += fmt.Sprintf(" (the output filled the %d-byte termination message: too many targets for one report)", terminationMessageLimit)
		}
		problems = append(problems, p)
	}
	if len(figs) > 0 {
		var ids []int
		for id := range figs {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		problems = append(problems, fmt.Sprintf("figures for target(s) this burst buffer does not have: %v", ids))
	}
	if len(problems) > 0 {
		return res, fmt.Errorf("StorageBench: %s", strings.Join(problems, "; "))
	}
	return res, nil
}

// addBytesPerSecond adds two non-negative figures; ok is false when the sum exceeds
// limits.MaxBytesPerSecond (which also keeps it from wrapping around int64).
func addBytesPerSecond(a, b int64) (sum int64, ok bool) {
	if a < 0 || b < 0 || a > int64(limits.MaxBytesPerSecond)-b {
		return 0, false
	}
	return a + b, true
}

// StorageBenchOutcome is where the StorageBench task of a burst buffer is.
type StorageBenchOutcome struct {
	// Done is true when the task ended, with figures (Result) or without (Failure).
	Done    bool
	Result  StorageBenchResult
	Failure string
}

// StorageBench runs the StorageBench task on a provisioned instance (status.beegfs is set) and
// reads its figures. A failed run is reported, not retried: StorageBench is an extra beside
// fio's device figures, and a second attempt would spend the validation budget on the same
// fault.
func (e Engine) StorageBench(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string, p StorageBenchPlan) (StorageBenchOutcome, error) {
	if e.Client == nil {
		return StorageBenchOutcome{}, errors.New("the beegfs engine has no Kubernetes client (operator wiring)")
	}
	if bb.Status.BeeGFS == nil || bb.Status.BeeGFS.ManagementAddress == "" {
		return StorageBenchOutcome{}, errors.New("StorageBench needs a provisioned file system (status.beegfs)")
	}
	st, msg, err := engine.RunTask(ctx, e.Client, e.instance(bb, nodes).StorageBenchPod(p))
	if err != nil || st == nodetask.Running {
		return StorageBenchOutcome{}, err
	}
	res, perr := ParseStorageBench(msg, nodes, TargetsPerNode(bb))
	switch {
	case st == nodetask.Failed && !strings.Contains(msg, "== write"):
		// Ended before it ran (image, deadline, stopped): the message is all there is.
		return StorageBenchOutcome{Done: true, Failure: "the StorageBench task failed: " + oneLine(msg)}, nil
	case perr != nil:
		return StorageBenchOutcome{Done: true, Failure: perr.Error()}, nil
	}
	return StorageBenchOutcome{Done: true, Result: res}, nil
}

// Summary is the outcome as stage 2 publishes it (status.limits.components.storageBench).
func (o StorageBenchOutcome) Summary(p StorageBenchPlan, end time.Time) *v1alpha1.StorageBenchSummary {
	tool := "beegfs benchmark start (StorageBench, on the storage servers)"
	if p.DirectIO {
		tool = "beegfs benchmark start --odirect (StorageBench, on the storage servers)"
	}
	sum := &v1alpha1.StorageBenchSummary{
		Tool: tool, BlockSizeBytes: p.BlockSize, SizePerTaskBytes: p.SizePerTask, TasksPerTarget: int32(p.TasksPerTarget),
	}
	if o.Failure != "" {
		sum.Message = o.Failure
		return sum
	}
	t := metav1.NewTime(end)
	sum.MeasuredTime = &t
	for _, tg := range o.Result.Targets {
		sum.Targets = append(sum.Targets, v1alpha1.StorageBenchTarget{
			ID: int32(tg.ID), Node: tg.Node, WriteBytesPerSecond: tg.Write, ReadBytesPerSecond: tg.Read,
		})
	}
	sum.Message = strings.Join(o.Result.Notes, "; ")
	return sum
}
