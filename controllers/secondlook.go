package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// The second look (limits/secondlook.go says why): once every point of the sweep ended,
//  1. a point above a device-, network- or server-bound limit of the first round sends that
//     component back to be measured (componentSecondLook), and so does a device
//     that measured far below its documented figure: the sweep is then judged again on the
//     second round;
//  2. the best point of each operation, when it measured far below the stage-2 limit or
//     while other work ran on its nodes, is measured once more (pods named -r2); each
//     operation keeps the point's higher round, and status.limits.sweep.remeasured shows
//     both;
//  3. a point whose every round was disturbed is published with a NodeBusy warning that
//     names what disturbed it.
// Each happens once: there is no third round. Past the time budget nothing new starts, and a
// second look left unsettled cuts validation short: it is not kept for reuse.

// componentSweep is the warnings' component for a sweep point (a device probe's is "device").
const componentSweep = "sweep"

// podSetupMargin: a pod that started within this long after a run, or ended within this
// long before it, was being set up or torn down (sandbox, network, volumes) while it ran.
const podSetupMargin = time.Second

func (r *BurstBufferReconciler) setupMargin() time.Duration {
	switch {
	case r.PodSetupMargin < 0:
		return 0
	case r.PodSetupMargin == 0:
		return podSetupMargin
	}
	return r.PodSetupMargin
}

// secondLook runs once every point of the sweep's first round ended: it publishes the sweep
// as judged so far, then takes the second looks in order, and says done once none is left.
func (r *BurstBufferReconciler) secondLook(ctx context.Context, s *scope, st *sweepState, seconds int) (ctrl.Result, bool, error) {
	bb := s.bb
	if err := r.firstRoundConditions(ctx, s, st); err != nil {
		return ctrl.Result{}, false, err
	}
	rechecks := recordedRechecks(bb)
	second, pending, failure, err := r.collectSecondRound(ctx, s, st, rechecks, seconds)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if failure != "" {
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed, failure)
		return ctrl.Result{}, false, nil
	}
	st.settle(second)
	st.remeasured = remeasuredPoints(rechecks, st.first, second)
	an, err := analyseSweep(s, st.lp)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	done, err := r.publishSweep(ctx, s, *st, an)
	if err != nil || !done {
		return ctrl.Result{}, false, err
	}
	if len(pending) > 0 {
		if s.lastLook {
			// Not done: the budget cuts validation short (measuring), which stops the second
			// round's runs and says so, and a validation left unsettled is not kept for reuse.
			s.sweepSummary += fmt.Sprintf("; %s not measured a second time: validation.timeBudget %s ran out", strings.Join(pending, ", "), budget(bb))
			return ctrl.Result{}, false, nil
		}
		msg := fmt.Sprintf("the sweep's %s measured again before it is published: %s", strings.Join(pending, ", "), recheckMessages(bb))
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonRemeasuring, msg)
		return ctrl.Result{}, false, nil
	}
	// 1. The components, against the sweep judged so far.
	if res, waits, err := r.componentSecondLook(ctx, s, an); err != nil || waits {
		return res, false, err
	}
	// 2. The best points, once (a recorded decision is not taken again).
	if rechecks == nil && !s.lastLook {
		h, lim, measured, err := sweepLimit(s)
		if err != nil {
			return ctrl.Result{}, false, err
		}
		rounds := map[limits.SweepPoint]limits.PointRound{}
		for p, r1 := range st.first {
			rounds[limits.SweepPoint{Nodes: p.m, ProcessesPerNode: p.n}] = r1
		}
		if rc := limits.SweepRechecks(h, lim, rounds, measured); len(rc) > 0 {
			st.remeasured = remeasuredPoints(rc, st.first, nil)
			bb.Status.Limits.Sweep.Remeasured = st.remeasured
			var names []string
			for _, c := range rc {
				logf.FromContext(ctx).Info("measuring a sweep point again", "point", c.Point.String(), "reason", c.Reason, "why", c.Message)
				names = append(names, c.Point.String())
			}
			if _, _, _, err := r.collectSecondRound(ctx, s, st, rc, seconds); err != nil {
				return ctrl.Result{}, false, err
			}
			conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonRemeasuring,
				fmt.Sprintf("the sweep's %s measured again before it is published: %s", strings.Join(names, ", "), recheckMessages(bb)))
			return ctrl.Result{}, false, nil
		}
	}
	return ctrl.Result{}, true, nil
}

// sweepLimit is the hardware and limits the sweep is judged against (analyseSweep's), and
// whether stage 2 measured them.
func sweepLimit(s *scope) (limits.Hardware, limits.Limits, bool, error) {
	in, err := apibridge.LimitInput(s.bb, s.nodeObjs, s.bb.Status.Limits.Components)
	if err != nil {
		return limits.Hardware{}, limits.Limits{}, false, err
	}
	lim, err := limits.Compute(in.Hardware)
	return in.Hardware, lim, in.Measured, err
}

