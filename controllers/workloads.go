package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// workloadKinds are the software factors the standard profile measures after stage 3, each
// as a share of the limit found below it (METHOD.md): shared-file N-1, small random I/O,
// metadata.
var workloadKinds = []struct{ kind, name string }{
	{agentapi.KindSharedFile, "sharedFile"},
	{agentapi.KindRandom4k, "random4k"},
	{agentapi.KindMetadata, "metadata"},
}

// reconcileWorkloads runs, with the standard profile once stage 3 is done, the software
// factors, each against the limit stage 3 found: the workload benchmarks on every node, one
// kind after another (they must not share the devices), each operation's aggregate published
// beside the stage-3 best of the same direction. Other profiles skip it.
func (r *BurstBufferReconciler) reconcileWorkloads(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if bb.Spec.Validation.Profile != v1alpha1.ProfileStandard {
		return ctrl.Result{}, true, nil
	}
	procs := 4
	if sw := bb.Status.Limits.Sweep; sw != nil && sw.Write != nil && sw.Write.Plateau.ProcessesPerNode > 0 {
		procs = int(sw.Write.Plateau.ProcessesPerNode)
	}
	var results []v1alpha1.WorkloadResult
	for k, w := range workloadKinds {
		var reports []bench.Report
		var pods []*corev1.Pod
		for i, node := range s.nodes {
			st, msg, pod, err := r.runMeasuring(ctx, s, nodetask.WorkloadPod(bb, r.AgentImage, k, i, node, w.kind, procs))
			if err != nil {
				return ctrl.Result{}, false, err
			}
			switch st {
			case nodetask.Running:
				bb.Status.Limits.Workloads = results
				conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonSweeping,
					fmt.Sprintf("stage 3 done; workload benchmark %s (%d of %d) running", w.name, k+1, len(workloadKinds)))
				return ctrl.Result{}, false, nil
			case nodetask.Failed:
				conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
					fmt.Sprintf("workload benchmark %s failed on node %s: %s", w.name, node, reportMessage(msg)))
				return ctrl.Result{}, false, nil
			}
			rep, err := readReport(msg)
			if err != nil || rep.Phase != bench.PhaseSucceeded {
				conditions.Set(bb, v1alpha1.ConditionValidated, metav1.ConditionFalse, v1alpha1.ReasonProbeFailed,
					fmt.Sprintf("workload benchmark %s on node %s: unreadable or failed report", w.name, node))
				return ctrl.Result{}, false, nil
			}
			reports, pods = append(reports, rep), append(pods, pod)
		}
		results = append(results, aggregateWorkload(bb, w.name, reports)...)
		if w.kind == agentapi.KindMetadata {
			// metadatarate.go: the per-server rate, for the next metadata target.
			if err := r.keepMetadataRate(ctx, s, pods, reports); err != nil {
				return ctrl.Result{}, false, err
			}
		}
	}
	bb.Status.Limits.Workloads = results
	return ctrl.Result{}, true, nil
}

// aggregateWorkload sums each operation over the nodes (the local engine's nodes share
// nothing) and relates byte rates to the stage-3 best of the same direction.
func aggregateWorkload(bb *v1alpha1.BurstBuffer, name string, reports []bench.Report) []v1alpha1.WorkloadResult {
	type sum struct{ bytes, ops float64 }
	sums := map[bench.Operation]*sum{}
	var order []bench.Operation
	for _, rep := range reports {
		for _, res := range rep.Results {
			if sums[res.Operation] == nil {
				sums[res.Operation] = &sum{}
				order = append(order, res.Operation)
			}
			sums[res.Operation].bytes += res.BytesPerSecond
			sums[res.Operation].ops += res.OpsPerSecond
		}
	}
	var out []v1alpha1.WorkloadResult
	for _, op := range order {
		sm := sums[op]
		wr := v1alpha1.WorkloadResult{Name: name + "/" + string(op), Operation: string(op),
			BytesPerSecond: positive(int64(sm.bytes)), OpsPerSecond: positive(int64(sm.ops))}
		if best := stage3Best(bb, op); best > 0 && sm.bytes > 0 {
			share := int32(100*sm.bytes/float64(best) + 0.5)
			wr.SharePercent = &share
		}
		out = append(out, wr)
	}
	return out
}

// stage3Best is the stage-3 best of the direction of op (writes: write, randwrite; reads:
// read, randread); 0 for metadata or when unknown.
func stage3Best(bb *v1alpha1.BurstBuffer, op bench.Operation) int64 {
	sw := bb.Status.Limits.Sweep
	if sw == nil {
		return 0
	}
	var r *v1alpha1.SweepResult
	switch {
	case op == bench.OpWrite || op == bench.OpRandWrite:
		r = sw.Write
	case op == bench.OpRead || op == bench.OpRandRead:
		r = sw.Read
	}
	if r == nil {
		return 0
	}
	return r.BestBytesPerSecond
}

// workloadSummary is a line for the Validated condition.
func workloadSummary(ws []v1alpha1.WorkloadResult) string {
	var parts []string
	for _, w := range ws {
		switch {
		case w.SharePercent != nil:
			parts = append(parts, fmt.Sprintf("%s %d%%", w.Name, *w.SharePercent))
		case w.OpsPerSecond != nil:
			parts = append(parts, fmt.Sprintf("%s %d/s", w.Name, *w.OpsPerSecond))
		}
	}
	return strings.Join(parts, ", ")
}

// workloadName is the name of a workload result in the status: the kind's name and the
// operation, e.g. "metadata/create".
func workloadName(kind string, op bench.Operation) string {
	for _, w := range workloadKinds {
		if w.kind == kind {
			return w.name + "/" + string(op)
		}
	}
	return kind + "/" + string(op)
}
