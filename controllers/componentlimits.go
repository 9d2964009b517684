package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
)

// belowDocumentedShare: a component measured more than 10% under its documented figure is
// reported (METHOD.md stage 2).
const belowDocumentedShare = 0.9

// stage2 is what stage 2's steps found on this visit, for the steps after them.
type stage2 struct {
	// figures are each node's device figures, measured or reused; reused says which came
	// from another burst buffer's probe, no older than reuseMaxAge.
	figures map[string]nodecache.Figures
	reused  map[string]bool
	// pairs are the measured links; sb is the engine's StorageBench run (nil without one).
	pairs []netPair
	sb    *storageBenchRun
}

// componentsMeasured: stage 2 is done (or was skipped or cut short), its steps skip.
func componentsMeasured(bb *v1alpha1.BurstBuffer) bool {
	return conditionIs(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue)
}

// reconcileComponentLimits closes stage 2: the figures published with the limits recomputed
// from them, the capacity asked for held against the free space found, and the condition.
func (r *BurstBufferReconciler) reconcileComponentLimits(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb, run := s.bb, s.stage2
	if componentsMeasured(bb) {
		return ctrl.Result{}, true, nil
	}
	r.publishComponents(s, run.figures, run.reused, run.pairs, run.sb)
	if msg := capacityShortfall(bb, s.nodes, freeOf(run.figures), "device probe"); msg != "" {
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonInsufficientCapacity, msg)
		// The sweep's chained runs (quick profile) must not measure a spec the nodes refuse.
		return ctrl.Result{}, false, r.stopMeasuringPods(ctx, bb)
	}
	reason, msg := v1alpha1.ReasonMeasured, fmt.Sprintf("devices of %d node(s) and %d link pair(s) measured", len(s.nodes), len(run.pairs))
	if run.sb != nil {
		if run.sb.notStarted {
			msg += "; BeeGFS StorageBench " + run.sb.outcome.Failure
		} else if run.sb.outcome.Failure != "" {
			msg += "; BeeGFS StorageBench gave no figures (see warnings)"
		} else {
			msg += fmt.Sprintf("; BeeGFS StorageBench on %d storage target(s)", len(run.sb.outcome.Result.Targets))
		}
	}
	if round := deviceProbeRound(bb); round > 1 {
		msg += fmt.Sprintf(" (devices in round %d: the first round read low against the sweep, the documented figures or the nodes' earlier probes, or high against the documented figures; each figure is the higher of the two rounds, except where the first read above the documented figure or was reused from another burst buffer's probe, there the second's)", round)
	}
	if round := networkProbeRound(bb); round > 1 {
		msg += fmt.Sprintf(" (links in round %d, the higher of the two rounds kept: the first round read low against the sweep or the links' documented rates)", round)
	}
	if n := count(run.reused); n > 0 {
		msg += fmt.Sprintf(" (%d device figure(s) reused from other burst buffers' probes, younger than %s)", n, reuseMaxAge(bb))
		if n == len(s.nodes) {
			reason = v1alpha1.ReasonReused
		}
	}
	if c := bb.Status.Limits.Components; c != nil && c.Write != nil {
		msg += fmt.Sprintf("; write limit %s (%s)", rate(c.Write.LimitBytesPerSecond), c.Write.Bottleneck)
	}
	conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, reason, msg)
	return ctrl.Result{}, true, nil
}

