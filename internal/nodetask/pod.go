// Package nodetask builds the one-shot pods the operator runs on a burst buffer's nodes
// (preparing and removing directories, probes, benchmarks). Builders are pure functions so
// they can be tested with golden files; the controller applies what they return.
package nodetask

import (
	"fmt"
	"hash/fnv"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// HostMount is where a node task sees the node's storage path.
const HostMount = "/host/storage"

// FileSystemMount is where a node task sees the burst buffer's file system as the workload
// does (status.mount.hostPath: the local engine's node directory, or the BeeGFS client
// mount), so that benchmarks of the file system (stage 3, workload benchmarks) and copies
// (stage-in, stage-out) go through it - for BeeGFS through the client, not to the targets.
const FileSystemMount = "/burst-buffer"

// Standard labels of every child object.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelBurstBufferNamespace is the namespace of the burst buffer a child belongs to: most
	// children run in the operator's namespace (Namespace), where the name alone is not
	// enough.
	LabelBurstBufferNamespace = "beeburst.io/burst-buffer-namespace"
	// LabelBurstBufferUID is the UID of the burst buffer a child belongs to: a burst buffer
	// created again under the same name does not take its predecessor's children for its own.
	LabelBurstBufferUID = "beeburst.io/burst-buffer-uid"
	ManagedBy           = "beeburst-operator"
	// ChildName is the name label of a burst buffer's children. It is not the operator's
	// own ("beeburst"): the task pods run in the manager's namespace, and a selection of the
	// manager by that label (a restart, a log query) must not take them along.
	ChildName = "burst-buffer"
	// PartOf is the part-of label of a burst buffer's children: all of them, across
	// namespaces, are `-l app.kubernetes.io/part-of=beeburst`.
	PartOf = "beeburst"
)

// Labels returns the labels of a child of bb with the given component.
func Labels(bb *v1alpha1.BurstBuffer, component string) map[string]string {
	return map[string]string{
		LabelName:                 ChildName,
		LabelInstance:             bb.Name,
		LabelComponent:            component,
		LabelPartOf:               PartOf,
		LabelManagedBy:            ManagedBy,
		v1alpha1.LabelBurstBuffer: bb.Name,
	}
}

// Name is a deterministic child name: <bb>-<component>-<index>, in the task namespace
// prefixed as TaskName says.
func Name(bb *v1alpha1.BurstBuffer, component string, index int) string {
	return TaskName(bb, fmt.Sprintf("%s-%s-%d", bb.Name, component, index))
}

// Namespace is where bb's host-level children run (status.taskNamespace: the operator's
// namespace), and bb's own namespace for a burst buffer that has none recorded.
func Namespace(bb *v1alpha1.BurstBuffer) string {
	if ns := bb.Status.TaskNamespace; ns != "" {
		return ns
	}
	return bb.Namespace
}

// TaskName is the name of bb's child called name in the task namespace. There the children
// of burst buffers of every namespace meet, so a child outside bb's namespace carries a
// short hash of that namespace in front: burst buffers of one name in two namespaces never
// share a child, and a namespace's children sort together.
func TaskName(bb *v1alpha1.BurstBuffer, name string) string {
	if Namespace(bb) == bb.Namespace {
		return name
	}
	return NamespaceTag(bb.Namespace) + "-" + name
}

// BelongsTo says whether obj is bb's own child (Owned), not an object of the same name that
// belongs to something else - a user's, or another burst buffer's of the same name before.
func BelongsTo(bb *v1alpha1.BurstBuffer, obj metav1.Object) bool {
	if metav1.IsControlledBy(obj, bb) {
		return true
	}
	l := obj.GetLabels()
	return l[LabelBurstBufferUID] == string(bb.UID) && l[v1alpha1.LabelBurstBuffer] == bb.Name && l[LabelBurstBufferNamespace] == bb.Namespace
}

// NamespaceTag is the hash of a namespace that prefixes names in the task namespace.
func NamespaceTag(namespace string) string { return Hash(namespace)[:6] }

