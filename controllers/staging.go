package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/claim"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/staging"
	"github.com/beeburst/beeburst/internal/workload"
)

// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch

// stageOutcome is what one visit of a copy found.
type stageOutcome int

const (
	stageWaiting stageOutcome = iota
	stageDone
	stageFailed
)

// reconcileStageIn copies spec.stageIn into the burst buffer once it is provisioned and
// validated, before Ready: the workload's gate lifts only after its input is there. A failed
// copy keeps the gate closed and says why; deleting the failed pod (or correcting the spec)
// retries it.
func (r *BurstBufferReconciler) reconcileStageIn(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if len(bb.Spec.StageIn) == 0 || conditionIs(bb, v1alpha1.ConditionStagedIn, metav1.ConditionTrue) {
		return ctrl.Result{}, true, nil
	}
	out, res, err := r.stage(ctx, s, staging.In)
	if err != nil || out != stageDone {
		return res, false, err
	}
	return ctrl.Result{}, true, nil
}

// reconcileStageOut copies spec.stageOut out of the burst buffer at teardown, after the
// workload's pods have ended. It is done when every node's copy succeeded; until then (and
// after a failure, until a human decides) nothing on the nodes is removed.
func (r *BurstBufferReconciler) reconcileStageOut(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if len(bb.Spec.StageOut) == 0 || conditionIs(bb, v1alpha1.ConditionStagedOut, metav1.ConditionTrue) {
		return ctrl.Result{}, true, nil
	}
	over, copied, err := r.stageOutGivenUp(ctx, s)
	switch {
	case err != nil:
		return ctrl.Result{}, false, err
	case over:
		skipStageOut(bb)
		return ctrl.Result{}, true, nil
	case copied:
		// Done on an earlier visit whose status write was lost: the staging claim may be
		// gone already and must not be made again under the clean pods.
		conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionTrue, v1alpha1.ReasonStaged,
			"every node's stage-out copy succeeded")
		return ctrl.Result{}, true, nil
	}
	if bb.Status.ReadyTime == nil || bb.Status.Mount == nil {
		// The gate never lifted: no workload ran on this burst buffer, so it holds no results.
		conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionTrue, v1alpha1.ReasonNothingToStage,
			"the burst buffer never became Ready, so no workload wrote to it: nothing to stage out")
		return ctrl.Result{}, true, nil
	}
	// With local, a node that is gone does not hold the others up: their copies run, and only
	// the gone node's copy (unless it succeeded before the node went) keeps stage-out from
	// being done. With beegfs every node's share of the copy reads files striped over every
	// node's targets, the gone one's too: no copy can succeed, so none starts.
	s.gone = map[string]bool{}
	for _, n := range s.nodes {
		var node corev1.Node
		if err := r.Get(ctx, client.ObjectKey{Name: n}, &node); apierrors.IsNotFound(err) {
			s.gone[n] = true
		} else if err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if len(s.gone) > 0 && sharedFS(bb) {
		gone := slices.Sorted(maps.Keys(s.gone))
		conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonNodeGone,
			fmt.Sprintf("node(s) %s gone: the BeeGFS file system stripes files over all its nodes' targets, so no copy can be trusted to succeed, and beeburst removes nothing. If the node comes back, the copies start; or set spec.teardown.hurry: true to give the data up and finish the teardown",
				strings.Join(gone, ", ")))
		return ctrl.Result{}, false, nil
	}
	out, res, err := r.stage(ctx, s, staging.Out)
	if err == nil && out == stageWaiting && conditionReason(bb, v1alpha1.ConditionStagedOut) == v1alpha1.ReasonStaging {
		nodeGone(bb)
	}
	return res, err == nil && out == stageDone, err
}

