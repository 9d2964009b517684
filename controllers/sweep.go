package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// measuredLimitTolerance: how far a sweep point may lie above a stage-2 (measured) limit
// before it counts as ExceedsLimit. On the testbed, fio against a 150 MB/s blkio cap reads
// 150.4-150.9 MB/s in stage 2 and the sweep sums to within 0.1% of that.
const measuredLimitTolerance = 0.05

// probeSelector selects the pods of stages 2 and 3 of one burst buffer. The StorageBench pod
// stops the benchmark on the storage servers when it is deleted.
func probeSelector(bb *v1alpha1.BurstBuffer) labels.Selector {
	sel := labels.SelectorFromSet(labels.Set(childLabels(bb)))
	req, _ := labels.NewRequirement(nodetask.LabelComponent, selection.In, measuringComponents)
	return sel.Add(*req)
}

// grid is the stage-3 grid: spec.validation.sweep, else the profile's. quick is one short
// row over all nodes (ready in about a minute); standard doubles nodes and processes.
func grid(bb *v1alpha1.BurstBuffer, nodes int) (ms, ns []int, seconds int) {
	seconds = 5
	if sw := bb.Spec.Validation.Sweep; sw != nil && sw.DurationSeconds > 0 {
		seconds = int(sw.DurationSeconds)
	}
	switch bb.Spec.Validation.Profile {
	case v1alpha1.ProfileQuick:
		ms, ns = []int{nodes}, []int{1, 4}
		seconds = min(seconds, nodetask.QuickRunSeconds)
	default:
		for m := 1; m < nodes; m *= 2 {
			ms = append(ms, m)
		}
		ms, ns = append(ms, nodes), []int{1, 2, 4, 8}
	}
	if sw := bb.Spec.Validation.Sweep; sw != nil {
		if len(sw.Nodes) > 0 {
			ms = ints(sw.Nodes)
		}
		if len(sw.ProcessesPerNode) > 0 {
			ns = ints(sw.ProcessesPerNode)
		}
	}
	return ms, ns, seconds
}

func ints(v []int32) []int {
	out := make([]int, 0, len(v))
	for _, x := range v {
		out = append(out, int(x))
	}
	sort.Ints(out)
	return out
}

// nodeRun is one node's part of one grid point.
type nodeRun struct {
	node        string
	write, read bench.Result
	monitor     *bench.MonitorSummary
	// start and end are when the run measured (its report), pod the pod that ran it.
	start, end time.Time
	pod        *corev1.Pod
}

// sawDevice says whether the run's report counted the bytes on one block device below its
// directory in both phases (a local run; one through a BeeGFS mount has none).
func (run nodeRun) sawDevice() bool {
	return run.write.Device != "" && run.write.Device == run.read.Device
}

// reconcileSweep is stage 3 with stage-4 monitoring: the ideal workload (N processes per node
// writing, then reading back, large blocks to their own new files in one directory) on M
// nodes, point after point; each node samples its /proc counters while it runs. With the
// local engine the nodes share nothing, so a point's aggregate is the sum over its nodes.
// What the points measured so far is published after every point (a budget cut keeps it).
func (r *BurstBufferReconciler) reconcileSweep(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	points, seconds := planSweep(s.bb, len(s.nodes))
	st, ok, err := r.collectSweep(ctx, s, points, seconds)
	if err != nil || !ok {
		return ctrl.Result{}, false, err
	}
	if len(st.lp) == 0 {
		conditions.Set(s.bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonSweeping,
			fmt.Sprintf("ideal-workload sweep: point 1 of %d running", len(points)))
		return ctrl.Result{}, false, nil
	}
	if st.running >= 0 {
		// The points that ended are published now, and a budget cut keeps them: each with
		// what disturbed it, as once every point ended.
		if err := r.firstRoundConditions(ctx, s, &st); err != nil {
			return ctrl.Result{}, false, err
		}
		an, err := analyseSweep(s, st.lp)
		if err != nil {
			return ctrl.Result{}, false, err
		}
		_, err = r.publishSweep(ctx, s, st, an)
		return ctrl.Result{}, false, err
	}
	return r.secondLook(ctx, s, &st, seconds)
}

