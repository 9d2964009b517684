package controllers

import (
	"context"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// keepFailedPods is how many failed measuring pods of a burst buffer stay for debugging
// (kubectl logs, describe); older ones go.
const keepFailedPods = 5

// tidyMeasuringPods deletes the measuring pods (measuringComponents, nodelock.go) of a burst
// buffer whose measurement is over (validationEnded: measured, cut short, or a measurement
// failed): a succeeded pod's result is in the status, so it is clutter - a quick profile left
// a dozen in the user's namespace. Failed ones stay, the newest keepFailedPods of them, since
// their logs say what went wrong. Engine pods (services, clients, prepare) and copy pods are
// not touched: they are not done when measuring is.
//
// The node locks stay held until the deleted pods are gone (loadsNode), so that the next
// burst buffer does not measure beside their teardown. It returns how many it deleted.
func (r *BurstBufferReconciler) tidyMeasuringPods(ctx context.Context, bb *v1alpha1.BurstBuffer) (int, error) {
	pods, err := r.taskPods(ctx, bb)
	if err != nil {
		return 0, err
	}
	var gone, failed []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if !slices.Contains(measuringComponents, p.Labels[nodetask.LabelComponent]) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			gone = append(gone, p)
		case corev1.PodFailed:
			failed = append(failed, p)
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[j].CreationTimestamp.Before(&failed[i].CreationTimestamp) })
	gone = append(gone, failed[min(len(failed), keepFailedPods):]...)
	err = inParallel(len(gone), func(i int) error { return client.IgnoreNotFound(r.Delete(ctx, gone[i])) })
	return len(gone), err
}

// taskPods are the burst buffer's own pods (task pods, engine services and clients), from
// the cache.
func (r *BurstBufferReconciler) taskPods(ctx context.Context, bb *v1alpha1.BurstBuffer) (*corev1.PodList, error) {
	var pods corev1.PodList
	err := r.List(ctx, &pods, client.InNamespace(bb.Namespace), ofBurstBuffer(bb), client.MatchingLabels{
		v1alpha1.LabelBurstBuffer: bb.Name, nodetask.LabelManagedBy: nodetask.ManagedBy,
	})
	return &pods, err
}
