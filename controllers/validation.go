package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/hardware"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch

// belowDocumentedShare: a component measured more than 10% under its documented figure is
// reported (METHOD.md stage 2).
const belowDocumentedShare = 0.9

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
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, v1alpha1.ReasonSkipped, msg)
		setCondition(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonSkipped, msg)
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
					setCondition(s.bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, conditionReason(s.bb, v1alpha1.ConditionComponentsMeasured), msg)
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
		wake = minPositive(wake, w.requeue(now))
	}
	if s.locks.held {
		wake = minPositive(wake, lockDuration/2) // renew the locks while measuring
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
	setCondition(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonValidated, msg)
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
func (r *BurstBufferReconciler) queued(ctx context.Context, s *scope, w *lockWait) {
	typ := v1alpha1.ConditionComponentsMeasured
	if conditionIs(s.bb, typ, metav1.ConditionTrue) {
		typ = v1alpha1.ConditionValidated
	}
	if v1alpha1.KindOf(conditionReason(s.bb, typ)) != v1alpha1.ReasonKindProgress {
		return
	}
	msg := w.message()
	if c := meta.FindStatusCondition(s.bb.Status.Conditions, typ); c == nil || c.Reason != v1alpha1.ReasonQueuedForNode || c.Message != msg {
		logf.FromContext(ctx).Info("waiting: queued for a node's measuring lock", "phase", s.bb.Status.Phase,
			"reason", v1alpha1.ReasonQueuedForNode, "node", w.node, "holder", w.holder, "ahead", w.ahead)
	}
	setCondition(s.bb, typ, metav1.ConditionFalse, v1alpha1.ReasonQueuedForNode, msg)
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
	if !conditionIs(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue) && !conditionFailed(bb, v1alpha1.ConditionComponentsMeasured) {
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, v1alpha1.ReasonCutShort, msg)
	}
	if !conditionFailed(bb, v1alpha1.ConditionValidated) {
		setCondition(bb, v1alpha1.ConditionValidated, metav1.ConditionTrue, v1alpha1.ReasonCutShort, msg)
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
	for i := range pods.Items {
		p := &pods.Items[i]
		if st, _ := nodetask.StateOf(p); st != nodetask.Running || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// conditionFailed: the stage condition t is False with a reason that makes the burst buffer
// Degraded or Failed.
func conditionFailed(bb *v1alpha1.BurstBuffer, t string) bool {
	return falseWithKind(bb, t, v1alpha1.ReasonKindDegraded, v1alpha1.ReasonKindTerminal)
}

// stage2 is what stage 2's steps found on this visit, for the steps after them.
type stage2 struct {
	// figures are each node's device figures, measured or reused; reused says which came
	// from another burst buffer's probe, no older than reuseMaxAge.
	figures map[string]nodecache.Figures
	reused  map[string]bool
	// pairs are the measured links; sb is the engine's StorageBench run (nil without one).
	pairs []netPair
	sb    *storageBenchRun
}

// componentsMeasured: stage 2 is done (or was skipped or cut short), its steps skip.
func componentsMeasured(bb *v1alpha1.BurstBuffer) bool {
	return conditionIs(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue)
}

// reconcileDeviceProbes is stage 2's first step: each node's device measured on its own (fio,
// direct I/O) beside its documented figure, results reused from recent probes of the same
// node and path. One measurement per node at a time, within a burst buffer too: the network
// probe's iperf3 and the device probe's fio on the same node share its CPUs, and on a busy or
// emulated node (the testbed's QEMU guests) each measured a fraction of its component. So the
// links are measured after every device probe ended.
func (r *BurstBufferReconciler) reconcileDeviceProbes(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if componentsMeasured(bb) {
		return ctrl.Result{}, true, nil
	}
	s.stage2 = stage2{figures: map[string]nodecache.Figures{}, reused: map[string]bool{}}
	if deviceProbeRound(bb) == 1 {
		if err := r.startChain(ctx, s); err != nil {
			return ctrl.Result{}, false, err
		}
	}
	var pending, failures []string
	for i, node := range s.nodes {
		st, failure, err := r.deviceFigures(ctx, s, i, node)
		switch {
		case err != nil:
			return ctrl.Result{}, false, err
		case failure != "":
			failures = append(failures, "device probe on "+failure)
		case st == nodetask.Running:
			pending = append(pending, node)
		}
	}
	if recordDiscovered(bb, s.stage2.figures) {
		// Stage 1 is recomputed as soon as discovery brings a figure nothing documented.
		estimate(s)
	}
	if len(failures) > 0 {
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
			strings.Join(failures, "; "))
		return ctrl.Result{}, false, nil
	}
	if len(pending) > 0 {
		reason, msg := v1alpha1.ReasonProbing, "probing"
		if deviceProbeRound(bb) > 1 {
			reason, msg = v1alpha1.ReasonRemeasuring, "the first round of the devices read low against the sweep or their documented figures, so they are measured again (a disturbed probe reads low, caching reads high)"
		}
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, reason,
			fmt.Sprintf("%s: devices of %d of %d node(s) measured; the links next", msg, len(s.nodes)-len(pending), len(s.nodes)))
		return ctrl.Result{}, false, nil
	}
	return ctrl.Result{}, true, nil
}

// deviceProbeRound is the round of stage 2's device probes: 1, or 2 once the sweep read above
// their limit, or they read far below their documented figures (componentSecondLook).
func deviceProbeRound(bb *v1alpha1.BurstBuffer) int {
	if l := bb.Status.Limits; l != nil && l.Components != nil && l.Components.DeviceProbeRound > 1 {
		return int(l.Components.DeviceProbeRound)
	}
	return 1
}

// deviceFigures puts node i's device figures into s.stage2: fresh ones from the per-node
// cache, else its probe's once it ended. failure says why a probe gave none. A second round
// never reuses: the cache may hold the very figure in doubt.
func (r *BurstBufferReconciler) deviceFigures(ctx context.Context, s *scope, i int, node string) (nodetask.State, string, error) {
	bb, run := s.bb, &s.stage2
	linkAddress := linkDiscoveryAddress(bb, s.nodeObj(node))
	round := deviceProbeRound(bb)
	if f, ok := r.reusableFigures(ctx, s, node); ok && round == 1 {
		// Figures this burst buffer measured itself on an earlier visit are its own, not
		// reused.
		run.figures[node], run.reused[node] = f, f.MeasuredBy != bb.Namespace+"/"+bb.Name
		return nodetask.Succeeded, "", nil
	}
	st, msg, pod, err := r.runMeasuring(ctx, s, nodetask.DeviceProbePod(bb, r.AgentImage, i, node, linkAddress, round))
	if err != nil || st != nodetask.Succeeded {
		if st == nodetask.Failed {
			return st, fmt.Sprintf("node %s: %s", node, reportMessage(msg)), err
		}
		return st, "", err
	}
	f, err := probeFigures(msg)
	if err != nil {
		return st, fmt.Sprintf("node %s: %v", node, err), nil
	}
	f.Node, f.StoragePath, f.MeasuredBy = node, bb.Spec.Storage.Path, bb.Namespace+"/"+bb.Name
	if f.Conditions, err = r.probeConditions(ctx, s, pod, f); err != nil {
		return st, "", err
	}
	run.figures[node] = f
	return st, "", nil
}

// reusableFigures are node's device figures from the per-node cache when they are fresh (no
// older than validation.reuseComponentResultsFor, for the same storage path). A result whose
// probe did not read the link this burst buffer needs is not reused: the probe runs again.
func (r *BurstBufferReconciler) reusableFigures(ctx context.Context, s *scope, node string) (nodecache.Figures, bool) {
	bb := s.bb
	linkAddress := linkDiscoveryAddress(bb, s.nodeObj(node))
	f, ok := r.cachedFigures(ctx, node)
	if !ok || !f.Fresh(bb.Spec.Storage.Path, reuseMaxAge(bb), r.Now()) ||
		linkAddress != "" && (f.Hardware == nil || f.Hardware.LinkAddress != linkAddress) {
		return nodecache.Figures{}, false
	}
	return f, true
}

// reuseMaxAge is validation.reuseComponentResultsFor: how old reused device figures may be.
func reuseMaxAge(bb *v1alpha1.BurstBuffer) time.Duration {
	if reuse := bb.Spec.Validation.ReuseComponentResultsFor; reuse != "" {
		if d, err := reuse.Parse(); err == nil {
			return d
		}
	}
	return time.Hour
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
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
			strings.Join(failures, "; "))
		return ctrl.Result{}, false, nil
	}
	if !done {
		reason, what := v1alpha1.ReasonProbing, "probing"
		if networkProbeRound(bb) > 1 {
			reason, what = v1alpha1.ReasonRemeasuring, "the sweep read above the links' measured limit, so they are measured again (a disturbed probe reads low)"
		}
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, reason,
			fmt.Sprintf("%s: devices of %d node(s) measured, links of %d of %d pair(s)", what, len(s.nodes), len(pairs), len(s.nodes)))
		return ctrl.Result{}, false, nil
	}
	s.stage2.pairs = pairs
	return ctrl.Result{}, true, nil
}

