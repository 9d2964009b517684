package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/measurelock"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch

// reconcileValidationGate decides whether stages 2-4 measure on this visit (s.measuring):
// not with validation.profile none, not once validation ended (validationEnded: a burst
// buffer is not re-validated); past the time budget only to read what ended (s.lastLook),
// and then cutShort publishes what was measured. It measures only while it holds the
// measuring locks of all its nodes (nodelock.go); the budget starts when it first holds
// them, and a burst buffer that holds or queues for a lock renews its place here on every
// visit. The measuring steps after it skip themselves unless s.measuring.
func (r *BurstBufferReconciler) reconcileValidationGate(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if bb.Spec.Validation.Profile == v1alpha1.ProfileNone {
		msg := "validation.profile is none: only stage-1 limits (from the hardware) are published"
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, v1alpha1.ReasonSkipped, msg)
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonSkipped, msg)
		return ctrl.Result{}, true, r.releaseIfIdle(ctx, s, true)
	}
	if validationEnded(bb) {
		// Measured once (or cut short, or a measurement failed). The locks go back once
		// the last measuring pod is gone (the end deletes those still running; their end
		// is an event).
		deleted, err := r.tidyMeasuringPods(ctx, bb)
		if err != nil || deleted > 0 {
			// The cache does not show the deletions yet; their events bring the visit that
			// releases the locks once the pods are gone.
			return ctrl.Result{}, true, err
		}
		return ctrl.Result{}, true, r.releaseIfIdle(ctx, s, true)
	}
	if held, queued, err := r.heldLeases(ctx, bb); err != nil {
		return ctrl.Result{}, false, err
	} else if len(held)+len(queued) > 0 {
		if err := r.acquireNodeLocks(ctx, s); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	if refusedBySpec(bb) {
		return ctrl.Result{}, false, nil // a node has too little space: nothing more to measure
	}
	if start := bb.Status.ValidationStartTime; start != nil && !r.Now().Before(start.Add(budget(bb))) {
		// Over budget: one last look at what ended before validation is cut short. A pod
		// that ended while nobody read it (the operator was down, or its end and the
		// budget's came together) holds figures that the cut would otherwise delete.
		s.lastLook = true
	}
	s.measuring = true
	return ctrl.Result{}, true, nil
}

// measuring runs a step of stages 2-4 only while validation measures (s.measuring, set by
// reconcileValidationGate). Each stage publishes as soon as it has figures, so a budget cut
// keeps what was measured. A step that is not done leaves the visit waiting for a pod's end
// (an event) or a clock: the budget's end, the lock queue's next look, the locks' renewal.
// A step that failed leaves nothing running: the nodes go to the next burst buffer.
func (r *BurstBufferReconciler) measuring(inner step) step {
	return func(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
		if !s.measuring {
			return ctrl.Result{}, true, nil
		}
		res, done, err := inner(ctx, s)
		if err != nil || done {
			return res, done, err
		}
		if failed := measurementFailed(s.bb); s.lastLook || failed {
			// The budget ran out, or a measurement failed and nothing after it can run:
			// what ended is published (the steps above read it), the rest is stopped, and
			// the visit goes on as if validation were done.
			s.measuring = false
			if failed {
				if c := meta.FindStatusCondition(s.bb.Status.Conditions, v1alpha1.ConditionComponentsMeasured); c != nil && conditionFailed(s.bb, c.Type) {
					// Stages 3-4 cannot run on what stage 2 did not measure.
					msg := "stages 3 and 4 were not measured: stage 2 failed (" + c.Message + ")"
					if deviceProbeRound(s.bb) > 1 || networkProbeRound(s.bb) > 1 {
						msg = "stage 2's second round failed (" + c.Message + "): the sweep stays judged against the first round's limit"
					}
					conditions.Set(s.bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, conditionReason(s.bb, v1alpha1.ConditionComponentsMeasured), msg)
				}
				err = r.endValidation(ctx, s)
			} else {
				err = r.cutShort(ctx, s)
			}
			if err != nil {
				return ctrl.Result{}, false, err
			}
			return ctrl.Result{}, true, r.releaseIfIdle(ctx, s, true)
		}
		return r.waitMeasuring(ctx, s)
	}
}

// waitMeasuring is when the next visit comes while stages 2-4 wait, with the locks given
// back when nothing of this burst buffer measures any more.
func (r *BurstBufferReconciler) waitMeasuring(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	now := r.Now()
	var wake time.Duration
	if start := s.bb.Status.ValidationStartTime; start != nil {
		// The budget is a clock: wake up when it runs out even if no pod changes.
		wake = start.Add(budget(s.bb)).Sub(now)
	}
	if w := s.locks.wait; w != nil {
		r.queued(ctx, s, w)
		wake = minPositive(wake, w.Requeue(now))
	}
	if s.locks.held {
		wake = minPositive(wake, measurelock.Duration/2) // renew the locks while measuring
	}
	if s.locks.wait != nil {
		// Still taking its locks in node order: the ones it holds stay held while it waits
		// for the next (deadlock-free, and its turn comes). Given back, they would go to the
		// next waiter, which, needing a node that is busy too, would give them back in turn,
		// a write and a visit of every waiter each time, for as long as the holder measures.
		return ctrl.Result{RequeueAfter: wake}, false, nil
	}
	return ctrl.Result{RequeueAfter: wake}, false, r.releaseIfIdle(ctx, s, false)
}