// publishComponents writes stage 2 into the status: documented beside measured per node,
// warnings for components under their documented figure, and the limits recomputed with the
// measured figures ("from here on the measured figure is the limit").
func (r *BurstBufferReconciler) publishComponents(s *scope, figures map[string]nodecache.Figures, reused map[string]bool, pairs []netPair, sb *storageBenchRun) {
	links := nodeNetwork(pairs)
	bb := s.bb
	comp := &v1alpha1.ComponentLimits{}
	if round := deviceProbeRound(bb); round > 1 {
		comp.DeviceProbeRound = int32(round)
	}
	if round := networkProbeRound(bb); round > 1 {
		comp.NetworkProbeRound = int32(round)
	}
	prev := map[string]v1alpha1.NodeComponents{} // the first round's, as published
	if bb.Status.Limits.Components != nil {
		for _, nc := range bb.Status.Limits.Components.Nodes {
			prev[nc.Name] = nc
		}
	}
	var warnings []v1alpha1.Warning
	for _, node := range s.nodes {
		var link *float64
		if got, ok := links[node]; ok {
			link = &got
		}
		var first *v1alpha1.NodeComponents
		if p, ok := prev[node]; ok {
			first = &p
		}
		nc, w := nodeComponents(bb, s.nodeObj(node), nodeMeasured{node: node, figures: figures[node], reused: reused[node], link: link, first: first},
			comp.DeviceProbeRound > 1, comp.NetworkProbeRound > 1)
		warnings = append(warnings, w...)
		warnings = append(warnings, storageBenchFigures(sb, &nc)...)
		comp.Nodes = append(comp.Nodes, nc)
	}
	warnings = append(warnings, networkWarnings(s, comp, pairs)...)
	var sbWarnings []v1alpha1.Warning
	comp.StorageBench, sbWarnings = r.storageBenchSummary(sb)
	warnings = append(warnings, sbWarnings...)

	// The limits recomputed from exactly the figures published above; stage 3 reads them
	// back from the status (apibridge.LimitInput) and so is judged against this limit.
	if in, err := apibridge.LimitInput(bb, s.nodeObjs, comp); err == nil && in.Measured {
		if lim, err := limits.Compute(in.Hardware); err == nil {
			w, rd := apibridge.OperationLimitToAPI(lim.Write), apibridge.OperationLimitToAPI(lim.Read)
			comp.Write, comp.Read = &w, &rd
		}
	}
	bb.Status.Limits.Components = comp
	if bb.Spec.Storage.CapacityPerNode == nil {
		// No capacity asked for: the burst buffer may use what was free on each node.
		if c := freeCapacity(s.nodes, freeOf(figures)); c != nil {
			bb.Status.Capacity = c
		}
	}
	var busy []v1alpha1.Warning
	for _, w := range warnings {
		if w.Reason == v1alpha1.WarningNodeBusy {
			busy = append(busy, w)
		}
	}
	warnings = slices.DeleteFunc(warnings, func(w v1alpha1.Warning) bool { return w.Reason == v1alpha1.WarningNodeBusy })
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings,
		map[string]bool{v1alpha1.WarningBelowDocumented: true, v1alpha1.WarningComponentTestFailed: true}, warnings)
	bb.Status.Warnings = replaceNodeBusy(bb.Status.Warnings, "device", busy)
	bb.Status.Warnings = replaceNodeBusy(bb.Status.Warnings, componentNetwork, linkBusyWarnings(pairs))
}

// componentNetwork is the warnings' component for a link.
const componentNetwork = "network"

// linkBusyWarnings are the NodeBusy warnings of the links: one per pair whose probe ran beside
// other work on either end, naming it. The pair's figure is published (and judged by the
// second look like any other), but the validation is not kept for reuse.
func linkBusyWarnings(pairs []netPair) []v1alpha1.Warning {
	var out []v1alpha1.Warning
	for _, p := range pairs {
		if len(p.disturbedBy) == 0 {
			continue
		}
		out = append(out, v1alpha1.Warning{
			Reason: v1alpha1.WarningNodeBusy, Component: componentNetwork, Node: busyNodes(p.disturbedBy),
			Message: fmt.Sprintf("the link from %s to %s: other work ran beside its probe (%s); its figure may be low and is not kept for reuse",
				p.client, p.server, strings.Join(limit(p.disturbedBy, 4), "; ")),
		})
	}
	return out
}

// freeCapacity is status.capacity when the spec asks for none: the space free on the nodes,
// in whole MiB ("7461Mi", which reads at a glance in `kubectl get bb`); nil when no node's
// is known.
func freeCapacity(nodes []string, free map[string]int64) *resource.Quantity {
	var total int64
	for _, node := range nodes {
		total += max(0, free[node])
	}
	if total <= 0 {
		return nil
	}
	return resource.NewQuantity(total&^(1<<20-1), resource.BinarySI)
}

// freeOf is the space free on each node, by node, as its device figures say; a node whose
// figures do not say (0: a probe cannot measure a full file system) is left out, unknown.
func freeOf(figures map[string]nodecache.Figures) map[string]int64 {
	free := make(map[string]int64, len(figures))
	for node, f := range figures {
		if f.FreeBytes > 0 {
			free[node] = f.FreeBytes
		}
	}
	return free
}

// preparedCapacity is freeCapacity from the space the engine found free when it prepared
// the nodes, nil unless it says so of every node.
func preparedCapacity(s *scope) *resource.Quantity {
	if len(s.preparedFree) != len(s.nodes) {
		return nil
	}
	return freeCapacity(s.nodes, s.preparedFree)
}

// nodeMeasured is what stage 2 measured of one node.
type nodeMeasured struct {
	node    string
	figures nodecache.Figures
	// reused: the figures came from another burst buffer's probe.
	reused bool
	// link is the node's measured network figure (nil: not measured).
	link *float64
	// first is the node as published before a second round (nil: none).
	first *v1alpha1.NodeComponents
}