// reconcileStorageBench is the engine's own component test of its targets, after the device
// probes (beegfs only; other engines skip it).
func (r *BurstBufferReconciler) reconcileStorageBench(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	if componentsMeasured(s.bb) {
		return ctrl.Result{}, true, nil
	}
	sb, done, err := r.runStorageBench(ctx, s, s.stage2.figures)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if !done {
		setCondition(s.bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbing,
			fmt.Sprintf("devices of %d node(s) and %d link pair(s) measured; BeeGFS StorageBench running on the storage targets", len(s.nodes), len(s.stage2.pairs)))
		return ctrl.Result{}, false, nil
	}
	s.stage2.sb = sb
	return ctrl.Result{}, true, nil
}

// reconcileComponentLimits closes stage 2: the figures published with the limits recomputed
// from them, the capacity asked for held against the free space found, and the condition.
func (r *BurstBufferReconciler) reconcileComponentLimits(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb, run := s.bb, s.stage2
	if componentsMeasured(bb) {
		return ctrl.Result{}, true, nil
	}
	r.publishComponents(s, run.figures, run.reused, run.pairs, run.sb)
	if msg := capacityShortfall(bb, s.nodes, run.figures); msg != "" {
		setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonInsufficientCapacity, msg)
		// The sweep's chained runs (quick profile) must not measure a spec the nodes refuse.
		return ctrl.Result{}, false, r.stopMeasuringPods(ctx, bb)
	}
	reason, msg := v1alpha1.ReasonMeasured, fmt.Sprintf("devices of %d node(s) and %d link pair(s) measured", len(s.nodes), len(run.pairs))
	if run.sb != nil {
		if run.sb.notStarted {
			msg += "; BeeGFS StorageBench " + run.sb.outcome.Failure
		} else if run.sb.outcome.Failure != "" {
			msg += "; BeeGFS StorageBench gave no figures (see warnings)"
		} else {
			msg += fmt.Sprintf("; BeeGFS StorageBench on %d storage target(s)", len(run.sb.outcome.Result.Targets))
		}
	}
	if round := deviceProbeRound(bb); round > 1 {
		msg += fmt.Sprintf(" (devices in round %d, the higher of the two rounds kept: the first round read low against the sweep or the documented figures)", round)
	}
	if round := networkProbeRound(bb); round > 1 {
		msg += fmt.Sprintf(" (links in round %d, the higher of the two rounds kept: the sweep had read above the first round's limit)", round)
	}
	if n := count(run.reused); n > 0 {
		msg += fmt.Sprintf(" (%d device figure(s) reused from other burst buffers' probes, younger than %s)", n, reuseMaxAge(bb))
		if n == len(s.nodes) {
			reason = v1alpha1.ReasonReused
		}
	}
	if c := bb.Status.Limits.Components; c != nil && c.Write != nil {
		msg += fmt.Sprintf("; write limit %s (%s)", rate(c.Write.LimitBytesPerSecond), c.Write.Bottleneck)
	}
	setCondition(bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionTrue, reason, msg)
	return ctrl.Result{}, true, nil
}

