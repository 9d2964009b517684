package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/sizing"
	"github.com/beeburst/beeburst/internal/speccheck"
	"github.com/beeburst/beeburst/internal/staging"
)

// This file wires validation.compareWith: once the sweep is done, and before the
// burst buffer is Ready (the job must not share the nodes with it, and the locks are still
// held), reconcileComparison (called from publishSweep) runs the ideal workload at the
// sweep's best point on the other storage - a claim, on as many nodes as its access modes
// allow, or a node-local directory on every node - and publishes status.comparison with
// sizing.Compare. The other storage failing never fails the burst buffer: the Compared
// condition says what to fix, and validation goes on. Every wait is bounded: a missing claim
// is answered at once, a pod the scheduler cannot place by UnschedulableTimeout, a pod that
// never mounts by its deadline.

// Sides of a comparison: the other storage, and the burst buffer when the sweep did not
// measure the point: the run of the pods' names, <bb>-compare-<side>-<node> (nodetask.RunName).
const (
	sideOther       = 0
	sideBurstBuffer = 1
)

// compareTarget is the storage validation.compareWith names, as the pods use it.
type compareTarget struct {
	// with names it in sentences ("claim results", "the node-local disk /scratch").
	with   string
	volume corev1.Volume
	// scheduled: the pods go through the scheduler (a claim's volume must be bound and
	// attached for the node).
	scheduled bool
	// maxNodes is how many nodes may use it at once; why, when that is fewer than all.
	maxNodes int
	why      string
}

func comparisonSettled(bb *v1alpha1.BurstBuffer) bool {
	c := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionCompared)
	return c != nil && c.Status != metav1.ConditionUnknown
}

func setCompareCondition(bb *v1alpha1.BurstBuffer, st metav1.ConditionStatus, reason, msg string) {
	conditions.Set(bb, v1alpha1.ConditionCompared, st, reason, msg)
}

// reconcileComparison runs the comparison after stage 3 (and the workload benchmarks); done
// when status.comparison is published or the other storage could not be used.
func (r *BurstBufferReconciler) reconcileComparison(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	points := s.sweepPoints
	bb := s.bb
	if bb.Spec.Validation.CompareWith == nil || comparisonSettled(bb) {
		return ctrl.Result{}, true, nil
	}
	target, reason, msg, err := r.compareTarget(ctx, s)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if reason != "" {
		setCompareCondition(bb, metav1.ConditionFalse, reason, msg)
		return ctrl.Result{}, true, nil
	}
	m, n, bbFigures := comparePoint(bb, points, min(target.maxNodes, len(s.nodes)))
	_, _, seconds := grid(bb, len(s.nodes))
	workload := fmt.Sprintf("large sequential writes and reads (the ideal workload), %d node(s) x %d process(es), %ds each", m, n, seconds)
	if target.why != "" {
		workload += "; " + target.why
	}
	progress := func(what string) {
		setCompareCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonComparing, what)
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonSweeping, "stage 3 done; validation.compareWith: "+what)
	}
	var apartNotes []string // sides on one file system whose runs did not run at once
	if bbFigures == nil {
		// The sweep did not measure this point: the burst buffer runs it first.
		runs, failure, running, err := r.compareSide(ctx, s, target, sideBurstBuffer, m, n, seconds)
		if err != nil {
			return ctrl.Result{}, false, err
		}
		if running {
			progress(fmt.Sprintf("the ideal workload on the burst buffer at %d node(s) x %d process(es) (not a point of the sweep) running", m, n))
			return ctrl.Result{}, false, nil
		}
		if failure != "" {
			setCompareCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonComparisonFailed, "the ideal workload on the burst buffer, for the comparison: "+failure)
			return ctrl.Result{}, true, nil
		}
		bbFigures = map[limits.Operation]float64{limits.Write: aggregate(runs, limits.Write, sharedFS(bb)), limits.Read: aggregate(runs, limits.Read, sharedFS(bb))}
		if apart := notAtOnce(sharedFS(bb), runs); apart != "" {
			apartNotes = append(apartNotes, "the burst buffer's, "+apart)
		}
	}
	runs, failure, running, err := r.compareSide(ctx, s, target, sideOther, m, n, seconds)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if running {
		progress(fmt.Sprintf("the ideal workload on %s at %d node(s) x %d process(es) running", target.with, m, n))
		return ctrl.Result{}, false, nil
	}
	other := map[limits.Operation]float64{}
	if failure == "" {
		// A claim may be one shared file system; a node-local path is each node's own.
		shared := target.volume.PersistentVolumeClaim != nil
		other = map[limits.Operation]float64{limits.Write: aggregate(runs, limits.Write, shared), limits.Read: aggregate(runs, limits.Read, shared)}
		if apart := notAtOnce(shared, runs); apart != "" {
			apartNotes = append(apartNotes, target.with+"'s, "+apart)
		}
	}
	c := sizing.Compare(sizing.CompareInput{With: target.with, Pattern: sizing.PatternLargeSequential, Workload: workload,
		BurstBuffer: bbFigures, Other: other})
	bb.Status.Comparison = apibridge.ComparisonToAPI(c)
	switch {
	case failure != "" && len(comparePathMissing(s)) > 0:
		b := comparePathMissing(s)
		setCompareCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonComparePathMissing,
			fmt.Sprintf("validation.compareWith.nodeLocal.path %s does not exist on node(s) %s (the kubelet: %s): the operator never creates it; create it there, or name a directory that exists on the burst buffer's nodes in a new BurstBuffer. Nothing ran on it; status.comparison has the burst buffer's figures only",
				b[0].Path, strings.Join(blockedNodes(b), ", "), b[0].Detail))
	case failure != "":
		setCompareCondition(bb, metav1.ConditionFalse, failureReason(target, failure),
			fmt.Sprintf("the ideal workload on %s failed: %s; status.comparison has the burst buffer's figures only", target.with, failure))
	case len(apartNotes) > 0:
		// Runs on one file system that did not overlap count over the time they spanned: the
		// side's figure reads low, and the verdict may be wrong.
		setCompareCondition(bb, metav1.ConditionTrue, v1alpha1.ReasonCompared, fmt.Sprintf(
			"%s. Read with care: a side's figures are low where its runs did not run at once (%s)", c.Message, strings.Join(apartNotes, "; ")))
	default:
		setCompareCondition(bb, metav1.ConditionTrue, v1alpha1.ReasonCompared, c.Message)
	}
	return ctrl.Result{}, true, nil
}

