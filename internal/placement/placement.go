// Package placement chooses the nodes of a burst buffer: the first nodes by name among those
// spec.nodes selects, or, with spec.nodes.fromWorkload, the nodes of its workload - where the
// workload's pods run, else where its unscheduled (gated) pods could be scheduled. It is pure:
// the controller lists nodes and pods and applies the result.
package placement

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// maxNamedNodes bounds the nodes a message explains one by one: a condition is read by people.
const maxNamedNodes = 8

// Request is what the choice depends on.
type Request struct {
	// Nodes are all nodes of the cluster.
	Nodes []corev1.Node
	// Selector is spec.nodes.selector (labels.Everything() when empty).
	Selector labels.Selector
	// Count is spec.nodes.count.
	Count int
	// FromWorkload is spec.nodes.fromWorkload.
	FromWorkload bool
	// Pods are the workload's pods (only read with FromWorkload).
	Pods []corev1.Pod
	// Workload describes how the pods are selected, for messages, e.g.
	// "pods labelled beeburst.io/burst-buffer=scratch".
	Workload string
}

// Result is the choice, or why there is none yet.
type Result struct {
	// Nodes are the chosen nodes, Count of them, in their order of preference (the first
	// carries the management service of a BeeGFS burst buffer). Empty while waiting.
	Nodes []corev1.Node
	// Reason is the Provisioned condition's reason while waiting: NodesNotFound or
	// WaitingForWorkload. Empty when nodes were chosen.
	Reason string
	// Message says why these nodes, or what the choice waits for.
	Message string
}

// Choose picks req.Count nodes among the Ready, schedulable nodes that match req.Selector.
//
// Without FromWorkload: the first by name, a deterministic choice.
//
// With FromWorkload: the nodes where the workload's pods already run (bound to a node) come
// first, most pods first; then the nodes where its unscheduled pods - normally held by the
// beeburst.io/ready gate - could be scheduled, the nodes that fit the most pods first. A pod
// fits a node as the scheduler's own filters decide it for labels and taints: its nodeSelector
// and required node affinity match the node, and it tolerates the node's NoSchedule and
// NoExecute taints. Resources, pod (anti-)affinity and topology spread are not considered: the
// pods are not scheduled yet, and the burst buffer's gate holds them until its nodes are
// known. Ties go by name. Completed and terminating pods do not count. Without any such pod
// the choice waits (WaitingForWorkload); with fewer candidate nodes than Count it waits too
// (NodesNotFound), as it does without FromWorkload.
func Choose(req Request) Result {
	var eligible []corev1.Node
	for _, n := range req.Nodes {
		if req.Selector.Matches(labels.Set(n.Labels)) && Ready(&n) && !n.Spec.Unschedulable {
			eligible = append(eligible, n)
		}
	}
	sort.Slice(eligible, func(i, j int) bool { return eligible[i].Name < eligible[j].Name })
	if !req.FromWorkload {
		if len(eligible) < req.Count {
			return Result{Reason: v1alpha1.ReasonNodesNotFound, Message: fmt.Sprintf(
				"%d Ready, schedulable node(s) match spec.nodes, %d wanted; waiting for nodes (lower spec.nodes.count or widen spec.nodes.selector)",
				len(eligible), req.Count)}
		}
		chosen := eligible[:req.Count]
		return Result{Nodes: chosen, Message: fmt.Sprintf("nodes %s: the first %d by name of %d Ready, schedulable node(s) matching spec.nodes",
			names(chosen), req.Count, len(eligible))}
	}
	return fromWorkload(req, eligible)
}

// candidate is a node of the workload with what speaks for it.
type candidate struct {
	node    corev1.Node
	running int // workload pods bound to it
	fitting int // unscheduled workload pods that could be scheduled on it
}

