package controllers

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// The warnings about waiting pods are listed once per namespace per startRecheck, whatever
// the number of pods waiting there and of visits looking at them; visits that find the list
// stale at the same moment share one list. The fake client stands in for the API server
// because the test counts the lists; the envtest suite
// (podstart_test.go) reads the kubelet's real events through the same path.
func TestPodWarningsListedOncePerNamespace(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	pod := func(ns, name string, age time.Duration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(-age)),
			Labels: map[string]string{v1alpha1.LabelBurstBuffer: "bb", nodetask.LabelBurstBufferNamespace: "jobs",
				nodetask.LabelManagedBy: nodetask.ManagedBy, nodetask.LabelComponent: nodetask.ComponentSweep}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "agent", Image: "agent"}},
				Volumes: []corev1.Volume{{Name: "storage", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nvme"}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
	}
	event := func(p *corev1.Pod, typ, reason, msg string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "." + reason}, Type: typ, Reason: reason,
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID}, Message: msg}
	}
	const missing = `MountVolume.SetUp failed for volume "storage" : hostPath type check failed: /nvme is not a directory`
	w1, w2, w3 := pod("jobs", "w1", 10*time.Second), pod("jobs", "w2", 5*time.Second), pod("jobs", "w3", 3*time.Second)
	young, elsewhere := pod("jobs", "young", time.Second), pod("other", "x1", 10*time.Second)
	var mu sync.Mutex
	lists := map[string]int{}
	c := fakeClientWith(w1, w2, w3, young, elsewhere,
		event(w1, corev1.EventTypeWarning, "FailedMount", missing),
		event(w2, corev1.EventTypeNormal, "Scheduled", "Successfully assigned jobs/w2 to n1"),
		event(elsewhere, corev1.EventTypeWarning, "FailedMount", missing)).
		WithIndex(&corev1.Event{}, "involvedObject.kind", func(o client.Object) []string { return []string{o.(*corev1.Event).InvolvedObject.Kind} }).
		WithIndex(&corev1.Event{}, "type", func(o client.Object) []string { return []string{o.(*corev1.Event).Type} }).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.EventList); ok {
				o := (&client.ListOptions{}).ApplyOptions(opts)
				mu.Lock()
				lists[o.Namespace]++
				mu.Unlock()
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	r := &BurstBufferReconciler{Client: c, APIReader: c, Now: func() time.Time { return now }}
	ctx := context.Background()
	why := func(p *corev1.Pod) *nodetask.Blocked {
		t.Helper()
		b, _, _, err := r.whyNotStarted(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	count := func(ns string) int {
		mu.Lock()
		defer mu.Unlock()
		return lists[ns]
	}

	if b := why(w1); b == nil || b.Cause != nodetask.HostPathMissing {
		t.Errorf("w1: %+v, want HostPathMissing", b)
	}
	for _, p := range []*corev1.Pod{w2, w3, young} {
		if b := why(p); b != nil {
			t.Errorf("%s: %+v, want none", p.Name, b)
		}
	}
	if b := why(elsewhere); b == nil {
		t.Error("x1 in namespace other: want HostPathMissing")
	}
	if count("jobs") != 1 || count("other") != 1 {
		t.Fatalf("lists %v: want one per namespace for its four waiting pods", lists)
	}

	// Past startRecheck, two visits at once: one list between them.
	now = now.Add(startRecheck)
	var wg sync.WaitGroup
	for _, p := range []*corev1.Pod{w2, w3} {
		wg.Go(func() { why(p) })
	}
	wg.Wait()
	if count("jobs") != 2 {
		t.Errorf("%d lists of jobs after startRecheck with two visits at once, want 2 in all", count("jobs"))
	}
	// forget (a verdict that waits for its siblings' kubelets) reads again at once.
	r.podEvents.forget("jobs")
	why(w2)
	if count("jobs") != 3 || !r.podEvents.readAt("jobs").Equal(now) {
		t.Errorf("%d lists of jobs after forget, read at %v", count("jobs"), r.podEvents.readAt("jobs"))
	}
}

// An entry made by one visit and not listed yet is not dropped by another namespace's visit:
// the first visit's list must land where the next visit of its namespace reads it.
func TestPodWarningsFreshEntryKept(t *testing.T) {
	var c podEvents
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	lists := map[string]int{}
	list := func(_ context.Context, ns string) ([]corev1.Event, error) { lists[ns]++; return nil, nil }
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name)}}
	}
	// Visit A of namespace a has made its entry and not yet taken it (of() in two halves).
	a := c.entry("a", now)
	// Visit B of namespace b runs in between.
	if _, _, err := c.of(context.Background(), pod("b", "b1"), now, list); err != nil {
		t.Fatal(err)
	}
	// Visit A lists, as of() does.
	a.listing.Lock()
	_, _ = list(context.Background(), "a")
	a.byPod, a.at = map[types.UID][]corev1.Event{}, now
	a.listing.Unlock()
	// The next visit of namespace a, well within startRecheck, reads A's list.
	if _, _, err := c.of(context.Background(), pod("a", "a2"), now.Add(10*time.Millisecond), list); err != nil {
		t.Fatal(err)
	}
	if lists["a"] != 1 {
		t.Errorf("namespace a listed %d times within startRecheck, want 1 (lists %v)", lists["a"], lists)
	}
	// An entry nobody read for more than a minute still goes.
	if _, _, err := c.of(context.Background(), pod("b", "b2"), now.Add(2*time.Minute), list); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.read["a"]; ok {
		t.Error("namespace a's entry kept after two minutes unread")
	}
}