// unschedulableMark starts the failure of a comparison pod the scheduler could not place.
const unschedulableMark = "cannot be scheduled: "

// notMounted marks the failure of a comparison pod that never started.
const notMounted = "did not start"

func failureReason(t compareTarget, failure string) string {
	switch {
	case t.scheduled && (strings.Contains(failure, unschedulableMark) || strings.Contains(failure, notMounted)):
		return v1alpha1.ReasonClaimNotMountable
	}
	return v1alpha1.ReasonComparisonFailed
}

// compareTarget reads validation.compareWith: the claim (which must exist and take writes)
// or the node-local path (which the operator must allow); reason and msg say why it cannot
// be used.
func (r *BurstBufferReconciler) compareTarget(ctx context.Context, s *scope) (compareTarget, string, string, error) {
	bb := s.bb
	cw := bb.Spec.Validation.CompareWith
	skipped := "; the burst buffer goes on without the comparison"
	if cw.PersistentVolumeClaim != nil {
		name := cw.PersistentVolumeClaim.ClaimName
		var pvc corev1.PersistentVolumeClaim
		err := r.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: name}, &pvc)
		if apierrors.IsNotFound(err) {
			return compareTarget{}, v1alpha1.ReasonClaimNotFound, fmt.Sprintf(
				"PersistentVolumeClaim %s/%s (validation.compareWith) does not exist: create it, or correct the claim name, in a new BurstBuffer%s",
				bb.Namespace, name, skipped), nil
		}
		if err != nil {
			return compareTarget{}, "", "", err
		}
		modes := pvc.Status.AccessModes
		if len(modes) == 0 {
			modes = pvc.Spec.AccessModes
		}
		t := compareTarget{with: "claim " + name, scheduled: true, maxNodes: 1,
			volume: corev1.Volume{Name: "compare", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}}
		switch {
		case slices.Contains(modes, corev1.ReadWriteMany):
			t.maxNodes = len(s.nodes)
		case slices.Contains(modes, corev1.ReadWriteOnce), slices.Contains(modes, corev1.ReadWriteOncePod):
			t.why = fmt.Sprintf("one node: the claim is %s", modes[0])
		default:
			return compareTarget{}, v1alpha1.ReasonClaimNotMountable, fmt.Sprintf(
				"PersistentVolumeClaim %s/%s (validation.compareWith) takes no writes (access modes %v): compare with a claim the job could write to, in a new BurstBuffer%s",
				bb.Namespace, name, modes, skipped), nil
		}
		return t, "", "", nil
	}
	p := ""
	if cw.NodeLocal != nil {
		p = cw.NodeLocal.Path
	}
	with := "the node-local disk " + p
	if p == "" {
		p = bb.Spec.Storage.Path
		with = fmt.Sprintf("the node-local disk %s (the burst buffer's own drives, without the file system)", p)
	}
	if bb.Spec.Engine == v1alpha1.EngineLocal && p == bb.Spec.Storage.Path {
		return compareTarget{}, v1alpha1.ReasonComparePathNotAllowed, fmt.Sprintf(
			"validation.compareWith.nodeLocal would compare the local engine with its own drive %s: give another path, or a claim, in a new BurstBuffer%s", p, skipped), nil
	}
	if err := speccheck.HostPath(p); err != nil {
		return compareTarget{}, v1alpha1.ReasonComparePathNotAllowed, fmt.Sprintf("validation.compareWith.nodeLocal.path: %v%s", err, skipped), nil
	}
	if speccheck.IsSystemPath(p) {
		return compareTarget{}, v1alpha1.ReasonComparePathNotAllowed, fmt.Sprintf(
			"validation.compareWith.nodeLocal.path %s is a system directory or below one: the benchmark writes there as root%s", p, skipped), nil
	}
	if !r.StorageRoots.Allow(p) {
		return compareTarget{}, v1alpha1.ReasonComparePathNotAllowed, fmt.Sprintf(
			"validation.compareWith.nodeLocal.path %s is not below a root the operator allows (%s=%s; Helm value storage.allowedRoots): nothing ran there; use a path below one of them in a new BurstBuffer, or ask the cluster administrator%s",
			p, FlagAllowedStorageRoots, r.StorageRoots, skipped), nil
	}
	return compareTarget{with: with, maxNodes: len(s.nodes), volume: corev1.Volume{Name: "compare", VolumeSource: corev1.VolumeSource{
		// An existing directory: a missing path fails the pod (by its deadline), never
		// creates a directory on the node's root disk.
		HostPath: &corev1.HostPathVolumeSource{Path: p, Type: ptr.To(corev1.HostPathDirectory)}}}}, "", "", nil
}

