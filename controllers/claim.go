package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/claim"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/staging"
)

// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;delete

// The workload's claim (internal/claim): created as soon as the nodes are known, so that a
// pod naming it waits with an unbound claim; its volume is created once the burst buffer is
// Ready, and the scheduler then places the waiting pods on the burst buffer's nodes. Neither
// step holds up the pipeline: a claim that cannot be made (a user's claim of that name) says
// so on ClaimBound, and the burst buffer stays usable through its scheduling gate.

// storageClass is the class of the claims and volumes.
func (r *BurstBufferReconciler) storageClass() string {
	if r.StorageClass != "" {
		return r.StorageClass
	}
	return claim.DefaultStorageClass
}

// reconcileClaim creates the workload's claim once the nodes are chosen.
func (r *BurstBufferReconciler) reconcileClaim(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if len(s.nodes) == 0 || s.nodesUnsaved {
		return ctrl.Result{}, true, nil
	}
	c, conflict, err := r.ensureClaim(ctx, bb, claim.Workload, len(s.nodes))
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if c == nil {
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimConflict, conflict)
		return ctrl.Result{}, true, nil
	}
	if bb.Status.Mount == nil {
		bb.Status.Mount = &v1alpha1.MountStatus{Path: bb.Spec.Workload.MountPath}
	}
	bb.Status.Mount.ClaimName = c.Name
	if !conditionIs(bb, v1alpha1.ConditionClaimBound, metav1.ConditionTrue) {
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimWaiting,
			fmt.Sprintf("claim %s is bound once the burst buffer is Ready; pods that mount it wait (Pending) until then, then run on its nodes: %s",
				c.Name, claim.Describe(bb)))
	}
	return ctrl.Result{}, true, nil
}

// ensureClaim creates the burst buffer's claim of purpose p, or finds it. nil, with what to
// do about it, when a claim of the name belongs to something else.
func (r *BurstBufferReconciler) ensureClaim(ctx context.Context, bb *v1alpha1.BurstBuffer, p claim.Purpose, nodes int) (*corev1.PersistentVolumeClaim, string, error) {
	want := claim.Claim(bb, p, r.storageClass(), nodes)
	var cur corev1.PersistentVolumeClaim
	err := r.Get(ctx, client.ObjectKeyFromObject(want), &cur)
	if apierrors.IsNotFound(err) {
		if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, "", err
		}
		// The cache sees the new claim on a later visit; the object created is the claim.
		return want, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if !claim.Ours(bb, &cur) {
		return nil, claim.IsNotYours(bb, &cur), nil
	}
	return &cur, "", nil
}

// reconcileVolume gives the workload's claim its volume once every stage is done (this step
// is the pipeline's last: reaching it is being Ready), and says when the claim is bound.
func (r *BurstBufferReconciler) reconcileVolume(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if !allStagesDone(bb) || len(s.nodes) == 0 {
		return ctrl.Result{}, true, nil
	}
	if bb.Status.ReadyTime == nil {
		// Ready is recorded (status.readyTime) by this visit's status write; the volume comes
		// on the visit that write brings. Stage-out reads a burst buffer without readyTime as
		// one no workload wrote to: a volume before the record, and a write of it that failed,
		// would let a workload's results be torn down unstaged.
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimWaiting,
			"the claim's volume is created once Ready is recorded")
		return ctrl.Result{}, true, nil
	}
	c, conflict, err := r.ensureClaim(ctx, bb, claim.Workload, len(s.nodes))
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if c == nil {
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimConflict, conflict)
		return ctrl.Result{}, true, nil
	}
	pv, problem, err := r.ensureVolume(ctx, s, c)
	if err != nil {
		return ctrl.Result{}, true, err
	}
	if pv == nil {
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimWaiting, problem)
		return ctrl.Result{}, true, nil
	}
	if c.Status.Phase == corev1.ClaimBound {
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionTrue, v1alpha1.ReasonClaimBound,
			fmt.Sprintf("claim %s is bound to volume %s on node(s) %s: %s", c.Name, pv.Name, strings.Join(limit(s.nodes, 8), ", "), claim.Describe(bb)))
		return ctrl.Result{}, true, nil
	}
	// The cluster's volume binder binds a pre-bound pair on its own; the claim's update
	// brings the next visit.
	conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimWaiting,
		fmt.Sprintf("claim %s: volume %s created, waiting for the cluster to bind them", c.Name, pv.Name))
	return ctrl.Result{}, true, nil
}