// componentSecondLook sends a stage-2 component back to be measured, once, when the sweep
// judged so far says its first round read low: a point above a limit that the component
// sets (limits.RecheckComponent), a device far below what it is known to do, or a link that
// sets a limit far below its documented rate. waits says the sweep is not done: the component
// is measured again (the sweep is judged again on the second round), or, past the budget,
// where nothing starts, it was left unsettled - the summary says what, and the budget cuts
// validation short, so that it is not kept for reuse.
func (r *BurstBufferReconciler) componentSecondLook(ctx context.Context, s *scope, an limits.Sweep) (ctrl.Result, bool, error) {
	comp := s.bb.Status.Limits.Components
	why, which := doubtedLimit(comp, an)
	if which == "" && deviceProbeRound(s.bb) < 2 {
		if node, msg := deviceFarBelowKnown(comp, r.knownDevices(ctx, s, comp)); node != "" {
			which, why = limits.ComponentDevices, msg
		} else if node, msg := nodeWroteAboveDevice(s.bb); node != "" {
			which, why = limits.ComponentDevices, msg
		} else if node, msg := deviceAboveDocumented(comp); node != "" {
			which, why = limits.ComponentDevices, msg
		}
	}
	if which == "" && networkProbeRound(s.bb) < 2 {
		if msg := linkFarBelowDocumented(comp); msg != "" {
			which, why = limits.ComponentNetwork, msg
		}
	}
	if which == "" {
		return ctrl.Result{}, false, nil
	}
	if s.lastLook {
		s.sweepSummary += fmt.Sprintf("; not settled by a second round of the %s (%s): validation.timeBudget %s ran out", which, why, budget(s.bb))
		return ctrl.Result{}, true, nil
	}
	logf.FromContext(ctx).Info("measuring a stage-2 component again", "component", which, "why", why)
	msg := why + "; it is judged once they are measured again"
	conditions.Set(s.bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonRemeasuring, msg)
	conditions.Set(s.bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonRemeasuring, msg)
	if which == limits.ComponentDevices {
		if err := r.doubtCachedFigures(ctx, s, comp, why); err != nil {
			return ctrl.Result{}, false, err
		}
		comp.DeviceProbeRound = 2
		res, _, err := r.reconcileDeviceProbes(ctx, s)
		return res, true, err
	}
	comp.NetworkProbeRound = 2
	res, _, err := r.reconcileNetwork(ctx, s)
	return res, true, err
}

// doubtCachedFigures marks the per-node cache entries that hold the device figures the first
// round published (comp) as doubted, with why: the second round measures every node again,
// and one beside other work is not cached, which would leave the figure in doubt for the next
// burst buffer to reuse. A probe that has the node to itself replaces them.
func (r *BurstBufferReconciler) doubtCachedFigures(ctx context.Context, s *scope, comp *v1alpha1.ComponentLimits, why string) error {
	doubt := fmt.Sprintf("burst buffer %s/%s measured the devices again: %s", s.bb.Namespace, s.bb.Name, why)
	return parallel.Do(len(comp.Nodes), func(i int) error {
		n := comp.Nodes[i]
		if f, ok := r.cachedFigures(ctx, n.Name, s.nodeObj(n.Name)); !ok || f.Doubted != "" || !publishedFrom(n, f) {
			return nil
		}
		return r.nodeCache().Update(ctx, n.Name, func(f *nodecache.Figures) {
			if publishedFrom(n, *f) {
				f.Doubted = doubt
			}
		})
	})
}

// publishedFrom says whether n's published device figures are f's.
func publishedFrom(n v1alpha1.NodeComponents, f nodecache.Figures) bool {
	is := func(c *v1alpha1.ComponentFigure, v int64) bool {
		return c != nil && c.MeasuredBytesPerSecond != nil && *c.MeasuredBytesPerSecond == v
	}
	return is(n.DeviceWrite, f.DeviceWriteBytesPerSecond) && is(n.DeviceRead, f.DeviceReadBytesPerSecond)
}