// publishComponents writes stage 2 into the status: documented beside measured per node,
// warnings for components under their documented figure, and the limits recomputed with the
// measured figures ("from here on the measured figure is the limit").
func (r *BurstBufferReconciler) publishComponents(s *scope, figures map[string]nodecache.Figures, reused map[string]bool, pairs []netPair, sb *storageBenchRun) {
	links := nodeNetwork(pairs)
	bb := s.bb
	comp := &v1alpha1.ComponentLimits{}
	if round := deviceProbeRound(bb); round > 1 {
		comp.DeviceProbeRound = int32(round)
	}
	if round := networkProbeRound(bb); round > 1 {
		comp.NetworkProbeRound = int32(round)
	}
	prev := map[string]v1alpha1.NodeComponents{} // the first round's, as published
	if bb.Status.Limits.Components != nil {
		for _, nc := range bb.Status.Limits.Components.Nodes {
			prev[nc.Name] = nc
		}
	}
	var warnings []v1alpha1.Warning
	for _, node := range s.nodes {
		f := figures[node]
		t := metav1.NewTime(f.MeasuredTime)
		nc := v1alpha1.NodeComponents{Name: node, MeasuredTime: &t, Reused: reused[node]}
		docW, srcW := hardware.DocumentedDevice(bb, s.nodeObj(node), true)
		docR, srcR := hardware.DocumentedDevice(bb, s.nodeObj(node), false)
		nc.DeviceWrite = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: docW, MeasuredBytesPerSecond: positive(f.DeviceWriteBytesPerSecond), Source: srcW}
		nc.DeviceRead = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: docR, MeasuredBytesPerSecond: positive(f.DeviceReadBytesPerSecond), Source: srcR}
		if got, ok := links[node]; ok {
			doc, src := hardware.DocumentedLink(bb, s.nodeObj(node), node)
			nc.Network = &v1alpha1.ComponentFigure{DocumentedBytesPerSecond: doc, MeasuredBytesPerSecond: positive(int64(got)), Source: src}
		}
		if p, ok := prev[node]; ok {
			if comp.DeviceProbeRound > 1 {
				secondRound(nc.DeviceWrite, p.DeviceWrite)
				secondRound(nc.DeviceRead, p.DeviceRead)
			}
			if comp.NetworkProbeRound > 1 {
				secondRound(nc.Network, p.Network)
			}
		}
		if c := f.Conditions; c != nil && len(c.OtherPods) > 0 && !reused[node] {
			warnings = append(warnings, v1alpha1.Warning{
				Reason: v1alpha1.WarningNodeBusy, Node: node, Component: "device",
				Message: fmt.Sprintf("node %s: other beeburst pods ran on the node while its device was probed (%s): the device figures may be low; they are published for this burst buffer but not kept for reuse",
					node, strings.Join(limit(c.OtherPods, 4), ", ")),
			})
		}
		warnings = append(warnings, belowDocumented(node, "device-write", nc.DeviceWrite)...)
		warnings = append(warnings, belowDocumented(node, "device-read", nc.DeviceRead)...)
		warnings = append(warnings, storageBenchFigures(sb, &nc)...)
		comp.Nodes = append(comp.Nodes, nc)
	}
	warnings = append(warnings, networkWarnings(s, comp, pairs)...)
	var sbWarnings []v1alpha1.Warning
	comp.StorageBench, sbWarnings = r.storageBenchSummary(sb)
	warnings = append(warnings, sbWarnings...)

	// The limits recomputed from exactly the figures published above; stage 3 reads them
	// back from the status (hardware.LimitInput) and so is judged against this limit.
	if in, err := hardware.LimitInput(bb, s.nodeObjs, comp); err == nil && in.Measured {
		if lim, err := limits.Compute(in.Hardware); err == nil {
			w, rd := hardware.OperationLimitToAPI(lim.Write), hardware.OperationLimitToAPI(lim.Read)
			comp.Write, comp.Read = &w, &rd
		}
	}
	bb.Status.Limits.Components = comp
	if bb.Spec.Storage.CapacityPerNode == nil {
		// No capacity asked for: the burst buffer may use what was free on each node.
		var total int64
		for _, node := range s.nodes {
			total += figures[node].FreeBytes
		}
		if total > 0 {
			// Whole MiB ("7461Mi"), which reads at a glance in `kubectl get bb`.
			bb.Status.Capacity = resource.NewQuantity(total&^(1<<20-1), resource.BinarySI)
		}
	}
	var busy []v1alpha1.Warning
	for _, w := range warnings {
		if w.Reason == v1alpha1.WarningNodeBusy {
			busy = append(busy, w)
		}
	}
	warnings = slices.DeleteFunc(warnings, func(w v1alpha1.Warning) bool { return w.Reason == v1alpha1.WarningNodeBusy })
	bb.Status.Warnings = replaceWarnings(bb.Status.Warnings,
		map[string]bool{v1alpha1.WarningBelowDocumented: true, v1alpha1.WarningComponentTestFailed: true}, warnings)
	bb.Status.Warnings = replaceNodeBusy(bb.Status.Warnings, "device", busy)
}