// ensureVolume creates the PersistentVolume of claim c, or finds it; nil, with why, when it
// cannot be built yet.
func (r *BurstBufferReconciler) ensureVolume(ctx context.Context, s *scope, c *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, string, error) {
	bb := s.bb
	var pv corev1.PersistentVolume
	name := claim.VolumeName(bb, claim.Purpose(c.Labels[nodetask.LabelComponent]))
	err := r.Get(ctx, client.ObjectKey{Name: name}, &pv)
	if err == nil {
		return &pv, "", nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, "", err
	}
	hostPath := ""
	if bb.Status.Mount != nil {
		hostPath = bb.Status.Mount.HostPath
	}
	if len(s.nodeObjs) == 0 {
		// Deletion does not choose nodes: read them (a node that is gone is left out).
		for _, name := range s.nodes {
			var n corev1.Node
			if err := r.Get(ctx, client.ObjectKey{Name: name}, &n); err == nil {
				s.nodeObjs = append(s.nodeObjs, n)
			} else if !apierrors.IsNotFound(err) {
				return nil, "", err
			}
		}
	}
	want, err := claim.Volume(bb, c, hostPath, s.nodeObjs, volumeCapacity(bb, len(s.nodes)))
	if err != nil {
		return nil, fmt.Sprintf("claim %s cannot be given a volume: %v", c.Name, err), nil
	}
	if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, "", err
	}
	return want, "", nil
}

// ensureStagingClaim gives the copies of direction d the staging claim, bound to the burst
// buffer's directory on its nodes at once; false, with the direction's condition saying why,
// when it cannot be made.
func (r *BurstBufferReconciler) ensureStagingClaim(ctx context.Context, s *scope, d staging.Direction) (bool, error) {
	c, problem, err := r.ensureClaim(ctx, s.bb, claim.Staging, len(s.nodes))
	if err == nil && c != nil {
		var pv *corev1.PersistentVolume
		pv, problem, err = r.ensureVolume(ctx, s, c)
		if err == nil && pv != nil {
			return true, nil
		}
	}
	if err != nil {
		return false, err
	}
	conditions.Set(s.bb, d.Condition(), metav1.ConditionFalse, v1alpha1.ReasonClaimConflict, fmt.Sprintf("the %s copies cannot mount the burst buffer: %s", d.Name(), problem))
	return false, nil
}

// volumeCapacity is what a pod sees through the claim: one node's share of the burst
// buffer's capacity (local), or all of it (beegfs); zero when not known.
func volumeCapacity(bb *v1alpha1.BurstBuffer, nodes int) resource.Quantity {
	c := bb.Status.Capacity
	if c == nil || c.IsZero() || nodes == 0 {
		return resource.Quantity{}
	}
	if bb.Spec.Engine == v1alpha1.EngineBeeGFS {
		return c.DeepCopy()
	}
	return *resource.NewQuantity(c.Value()/int64(nodes), resource.BinarySI)
}

// releaseClaims is deletion's first step: it waits for the pods that still mount one of the
// burst buffer's claims (a pod's files must not vanish under it), then deletes the workload's
// claim and its volume. The staging claim stays for the stage-out copies (releaseStaging).
// true once nothing else uses them.
func (r *BurstBufferReconciler) releaseClaims(ctx context.Context, s *scope, w *teardownWait) (bool, error) {
	bb := s.bb
	var pods corev1.PodList
	// Uncached: the pod cache holds the operator's own pods and labelled workload pods only.
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(bb.Namespace)); err != nil {
		return false, err
	}
	var users []*corev1.Pod // the operator's own copies come and go with the stages
	for i := range pods.Items {
		p := &pods.Items[i]
		if !isOurs(p) && (claim.Mounts(p, claim.Name(bb, claim.Workload)) || claim.Mounts(p, claim.Name(bb, claim.Staging))) {
			users = append(users, p)
		}
	}
	running, stopping, err := r.podsInUse(ctx, bb, users, w)
	if err != nil {
		return false, err
	}
	if n := len(running) + len(stopping); n > 0 {
		name := claim.Name(bb, claim.Workload)
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonClaimInUse,
			fmt.Sprintf("deletion waits for %d pod(s) that still mount claim %s; nothing is removed until they end. %s", n, name, inUseText(running, stopping)))
		if len(running) > 0 {
			w.waiting = append(w.waiting, fmt.Sprintf("%d running pod(s) still mount claim %s", len(running), name))
		}
		w.wake(teardownRecheck)
		return false, nil
	}
	if err := r.deleteClaim(ctx, bb, claim.Workload); err != nil {
		return false, err
	}
	if conditionIs(bb, v1alpha1.ConditionClaimBound, metav1.ConditionTrue) || conditionReason(bb, v1alpha1.ConditionClaimBound) == v1alpha1.ReasonClaimInUse {
		conditions.Set(bb, v1alpha1.ConditionClaimBound, metav1.ConditionFalse, v1alpha1.ReasonDeleting, "the claim and its volume are deleted with the burst buffer")
	}
	return true, nil
}

// deleteClaim deletes the burst buffer's claim of purpose p (if it is its own) and the
// volume behind it.
func (r *BurstBufferReconciler) deleteClaim(ctx context.Context, bb *v1alpha1.BurstBuffer, p claim.Purpose) error {
	var c corev1.PersistentVolumeClaim
	err := r.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: claim.Name(bb, p)}, &c)
	if err == nil && claim.Ours(bb, &c) && c.DeletionTimestamp.IsZero() {
		if err := r.Delete(ctx, &c); client.IgnoreNotFound(err) != nil {
			return err
		}
	} else if client.IgnoreNotFound(err) != nil {
		return err
	}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: claim.VolumeName(bb, p)}}
	return client.IgnoreNotFound(r.Delete(ctx, pv))
}
