package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// A node's cached device figures stand for this burst buffer's probe only when they are
// fresh at the start of its validation - decided once, not again on each visit: a figure
// fresh then that expires while the links are measured is still reused, rather than sending a
// device probe beside this burst buffer's own link probes - of the same Node object (not a
// machine registered again under its name) and probed the same way (not the quick profile's
// short runs for a standard-profile burst buffer). The clock in the middle of stage 2 is the
// test's, on the fake client.
func TestCachedFiguresStandForThisProbe(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Name: "bb"},
		Spec: v1alpha1.BurstBufferSpec{Storage: v1alpha1.StorageSpec{Path: "/nvme"},
			Validation: v1alpha1.ValidationSpec{ReuseComponentResultsFor: "1h"}}}
	f := nodecache.Figures{Node: "n1", NodeUID: "uid-1", StoragePath: "/nvme", MeasuredTime: t0, MeasuredBy: "jobs/earlier",
		Method:                    nodetask.DeviceProbeMethod(bb),
		DeviceWriteBytesPerSecond: 150e6, DeviceReadBytesPerSecond: 300e6, Conditions: &nodecache.Conditions{Exclusive: true}}
	cm, err := nodecache.ConfigMap("ops", f)
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(70 * time.Minute)
	r := &BurstBufferReconciler{Client: fakeClientWith(cm).Build(), CacheNamespace: "ops", Now: func() time.Time { return now }}
	s := &scope{bb: bb, nodes: []string{"n1"}}

	if _, ok := r.reusableFigures(context.Background(), s, "n1"); ok {
		t.Error("a figure 70 min old reused with a 1h window before the validation started")
	}
	start := metav1.NewTime(t0.Add(50 * time.Minute))
	bb.Status.ValidationStartTime = &start
	if got, ok := r.reusableFigures(context.Background(), s, "n1"); !ok || got.DeviceWriteBytesPerSecond != 150e6 {
		t.Error("a figure 50 min old when the validation started is not reused 20 min later")
	}
	start = metav1.NewTime(t0.Add(61 * time.Minute))
	if _, ok := r.reusableFigures(context.Background(), s, "n1"); ok {
		t.Error("a figure already older than the window when the validation started is reused")
	}
	start = metav1.NewTime(t0.Add(50 * time.Minute))
	s.nodeObjs = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "replaced"}}}
	if _, ok := r.reusableFigures(context.Background(), s, "n1"); ok {
		t.Error("the figures of a node replaced under the same name (another Node UID) are reused")
	}
	s.nodeObjs = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-1"}}}
	if _, ok := r.reusableFigures(context.Background(), s, "n1"); !ok {
		t.Error("the figures of the same Node object are not reused")
	}

	standard := bb.DeepCopy()
	standard.Spec.Validation.Profile = v1alpha1.ProfileStandard
	if _, ok := r.reusableFigures(context.Background(), &scope{bb: standard, nodes: s.nodes, nodeObjs: s.nodeObjs}, "n1"); ok {
		t.Error("a quick probe's figures reused by a burst buffer that probes the standard way (longer runs)")
	}

	now = t0.Add(-time.Minute)
	start = metav1.NewTime(now)
	if _, ok := r.reusableFigures(context.Background(), s, "n1"); ok {
		t.Error("a figure from the future is reused")
	}
}
