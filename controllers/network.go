package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// netPair is one measured link pair: a client on one node sending to a server on another.
type netPair struct {
	client, server string
	bytesPerSecond float64
	// disturbedBy names what ran beside the probe on either end (linkDisturbance).
	disturbedBy []string
}

// probeLinks is stage 2's network part (reconcileNetwork): iperf3 between the nodes in a ring (node k+1
// sends to node k), all pairs at once - links are full duplex, and each node sends once and
// receives once. The probes run in the host network (nodetask.NetServerPod says why) and
// need no privilege.
//
// A pair's figure is bounded by the slower of its two ends. A node's figure is the best of
// the pairs it is in: with three or more nodes a node with a fast neighbour gets its own
// link's figure; with two nodes both get the pair's, and a warning names the pair, not a node
// it cannot single out.
func (r *BurstBufferReconciler) probeLinks(ctx context.Context, s *scope) (pairs []netPair, done bool, failures []string, err error) {
	bb := s.bb
	n := len(s.nodes)
	if n < 2 {
		return nil, true, nil, nil // one node: no link to measure, and no data crosses one
	}
	done = true
	for k := 0; k < n; k++ {
		srvNode, cliNode := s.nodes[k], s.nodes[(k+1)%n]
		srv := roundPod(nodetask.NetServerPod(bb, r.AgentImage, k, srvNode), networkProbeRound(bb))
		st, msg, _, err := r.runMeasuring(ctx, s, srv)
		if err != nil {
			return nil, false, nil, err
		}
		if st == nodetask.Failed {
			failures = append(failures, fmt.Sprintf("network probe server on node %s: %s", srvNode, reportMessage(msg)))
			continue
		}
		addr, err := r.serverAddress(ctx, s, srv)
		if err != nil {
			return nil, false, nil, err
		}
		if addr == "" {
			done = false // the client needs the server's address
			continue
		}
		cl := roundPod(nodetask.NetClientPod(bb, r.AgentImage, k, cliNode, addr), networkProbeRound(bb))
		st, msg, clPod, err := r.runMeasuring(ctx, s, cl)
		if err != nil {
			return nil, false, nil, err
		}
		switch st {
		case nodetask.Running:
			done = false
		case nodetask.Failed:
			failures = append(failures, fmt.Sprintf("network probe from node %s to node %s: %s", cliNode, srvNode, reportMessage(msg)))
		case nodetask.Succeeded:
			res, start, end, err := transferRate(msg)
			if err != nil {
				failures = append(failures, fmt.Sprintf("network probe from node %s to node %s: %v", cliNode, srvNode, err))
				continue
			}
			traffic := limits.ForeignLinkTraffic(res.Interface, float64(res.InterfaceSentBytes), float64(res.InterfaceReceivedBytes), float64(res.Bytes), res.Retransmits)
			d, err := r.linkDisturbance(ctx, s, clPod, cliNode, srvNode, start, end, traffic)
			if err != nil {
				return nil, false, nil, err
			}
			pairs = append(pairs, netPair{client: cliNode, server: srvNode, bytesPerSecond: res.BytesPerSecond, disturbedBy: d})
		}
	}
	return pairs, done, failures, nil
}

// linkDisturbance names what ran beside a link probe on either of its ends while its client
// measured (from start to end, its report's window; the pod's, when the report has none; the
// quick profile's pods wait in their chain before they measure): other burst buffers' pods on
// the two nodes, what the client's interface sent that the probe did not (traffic, from its
// report: limits.ForeignLinkTraffic), or a probe without the nodes' measuring locks. Decided
// once and recorded on the client pod, as a sweep run's conditions are: later visits (a
// second round of the devices publishes stage 2 again, an operator restarted) must not
// decide again when the pods that shared the nodes are gone, or when pods that ended later
// are in view.
func (r *BurstBufferReconciler) linkDisturbance(ctx context.Context, s *scope, pod *corev1.Pod, cliNode, srvNode string, start, end time.Time, traffic string) ([]string, error) {
	if pod == nil {
		return nil, nil
	}
	c := recordedConditions(pod)
	if c == nil {
		if start.IsZero() || end.IsZero() {
			start, end, _ = ranBetween(pod, r.Now())
		}
		var others []string
		for _, node := range []string{cliNode, srvNode} {
			// No device counters: another burst buffer's services serving its job count.
			o, err := r.otherPodsOn(ctx, s.bb, node, start.Add(-r.setupMargin()), end.Add(r.setupMargin()), true)
			if err != nil {
				return nil, err
			}
			for _, p := range o {
				others = append(others, fmt.Sprintf("node %s: %s", node, p))
			}
		}
		pc := podConditions(pod, cliNode, start, others)
		pc.OtherTraffic = traffic
		var err error
		if c, err = r.recordConditions(ctx, pod, pc); err != nil {
			return nil, err
		}
	}
	out := slices.Clone(c.OtherPods)
	if c.OtherTraffic != "" {
		out = append(out, fmt.Sprintf("node %s: %s", cliNode, c.OtherTraffic))
	}
	if !c.Exclusive {
		out = append(out, fmt.Sprintf("node %s: measured without the nodes' measuring locks", cliNode))
	}
	return out, nil
}

// networkProbeRound is the round of stage 2's links: 1, or 2 once a sweep figure was above a
// limit they set, or they set one far below their documented rate (componentSecondLook).
func networkProbeRound(bb *v1alpha1.BurstBuffer) int {
	if l := bb.Status.Limits; l != nil && l.Components != nil && l.Components.NetworkProbeRound > 1 {
		return int(l.Components.NetworkProbeRound)
	}
	return 1
}

