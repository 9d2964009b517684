package controllers

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// A visit that needs a BeeGFS port shift while another visit is choosing one does not wait
// for it: it writes nothing and comes back after shiftRecheck, so its worker serves other
// burst buffers meanwhile. The other visit's hold is the test's own (two visits reaching the
// choice at the same instant cannot be arranged against a real API server).
func TestPortShiftChoiceDoesNotHoldWorkers(t *testing.T) {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb", UID: "u1"},
		Spec: v1alpha1.BurstBufferSpec{Engine: v1alpha1.EngineBeeGFS, Nodes: v1alpha1.NodesSpec{Count: 2}}}
	c := fakeClientWith(bb).WithStatusSubresource(bb).Build()
	r := &BurstBufferReconciler{Client: c}
	if !needsPortShift(bb) {
		t.Fatal("a new beegfs burst buffer needs a port shift")
	}

	key := types.NamespacedName{Namespace: "jobs", Name: "bb"}
	var before v1alpha1.BurstBuffer
	if err := c.Get(context.Background(), key, &before); err != nil {
		t.Fatal(err)
	}

	r.shifts.Lock() // another visit is choosing
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != shiftRecheck {
		t.Errorf("requeue after %s, want %s", res.RequeueAfter, shiftRecheck)
	}
	if r.shifts.TryLock() {
		t.Error("the visit released a hold that was not its own")
	}
	var got v1alpha1.BurstBuffer
	if err := c.Get(context.Background(), key, &got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != before.ResourceVersion {
		t.Errorf("the visit wrote while another chose a shift: finalizers %v, resourceVersion %s", got.Finalizers, got.ResourceVersion)
	}
	r.shifts.Unlock()
}
