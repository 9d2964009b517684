package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/placement"
	"github.com/beeburst/beeburst/internal/staging"
	"github.com/beeburst/beeburst/internal/workload"
)

// reconcileNodes picks the nodes once and records them in status.nodes; later visits keep
// them (spec.nodes is immutable, and data lives on those nodes).
func (r *BurstBufferReconciler) reconcileNodes(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	var all corev1.NodeList
	if err := r.List(ctx, &all); err != nil {
		return ctrl.Result{}, false, err
	}
	byName := map[string]corev1.Node{}
	for _, n := range all.Items {
		byName[n.Name] = n
	}
	if len(bb.Status.Nodes) > 0 {
		for _, name := range s.nodes {
			if n, ok := byName[name]; ok {
				s.nodeObjs = append(s.nodeObjs, n)
			}
		}
		return ctrl.Result{}, true, nil
	}

	sel := labels.Everything()
	if bb.Spec.Nodes.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(bb.Spec.Nodes.Selector); err != nil {
			setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound,
				fmt.Sprintf("spec.nodes.selector is invalid: %v", err))
			return ctrl.Result{}, false, nil
		}
	}
	req := placement.Request{Nodes: all.Items, Selector: sel, Count: int(bb.Spec.Nodes.Count), FromWorkload: bb.Spec.Nodes.FromWorkload}
	if req.FromWorkload {
		// The pod cache holds only pods with the beeburst.io/burst-buffer label, which the
		// workload selector always requires: listing from it sees every workload pod.
		wsel, err := workload.Selector(bb)
		if err != nil {
			setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound,
				fmt.Sprintf("spec.nodes.fromWorkload: spec.workload.selector is invalid: %v", err))
			return ctrl.Result{}, false, nil
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(bb.Namespace), client.MatchingLabelsSelector{Selector: wsel}); err != nil {
			return ctrl.Result{}, false, err
		}
		req.Pods = pods.Items
		req.Workload = fmt.Sprintf("pods in namespace %s labelled %s=%s", bb.Namespace, v1alpha1.LabelBurstBuffer, bb.Name)
		if bb.Spec.Workload.Selector != nil {
			req.Workload += " and matching spec.workload.selector"
		}
	}
	choice := placement.Choose(req)
	if choice.Reason != "" {
		// Watches on nodes and on workload pods bring the next visit.
		setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, choice.Reason, choice.Message)
		return ctrl.Result{}, false, nil
	}
	s.nodeObjs = choice.Nodes
	for i, n := range s.nodeObjs {
		s.nodes = append(s.nodes, n.Name)
		bb.Status.Nodes = append(bb.Status.Nodes, v1alpha1.NodeStatus{
			Name: n.Name, Roles: roles(bb, i), Path: nodetask.DataDir(bb),
		})
	}
	if c := bb.Spec.Storage.CapacityPerNode; c != nil {
		total := resource.NewQuantity(c.Value()*int64(len(s.nodes)), resource.BinarySI)
		bb.Status.Capacity = total
	}
	bb.Status.NodeSelection = choice.Message
	setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionUnknown, v1alpha1.ReasonNodesSelected, choice.Message)
	return ctrl.Result{}, true, nil
}

// roles follows BeeOND's layout: management on the first node, metadata on the first
// layout.metadataServers nodes, storage and client on all. The local engine has no services.
func roles(bb *v1alpha1.BurstBuffer, i int) []string {
	if bb.Spec.Engine == v1alpha1.EngineLocal {
		return []string{v1alpha1.RoleClient, v1alpha1.RoleStorage}
	}
	var r []string
	if i == 0 {
		r = append(r, v1alpha1.RoleManagement)
	}
	if int32(i) < bb.Spec.Layout.MetadataServers {
		r = append(r, v1alpha1.RoleMetadata)
	}
	r = append(r, v1alpha1.RoleStorage, v1alpha1.RoleClient)
	sort.Strings(r)
	return r
}

// reconcileEngine lets the engine create its part on every node.
func (r *BurstBufferReconciler) reconcileEngine(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	res, err := s.engine.Provision(ctx, bb, s.nodes)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	for i := range bb.Status.Nodes {
		bb.Status.Nodes[i].Prepared = res.Prepared[bb.Status.Nodes[i].Name]
	}
	if res.Ready {
		bb.Status.Mount = res.Mount
		msg := res.Message
		if bb.Status.NodeSelection != "" {
			// Why these nodes stays readable in the condition after the engine's own message.
			msg += "; " + bb.Status.NodeSelection
		}
		setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionTrue, res.Reason, msg)
		return ctrl.Result{}, true, nil
	}
	// In progress or failed: the reason tells which (summarise derives Failed from failure
	// reasons such as ClientModuleMissing); watches on the engine's pods bring the next visit.
	setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, res.Reason, res.Message)
	return ctrl.Result{}, false, nil
}

