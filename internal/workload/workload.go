// Package workload holds the pure parts of running a job on a burst buffer: which pods belong
// to it, how a gated pod is released onto the burst buffer's nodes, what the job's environment
// ConfigMap says, and the workload status. The WorkloadReconciler applies what this package
// returns; nothing here talks to the API server.
package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// MaxGatedPodNames bounds status.workload.gatedPods: a Job with thousands of pods must not
// push the BurstBuffer towards the object size limit.
const MaxGatedPodNames = 50

// Keys of the environment ConfigMap. A workload container gets them all with
// `envFrom: [{configMapRef: {name: <burst buffer>-env}}]`.
const (
	// EnvName is the burst buffer's name.
	EnvName = "BEEBURST_NAME"
	// EnvEngine is the engine: local or beegfs.
	EnvEngine = "BEEBURST_ENGINE"
	// EnvPath is where the file system appears inside the workload's containers.
	EnvPath = "BEEBURST_PATH"
	// EnvNodes lists the burst buffer's nodes, comma-separated.
	EnvNodes = "BEEBURST_NODES"
	// EnvWriteBytesPerSecond and EnvReadBytesPerSecond are the figures a job can plan with:
	// the best measured (stage 3), else the current limit (stage 2, else stage 1). Absent
	// when nothing is known.
	EnvWriteBytesPerSecond = "BEEBURST_WRITE_BYTES_PER_SECOND"
	EnvReadBytesPerSecond  = "BEEBURST_READ_BYTES_PER_SECOND"
	// EnvWriteLimitSource and EnvReadLimitSource name the status.limits field each figure
	// comes from: sweep, components, estimated, or unknown.
	EnvWriteLimitSource = "BEEBURST_WRITE_LIMIT_SOURCE"
	EnvReadLimitSource  = "BEEBURST_READ_LIMIT_SOURCE"
	// EnvLimitSource is the weaker of the two sources: the stage a job can trust both
	// figures to.
	EnvLimitSource = "BEEBURST_LIMIT_SOURCE"
)

// Limit sources, from the strongest evidence to none. They are the names of the fields of
// status.limits the figures come from.
const (
	SourceSweep      = "sweep"
	SourceComponents = "components"
	SourceEstimated  = "estimated"
	SourceUnknown    = "unknown"
)

var sourceRank = map[string]int{SourceSweep: 3, SourceComponents: 2, SourceEstimated: 1, SourceUnknown: 0}

// EnvConfigMapName is the name of a burst buffer's environment ConfigMap.
func EnvConfigMapName(bbName string) string { return bbName + "-env" }

// Selector selects the workload pods of bb in its namespace: pods labelled
// beeburst.io/burst-buffer=<name>, narrowed by spec.workload.selector, never the operator's
// own task pods (which carry the same label).
func Selector(bb *v1alpha1.BurstBuffer) (labels.Selector, error) {
	sel, err := Labelled(bb)
	if err != nil {
		return nil, err
	}
	if bb.Spec.Workload.Selector != nil {
		user, err := metav1.LabelSelectorAsSelector(bb.Spec.Workload.Selector)
		if err != nil {
			return nil, err
		}
		reqs, _ := user.Requirements()
		sel = sel.Add(reqs...)
	}
	return sel, nil
}

// Labelled selects every pod that names bb in its beeburst.io/burst-buffer label, never the
// operator's own task pods: a superset of Selector's pods, whatever spec.workload.selector says.
func Labelled(bb *v1alpha1.BurstBuffer) (labels.Selector, error) {
	notOurs, err := labels.NewRequirement(nodetask.LabelManagedBy, selection.NotEquals, []string{nodetask.ManagedBy})
	if err != nil {
		return nil, err
	}
	return labels.SelectorFromSet(labels.Set{v1alpha1.LabelBurstBuffer: bb.Name}).Add(*notOurs), nil
}

// IsWorkloadPod says whether a pod can belong to some burst buffer's workload: it names one
// and is not one of the operator's task pods.
func IsWorkloadPod(pod *corev1.Pod) bool {
	_, named := pod.Labels[v1alpha1.LabelBurstBuffer]
	return named && pod.Labels[nodetask.LabelManagedBy] != nodetask.ManagedBy
}