// nodeGone says, while stage-out copies, which gone nodes' data cannot be copied, and what
// hurry would give up: every node's copy not done yet, not only theirs. Once the other nodes
// are done, NodeGone: the gone nodes alone hold the teardown, and hurry gives up their data
// only.
func nodeGone(bb *v1alpha1.BurstBuffer) {
	var lost, pending []string
	for _, n := range bb.Status.StageOut.Nodes {
		switch {
		case n.Phase == v1alpha1.StageSucceeded:
		case n.Message == staging.GoneMessage:
			lost = append(lost, n.Name)
		default:
			pending = append(pending, n.Name)
		}
	}
	if len(lost) == 0 {
		return
	}
	c := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionStagedOut)
	gone := fmt.Sprintf("node(s) %s gone: the data on them cannot be staged out, and beeburst removes nothing there", strings.Join(lost, ", "))
	if len(pending) > 0 {
		conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonStaging,
			fmt.Sprintf("%s. %s; the other nodes' copies go on. spec.teardown.hurry: true would give up the stage-out of every node not done yet, %s too: wait for them first", c.Message, gone, strings.Join(pending, ", ")))
		return
	}
	conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonNodeGone,
		fmt.Sprintf("%s. %s; the other nodes' data is staged out. If the node comes back, its copy starts; or set spec.teardown.hurry: true to give up the data of %s and finish the teardown", c.Message, gone, strings.Join(lost, ", ")))
}

// skipStageOut records that spec.teardown.hurry gave stage-out up.
func skipStageOut(bb *v1alpha1.BurstBuffer) {
	if len(bb.Spec.StageOut) > 0 && !conditionIs(bb, v1alpha1.ConditionStagedOut, metav1.ConditionTrue) {
		conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonSkippedByHurry,
			"spec.teardown.hurry: stage-out skipped, the data named in spec.stageOut is removed with the burst buffer. This cannot be undone: setting hurry back to false does not start stage-out again")
	}
}

// stageOutGivenUp says whether hurry gave stage-out up on an earlier visit (over): its
// condition says so, or a clean pod exists while some node's copy did not succeed (the
// condition's write may have been lost). It is for good: the clean pods remove the data and
// the staging claim is deleted, so a copy started after hurry is set back to false would
// copy part of the data, or fail against a claim that is going. copied: clean pods exist
// after every node's copy succeeded, a stage-out done whose status write was lost.
func (r *BurstBufferReconciler) stageOutGivenUp(ctx context.Context, s *scope) (over, copied bool, err error) {
	if conditionReason(s.bb, v1alpha1.ConditionStagedOut) == v1alpha1.ReasonSkippedByHurry {
		return true, false, nil
	}
	cleaning := false
	for i := range s.nodes {
		pod, err := r.cleanPod(ctx, s.bb, i)
		if err != nil {
			return false, false, err
		}
		cleaning = cleaning || pod != nil
	}
	if !cleaning {
		return false, false, nil
	}
	for i, node := range s.nodes {
		var cur corev1.Pod
		err := r.Get(ctx, client.ObjectKeyFromObject(staging.Pod(s.bb, staging.Out, i, node, r.AgentImage)), &cur)
		if apierrors.IsNotFound(err) {
			return true, false, nil
		}
		if err != nil {
			return false, false, err
		}
		if st, _ := nodetask.StateOf(&cur); st != nodetask.Succeeded {
			return true, false, nil
		}
	}
	return false, true, nil
}

// stage runs one direction's copy pods and writes its condition and status: once the claims
// and Secrets it names exist, the copy pods (one per node), a bound on pods the scheduler
// cannot place, then what the pods report.
func (r *BurstBufferReconciler) stage(ctx context.Context, s *scope, d staging.Direction) (stageOutcome, ctrl.Result, error) {
	out, res, err := r.runCopies(ctx, s, d)
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		// Deleting the namespace deleted the burst buffer too; the copies cannot be made in
		// it, and no retry changes that. Say so, keep the data, name the way out.
		keep := ""
		if d == staging.Out {
			keep = " The data stays on the nodes; set spec.teardown.hurry: true to give it up and let the namespace go"
		}
		conditions.Set(s.bb, d.Condition(), metav1.ConditionFalse, v1alpha1.ReasonNamespaceDeleting,
			fmt.Sprintf("namespace %s is being deleted, and Kubernetes creates no pods in it: the %s copies cannot run.%s",
				s.bb.Namespace, d.Name(), keep))
		return stageFailed, ctrl.Result{}, nil
	}
	return out, res, err
}

