package beegfs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
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
	pod := in.cliTask(nodetask.ComponentStorageBench, in.StorageBenchScript(p), 900)
	// Time for `benchmark stop` and `cleanup` when the pod is stopped (validation budget cut,
	// deletion): stopping the pod does not stop the benchmark on the storage servers.
	pod.Spec.TerminationGracePeriodSeconds = ptr.To(int64(60))
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
%sB="bee --raw"
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
`, in.cliFunc(), flags)
}

// ParseStorageBench reads the StorageBench task's termination message (StorageBenchScript)
// into per-target and per-node figures (bench.ParseStorageBench). nodes are the burst buffer's
// nodes in order: target ID StorageTargetID(i, t) is on nodes[i].
func ParseStorageBench(msg string, nodes []string, targetsPerNode int) (bench.StorageBenchResult, error) {
	return bench.ParseStorageBench(msg, nodes, targetsPerNode, StorageTargetID)
}

// StorageBenchOutcome is where the StorageBench task of a burst buffer is.
type StorageBenchOutcome struct {
	// Done is true when the task ended, with figures (Result) or without (Failure).
	Done    bool
	Result  bench.StorageBenchResult
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
		return StorageBenchOutcome{Done: true, Failure: "the StorageBench task failed: " + shorten.OneLine(msg, messageMax)}, nil
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
