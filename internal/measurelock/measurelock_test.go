package measurelock

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func bb(name string) *v1alpha1.BurstBuffer {
	return &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: name, UID: types.UID("uid-" + name)}}
}

// fixture: burst buffers a, b and c exist; pods says which foreign measuring pods run.
func fixture(t *testing.T, objs ...client.Object) (Locks, map[string][]string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	objs = append(objs, bb("a"), bb("b"), bb("c"))
	pods := map[string][]string{}
	k := Locks{
		Client:    fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(),
		Namespace: "ops",
		Wants:     func(*v1alpha1.BurstBuffer) bool { return true },
		ForeignPods: func(_ context.Context, _ *v1alpha1.BurstBuffer, node string) ([]string, error) {
			return pods[node], nil
		},
	}
	return k, pods
}

func lease(t *testing.T, k Locks, node string) coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	if err := k.Get(context.Background(), node, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func queueOf(l coordinationv1.Lease) string {
	var s []string
	for _, e := range ReadQueue(&l) {
		s = append(s, e.BB)
	}
	return strings.Join(s, ",")
}

func TestAcquireFreeHeldRenewed(t *testing.T) {
	ctx := context.Background()
	k, _ := fixture(t)
	a := bb("a")
	if w, err := k.Acquire(ctx, a, "n1", t0); err != nil || w != nil {
		t.Fatalf("a free node: %+v %v", w, err)
	}
	l := lease(t, k, "n1")
	if !Holds(&l, a) || l.Annotations[AnnotationNode] != "n1" || *l.Spec.LeaseTransitions != 1 {
		t.Fatalf("lease %+v", l)
	}
	// Kept without a write while more than half is left; renewed after.
	rv := l.ResourceVersion
	if w, err := k.Acquire(ctx, a, "n1", t0.Add(Duration/4)); err != nil || w != nil {
		t.Fatal(w, err)
	}
	if l := lease(t, k, "n1"); l.ResourceVersion != rv {
		t.Error("a held lock with time left was written")
	}
	later := t0.Add(Duration * 3 / 4)
	if w, err := k.Acquire(ctx, a, "n1", later); err != nil || w != nil {
		t.Fatal(w, err)
	}
	if l := lease(t, k, "n1"); !l.Spec.RenewTime.Time.Equal(later) || *l.Spec.LeaseTransitions != 1 {
		t.Errorf("renewed %v, transitions %d", l.Spec.RenewTime, *l.Spec.LeaseTransitions)
	}
}

// RenewHeld renews the locks a burst buffer holds from its first node on, all at once, and
// stops at the first node that is not its own (another's, one run out): a lock it holds after
// a node it waits for is left to run out.
func TestRenewHeld(t *testing.T) {
	ctx := context.Background()
	k, _ := fixture(t)
	a, b := bb("a"), bb("b")
	for _, n := range []string{"n1", "n2", "n4", "n6"} {
		if w, err := k.Acquire(ctx, a, n, t0); err != nil || w != nil {
			t.Fatal(n, w, err)
		}
	}
	if w, err := k.Acquire(ctx, b, "n3", t0); err != nil || w != nil {
		t.Fatal(w, err)
	}
	later := t0.Add(Duration * 3 / 4)
	rv4 := lease(t, k, "n4").ResourceVersion
	held, waits, err := k.RenewHeld(ctx, a, []string{"n1", "n2", "n3", "n4"}, later)
	if err != nil || held != 2 || len(waits) != 2 || waits[0] != nil || waits[1] != nil {
		t.Fatalf("held %d, waits %v, %v: want the first two renewed", held, waits, err)
	}
	for _, n := range []string{"n1", "n2"} {
		if l := lease(t, k, n); !Holds(&l, a) || !l.Spec.RenewTime.Time.Equal(later) {
			t.Errorf("%s not renewed: %v", n, l.Spec.RenewTime)
		}
	}
	if l := lease(t, k, "n4"); l.ResourceVersion != rv4 {
		t.Error("a lock held after the node a waits for was renewed")
	}
	// All held: all renewed. One run out, or a node never locked, ends the head.
	if held, _, err := k.RenewHeld(ctx, a, []string{"n1", "n2", "n4", "n6"}, later); err != nil || held != 4 {
		t.Errorf("all held: %d, %v", held, err)
	}
	if held, _, err := k.RenewHeld(ctx, a, []string{"n6", "n1"}, t0.Add(3*Duration)); err != nil || held != 0 {
		t.Errorf("run out: %d, %v", held, err)
	}
	if held, _, err := k.RenewHeld(ctx, a, []string{"n1", "n9", "n2"}, later); err != nil || held != 1 {
		t.Errorf("never locked: %d, %v", held, err)
	}
}

func TestQueueInArrivalOrder(t *testing.T) {
	ctx := context.Background()
	k, _ := fixture(t)
	a, b, c := bb("a"), bb("b"), bb("c")
	if w, _ := k.Acquire(ctx, a, "n1", t0); w != nil {
		t.Fatal(w)
	}
	wb, err := k.Acquire(ctx, b, "n1", t0)
	if err != nil || wb == nil || wb.Holder != "jobs/a" || wb.Ahead != 0 || !wb.Until.Equal(t0.Add(Duration)) {
		t.Fatalf("b waits for a: %+v %v", wb, err)
	}
	if !strings.Contains(wb.Message(), "being measured by burst buffer jobs/a") {
		t.Errorf("message %q", wb.Message())
	}
	if d := wb.Requeue(t0.Add(Duration - 10*time.Second)); d != 11*time.Second {
		t.Errorf("requeue %v, want when the lease runs out", d)
	}
	wc, _ := k.Acquire(ctx, c, "n1", t0)
	if wc == nil || wc.Ahead != 1 {
		t.Fatalf("c behind b: %+v", wc)
	}
	if q := queueOf(lease(t, k, "n1")); q != "jobs/b,jobs/c" {
		t.Fatalf("queue %q", q)
	}
	// a releases: the node goes to b, the first waiter, not to c.
	held, queued, err := k.Held(ctx, a, []string{"n1", "n2"})
	if err != nil || len(held) != 1 || len(queued) != 0 {
		t.Fatalf("held %d queued %d %v", len(held), len(queued), err)
	}
	if err := k.Release(ctx, a, held, queued, true); err != nil {
		t.Fatal(err)
	}
	wc, _ = k.Acquire(ctx, c, "n1", t0.Add(time.Minute))
	if wc == nil || wc.First != "jobs/b" || wc.Ahead != 1 {
		t.Fatalf("c: the free node is kept for b: %+v", wc)
	}
	if w, err := k.Acquire(ctx, b, "n1", t0.Add(time.Minute)); err != nil || w != nil {
		t.Fatalf("b takes it: %+v %v", w, err)
	}
	l := lease(t, k, "n1")
	if !Holds(&l, b) || queueOf(l) != "jobs/c" || *l.Spec.LeaseTransitions != 2 {
		t.Fatalf("b holds, c waits: %q %d", queueOf(l), *l.Spec.LeaseTransitions)
	}
	// c, queued, leaves the queue when it releases with leaveQueues.
	held, queued, _ = k.Held(ctx, c, []string{"n1"})
	if len(held) != 0 || len(queued) != 1 {
		t.Fatalf("c: held %d queued %d", len(held), len(queued))
	}
	if err := k.Release(ctx, c, held, queued, true); err != nil {
		t.Fatal(err)
	}
	if q := queueOf(lease(t, k, "n1")); q != "" {
		t.Errorf("queue after c left: %q", q)
	}
}

func TestFreedByAGoneOrExpiredHolder(t *testing.T) {
	ctx := context.Background()
	gone := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "gone", UID: "uid-gone"}}
	k0, _ := fixture(t)
	l := k0.NewLease("n1")
	Take(&l, gone, t0)
	l2 := k0.NewLease("n2")
	Take(&l2, bb("c"), t0.Add(-2*Duration)) // c exists, but its lease ran out
	k, pods := fixture(t, &l, &l2)
	a := bb("a")
	if w, err := k.Acquire(ctx, a, "n1", t0); err != nil || w != nil {
		t.Fatalf("a deleted holder's node: %+v %v", w, err)
	}
	pods["n2"] = []string{"jobs/c-probe"}
	w, err := k.Acquire(ctx, a, "n2", t0)
	if err != nil || w == nil || len(w.Pods) != 1 {
		t.Fatalf("a run-out lease with the holder's pods still running: %+v %v", w, err)
	}
	if !strings.Contains(w.Message(), "measuring pods of another burst buffer still run there: jobs/c-probe") {
		t.Errorf("message %q", w.Message())
	}
	delete(pods, "n2")
	if w, err := k.Acquire(ctx, a, "n2", t0); err != nil || w != nil {
		t.Fatalf("pods gone: %+v %v", w, err)
	}
	if l := lease(t, k, "n2"); !Holds(&l, a) || queueOf(l) != "" {
		t.Errorf("a holds n2 and left its queue: %q", queueOf(l))
	}
}