// Owned sets what makes obj bb's child: its labels with bb's namespace, and bb as its
// controller owner when they share a namespace (an owner reference cannot cross namespaces;
// teardown deletes the others by their labels).
func Owned(bb *v1alpha1.BurstBuffer, obj *metav1.ObjectMeta) {
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	obj.Labels[LabelBurstBufferNamespace] = bb.Namespace
	obj.Labels[LabelBurstBufferUID] = string(bb.UID)
	obj.OwnerReferences = nil
	if obj.Namespace == bb.Namespace {
		obj.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(bb, v1alpha1.GroupVersion.WithKind("BurstBuffer"))}
	}
}

// DataDir is the burst buffer's directory on a node, below spec.storage.path. It carries
// namespace and name so that an operator looking at a node knows whose data it is.
func DataDir(bb *v1alpha1.BurstBuffer) string {
	return path.Join(bb.Spec.Storage.Path, "beeburst", bb.Namespace+"."+bb.Name)
}

// Spec describes one node task.
type Spec struct {
	Component string
	Index     int
	Node      string
	Image     string
	Args      []string
	// DeadlineSeconds bounds the pod's life from when the kubelet accepts it, including a
	// volume that never mounts (a storage path missing on the node): the kubelet fails the
	// pod with DeadlineExceeded instead of it hanging in ContainerCreating. 0 means 300 s;
	// negative means no deadline (copies of unknown size).
	DeadlineSeconds int64
	// Scheduled pins the pod to Node with required node affinity instead of nodeName, so the
	// scheduler binds its volumes: a claim with WaitForFirstConsumer binding is provisioned
	// for the node, and a claim the node cannot reach leaves the pod Pending with the
	// scheduler's reason instead of failing in the kubelet.
	Scheduled bool
	// Volumes and Mounts are added to the pod and its container.
	Volumes []corev1.Volume
	Mounts  []corev1.VolumeMount
	// MountStorage mounts spec.storage.path (which must already exist on the node: a missing
	// path must fail, not silently create a directory on the root disk) at HostMount.
	MountStorage bool
	// MountFileSystem mounts status.mount.hostPath at FileSystemMount, with HostToContainer
	// propagation (a BeeGFS client mount made after the pod started is seen).
	MountFileSystem bool
	// InBurstBufferNamespace runs the task beside the burst buffer (a copy that mounts the
	// user's claims), not in the task namespace; such a task must need nothing of the host.
	InBurstBufferNamespace bool
	// HostNetwork runs the task in the node's network namespace (network probes).
	HostNetwork bool
	Env         []corev1.EnvVar
}