// roundPod names a pod of a second round after the first's (-r2), whose results stay
// readable beside it.
func roundPod(pod *corev1.Pod, round int) *corev1.Pod {
	if round > 1 {
		pod.Name += fmt.Sprintf("-r%d", round)
	}
	return pod
}

// serverAddress is where a network probe's client finds the server (host network): its
// node's InternalIP, known before the server starts - the client is created with it and
// retries until the server listens, so the two pods start together. A node without one:
// the server pod's address once it has started.
func (r *BurstBufferReconciler) serverAddress(ctx context.Context, s *scope, srv *corev1.Pod) (string, error) {
	if a := nodeAddress(s.nodeObj(srv.Spec.NodeName)); a != "" {
		return a, nil
	}
	var cur corev1.Pod
	if err := r.Get(ctx, client.ObjectKeyFromObject(srv), &cur); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return cur.Status.PodIP, nil
}

// nodeAddress is a node's InternalIP, "" when it has none (or no node).
func nodeAddress(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			return a.Address
		}
	}
	return ""
}

// transferRate is a network probe client's result, with when it measured (its report's
// window).
func transferRate(msg string) (bench.Result, time.Time, time.Time, error) {
	rep, err := readReport(msg)
	if err != nil {
		return bench.Result{}, time.Time{}, time.Time{}, fmt.Errorf("unreadable probe report: %v", err)
	}
	for _, res := range rep.Results {
		if res.Operation == bench.OpTransfer && res.BytesPerSecond > 0 {
			return res, rep.StartTime, rep.EndTime, nil
		}
	}
	return bench.Result{}, time.Time{}, time.Time{}, fmt.Errorf("probe report has no transfer figure")
}

// nodeNetwork is each node's figure: the best pair it is in.
func nodeNetwork(pairs []netPair) map[string]float64 {
	best := map[string]float64{}
	for _, p := range pairs {
		for _, n := range []string{p.client, p.server} {
			best[n] = max(best[n], p.bytesPerSecond)
		}
	}
	return best
}

// networkWarnings compares each node's measured link with its documented data rate. With two
// nodes the figure belongs to the pair, and so does the warning.
func networkWarnings(s *scope, comp *v1alpha1.ComponentLimits, pairs []netPair) []v1alpha1.Warning {
	var out []v1alpha1.Warning
	if len(s.nodes) == 2 && len(pairs) > 0 {
		nc := comp.Nodes[0].Network
		if nc == nil || nc.DocumentedBytesPerSecond == nil || nc.MeasuredBytesPerSecond == nil {
			return nil
		}
		doc, got := linkDocumented(comp, 0), float64(*nc.MeasuredBytesPerSecond)
		if got >= belowDocumentedShare*doc {
			return nil
		}
		return []v1alpha1.Warning{{
			Reason: v1alpha1.WarningBelowDocumented, Node: strings.Join(s.nodes, ","), Component: componentNetwork,
			Message: fmt.Sprintf("the link between %s and %s measured %s, %.0f%% of the documented %s: at least one of the two links is slower than documented (with 3 or more nodes beeburst can tell which)",
				s.nodes[0], s.nodes[1], limits.FormatBytesPerSecond(got), 100*got/doc, limits.FormatBytesPerSecond(doc)),
		}}
	}
	for _, nc := range comp.Nodes {
		if nc.Network != nil {
			out = append(out, belowDocumented(nc.Name, componentNetwork, nc.Network)...)
		}
	}
	return out
}

// linkDocumented is the documented rate that node i's measured link figure is judged
// against: its own, or with two nodes - whose figure is the pair's - the lower of the two
// ends'. 0 when undocumented.
func linkDocumented(comp *v1alpha1.ComponentLimits, i int) float64 {
	nc := comp.Nodes[i].Network
	if nc == nil || nc.DocumentedBytesPerSecond == nil {
		return 0
	}
	doc := float64(*nc.DocumentedBytesPerSecond)
	if len(comp.Nodes) == 2 {
		if o := comp.Nodes[1-i].Network; o != nil && o.DocumentedBytesPerSecond != nil {
			doc = min(doc, float64(*o.DocumentedBytesPerSecond))
		}
	}
	return doc
}

// reconcileNetwork is stage 2's links, once every device probe ended. They are measured every
// time: a pair's figure depends on both ends, so it is not kept per node for reuse.
func (r *BurstBufferReconciler) reconcileNetwork(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if componentsMeasured(bb) {
		return ctrl.Result{}, true, nil
	}
	pairs, done, failures, err := r.probeLinks(ctx, s)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if len(failures) > 0 {
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
			strings.Join(failures, "; "))
		return ctrl.Result{}, false, nil
	}
	if !done {
		reason, what := v1alpha1.ReasonProbing, "probing"
		if networkProbeRound(bb) > 1 {
			reason, what = v1alpha1.ReasonRemeasuring, "the first round of the links read low against the sweep or their documented rates, so they are measured again (a disturbed probe reads low)"
		}
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, reason,
			fmt.Sprintf("%s: devices of %d node(s) measured, links of %d of %d pair(s)", what, len(s.nodes), len(pairs), len(s.nodes)))
		return ctrl.Result{}, false, nil
	}
	s.stage2.pairs = pairs
	return ctrl.Result{}, true, nil
}

// linkDiscoveryAddress is the node's InternalIP when its link speed must be discovered:
// neither spec.hardware nor the node's labels document it. Empty otherwise, and for a node
// without an InternalIP.
func linkDiscoveryAddress(bb *v1alpha1.BurstBuffer, node *corev1.Node) string {
	if node == nil || !apibridge.NeedsLinkDiscovery(bb.Spec.Hardware, node.Labels) {
		return ""
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			return a.Address
		}
	}
	return ""
}
