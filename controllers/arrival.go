package controllers

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// arrivalPriority is the queue priority of a burst buffer's first visit; every other visit
// has priority 0 (visitPriority).
const arrivalPriority = 10

// visitPriority is the priority of a visit's requeue, whatever the priority of the visit:
// only the first visit goes ahead of the others.
var visitPriority = ptr.To(0)

// arrivalsFirst puts a burst buffer that was just created ahead of the visits queued for the
// others (most of them their pods' status reports): its first visit writes stage 1 and its
// first conditions, so `kubectl get bb` says what it is doing within seconds however many
// burst buffers the operator is busy with. The controller's own handler (For) queues it too,
// at priority 0; the queue keeps the higher. The burst buffers a restarted manager lists are
// not arrivals: they keep the low priority of the initial list.
var arrivalsFirst = handler.Funcs{
	CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
		if !ok || e.IsInInitialList || e.Object == nil {
			return
		}
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(arrivalPriority)}, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
	},
}
