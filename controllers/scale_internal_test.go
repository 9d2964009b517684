package controllers

import (
	"context"
	"fmt"
	"sort"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/measurelock"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// What a visit reads must not grow with the cluster: these functions run on every visit (or
// every lock event) of every burst buffer, so reading all nodes, all locks or all pods there
// costs the manager in proportion to burst buffers x cluster (make bench-scale measures it).
// The fake client records the lists; the cache's field indexes are registered as the manager
// registers them.

// listRecorder is a fake client over objs with the manager's field indexes, recording every
// List: its kind and whether a field selector narrowed it.
type listRecorder struct {
	client.Client
	lists []string
}

func newListRecorder(t *testing.T, objs ...client.Object) *listRecorder {
	t.Helper()
	lr := &listRecorder{}
	lr.Client = fakeClientWith(objs...).
		WithStatusSubresource(&v1alpha1.BurstBuffer{}).
		WithIndex(&corev1.Pod{}, podNodeField, podNode).
		WithIndex(&corev1.Pod{}, podBurstBufferField, podBurstBuffer).
		WithIndex(&v1alpha1.BurstBuffer{}, bbNodeField, burstBufferNodes).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			o := client.ListOptions{}
			o.ApplyOptions(opts)
			kind := fmt.Sprintf("%T", list)
			if o.FieldSelector != nil && !o.FieldSelector.Empty() {
				kind += " by " + o.FieldSelector.String()
			}
			lr.lists = append(lr.lists, kind)
			return c.List(ctx, list, opts...)
		}}).Build()
	return lr
}

func simNodes(n int) []client.Object {
	var out []client.Object
	for i := 0; i < n; i++ {
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%03d", i)}})
	}
	return out
}

func bbOn(name string, nodes ...string) *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: name, UID: types.UID("uid-" + name)}}
	for _, n := range nodes {
		bb.Status.Nodes = append(bb.Status.Nodes, v1alpha1.NodeStatus{Name: n})
	}
	return bb
}

// Once its nodes are chosen, a visit reads those nodes, not the cluster's.
func TestReconcileNodesReadsItsOwnNodes(t *testing.T) {
	c := newListRecorder(t, simNodes(200)...)
	r := &BurstBufferReconciler{Client: c}
	bb := bbOn("a", "n007", "n150", "gone")
	s := &scope{bb: bb, nodes: []string{"n007", "n150", "gone"}}
	if _, done, err := r.reconcileNodes(context.Background(), s); err != nil || !done {
		t.Fatalf("done %v, err %v", done, err)
	}
	if len(c.lists) > 0 {
		t.Errorf("listed %v", c.lists)
	}
	var got []string
	for _, n := range s.nodeObjs {
		got = append(got, n.Name)
	}
	if fmt.Sprint(got) != "[n007 n150]" {
		t.Errorf("node objects %v, want [n007 n150] (a node that is gone is left out)", got)
	}
}

// The locks a burst buffer holds or queues at are its own nodes', read one by one.
func TestHeldLeasesReadsItsOwnNodesLocks(t *testing.T) {
	mine, other := bbOn("a", "n001", "n002", "n003"), bbOn("b", "n002")
	objs := []client.Object{}
	for i := 0; i < 100; i++ {
		r := &BurstBufferReconciler{CacheNamespace: "ops"}
		l := r.locks().NewLease(fmt.Sprintf("n%03d", i))
		switch i {
		case 1, 3:
			measurelock.Take(&l, mine, metav1.Now().Time)
		case 2:
			measurelock.Take(&l, other, metav1.Now().Time)
			measurelock.WriteQueue(&l, []measurelock.Entry{measurelock.EntryOf(mine)})
		case 50:
			measurelock.Take(&l, other, metav1.Now().Time)
		}
		objs = append(objs, &l)
	}
	c := newListRecorder(t, objs...)
	r := &BurstBufferReconciler{Client: c, CacheNamespace: "ops"}
	held, queued, err := r.heldLeases(context.Background(), mine)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ls []coordinationv1.Lease) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Annotations[measurelock.AnnotationNode])
		}
		sort.Strings(out)
		return out
	}
	if fmt.Sprint(names(held)) != "[n001 n003]" || fmt.Sprint(names(queued)) != "[n002]" {
		t.Errorf("held %v, queued %v; want [n001 n003] and [n002]", names(held), names(queued))
	}
	if len(c.lists) > 0 {
		t.Errorf("listed %v", c.lists)
	}
}