// IsHeld says whether the deletion of the burst buffer with uid held the pod's gate
// (AnnotationGateHeld). A hold by a burst buffer deleted before is none: one created again
// under its name releases the pod.
func IsHeld(pod *corev1.Pod, uid types.UID) bool {
	return uid != "" && pod.Annotations[v1alpha1.AnnotationGateHeld] == string(uid)
}

// ReleasedBy says whether the burst buffer with uid lifted the pod's gate (Release).
func ReleasedBy(pod *corev1.Pod, uid types.UID) bool {
	return uid != "" && pod.Annotations[v1alpha1.AnnotationReleasedBy] == string(uid)
}

// Counts says whether a pod labelled for the burst buffer with uid is one of its workload's:
// the selector (Selector) matches it, or the burst buffer released it (ReleasedBy) - a
// selector narrowed since does not make a released pod stop using the burst buffer's
// directory, so its status, its teardown policy and its deletion all go on counting it.
func Counts(pod *corev1.Pod, sel labels.Selector, uid types.UID) bool {
	return sel.Matches(labels.Set(pod.Labels)) || ReleasedBy(pod, uid)
}

// Hold is pod with its gate held by the deletion of the burst buffer with uid.
func Hold(pod *corev1.Pod, uid types.UID) *corev1.Pod {
	out := pod.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[v1alpha1.AnnotationGateHeld] = string(uid)
	return out
}

// SchedulerDecides is how long after its burst buffer's deletion a pod past the gate that the
// scheduler has not looked at yet (no node; PodScheduled missing, or still the API server's
// SchedulingGated from the pod's creation) still counts as about to start: a gate lifted just
// before the deletion. The scheduler decides within moments; a pod it never looks at (a
// scheduler name that nothing serves, another gate that stays) would otherwise hold the
// deletion for good.
const SchedulerDecides = 30 * time.Second

// InUse says whether deletion waits for a workload pod that is not completed: one past the
// gate that ran, runs or is starting on a node (Started), or that the scheduler has not
// decided on yet within grace (SchedulerDecides) of the deletion (deletedFor ago); with a
// stage-out still to come (copying), every pod past the gate, since it may yet start and
// write results the copy must not miss.
func InUse(pod *corev1.Pod, copying bool, deletedFor, grace time.Duration) bool {
	if IsGated(pod) {
		return false
	}
	return copying || Started(pod) || (undecided(pod) && deletedFor < grace)
}

// undecided: the scheduler has not looked at the pod since its gates were lifted. A pod
// created with a scheduling gate carries PodScheduled False/SchedulingGated from the API
// server, which lifting the gate leaves until the scheduler writes its own.
func undecided(pod *corev1.Pod) bool {
	if pod.Spec.NodeName != "" {
		return false
	}
	i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled })
	return i < 0 || pod.Status.Conditions[i].Reason == corev1.PodReasonSchedulingGated
}

// IsGated says whether the pod still carries the beeburst scheduling gate.
func IsGated(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool {
		return g.Name == v1alpha1.SchedulingGate
	})
}

// Placement is the required node selector requirement that keeps a pod on the burst buffer's
// nodes. It uses the nodes' kubernetes.io/hostname labels, not matchFields on metadata.name:
// the API server allows a single value in a metadata.name field requirement, and a gated
// pod's existing nodeSelectorTerms can only grow by requirements, not by terms.
func Placement(hostnames []string) corev1.NodeSelectorRequirement {
	values := slices.Clone(hostnames)
	slices.Sort(values)
	return corev1.NodeSelectorRequirement{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: slices.Compact(values)}
}

