package controllers

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Another burst buffer's BeeGFS storage service on a node moves data there while that burst
// buffer's job runs on another node: no pod on the node shows it, and a beegfs sweep's mount
// has no device whose counters would. The fake client holds the pods with the manager's
// indexes: what is played here is which pods ran where and when, not the API server.
func TestOtherPodsOnNamesAServiceServingElsewhere(t *testing.T) {
	now := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	ran := func(p *corev1.Pod, from time.Time, until *time.Time) *corev1.Pod {
		cs := corev1.ContainerStatus{Name: "main"}
		if until == nil {
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(from)}
		} else {
			cs.State.Terminated = &corev1.ContainerStateTerminated{StartedAt: metav1.NewTime(from), FinishedAt: metav1.NewTime(*until)}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		return p
	}
	other := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "other"}, Status: v1alpha1.BurstBufferStatus{TaskNamespace: "ops"}}
	service := func(component, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "other-" + component + "-" + node,
			Labels: nodetask.Labels(other, component)}, Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyAlways}}
		p.Labels[nodetask.LabelBurstBufferNamespace] = "lab"
		return ran(p, now.Add(-time.Hour), nil)
	}
	job := func(name, node string, from time.Time, until *time.Time) *corev1.Pod {
		return ran(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: name, Labels: map[string]string{v1alpha1.LabelBurstBuffer: "other"}},
			Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever}}, from, until)
	}
	task := func(component, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "other-" + component + "-1", Labels: nodetask.Labels(other, component)},
			Spec: corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyNever}}
		p.Labels[nodetask.LabelBurstBufferNamespace] = "lab"
		return ran(p, now.Add(-time.Minute), nil)
	}
	ended := now.Add(-5 * time.Minute)
	mine := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "mine"}}
	working := []*corev1.Pod{service(nodetask.ComponentStorage, "n2"), service(nodetask.ComponentMeta, "n2"), job("job", "n3", now.Add(-time.Minute), nil)}

	for _, c := range []struct {
		name string
		bb   *v1alpha1.BurstBuffer
		pods []*corev1.Pod
		// services: the measurement has no device counters of its own.
		services bool
		want     []string
	}{
		{"its job on another node", mine, working, true, []string{"burst buffer lab/other's BeeGFS services, serving lab/job on node n3"}},
		{"its stage-out on another node", mine, []*corev1.Pod{service(nodetask.ComponentStorage, "n2"), task("stageout", "n3")}, true,
			[]string{"burst buffer lab/other's BeeGFS services, serving ops/other-stageout-1 on node n3"}},
		{"a measurement that counts its device's bytes", mine, working, false, nil},
		{"its own services and job", other, working, true, nil},
		{"its job ended before", mine, []*corev1.Pod{service(nodetask.ComponentStorage, "n2"), job("job", "n3", now.Add(-time.Hour), &ended)}, true, nil},
		{"only its client here", mine, []*corev1.Pod{service(nodetask.ComponentClient, "n2"), job("job", "n3", now.Add(-time.Minute), nil)}, true, nil},
		{"setting its file system up or measuring elsewhere", mine, []*corev1.Pod{service(nodetask.ComponentStorage, "n2"),
			task(nodetask.ComponentModuleCheck, "n3"), task(nodetask.ComponentSweep, "n4")}, true, nil},
		{"its job on this node counts by itself", mine, []*corev1.Pod{service(nodetask.ComponentStorage, "n2"), job("job", "n2", now.Add(-time.Minute), nil)}, false,
			[]string{"lab/job"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := reconcilerWith(now, c.pods...)
			got, err := r.otherPodsOn(context.Background(), c.bb, "n2", now.Add(-10*time.Second), now, c.services)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}

	// A device probe whose storage path has no block device below it (btrfs, ZFS, overlay)
	// has no counters to see the service's bytes either: it counts the service as other work,
	// and its figures are not cached as taken alone. One that counted its device's bytes
	// judges by them.
	for _, saw := range []bool{false, true} {
		probe := ran(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "mine-probe-dev-0", Labels: nodetask.Labels(mine, nodetask.ComponentProbeDevice),
			Annotations: map[string]string{annLockHeld: "true"}}, Spec: corev1.PodSpec{NodeName: "n2", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Args: []string{"probe-device"}}}}}, now.Add(-10*time.Second), &now)
		r := reconcilerWith(now, append([]*corev1.Pod{probe}, working...)...)
		e := endedProbe{pod: probe, sawDevice: saw, figures: nodecache.Figures{Node: "n2", StoragePath: "/nvme", MeasuredTime: now,
			DeviceWriteBytesPerSecond: 150e6, DeviceReadBytesPerSecond: 300e6}}
		c, err := r.probeConditions(context.Background(), &scope{bb: mine, nodes: []string{"n2"}}, e)
		if err != nil {
			t.Fatal(err)
		}
		_, cached := r.nodeCache().Get(context.Background(), "n2")
		if want := []string{"burst buffer lab/other's BeeGFS services, serving lab/job on node n3"}; !saw && (!slices.Equal(c.OtherPods, want) || cached) {
			t.Errorf("a probe without device counters: other pods %q (want %q), cached %v", c.OtherPods, want, cached)
		}
		if saw && (len(c.OtherPods) > 0 || !cached) {
			t.Errorf("a probe that counted its device's bytes: other pods %q, cached %v", c.OtherPods, cached)
		}
	}
}

// reconcilerWith is a reconciler on the fake client holding pods, with the manager's pod
// indexes, at now.
func reconcilerWith(now time.Time, pods ...*corev1.Pod) *BurstBufferReconciler {
	b := fakeClientWith().WithIndex(&corev1.Pod{}, podNodeField, podNode).WithIndex(&corev1.Pod{}, podBurstBufferField, podBurstBuffer)
	for _, p := range pods {
		b = b.WithObjects(p.DeepCopy())
	}
	return &BurstBufferReconciler{Client: b.Build(), CacheNamespace: "ops", Now: func() time.Time { return now }}
}
