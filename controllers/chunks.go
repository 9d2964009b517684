package controllers

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/sizing"
)

// This file wires layout.chunkSizePolicy Auto: after stage 2 and before the
// stage-3 sweep, reconcileChunkSize (called from reconcileValidation, since it measures:
// it needs the node locks and counts against the time budget) measures the chunk sizes
// sizing.PlanChunkSizes plans, one after another, each in a directory of its own whose
// stripe pattern the engine sets; sizing.ChooseChunkSize keeps the best for
// spec.workload.pattern, the engine sets it on the root, and the sweep then runs with it.
// The plan is kept in status.chunkSize (its candidates) and every run is a pod with a
// deterministic name, so an operator restart resumes where the tuning was.
// reconcileChunkSizeVerdict (a phase of Reconcile) gives the condition its first Unknown and
// closes a tuning that validation ended first (a budget cut).

// chunkRunOverhead is what a candidate costs besides its write and read phases: the
// stripe-pattern task and the pods' start.
const chunkRunOverhead = 10 * time.Second

// defaultChunkSize is the CRD's default layout.chunkSize (BeeGFS' own).
const defaultChunkSize = 512 << 10

// chunkBlockSize is the transfer size of the runs: the agent's default, which the sweep
// uses too (validation.sweep.blockSize is not passed to the sweep's pods).
const chunkBlockSize = 1 << 20

// chunkSetter is an engine that sets a directory's stripe chunk size (beegfs).
type chunkSetter interface {
	SetChunkSize(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string, t beegfs.ChunkTask) (beegfs.ChunkOutcome, error)
}

func baselineChunk(bb *v1alpha1.BurstBuffer) int64 {
	if q := bb.Spec.Layout.ChunkSize; q != nil && q.Value() > 0 {
		return q.Value()
	}
	return defaultChunkSize
}

// chunkShape is how each candidate runs: processes per node (the grid's largest up to 4, as
// the workload benchmarks use) and the seconds of each phase (the sweep's).
func chunkShape(bb *v1alpha1.BurstBuffer, nodes int) (procs, seconds int) {
	_, ns, seconds := grid(bb, nodes)
	procs = ns[0]
	for _, n := range ns {
		if n <= 4 {
			procs = n
		}
	}
	return procs, seconds
}

// chunkTuningBudget is the tuning's share of validation.timeBudget: a quarter (the API's
// promise), no new size starts after it.
func chunkTuningBudget(bb *v1alpha1.BurstBuffer) time.Duration { return budget(bb) / 4 }

// chunkPlanInput is the plan's input: a quarter of the time budget, and never more than half
// of what stage 2 left of it, so that the sweep keeps its time.
func (r *BurstBufferReconciler) chunkPlanInput(s *scope) sizing.ChunkPlanInput {
	bb := s.bb
	_, seconds := chunkShape(bb, len(s.nodes))
	in := sizing.ChunkPlanInput{Pattern: sizing.Pattern(bb.Spec.Workload.Pattern), Baseline: baselineChunk(bb), BlockSize: chunkBlockSize,
		Budget: chunkTuningBudget(bb), PerRun: time.Duration(2*seconds)*time.Second + chunkRunOverhead}
	if start := bb.Status.ValidationStartTime; start != nil {
		in.Budget = min(in.Budget, max(start.Add(budget(bb)).Sub(r.Now())/2, 0))
	}
	return in
}

// chunkPlan is the plan in status.chunkSize (its candidates, once planned), else a new one.
func (r *BurstBufferReconciler) chunkPlan(s *scope) (sizing.ChunkPlan, error) {
	in := r.chunkPlanInput(s)
	cs := s.bb.Status.ChunkSize
	if cs == nil || cs.Policy != v1alpha1.ChunkSizeAuto || len(cs.Candidates) == 0 {
		return sizing.PlanChunkSizes(in)
	}
	// Planned on an earlier visit: the sizes are the status's, the rest follows from the spec.
	in.Budget = sizing.MaxChunkSizes * in.PerRun
	p, err := sizing.PlanChunkSizes(in)
	if err != nil {
		return p, err
	}
	p.Sizes = p.Sizes[:0]
	for _, c := range cs.Candidates {
		p.Sizes = append(p.Sizes, c.Size.Value())
	}
	p.Reason = cs.Message
	return p, nil
}