// runCopies is stage's work: sources, staging claim, pods, status.
func (r *BurstBufferReconciler) runCopies(ctx context.Context, s *scope, d staging.Direction) (stageOutcome, ctrl.Result, error) {
	bb := s.bb
	claims, res, ok, err := r.copySources(ctx, bb, d)
	if err != nil || !ok {
		return stageWaiting, res, err
	}
	if ok, err := r.ensureStagingClaim(ctx, s, d); err != nil || !ok {
		return stageWaiting, ctrl.Result{}, err
	}
	parallel := staging.Parallel(d, claims)
	if err := r.deleteStaleStagePods(ctx, bb, d); err != nil {
		return stageWaiting, ctrl.Result{}, err
	}
	pods, anyRunning, err := r.copyPods(ctx, s, d, parallel)
	if err != nil {
		return stageWaiting, ctrl.Result{}, err
	}

	// A copy pod the scheduler cannot place waits for as long as the cause lasts (a node
	// cordoned or full, a claim it cannot reach): past a bound that is a failure the user
	// must see, naming the node; the data stays where it is. It recovers by itself when
	// the pod is scheduled.
	never, cannot, rest, err := r.copiesBlocked(ctx, s, pods)
	if err != nil {
		return stageWaiting, ctrl.Result{}, err
	}
	stuck, recheck := r.unschedulable(rest)
	stuck = append(never, stuck...)
	recheck = minPositive(recheck, s.podRecheck) // stage-out runs outside the steps' list
	if len(cannot) > 0 {
		keep := ""
		if d == staging.Out {
			keep = " The data stays on the nodes until then, or until you set spec.teardown.hurry: true to give it up."
		}
		conditions.Set(bb, d.Condition(), metav1.ConditionFalse, v1alpha1.ReasonStageFailed,
			fmt.Sprintf("%s copy pod(s) cannot start: %s. The copy starts by itself once that is fixed.%s", d.Name(), strings.Join(cannot, "; "), keep))
		return stageFailed, ctrl.Result{}, nil
	}
	if len(stuck) > 0 {
		keep := ""
		if d == staging.Out {
			keep = " The data stays on the nodes until then, or until you set spec.teardown.hurry: true to give it up."
		}
		conditions.Set(bb, d.Condition(), metav1.ConditionFalse, v1alpha1.ReasonCopyUnschedulable,
			fmt.Sprintf("%s copy pod(s) cannot be scheduled: %s. Make the node(s) schedulable for them (uncordon, free resources, or let the claim be reached from them); the copy starts as soon as the scheduler places them.%s",
				d.Name(), strings.Join(stuck, "; "), keep))
		return stageFailed, ctrl.Result{RequeueAfter: recheck}, nil
	}
	out := publishCopy(s, d, staging.Summarise(pods, parallel, r.Now()))
	if out == stageWaiting && anyRunning {
		// Pod events do not tell progress: look at the copies' logs again shortly.
		recheck = minPositive(recheck, progressInterval)
	}
	if out != stageWaiting {
		recheck = 0
	}
	return out, ctrl.Result{RequeueAfter: recheck}, nil
}