// reconcileValidationDone closes stages 2-4 once every measuring step is done: the Validated
// condition sums them up and the nodes' measuring locks go back.
func (r *BurstBufferReconciler) reconcileValidationDone(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	if !s.measuring {
		return ctrl.Result{}, true, nil
	}
	bb := s.bb
	msg := s.sweepSummary
	if bb.Spec.Validation.Profile == v1alpha1.ProfileStandard {
		msg += "; workloads as a share of stage 3: " + workloadSummary(bb.Status.Limits.Workloads)
	}
	conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonValidated, msg)
	r.recordValidationEnd(bb)
	if err := r.keepValidation(ctx, s); err != nil {
		return ctrl.Result{}, false, err
	}
	return ctrl.Result{}, true, r.releaseIfIdle(ctx, s, true)
}

// recordValidationEnd sets status.validationEndTime, once.
func (r *BurstBufferReconciler) recordValidationEnd(bb *v1alpha1.BurstBuffer) {
	if bb.Status.ValidationEndTime == nil {
		now := metav1.NewTime(r.Now())
		bb.Status.ValidationEndTime = &now
	}
}

// validationEnded: stages 2-4 measure nothing more - done, skipped, cut short by the time
// budget, or ended by a failed measurement (status.validationEndTime). Validated True alone
// counts too: a burst buffer validated by an operator from before validationEndTime.
func validationEnded(bb *v1alpha1.BurstBuffer) bool {
	return bb.Spec.Validation.Profile == v1alpha1.ProfileNone || bb.Status.ValidationEndTime != nil ||
		conditionIs(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue)
}

// validationEndedBy says how validation ended, for the verdicts that waited for it: the
// stage condition that failed, else the Validated condition.
func validationEndedBy(bb *v1alpha1.BurstBuffer) string {
	for _, t := range []string{v1alpha1.ConditionComponentsMeasured, v1alpha1.ConditionValidated} {
		if c := meta.FindStatusCondition(bb.Status.Conditions, t); c != nil && (c.Status != metav1.ConditionTrue || t == v1alpha1.ConditionValidated) {
			return fmt.Sprintf("%s: %s", c.Reason, c.Message)
		}
	}
	return "validation ended"
}

// measurementFailed: a stage-2, 3 or 4 measurement failed (a Degraded reason on
// ComponentsMeasured or Validated). Nothing after it can run, so validation ends there
// rather than at the time budget. A spec the nodes refuse (InsufficientCapacity) is not
// one: it waits for the spec to change (refusedBySpec).
func measurementFailed(bb *v1alpha1.BurstBuffer) bool {
	return falseWithKind(bb, v1alpha1.ConditionComponentsMeasured, v1alpha1.ReasonKindDegraded) ||
		falseWithKind(bb, v1alpha1.ConditionValidated, v1alpha1.ReasonKindDegraded)
}