// chunkSizeSettled: the ChunkSizeChosen condition has its final word.
func chunkSizeSettled(bb *v1alpha1.BurstBuffer) bool {
	c := meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionChunkSizeChosen)
	return c != nil && (c.Status == metav1.ConditionTrue || c.Reason == v1alpha1.ReasonChunkSizeNotTuned)
}

func setChunkCondition(bb *v1alpha1.BurstBuffer, st metav1.ConditionStatus, reason, msg string) {
	conditions.Set(bb, v1alpha1.ConditionChunkSizeChosen, st, reason, msg)
}

// reconcileChunkSize is the chunk-size tuning of reconcileValidation, between stage 2 and
// stage 3; done when the chosen size is set (or nothing was to be tuned). It never fails the
// burst buffer: a size whose run failed is reported as failed beside the others, and
// whatever happens the sweep follows.
func (r *BurstBufferReconciler) reconcileChunkSize(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if bb.Spec.Layout.ChunkSizePolicy != v1alpha1.ChunkSizeAuto || chunkSizeSettled(bb) {
		return ctrl.Result{}, true, nil
	}
	setter, ok := s.engine.(chunkSetter)
	if !ok || bb.Spec.Engine != v1alpha1.EngineBeeGFS {
		// The CRD refuses Auto with the local engine; an object stored before that rule
		// gets this answer instead of silence.
		setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned, fmt.Sprintf(
			"layout.chunkSizePolicy Auto tunes BeeGFS's stripe chunk size; engine %s has no chunks: nothing was tuned", bb.Spec.Engine))
		return ctrl.Result{}, true, nil
	}
	plan, err := r.chunkPlan(s)
	if err != nil {
		// The CRD's rules make this unreachable (a chunk size and a pattern it knows).
		setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned, fmt.Sprintf("the chunk sizes cannot be planned: %v", err))
		return ctrl.Result{}, true, nil
	}
	if plan.Skipped {
		bb.Status.ChunkSize = chunkProgress(plan, nil)
		setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned, plan.Reason+
			" (the tuning may take a quarter of validation.timeBudget, and at most half of what stage 2 left of it)")
		return ctrl.Result{}, true, nil
	}
	results, running, err := r.runChunkCandidates(ctx, s, setter, plan)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if running != "" {
		bb.Status.ChunkSize = chunkProgress(plan, results)
		setChunkCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonChunkSizeTuning, running+"; plan: "+plan.Reason)
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonSweeping,
			"stage 2 done; layout.chunkSizePolicy Auto: "+running+"; the sweep follows with the chosen size")
		return ctrl.Result{}, false, nil
	}
	choice := sizing.ChooseChunkSize(plan, results, chunkLimits(bb))
	bb.Status.ChunkSize = apibridge.ChunkChoiceToAPI(choice)
	out, err := setter.SetChunkSize(ctx, bb, s.nodes, beegfs.ChunkTask{Index: beegfs.ChunkApplyIndex, Dir: "/", Size: choice.Size, RemoveTuning: true})
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if !out.Done {
		// Not a measuring pod, but the sweep follows at once: the nodes stay this burst
		// buffer's meanwhile.
		s.locks.busy = true
		msg := fmt.Sprintf("setting chunk size %s on the root: %s", sizing.FormatChunk(choice.Size), choice.Message)
		setChunkCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonChunkSizeTuning, msg)
		conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonSweeping,
			"stage 2 done; layout.chunkSizePolicy Auto: "+msg)
		return ctrl.Result{}, false, nil
	}
	settleChunkChoice(bb, choice, out)
	return ctrl.Result{}, true, nil
}