// firstRoundConditions sets what disturbed each first-round point (st.first[].DisturbedBy).
func (r *BurstBufferReconciler) firstRoundConditions(ctx context.Context, s *scope, st *sweepState) error {
	for p, runs := range st.runs {
		d, err := r.pointDisturbance(ctx, s, runs)
		if err != nil {
			return err
		}
		r1 := st.first[p]
		r1.DisturbedBy = d
		st.first[p] = r1
	}
	st.settle(nil)
	return nil
}

// pointDisturbance names what ran beside a point's runs: other burst buffers' pods on their
// nodes (decided once per pod and recorded on it, like a device probe's conditions), a run
// without the node's measuring lock, and bytes on a node's device that the run did not move.
func (r *BurstBufferReconciler) pointDisturbance(ctx context.Context, s *scope, runs []nodeRun) ([]string, error) {
	// Each run's conditions are recorded on its own pod the first time: one write per node,
	// sent together.
	measured := make([]*podConds, len(runs))
	if err := parallel.Do(len(runs), func(i int) (err error) {
		measured[i], err = r.measuredConditions(ctx, s, runs[i])
		return err
	}); err != nil {
		return nil, err
	}
	var conds []limits.RunConditions
	for i, run := range runs {
		c := measured[i]
		rc := limits.RunConditions{Node: run.node}
		if c != nil {
			rc.OtherPods = append(rc.OtherPods, c.OtherPods...)
			if !c.Exclusive {
				rc.OtherPods = append(rc.OtherPods, "measured without the node's measuring lock")
			}
		}
		if run.sawDevice() {
			rc.Device = run.write.Device
			rc.DeviceBytes = float64(run.write.DeviceBytes + run.read.DeviceBytes)
			rc.OwnBytes = float64(run.write.Bytes + run.read.Bytes)
		}
		conds = append(conds, rc)
	}
	d := limits.Disturbance(conds)
	if apart := notAtOnce(sharedFS(s.bb), runs); apart != "" {
		d = append(d, apart)
	}
	return d, nil
}

// measuredConditions are the conditions under which a sweep run measured, from its report's
// window widened by podSetupMargin: recorded on its pod the first time, read back after.
func (r *BurstBufferReconciler) measuredConditions(ctx context.Context, s *scope, run nodeRun) (*podConds, error) {
	if run.pod == nil {
		return nil, nil
	}
	if c := recordedConditions(run.pod); c != nil {
		return &podConds{OtherPods: c.OtherPods, Exclusive: c.Exclusive}, nil
	}
	start, end := run.start, run.end
	if start.IsZero() || end.IsZero() {
		start, end, _ = ranBetween(run.pod, r.Now())
	}
	// A run that saw its device counts the bytes on it; one through a BeeGFS mount sees none.
	others, err := r.otherPodsOn(ctx, s.bb, run.node, start.Add(-r.setupMargin()), end.Add(r.setupMargin()), !run.sawDevice())
	if err != nil {
		return nil, err
	}
	c, err := r.recordConditions(ctx, run.pod, podConditions(run.pod, run.node, start, others))
	if err != nil {
		return nil, err
	}
	return &podConds{OtherPods: c.OtherPods, Exclusive: c.Exclusive}, nil
}

// podConds is what the second look needs of a run's recorded conditions.
type podConds struct {
	OtherPods []string
	Exclusive bool
}

// recordedRechecks are the points the status says are measured a second time (nil: none
// decided yet).
func recordedRechecks(bb *v1alpha1.BurstBuffer) []limits.Recheck {
	l := bb.Status.Limits
	if l == nil || l.Sweep == nil || len(l.Sweep.Remeasured) == 0 {
		return nil
	}
	var out []limits.Recheck
	for _, rp := range l.Sweep.Remeasured {
		out = append(out, limits.Recheck{Point: limits.SweepPoint{Nodes: int(rp.Point.Nodes), ProcessesPerNode: int(rp.Point.ProcessesPerNode)},
			Reason: rp.Reason, Message: rp.Message})
	}
	return out
}

func recheckMessages(bb *v1alpha1.BurstBuffer) string {
	var msgs []string
	for _, rc := range recordedRechecks(bb) {
		msgs = append(msgs, rc.Message)
	}
	return strings.Join(msgs, "; ")
}

// secondRoundPod is node i's part of the k-th point's second round.
func (r *BurstBufferReconciler) secondRoundPod(bb *v1alpha1.BurstBuffer, k, i int, node string, n, seconds int) *corev1.Pod {
	pod := nodetask.SweepPod(bb, r.AgentImage, k, i, node, n, seconds)
	pod.Name += "-r2"
	return pod
}

