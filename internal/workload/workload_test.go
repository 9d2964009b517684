package workload

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

func bbWith(limits *v1alpha1.LimitsStatus) *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: "default"},
		Spec: v1alpha1.BurstBufferSpec{
			Engine:   v1alpha1.EngineLocal,
			Workload: v1alpha1.WorkloadSpec{MountPath: "/mnt/beeburst"},
		},
		Status: v1alpha1.BurstBufferStatus{
			Nodes:  []v1alpha1.NodeStatus{{Name: "n1"}, {Name: "n2"}},
			Limits: limits,
		},
	}
	return bb
}

func TestEnv(t *testing.T) {
	estimated := &v1alpha1.EstimatedLimits{
		Write: v1alpha1.OperationLimit{LimitBytesPerSecond: 100},
		Read:  v1alpha1.OperationLimit{LimitBytesPerSecond: 200},
	}
	components := &v1alpha1.ComponentLimits{
		Write: &v1alpha1.OperationLimit{LimitBytesPerSecond: 90},
		Read:  &v1alpha1.OperationLimit{LimitBytesPerSecond: 180},
	}
	sweepWrite := &v1alpha1.SweepLimits{Write: &v1alpha1.SweepResult{BestBytesPerSecond: 80}}
	base := map[string]string{
		EnvName: "scratch", EnvEngine: "local", EnvPath: "/mnt/beeburst", EnvNodes: "n1,n2",
	}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		limits *v1alpha1.LimitsStatus
		mount  *v1alpha1.MountStatus
		want   map[string]string
	}{
		{"no limits yet", nil, nil, with(EnvWriteLimitSource, SourceUnknown, EnvReadLimitSource, SourceUnknown, EnvLimitSource, SourceUnknown)},
		{"stage 1 only", &v1alpha1.LimitsStatus{Estimated: estimated}, nil,
			with(EnvWriteBytesPerSecond, "100", EnvReadBytesPerSecond, "200",
				EnvWriteLimitSource, SourceEstimated, EnvReadLimitSource, SourceEstimated, EnvLimitSource, SourceEstimated)},
		{"stage 1 unknown (no hardware figures)", &v1alpha1.LimitsStatus{Estimated: &v1alpha1.EstimatedLimits{}}, nil,
			with(EnvWriteLimitSource, SourceUnknown, EnvReadLimitSource, SourceUnknown, EnvLimitSource, SourceUnknown)},
		{"stage 2 overrides stage 1", &v1alpha1.LimitsStatus{Estimated: estimated, Components: components}, nil,
			with(EnvWriteBytesPerSecond, "90", EnvReadBytesPerSecond, "180",
				EnvWriteLimitSource, SourceComponents, EnvReadLimitSource, SourceComponents, EnvLimitSource, SourceComponents)},
		{"stage 3 write measured, read from stage 2: the weaker source is the summary",
			&v1alpha1.LimitsStatus{Estimated: estimated, Components: components, Sweep: sweepWrite}, nil,
			with(EnvWriteBytesPerSecond, "80", EnvReadBytesPerSecond, "180",
				EnvWriteLimitSource, SourceSweep, EnvReadLimitSource, SourceComponents, EnvLimitSource, SourceComponents)},
		{"status.mount.path wins over the spec", nil, &v1alpha1.MountStatus{Path: "/scratch"},
			with(EnvPath, "/scratch", EnvWriteLimitSource, SourceUnknown, EnvReadLimitSource, SourceUnknown, EnvLimitSource, SourceUnknown)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := bbWith(tc.limits)
			bb.Status.Mount = tc.mount
			if got := Env(bb); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Env() =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}

func TestEnvConfigMap(t *testing.T) {
	bb := bbWith(nil)
	bb.UID = "uid-1"
	cm := EnvConfigMap(bb)
	if *cm.Name != "scratch-env" || *cm.Namespace != "default" {
		t.Fatalf("name %s/%s", *cm.Namespace, *cm.Name)
	}
	if len(cm.OwnerReferences) != 1 || *cm.OwnerReferences[0].Kind != "BurstBuffer" || !*cm.OwnerReferences[0].Controller ||
		*cm.OwnerReferences[0].UID != "uid-1" || *cm.OwnerReferences[0].APIVersion != "beeburst.io/v1alpha1" {
		t.Errorf("owner references: %+v", cm.OwnerReferences)
	}
	if cm.Labels[v1alpha1.LabelBurstBuffer] != "scratch" || cm.Labels["app.kubernetes.io/component"] != nodetask.ComponentWorkloadEnv {
		t.Errorf("labels: %v", cm.Labels)
	}
	if cm.Data[EnvPath] != "/mnt/beeburst" {
		t.Errorf("data: %v", cm.Data)
	}
}

func gate(names ...string) []corev1.PodSchedulingGate {
	var gs []corev1.PodSchedulingGate
	for _, n := range names {
		gs = append(gs, corev1.PodSchedulingGate{Name: n})
	}
	return gs
}

func TestRelease(t *testing.T) {
	hosts := []string{"n2", "n1", "n2"}
	ours := corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"n1", "n2"}}
	zone := corev1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	gpu := corev1.NodeSelectorRequirement{Key: "gpu", Operator: corev1.NodeSelectorOpExists}
	name := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n3"}}
	required := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	podAffinity := &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone"}}}
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{gpu}}}}
	for _, tc := range []struct {
		name          string
		gates         []corev1.PodSchedulingGate
		affinity      *corev1.Affinity
		wantGates     []corev1.PodSchedulingGate
		wantAffinity  *corev1.Affinity
		wantUntouched bool
	}{
		{name: "no affinity: one term with the hosts", gates: gate(v1alpha1.SchedulingGate),
			wantAffinity: required(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{ours}})},
		{name: "other gates stay", gates: gate("a.io/x", v1alpha1.SchedulingGate, "b.io/y"),
			wantGates:    gate("a.io/x", "b.io/y"),
			wantAffinity: required(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{ours}})},
		{name: "pod affinity kept, node affinity added", gates: gate(v1alpha1.SchedulingGate),
			affinity: &corev1.Affinity{PodAffinity: podAffinity},
			wantAffinity: &corev1.Affinity{PodAffinity: podAffinity, NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{ours}}}},
			}}},
		{name: "preferred terms only: required is set, preferred kept", gates: gate(v1alpha1.SchedulingGate),
			affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred}},
			wantAffinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: preferred,
				RequiredDuringSchedulingIgnoredDuringExecution:  &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{ours}}}},
			}}},
		{name: "existing terms: appended to each, existing requirements untouched and first", gates: gate(v1alpha1.SchedulingGate),
			affinity: required(
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}},
				corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{name}},
				corev1.NodeSelectorTerm{},
			),
			wantAffinity: required(
				corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone, ours}},
				corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{name}, MatchExpressions: []corev1.NodeSelectorRequirement{ours}},
				corev1.NodeSelectorTerm{},
			)},
		{name: "requirement already there (the user copied it): not added twice", gates: gate(v1alpha1.SchedulingGate),
			affinity:     required(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone, ours}}),
			wantAffinity: required(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone, ours}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{SchedulingGates: tc.gates, Affinity: tc.affinity}}
			before := pod.DeepCopy()
			got := Release(pod, hosts, "uid-1")
			if !reflect.DeepEqual(pod, before) {
				t.Errorf("Release changed its input")
			}
			if !reflect.DeepEqual(got.Spec.SchedulingGates, tc.wantGates) {
				t.Errorf("gates = %v, want %v", got.Spec.SchedulingGates, tc.wantGates)
			}
			if !reflect.DeepEqual(got.Spec.Affinity, tc.wantAffinity) {
				t.Errorf("affinity =\n%+v\nwant\n%+v", got.Spec.Affinity, tc.wantAffinity)
			}
			if !ReleasedBy(got, "uid-1") || ReleasedBy(got, "uid-2") || ReleasedBy(got, "") || got.Annotations["a"] != "b" {
				t.Errorf("annotations %v: not marked as released by uid-1 alone, the pod's own kept", got.Annotations)
			}
			if IsGated(got) {
				t.Errorf("still gated")
			}
		})
	}
}