// comparePoint is where to compare: the sweep's best write point when it used at most
// maxNodes nodes, else the best point the sweep measured on at most maxNodes; with its
// figures. Without one, the best point's processes on maxNodes nodes, and no figures: the
// burst buffer must run it too.
func comparePoint(bb *v1alpha1.BurstBuffer, points []limits.Point, maxNodes int) (int, int, map[limits.Operation]float64) {
	at := func(m, n int) map[limits.Operation]float64 {
		out := map[limits.Operation]float64{}
		for _, p := range points {
			if p.Nodes == m && p.ProcessesPerNode == n && p.BytesPerSecond > 0 {
				out[p.Operation] = p.BytesPerSecond
			}
		}
		if out[limits.Write] <= 0 {
			return nil
		}
		return out
	}
	procs := 0
	if l := bb.Status.Limits; l != nil && l.Sweep != nil && l.Sweep.Write != nil {
		b := l.Sweep.Write.Best
		procs = int(b.ProcessesPerNode)
		if int(b.Nodes) <= maxNodes {
			if f := at(int(b.Nodes), procs); f != nil {
				return int(b.Nodes), procs, f
			}
		}
	}
	best, m, n := 0.0, 0, 0
	for _, p := range points {
		if p.Operation == limits.Write && p.Nodes <= maxNodes && p.BytesPerSecond > best {
			best, m, n = p.BytesPerSecond, p.Nodes, p.ProcessesPerNode
		}
	}
	if best > 0 {
		return m, n, at(m, n)
	}
	if procs == 0 {
		_, ns, _ := grid(bb, maxNodes)
		procs = ns[len(ns)-1]
	}
	return maxNodes, procs, nil
}