// doubtedLimit says why a stage-2 limit whose bottleneck a second round can settle - the
// devices' or the links' first round - is in doubt, and which component to measure again: a
// sweep point above its own limit (the ExceedsLimit warning's first), which for a point on
// fewer nodes is lower than the system's; "" when there is none.
func doubtedLimit(comp *v1alpha1.ComponentLimits, an limits.Sweep) (string, limits.Component) {
	if comp == nil {
		return "", ""
	}
	for _, w := range an.Warnings {
		if w.Reason != limits.WarningExceedsLimit {
			continue
		}
		ol := comp.Write
		if w.Operation == limits.Read {
			ol = comp.Read
		}
		if ol == nil {
			continue
		}
		// The component to measure again is the one whose figures set the limit the point
		// exceeded: for a point on fewer nodes, its own limit, which can be another component's
		// than the system's.
		bottleneck := limits.Component(ol.Bottleneck)
		if w.Above != nil && w.Above.Bottleneck != "" {
			bottleneck = w.Above.Bottleneck
		}
		switch c := limits.RecheckComponent(bottleneck); {
		case c == limits.ComponentDevices && comp.DeviceProbeRound < 2, c == limits.ComponentNetwork && comp.NetworkProbeRound < 2:
			why := fmt.Sprintf("the sweep's %s figure is above the measured %s limit of %s", w.Operation, w.Operation, rate(ol.LimitBytesPerSecond))
			if a := w.Above; a != nil {
				why = fmt.Sprintf("the sweep's %s figure at %s, %s, is above its measured limit of %s (%s)",
					w.Operation, a.Point, limits.FormatBytesPerSecond(a.BytesPerSecond), a.Limit, a.Why)
			}
			return fmt.Sprintf("%s, set by the %s", why, c), c
		}
	}
	return "", ""
}

// deviceFarBelowKnown names the first node whose own device figure (not reused from another
// burst buffer, whose probe had the node to itself) measured under limits.RemeasureBelowShare
// of what the device is known to do, with a message; "" when none did. Known is the lower of
// its documented figure and the best that the node's probes measured alone (known, by node):
// a drive that never reaches its datasheet is not measured twice by every burst buffer, and a
// node without a documented figure is judged against its own history. The share is the
// sweep's: a probe beside other work reads low, and a limit from it would be as low.
func deviceFarBelowKnown(comp *v1alpha1.ComponentLimits, known map[string]nodecache.BestFigures) (string, string) {
	return firstOwnDevice(comp, func(n v1alpha1.NodeComponents, what string, f *v1alpha1.ComponentFigure, got float64) string {
		best, hasBest := known[n.Name]
		bestOf := best.WriteBytesPerSecond
		if what == "read" {
			bestOf = best.ReadBytesPerSecond
		}
		ref, of := 0.0, ""
		if d := f.DocumentedBytesPerSecond; d != nil && *d > 0 {
			ref, of = float64(*d), "the documented "+limits.FormatBytesPerSecond(float64(*d))
		}
		if hasBest && bestOf > 0 && (ref == 0 || float64(bestOf) < ref) {
			ref, of = float64(bestOf), fmt.Sprintf("the %s its probes measured alone before (best of %d)",
				limits.FormatBytesPerSecond(float64(bestOf)), best.Probes)
		}
		if !limits.FarBelowDocumented(got, ref, limits.RemeasureBelowShare) {
			return ""
		}
		return fmt.Sprintf("node %s's device %s measured %s, %.0f%% of %s",
			n.Name, what, limits.FormatBytesPerSecond(got), 100*got/ref, of)
	})
}

// firstOwnDevice asks judge about each device figure this burst buffer measured itself (not
// reused from another), node by node, write before read, and returns the first node judge has
// a message for, with it; "" when none.
func firstOwnDevice(comp *v1alpha1.ComponentLimits, judge func(n v1alpha1.NodeComponents, what string, f *v1alpha1.ComponentFigure, got float64) string) (string, string) {
	if comp == nil {
		return "", ""
	}
	for _, n := range comp.Nodes {
		if n.Reused {
			continue
		}
		for _, c := range []struct {
			what string
			f    *v1alpha1.ComponentFigure
		}{{"write", n.DeviceWrite}, {"read", n.DeviceRead}} {
			if c.f == nil || c.f.MeasuredBytesPerSecond == nil {
				continue
			}
			if msg := judge(n, c.what, c.f, float64(*c.f.MeasuredBytesPerSecond)); msg != "" {
				return n.Name, msg
			}
		}
	}
	return "", ""
}

