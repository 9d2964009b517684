package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/speccheck"
)

// The operator's own admission: what the API server cannot refuse. The CRD's rules refuse
// every bad value they can see at `kubectl apply`; this file handles the rest, each failing
// only its own burst buffer, with a condition that names the field:
//
//   - an object the manager cannot decode at all (refuseUndecodable, before anything else);
//   - a stored value the CRD's rules would refuse today but did not when it was written, the
//     operator's setting of allowed storage roots, and label selectors (reconcileAdmission,
//     the first phase: before nodes are chosen and before any pod exists);
//   - capacityPerNode against the space free on each node: as the engine found it when it
//     prepared the node (reconcileFreeSpace, before anything is measured or reused), and as
//     the stage-2 device probes found it (reconcileComponentLimits), for an engine that
//     does not say.

// FlagAllowedStorageRoots is the manager's flag that sets BurstBufferReconciler.StorageRoots
// (Helm value storage.allowedRoots); messages name it so that a user knows whom to ask.
const FlagAllowedStorageRoots = "--allowed-storage-roots"

// refuseUndecodable handles a BurstBuffer whose spec or status the manager could not decode
// (v1alpha1.BurstBuffer.UnmarshalJSON): its spec is empty in memory, so nothing may be done
// on its behalf - no finalizer, no node task, no teardown. It gets Ready=False with reason
// InvalidSpec naming the field (when its status can be written) and a Warning event; the
// next change to the object brings the next visit, so a fix is picked up at once.
func (r *BurstBufferReconciler) refuseUndecodable(ctx context.Context, bb *v1alpha1.BurstBuffer) error {
	msg := fmt.Sprintf("the operator cannot decode this BurstBuffer (%s); fix the field (kubectl edit) or delete the object. Nothing is created or removed on its behalf until then", bb.Undecodable())
	if len(bb.Finalizers) > 0 {
		msg += "; its finalizer stays: if it ever ran, its data may remain on its nodes"
	}
	logf.FromContext(ctx).Info("refusing an undecodable BurstBuffer", "reason", v1alpha1.ReasonInvalidSpec, "problem", bb.Undecodable())
	before := bb.DeepCopy()
	if !bb.StatusUndecodable() {
		// The status decoded: write the verdict into it. (A status that did not decode is
		// left alone: a patch computed from an empty one would rewrite it on every visit.)
		conditions.Set(bb, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, msg)
		bb.Status.Phase = v1alpha1.PhaseFailed
		setKstatusConditions(bb)
		if err := r.Status().Patch(ctx, bb, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			logf.FromContext(ctx).Error(err, "cannot write the status of an undecodable BurstBuffer")
		}
		r.emitTransitions(before, bb)
	} else if r.Recorder != nil {
		r.Recorder.Eventf(bb, nil, corev1.EventTypeWarning, v1alpha1.ReasonInvalidSpec, v1alpha1.ConditionReady, "%s", msg)
	}
	return reconcile.TerminalError(fmt.Errorf("undecodable BurstBuffer: %s", bb.Undecodable()))
}

// reconcileAdmission is the first phase: it refuses a spec the operator cannot use before
// any node is chosen and before any pod exists. Once a burst buffer has nodes it was
// admitted, and stays so (a later change of the operator's settings must not strand a
// running job or its data).
func (r *BurstBufferReconciler) reconcileAdmission(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if len(bb.Status.Nodes) > 0 {
		return ctrl.Result{}, true, nil
	}
	if errs := speccheck.Spec(bb); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec,
			strings.Join(msgs, "; ")+". Nothing was created on any node: fix the field (kubectl edit) or create a new BurstBuffer")
		return ctrl.Result{}, false, reconcile.TerminalError(errs.ToAggregate())
	}
	if p := bb.Spec.Storage.Path; !r.StorageRoots.Allow(p) {
		conditions.Set(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse, v1alpha1.ReasonStoragePathNotAllowed,
			fmt.Sprintf("spec.storage.path %s is not below a root the operator allows (%s=%s; Helm value storage.allowedRoots). Nothing was created on any node: create a new BurstBuffer with a path below one of them, or ask the cluster administrator to allow this one",
				p, FlagAllowedStorageRoots, r.StorageRoots))
		return ctrl.Result{}, false, reconcile.TerminalError(fmt.Errorf("spec.storage.path %s is not below an allowed root", p))
	}
	return ctrl.Result{}, true, nil
}

