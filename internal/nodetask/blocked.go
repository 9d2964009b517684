package nodetask

import (
	"regexp"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/beeburst/beeburst/internal/shorten"
)

// Cause is why a pod cannot start.
type Cause string

// Causes of a pod that cannot start.
const (
	// HostPathMissing: a hostPath volume of type Directory names a path the node does not
	// have (the kubelet's "hostPath type check failed", in an event only).
	HostPathMissing Cause = "HostPathMissing"
	// ImageUnpullable: the node cannot pull a container's image, and retrying will not help
	// (no such image, access denied, an unknown registry, an invalid name).
	ImageUnpullable Cause = "ImageUnpullable"
	// Unschedulable: the scheduler cannot place the pod on its node, for a reason that does
	// not pass by itself (the node is gone, a volume bound elsewhere).
	Unschedulable Cause = "Unschedulable"
	// Rejected: the kubelet refused the pod (its admission: a host port in use, too little
	// memory); a pod it refused never runs.
	Rejected Cause = "Rejected"
)

// Blocked is why a pod that has not started cannot start, as the kubelet or the scheduler
// reported it.
type Blocked struct {
	Cause Cause
	// Node is the pod's node ("" before it is scheduled).
	Node string
	// Volume and Path: the hostPath volume that does not mount, and its path on the node.
	Volume, Path string
	// Image is the image that cannot be pulled.
	Image string
	// Detail is the kubelet's or the scheduler's own words, on one line.
	Detail string
}

// NeverRan says whether no container of the pod has started (yet): it waits for the
// scheduler, a volume or an image, or it ended before it started (refused, or its deadline).
func NeverRan(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil || (cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero()) ||
			cs.LastTerminationState.Terminated != nil {
			return false
		}
	}
	return true
}

// Starting: the pod is on its node and has not started yet, where what holds it is said in
// events only (a volume that does not mount) or its container states (an image).
func Starting(p *corev1.Pod) bool {
	return p.DeletionTimestamp.IsZero() && p.Spec.NodeName != "" && NeverRan(p) &&
		(p.Status.Phase == corev1.PodPending || p.Status.Phase == "")
}

// Blocker reads a pod that never ran (NeverRan) with the kubelet's events about it: what
// makes it unable to start, or nil when nothing does (yet); waiting then says what it waits
// for, in a few words, when the kubelet or the scheduler said something ("" otherwise).
func Blocker(p *corev1.Pod, events []corev1.Event) (*Blocked, string) {
	if !NeverRan(p) || !p.DeletionTimestamp.IsZero() {
		return nil, ""
	}
	node := p.Spec.NodeName
	waiting := ""
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
			continue
		}
		if neverSchedulable(c.Message) {
			return &Blocked{Cause: Unschedulable, Node: pinnedNode(p), Detail: shorten.Middle(c.Message, 300)}, ""
		}
		waiting = "not scheduled yet: " + shorten.Middle(c.Message, 300)
	}
	// A pod the kubelet refused at admission is Failed with its reason at once; one that
	// only ran out of time (its deadline) says nothing by that, its events do.
	if p.Status.Phase == corev1.PodFailed && p.Status.Reason != "" && p.Status.Reason != "DeadlineExceeded" {
		return &Blocked{Cause: Rejected, Node: node, Detail: shorten.Middle(p.Status.Reason+": "+p.Status.Message, 300)}, ""
	}
	sorted := append([]corev1.Event(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return EventTime(&sorted[j]).Before(EventTime(&sorted[i])) }) // newest first
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, cs := range statuses {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		image := specImage(p, cs.Name) // as the operator wrote it (the status may expand it)
		if image == "" {
			image = cs.Image
		}
		switch w.Reason {
		case "InvalidImageName", "ErrImageNeverPull":
			return &Blocked{Cause: ImageUnpullable, Node: node, Image: image, Detail: shorten.Middle(w.Reason+": "+w.Message, 300)}, ""
		case "ErrImagePull", "ImagePullBackOff":
			// The back-off's message says only that it backs off; the pull's error is in the
			// kubelet's last "Failed to pull image" event.
			why := w.Message
			if w.Reason == "ImagePullBackOff" || why == "" {
				for _, e := range sorted {
					if e.Reason == "Failed" && strings.Contains(e.Message, "pull image") {
						why = e.Message
						break
					}
				}
			}
			if unpullable(why) {
				return &Blocked{Cause: ImageUnpullable, Node: node, Image: image, Detail: shorten.Middle(w.Reason+": "+why, 300)}, ""
			}
			waiting = "pulling image " + image + ": " + shorten.Middle(w.Reason+": "+why, 300) + " (the kubelet retries)"
		case "CreateContainerConfigError", "CreateContainerError":
			waiting = shorten.Middle(w.Reason+": "+w.Message, 300)
		}
	}
	for _, e := range sorted {
		if e.Reason != "FailedMount" {
			continue
		}
		if m := hostPathCheck.FindStringSubmatch(e.Message); m != nil {
			vol := m[1]
			for _, v := range p.Spec.Volumes {
				if v.Name == vol && v.HostPath != nil {
					return &Blocked{Cause: HostPathMissing, Node: node, Volume: vol, Path: v.HostPath.Path, Detail: shorten.Middle(m[2], 300)}, ""
				}
			}
		}
		if waiting == "" {
			waiting = shorten.Middle("FailedMount: "+e.Message, 300)
		}
	}
	return nil, waiting
}