// Release returns a copy of a gated pod that may only land on the given hosts, no longer
// carries the beeburst gate, and says which burst buffer (uid) released it
// (AnnotationReleasedBy). All happen in one write, as KEP-3838 advises: once the last gate is
// gone the scheduler may bind the pod, and the API server refuses to change placement of a
// pod without gates.
//
// The API server accepts placement changes of a gated pod only when they narrow it: a pod
// without required node affinity may get any; a pod with nodeSelectorTerms may only get
// requirements appended to each term (terms are ORed, requirements ANDed), existing ones
// untouched. So the requirement is appended to every term. An empty term matches no node and
// may not gain requirements; it is left as it is. Other gates stay: another controller may
// still hold the pod.
func Release(pod *corev1.Pod, hostnames []string, uid types.UID) *corev1.Pod {
	out := pod.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[v1alpha1.AnnotationReleasedBy] = string(uid)
	req := Placement(hostnames)
	if out.Spec.Affinity == nil {
		out.Spec.Affinity = &corev1.Affinity{}
	}
	if out.Spec.Affinity.NodeAffinity == nil {
		out.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := out.Spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}},
		}
	} else {
		terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		for i := range terms {
			t := &terms[i]
			if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
				continue
			}
			if slices.ContainsFunc(t.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool { return equalRequirement(r, req) }) {
				continue
			}
			t.MatchExpressions = append(t.MatchExpressions, req)
		}
	}
	out.Spec.SchedulingGates = slices.DeleteFunc(out.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool {
		return g.Name == v1alpha1.SchedulingGate
	})
	if len(out.Spec.SchedulingGates) == 0 {
		out.Spec.SchedulingGates = nil
	}
	return out
}

func equalRequirement(a, b corev1.NodeSelectorRequirement) bool {
	return a.Key == b.Key && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
}

// IsCompleted says whether a pod has finished for good. Failed counts as completed: a pod in
// phase Failed never runs again (a Job that retries makes a new pod, which counts anew).
func IsCompleted(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Started says whether the pod ran, runs or is starting on a node: one that no node took,
// or whose containers cannot start (an image that cannot be pulled, a configuration the
// kubelet refuses) and never ran, has not touched the burst buffer's files and will not
// without someone's help.
func Started(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodRunning {
		return true
	}
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, st := range statuses {
		if st.State.Running != nil || st.State.Terminated != nil || st.LastTerminationState.Terminated != nil {
			return true
		}
	}
	if pod.Spec.NodeName == "" {
		return false
	}
	for _, st := range statuses {
		if w := st.State.Waiting; w != nil && cannotStart[w.Reason] {
			return false
		}
	}
	return true
}

// cannotStart are the kubelet's reasons for a container that waits until someone changes
// something: the image, its name or the pod's configuration.
var cannotStart = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "CreateContainerConfigError": true,
}

// Status summarises the workload's pods: gated pods by name (sorted, at most
// MaxGatedPodNames), pods past the gate that have not completed, and completed pods.
// Teardown fields are left to the caller.
func Status(pods []corev1.Pod) v1alpha1.WorkloadStatus {
	var st v1alpha1.WorkloadStatus
	for i := range pods {
		p := &pods[i]
		switch {
		case IsCompleted(p):
			st.CompletedPods++
		case IsGated(p):
			st.GatedPods = append(st.GatedPods, p.Name)
		default:
			st.RunningPods++
		}
	}
	slices.Sort(st.GatedPods)
	if len(st.GatedPods) > MaxGatedPodNames {
		st.GatedPods = st.GatedPods[:MaxGatedPodNames]
	}
	return st
}

// TeardownDecision says when and why a burst buffer goes away under its teardown policy.
type TeardownDecision struct {
	// Due is true when teardown should start now.
	Due bool
	// At is when it will start, when known (AfterTTL), or when it became due.
	At *metav1.Time
	// Reason is for status.workload.teardownReason and the event.
	Reason string
}