func TestSelector(t *testing.T) {
	bb := bbWith(nil)
	narrowed := bbWith(nil)
	narrowed.Spec.Workload.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "worker"}}
	for _, tc := range []struct {
		name   string
		bb     *v1alpha1.BurstBuffer
		labels map[string]string
		want   bool
	}{
		{"labelled", bb, map[string]string{v1alpha1.LabelBurstBuffer: "scratch"}, true},
		{"another burst buffer", bb, map[string]string{v1alpha1.LabelBurstBuffer: "other"}, false},
		{"unlabelled", bb, map[string]string{"role": "worker"}, false},
		{"the operator's own task pod", bb, map[string]string{v1alpha1.LabelBurstBuffer: "scratch", "app.kubernetes.io/managed-by": "beeburst-operator"}, false},
		{"selector narrows: matches", narrowed, map[string]string{v1alpha1.LabelBurstBuffer: "scratch", "role": "worker"}, true},
		{"selector narrows: does not match", narrowed, map[string]string{v1alpha1.LabelBurstBuffer: "scratch", "role": "launcher"}, false},
		{"selector alone is not enough: the label is required", narrowed, map[string]string{"role": "worker"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := Selector(tc.bb)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(labels.Set(tc.labels)); got != tc.want {
				t.Errorf("%s matches %v = %v, want %v", sel, tc.labels, got, tc.want)
			}
		})
	}
}

