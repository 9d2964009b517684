package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/conditions"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// TestValidationEnded: a failed measurement ends validation as a finished or cut one does,
// and a spec the nodes refuse (a Terminal reason that waits for a person) does not - once it
// is fixed, stage 2 goes on.
func TestValidationEnded(t *testing.T) {
	cond := func(typ, reason string, st metav1.ConditionStatus) func(*v1alpha1.BurstBuffer) {
		return func(bb *v1alpha1.BurstBuffer) { conditions.Set(bb, typ, st, reason, "") }
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name          string
		set           func(*v1alpha1.BurstBuffer)
		failed, ended bool
	}{
		{"measuring", cond(v1alpha1.ConditionValidated, v1alpha1.ReasonSweeping, metav1.ConditionFalse), false, false},
		{"validated", cond(v1alpha1.ConditionValidated, v1alpha1.ReasonValidated, metav1.ConditionTrue), false, true},
		{"profile none", func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.Profile = v1alpha1.ProfileNone }, false, true},
		{"end recorded", func(bb *v1alpha1.BurstBuffer) { bb.Status.ValidationEndTime = &now }, false, true},
		{"sweep failed", cond(v1alpha1.ConditionValidated, v1alpha1.ReasonProbeFailed, metav1.ConditionFalse), true, false},
		{"probe failed", cond(v1alpha1.ConditionComponentsMeasured, v1alpha1.ReasonProbeFailed, metav1.ConditionFalse), true, false},
		{"too little space", cond(v1alpha1.ConditionComponentsMeasured, v1alpha1.ReasonInsufficientCapacity, metav1.ConditionFalse), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := &v1alpha1.BurstBuffer{}
			bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
			tc.set(bb)
			if got := measurementFailed(bb); got != tc.failed {
				t.Errorf("measurementFailed = %v, want %v", got, tc.failed)
			}
			// The failure itself is recorded as the end by the step that sees it
			// (measuring); until then only the conditions say it.
			if got := validationEnded(bb); got != tc.ended {
				t.Errorf("validationEnded = %v, want %v", got, tc.ended)
			}
		})
	}
}

// TestUnsettleSecondRound: the budget stops a second round of stage 2 before it published; the
// round taken back is the one whose -r2 pods still run, not one that published before.
func TestUnsettleSecondRound(t *testing.T) {
	pod := func(name, component string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{nodetask.LabelComponent: component}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	devR2 := pod("bb-probe-dev-0-r2", nodetask.ComponentProbeDevice, corev1.PodRunning)
	netR2 := pod("bb-probe-nets-0-r2", nodetask.ComponentProbeNetServer, corev1.PodPending)
	devDone := pod("bb-probe-dev-1-r2", nodetask.ComponentProbeDevice, corev1.PodSucceeded)
	devR1 := pod("bb-probe-dev-0", nodetask.ComponentProbeDevice, corev1.PodRunning)
	for _, tc := range []struct {
		name           string
		device, net    int32
		pods           []corev1.Pod
		want           string
		wantDev, wantN int32
	}{
		{name: "the devices' round runs", device: 2, pods: []corev1.Pod{devR2, devDone}, want: "devices"},
		{name: "the links' round runs after the devices' published", device: 2, net: 2, pods: []corev1.Pod{devDone, netR2}, want: "links", wantDev: 2},
		{name: "the devices' round runs after the links' published", device: 2, net: 2, pods: []corev1.Pod{devR2}, want: "devices", wantN: 2},
		{name: "every second-round pod ended", device: 2, pods: []corev1.Pod{devDone}, wantDev: 2},
		{name: "a first-round pod runs: no second round", pods: []corev1.Pod{devR1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			comp := &v1alpha1.ComponentLimits{DeviceProbeRound: tc.device, NetworkProbeRound: tc.net}
			if got := unsettleSecondRound(comp, tc.pods); got != tc.want || comp.DeviceProbeRound != tc.wantDev || comp.NetworkProbeRound != tc.wantN {
				t.Errorf("unsettleSecondRound = %q, rounds %d/%d; want %q, %d/%d", got, comp.DeviceProbeRound, comp.NetworkProbeRound, tc.want, tc.wantDev, tc.wantN)
			}
		})
	}
	if got := unsettleSecondRound(nil, []corev1.Pod{devR2}); got != "" {
		t.Errorf("no components: %q", got)
	}
}
