package controllers

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// A burst buffer just created is visited before the visits queued for the others; one that a
// restarted manager lists is not an arrival. The queue is controller-runtime's own.
func TestArrivalsFirst(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("arrivals")
	defer q.ShutDown()
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	bb := func(name string) *v1alpha1.BurstBuffer {
		return &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	// Visits of others, queued first (a pod's report, a requeue), at priority 0.
	q.AddWithOpts(priorityqueue.AddOpts{Priority: visitPriority}, req("busy-1"), req("busy-2"))
	ctx := context.Background()
	arrivalsFirst.Create(ctx, event.CreateEvent{Object: bb("listed"), IsInInitialList: true}, q)
	arrivalsFirst.Create(ctx, event.CreateEvent{Object: bb("new")}, q)
	// The controller's own handler queues the arrival too, at priority 0: the higher stays.
	q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(0)}, req("new"))

	if q.Len() != 3 {
		t.Fatalf("queue holds %d items, want 3 (the listed burst buffer is not queued by this handler)", q.Len())
	}
	got, prio, _ := q.GetWithPriority()
	if got != req("new") || prio != arrivalPriority {
		t.Errorf("first out: %s at priority %d, want ns/new at %d", got, prio, arrivalPriority)
	}
	q.Done(got)
	if got, prio, _ := q.GetWithPriority(); got != req("busy-1") || prio != 0 {
		t.Errorf("second out: %s at priority %d, want ns/busy-1 at 0", got, prio)
	}
}