// Another burst buffer's measuring pods on a node, and the burst buffers a node's lock event
// wakes, are looked up by node.
func TestLookupsByNode(t *testing.T) {
	pod := func(bb, name, node, component string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: name, Labels: map[string]string{
				v1alpha1.LabelBurstBuffer: bb, nodetask.LabelManagedBy: nodetask.ManagedBy, nodetask.LabelComponent: component}},
			Spec:   corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c"}}},
			Status: corev1.PodStatus{Phase: phase},
		}
	}
	a, b, done := bbOn("a", "n001", "n002"), bbOn("b", "n002", "n003"), bbOn("c", "n002")
	now := metav1.Now()
	done.Status.ValidationEndTime = &now
	objs := []client.Object{a, b, done,
		pod("b", "b-probe-dev-0", "n002", nodetask.ComponentProbeDevice, corev1.PodRunning),
		pod("b", "b-sweep-0-0", "n002", nodetask.ComponentSweep, corev1.PodSucceeded),
		pod("b", "b-probe-dev-1", "n003", nodetask.ComponentProbeDevice, corev1.PodRunning),
		pod("a", "a-probe-dev-1", "n002", nodetask.ComponentProbeDevice, corev1.PodRunning),
	}
	for i := 0; i < 50; i++ {
		objs = append(objs, pod("x", fmt.Sprintf("x-sweep-0-%d", i), fmt.Sprintf("m%03d", i), nodetask.ComponentSweep, corev1.PodRunning))
	}
	c := newListRecorder(t, objs...)
	r := &BurstBufferReconciler{Client: c, CacheNamespace: "ops"}
	ctx := context.Background()

	pods, err := r.foreignMeasuringPods(ctx, a, "n002")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pods) != "[jobs/b-probe-dev-0]" {
		t.Errorf("foreign measuring pods on n002: %v", pods)
	}
	l := r.locks().NewLease("n002")
	reqs := r.burstBuffersWaitingForLock(ctx, &l)
	var woken []string
	for _, q := range reqs {
		woken = append(woken, q.Name)
	}
	sort.Strings(woken)
	if fmt.Sprint(woken) != "[a b]" {
		t.Errorf("a lock event of n002 wakes %v, want [a b] (c has ended validation)", woken)
	}
	for _, l := range c.lists {
		if l != "*v1.PodList by spec.nodeName=n002" && l != "*v1alpha1.BurstBufferList by status.nodes.name=n002" {
			t.Errorf("a list not narrowed by node: %s", l)
		}
	}
}

// A burst buffer's own pods are looked up by it, not found among every pod of its namespace.
func TestPodsOfABurstBuffer(t *testing.T) {
	pod := func(ns, name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	task := func(bb string) map[string]string {
		return map[string]string{v1alpha1.LabelBurstBuffer: bb, nodetask.LabelManagedBy: nodetask.ManagedBy}
	}
	objs := []client.Object{
		pod("jobs", "a-prep-0", task("a")), pod("jobs", "a-sweep-0-0", task("a")),
		pod("other", "a-prep-0", task("a")), // a burst buffer of the same name elsewhere
		pod("jobs", "job-0", map[string]string{v1alpha1.LabelBurstBuffer: "a"}),
	}
	for i := 0; i < 50; i++ {
		objs = append(objs, pod("jobs", fmt.Sprintf("b-prep-%d", i), task("b")))
	}
	c := newListRecorder(t, objs...)
	r := &BurstBufferReconciler{Client: c}
	pods, err := r.taskPods(context.Background(), bbOn("a"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[jobs/a-prep-0 jobs/a-sweep-0-0]" {
		t.Errorf("task pods of jobs/a: %v", names)
	}
	if fmt.Sprint(c.lists) != "[*v1.PodList by burstBuffer=jobs/a]" {
		t.Errorf("lists %v, want one narrowed to the burst buffer", c.lists)
	}
	if got := podBurstBuffer(pod("beeburst-system", "jobs-a-clean-0", map[string]string{
		v1alpha1.LabelBurstBuffer: "a", nodetask.LabelBurstBufferNamespace: "jobs"})); fmt.Sprint(got) != "[jobs/a]" {
		t.Errorf("a task pod run in the operator's namespace is indexed as %v, want [jobs/a]", got)
	}
}