// secondRound puts a component's first round beside its second (cur): the first's figure in
// firstRoundBytesPerSecond, and the higher of the two as the measured figure - interference
// only lowers what a device or a link moves. first is the figure as published before the
// second round, which keeps its own first round when it has one.
func secondRound(cur, first *v1alpha1.ComponentFigure) {
	if cur == nil || first == nil || first.MeasuredBytesPerSecond == nil {
		return
	}
	f := *first.MeasuredBytesPerSecond
	if first.FirstRoundBytesPerSecond != nil {
		f = *first.FirstRoundBytesPerSecond
	}
	cur.FirstRoundBytesPerSecond = &f
	if cur.MeasuredBytesPerSecond == nil || *cur.MeasuredBytesPerSecond < f {
		cur.MeasuredBytesPerSecond = &f
	}
}

// belowDocumented warns when a measured figure is more than 10% under its documented one.
func belowDocumented(node, component string, c *v1alpha1.ComponentFigure) []v1alpha1.Warning {
	if c.DocumentedBytesPerSecond == nil || c.MeasuredBytesPerSecond == nil {
		return nil
	}
	doc, got := float64(*c.DocumentedBytesPerSecond), float64(*c.MeasuredBytesPerSecond)
	if got >= belowDocumentedShare*doc {
		return nil
	}
	return []v1alpha1.Warning{{
		Reason: v1alpha1.WarningBelowDocumented, Node: node, Component: component,
		Message: fmt.Sprintf("node %s: %s measured %s, %.0f%% of the documented %s (%s); the measured figure is the limit from stage 2 on",
			node, component, limits.FormatBytesPerSecond(got), 100*got/doc, limits.FormatBytesPerSecond(doc), c.Source),
	}}
}