// nodeWroteAboveDevice names the first node whose processes, in the sweep's best point, wrote
// more than measuredLimitTolerance above its own device-write figure, with a message; "" when
// none did. With the local engine a node's processes write only to its own device, so such a
// node's device probe read low (other work beside it, or a busy host: interference only
// lowers a capped device's figure), even when the sweep as a whole stays under the limit
// because another node wrote below its figure. BeeGFS stripes a node's files over every
// node's targets: its processes' rate says nothing of its own device.
func nodeWroteAboveDevice(bb *v1alpha1.BurstBuffer) (string, string) {
	l := bb.Status.Limits
	if bb.Spec.Engine != v1alpha1.EngineLocal || l == nil || l.Components == nil || l.Monitoring == nil {
		return "", ""
	}
	for _, m := range l.Monitoring.Nodes {
		if m.WriteBytesPerSecond == nil {
			continue
		}
		for _, n := range l.Components.Nodes {
			if n.Name != m.Name || n.DeviceWrite == nil || n.DeviceWrite.MeasuredBytesPerSecond == nil || *n.DeviceWrite.MeasuredBytesPerSecond <= 0 {
				continue
			}
			wrote, dev := float64(*m.WriteBytesPerSecond), float64(*n.DeviceWrite.MeasuredBytesPerSecond)
			if wrote > dev*(1+measuredLimitTolerance) {
				return n.Name, fmt.Sprintf("node %s's processes wrote %s in the sweep's best point, %.0f%% above its device-write figure of %s",
					n.Name, limits.FormatBytesPerSecond(wrote), 100*(wrote/dev-1), limits.FormatBytesPerSecond(dev))
			}
		}
	}
	return "", ""
}

// deviceAboveDocumented names the first node whose device, measured by this burst buffer's
// own probe, read more than measuredLimitTolerance above its documented figure, with a
// message; "" when none did. A short probe can read above what the device sustains (a
// drive's write cache, a throttle that lets the first moments through), and one high figure
// raises the limit every sweep point is judged against. A device that really outperforms its
// documentation reads high again in the second round, and that figure stands.
func deviceAboveDocumented(comp *v1alpha1.ComponentLimits) (string, string) {
	return firstOwnDevice(comp, func(n v1alpha1.NodeComponents, what string, f *v1alpha1.ComponentFigure, got float64) string {
		if f.DocumentedBytesPerSecond == nil || *f.DocumentedBytesPerSecond <= 0 {
			return ""
		}
		if doc := float64(*f.DocumentedBytesPerSecond); got > doc*(1+measuredLimitTolerance) {
			return fmt.Sprintf("node %s's device %s measured %s, %.0f%% above the documented %s",
				n.Name, what, limits.FormatBytesPerSecond(got), 100*(got/doc-1), limits.FormatBytesPerSecond(doc))
		}
		return ""
	})
}

// linkFarBelowDocumented says, with a message, when the links set a published limit (their
// own, or through the servers' or the clients' links) and a node's link measured under
// limits.RemeasureBelowShare of what TCP moves at its documented data rate
// (limits.TCPGoodputShare of it); "" otherwise. With two nodes the figure is the pair's, and
// so is the documented rate (linkDocumented). A link that bounds nothing is not
// measured again: its figure changes no limit. Links have no cached best to judge them by, as
// devices do: a pair's figure depends on both of its ends.
func linkFarBelowDocumented(comp *v1alpha1.ComponentLimits) string {
	if comp == nil || !linksSetALimit(comp) {
		return ""
	}
	for i, n := range comp.Nodes {
		nc := n.Network
		if nc == nil || nc.MeasuredBytesPerSecond == nil {
			continue
		}
		got, doc := float64(*nc.MeasuredBytesPerSecond), linkDocumented(comp, i)
		what := fmt.Sprintf("node %s's link", n.Name)
		if len(comp.Nodes) == 2 {
			what = fmt.Sprintf("the link between %s and %s", comp.Nodes[0].Name, comp.Nodes[1].Name)
		}
		if limits.FarBelowDocumented(got, limits.TCPGoodputShare*doc, limits.RemeasureBelowShare) {
			return fmt.Sprintf("%s measured %s, %.0f%% of the documented %s (TCP moves about %.0f%% of a link's rate)",
				what, limits.FormatBytesPerSecond(got), 100*got/doc, limits.FormatBytesPerSecond(doc), 100*limits.TCPGoodputShare)
		}
	}
	return ""
}

// linksSetALimit says whether the links are the bottleneck of comp's write or read limit.
func linksSetALimit(comp *v1alpha1.ComponentLimits) bool {
	for _, ol := range []*v1alpha1.OperationLimit{comp.Write, comp.Read} {
		if ol != nil && limits.RecheckComponent(limits.Component(ol.Bottleneck)) == limits.ComponentNetwork {
			return true
		}
	}
	return false
}

