package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/claim"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/placement"
	"github.com/beeburst/beeburst/internal/workload"
)

// reconcileNodes picks the nodes once and records them in status.nodes; later visits keep
// them (spec.nodes is immutable, and data lives on those nodes).
func (r *BurstBufferReconciler) reconcileNodes(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if len(bb.Status.Nodes) > 0 {
		// Its own nodes only, read one by one: a visit must not cost more for every node
		// of the cluster (a list copies each one out of the cache).
		for _, name := range s.nodes {
			var n corev1.Node
			if err := r.Get(ctx, client.ObjectKey{Name: name}, &n); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return ctrl.Result{}, false, err
			}
			s.nodeObjs = append(s.nodeObjs, n)
		}
		return ctrl.Result{}, true, nil
	}
	var all corev1.NodeList
	if err := r.List(ctx, &all); err != nil {
		return ctrl.Result{}, false, err
	}

	sel := labels.Everything()
	if bb.Spec.Nodes.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(bb.Spec.Nodes.Selector); err != nil {
			conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound,
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
			conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonNodesNotFound,
				fmt.Sprintf("spec.nodes.fromWorkload: spec.workload.selector is invalid: %v", err))
			return ctrl.Result{}, false, nil
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(bb.Namespace), ofBurstBuffer(bb), client.MatchingLabelsSelector{Selector: wsel}); err != nil {
			return ctrl.Result{}, false, err
		}
		req.Pods = pods.Items
		req.Workload = fmt.Sprintf("pods in namespace %s labelled %s=%s", bb.Namespace, v1alpha1.LabelBurstBuffer, bb.Name)
		if bb.Spec.Workload.Selector != nil {
			req.Workload += " and matching spec.workload.selector"
		}
	}
	choice, err := r.chooseNodes(ctx, s, req) // target.go: spec.target sizes the count
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if choice.Reason != "" {
		// Watches on nodes and on workload pods bring the next visit.
		conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, choice.Reason, choice.Message)
		return ctrl.Result{}, false, nil
	}
	s.nodeObjs = choice.Nodes
	metaServers := beegfs.MetadataServers(bb) // before status.nodes records them
	for i, n := range s.nodeObjs {
		s.nodes = append(s.nodes, n.Name)
		bb.Status.Nodes = append(bb.Status.Nodes, v1alpha1.NodeStatus{
			Name: n.Name, Roles: roles(bb, i, metaServers), Path: nodetask.DataDir(bb),
		})
	}
	if c := bb.Spec.Storage.CapacityPerNode; c != nil {
		total := resource.NewQuantity(c.Value()*int64(len(s.nodes)), resource.BinarySI)
		bb.Status.Capacity = total
	}
	bb.Status.NodeSelection = choice.Message
	conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionUnknown, v1alpha1.ReasonNodesSelected,
		choice.Message+"; preparing them next")
	// Nothing is made for the nodes before the choice is saved (claim.go, reconcileEngine):
	// this visit's status patch brings the next visit, which makes it. Were the patch lost,
	// the next visit would choose again - maybe other nodes - and find pods made for this
	// choice by their names (a prepare pod of node 0 that succeeded on another node), with
	// data left on that one.
	s.nodesUnsaved = true
	return ctrl.Result{}, true, nil
}

// roles follows BeeOND's layout: management on the first node, metadata on the first
// metaServers nodes (beegfs.MetadataServers: the layout's, or spec.target's decision), storage
// and client on all. The local engine has no services.
func roles(bb *v1alpha1.BurstBuffer, i, metaServers int) []string {
	if bb.Spec.Engine == v1alpha1.EngineLocal {
		return []string{v1alpha1.RoleClient, v1alpha1.RoleStorage}
	}
	var r []string
	if i == 0 {
		r = append(r, v1alpha1.RoleManagement)
	}
	if i < metaServers {
		r = append(r, v1alpha1.RoleMetadata)
	}
	r = append(r, v1alpha1.RoleStorage, v1alpha1.RoleClient)
	sort.Strings(r)
	return r
}

// reconcileEngine lets the engine create its part on every node.
func (r *BurstBufferReconciler) reconcileEngine(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if s.nodesUnsaved {
		return ctrl.Result{}, false, nil
	}
	res, err := s.engine.Provision(ctx, bb, s.nodes)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if !res.Ready {
		// A pod of the engine that cannot start says so now, not at its deadline.
		if err := r.engineBlocked(ctx, s, &res); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	s.preparedFree = res.FreeBytes
	for i := range bb.Status.Nodes {
		bb.Status.Nodes[i].Prepared = res.Prepared[bb.Status.Nodes[i].Name]
	}
	if res.Ready {
		if bb.Status.Mount != nil && res.Mount != nil {
			res.Mount.ClaimName = bb.Status.Mount.ClaimName // reconcileClaim's
		}
		bb.Status.Mount = res.Mount
		msg := res.Message
		if bb.Status.NodeSelection != "" {
			// Why these nodes stays readable in the condition after the engine's own message.
			msg += "; " + bb.Status.NodeSelection
		}
		conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionTrue, res.Reason, msg)
		return ctrl.Result{}, true, nil
	}
	// In progress or failed: the reason tells which (summarise derives Failed from failure
	// reasons such as ClientModuleMissing); watches on the engine's pods bring the next visit.
	conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, res.Reason, res.Message)
	if len(s.preparedFree) > 0 {
		// Free space known before the file system is up (the nodes prepared so far; beegfs:
		// its module checks, and the engine waits): a capacity that does not fit on a node
		// is refused now.
		if _, fits, err := r.reconcileFreeSpace(ctx, s); err != nil || !fits {
			return ctrl.Result{}, false, err
		}
	}
	return ctrl.Result{RequeueAfter: res.RequeueAfter}, false, nil
}