// linkDiscoveryAddress is the node's InternalIP when its link speed must be discovered:
// neither spec.hardware nor the node's labels document it. Empty otherwise, and for a node
// without an InternalIP.
func linkDiscoveryAddress(bb *v1alpha1.BurstBuffer, node *corev1.Node) string {
	if node == nil || !hardware.NeedsLinkDiscovery(bb.Spec.Hardware, node.Labels) {
		return ""
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			return a.Address
		}
	}
	return ""
}

// recordDiscovered writes what the device probes discovered into status.nodes[].hardware and
// says whether anything changed.
func recordDiscovered(bb *v1alpha1.BurstBuffer, figures map[string]nodecache.Figures) bool {
	changed := false
	for i := range bb.Status.Nodes {
		ns := &bb.Status.Nodes[i]
		f, ok := figures[ns.Name]
		if !ok {
			continue
		}
		nh := &v1alpha1.NodeHardware{}
		if ns.Hardware != nil {
			nh = ns.Hardware.DeepCopy()
		}
		hardware.ApplyDiscovered(nh, f.Hardware)
		if !equality.Semantic.DeepEqual(nh, ns.Hardware) {
			ns.Hardware, changed = nh, true
		}
	}
	return changed
}

// probeFigures reads a device probe's report from its termination message.
func probeFigures(msg string) (nodecache.Figures, error) {
	rep, err := readReport(msg)
	if err != nil {
		return nodecache.Figures{}, fmt.Errorf("unreadable probe report: %v", err)
	}
	if rep.Phase != bench.PhaseSucceeded {
		return nodecache.Figures{}, fmt.Errorf("probe %s: %s", rep.Phase, rep.Message)
	}
	f := nodecache.Figures{MeasuredTime: rep.EndTime, FreeBytes: rep.FreeBytes, Hardware: rep.Hardware}
	for _, res := range rep.Results {
		switch res.Operation {
		case bench.OpWrite:
			f.DeviceWriteBytesPerSecond = int64(res.BytesPerSecond)
		case bench.OpRead:
			f.DeviceReadBytesPerSecond = int64(res.BytesPerSecond)
		}
	}
	if f.DeviceWriteBytesPerSecond <= 0 || f.DeviceReadBytesPerSecond <= 0 {
		return f, fmt.Errorf("probe report has no write and read figures")
	}
	return f, nil
}