// Pod builds the pod of a node task, owned by bb. The pod is pinned with nodeName: these
// tasks belong to one node each and must not wait for (or be moved by) the scheduler.
func Pod(bb *v1alpha1.BurstBuffer, s Spec) *corev1.Pod {
	var deadline *int64
	switch {
	case s.DeadlineSeconds == 0:
		deadline = ptr.To(int64(300))
	case s.DeadlineSeconds > 0:
		deadline = ptr.To(s.DeadlineSeconds)
	}
	env := append([]corev1.EnvVar{{
		Name:      "NODE_NAME",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}},
	}}, s.Env...)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name(bb, s.Component, s.Index),
			Namespace: Namespace(bb),
			Labels:    Labels(bb, s.Component),
		},
		Spec: corev1.PodSpec{
			NodeName:                     s.Node,
			RestartPolicy:                corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:        deadline,
			HostNetwork:                  s.HostNetwork,
			AutomountServiceAccountToken: ptr.To(false),
			// Node tasks must run on nodes that are cordoned or tainted for other work too:
			// a burst buffer's node is reserved for its job.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:            s.Component,
				Image:           s.Image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"/agent"},
				// The agent's compact report (< 4096 bytes) becomes the termination message,
				// which the controller reads; progress goes to the log.
				Args:                     append([]string{"--termination-log=/dev/termination-log"}, s.Args...),
				Env:                      env,
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					// Root without privileges: writing below a root-owned host directory
					// needs uid 0, nothing else does.
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"DAC_OVERRIDE", "CHOWN", "FOWNER"}},
				},
			}},
		},
	}
	if s.MountStorage {
		pod.Spec.Volumes = []corev1.Volume{storageVolumeOf(bb)}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: storageVolume, MountPath: HostMount}}
	}
	if s.MountFileSystem && bb.Status.Mount != nil {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{
			Name: "burst-buffer",
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: bb.Status.Mount.HostPath, Type: ptr.To(corev1.HostPathDirectory),
			}},
		})
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{
			Name: "burst-buffer", MountPath: FileSystemMount, MountPropagation: ptr.To(corev1.MountPropagationHostToContainer),
		})
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, s.Volumes...)
	pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, s.Mounts...)
	if s.InBurstBufferNamespace {
		pod.Namespace, pod.Name = bb.Namespace, fmt.Sprintf("%s-%s-%d", bb.Name, s.Component, s.Index)
	}
	Owned(bb, &pod.ObjectMeta)
	if s.Scheduled {
		// matchFields on metadata.name is how DaemonSet pods are pinned: exactly this node.
		pod.Spec.NodeName = ""
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{s.Node},
				}}}},
			},
		}}
	}
	return pod
}

// storageVolume is the volume of spec.storage.path (Spec.MountStorage).
const storageVolume = "storage"

func storageVolumeOf(bb *v1alpha1.BurstBuffer) corev1.Volume {
	return corev1.Volume{
		Name: storageVolume,
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: bb.Spec.Storage.Path, Type: ptr.To(corev1.HostPathDirectory),
		}},
	}
}

// InHost translates a node path below spec.storage.path to where a node task sees it.
func InHost(bb *v1alpha1.BurstBuffer, nodePath string) string {
	rel := strings.TrimPrefix(nodePath, bb.Spec.Storage.Path)
	return path.Join(HostMount, rel)
}

// State is what a node task's pod tells.
type State int

// Pod states as the controller sees them.
const (
	Running State = iota
	Succeeded
	Failed
)

// StateOf summarises a task pod and, when it ended, its termination message (the agent
// writes its compact report there) or the failure reason.
func StateOf(pod *corev1.Pod) (State, string) {
	msg := ""
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			msg = strings.TrimSpace(t.Message)
			if msg == "" && t.Reason != "" {
				msg = t.Reason
			}
		}
	}
	phase := pod.Status.Phase
	if phase != corev1.PodSucceeded && phase != corev1.PodFailed && pod.DeletionTimestamp == nil {
		phase = exited(pod)
	}
	switch phase {
	case corev1.PodSucceeded:
		return Succeeded, msg
	case corev1.PodFailed:
		if msg == "" {
			msg = strings.TrimSpace(pod.Status.Reason + ": " + pod.Status.Message)
		}
		return Failed, msg
	}
	return Running, ""
}

// exited is the phase a pod whose every container has exited will have: with restartPolicy
// Never, all exited with 0 is Succeeded, any other code Failed. The kubelet reports the exit
// (with the termination message) about a second before it writes the phase, on a later sync:
// the hand-offs between measuring runs (prepare, devices, links, each sweep point) waited that
// second each, 4 s of the quick profile's 37 s on the testbed. A pod being deleted keeps its
// phase (its container is killed, not done).
func exited(pod *corev1.Pod) corev1.PodPhase {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || len(pod.Status.ContainerStatuses) != len(pod.Spec.Containers) || len(pod.Spec.Containers) == 0 {
		return pod.Status.Phase
	}
	phase := corev1.PodSucceeded
	for _, cs := range pod.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil {
			return pod.Status.Phase
		}
		if t.ExitCode != 0 {
			phase = corev1.PodFailed
		}
	}
	return phase
}

// Hash is a short stable hash, for names derived from long inputs.
func Hash(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}