// Teardown applies spec.teardown to a Ready burst buffer and its workload pods:
//   - AfterWorkload: due once there was at least one workload pod and all of them completed
//     (none gated, none running); a burst buffer nobody used stays until it is deleted.
//   - AfterTTL: due ttl after Ready.
//   - Manual: never; the user deletes the BurstBuffer.
//
// Teardown itself is deleting the BurstBuffer: the finalizer then stages out (or stops in
// StageOutFailed, keeping the data) before anything on the nodes is removed.
func Teardown(bb *v1alpha1.BurstBuffer, st v1alpha1.WorkloadStatus, now time.Time) TeardownDecision {
	td := bb.Spec.Teardown
	if bb.Status.ReadyTime == nil {
		return TeardownDecision{Reason: string(td.Policy) + ": waiting for the burst buffer to be Ready"}
	}
	switch td.Policy {
	case v1alpha1.TeardownManual:
		return TeardownDecision{Reason: "Manual: delete the BurstBuffer to tear it down"}
	case v1alpha1.TeardownAfterTTL:
		ttl, err := td.TTL.Parse()
		switch {
		case err != nil:
			// Only an object stored before the CRD's rule can get here; the BurstBuffer
			// reconciler names the field. Never tear down on a value that does not parse.
			return TeardownDecision{Reason: "AfterTTL: spec.teardown.ttl " + err.Error()}
		case ttl <= 0:
			return TeardownDecision{Reason: "AfterTTL without a positive ttl"} // CRD validation forbids it
		}
		at := metav1.NewTime(bb.Status.ReadyTime.Add(ttl))
		return TeardownDecision{Due: !now.Before(at.Time), At: &at, Reason: "AfterTTL: " + ttl.String() + " after Ready"}
	default: // AfterWorkload
		total := st.CompletedPods + st.RunningPods + int32(len(st.GatedPods))
		if total == 0 || st.RunningPods > 0 || len(st.GatedPods) > 0 {
			return TeardownDecision{Reason: fmt.Sprintf("AfterWorkload: %d of %d workload pod(s) completed", st.CompletedPods, total)}
		}
		t := metav1.NewTime(now)
		return TeardownDecision{Due: true, At: &t, Reason: fmt.Sprintf("AfterWorkload: all %d workload pod(s) completed", total)}
	}
}

// figure is one operation's planning figure and where it comes from.
func figure(l *v1alpha1.LimitsStatus, write bool) (int64, string) {
	if l == nil {
		return 0, SourceUnknown
	}
	if l.Sweep != nil {
		r := l.Sweep.Read
		if write {
			r = l.Sweep.Write
		}
		if r != nil && r.BestBytesPerSecond > 0 {
			return r.BestBytesPerSecond, SourceSweep
		}
	}
	if l.Components != nil {
		r := l.Components.Read
		if write {
			r = l.Components.Write
		}
		if r != nil && r.LimitBytesPerSecond > 0 {
			return r.LimitBytesPerSecond, SourceComponents
		}
	}
	if l.Estimated != nil {
		r := l.Estimated.Read
		if write {
			r = l.Estimated.Write
		}
		if r.LimitBytesPerSecond > 0 {
			return r.LimitBytesPerSecond, SourceEstimated
		}
	}
	return 0, SourceUnknown
}

// Env is the data of the environment ConfigMap.
func Env(bb *v1alpha1.BurstBuffer) map[string]string {
	path := bb.Spec.Workload.MountPath
	if bb.Status.Mount != nil && bb.Status.Mount.Path != "" {
		path = bb.Status.Mount.Path
	}
	nodes := make([]string, 0, len(bb.Status.Nodes))
	for _, n := range bb.Status.Nodes {
		nodes = append(nodes, n.Name)
	}
	env := map[string]string{
		EnvName:   bb.Name,
		EnvEngine: string(bb.Spec.Engine),
		EnvPath:   path,
		EnvNodes:  strings.Join(nodes, ","),
	}
	w, ws := figure(bb.Status.Limits, true)
	r, rs := figure(bb.Status.Limits, false)
	if w > 0 {
		env[EnvWriteBytesPerSecond] = strconv.FormatInt(w, 10)
	}
	if r > 0 {
		env[EnvReadBytesPerSecond] = strconv.FormatInt(r, 10)
	}
	env[EnvWriteLimitSource], env[EnvReadLimitSource] = ws, rs
	env[EnvLimitSource] = ws
	if sourceRank[rs] < sourceRank[ws] {
		env[EnvLimitSource] = rs
	}
	return env
}

// EnvConfigMap is the environment ConfigMap of bb, owned by it, for server-side apply.
func EnvConfigMap(bb *v1alpha1.BurstBuffer) *corev1ac.ConfigMapApplyConfiguration {
	gvk := v1alpha1.GroupVersion.WithKind("BurstBuffer")
	return corev1ac.ConfigMap(EnvConfigMapName(bb.Name), bb.Namespace).
		WithLabels(nodetask.Labels(bb, nodetask.ComponentWorkloadEnv)).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(gvk.GroupVersion().String()).WithKind(gvk.Kind).
			WithName(bb.Name).WithUID(bb.UID).
			WithController(true).WithBlockOwnerDeletion(true)).
		WithData(Env(bb))
}