// A pod counts for the burst buffer whose selector matches it, or which released it: a selector
// narrowed since, or a burst buffer of the same name created again, changes neither.
func TestCounts(t *testing.T) {
	narrowed := bbWith(nil)
	narrowed.Spec.Workload.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"role": "launcher"}}
	sel, err := Selector(narrowed)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(role string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: role, Labels: map[string]string{v1alpha1.LabelBurstBuffer: "scratch", "role": role}}}
	}
	released := Release(pod("worker"), []string{"n1"}, "uid-1")
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		uid  types.UID
		want bool
	}{
		{"matched by the selector", pod("launcher"), "uid-1", true},
		{"neither matched nor released", pod("worker"), "uid-1", false},
		{"released by it, not matched any more", released, "uid-1", true},
		{"released by a burst buffer of that name deleted before", released, "uid-2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Counts(tc.pod, sel, tc.uid); got != tc.want {
				t.Errorf("Counts = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	pod := func(name string, phase corev1.PodPhase, gated bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: phase}}
		if gated {
			p.Spec.SchedulingGates = gate(v1alpha1.SchedulingGate)
		}
		return p
	}
	var many []corev1.Pod
	var firstNames []string
	for i := range 60 {
		many = append(many, pod(fmt.Sprintf("p-%02d", 59-i), corev1.PodPending, true))
	}
	for i := range MaxGatedPodNames {
		firstNames = append(firstNames, fmt.Sprintf("p-%02d", i))
	}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want v1alpha1.WorkloadStatus
	}{
		{"none", nil, v1alpha1.WorkloadStatus{}},
		{"mixed", []corev1.Pod{
			pod("b", corev1.PodPending, true), pod("a", corev1.PodPending, true),
			pod("c", corev1.PodPending, false), pod("d", corev1.PodRunning, false),
			pod("e", corev1.PodSucceeded, false), pod("f", corev1.PodFailed, false),
			{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Spec: corev1.PodSpec{SchedulingGates: gate("other.io/gate")}},
		}, v1alpha1.WorkloadStatus{GatedPods: []string{"a", "b"}, RunningPods: 3, CompletedPods: 2}},
		{"bounded and sorted", many, v1alpha1.WorkloadStatus{GatedPods: firstNames}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Status(tc.pods); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Status() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestTeardown(t *testing.T) {
	ready := metav1.NewTime(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	ttl := v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterTTL, TTL: "2h"}
	after := v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownAfterWorkload}
	manual := v1alpha1.TeardownSpec{Policy: v1alpha1.TeardownManual}
	done := v1alpha1.WorkloadStatus{CompletedPods: 3}
	for _, tc := range []struct {
		name     string
		teardown v1alpha1.TeardownSpec
		ready    *metav1.Time
		st       v1alpha1.WorkloadStatus
		now      time.Time
		due      bool
		at       time.Time
		reason   string
	}{
		{"AfterTTL, before", ttl, &ready, done, ready.Add(time.Hour), false, ready.Add(2 * time.Hour), "AfterTTL: 2h0m0s after Ready"},
		{"AfterTTL, past", ttl, &ready, v1alpha1.WorkloadStatus{RunningPods: 1}, ready.Add(3 * time.Hour), true, ready.Add(2 * time.Hour), "AfterTTL: 2h0m0s after Ready"},
		{"not Ready yet", ttl, nil, done, ready.Time, false, time.Time{}, "AfterTTL: waiting for the burst buffer to be Ready"},
		{"AfterWorkload, all completed", after, &ready, done, ready.Add(time.Minute), true, ready.Add(time.Minute), "AfterWorkload: all 3 workload pod(s) completed"},
		{"AfterWorkload, one running", after, &ready, v1alpha1.WorkloadStatus{CompletedPods: 2, RunningPods: 1}, ready.Add(time.Minute), false, time.Time{}, "AfterWorkload: 2 of 3 workload pod(s) completed"},
		{"AfterWorkload, one still gated", after, &ready, v1alpha1.WorkloadStatus{CompletedPods: 2, GatedPods: []string{"p"}}, ready.Add(time.Minute), false, time.Time{}, "AfterWorkload: 2 of 3 workload pod(s) completed"},
		{"AfterWorkload, never used", after, &ready, v1alpha1.WorkloadStatus{}, ready.Add(time.Hour), false, time.Time{}, "AfterWorkload: 0 of 0 workload pod(s) completed"},
		{"Manual", manual, &ready, done, ready.Add(100 * time.Hour), false, time.Time{}, "Manual: delete the BurstBuffer to tear it down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bb := bbWith(nil)
			bb.Spec.Teardown = tc.teardown
			bb.Status.ReadyTime = tc.ready
			d := Teardown(bb, tc.st, tc.now)
			var at time.Time
			if d.At != nil {
				at = d.At.Time
			}
			if d.Due != tc.due || !at.Equal(tc.at) || d.Reason != tc.reason {
				t.Errorf("Teardown() = %v %v %q; want %v %v %q", d.Due, at, d.Reason, tc.due, tc.at, tc.reason)
			}
		})
	}
}

// Started: a pod counts as using the burst buffer once a node took it, unless its containers
// cannot start (an image that cannot be pulled) and never ran; one no node took does not.
func TestStarted(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	pulling := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
	creating := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	ended := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	for _, tc := range []struct {
		name   string
		node   string
		status corev1.PodStatus
		want   bool
	}{
		{"not scheduled", "", corev1.PodStatus{Phase: corev1.PodPending}, false},
		{"scheduled, no status yet", "n1", corev1.PodStatus{Phase: corev1.PodPending}, true},
		{"its containers being created", "n1", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{State: creating}}}, true},
		{"its image cannot be pulled", "n1", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{State: pulling}}}, false},
		{"running", "n1", corev1.PodStatus{Phase: corev1.PodRunning}, true},
		{"an init container runs", "n1", corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{State: running}}}, true},
		{"an init container ended, the next cannot be pulled", "n1", corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{{State: ended}, {State: pulling}}}, true},
		{"restarting after a crash", "n1", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{State: pulling, LastTerminationState: ended}}}, true},
	} {
		if got := Started(&corev1.Pod{Spec: corev1.PodSpec{NodeName: tc.node}, Status: tc.status}); got != tc.want {
			t.Errorf("%s: Started = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// InUse: deletion waits for a pod past the gate that started, or that the scheduler has not
// looked at yet (a gate lifted just before the deletion) for SchedulerDecides; with a
// stage-out to come, for every pod past the gate. A gated pod never counts.
func TestInUse(t *testing.T) {
	gate := []corev1.PodSchedulingGate{{Name: v1alpha1.SchedulingGate}}
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}
	pending := corev1.PodStatus{Phase: corev1.PodPending}
	gatedAtCreation := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}
	for _, tc := range []struct {
		name       string
		spec       corev1.PodSpec
		status     corev1.PodStatus
		copying    bool
		deletedFor time.Duration
		want       bool
	}{
		{"gated", corev1.PodSpec{SchedulingGates: gate}, pending, true, 0, false},
		{"on a node", corev1.PodSpec{NodeName: "n1"}, pending, false, time.Hour, true},
		{"not looked at yet, just after the deletion", corev1.PodSpec{}, pending, false, time.Second, true},
		{"gate lifted, the API server's SchedulingGated still there", corev1.PodSpec{}, gatedAtCreation, false, time.Second, true},
		{"gate lifted, SchedulingGated, past SchedulerDecides", corev1.PodSpec{}, gatedAtCreation, false, SchedulerDecides, false},
		{"not looked at within SchedulerDecides", corev1.PodSpec{}, pending, false, SchedulerDecides, false},
		{"no node fits it", corev1.PodSpec{}, unschedulable, false, time.Second, false},
		{"no node fits it, a stage-out to come", corev1.PodSpec{}, unschedulable, true, time.Hour, true},
	} {
		pod := &corev1.Pod{Spec: tc.spec, Status: tc.status}
		if got := InUse(pod, tc.copying, tc.deletedFor, SchedulerDecides); got != tc.want {
			t.Errorf("%s: InUse = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Hold marks a pod held by one burst buffer's deletion without touching anything else of it;
// for a burst buffer created again under the name (another UID) it is not held.
func TestHold(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-0", Annotations: map[string]string{"a": "b"}}}
	held := Hold(pod, "uid-1")
	if !IsHeld(held, "uid-1") || IsHeld(pod, "uid-1") || held.Annotations["a"] != "b" {
		t.Errorf("Hold: held %v (annotations %v), original held %v", IsHeld(held, "uid-1"), held.Annotations, IsHeld(pod, "uid-1"))
	}
	if IsHeld(held, "uid-2") || IsHeld(held, "") {
		t.Errorf("held by uid-1, IsHeld for another burst buffer: %v, for none: %v", IsHeld(held, "uid-2"), IsHeld(held, ""))
	}
}
