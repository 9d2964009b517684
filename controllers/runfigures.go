package controllers

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// monitorSweep is stage 4: per-node figures at the best write point over all nodes (the
// largest M), with the stragglers among them and their warnings.
func monitorSweep(s *scope, runs map[sweepPoint][]nodeRun) (*v1alpha1.MonitoringLimits, []v1alpha1.Warning) {
	var best []nodeRun
	bestAgg := -1.0
	for p, got := range runs {
		if p.m == len(s.nodes) {
			if a := aggregate(got, limits.Write, sharedFS(s.bb)); a > bestAgg {
				best, bestAgg = got, a
			}
		}
	}
	mon := &v1alpha1.MonitoringLimits{}
	var figs []limits.NodeFigure
	for _, run := range best {
		nm := v1alpha1.NodeMonitoring{Name: run.node, WriteBytesPerSecond: positive(int64(run.write.BytesPerSecond))}
		if run.monitor != nil {
			if len(run.monitor.Devices) > 0 {
				nm.DevicePeakBytesPerSecond = positive(int64(run.monitor.Devices[0].PeakBytesPerSecond))
			}
			if len(run.monitor.Interfaces) > 0 {
				nm.NetworkPeakBytesPerSecond = positive(int64(run.monitor.Interfaces[0].PeakBytesPerSecond))
			}
		}
		mon.Nodes = append(mon.Nodes, nm)
		figs = append(figs, limits.NodeFigure{Node: run.node, Operation: limits.Write, BytesPerSecond: limits.Bytes(run.write.BytesPerSecond)})
	}
	sort.Slice(mon.Nodes, func(i, j int) bool { return mon.Nodes[i].Name < mon.Nodes[j].Name })
	var warnings []v1alpha1.Warning
	if len(figs) > 1 {
		if st, err := limits.FindStragglers(figs, float64(s.bb.Spec.Validation.StragglerPercent)/100); err == nil {
			mon.Stragglers = st.Nodes
			// Only the slow nodes are stragglers; with two nodes the median is their mean and
			// the fast one would be "above" it by the same share, which says nothing.
			slow := map[string]bool{}
			for _, n := range st.Nodes {
				slow[n] = true
			}
			for _, w := range apibridge.WarningsToAPI(st.Warnings) {
				if slow[w.Node] {
					warnings = append(warnings, w)
				}
			}
		}
	}
	return mon, warnings
}

// aggregate is a point's aggregate over the nodes that ran it at once (allClients).
//
// shared: the nodes ran on one file system (beegfs), and the figure is what that file system
// moved: total bytes over the slowest runtime, as IOR and fio's client mode count, when the
// runs ran at once (together starts them so); runs that still started apart (a pod that
// started more than together's 30 s late) count over the time they spanned together
// (spanned): a node that ran while another had not started met less contention, and its
// bytes must not count as moved beside the other's (notAtOnce marks such a point disturbed).
// Otherwise (the local engine, a node-local comparison) each node measured its own storage,
// not necessarily at the same moment (the quick profile chains each node's runs on its own),
// and the figure is the sum of the nodes' rates: one node's slower end (a final flush) must
// not lower what the others measured.
func aggregate(runs []nodeRun, op limits.Operation, shared bool) float64 {
	results := make([]bench.Result, 0, len(runs))
	for _, r := range runs {
		res := r.write
		if op == limits.Read {
			res = r.read
		}
		results = append(results, res)
	}
	if shared {
		return allClients(results, spanned(results))
	}
	sum := 0.0
	for _, res := range results {
		sum += allClients([]bench.Result{res}, 0)
	}
	return sum
}

// spanTolerance is the share of the slowest runtime by which runs may seem to span longer
// together without running apart: a run's end is stamped when its tool returned (after the
// read's unlink, on its node's clock), so its start, the end less the runtime, is a little
// late, by a different amount on each node.
const spanTolerance = 0.05

// spanned is the time from the first of results' runs starting to the last ending, less
// spanTolerance of the slowest runtime, in seconds; 0 when a result does not say when it
// ended (an older agent).
func spanned(results []bench.Result) float64 {
	first, last, slowest, ok := window(results)
	if !ok {
		return 0
	}
	return last.Sub(first).Seconds() - spanTolerance*slowest
}

// startOf is when res's run started: its end less its runtime.
func startOf(res bench.Result) time.Time {
	return res.End.Add(-time.Duration(res.RuntimeSeconds * float64(time.Second)))
}

