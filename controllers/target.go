package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/placement"
	"github.com/beeburst/beeburst/internal/sizing"
	"github.com/beeburst/beeburst/internal/workload"
)

// This file wires spec.target into the reconciler: the node count chosen (or the
// given count checked) with sizing.Plan when the nodes are chosen, and the verdict
// (sizing.Assess) once stage 3 measured. The rules are internal/sizing's, their bridge to the
// API internal/apibridge's (sizing.go); docs/sizing.md describes both.

// defaultNodeCount is the node count of a spec with neither nodes.count nor a target (the
// CRD's default before a target could leave the count out).
const defaultNodeCount = 1

// chooseNodes is the node choice of reconcileNodes. Without spec.target it is placement's (a
// missing nodes.count is 1). With a target and nodes.count, placement chooses the nodes and
// the target is checked against them; with a target and no count, sizing.Plan chooses how
// many of the candidate nodes (those spec.nodes selects, the workload's first) it takes. The
// decision goes into status.target and the TargetMet condition.
func (r *BurstBufferReconciler) chooseNodes(ctx context.Context, s *scope, req placement.Request) (placement.Result, error) {
	bb := s.bb
	if bb.Spec.Target == nil {
		if req.Count == 0 {
			req.Count = defaultNodeCount
		}
		return placement.Choose(req), nil
	}
	if !req.FromWorkload && req.Pods == nil {
		// Nodes of the workload are preferred even when they do not decide placement.
		if sel, err := workload.Selector(bb); err == nil {
			var pods corev1.PodList
			if err := r.List(ctx, &pods, client.InNamespace(bb.Namespace), ofBurstBuffer(bb), client.MatchingLabelsSelector{Selector: sel}); err != nil {
				return placement.Result{}, err
			}
			req.Pods = pods.Items
		}
	}

	if req.Count > 0 {
		return r.checkTarget(ctx, bb, req)
	}
	return r.sizeForTarget(ctx, bb, req)
}

// checkTarget: the count is the user's, the nodes placement's, and the target is checked
// against them.
func (r *BurstBufferReconciler) checkTarget(ctx context.Context, bb *v1alpha1.BurstBuffer, req placement.Request) (placement.Result, error) {
	choice := placement.Choose(req)
	if choice.Reason != "" {
		return choice, nil
	}
	d, err := r.planTarget(ctx, bb, tiered(choice.Nodes, req.Pods), req.Count)
	if err != nil {
		return placement.Result{}, err
	}
	r.publishDecision(bb, d)
	choice.Message += "; spec.target checked against them: " + d.Message
	return choice, nil
}

// sizeForTarget chooses how many of the candidate nodes the target needs, and which.
func (r *BurstBufferReconciler) sizeForTarget(ctx context.Context, bb *v1alpha1.BurstBuffer, req placement.Request) (placement.Result, error) {
	// Placement with one node says whether any candidate exists (and, with fromWorkload,
	// whether the workload does).
	one := req
	one.Count = 1
	if probe := placement.Choose(one); probe.Reason != "" {
		return probe, nil
	}
	cands := targetCandidates(req)
	d, err := r.planTarget(ctx, bb, cands, 0)
	if err != nil {
		return placement.Result{}, err
	}
	byName := map[string]corev1.Node{}
	for _, c := range cands {
		byName[c.node.Name] = c.node
	}
	var chosen []corev1.Node
	for _, u := range d.Nodes {
		if n, ok := byName[u.Name]; ok {
			chosen = append(chosen, n)
		}
	}
	need := max(apibridge.MinNodes(&bb.Spec), 1)
	if len(chosen) < need || len(chosen) == 0 {
		// Too few candidates for the layout: wait for nodes, as placement does for a count.
		setTargetCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown, d.Message)
		return placement.Result{Reason: v1alpha1.ReasonNodesNotFound, Message: fmt.Sprintf(
			"spec.target: %d candidate node(s) (Ready, schedulable, matching spec.nodes), the layout needs at least %d; waiting for nodes: %s",
			len(cands), need, d.Message)}, nil
	}
	r.publishDecision(bb, d)
	names := make([]string, len(chosen))
	for i := range chosen {
		names[i] = chosen[i].Name
	}
	return placement.Result{Nodes: chosen, Message: fmt.Sprintf("nodes [%s]: chosen for spec.target among %d candidate node(s): %s",
		strings.Join(limit(names, 8), " "), len(cands), d.Message)}, nil
}

// targetCandidates are the nodes a target may be sized over: Ready, schedulable, matching
// spec.nodes, the workload's first (with fromWorkload, the workload's only).
func targetCandidates(req placement.Request) []tieredNode {
	var eligible []corev1.Node
	for _, n := range req.Nodes {
		if req.Selector.Matches(labels.Set(n.Labels)) && placement.Ready(&n) && !n.Spec.Unschedulable {
			eligible = append(eligible, n)
		}
	}
	sort.Slice(eligible, func(i, j int) bool { return eligible[i].Name < eligible[j].Name })
	cands := tiered(eligible, req.Pods)
	if req.FromWorkload {
		// The workload's nodes only, as placement takes them.
		var own []tieredNode
		for _, c := range cands {
			if c.tier < 2 {
				own = append(own, c)
			}
		}
		cands = own
	}
	return cands
}