func (r *BurstBufferReconciler) cachedFigures(ctx context.Context, node string) (nodecache.Figures, bool) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: nodecache.Name(node)}, &cm); err != nil {
		return nodecache.Figures{}, false
	}
	f, err := nodecache.Read(&cm)
	return f, err == nil
}

// saveFigures changes node's entry of the per-node cache with change, from what it holds now
// (nothing: the zero Figures of the node): the device figures and the metadata figure are
// written by different measurements, and neither may drop the other. An entry that cannot be
// read is replaced. The update carries the entry's resourceVersion, so a write in between
// fails it and the next visit changes the newer entry.
func (r *BurstBufferReconciler) saveFigures(ctx context.Context, node string, change func(*nodecache.Figures)) error {
	var cur corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: r.CacheNamespace, Name: nodecache.Name(node)}, &cur)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	f := nodecache.Figures{Node: node}
	if exists {
		if old, rerr := nodecache.Read(&cur); rerr == nil {
			f = old
		}
	}
	change(&f)
	f.Node = node
	cm, err := nodecache.ConfigMap(r.CacheNamespace, f)
	if err != nil {
		return err
	}
	if !exists {
		return r.Create(ctx, cm)
	}
	cur.Data = cm.Data
	cur.Labels = cm.Labels
	return r.Update(ctx, &cur)
}

func (s *scope) nodeObj(name string) *corev1.Node {
	for i := range s.nodeObjs {
		if s.nodeObjs[i].Name == name {
			return &s.nodeObjs[i]
		}
	}
	return nil
}

func positive(v int64) *int64 {
	if v <= 0 {
		return nil
	}
	return &v
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func count(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}