// nodeComponents is one node's stage-2 status (pure): documented beside measured for its
// device and link, a second round beside the first, and the warnings of a busy node or a
// component under its documented figure.
func nodeComponents(bb *v1alpha1.BurstBuffer, obj *corev1.Node, m nodeMeasured, deviceRound2, networkRound2 bool) (v1alpha1.NodeComponents, []v1alpha1.Warning) {
	node, f := m.node, m.figures
	t := metav1.NewTime(f.MeasuredTime)
	nc := v1alpha1.NodeComponents{Name: node, MeasuredTime: &t, Reused: m.reused}
	docW, srcW := apibridge.DocumentedDevice(bb, obj, true)
	docR, srcR := apibridge.DocumentedDevice(bb, obj, false)
	nc.DeviceWrite = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: docW, MeasuredBytesPerSecond: positive(f.DeviceWriteBytesPerSecond), Source: srcW}
	nc.DeviceRead = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: docR, MeasuredBytesPerSecond: positive(f.DeviceReadBytesPerSecond), Source: srcR}
	if m.link != nil {
		doc, src := apibridge.DocumentedLink(bb, obj, node)
		nc.Network = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: doc, MeasuredBytesPerSecond: positive(int64(*m.link)), Source: src}
	}
	if p := m.first; p != nil {
		if deviceRound2 {
			secondRound(nc.DeviceWrite, p.DeviceWrite, true, p.Reused)
			secondRound(nc.DeviceRead, p.DeviceRead, true, p.Reused)
		}
		if networkRound2 {
			secondRound(nc.Network, p.Network, false, false)
		}
	}
	var warnings []v1alpha1.Warning
	if c := f.Conditions; c != nil && (len(c.OtherPods) > 0 || c.OtherTraffic != "") && !m.reused {
		var what []string
		if len(c.OtherPods) > 0 {
			what = append(what, fmt.Sprintf("other beeburst pods ran on the node (%s)", strings.Join(limit(c.OtherPods, 4), ", ")))
		}
		if c.OtherTraffic != "" {
			what = append(what, "the device "+c.OtherTraffic)
		}
		warnings = append(warnings, v1alpha1.Warning{
			Reason: v1alpha1.WarningNodeBusy, Node: node, Component: "device",
			Message: fmt.Sprintf("node %s: while its device was probed, %s: the device figures may be low; they are published for this burst buffer but not kept for reuse",
				node, strings.Join(what, ", and ")),
		})
	}
	warnings = append(warnings, belowDocumented(node, "device-write", nc.DeviceWrite)...)
	warnings = append(warnings, belowDocumented(node, "device-read", nc.DeviceRead)...)
	return nc, warnings
}

// secondRound puts a component's first round beside its second (cur): the first's figure in
// firstRoundBytesPerSecond, and the higher of the two as the measured figure - interference
// only lowers what a device or a link moves - unless the second round's stands:
//   - the first was reused from another burst buffer's probe (firstReused): it is not this
//     burst buffer's figure, and kept as the higher it would be published as measured here,
//     dated by this probe, and outlive its reuse window in every reuse of this one;
//   - for a device (cached), the first read more than measuredLimitTolerance above the
//     documented figure (firstAboveDocumented): a short probe reads high through a write
//     cache, and that first figure is the one in doubt. A link has no cache to read high
//     through.
//
// first is the figure as published before this publication. One that already shows a first
// round (stage 2 published again after the second round: the links' second round after the
// devices') holds what the two rounds settled on, which stays unless cur reads higher.
func secondRound(cur, first *v1alpha1.ComponentFigure, cached, firstReused bool) {
	if cur == nil || first == nil || first.MeasuredBytesPerSecond == nil {
		return
	}
	f, r1 := *first.MeasuredBytesPerSecond, *first.MeasuredBytesPerSecond
	settled := first.FirstRoundBytesPerSecond != nil
	if settled {
		r1 = *first.FirstRoundBytesPerSecond
	}
	cur.FirstRoundBytesPerSecond = &r1
	if !settled && (firstReused || cached && cur.MeasuredBytesPerSecond != nil && firstAboveDocumented(cur)) {
		return
	}
	if cur.MeasuredBytesPerSecond == nil || *cur.MeasuredBytesPerSecond < f {
		cur.MeasuredBytesPerSecond = &f
	}
}

// firstAboveDocumented says whether c's first round read more than measuredLimitTolerance
// above its documented figure (as deviceAboveDocumented judges a figure in doubt).
func firstAboveDocumented(c *v1alpha1.ComponentFigure) bool {
	return c.FirstRoundBytesPerSecond != nil && c.DocumentedBytesPerSecond != nil && *c.DocumentedBytesPerSecond > 0 &&
		float64(*c.FirstRoundBytesPerSecond) > float64(*c.DocumentedBytesPerSecond)*(1+measuredLimitTolerance)
}

// belowDocumented warns when a measured figure is more than 10% under its documented one.
func belowDocumented(node, component string, c *v1alpha1.ComponentFigure) []v1alpha1.Warning {
	if c.DocumentedBytesPerSecond == nil || c.MeasuredBytesPerSecond == nil {
		return nil
	}
	doc, got := float64(*c.DocumentedBytesPerSecond), float64(*c.MeasuredBytesPerSecond)
	if got >= belowDocumentedShare*doc {
		return nil
	}
	return []v1alpha1.Warning{{
		Reason: v1alpha1.WarningBelowDocumented, Node: node, Component: component,
		Message: fmt.Sprintf("node %s: %s measured %s, %.0f%% of the documented %s (%s); the measured figure is the limit from stage 2 on",
			node, component, limits.FormatBytesPerSecond(got), 100*got/doc, limits.FormatBytesPerSecond(doc), c.Source),
	}}
}
