package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/hardware"
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
	hw, sources := documentedHardware(bb, s.nodeObjs)
	in, err := hardware.FromSpec(hw, hardware.DefaultsFor(bb))
	var lim limits.Limits
	if err == nil {
		lim, err = limits.Compute(in)
	}
	if err != nil {
		// The file system still works; only its limits cannot be computed. Ready stays False
		// with this reason until the spec is fixed.
		setCondition(bb, v1alpha1.ConditionLimitsEstimated, metav1.ConditionFalse, v1alpha1.ReasonInvalidHardware,
			fmt.Sprintf("stage-1 limits cannot be computed: %v", err))
		return
	}
	est := hardware.EstimatedToAPI(lim, hw)
	est.Sources = sources
	if bb.Status.Limits == nil {
		bb.Status.Limits = &v1alpha1.LimitsStatus{}
	}
	bb.Status.Limits.Estimated = est
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings, stage1Warnings, hardware.WarningsToAPI(lim.Warnings))

	msg := fmt.Sprintf("write limit %s (%s), read limit %s (%s)",
		rate(est.Write.LimitBytesPerSecond), est.Write.Bottleneck, rate(est.Read.LimitBytesPerSecond), est.Read.Bottleneck)
	reason := v1alpha1.ReasonEstimated
	if est.Write.LimitBytesPerSecond == 0 || est.Read.LimitBytesPerSecond == 0 {
		reason = v1alpha1.ReasonHardwareUnknown
		msg += "; a limit is unknown because a figure is neither in spec.hardware nor in the nodes' hardware.beeburst.io/* labels nor discovered (stage 2 measures it)"
	}
	setCondition(bb, v1alpha1.ConditionLimitsEstimated, metav1.ConditionTrue, reason, msg)
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
		link, src := hardware.NodeLink(bb.Spec.Hardware, lbls, ns.Hardware)
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

// documentedHardware is spec.hardware completed from the nodes. Stage 1 models identical
// nodes, and the slowest one bounds an evenly striped file system, so:
//   - a link the spec does not give is each node's label, else its discovered speed
//     (hardware.NodeLink), and the slowest node's counts; it stays unknown if one node has
//     neither, and the source is the slowest node's;
//   - device figures count from labels only when every node carries them, the smallest.
//
// Stage 2 measures each node on its own.
func documentedHardware(bb *v1alpha1.BurstBuffer, nodes []corev1.Node) (*v1alpha1.HardwareSpec, []v1alpha1.FigureSource) {
	hw := &v1alpha1.HardwareSpec{}
	if bb.Spec.Hardware != nil {
		hw = bb.Spec.Hardware.DeepCopy()
	}
	sources := hardware.Sources(bb.Spec.Hardware)
	fromNodes := func(figure, source string, q resource.Quantity, extra string) {
		for i := range sources {
			if sources[i].Figure == figure {
				sources[i].Source = source
				sources[i].Value = strings.TrimSpace(q.String() + " " + extra)
			}
		}
	}
	fromLabel := func(figure string, q resource.Quantity, extra string) {
		fromNodes(figure, v1alpha1.SourceLabel, q, extra)
	}

	clientLinkGiven := hw.Clients != nil && hw.Clients.Link != nil
	serverLinkGiven := hw.Servers != nil && hw.Servers.Link != nil
	if !clientLinkGiven && !serverLinkGiven && len(nodes) > 0 {
		links := make([]*v1alpha1.LinkHardware, len(nodes))
		srcs, names := make([]string, len(nodes)), make([]string, len(nodes))
		for i, n := range nodes {
			links[i], srcs[i] = hardware.NodeLink(nil, n.Labels, discoveredOn(bb, n.Name))
			names[i] = n.Name
		}
		if link, src, node, ok := hardware.SlowestLink(links, srcs, names); ok {
			if hw.Clients == nil {
				hw.Clients = &v1alpha1.ClientsHardware{}
			}
			if hw.Servers == nil {
				hw.Servers = &v1alpha1.ServersHardware{}
			}
			hw.Clients.Link, hw.Servers.Link = link, link.DeepCopy()
			extra := string(link.Encoding)
			if src == v1alpha1.SourceDiscovered {
				extra += " (" + node + ")"
			}
			fromNodes("clients.link", src, link.RateBitsPerSecond, extra)
			fromNodes("servers.link", src, link.RateBitsPerSecond, extra)
		}
	}
	if hw.Devices == nil || hw.Devices.WriteBytesPerSecond == nil {
		if q, ok := minLabel(nodes, v1alpha1.LabelDiskWriteBytesPerSecond); ok {
			if hw.Devices == nil {
				hw.Devices = &v1alpha1.DevicesHardware{PerNode: 1}
			}
			hw.Devices.WriteBytesPerSecond = &q
			fromLabel("devices.write", q, "")
		}
	}
	if hw.Devices == nil || hw.Devices.ReadBytesPerSecond == nil {
		if q, ok := minLabel(nodes, v1alpha1.LabelDiskReadBytesPerSecond); ok {
			if hw.Devices == nil {
				hw.Devices = &v1alpha1.DevicesHardware{PerNode: 1}
			}
			hw.Devices.ReadBytesPerSecond = &q
			fromLabel("devices.read", q, "")
		}
	}
	if hw.Devices != nil && hw.Devices.PerNode == 0 {
		hw.Devices.PerNode = 1
	}
	return hw, sources
}

// minLabel is the smallest positive quantity of a label over all nodes; false when a node
// lacks it or its value is not a positive quantity.
func minLabel(nodes []corev1.Node, key string) (resource.Quantity, bool) {
	var min resource.Quantity
	if len(nodes) == 0 {
		return min, false
	}
	for i, n := range nodes {
		q, err := resource.ParseQuantity(n.Labels[key])
		if err != nil || q.Sign() <= 0 {
			return min, false
		}
		if i == 0 || q.Cmp(min) < 0 {
			min = q
		}
	}
	return min, true
}

// discoveredOn is what the device probe discovered on a node of bb, if anything.
func discoveredOn(bb *v1alpha1.BurstBuffer, node string) *v1alpha1.NodeHardware {
	for i := range bb.Status.Nodes {
		if bb.Status.Nodes[i].Name == node {
			return bb.Status.Nodes[i].Hardware
		}
	}
	return nil
}