// queued says in the status that the burst buffer waits for a node, on the first stage
// condition that is not done - unless that stage already failed.
func (r *BurstBufferReconciler) queued(ctx context.Context, s *scope, w *measurelock.Wait) {
	typ := v1alpha1.ConditionComponentsMeasured
	if conditionIs(s.bb, typ, metav1.ConditionTrue) {
		typ = v1alpha1.ConditionValidated
	}
	if v1alpha1.KindOf(conditionReason(s.bb, typ)) != v1alpha1.ReasonKindProgress {
		return
	}
	msg := w.Message()
	if c := meta.FindStatusCondition(s.bb.Status.Conditions, typ); c == nil || c.Reason != v1alpha1.ReasonQueuedForNode || c.Message != msg {
		logf.FromContext(ctx).Info("waiting: queued for a node's measuring lock", "phase", s.bb.Status.Phase,
			"reason", v1alpha1.ReasonQueuedForNode, "node", w.Node, "holder", w.Holder, "ahead", w.Ahead)
	}
	conditions.Set(s.bb, typ, metav1.ConditionFalse, v1alpha1.ReasonQueuedForNode, msg)
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

func budget(bb *v1alpha1.BurstBuffer) time.Duration {
	if b, err := bb.Spec.Validation.TimeBudget.Parse(); err == nil && b > 0 {
		return b
	}
	return 10 * time.Minute
}

// cutShort ends validation over budget: what was measured stays published, the conditions
// say the rest was not, and the burst buffer can still become Ready - unless a stage failed:
// a failure is not replaced (the burst buffer stays Degraded with its reason), and the pods
// that ended stay too (tidyMeasuringPods keeps the failed ones, which say what went wrong).
func (r *BurstBufferReconciler) cutShort(ctx context.Context, s *scope) error {
	bb := s.bb
	msg := fmt.Sprintf("validation.timeBudget %s ran out: what was measured is published, the rest was not measured", budget(bb))
	if s.sweepSummary != "" {
		msg += "; " + s.sweepSummary
	}
	if conditionReason(bb, v1alpha1.ConditionComponentsMeasured) == v1alpha1.ReasonRemeasuring {
		pods, err := r.taskPods(ctx, bb)
		if err != nil {
			return err
		}
		if what := unsettleSecondRound(bb.Status.Limits.Components, pods.Items); what != "" {
			msg += fmt.Sprintf("; the %s' second round was stopped before it ended: their first round's figures stand", what)
		}
	}
	if !conditionIs(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue) && !conditionFailed(bb, v1alpha1.ConditionComponentsMeasured) {
		conditions.Set(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, v1alpha1.ReasonCutShort, msg)
	}
	if !conditionFailed(bb, v1alpha1.ConditionValidated) {
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonCutShort, msg)
	}
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings, map[string]bool{v1alpha1.WarningValidationCutShort: true},
		[]v1alpha1.Warning{{Reason: v1alpha1.WarningValidationCutShort, Message: msg}})
	if l := bb.Status.Limits; l != nil && l.Sweep != nil {
		sw := l.Sweep
		// Cut short only if points were left: a budget that ran out during the workload
		// benchmarks or the comparison left the sweep whole.
		points, _ := planSweep(bb, len(s.nodes))
		sw.CutShort = int(sw.Points) < len(points)
	}
	return r.endValidation(ctx, s)
}

// unsettleSecondRound takes back the round a second look of stage 2 raised (componentSecondLook)
// when the budget stops that round before it published (ComponentsMeasured still
// Remeasuring): the figures in the status are the first round's, and deviceProbeRound or
// networkProbeRound 2 would tell the status's readers and `kubectl beeburst limits` that the
// component was measured twice. The round in flight is the one whose second-round pods (-r2,
// roundPod) have not all ended; the other component's round, if raised, published before.
// It returns which component it took back ("devices", "links"), "" for none.
func unsettleSecondRound(comp *v1alpha1.ComponentLimits, pods []corev1.Pod) string {
	if comp == nil {
		return ""
	}
	running := func(components ...string) bool {
		return slices.ContainsFunc(pods, func(p corev1.Pod) bool {
			st, _ := nodetask.StateOf(&p)
			return slices.Contains(components, p.Labels[nodetask.LabelComponent]) && strings.HasSuffix(p.Name, "-r2") && st == nodetask.Running
		})
	}
	switch {
	case comp.DeviceProbeRound > 1 && running(nodetask.ComponentProbeDevice):
		comp.DeviceProbeRound = 0
		return "devices"
	case comp.NetworkProbeRound > 1 && running(nodetask.ComponentProbeNetServer, nodetask.ComponentProbeNetClient):
		comp.NetworkProbeRound = 0
		return "links"
	}
	return ""
}

// endValidation records that stages 2-4 ended before all of them measured (a budget cut or
// a failed measurement), and stops the probes still running: their figures would arrive
// after publication. Pods that ended stay for tidyMeasuringPods, which keeps the failed ones.
func (r *BurstBufferReconciler) endValidation(ctx context.Context, s *scope) error {
	r.recordValidationEnd(s.bb)
	return r.stopMeasuringPods(ctx, s.bb)
}

// stopMeasuringPods deletes bb's measuring pods that have not ended: runs measuring, and the
// quick profile's chained runs still waiting for their turn (chain.go).
func (r *BurstBufferReconciler) stopMeasuringPods(ctx context.Context, bb *v1alpha1.BurstBuffer) error {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, ofBurstBuffer(bb), client.MatchingLabelsSelector{Selector: probeSelector(bb)}); err != nil {
		return err
	}
	var running []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if st, _ := nodetask.StateOf(p); st == nodetask.Running && p.DeletionTimestamp.IsZero() {
			running = append(running, p)
		}
	}
	return r.deletePods(ctx, running)
}

// conditionFailed: the stage condition t is False with a reason that makes the burst buffer
// Degraded or Failed.
func conditionFailed(bb *v1alpha1.BurstBuffer, t string) bool {
	return falseWithKind(bb, t, v1alpha1.ReasonKindDegraded, v1alpha1.ReasonKindTerminal)
}

// nodeCache is the per-node cache of stage-2 figures, in the operator's namespace.
func (r *BurstBufferReconciler) nodeCache() nodecache.Store {
	return nodecache.Store{Client: r.Client, Namespace: r.CacheNamespace}
}
