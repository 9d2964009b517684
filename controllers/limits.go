package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
)

// reconcileEstimate is stage 1: limits from the documented hardware, as soon as the nodes are
// known and before anything runs. A figure the spec does not give is taken from the nodes'
// hardware.beeburst.io/* labels, else from what the stage-2 device probe discovered on them
// (a link's speed); the status says where each came from. It runs on every visit, so stage 1
// is recomputed when a discovery arrives.
func (r *BurstBufferReconciler) reconcileEstimate(_ context.Context, s *scope) (ctrl.Result, bool, error) {
	estimate(s)
	return ctrl.Result{}, true, nil
}

// estimate computes stage 1 into the status, and each node's documented link with its source
// into status.nodes[].hardware.
func estimate(s *scope) {
	bb := s.bb
	setNodeLinks(s)
	in, err := apibridge.LimitInput(bb, s.nodeObjs, nil)
	var lim limits.Limits
	linksMissing := false
	if err == nil {
		lim, err = limits.Compute(in.Hardware)
		linksMissing = err != nil && in.Hardware.LinksMissing()
	}
	if linksMissing {
		// A shared file system's links are a term of its limit, and nothing documents them
		// here (a virtual NIC reports no speed to discover). That is not a wrong spec: stage 2
		// measures the links and computes the limit; without it (profile none) the limit
		// stays unknown.
		msg := "the limit is unknown until stage 2 measures the links: no node's link rate is in spec.hardware, in the label " +
			v1alpha1.LabelLinkRateBitsPerSecond + " or discovered from its interface"
		conditions.Set(bb, v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, v1alpha1.ReasonHardwareUnknown, msg)
		if bb.Status.Limits == nil {
			bb.Status.Limits = &v1alpha1.LimitsStatus{} // `kubectl get bb` says "unknown"
		}
		bb.Status.Limits.Estimated = nil // an earlier estimate's links are no longer documented
		bb.Status.Warnings = replaceWarnings(bb.Status.Warnings, stage1Warnings,
			[]v1alpha1.Warning{{Reason: v1alpha1.WarningUnknownLimit, Component: componentNetwork, Message: msg}})
		return
	}
	if err != nil {
		// The file system still works; only its limits cannot be computed. Ready stays False
		// with this reason until the spec is fixed.
		conditions.Set(bb, v1alpha1.ConditionLimitsEstimated, metav1.ConditionFalse, v1alpha1.ReasonInvalidHardware,
			fmt.Sprintf("stage-1 limits cannot be computed: %v", err))
		return
	}
	est := apibridge.EstimatedToAPI(lim, in.Documented)
	est.Sources = in.Sources
	if bb.Status.Limits == nil {
		bb.Status.Limits = &v1alpha1.LimitsStatus{}
	}
	bb.Status.Limits.Estimated = est
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings, stage1Warnings, apibridge.WarningsToAPI(lim.Warnings))

	msg := fmt.Sprintf("write limit %s (%s), read limit %s (%s)",
		rate(est.Write.LimitBytesPerSecond), est.Write.Bottleneck, rate(est.Read.LimitBytesPerSecond), est.Read.Bottleneck)
	reason := v1alpha1.ReasonEstimated
	if est.Write.LimitBytesPerSecond == 0 || est.Read.LimitBytesPerSecond == 0 {
		reason = v1alpha1.ReasonHardwareUnknown
		msg += "; a limit is unknown because a figure is neither in spec.hardware nor in the nodes' hardware.beeburst.io/* labels nor discovered (stage 2 measures it)"
	}
	conditions.Set(bb, v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, reason, msg)
}

// setNodeLinks records each node's documented link and its source (spec, label, discovered,
// unknown) in status.nodes[].hardware, beside what discovery found there.
func setNodeLinks(s *scope) {
	bb := s.bb
	for i := range bb.Status.Nodes {
		ns := &bb.Status.Nodes[i]
		var lbls map[string]string
		if n := s.nodeObj(ns.Name); n != nil {
			lbls = n.Labels
		}
		if ns.Hardware == nil {
			ns.Hardware = &v1alpha1.NodeHardware{}
		}
		link, src := apibridge.NodeLink(bb.Spec.Hardware, lbls, ns.Hardware)
		ns.Hardware.LinkBitsPerSecond, ns.Hardware.LinkSource = nil, src
		if link != nil {
			q := link.RateBitsPerSecond.DeepCopy()
			ns.Hardware.LinkBitsPerSecond = &q
		}
	}
}

func rate(bps int64) string {
	if bps <= 0 {
		return "unknown"
	}
	return limits.FormatBytesPerSecond(float64(bps))
}

// stage1Warnings are the warning reasons stage 1 owns (replaced on every estimate).
var stage1Warnings = map[string]bool{v1alpha1.WarningUnknownLimit: true}

// replaceWarnings swaps the warnings with the given reasons for fresh ones, keeping others.
func replaceWarnings(old []v1alpha1.Warning, reasons map[string]bool, fresh []v1alpha1.Warning) []v1alpha1.Warning {
	var out []v1alpha1.Warning
	for _, w := range old {
		if !reasons[w.Reason] {
			out = append(out, w)
		}
	}
	return append(out, fresh...)
}

// maxWarnings is status.warnings' MaxItems (api/v1alpha1): a status with more is refused by
// the API server, and a burst buffer whose status cannot be written is stuck.
const maxWarnings = 64

// boundWarnings keeps status.warnings within maxWarnings: past it, the warnings of one kind
// (reason, component and operation) become one that names their nodes and quotes the first,
// kinds in the order they first appear. A burst buffer of many nodes on busy or slow hardware
// has a warning per node and per link; a kind read whole stays readable, a status refused for
// its length says nothing at all.
func boundWarnings(ws []v1alpha1.Warning) []v1alpha1.Warning {
	if len(ws) <= maxWarnings {
		return ws
	}
	type kind struct{ reason, component, operation string }
	var order []kind
	groups := map[kind][]v1alpha1.Warning{}
	for _, w := range ws {
		k := kind{w.Reason, w.Component, w.Operation}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], w)
	}
	out := make([]v1alpha1.Warning, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		var nodes []string
		for _, w := range g {
			for _, n := range strings.Split(w.Node, ",") {
				if n != "" && !slices.Contains(nodes, n) {
					nodes = append(nodes, n)
				}
			}
		}
		out = append(out, v1alpha1.Warning{Reason: k.reason, Component: k.component, Operation: k.operation,
			Node:    strings.Join(limit(nodes, 16), ","),
			Message: fmt.Sprintf("%d warnings of this kind on %d node(s), too many to list one by one; the first: %s", len(g), len(nodes), g[0].Message)})
	}
	if len(out) > maxWarnings {
		out = out[:maxWarnings]
	}
	return out
}
