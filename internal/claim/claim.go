// Package claim builds the PersistentVolumeClaims through which pods use a burst buffer, and
// the PersistentVolumes behind them. Pure functions: the controller creates what they return.
//
// A claim is created in the burst buffer's namespace as soon as its nodes are known, pre-bound
// (spec.volumeName) to a volume that does not exist yet: a pod that mounts it waits, Pending
// with an unbound claim. The volume is created when the burst buffer is Ready: a `local`
// PersistentVolume of the burst buffer's directory on its nodes (the node-local directory, or
// the BeeGFS client's mount point), with required node affinity to exactly those nodes, so
// the scheduler places the waiting pods there. The kubelet bind-mounts the directory; no pod
// of the user needs a hostPath volume, which Pod Security "baseline" forbids.
//
// Two purposes share the mechanism: the workload's claim, and the staging claim that the
// stage-in and stage-out copies mount (they run in the user's namespace, beside the claims
// they copy from or to, before the workload's claim is bound and after it is gone).
package claim

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Purpose is what a claim is for; the values are the objects' component labels.
type Purpose string

// Purposes.
const (
	Workload Purpose = "claim"
	Staging  Purpose = "staging-claim"
)

// DefaultStorageClass is the storage class of the claims and volumes when the manager is not
// told another (--storage-class). The chart creates it, with no provisioner: the operator
// makes every volume itself, and the class's only job is that no other provisioner takes
// the claims and that the scheduler reads "unbound immediate claim" while they wait.
const DefaultStorageClass = "beeburst"

// minimumRequest is the storage request of a claim when nothing says the burst buffer's size
// before it is measured. A request is a lower bound: the claim's status.capacity shows the
// volume's real size once it is bound.
var minimumRequest = resource.MustParse("1Mi")

// Labels of a burst buffer's claim and volume: those of its children, plus its namespace (a
// volume is cluster-scoped).
func Labels(bb *v1alpha1.BurstBuffer, p Purpose) map[string]string {
	l := nodetask.Labels(bb, string(p))
	l[nodetask.LabelBurstBufferNamespace] = bb.Namespace
	return l
}

// Name is the claim's name: spec.workload.claimName, else the burst buffer's name; the
// staging claim's has "-staging" after it.
func Name(bb *v1alpha1.BurstBuffer, p Purpose) string {
	n := bb.Spec.Workload.ClaimName
	if n == "" {
		n = bb.Name
	}
	if p == Staging {
		n += "-staging"
	}
	return n
}

// VolumeName is the name of the claim's PersistentVolume: the burst buffer's UID, so that a
// burst buffer created again under the same name never meets its predecessor's volume.
func VolumeName(bb *v1alpha1.BurstBuffer, p Purpose) string {
	n := "beeburst-" + string(bb.UID)
	if p == Staging {
		n += "-staging"
	}
	return n
}

// AccessMode says what the engine shares: one file system for all nodes (beegfs:
// ReadWriteMany), or each node's own directory (local: ReadWriteOnce - nothing written on one
// node is seen on another).
func AccessMode(bb *v1alpha1.BurstBuffer) corev1.PersistentVolumeAccessMode {
	if bb.Spec.Engine == v1alpha1.EngineBeeGFS {
		return corev1.ReadWriteMany
	}
	return corev1.ReadWriteOnce
}

// Request is the claim's storage request: what the spec says a pod will see (local: one
// node's capacityPerNode; beegfs: all nodes' together), else a minimal request.
func Request(bb *v1alpha1.BurstBuffer, nodes int) resource.Quantity {
	c := bb.Spec.Storage.CapacityPerNode
	if c == nil || c.IsZero() {
		return minimumRequest.DeepCopy()
	}
	q := c.DeepCopy()
	if bb.Spec.Engine == v1alpha1.EngineBeeGFS && nodes > 1 {
		q = *resource.NewQuantity(c.Value()*int64(nodes), c.Format)
	}
	return q
}

// Claim is the burst buffer's claim of purpose p, pre-bound to its volume. It is owned by the
// burst buffer (same namespace), so that it never outlives it; teardown deletes it first.
func Claim(bb *v1alpha1.BurstBuffer, p Purpose, storageClass string, nodes int) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(bb, p), Namespace: bb.Namespace, Labels: Labels(bb, p),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(bb, v1alpha1.GroupVersion.WithKind("BurstBuffer"))},
		},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{AccessMode(bb)},
			StorageClassName: &storageClass,
			VolumeName:       VolumeName(bb, p),
			VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: Request(bb, nodes)},
			},
		},
	}
}

// Volume is the PersistentVolume behind claim c: the burst buffer's directory (hostPath, as
// status.mount.hostPath says) on nodes, a `local` volume with required affinity to them by
// their kubernetes.io/hostname label. capacity is what a pod sees (local: one node's share;
// beegfs: the whole); zero takes the claim's request. The reclaim policy is Retain: the
// operator deletes the volume itself, and the data goes with the burst buffer's teardown,
// after stage-out.
func Volume(bb *v1alpha1.BurstBuffer, c *corev1.PersistentVolumeClaim, hostPath string, nodes []corev1.Node, capacity resource.Quantity) (*corev1.PersistentVolume, error) {
	if hostPath == "" {
		return nil, fmt.Errorf("the burst buffer has no node directory yet")
	}
	var hosts []string
	for _, n := range nodes {
		h := n.Labels[corev1.LabelHostname]
		if h == "" {
			return nil, fmt.Errorf("node %s has no %s label: a local volume cannot be pinned to it", n.Name, corev1.LabelHostname)
		}
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("the burst buffer has no nodes")
	}
	sort.Strings(hosts)
	if capacity.IsZero() {
		capacity = c.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	p := Purpose(c.Labels[nodetask.LabelComponent])
	return &corev1.PersistentVolume{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{
			Name: VolumeName(bb, p), Labels: Labels(bb, p),
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: capacity},
			AccessModes:                   c.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              *c.Spec.StorageClassName,
			VolumeMode:                    ptr.To(corev1.PersistentVolumeFilesystem),
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, UID: c.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: hostPath}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
					Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: hosts,
				}}}},
			}},
		},
	}, nil
}

// Ours says whether an existing claim is the burst buffer's (its controller owner), not a
// user's claim of the same name.
func Ours(bb *v1alpha1.BurstBuffer, c *corev1.PersistentVolumeClaim) bool {
	ref := metav1.GetControllerOf(c)
	return ref != nil && ref.UID == bb.UID
}

// Mounts says whether pod mounts the claim named name.
func Mounts(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name {
			return true
		}
	}
	return false
}

// Describe says in one line what a pod sees through the claim.
func Describe(bb *v1alpha1.BurstBuffer) string {
	if AccessMode(bb) == corev1.ReadWriteMany {
		return "one BeeGFS file system shared by every pod on the burst buffer's nodes"
	}
	return "each pod sees its own node's private directory (nothing is shared between nodes)"
}

// IsNotYours is the message of a claim of the name that belongs to something else.
func IsNotYours(bb *v1alpha1.BurstBuffer, c *corev1.PersistentVolumeClaim) string {
	owner := "no owner"
	if ref := metav1.GetControllerOf(c); ref != nil {
		owner = strings.ToLower(ref.Kind) + " " + ref.Name
	}
	return fmt.Sprintf("a PersistentVolumeClaim named %s already exists in namespace %s (%s) and is not this burst buffer's: set spec.workload.claimName to another name (create a new BurstBuffer), or delete that claim",
		c.Name, c.Namespace, owner)
}
