package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/sizing"
)

// reconcileChunkSizeVerdict is a phase of Reconcile: with layout.chunkSizePolicy Auto it
// sets the ChunkSizeChosen condition on the first visit (Unknown until the sizes are
// measured), and gives it its final word when validation ended before the tuning did (the
// time budget ran out, or nothing was measured): the sizes measured stay in
// status.chunkSize, and the engine's last task sets the root's size and removes the
// candidates' directories. Never holds up the phases after it.
func (r *BurstBufferReconciler) reconcileChunkSizeVerdict(ctx context.Context, s *scope) (ctrl.Result, bool, error) {
	bb := s.bb
	if bb.Spec.Layout.ChunkSizePolicy != v1alpha1.ChunkSizeAuto {
		return ctrl.Result{}, true, nil
	}
	if meta.FindStatusCondition(bb.Status.Conditions, v1alpha1.ConditionChunkSizeChosen) == nil {
		setChunkCondition(bb, metav1.ConditionUnknown, v1alpha1.ReasonPending,
			"layout.chunkSizePolicy Auto: the chunk sizes are measured after stage 2, before stage 3")
	}
	if chunkSizeSettled(bb) || !validationEnded(bb) {
		return ctrl.Result{}, true, nil
	}
	ended := fmt.Sprintf("validation ended (%s) before the chunk-size tuning did", validationEndedBy(bb))
	setter, ok := s.engine.(chunkSetter)
	var first corev1.Pod
	err := r.Get(ctx, client.ObjectKey{Namespace: nodetask.Namespace(bb), Name: nodetask.Name(bb, nodetask.ComponentChunkSet, 0)}, &first)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, true, err
	}
	if !ok || err != nil || bb.Spec.Engine != v1alpha1.EngineBeeGFS {
		setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned,
			fmt.Sprintf("%s: no size was measured; layout.chunkSize %s stays", ended, sizing.FormatChunk(baselineChunk(bb))))
		return ctrl.Result{}, true, nil
	}
	// The size of a choice being set (status.chunkSize has it from then on), else the
	// baseline: the task also removes the candidates' directories.
	size := baselineChunk(bb)
	if cs := bb.Status.ChunkSize; cs != nil && cs.Size.Value() > 0 {
		size = cs.Size.Value()
	}
	out, err := setter.SetChunkSize(ctx, bb, s.nodes, beegfs.ChunkTask{Index: beegfs.ChunkApplyIndex, Dir: "/", Size: size, RemoveTuning: true})
	if err != nil || !out.Done {
		return ctrl.Result{}, true, err // its end is an event
	}
	cs := bb.Status.ChunkSize
	if cs == nil {
		cs = &v1alpha1.ChunkSizeStatus{Policy: v1alpha1.ChunkSizeAuto, Pattern: bb.Spec.Workload.Pattern}
		bb.Status.ChunkSize = cs
	}
	switch {
	case out.Failure != "":
		size = baselineChunk(bb)
		for i := range cs.Candidates {
			cs.Candidates[i].Chosen = cs.Candidates[i].Size.Value() == size
		}
		cs.Message = shorten.Cut(fmt.Sprintf("%s; setting the root's size failed (%s): layout.chunkSize %s stays", ended, out.Failure, sizing.FormatChunk(size)), 1024)
	case chosen(cs):
		// The choice was made before validation ended; only its task was left.
		scored := 0
		for _, c := range cs.Candidates {
			if c.ScorePerMille != nil {
				scored++
			}
		}
		if scored >= 2 {
			setChunkCondition(bb, metav1.ConditionTrue, v1alpha1.ReasonChunkSizeChosen, cs.Message)
			return ctrl.Result{}, true, nil
		}
	default:
		measured := 0
		for _, c := range cs.Candidates {
			if c.WriteBytesPerSecond != nil || c.WriteOpsPerSecond != nil || c.Message != "" {
				measured++
			}
		}
		cs.Message = shorten.Cut(fmt.Sprintf("%s: %d of %d size(s) measured, nothing chosen; layout.chunkSize %s stays (plan: %s)",
			ended, measured, len(cs.Candidates), sizing.FormatChunk(size), cs.Message), 1024)
	}
	cs.Size = *resource.NewQuantity(size, resource.BinarySI)
	setChunkCondition(bb, metav1.ConditionFalse, v1alpha1.ReasonChunkSizeNotTuned, cs.Message)
	return ctrl.Result{}, true, nil
}

// chosen: status.chunkSize holds a choice (ChooseChunkSize marks one candidate), not the
// progress of the measurements.
func chosen(cs *v1alpha1.ChunkSizeStatus) bool {
	for _, c := range cs.Candidates {
		if c.Chosen {
			return true
		}
	}
	return false
}