// reconcileDelete tears down in reverse order of creation: wait for running node tasks,
// stage out (or stop and keep everything), remove the data on the nodes, drop the finalizer.
func (r *BurstBufferReconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	bb := s.bb
	if !controllerutil.ContainsFinalizer(bb, v1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	setCondition(bb, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDeleting, "the burst buffer is being torn down")

	// A clean pod racing a prepare pod or a probe on the same directory could leave data
	// behind or fail the probe: wait until every earlier task pod has ended.
	busy, err := r.runningTasks(ctx, bb)
	if err != nil {
		return ctrl.Result{}, err
	}
	// A stage-in copies from durable storage: stopping it loses nothing. A stage-out is
	// stopped only when the user gave its data up.
	stop := []staging.Direction{staging.In}
	if bb.Spec.Teardown.Hurry {
		stop = append(stop, staging.Out)
	}
	if busy, err = r.stopCopies(ctx, bb, busy, stop); err != nil {
		return ctrl.Result{}, err
	}
	if len(busy) > 0 {
		setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonDeleting,
			fmt.Sprintf("waiting for %d running task pod(s) to end before removing data: %v", len(busy), busy))
		return ctrl.Result{}, nil
	}

	if bb.Spec.Teardown.Hurry {
		if len(bb.Spec.StageOut) > 0 && !conditionIs(bb, v1alpha1.ConditionStagedOut, metav1.ConditionTrue) {
			setCondition(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonSkippedByHurry,
				"spec.teardown.hurry is true: stage-out skipped, the data named in spec.stageOut is removed with the burst buffer")
		}
	} else if res, done, err := r.reconcileStageOut(ctx, s); err != nil || !done {
		return res, err
	}

	done, err := s.engine.Teardown(ctx, bb, s.nodes)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !done {
		setCondition(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonDeleting,
			fmt.Sprintf("removing %s on %d node(s)", nodetask.DataDir(bb), len(s.nodes)))
		return ctrl.Result{}, nil
	}
	orig := bb.DeepCopy()
	controllerutil.RemoveFinalizer(bb, v1alpha1.Finalizer)
	return ctrl.Result{}, r.Patch(ctx, bb, client.MergeFrom(orig))
}

// runningTasks lists this burst buffer's task pods that have not ended, except clean pods.
func (r *BurstBufferReconciler) runningTasks(ctx context.Context, bb *v1alpha1.BurstBuffer) ([]string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(bb.Namespace),
		client.MatchingLabels{v1alpha1.LabelBurstBuffer: bb.Name, nodetask.LabelManagedBy: nodetask.ManagedBy}); err != nil {
		return nil, err
	}
	var busy []string
	for _, p := range pods.Items {
		// Clean pods are teardown's own and copies are handled by stopCopies and
		// reconcileStageOut; long-running pods (BeeGFS services and clients) are the engine's
		// to stop, in its order.
		switch p.Labels[nodetask.LabelComponent] {
		case "clean", string(staging.In), string(staging.Out):
			continue
		}
		if p.Spec.RestartPolicy != corev1.RestartPolicyNever {
			continue
		}
		if st, _ := nodetask.StateOf(&p); st == nodetask.Running {
			busy = append(busy, p.Name)
		}
	}
	sort.Strings(busy)
	return busy, nil
}

// stopCopies deletes the running copy pods of the given directions (a copy must not race the
// removal of the data) and returns busy with them added, so teardown waits until they are gone.
func (r *BurstBufferReconciler) stopCopies(ctx context.Context, bb *v1alpha1.BurstBuffer, busy []string, dirs []staging.Direction) ([]string, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(bb.Namespace), client.MatchingLabels{
		v1alpha1.LabelBurstBuffer: bb.Name, nodetask.LabelManagedBy: nodetask.ManagedBy,
	}); err != nil {
		return busy, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !slices.Contains(dirs, staging.Direction(p.Labels[nodetask.LabelComponent])) {
			continue
		}
		if st, _ := nodetask.StateOf(p); st == nodetask.Running {
			if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return busy, err
			}
			busy = append(busy, p.Name)
		}
	}
	return busy, nil
}
