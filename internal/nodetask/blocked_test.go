package nodetask

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBlocker(t *testing.T) {
	now := time.Now()
	base := func() *corev1.Pod {
		return &corev1.Pod{
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "beeburst/agent:nope"}},
				Volumes: []corev1.Volume{{Name: "storage", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/missing"}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
	}
	waiting := func(reason, msg string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
		}
	}
	event := func(reason, msg string, ago time.Duration) corev1.Event {
		return corev1.Event{Reason: reason, Message: msg, Type: corev1.EventTypeWarning, LastTimestamp: metav1.NewTime(now.Add(-ago))}
	}
	unschedulable := func(msg string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.NodeName = ""
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n2"}}}}}}}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg}}
		}
	}
	notFound := `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/beeburst/agent:nope": failed to resolve reference "docker.io/beeburst/agent:nope": docker.io/beeburst/agent:nope: not found`
	cases := []struct {
		name    string
		mutate  func(*corev1.Pod)
		events  []corev1.Event
		cause   Cause
		node    string
		detail  string // a part of the detail
		end     string // how the detail ends (a long one keeps both ends)
		waiting string // a part of what it waits for, without a cause
	}{
		{name: "creating, nothing said yet", mutate: waiting("ContainerCreating", "")},
		{name: "hostPath type check", mutate: waiting("ContainerCreating", ""),
			events: []corev1.Event{event("FailedMount", `MountVolume.SetUp failed for volume "storage" : hostPath type check failed: /mnt/missing is not a directory`, 0)},
			cause:  HostPathMissing, node: "n1", detail: "hostPath type check failed: /mnt/missing is not a directory"},
		{name: "another mount failure waits", mutate: waiting("ContainerCreating", ""),
			events:  []corev1.Event{event("FailedMount", `MountVolume.SetUp failed for volume "auth" : secret "x" not found`, 0)},
			waiting: `FailedMount: MountVolume.SetUp failed for volume "auth"`},
		{name: "image not found", mutate: waiting("ErrImagePull", notFound), cause: ImageUnpullable, node: "n1", detail: "not found"},
		{name: "back-off: the cause from the events", mutate: waiting("ImagePullBackOff", `Back-off pulling image "beeburst/agent:nope"`),
			events: []corev1.Event{event("Failed", "Failed to pull image \"beeburst/agent:nope\": "+notFound, 2*time.Second), event("BackOff", "Back-off pulling image", 0)},
			cause:  ImageUnpullable, node: "n1", detail: "ImagePullBackOff: Failed to pull image"},
		{name: "registry that does not resolve", mutate: waiting("ErrImagePull", `failed to do request: Head "https://registry.example/v2/x/manifests/1": dial tcp: lookup registry.example: no such host`),
			cause: ImageUnpullable, node: "n1", detail: "no such host"},
		{name: "a node without a route to its resolver", mutate: waiting("ErrImagePull", `failed to pull and unpack image "docker.io/beeburst/agent:nope": failed to resolve reference "docker.io/beeburst/agent:nope": failed to do request: Head "https://registry-1.docker.io/v2/beeburst/agent/manifests/nope": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: dial udp 10.255.255.53:53: connect: network is unreachable`),
			cause: ImageUnpullable, node: "n1", detail: `ErrImagePull: failed to pull and unpack image "docker.io/beeburst/agent:nope": failed to resolve ref ... `,
			end: "dial udp 10.255.255.53:53: connect: network is unreachable"},
		{name: "a timeout is retried", mutate: waiting("ErrImagePull", `failed to do request: Head "https://registry-1.docker.io/v2/": dial tcp 1.2.3.4:443: i/o timeout`),
			waiting: "pulling image beeburst/agent:nope: ErrImagePull: failed to do request"},
		{name: "invalid name", mutate: waiting("InvalidImageName", `Failed to apply default image tag "Bad:Name": couldn't parse image reference`),
			cause: ImageUnpullable, node: "n1", detail: "InvalidImageName"},
		{name: "never pull", mutate: waiting("ErrImageNeverPull", `Container image "x" is not present with pull policy of Never`),
			cause: ImageUnpullable, node: "n1", detail: "ErrImageNeverPull"},
		{name: "volume bound elsewhere", mutate: unschedulable("0/3 nodes are available: 1 node(s) had volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
			cause: Unschedulable, node: "n2", detail: "volume node affinity conflict"},
		{name: "node gone", mutate: unschedulable("0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."),
			cause: Unschedulable, node: "n2", detail: "didn't match"},
		{name: "resources may free up", mutate: unschedulable("0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector."),
			waiting: "not scheduled yet: 0/3 nodes are available: 1 Insufficient memory"},
		{name: "refused by the kubelet", mutate: func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "NodePorts", "Pod was rejected: node(s) didn't have free ports for the requested pod ports"
		}, cause: Rejected, node: "n1", detail: "NodePorts: Pod was rejected"},
		{name: "deadline: the events say why", mutate: func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason = corev1.PodFailed, "DeadlineExceeded"
			waiting("ContainerCreating", "")(p)
		}, events: []corev1.Event{event("FailedMount", `MountVolume.SetUp failed for volume "storage" : hostPath type check failed: /mnt/missing is not a directory`, 0)},
			cause: HostPathMissing, node: "n1"},
		{name: "started: not blocked", mutate: func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}}}
		}, events: []corev1.Event{event("FailedMount", `MountVolume.SetUp failed for volume "storage" : hostPath type check failed: /mnt/missing is not a directory`, 5*time.Second)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := base()
			if c.mutate != nil {
				c.mutate(p)
			}
			b, waiting := Blocker(p, c.events)
			if c.cause == "" {
				if b != nil {
					t.Fatalf("blocked: %+v", b)
				}
				if !contains(waiting, c.waiting) || (c.waiting == "") != (waiting == "") {
					t.Fatalf("waiting %q, want %q", waiting, c.waiting)
				}
				return
			}
			if b == nil {
				t.Fatalf("not blocked (waiting %q), want %s", waiting, c.cause)
			}
			if b.Cause != c.cause || b.Node != c.node || !contains(b.Detail, c.detail) {
				t.Fatalf("got %+v, want %s on %s with %q", b, c.cause, c.node, c.detail)
			}
			if !strings.HasSuffix(b.Detail, c.end) {
				t.Fatalf("detail %q does not end with %q", b.Detail, c.end)
			}
			if c.cause == HostPathMissing && (b.Volume != "storage" || b.Path != "/mnt/missing") {
				t.Fatalf("volume %q path %q", b.Volume, b.Path)
			}
			if c.cause == ImageUnpullable && b.Image != "beeburst/agent:nope" {
				t.Fatalf("image %q", b.Image)
			}
		})
	}
}

func contains(s, part string) bool { return strings.Contains(s, part) }
