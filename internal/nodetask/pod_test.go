package nodetask

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStateOfExitedContainer: a task pod whose container exited is done as soon as the
// kubelet reports the exit, a second before it writes the phase; not while it runs, not with
// a restart policy that would run it again, and not when it is being deleted (killed).
func TestStateOfExitedContainer(t *testing.T) {
	pod := func(phase corev1.PodPhase, restart corev1.RestartPolicy, state corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{
			Spec:   corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{Name: "agent"}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", State: state}}},
		}
	}
	exited := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Message: `{"phase":"x"}`}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	deleting := pod(corev1.PodRunning, corev1.RestartPolicyNever, exited(137))
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want State
		msg  string
	}{
		{"exit 0, phase not written yet", pod(corev1.PodRunning, corev1.RestartPolicyNever, exited(0)), Succeeded, `{"phase":"x"}`},
		{"exit 1, phase not written yet", pod(corev1.PodRunning, corev1.RestartPolicyNever, exited(1)), Failed, `{"phase":"x"}`},
		{"running", pod(corev1.PodRunning, corev1.RestartPolicyNever, running), Running, ""},
		{"no status yet", &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "agent"}}}}, Running, ""},
		{"restarted by policy", pod(corev1.PodRunning, corev1.RestartPolicyAlways, exited(0)), Running, ""},
		{"killed while deleted", deleting, Running, ""},
		{"phase written", pod(corev1.PodSucceeded, corev1.RestartPolicyNever, exited(0)), Succeeded, `{"phase":"x"}`},
	} {
		if got, msg := StateOf(c.pod); got != c.want || msg != c.msg {
			t.Errorf("%s: got %v %q, want %v %q", c.name, got, msg, c.want, c.msg)
		}
	}
}
