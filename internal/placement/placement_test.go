package placement

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func node(name string, lbls map[string]string, taints ...corev1.Taint) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls},
		Spec:       corev1.NodeSpec{Taints: taints},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func gated(name string, nodeSelector map[string]string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeSelector: nodeSelector,
			SchedulingGates: []corev1.PodSchedulingGate{{Name: v1alpha1.SchedulingGate}}},
	}
}

func bound(name, nodeName string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

func chosen(r Result) string {
	var out []string
	for _, n := range r.Nodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, ",")
}

var gpuTaint = corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}

func TestChoose(t *testing.T) {
	cordoned := node("c-cordoned", nil)
	cordoned.Spec.Unschedulable = true
	notReady := node("c-notready", nil)
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	cluster := []corev1.Node{
		node("d", map[string]string{"zone": "b", "disk": "nvme"}),
		node("a", map[string]string{"zone": "a", "disk": "nvme"}),
		node("b", map[string]string{"zone": "a"}),
		node("c", map[string]string{"zone": "b", "disk": "nvme"}, gpuTaint),
		cordoned, notReady,
	}
	nvme := labels.SelectorFromSet(labels.Set{"disk": "nvme"})
	withAffinity := gated("affine", nil)
	withAffinity.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}}},
	}}}
	tolerant := gated("tolerant", map[string]string{"zone": "b"})
	tolerant.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	done := bound("done", "b")
	done.Status.Phase = corev1.PodSucceeded

	cases := []struct {
		name         string
		sel          labels.Selector
		count        int
		fromWorkload bool
		pods         []corev1.Pod
		want         string // chosen nodes, or the reason when waiting
		msg          string // a part of the message
	}{
		{name: "by name: Ready and schedulable only", sel: labels.Everything(), count: 3, want: "a,b,c", msg: "the first 3 by name of 4"},
		{name: "by name within the selector", sel: nvme, count: 2, want: "a,c"},
		{name: "by name: too few", sel: nvme, count: 4, want: v1alpha1.ReasonNodesNotFound, msg: "3 Ready, schedulable node(s) match spec.nodes, 4 wanted"},
		{name: "workload: none yet", sel: labels.Everything(), count: 1, fromWorkload: true, want: v1alpha1.ReasonWaitingForWorkload, msg: "no workload pod exists yet"},
		{name: "workload: completed pods do not count", sel: labels.Everything(), count: 1, fromWorkload: true, pods: []corev1.Pod{done}, want: v1alpha1.ReasonWaitingForWorkload},
		{name: "workload: a gated pod's nodeSelector, taints keep c out", sel: labels.Everything(), count: 1, fromWorkload: true,
			pods: []corev1.Pod{gated("w-0", map[string]string{"zone": "b"})}, want: "d", msg: "d (fits 1 of 1 unscheduled)"},
		{name: "workload: a toleration lets the pod onto the tainted node", sel: labels.Everything(), count: 2, fromWorkload: true,
			pods: []corev1.Pod{tolerant}, want: "c,d"},
		{name: "workload: required node affinity", sel: labels.Everything(), count: 1, fromWorkload: true,
			pods: []corev1.Pod{withAffinity}, want: "d"},
		{name: "workload: nodes that run its pods come first, then where most pods fit", sel: labels.Everything(), count: 3, fromWorkload: true,
			pods: []corev1.Pod{bound("r-0", "b"), bound("r-1", "b"), bound("r-2", "d"), gated("w-0", map[string]string{"zone": "a"}), gated("w-1", nil)},
			want: "b,d,a", msg: "b (runs 2, fits 2 of 2 unscheduled); d (runs 1, fits 1 of 2 unscheduled); a (fits 2 of 2 unscheduled)"},
		{name: "workload: intersected with spec.nodes.selector", sel: nvme, count: 1, fromWorkload: true,
			pods: []corev1.Pod{bound("r-0", "b"), gated("w-0", map[string]string{"zone": "a"})}, want: "a",
			msg: "1 run on nodes that are not Ready, not schedulable or not selected"},
		{name: "workload: too few nodes fit", sel: labels.Everything(), count: 2, fromWorkload: true,
			pods: []corev1.Pod{gated("w-0", map[string]string{"zone": "b"})}, want: v1alpha1.ReasonNodesNotFound,
			msg: "1 Ready, schedulable node(s) matching spec.nodes run the workload's pods or fit its unscheduled ones"},
		{name: "workload: a pod on a cordoned node does not bring it in", sel: labels.Everything(), count: 1, fromWorkload: true,
			pods: []corev1.Pod{bound("r-0", "c-cordoned")}, want: v1alpha1.ReasonNodesNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Choose(Request{Nodes: cluster, Selector: tc.sel, Count: tc.count, FromWorkload: tc.fromWorkload, Pods: tc.pods,
				Workload: "pods labelled beeburst.io/burst-buffer=x"})
			got := chosen(r)
			if r.Reason != "" {
				got = r.Reason
				if len(r.Nodes) > 0 {
					t.Errorf("waiting with nodes %v", r.Nodes)
				}
			}
			if got != tc.want {
				t.Errorf("got %s, want %s (message: %s)", got, tc.want, r.Message)
			}
			if !strings.Contains(r.Message, tc.msg) {
				t.Errorf("message %q lacks %q", r.Message, tc.msg)
			}
		})
	}
}

func TestChooseIsStableAndBoundsTheMessage(t *testing.T) {
	var nodes []corev1.Node
	var pods []corev1.Pod
	for _, n := range []string{"n09", "n03", "n11", "n01", "n07", "n05", "n10", "n02", "n04", "n06", "n08", "n12"} {
		nodes = append(nodes, node(n, nil))
	}
	pods = append(pods, gated("w", nil))
	r := Choose(Request{Nodes: nodes, Selector: labels.Everything(), Count: 10, FromWorkload: true, Pods: pods})
	if got := chosen(r); got != "n01,n02,n03,n04,n05,n06,n07,n08,n09,n10" {
		t.Errorf("ties must go by name: %s", got)
	}
	if !strings.Contains(r.Message, "and 2 more") || strings.Contains(r.Message, "n09 (") {
		t.Errorf("message names at most 8 nodes one by one: %s", r.Message)
	}
}

func TestFitsNoExecuteAndPreferNoSchedule(t *testing.T) {
	pod := gated("w", nil)
	soft := node("soft", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule})
	hard := node("hard", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute})
	if !Fits(&pod, &soft) {
		t.Error("PreferNoSchedule does not keep a pod off a node")
	}
	if Fits(&pod, &hard) {
		t.Error("an untolerated NoExecute taint keeps a pod off a node")
	}
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	if !Fits(&pod, &hard) {
		t.Error("a toleration without effect tolerates every effect of its key")
	}
}
