package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// storageBencher is an engine with a component test of its own storage targets (the beegfs
// engine's StorageBench), run in stage 2 beside fio's device probes.
type storageBencher interface {
	StorageBench(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string, p beegfs.StorageBenchPlan) (beegfs.StorageBenchOutcome, error)
}

// storageBenchRun is an ended StorageBench run, as stage 2 publishes it.
type storageBenchRun struct {
	plan    beegfs.StorageBenchPlan
	outcome beegfs.StorageBenchOutcome
	// notStarted: the time budget ran out before it (outcome.Failure says so); not a
	// failed component test.
	notStarted bool
}

// runStorageBench runs the engine's StorageBench once the device probes are done: both
// load the same devices, and run at once each would measure a share. Sized from the fio
// figures, to run about as long as a device probe. Engines without one: nil, done.
func (r *BurstBufferReconciler) runStorageBench(ctx context.Context, s *scope, figures map[string]nodecache.Figures) (*storageBenchRun, bool, error) {
	sb, ok := s.engine.(storageBencher)
	if !ok || s.bb.Spec.Engine != v1alpha1.EngineBeeGFS {
		return nil, true, nil
	}
	var fastest, leastFree int64
	for _, n := range s.nodes {
		f := figures[n]
		fastest = max(fastest, f.DeviceWriteBytesPerSecond)
		if f.FreeBytes > 0 && (leastFree == 0 || f.FreeBytes < leastFree) {
			leastFree = f.FreeBytes
		}
	}
	// 3 s quick, not the device probes' 2 s: 3 s is what ran against a real BeeGFS (docs/beegfs.md).
	seconds := 3
	if s.bb.Spec.Validation.Profile == v1alpha1.ProfileStandard {
		seconds = 10
	}
	plan := beegfs.StorageBenchPlanFor(beegfs.TargetsPerNode(s.bb), fastest, leastFree, seconds)
	// StorageBench measures the nodes' devices: only while this burst buffer holds them.
	var pods corev1.PodList
	if err := r.List(ctx, &pods, ofBurstBuffer(s.bb), client.MatchingLabels{
		nodetask.LabelManagedBy: nodetask.ManagedBy, nodetask.LabelComponent: nodetask.ComponentStorageBench,
	}); err != nil {
		return nil, false, err
	}
	if len(pods.Items) == 0 {
		if s.lastLook {
			// Past the budget nothing new starts (runMeasuring's rule for the engine's pods);
			// stage 2 is published with fio's and iperf3's figures, which ended in time.
			return &storageBenchRun{plan: plan, notStarted: true, outcome: beegfs.StorageBenchOutcome{Done: true,
				Failure: fmt.Sprintf("not started: validation.timeBudget %s ran out before it", budget(s.bb))}}, true, nil
		}
		if err := r.acquireNodeLocks(ctx, s); err != nil || !s.locks.held {
			return nil, false, err
		}
	}
	out, err := sb.StorageBench(ctx, s.bb, s.nodes, plan)
	if err != nil || !out.Done {
		s.locks.busy = true
		return nil, false, err
	}
	return &storageBenchRun{plan: plan, outcome: out}, true, nil
}

// storageBenchFigures puts a node's StorageBench sums beside the node's documented device
// figures (the same ones as fio's), with their warnings.
func storageBenchFigures(run *storageBenchRun, nc *v1alpha1.NodeComponents) []v1alpha1.Warning {
	if run == nil || run.outcome.Failure != "" {
		return nil
	}
	n, ok := run.outcome.Result.Nodes[nc.Name]
	if !ok {
		return nil
	}
	nc.StorageBenchWrite = &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: positive(n.Write)}
	nc.StorageBenchRead = &v1alpha1.ComponentFigure{MeasuredBytesPerSecond: positive(n.Read)}
	if nc.DeviceWrite != nil {
		nc.StorageBenchWrite.DocumentedBytesPerSecond, nc.StorageBenchWrite.Source = nc.DeviceWrite.DocumentedBytesPerSecond, nc.DeviceWrite.Source
	}
	if nc.DeviceRead != nil {
		nc.StorageBenchRead.DocumentedBytesPerSecond, nc.StorageBenchRead.Source = nc.DeviceRead.DocumentedBytesPerSecond, nc.DeviceRead.Source
	}
	return append(belowDocumented(nc.Name, "storagebench-write", nc.StorageBenchWrite),
		belowDocumented(nc.Name, "storagebench-read", nc.StorageBenchRead)...)
}

// storageBenchSummary is the run's part of status.limits.components, and a warning if it gave
// no figures: stage 2 goes on with fio's.
func (r *BurstBufferReconciler) storageBenchSummary(run *storageBenchRun) (*v1alpha1.StorageBenchSummary, []v1alpha1.Warning) {
	if run == nil {
		return nil, nil
	}
	sum := run.outcome.Summary(run.plan, r.Now())
	if run.outcome.Failure == "" || run.notStarted {
		return sum, nil // not started: the ValidationCutShort warning says why
	}
	return sum, []v1alpha1.Warning{{
		Reason: v1alpha1.WarningComponentTestFailed, Component: "storagebench",
		Message: fmt.Sprintf("BeeGFS StorageBench gave no figures; stage 2 has fio's device figures only: %s", run.outcome.Failure),
	}}
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
		conditions.Set(s.bb, v1alpha1.ConditionComponentsMeasured, metav1.ConditionFalse, v1alpha1.ReasonProbing,
			fmt.Sprintf("devices of %d node(s) and %d link pair(s) measured; BeeGFS StorageBench running on the storage targets", len(s.nodes), len(s.stage2.pairs)))
		return ctrl.Result{}, false, nil
	}
	s.stage2.sb = sb
	return ctrl.Result{}, true, nil
}