// knownDevices are the best device figures that the per-node cache holds for comp's nodes
// whose figures bb measured itself, as evidence beside bb's own probe
// (nodecache.Figures.KnownBest).
func (r *BurstBufferReconciler) knownDevices(ctx context.Context, s *scope, comp *v1alpha1.ComponentLimits) map[string]nodecache.BestFigures {
	bb := s.bb
	out := map[string]nodecache.BestFigures{}
	if comp == nil {
		return out
	}
	self := bb.Namespace + "/" + bb.Name
	for _, n := range comp.Nodes {
		if n.Reused {
			continue
		}
		if f, ok := r.cachedFigures(ctx, n.Name, s.nodeObj(n.Name)); ok {
			if b, ok := f.KnownBest(bb.Spec.Storage.Path, self); ok {
				out[n.Name] = b
			}
		}
	}
	return out
}

// sweepPoint is one point of the stage-3 grid: m nodes x n processes per node.
type sweepPoint struct{ m, n int }

// sweepState is what the sweep's points measured so far.
type sweepState struct {
	points []sweepPoint
	// lp are the measured points' aggregates, write then read per point, and csv the same
	// as rows of the sweep's ConfigMap.
	lp  []limits.Point
	csv []string
	// runs are each measured point's node runs (stage 4): the first round's, or the second's
	// where it measured more.
	runs map[sweepPoint][]nodeRun
	// first are the points' first-round figures with what disturbed them; disturbed what
	// disturbed every round of a point.
	first     map[sweepPoint]limits.PointRound
	disturbed map[sweepPoint][]string
	// remeasured are the points measured a second time, as the status shows them.
	remeasured []v1alpha1.RemeasuredPoint
	// running is the index of the point still running, -1 when every point ended.
	running int
}

// planSweep is the grid (grid) as points in the order they run, and each run's seconds.
func planSweep(bb *v1alpha1.BurstBuffer, nodes int) ([]sweepPoint, int) {
	ms, ns, seconds := grid(bb, nodes)
	var points []sweepPoint
	for _, m := range ms {
		for _, n := range ns {
			points = append(points, sweepPoint{m, n})
		}
	}
	return points, seconds
}

// collectSweep runs the points in order and gathers what the ended ones measured, up to the
// first point still running. false (with the Validated condition set) when a run failed.
func (r *BurstBufferReconciler) collectSweep(ctx context.Context, s *scope, points []sweepPoint, seconds int) (sweepState, bool, error) {
	bb := s.bb
	st := sweepState{points: points, runs: map[sweepPoint][]nodeRun{}, first: map[sweepPoint]limits.PointRound{}, running: -1}
	for k, p := range points {
		var got []nodeRun
		for i := 0; i < p.m; i++ {
			pod := together(bb, nodetask.SweepPod(bb, r.AgentImage, k, i, s.nodes[i], p.n, seconds), p.m,
				func(j int) string { return nodetask.RunName(bb, nodetask.ComponentSweep, k, j) })
			state, msg, pod, err := r.runMeasuring(ctx, s, pod)
			if err != nil {
				return st, false, err
			}
			switch state {
			case nodetask.Running:
				st.running = k
				continue
			case nodetask.Failed:
				conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
					fmt.Sprintf("ideal workload failed on node %s at %d node(s) x %d process(es): %s", s.nodes[i], p.m, p.n, reportMessage(msg)))
				return st, false, nil
			}
			run, err := readIdeal(s.nodes[i], msg)
			if err != nil {
				conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
					fmt.Sprintf("ideal workload on node %s: %v", s.nodes[i], err))
				return st, false, nil
			}
			run.pod = pod
			got = append(got, run)
		}
		if st.running >= 0 {
			// A point starts only after the previous one ended: points must not share devices.
			break
		}
		st.runs[p] = got
		st.first[p] = limits.PointRound{Write: aggregate(got, limits.Write, sharedFS(bb)), Read: aggregate(got, limits.Read, sharedFS(bb))}
	}
	st.settle(nil)
	return st, true, nil
}

// settle sets the points' figures (lp, csv) from their rounds: the first round's, or for a
// point measured again, each operation's higher round (limits.Settled).
func (st *sweepState) settle(second map[sweepPoint]limits.PointRound) {
	st.lp, st.csv, st.disturbed = nil, nil, map[sweepPoint][]string{}
	for _, p := range st.points {
		first, ok := st.first[p]
		if !ok {
			continue
		}
		rounds := []limits.PointRound{first}
		if r2, ok := second[p]; ok {
			rounds = append(rounds, r2)
		}
		w, rd, disturbed := limits.Settled(rounds)
		if len(disturbed) > 0 {
			st.disturbed[p] = disturbed
		}
		for _, x := range []struct {
			op limits.Operation
			v  float64
		}{{limits.Write, w}, {limits.Read, rd}} {
			st.lp = append(st.lp, limits.Point{Nodes: p.m, ProcessesPerNode: p.n, Operation: x.op, BytesPerSecond: x.v})
			st.csv = append(st.csv, fmt.Sprintf("%d,%d,%s,%.0f", p.m, p.n, x.op, x.v))
		}
	}
}