// window is when results' runs started, the first of them, and ended, the last of them, with
// the slowest runtime; false when a result does not say when it ended.
func window(results []bench.Result) (first, last time.Time, slowest float64, ok bool) {
	for i, res := range results {
		if res.End.IsZero() {
			return time.Time{}, time.Time{}, 0, false
		}
		start := startOf(res)
		if i == 0 || start.Before(first) {
			first = start
		}
		if i == 0 || res.End.After(last) {
			last = res.End
		}
		slowest = max(slowest, res.RuntimeSeconds)
	}
	return first, last, slowest, len(results) > 0
}

// apartShare is how far, as a share of the slowest runtime and at least apartFloor, the runs
// of a point on a shared file system may start apart before the point counts as disturbed:
// its runs did not run at once (a pod that started later than together waits), so the
// figure, counted over the time they spanned together, is low. The floor stands above what
// fio's start and the nodes' clocks add.
const (
	apartShare = 0.1
	apartFloor = 0.25
)

// notAtOnce names, for a point on a shared file system (shared), the node whose write started
// last when the point's runs started more than apartShare of the slowest runtime apart; ""
// when they ran at once, on one node, or when a report does not say when its runs ended.
func notAtOnce(shared bool, runs []nodeRun) string {
	if !shared || len(runs) < 2 {
		return ""
	}
	results := make([]bench.Result, len(runs))
	for i, r := range runs {
		results[i] = r.write
	}
	first, _, slowest, ok := window(results)
	if !ok {
		return ""
	}
	late, lateStart := "", first
	for _, r := range runs {
		if start := startOf(r.write); start.After(lateStart) {
			late, lateStart = r.node, start
		}
	}
	apart := lateStart.Sub(first).Seconds()
	if apart <= max(apartShare*slowest, apartFloor) {
		return ""
	}
	return fmt.Sprintf("node %s: its run started %.1f s after the point's first, in runs of %.1f s (the point's runs did not run at once)", late, apart, slowest)
}

// together has pod, a run of a point of m nodes whose runs are named name(0..m-1), start at
// once with the others when the nodes share one file system (nodetask.StartTogether): what
// the file system moves is what its clients move at once.
func together(bb *v1alpha1.BurstBuffer, pod *corev1.Pod, m int, name func(j int) string) *corev1.Pod {
	if !sharedFS(bb) {
		return pod
	}
	return togetherOn(bb, pod, m, name, nodetask.FileSystemMount)
}

// togetherOn has pod, a run of m on the shared file system mounted at mount in the pod, start
// at once with the others (nodetask.StartTogetherIn); a run of one node starts as its pod does.
func togetherOn(bb *v1alpha1.BurstBuffer, pod *corev1.Pod, m int, name func(j int) string, mount string) *corev1.Pod {
	if m < 2 {
		return pod
	}
	names := make([]string, m)
	for j := range names {
		names[j] = name(j)
	}
	nodetask.StartTogetherIn(bb, pod, names, mount)
	return pod
}

// sharedFS: the burst buffer's nodes share one file system (their runs' figures add up as
// one file system's, aggregate).
func sharedFS(bb *v1alpha1.BurstBuffer) bool { return bb.Spec.Engine == v1alpha1.EngineBeeGFS }

// allClients is the way fio's "All clients" sums: total bytes over the slowest runtime, or
// over span seconds when the runs spanned longer together; 0 when no runtime is known.
func allClients(results []bench.Result, span float64) float64 {
	var bytes, slowest float64
	for _, res := range results {
		b := float64(res.Bytes)
		if b == 0 { // a report without totals: fall back to rate x runtime
			b = res.BytesPerSecond * res.RuntimeSeconds
		}
		bytes += b
		slowest = max(slowest, res.RuntimeSeconds)
	}
	if slowest == 0 {
		return 0
	}
	return bytes / max(slowest, span)
}

func readIdeal(node, msg string) (nodeRun, error) {
	rep, err := readReport(msg)
	if err != nil {
		return nodeRun{}, fmt.Errorf("unreadable report: %v", err)
	}
	run := nodeRun{node: node, monitor: rep.Monitor, start: rep.StartTime, end: rep.EndTime}
	for _, res := range rep.Results {
		switch res.Operation {
		case bench.OpWrite:
			run.write = res
		case bench.OpRead:
			run.read = res
		}
	}
	if run.write.BytesPerSecond <= 0 || run.read.BytesPerSecond <= 0 || run.write.RuntimeSeconds <= 0 || run.read.RuntimeSeconds <= 0 {
		return run, fmt.Errorf("report has no write and read figures with runtimes")
	}
	return run, nil
}