// copySources checks that the claims and Secrets a direction's copy names exist before any
// copy pod is made (a pod with a missing claim or Secret would hang, not fail), and returns
// the claims; false, with the condition saying which is missing, when one is not there.
func (r *BurstBufferReconciler) copySources(ctx context.Context, bb *v1alpha1.BurstBuffer, d staging.Direction) ([]corev1.PersistentVolumeClaim, ctrl.Result, bool, error) {
	cond := d.Condition()
	// What a message about a missing claim or Secret adds for stage-out: the data is safe.
	keptUntil := ""
	if d == staging.Out {
		keptUntil = ". The data stays on the nodes until then, or until you set spec.teardown.hurry: true to give it up"
	}
	specs := staging.Specs(bb, d)
	var claims []corev1.PersistentVolumeClaim
	for _, name := range staging.Claims(specs) {
		var pvc corev1.PersistentVolumeClaim
		err := r.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: name}, &pvc)
		if apierrors.IsNotFound(err) {
			// Stage-in waits (the claim may be created right after the BurstBuffer); for stage-out
			// this needs a human (summarise makes it StageOutFailed). Either way the claim's
			// watch resumes the copy as soon as it exists.
			conditions.Set(bb, cond, metav1.ConditionFalse, v1alpha1.ReasonClaimNotFound,
				fmt.Sprintf("PersistentVolumeClaim %s/%s does not exist: create it (or correct the claim name in spec.%s); the copy starts when it exists%s",
					bb.Namespace, name, d.Field(), keptUntil))
			return nil, ctrl.Result{}, false, nil
		}
		if err != nil {
			return nil, ctrl.Result{}, false, err
		}
		claims = append(claims, pvc)
	}
	for _, name := range staging.Secrets(specs) {
		// Only whether it exists: the metadata, read past the cache (which holds only the
		// operator's own Secrets), never the keys.
		var sec metav1.PartialObjectMetadata
		sec.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: bb.Namespace, Name: name}, &sec)
		if apierrors.IsNotFound(err) {
			// As a missing claim; Secrets are not watched (not cached), so look again soon.
			conditions.Set(bb, cond, metav1.ConditionFalse, v1alpha1.ReasonSecretNotFound,
				fmt.Sprintf("Secret %s/%s (s3.credentialsSecret) does not exist: create it with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or correct spec.%s); the copy starts when it exists%s",
					bb.Namespace, name, d.Field(), keptUntil))
			return nil, ctrl.Result{RequeueAfter: secretRecheck}, false, nil
		}
		if err != nil {
			return nil, ctrl.Result{}, false, err
		}
	}
	return claims, ctrl.Result{}, true, nil
}

// copyPods makes and reads the copy pods, one per node: all at once when the copies do not
// share a source (parallel), else each after the one before it succeeded. anyRunning says
// whether a copy is under way (its progress comes from its log).
func (r *BurstBufferReconciler) copyPods(ctx context.Context, s *scope, d staging.Direction, parallel bool) ([]staging.NodePod, bool, error) {
	var pods []staging.NodePod
	previousDone, anyRunning := true, false
	for i, node := range s.nodes {
		want := staging.Pod(s.bb, d, i, node, r.AgentImage)
		np := staging.NodePod{Node: node, Gone: s.gone[node]}
		var cur corev1.Pod
		err := r.Get(ctx, client.ObjectKeyFromObject(want), &cur)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, false, err
		}
		if st, _ := nodetask.StateOf(&cur); np.Gone && (err != nil || st != nodetask.Succeeded) {
			// Only a copy that succeeded before the node went counts; the others wait for it
			// to come back, and the nodes after it do not wait for it.
			pods = append(pods, np)
			continue
		}
		switch {
		case apierrors.IsNotFound(err):
			if parallel || previousDone {
				if err := r.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
					return nil, false, err
				}
				np.Pod = want
			}
		default:
			np.Pod = &cur
		}
		if np.Pod == nil {
			previousDone = false
		} else if st, _ := nodetask.StateOf(np.Pod); st != nodetask.Succeeded {
			previousDone = false
			if st == nodetask.Running && np.Pod.Status.Phase == corev1.PodRunning {
				np.Progress = r.copyProgress(ctx, np.Pod)
				anyRunning = true
			}
		}
		pods = append(pods, np)
	}
	return pods, anyRunning, nil
}