// tieredNode is a candidate node and its preference: 0 the workload's pods run there, 1 its
// unscheduled pods could run there, 2 neither.
type tieredNode struct {
	node             corev1.Node
	tier             int
	running, fitting int
}

// tiered orders nodes as placement.Choose orders the workload's: running pods first (most
// first), then fitting unscheduled pods (most first), then the others, each by the order given.
func tiered(nodes []corev1.Node, pods []corev1.Pod) []tieredNode {
	out := make([]tieredNode, 0, len(nodes))
	for i := range nodes {
		t := tieredNode{node: nodes[i], tier: 2}
		for j := range pods {
			p := &pods[j]
			if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			switch {
			case p.Spec.NodeName == nodes[i].Name:
				t.running++
			case p.Spec.NodeName == "" && placement.Fits(p, &nodes[i]):
				t.fitting++
			}
		}
		switch {
		case t.running > 0:
			t.tier = 0
		case t.fitting > 0:
			t.tier = 1
		}
		out = append(out, t)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if a.running != b.running {
			return a.running > b.running
		}
		return a.fitting > b.fitting
	})
	return out
}

// reuseWindow is validation.reuseComponentResultsFor: how young a cached measurement must be
// to count as fresh (1h when not given).
func reuseWindow(bb *v1alpha1.BurstBuffer) time.Duration {
	if reuse := bb.Spec.Validation.ReuseComponentResultsFor; reuse != "" {
		if d, err := reuse.Parse(); err == nil {
			return d
		}
	}
	return time.Hour
}

// planTarget runs sizing.Plan over the candidates with each node's best figures: the
// per-node cache (figures measured by a probe that had the node to itself, not doubted by a
// second look since), spec.hardware, the node's labels; and for a metadata target the
// per-metadata-server rate cached on them. count 0 chooses; more checks the first count
// candidates.
func (r *BurstBufferReconciler) planTarget(ctx context.Context, bb *v1alpha1.BurstBuffer, cands []tieredNode, count int) (sizing.Decision, error) {
	target := apibridge.TargetFromSpec(bb.Spec.Target)
	req, err := apibridge.OfflineRequest(bb.Spec.Hardware, &bb.Spec, target, min(max(len(cands), 1), sizing.MaxBurstBufferNodes))
	if err != nil {
		// spec.hardware cannot be read: stage 1 says so (InvalidHardware); size without it.
		if req, err = apibridge.OfflineRequest(nil, &bb.Spec, target, min(max(len(cands), 1), sizing.MaxBurstBufferNodes)); err != nil {
			return sizing.Decision{}, err
		}
	}
	req.Count, req.MaxNodes, req.Now, req.FreshFor = count, 0, r.Now(), reuseWindow(bb)
	req.Candidates = make([]sizing.Candidate, 0, len(cands))
	var cached []nodecache.Figures
	for _, c := range cands {
		in := apibridge.CandidateInput{Name: c.node.Name, Tier: c.tier, Workload: c.tier < 2, Spec: bb.Spec.Hardware,
			Labels: c.node.Labels, StoragePath: bb.Spec.Storage.Path}
		f, ok := r.cachedFigures(ctx, c.node.Name, &c.node)
		if ok && f.Trusted() {
			in.Cached = &f
		}
		if ok {
			cached = append(cached, f) // the metadata figure has conditions of its own
		}
		req.Candidates = append(req.Candidates, apibridge.Candidate(in))
	}
	if bb.Spec.Target.MetadataOperationsPerSecond != nil {
		// Metadata servers from the freshest per-server rate a metadata benchmark left on
		// these nodes (metadatarate.go), whichever nodes end up running them.
		req.MetadataOpsPerServer = apibridge.MetadataPerServer(cached, bb.Spec.Storage.Path, req.Now, req.FreshFor)
	}
	d, err := sizing.Plan(req)
	if err != nil {
		// The API server's rules make this unreachable (a target names a figure, in bounds).
		return sizing.Decision{}, fmt.Errorf("spec.target: %w", err)
	}
	return d, nil
}

// publishDecision writes the decision into status.target and the TargetMet condition.
func (r *BurstBufferReconciler) publishDecision(bb *v1alpha1.BurstBuffer, d sizing.Decision) {
	bb.Status.Target = apibridge.DecisionToAPI(d, r.Now())
	st, reason, msg := apibridge.TargetCondition(bb.Status.Target)
	setTargetCondition(bb, st, reason, msg)
}

func setTargetCondition(bb *v1alpha1.BurstBuffer, st metav1.ConditionStatus, reason, msg string) {
	if msg == "" {
		msg = "spec.target"
	}
	conditions.Set(bb, v1alpha1.ConditionTargetMet, st, reason, msg)
}