func fromWorkload(req Request, eligible []corev1.Node) Result {
	var bound, unscheduled []*corev1.Pod
	for i := range req.Pods {
		p := &req.Pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		} else {
			unscheduled = append(unscheduled, p)
		}
	}
	if len(bound)+len(unscheduled) == 0 {
		return Result{Reason: v1alpha1.ReasonWaitingForWorkload, Message: fmt.Sprintf(
			"spec.nodes.fromWorkload: no workload pod exists yet (%s); create the workload (with the %s scheduling gate, docs/workloads.md) and its nodes are chosen from where its pods run or can be scheduled",
			req.Workload, v1alpha1.SchedulingGate)}
	}

	cands := make([]candidate, 0, len(eligible))
	runningElsewhere := 0
	for _, n := range eligible {
		c := candidate{node: n}
		for _, p := range bound {
			if p.Spec.NodeName == n.Name {
				c.running++
			}
		}
		for _, p := range unscheduled {
			if Fits(p, &n) {
				c.fitting++
			}
		}
		if c.running > 0 || c.fitting > 0 {
			cands = append(cands, c)
		}
	}
	for _, p := range bound {
		if !containsNode(eligible, p.Spec.NodeName) {
			runningElsewhere++
		}
	}
	// Nodes that already run the workload first: its data is written there. Then the nodes
	// most of the waiting pods can use. Name breaks ties, so the choice is stable.
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.running != b.running {
			return a.running > b.running
		}
		if a.fitting != b.fitting {
			return a.fitting > b.fitting
		}
		return a.node.Name < b.node.Name
	})

	pods := fmt.Sprintf("%d workload pod(s): %d bound to a node, %d unscheduled", len(bound)+len(unscheduled), len(bound), len(unscheduled))
	if runningElsewhere > 0 {
		pods += fmt.Sprintf("; %d run on nodes that are not Ready, not schedulable or not selected by spec.nodes.selector", runningElsewhere)
	}
	if len(cands) < req.Count {
		return Result{Reason: v1alpha1.ReasonNodesNotFound, Message: fmt.Sprintf(
			"spec.nodes.fromWorkload: %d Ready, schedulable node(s) matching spec.nodes run the workload's pods or fit its unscheduled ones (nodeSelector, required node affinity, NoSchedule/NoExecute taints), %d wanted (%s); waiting for nodes (lower spec.nodes.count, or widen the pods' placement or spec.nodes.selector)",
			len(cands), req.Count, pods)}
	}
	chosen := cands[:req.Count]
	out := Result{}
	why := make([]string, 0, len(chosen))
	for i, c := range chosen {
		out.Nodes = append(out.Nodes, c.node)
		if i == maxNamedNodes {
			why = append(why, fmt.Sprintf("and %d more", len(chosen)-maxNamedNodes))
			continue
		}
		if i > maxNamedNodes {
			continue
		}
		var parts []string
		if c.running > 0 {
			parts = append(parts, fmt.Sprintf("runs %d", c.running))
		}
		if len(unscheduled) > 0 {
			parts = append(parts, fmt.Sprintf("fits %d of %d unscheduled", c.fitting, len(unscheduled)))
		}
		why = append(why, fmt.Sprintf("%s (%s)", c.node.Name, strings.Join(parts, ", ")))
	}
	out.Message = fmt.Sprintf("nodes %s: the workload's (spec.nodes.fromWorkload; %s): %s",
		names(out.Nodes), pods, strings.Join(why, "; "))
	return out
}

// Fits says whether the scheduler could place an unscheduled pod on the node as far as
// labels and taints go: nodeSelector and required node affinity match, and every NoSchedule
// and NoExecute taint is tolerated. These are the scheduler's own helpers
// (k8s.io/component-helpers), so the answer agrees with its NodeAffinity and TaintToleration
// filters. An affinity the API server accepted but that cannot be parsed fits nowhere.
func Fits(pod *corev1.Pod, node *corev1.Node) bool {
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	if err != nil || !ok {
		return false
	}
	_, untolerated := schedcorev1.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		},
		// Gt/Lt tolerations exist on a pod only if the API server has the comparison
		// operators enabled, so evaluating them is right.
		true)
	return !untolerated
}

// Ready says whether the node's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containsNode(nodes []corev1.Node, name string) bool {
	for i := range nodes {
		if nodes[i].Name == name {
			return true
		}
	}
	return false
}

func names(nodes []corev1.Node) string {
	out := make([]string, len(nodes))
	for i := range nodes {
		out[i] = nodes[i].Name
	}
	return "[" + strings.Join(out, " ") + "]"
}