// reconcileFreeSpace refuses a spec.storage.capacityPerNode that does not fit the space the
// engine found free when it prepared the nodes (engine.Result.FreeBytes), as soon as they
// are prepared: nothing is measured for a burst buffer that cannot hold what it was asked
// to, a validation reused from another burst buffer, whose nodes had more space then, does
// not make it Ready, and neither does validation.profile none. An engine that does not say
// leaves it to stage 2. Only before validation starts and before the burst buffer was first
// Ready: a prepare pod made again later (deleted by hand) finds the space its own probes or
// its job use, and must not fail a burst buffer in use. Without a capacity asked for and
// without validation (profile none: no device probe publishes it), status.capacity is the
// space found free.
func (r *BurstBufferReconciler) reconcileFreeSpace(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if len(s.preparedFree) == 0 || bb.Status.ValidationStartTime != nil || bb.Status.ReadyTime != nil {
		return ctrl.Result{}, true, nil
	}
	when := "when its directory was made"
	if bb.Spec.Engine == v1alpha1.EngineBeeGFS {
		when = "when its BeeGFS module was checked"
	}
	msg := capacityShortfall(bb, s.nodes, s.preparedFree, when)
	if msg == "" {
		if bb.Spec.Storage.CapacityPerNode == nil && bb.Spec.Validation.Profile == v1alpha1.ProfileNone {
			if c := preparedCapacity(s); c != nil {
				bb.Status.Capacity = c
			}
		}
		return ctrl.Result{}, true, nil
	}
	conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonInsufficientCapacity, msg)
	if err := r.stopMeasuringPods(ctx, bb); err != nil {
		return ctrl.Result{}, false, err
	}
	// A place it took in a node's lock queue goes to the next burst buffer.
	return ctrl.Result{}, false, r.releaseIfIdle(ctx, s, true)
}

// capacityShortfall compares the space found free on each node (free, by node, found as
// source says; a node missing from it is unknown) with spec.storage.capacityPerNode and
// returns, when some node has less or none at all, a message naming every such node; ""
// when the capacity fits. A node with no space free is refused whether or not a capacity
// was asked for: the job could not write a byte there.
func capacityShortfall(bb *v1alpha1.BurstBuffer, nodes []string, free map[string]int64, source string) string {
	want := bb.Spec.Storage.CapacityPerNode
	var short []string
	full := false
	smallest := int64(-1)
	for _, n := range nodes {
		f, known := free[n]
		switch {
		case !known:
		case f <= 0:
			full = true
			short = append(short, fmt.Sprintf("node %s has no space free", n))
		default:
			if smallest < 0 || f < smallest {
				smallest = f
			}
			if want != nil && f < want.Value() {
				short = append(short, fmt.Sprintf("node %s has %s free", n, mebibytes(f)))
			}
		}
	}
	if len(short) == 0 {
		return ""
	}
	sort.Strings(short)
	where := fmt.Sprintf("%s at spec.storage.path %s (%s)", strings.Join(short, ", "), bb.Spec.Storage.Path, source)
	switch {
	case want == nil:
		return fmt.Sprintf("no space to write: %s. Create a new BurstBuffer on nodes with free space, or once space was freed there", where)
	case full || smallest < 0:
		return fmt.Sprintf("spec.storage.capacityPerNode %s does not fit: %s. Create a new BurstBuffer on nodes with more free space, or once space was freed there", want.String(), where)
	}
	return fmt.Sprintf("spec.storage.capacityPerNode %s does not fit: %s. Create a new BurstBuffer with a capacityPerNode of at most %s, or on nodes with more free space",
		want.String(), where, mebibytes(smallest))
}

// mebibytes writes a byte count in whole MiB, as status.capacity does ("3891Mi").
func mebibytes(n int64) string {
	return resource.NewQuantity(n&^(1<<20-1), resource.BinarySI).String()
}

// refusedBySpec says whether the burst buffer was refused by the checks of this file: a
// failure that only a new spec (or the administrator) can fix, whatever else the conditions
// say - the phase is Failed even when no node was chosen.
func refusedBySpec(bb *v1alpha1.BurstBuffer) bool {
	switch {
	case conditionIs(bb, v1alpha1.ConditionProvisioned, metav1.ConditionFalse):
		r := conditionReason(bb, v1alpha1.ConditionProvisioned)
		return r == v1alpha1.ReasonInvalidSpec || r == v1alpha1.ReasonStoragePathNotAllowed
	case conditionIs(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse):
		return conditionReason(bb, v1alpha1.ConditionComponentsMeasured) == v1alpha1.ReasonInsufficientCapacity
	}
	return false
}