// publishCopy writes a direction's copy status and its condition: done, failed (with how to
// retry), or under way.
func publishCopy(s *scope, d staging.Direction, st v1alpha1.StageStatus) stageOutcome {
	bb, cond := s.bb, d.Condition()
	for i := range st.Nodes {
		st.Nodes[i].Message = staging.Readable(bb, d, st.Nodes[i].Message)
	}
	if d == staging.In {
		bb.Status.StageIn = &st
	} else {
		bb.Status.StageOut = &st
	}
	msg := staging.Message(d, st)
	switch st.Phase {
	case v1alpha1.StageSucceeded:
		conditions.Set(bb, cond, metav1.ConditionTrue, v1alpha1.ReasonStaged, msg)
		return stageDone
	case v1alpha1.StageFailed:
		var failed []string
		for _, n := range st.Nodes {
			if n.Phase == v1alpha1.StageFailed {
				failed = append(failed, n.Pod)
			}
		}
		keep, giveUp := "", ""
		if d == staging.Out {
			keep, giveUp = " The data stays on the nodes.", "; or set spec.teardown.hurry: true to give the data up"
		}
		conditions.Set(bb, cond, metav1.ConditionFalse, v1alpha1.ReasonStageFailed,
			fmt.Sprintf("%s.%s To retry, fix the cause and delete the failed pod(s) %s (or correct spec.%s)%s",
				msg, keep, strings.Join(failed, ", "), d.Field(), giveUp))
		return stageFailed
	}
	conditions.Set(bb, cond, metav1.ConditionFalse, v1alpha1.ReasonStaging, msg)
	return stageWaiting
}

// waitForWorkload is deletion's wait for the workload's pods that left the gate and have not
// ended, with or without stage-out: the gate's way mounts the node directory by a host path,
// which the clean pods remove (local) or unmount (beegfs) under a pod that still runs, and
// stage-out must not copy results still being written. Pods still gated never ran, and their
// gates are held first (holdGates); without a stage-out to come, neither do pods that no node
// took or whose image cannot be pulled (workload.InUse): they never touched the files, and
// would hold the deletion for good. The pods are the workload's as workload.Counts says:
// those the selector matches, and those this burst buffer released. true once none is left.
func (r *BurstBufferReconciler) waitForWorkload(ctx context.Context, s *scope, w *teardownWait) (bool, error) {
	bb := s.bb
	sel, err := workload.Selector(bb)
	if err != nil {
		// spec.workload.selector edited into one that does not parse: every pod labelled for
		// this burst buffer, which holds every pod the selector ever chose.
		if sel, err = workload.Labelled(bb); err != nil {
			return false, err
		}
	}
	pods, held, err := r.holdGates(ctx, bb, w)
	if err != nil || !held {
		return false, err
	}
	copying := len(bb.Spec.StageOut) > 0 && !bb.Spec.Teardown.Hurry && conditionReason(bb, v1alpha1.ConditionStagedOut) != v1alpha1.ReasonSkippedByHurry &&
		!conditionIs(bb, v1alpha1.ConditionStagedOut, metav1.ConditionTrue)
	deletedFor, grace := r.Now().Sub(bb.DeletionTimestamp.Time), r.schedulerGrace()
	var ran []*corev1.Pod
	var unplaced []string
	for i := range pods {
		p := &pods[i]
		switch {
		case !workload.Counts(p, sel, bb.UID) || !workload.InUse(p, copying, deletedFor, grace):
		case copying || workload.Started(p):
			ran = append(ran, p)
		default:
			unplaced = append(unplaced, p.Name)
		}
	}
	if len(unplaced) > 0 {
		// Nothing else may wake this visit when the scheduler never looks at them.
		w.waiting = append(w.waiting, fmt.Sprintf("workload pod(s) %s, whose gate was lifted just before the deletion, wait for the scheduler (up to %s after the deletion)",
			strings.Join(limit(unplaced, 8), ", "), grace))
		w.wake(grace - deletedFor)
	}
	running, stopping, err := r.podsInUse(ctx, bb, ran, w)
	n := len(running) + len(stopping) + len(unplaced)
	if err != nil || n == 0 {
		return err == nil, err
	}
	if len(running) > 0 {
		w.waiting = append(w.waiting, fmt.Sprintf("workload pod(s) %s still run", strings.Join(limit(running, 8), ", ")))
	}
	if copying {
		conditions.Set(bb, v1alpha1.ConditionStagedOut, metav1.ConditionFalse, v1alpha1.ReasonWaitingForWorkload,
			fmt.Sprintf("waiting for %d workload pod(s) to end before staging out: %s", n, inUseText(running, stopping)))
	}
	return false, nil
}