// reconcileTarget judges spec.target after stage 3: sizing.Assess holds the sweep's best
// against the target, with the limit of the burst buffer's nodes from their stage-2 figures,
// and status.target and the TargetMet condition say met, or not met with the bottleneck and
// what would meet it. Before stage 3 ends, and without a sweep (profile none), the decision
// stands. Never blocks the phases after it.
func (r *BurstBufferReconciler) reconcileTarget(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if bb.Spec.Target != nil && bb.Status.Target == nil && len(s.nodeObjs) > 0 && len(s.nodeObjs) == len(s.nodes) {
		// Nodes chosen without a decision (by an operator that did not act on spec.target
		// yet): the target is checked against them.
		d, err := r.planTarget(ctx, bb, tiered(s.nodeObjs, nil), len(s.nodeObjs))
		if err != nil {
			return ctrl.Result{}, true, err
		}
		r.publishDecision(bb, d)
	}
	if bb.Spec.Target == nil || bb.Status.Target == nil || !validationEnded(bb) {
		return ctrl.Result{}, true, nil
	}
	if reason := conditionReason(bb, v1alpha1.ConditionTargetMet); reason == v1alpha1.ReasonTargetMet || reason == v1alpha1.ReasonTargetNotMet {
		return ctrl.Result{}, true, nil // judged once; the figures do not change after stage 3
	}
	if measurementFailed(bb) {
		// The sweep did not end, or its limit is in doubt: its points would judge the
		// target on less than it was to be judged on.
		setTargetCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown, fmt.Sprintf(
			"a measurement failed (%s): the target is not judged", validationEndedBy(bb)))
		return ctrl.Result{}, true, nil
	}
	l := bb.Status.Limits
	if l == nil || l.Sweep == nil || l.Sweep.ConfigMapName == "" {
		return ctrl.Result{}, true, nil
	}
	var cm corev1.ConfigMap
	if err := r.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: l.Sweep.ConfigMapName}, &cm); err != nil {
		return ctrl.Result{}, true, client.IgnoreNotFound(err)
	}
	points, err := limits.ParseSweepCSV(strings.NewReader(cm.Data["sweep.csv"]))
	if err != nil {
		setTargetCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown,
			fmt.Sprintf("the sweep in ConfigMap %s cannot be read (%v): the target cannot be judged", cm.Name, err))
		return ctrl.Result{}, true, nil
	}
	in, tolerance, err := measuredHardware(s)
	if err != nil {
		setTargetCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown,
			fmt.Sprintf("the limit of the burst buffer's nodes cannot be computed (%v): the target cannot be judged", err))
		return ctrl.Result{}, true, nil
	}
	ai := sizing.AssessInput{Target: apibridge.TargetFromSpec(bb.Spec.Target), Hardware: in, Points: points, Tolerance: tolerance,
		CutShort: l.Sweep.CutShort, MetadataServers: int(bb.Status.Target.MetadataServers), MetadataOps: measuredCreates(l.Workloads)}
	if c := bb.Status.Capacity; c != nil && l.Components != nil {
		ai.Capacity = float64(c.Value())
	}
	v, err := sizing.Assess(ai)
	if err != nil {
		setTargetCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown, fmt.Sprintf("the target cannot be judged: %v", err))
		return ctrl.Result{}, true, nil
	}
	apibridge.ApplyVerdict(bb.Status.Target, v)
	st, reason, msg := apibridge.TargetCondition(bb.Status.Target)
	if v.State != sizing.StateMet && v.State != sizing.StateNotMet {
		// The sweep tells nothing (no valid point): the prediction stands, and says so.
		reason = conditionReason(bb, v1alpha1.ConditionTargetMet)
		st = targetStatusOf(reason)
	}
	setTargetCondition(bb, st, reason, msg)
	return ctrl.Result{}, true, nil
}

// measuredCreates is the metadata benchmark's file creates per second (workloads.go), 0 when
// it did not run (profile quick or none).
func measuredCreates(ws []v1alpha1.WorkloadResult) float64 {
	for _, w := range ws {
		if w.Name == workloadName(agentapi.KindMetadata, bench.OpCreate) && w.OpsPerSecond != nil {
			return float64(*w.OpsPerSecond)
		}
	}
	return 0
}

func targetStatusOf(reason string) metav1.ConditionStatus {
	switch reason {
	case v1alpha1.ReasonTargetMet:
		return metav1.ConditionTrue
	case v1alpha1.ReasonTargetNotMet, v1alpha1.ReasonTargetUnreachable:
		return metav1.ConditionFalse
	}
	return metav1.ConditionUnknown
}

// measuredHardware is the limit input of the burst buffer's nodes with their stage-2
// measured figures - the model status.limits.components was computed from and the sweep was
// analysed against (apibridge.LimitInput) - and the tolerance a sweep point may exceed it by
// (a measured limit carries its measurement's noise). Without stage 2, stage 1's.
func measuredHardware(s *scope) (limits.Hardware, float64, error) {
	in, err := apibridge.LimitInput(s.bb, s.nodeObjs, s.bb.Status.Limits.Components)
	if err != nil {
		return limits.Hardware{}, 0, err
	}
	tolerance := 0.0
	if in.Measured {
		tolerance = measuredLimitTolerance
	}
	return in.Hardware, tolerance, nil
}