// settleChunkChoice gives the condition its final word once the root's pattern was set (or
// its task failed). Only a size compared with the baseline on measured figures is a choice;
// otherwise the baseline stays, not tuned.
func settleChunkChoice(bb *v1alpha1.BurstBuffer, choice sizing.ChunkChoice, out beegfs.ChunkOutcome) {
	cs := bb.Status.ChunkSize
	if out.Failure != "" {
		cs.Size = *resource.NewQuantity(baselineChunk(bb), resource.BinarySI)
		for i := range cs.Candidates {
			cs.Candidates[i].Chosen = cs.Candidates[i].Size.Value() == baselineChunk(bb)
		}
		cs.Message = shorten.Cut(fmt.Sprintf("setting %s on the root failed (%s): layout.chunkSize %s stays. %s",
			sizing.FormatChunk(choice.Size), out.Failure, sizing.FormatChunk(baselineChunk(bb)), choice.Message), 1024)
		setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned, cs.Message)
		return
	}
	ranked := 0
	for _, sc := range choice.Scores {
		if !math.IsNaN(sc.Score) {
			ranked++
		}
	}
	if ranked < 2 {
		setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned, choice.Message)
		return
	}
	setChunkCondition(bb, metav1.ConditionTrue, v1alpha1.ReasonChunkSizeChosen, choice.Message)
}

// runChunkCandidates measures the plan's sizes in order, each once the previous one ended
// (they must not share the devices): the directory's pattern first, then the runs on every
// node at once. It returns the results of the sizes that ended and, while one runs, what it
// waits for. No size starts after the tuning's share of the budget, counted from the first
// size's task: the sizes left are reported as not measured.
func (r *BurstBufferReconciler) runChunkCandidates(ctx context.Context, s *scope, setter chunkSetter, plan sizing.ChunkPlan) ([]sizing.ChunkResult, string, error) {
	bb := s.bb
	deadline := r.Now().Add(chunkTuningBudget(bb))
	var first corev1.Pod
	if err := r.Get(ctx, client.ObjectKey{Namespace: nodetask.Namespace(bb), Name: nodetask.Name(bb, nodetask.ComponentChunkSet, 0)}, &first); err == nil {
		deadline = first.CreationTimestamp.Add(chunkTuningBudget(bb))
	}
	var results []sizing.ChunkResult
	for k, size := range plan.Sizes {
		var cur corev1.Pod
		err := r.Get(ctx, client.ObjectKey{Namespace: nodetask.Namespace(bb), Name: nodetask.Name(bb, nodetask.ComponentChunkSet, k)}, &cur)
		if client.IgnoreNotFound(err) != nil {
			return nil, "", err
		}
		if err != nil && k > 0 && !r.Now().Before(deadline) {
			results = append(results, sizing.ChunkResult{Size: size, Failed: fmt.Sprintf(
				"not measured: the tuning's share of validation.timeBudget (%s) ran out", chunkTuningBudget(bb))})
			continue
		}
		what := fmt.Sprintf("chunk size %s (%d of %d)", sizing.FormatChunk(size), k+1, len(plan.Sizes))
		if err != nil && s.lastLook {
			// Past the budget nothing new starts (runMeasuring's rule for the engine's pods).
			return results, "not starting " + what + ": validation.timeBudget ran out", nil
		}
		out, err := setter.SetChunkSize(ctx, bb, s.nodes, beegfs.ChunkTask{Index: k, Dir: beegfs.ChunkDir(size), Size: size})
		if err != nil {
			return nil, "", err
		}
		if !out.Done {
			s.locks.busy = true
			return results, "setting the stripe pattern of " + what, nil
		}
		if out.Failure != "" {
			results = append(results, sizing.ChunkResult{Size: size, Failed: "setting its stripe pattern failed: " + out.Failure})
			continue
		}
		res, running, err := r.chunkRun(ctx, s, plan, k, size)
		if err != nil {
			return nil, "", err
		}
		if running {
			return results, fmt.Sprintf("measuring %s on %d node(s)", what, len(s.nodes)), nil
		}
		results = append(results, res)
	}
	return results, "", nil
}