// schedulerGrace is how long after the deletion a pod whose gate was just lifted counts as
// about to start (workload.SchedulerDecides unless set).
func (r *BurstBufferReconciler) schedulerGrace() time.Duration {
	if r.SchedulerGrace > 0 {
		return r.SchedulerGrace
	}
	return workload.SchedulerDecides
}

// holdGates lists the pods labelled for bb past the cache and holds the gate of every one
// that still has it (workload.Hold), before deletion judges, from that same list, which pods
// use the burst buffer. The workload controller may lift a gate from a burst buffer it read
// before the deletion: it lists the pods, then reads the burst buffer past the cache, so a pod
// it releases existed before the deletion, and this list, read after the deletion past any
// cache (another manager's too, during a leader hand-over), has it. Both write with the pod's
// resourceVersion: a release that landed before the list shows in it (the pod counts, as
// workload.InUse says); one after it conflicts with the hold, or the hold conflicts with it -
// false, and the next visit looks again. Every pod labelled for bb is held, whatever the
// selector says now: a selector narrowed meanwhile must not leave a pod the cached burst
// buffer still selects free to leave the gate. A hold refused for good (an admission policy on
// pods) is reported as stuck; hurry goes on without it.
func (r *BurstBufferReconciler) holdGates(ctx context.Context, bb *v1alpha1.BurstBuffer, w *teardownWait) ([]corev1.Pod, bool, error) {
	sel, err := workload.Labelled(bb)
	if err != nil {
		return nil, false, err
	}
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(bb.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, false, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !workload.IsGated(pod) || workload.IsHeld(pod, bb.UID) || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		held := workload.Hold(pod, bb.UID)
		err := r.Patch(ctx, held, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{}))
		switch {
		case err == nil:
			*pod = *held
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			w.waiting = append(w.waiting, fmt.Sprintf("workload pod %s changed while its gate was being held; looking again", pod.Name))
			w.wake(time.Second)
			return nil, false, nil
		case !(apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)):
			return nil, false, err // transient: retried with backoff
		case bb.Spec.Teardown.Hurry:
			logf.FromContext(ctx).Info("spec.teardown.hurry: going on without holding a workload pod's gate", "pod", pod.Name, "error", err.Error())
		default:
			w.stuck = append(w.stuck, fmt.Sprintf("the gate of workload pod %s could not be held (%v): delete the pod, allow the operator to annotate it, or set spec.teardown.hurry: true to go on without it",
				pod.Name, err))
			w.wake(10 * time.Second)
			return nil, false, nil
		}
	}
	return pods.Items, true, nil
}

// burstBuffersOfClaim maps a claim event to the burst buffers in its namespace that stage
// from or to it (a missing claim that appears starts the waiting copy).
func (r *BurstBufferReconciler) burstBuffersOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	var list v1alpha1.BurstBufferList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		bb := &list.Items[i]
		// A claim of the name of a burst buffer's own (ClaimConflict until it goes).
		if o.GetName() == claim.Name(bb, claim.Workload) || o.GetName() == claim.Name(bb, claim.Staging) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(bb)})
			continue
		}
		for _, d := range []staging.Direction{staging.In, staging.Out} {
			if slices.Contains(staging.Claims(staging.Specs(bb, d)), o.GetName()) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(bb)})
				break
			}
		}
	}
	return reqs
}