// reconcileDelete tears down in reverse order of creation: stop running node tasks, give
// the measuring locks back, stage out (or stop and keep everything), remove the data on the
// nodes, drop the finalizer. Every wait but the one for pods that run and use the burst buffer
// (the user's to end) is bounded (teardown.go): past the bound the status says TeardownStuck
// with the node and what to do, and spec.teardown.hurry finishes once no such pod runs.
func (r *BurstBufferReconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	bb := s.bb
	if !controllerutil.ContainsFinalizer(bb, v1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	conditions.Set(bb, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDeleting, "the burst buffer is being torn down")

	// A clean pod racing a prepare pod or a probe on the same directory could leave data
	// behind or fail the probe: stop every earlier task pod and wait until it is gone. A
	// stage-in copies from durable storage: stopping it loses nothing. A stage-out is
	// stopped only when the user gave its data up.
	var w teardownWait
	if done, err := r.releaseClaims(ctx, s, &w); err != nil || !done {
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.teardownWaiting(ctx, s, &w, "waiting for the pods that mount the burst buffer's claim to end")
	}
	if done, err := r.waitForWorkload(ctx, s, &w); err != nil || !done {
		if err != nil {
			return ctrl.Result{}, err
		}
		return r.teardownWaiting(ctx, s, &w, "waiting for the workload's pods to end")
	}
	if err := r.stopTasks(ctx, bb, &w); err != nil {
		return ctrl.Result{}, err
	}
	if len(w.waiting)+len(w.stuck) > 0 {
		return r.teardownWaiting(ctx, s, &w, "stopping the burst buffer's task pods before removing data")
	}
	// No measuring pod is left: the nodes go to the next burst buffer.
	if err := r.releaseIfIdle(ctx, s, true); err != nil {
		return ctrl.Result{}, err
	}

	if bb.Spec.Teardown.Hurry {
		skipStageOut(bb)
	} else if res, done, err := r.reconcileStageOut(ctx, s); err != nil || !done {
		return res, err
	}

	// Stage-out is over (or given up): the copies' claim goes before the data does.
	if err := r.deleteClaim(ctx, bb, claim.Staging); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.superviseClean(ctx, s, &w); err != nil {
		return ctrl.Result{}, err
	}
	done, err := s.engine.Teardown(ctx, bb, s.nodes)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !done {
		// The engine's own pods (BeeGFS clients and services) must go too, in bounded time.
		if err := r.checkStopping(ctx, bb, &w); err != nil {
			return ctrl.Result{}, err
		}
		res, err := r.teardownWaiting(ctx, s, &w, fmt.Sprintf("removing %s on %d node(s)", nodetask.DataDir(bb), len(s.nodes)))
		// Clean pods that had to run in the operator's namespace (this one is being deleted)
		// are not owned by the burst buffer, so no watch brings the next visit: look again.
		if res.RequeueAfter == 0 || res.RequeueAfter > teardownRecheck {
			res.RequeueAfter = teardownRecheck
		}
		return res, err
	}
	if err := r.stampTaskEnd(ctx, bb); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteTaskObjects(ctx, bb); err != nil {
		return ctrl.Result{}, err
	}
	logf.FromContext(ctx).Info("teardown done: removing the finalizer", "phase", bb.Status.Phase, "nodes", removals(bb))
	orig := bb.DeepCopy()
	controllerutil.RemoveFinalizer(bb, v1alpha1.Finalizer)
	if err := r.Patch(ctx, bb, client.MergeFrom(orig)); err != nil {
		return ctrl.Result{}, err
	}
	r.stale.finish(bb.UID, r.Now())
	return ctrl.Result{}, nil
}

// teardownWaiting says what deletion waits for on the Provisioned condition: TeardownStuck
// when something is past its bound, else Deleting.
func (r *BurstBufferReconciler) teardownWaiting(ctx context.Context, s *scope, w *teardownWait, what string) (ctrl.Result, error) {
	reason, parts := v1alpha1.ReasonDeleting, w.waiting
	if len(w.stuck) > 0 {
		reason, parts = v1alpha1.ReasonTeardownStuck, w.stuck
	}
	msg := what
	if len(parts) > 0 {
		msg += ": " + strings.Join(limit(parts, 6), "; ")
	}
	if c := meta.FindStatusCondition(s.bb.Status.Conditions, v1alpha1.ConditionProvisioned); c == nil || c.Reason != reason || c.Message != msg {
		logf.FromContext(ctx).Info("waiting: teardown", "phase", s.bb.Status.Phase, "reason", reason, "message", msg)
	}
	conditions.Set(s.bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, reason, msg)
	return ctrl.Result{RequeueAfter: w.requeue}, nil
}

// checkStopping bounds the wait for any of the burst buffer's pods being deleted.
func (r *BurstBufferReconciler) checkStopping(ctx context.Context, bb *v1alpha1.BurstBuffer, w *teardownWait) error {
	pods, err := r.taskPods(ctx, bb)
	if err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp.IsZero() || p.Labels[nodetask.LabelComponent] == nodetask.ComponentClean {
			continue // clean pods: superviseClean
		}
		if err := r.checkTerminating(ctx, bb, p, w); err != nil {
			return err
		}
	}
	return nil
}

func removals(bb *v1alpha1.BurstBuffer) map[string]string {
	out := map[string]string{}
	for _, n := range bb.Status.Nodes {
		out[n.Name] = string(n.Removal)
		if n.Removal == "" {
			out[n.Name] = "Removed"
		}
	}
	return out
}

// teardownRecheck is how often an unfinished teardown looks again without an event.
const teardownRecheck = 5 * time.Second