// chunkRun is one size's runs, one pod per node at once; the size's figures are their sums
// (bandwidths as the sweep sums them: total bytes over the slowest runtime).
func (r *BurstBufferReconciler) chunkRun(ctx context.Context, s *scope, plan sizing.ChunkPlan, k int, size int64) (sizing.ChunkResult, bool, error) {
	res := sizing.ChunkResult{Size: size}
	var reports []bench.Report
	var failures []string
	running := false
	for i, node := range s.nodes {
		st, msg, _, err := r.runMeasuring(ctx, s, r.chunkPod(s, plan.Pattern, k, i, node, size))
		if err != nil {
			return res, false, err
		}
		switch st {
		case nodetask.Running:
			running = true
		case nodetask.Failed:
			failures = append(failures, fmt.Sprintf("node %s: %s", node, reportMessage(msg)))
		case nodetask.Succeeded:
			rep, err := readReport(msg)
			if err != nil || rep.Phase != bench.PhaseSucceeded {
				failures = append(failures, fmt.Sprintf("node %s: unreadable or failed report", node))
				continue
			}
			reports = append(reports, rep)
		}
	}
	if running {
		return res, true, nil
	}
	if len(failures) > 0 {
		res.Failed = strings.Join(failures, "; ")
		return res, false, nil
	}
	res.Figures = map[sizing.Measure]float64{}
	for _, m := range plan.Measures {
		if v, ok := sumMeasure(reports, m); ok {
			res.Figures[m] = v
		}
	}
	return res, false, nil
}

// chunkPod is node i's run of the k-th size, in the size's directory: the ideal workload
// for large sequential I/O, the shared-file or random workload benchmark for the others.
func (r *BurstBufferReconciler) chunkPod(s *scope, pattern sizing.Pattern, k, i int, node string, size int64) *corev1.Pod {
	procs, seconds := chunkShape(s.bb, len(s.nodes))
	kind := ""
	switch pattern {
	case sizing.PatternSharedFile:
		kind = "sharedfile"
	case sizing.PatternSmallRandom:
		kind = "random4k"
	}
	return together(s.bb, nodetask.ChunkPod(s.bb, r.AgentImage, k, i, node, nodetask.FileSystemMount+beegfs.ChunkDir(size), kind, procs, seconds),
		len(s.nodes), func(j int) string { return nodetask.RunName(s.bb, nodetask.ComponentChunk, k, j) })
}

// sumMeasure sums one measure over the nodes' reports; false when a report lacks it.
func sumMeasure(reports []bench.Report, m sizing.Measure) (float64, bool) {
	var results []bench.Result
	var rate, ops float64
	for _, rep := range reports {
		res := bench.Find(rep.Results, bench.Operation(m))
		if res == nil {
			return 0, false
		}
		results = append(results, *res)
		rate, ops = rate+res.BytesPerSecond, ops+res.OpsPerSecond
	}
	switch {
	case len(reports) == 0:
		return 0, false
	case m == sizing.MeasureRandWrite || m == sizing.MeasureRandRead:
		return ops, ops > 0
	}
	if v := allClients(results, spanned(results)); v > 0 {
		return v, true
	}
	return rate, rate > 0
}

// chunkLimits are the stage-2 limits a run's figures may not exceed (caching suspected):
// the runs use every node, as the limit does.
func chunkLimits(bb *v1alpha1.BurstBuffer) map[sizing.Measure]float64 {
	out := map[sizing.Measure]float64{}
	if l := bb.Status.Limits; l != nil && l.Components != nil {
		if w := l.Components.Write; w != nil && w.LimitBytesPerSecond > 0 {
			out[sizing.MeasureWrite] = float64(w.LimitBytesPerSecond)
		}
		if rd := l.Components.Read; rd != nil && rd.LimitBytesPerSecond > 0 {
			out[sizing.MeasureRead] = float64(rd.LimitBytesPerSecond)
		}
	}
	return out
}

// chunkProgress is status.chunkSize while the sizes are measured: the plan (its candidates,
// which a later visit reads back) with the figures of the sizes that ended, and the root's
// size, still the baseline.
func chunkProgress(plan sizing.ChunkPlan, results []sizing.ChunkResult) *v1alpha1.ChunkSizeStatus {
	ch := sizing.ChunkChoice{Size: plan.Sizes[0], Pattern: plan.Pattern, Message: plan.Reason}
	for k, size := range plan.Sizes {
		sc := sizing.ChunkScore{Size: size, Score: math.NaN()}
		if k < len(results) {
			sc.Figures, sc.Note = results[k].Figures, results[k].Failed
		}
		ch.Scores = append(ch.Scores, sc)
	}
	return apibridge.ChunkChoiceToAPI(ch)
}