func TestWaitersThatNoLongerWantLeave(t *testing.T) {
	ctx := context.Background()
	k, _ := fixture(t)
	k.Wants = func(bb *v1alpha1.BurstBuffer) bool { return bb.Name != "b" }
	a, b, c := bb("a"), bb("b"), bb("c")
	_, _ = k.Acquire(ctx, a, "n1", t0)
	_, _ = k.Acquire(ctx, b, "n1", t0)
	w, _ := k.Acquire(ctx, c, "n1", t0)
	if w == nil || w.Ahead != 0 || queueOf(lease(t, k, "n1")) != "jobs/c" {
		t.Fatalf("b no longer wants: %+v, queue %q", w, queueOf(lease(t, k, "n1")))
	}
}

func TestLeaveQueues(t *testing.T) {
	ctx := context.Background()
	k, _ := fixture(t)
	a, b := bb("a"), bb("b")
	for _, n := range []string{"n1", "n2"} {
		_, _ = k.Acquire(ctx, a, n, t0)
		_, _ = k.Acquire(ctx, b, n, t0)
	}
	if err := k.LeaveQueues(ctx, b, []string{"n2", "n3"}); err != nil {
		t.Fatal(err)
	}
	if q1, q2 := queueOf(lease(t, k, "n1")), queueOf(lease(t, k, "n2")); q1 != "jobs/b" || q2 != "" {
		t.Errorf("queues %q %q", q1, q2)
	}
}

func TestName(t *testing.T) {
	if Name("w1") != "beeburst-measure-w1" {
		t.Error(Name("w1"))
	}
	if n := Name(strings.Repeat("x", 250)); len(n) > 253 || !strings.HasPrefix(n, "beeburst-measure-") {
		t.Errorf("long name %q", n)
	}
}