// hostPathCheck is the kubelet's word for a hostPath volume whose type does not match:
// `MountVolume.SetUp failed for volume "storage" : hostPath type check failed: /mnt/x is not a
// directory`.
var hostPathCheck = regexp.MustCompile(`volume "([^"]+)"\s*:\s*(hostPath type check failed: .*)`)

// unpullable: a pull error that retrying does not cure. The registry answered that the image
// or the access is not there, or the name cannot be a reference; a registry name that does not
// resolve, or a node with no route to it, is as final (a typo, or a node that reaches no
// registry at all). Timeouts, refused connections, rate limits and server errors pass: the
// kubelet's next try may work.
func unpullable(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{
		"not found", "manifest unknown", "name unknown", "pull access denied", "access denied",
		"requested access to the resource is denied", "unauthorized", "authentication required",
		"insufficient_scope", "forbidden", "no such host", "invalid reference format",
		"repository does not exist", "does not exist or no pull access",
		// No route at all from the node (its resolver or the registry): a node that reaches
		// no registry, where the image must be loaded or mirrored - not a passing fault.
		"network is unreachable",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// neverSchedulable reads a scheduler's "0/3 nodes are available: ..." for a pod pinned to
// one node (nodetask pods are, by required node affinity on its name): every other node fails
// the pin, so what the pinned node fails is the rest. Final: no node passes the pin (the node
// is gone), or its volume is bound where the node is not. Resources, an unbound claim and
// the like may pass.
func neverSchedulable(msg string) bool {
	reasons := nodeReasons(msg)
	if len(reasons) == 0 {
		return false
	}
	rest := 0
	for _, r := range reasons {
		if strings.Contains(r, "volume node affinity conflict") {
			return true
		}
		if !strings.Contains(r, "didn't match Pod's node affinity") {
			rest++
		}
	}
	return rest == 0
}

// nodeReasons are the per-node reasons of a scheduler's message: "0/3 nodes are available: 1
// node(s) had volume node affinity conflict, 2 node(s) didn't match Pod's node affinity/
// selector. preemption: ..." gives both clauses.
func nodeReasons(msg string) []string {
	i := strings.Index(msg, "nodes are available:")
	if i < 0 {
		return nil
	}
	rest := msg[i+len("nodes are available:"):]
	if j := strings.Index(rest, ". "); j >= 0 {
		rest = rest[:j]
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ".")
	var out []string
	for _, part := range strings.Split(rest, ", ") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// pinnedNode is the node a pod is pinned to: nodeName, or the metadata.name of its required
// node affinity (Spec.Scheduled).
func pinnedNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == "metadata.name" && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

func specImage(p *corev1.Pod, container string) string {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == container {
			return c.Image
		}
	}
	return ""
}

// EventTime is when an event last happened, whichever of its times its source set.
func EventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