// analyseSweep judges the points against the stage-2 limit that was published (measured
// components, apibridge.LimitInput), else stage 1. A measured limit carries its measurement's
// noise: points within 5% above it are not "above the limit".
func analyseSweep(s *scope, lp []limits.Point) (limits.Sweep, error) {
	bb := s.bb
	tolerance := 0.0
	in, err := apibridge.LimitInput(bb, s.nodeObjs, bb.Status.Limits.Components)
	if err != nil {
		return limits.Sweep{}, err
	}
	if in.Measured {
		tolerance = measuredLimitTolerance
	}
	lim, err := limits.Compute(in.Hardware)
	if err != nil {
		return limits.Sweep{}, err
	}
	return limits.AnalyzeSweep(in.Hardware, lim, lp, limits.SweepOptions{
		MinEfficiency: float64(bb.Spec.Validation.MinimumEfficiencyPercent) / 100, Tolerance: tolerance})
}

// publishSweep writes stages 3 and 4 into the status (the full sweep into its ConfigMap), and
// the Validated condition while it still sweeps; once every point ended, the sweep's summary
// for reconcileValidationDone.
func (r *BurstBufferReconciler) publishSweep(ctx context.Context, s *scope, st sweepState, an limits.Sweep) (bool, error) {
	bb := s.bb
	cmName, err := r.saveSweep(ctx, bb, st.csv)
	if err != nil {
		return false, err
	}
	sw := apibridge.SweepToAPI(an)
	sw.Points, sw.ConfigMapName, sw.Remeasured = int32(len(st.lp)/2), cmName, st.remeasured
	bb.Status.Limits.Sweep = sw
	mon, monWarnings := monitorSweep(s, st.runs)
	bb.Status.Limits.Monitoring = mon
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings, map[string]bool{
		v1alpha1.WarningExceedsLimit: true, v1alpha1.WarningBelowExpectation: true, v1alpha1.WarningStragglers: true,
	}, append(apibridge.WarningsToAPI(an.Warnings), monWarnings...))
	bb.Status.Warnings = replaceNodeBusy(bb.Status.Warnings, componentSweep, sweepBusyWarnings(st))

	if st.running >= 0 {
		// Published so far (a budget cut keeps it); the sweep goes on.
		p := st.points[st.running]
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonSweeping,
			fmt.Sprintf("ideal-workload sweep: point %d of %d (%d node(s) x %d process(es)) running", st.running+1, len(st.points), p.m, p.n))
		return false, nil
	}
	msg := fmt.Sprintf("ideal workload over %d point(s)", len(st.points))
	if w := sw.Write; w != nil {
		msg += fmt.Sprintf(": best write %s at %d node(s) x %d process(es), efficiency %.2f", rate(w.BestBytesPerSecond),
			w.Best.Nodes, w.Best.ProcessesPerNode, float64(w.EfficiencyPerMille)/1000)
	} else {
		msg += ": no valid write limit (see warnings)"
	}
	s.sweepSummary, s.sweepPoints = msg, st.lp
	return true, nil
}

// saveSweep keeps the full sweep as CSV (the analysis's input format) in a ConfigMap the
// status points to; the status itself stays small.
func (r *BurstBufferReconciler) saveSweep(ctx context.Context, bb *v1alpha1.BurstBuffer, rows []string) (string, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: bb.Name + "-sweep", Namespace: bb.Namespace, Labels: nodetask.Labels(bb, nodetask.ComponentSweep),
		},
		Data: map[string]string{"sweep.csv": "nodes,processesPerNode,operation,bytesPerSecond\n" + strings.Join(rows, "\n") + "\n"},
	}
	nodetask.Owned(bb, &cm.ObjectMeta) // beside the burst buffer, where its user reads it
	err := r.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		var cur corev1.ConfigMap
		if err := r.Get(ctx, client.ObjectKeyFromObject(cm), &cur); err != nil {
			return "", err
		}
		cur.Data = cm.Data
		err = r.Update(ctx, &cur)
	}
	return cm.Name, err
}