// compareSide runs one side's pods (m nodes x n processes, all at once) and gathers them;
// failure says why a side gave no figures.
func (r *BurstBufferReconciler) compareSide(ctx context.Context, s *scope, t compareTarget, side, m, n, seconds int) ([]nodeRun, string, bool, error) {
	var runs []nodeRun
	var failures, stuck []string
	running := false
	var pods, waiting []*corev1.Pod
	// cannotStart records a pod of the side that cannot start on node.
	cannotStart := func(p *corev1.Pod, node string, b *nodetask.Blocked) {
		if b.Cause == nodetask.Unschedulable && t.scheduled {
			stuck = append(stuck, fmt.Sprintf("%s for node %s, which it can never be scheduled on as it is: %s", p.Name, node, b.Detail))
			return
		}
		failures = append(failures, fmt.Sprintf("node %s: %s", node, r.blockedText(s.bb, p, b)))
	}
	for i := 0; i < m && i < len(s.nodes); i++ {
		node := s.nodes[i]
		st, msg, cur, err := r.runMeasuring(ctx, s, r.comparePodOf(s, t, side, i, min(m, len(s.nodes)), n, seconds))
		if err != nil {
			return nil, "", false, err
		}
		if st == nodetask.Running && cur != nil {
			waiting = append(waiting, cur)
		}
		switch st {
		case nodetask.Running:
			running = true
			if cur != nil && t.scheduled && side == sideOther {
				if names, _ := r.unschedulable([]staging.NodePod{{Node: node, Pod: cur}}); len(names) > 0 {
					stuck = append(stuck, names...)
					pods = append(pods, cur)
				}
			}
		case nodetask.Failed:
			if b := s.blocked[cur.Name]; b != nil {
				// It cannot start (runMeasuring): said now, and it goes - a pod that waits
				// would hold the nodes until its deadline.
				pods = append(pods, cur)
				cannotStart(cur, node, b)
				continue
			}
			if _, _, ran := ranBetween(cur, r.Now()); !ran && side == sideOther {
				// Never started (its deadline ended it): the kubelet's last word says why,
				// usually a volume that does not mount there.
				_, why, err := r.storagePathMissing(ctx, s.bb, cur)
				if err != nil {
					return nil, "", false, err
				}
				need := "the directory must exist on the node"
				if t.scheduled {
					need = "the claim must be mountable on the node (not attached elsewhere, reachable from its zone)"
				}
				failures = append(failures, fmt.Sprintf("node %s: the pod %s %s within its deadline (%s; kubelet: %s): %s",
					node, cur.Name, notMounted, reportMessage(msg), why, need))
				continue
			}
			failures = append(failures, fmt.Sprintf("node %s: %s", node, reportMessage(msg)))
		case nodetask.Succeeded:
			run, err := readIdeal(node, msg)
			if err != nil {
				failures = append(failures, fmt.Sprintf("node %s: %v", node, err))
				continue
			}
			runs = append(runs, run)
		}
	}
	if len(pods) > 0 && len(waiting) > 0 {
		// The other nodes' kubelets may be about to say the same: the verdict names them all.
		more, heard, err := r.othersHeard(ctx, s, pods, waiting)
		if err != nil || !heard {
			return nil, "", !heard, err
		}
		for _, p := range more {
			cannotStart(p, nodeOf(p), s.blocked[p.Name])
		}
	}
	// A pod that waits for the scheduler, or cannot start, would hold the nodes' locks until
	// its deadline: it goes, and the side's other runs with it (they would compare nothing).
	if len(pods) > 0 {
		pods = append(pods, waiting...)
	}
	for _, p := range pods {
		if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return nil, "", false, err
		}
	}
	if len(stuck) > 0 {
		// The claim is reported as not mountable from the burst buffer's nodes.
		return nil, fmt.Sprintf("the pod %s%s; the claim must be reachable from the burst buffer's nodes", unschedulableMark, strings.Join(stuck, "; ")), false, nil
	}
	if len(failures) > 0 && len(pods) > 0 {
		// The sides that cannot start decide: the other nodes' runs would compare nothing.
		return nil, strings.Join(failures, "; "), false, nil
	}
	if running {
		return nil, "", true, nil
	}
	if len(failures) > 0 {
		return nil, strings.Join(failures, "; "), false, nil
	}
	return runs, "", false, nil
}

// comparePodOf is node i's run of a side of m nodes. On a shared file system - the burst
// buffer's with beegfs, a claim on the other side - the side's runs start together
// (nodetask.StartTogetherIn), as a sweep point's do: their figures add up as that file
// system's, which is what its clients move at once. A node-local path is each node's own.
func (r *BurstBufferReconciler) comparePodOf(s *scope, t compareTarget, side, i, m, procs, seconds int) *corev1.Pod {
	pod := r.comparePod(s, t, side, i, s.nodes[i], procs, seconds)
	if side == sideBurstBuffer {
		return together(s.bb, pod, m, func(j int) string { return nodetask.CompareName(s.bb, side, j, false) })
	}
	if t.volume.PersistentVolumeClaim == nil {
		return pod // a node-local path: each node's own
	}
	return togetherOn(s.bb, pod, m, func(j int) string { return nodetask.CompareName(s.bb, side, j, true) }, nodetask.CompareMount)
}

// comparePod is node i's ideal workload on one side: the other storage (a claim through the
// scheduler, pinned to the node), or the burst buffer.
func (r *BurstBufferReconciler) comparePod(s *scope, t compareTarget, side, i int, node string, procs, seconds int) *corev1.Pod {
	if side == sideBurstBuffer {
		return nodetask.ComparePod(s.bb, r.AgentImage, side, i, node, procs, seconds, nil, false)
	}
	return nodetask.ComparePod(s.bb, r.AgentImage, side, i, node, procs, seconds, &t.volume, t.scheduled)
}