// collectSecondRound starts (once) and reads the second round of the rechecked points: their
// figures once every node's run ended, with what disturbed them, and the points still
// running. The points run one after the other, in the rechecks' order, as the first round's
// do: two points at once (the best write point and the best read point) would share the nodes
// they measure. A failed run fails the sweep, as in the first round. A point of the second
// round that measured more than the first replaces the first's runs for stage 4.
func (r *BurstBufferReconciler) collectSecondRound(ctx context.Context, s *scope, st *sweepState, rechecks []limits.Recheck, seconds int) (map[sweepPoint]limits.PointRound, []string, string, error) {
	out := map[sweepPoint]limits.PointRound{}
	var pending []string
	for _, rc := range rechecks {
		if len(pending) > 0 {
			pending = append(pending, rc.Point.String()) // starts once the one before it ended
			continue
		}
		k := -1
		for j, p := range st.points {
			if p.m == rc.Point.Nodes && p.n == rc.Point.ProcessesPerNode {
				k = j
			}
		}
		if k < 0 {
			continue // not a point of this grid (the spec changed): nothing to measure
		}
		p := st.points[k]
		var got []nodeRun
		running := false
		for i := 0; i < p.m; i++ {
			pod := together(s.bb, r.secondRoundPod(s.bb, k, i, s.nodes[i], p.n, seconds), p.m,
				func(j int) string { return nodetask.RunName(s.bb, nodetask.ComponentSweep, k, j) + "-r2" })
			state, msg, pod, err := r.runMeasuring(ctx, s, pod)
			if err != nil {
				return nil, nil, "", err
			}
			switch state {
			case nodetask.Running:
				running = true
				continue
			case nodetask.Failed:
				return nil, nil, fmt.Sprintf("ideal workload's second round failed on node %s at %d node(s) x %d process(es): %s", s.nodes[i], p.m, p.n, reportMessage(msg)), nil
			}
			run, err := readIdeal(s.nodes[i], msg)
			if err != nil {
				return nil, nil, fmt.Sprintf("ideal workload's second round on node %s: %v", s.nodes[i], err), nil
			}
			run.pod = pod
			got = append(got, run)
		}
		if running {
			pending = append(pending, rc.Point.String())
			continue
		}
		d, err := r.pointDisturbance(ctx, s, got)
		if err != nil {
			return nil, nil, "", err
		}
		r2 := limits.PointRound{Write: aggregate(got, limits.Write, sharedFS(s.bb)), Read: aggregate(got, limits.Read, sharedFS(s.bb)), DisturbedBy: d}
		out[p] = r2
		if r2.Write > st.first[p].Write {
			st.runs[p] = got
		}
	}
	return out, pending, "", nil
}

// remeasuredPoints is status.limits.sweep.remeasured: each rechecked point with its first
// round and, once it ended, its second.
func remeasuredPoints(rechecks []limits.Recheck, first, second map[sweepPoint]limits.PointRound) []v1alpha1.RemeasuredPoint {
	var out []v1alpha1.RemeasuredPoint
	for _, rc := range rechecks {
		p := sweepPoint{rc.Point.Nodes, rc.Point.ProcessesPerNode}
		rp := v1alpha1.RemeasuredPoint{
			Point:  v1alpha1.SweepPoint{Nodes: int32(p.m), ProcessesPerNode: int32(p.n)},
			Reason: rc.Reason, Message: rc.Message,
		}
		for _, r := range []map[sweepPoint]limits.PointRound{first, second} {
			if pr, ok := r[p]; ok {
				rp.Rounds = append(rp.Rounds, v1alpha1.PointRound{WriteBytesPerSecond: int64(pr.Write), ReadBytesPerSecond: int64(pr.Read), DisturbedBy: pr.DisturbedBy})
			}
		}
		out = append(out, rp)
	}
	return out
}

// sweepBusyWarnings are the NodeBusy warnings of the sweep: one per point whose every round
// was disturbed, naming what disturbed it.
func sweepBusyWarnings(st sweepState) []v1alpha1.Warning {
	var out []v1alpha1.Warning
	for _, p := range st.points {
		d := st.disturbed[p]
		if len(d) == 0 {
			continue
		}
		rounds := "it"
		for _, rp := range st.remeasured {
			if int(rp.Point.Nodes) == p.m && int(rp.Point.ProcessesPerNode) == p.n && len(rp.Rounds) > 1 {
				rounds = "both rounds"
			}
		}
		out = append(out, v1alpha1.Warning{
			Reason: v1alpha1.WarningNodeBusy, Component: componentSweep, Node: busyNodes(d),
			Message: fmt.Sprintf("sweep point %d node(s) x %d process(es): other work ran beside %s (%s); its figures may be low and are not kept for reuse",
				p.m, p.n, rounds, strings.Join(limit(d, 4), "; ")),
		})
	}
	return out
}

// busyNodes are the nodes named in a disturbance list ("node X: ..."), comma-separated.
func busyNodes(d []string) string {
	set := map[string]bool{}
	for _, x := range d {
		if rest, ok := strings.CutPrefix(x, "node "); ok {
			if i := strings.Index(rest, ":"); i > 0 {
				set[rest[:i]] = true
			}
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// replaceNodeBusy swaps the NodeBusy warnings of one component (device, sweep) for fresh
// ones, keeping every other warning.
func replaceNodeBusy(old []v1alpha1.Warning, component string, fresh []v1alpha1.Warning) []v1alpha1.Warning {
	var out []v1alpha1.Warning
	for _, w := range old {
		if w.Reason != v1alpha1.WarningNodeBusy || w.Component != component {
			out = append(out, w)
		}
	}
	return append(out, fresh...)
}
