package controllers_test

// Shared helpers of the envtest suite: namespaces, burst buffers from Go or YAML, reading their
// conditions and phase, playing the kubelet for task pods, and the create-and-wait steps that
// specs repeat. New helpers belong here, not in a spec file.

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/nodetask"
)

const timeout = 20 * time.Second

func nowMeta() metav1.Time { return metav1.NewTime(time.Now()) }

var nsCounter int

// newNamespace gives each spec its own namespace, so specs do not see each other's objects.
func newNamespace(ctx context.Context) string {
	nsCounter++
	ns := &corev1.Namespace{}
	ns.Name = fmt.Sprintf("bb-test-%d-%d", GinkgoParallelProcess(), nsCounter)
	Expect(k8s.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// namespaceWithTwoNodes is a fresh namespace and two Ready nodes <ns>-a and <ns>-b labelled
// pool=<ns>, which localBB's node selector picks: the setting most specs start from.
func namespaceWithTwoNodes(ctx context.Context) string {
	ns := newNamespace(ctx)
	makeNode(ctx, ns+"-a", map[string]string{"pool": ns})
	makeNode(ctx, ns+"-b", map[string]string{"pool": ns})
	return ns
}

func localBB(ns, name string, nodes int32) *v1alpha1.BurstBuffer {
	return &v1alpha1.BurstBuffer{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.BurstBufferSpec{
			Engine:     v1alpha1.EngineLocal,
			Nodes:      v1alpha1.NodesSpec{Count: nodes, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": ns}}},
			Validation: v1alpha1.ValidationSpec{Profile: v1alpha1.ProfileNone},
		},
	}
}

func get(ctx context.Context, bb *v1alpha1.BurstBuffer) *v1alpha1.BurstBuffer {
	cur := &v1alpha1.BurstBuffer{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur)).To(Succeed())
	return cur
}

func condition(ctx context.Context, bb *v1alpha1.BurstBuffer, typ string) func() *metav1.Condition {
	return func() *metav1.Condition {
		cur := &v1alpha1.BurstBuffer{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur); err != nil {
			return nil
		}
		return meta.FindStatusCondition(cur.Status.Conditions, typ)
	}
}

func phase(ctx context.Context, bb *v1alpha1.BurstBuffer) func() v1alpha1.Phase {
	return func() v1alpha1.Phase {
		cur := &v1alpha1.BurstBuffer{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(bb), cur); err != nil {
			return ""
		}
		return cur.Status.Phase
	}
}

func haveStatus(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(Not(BeNil()), WithTransform(func(c *metav1.Condition) metav1.ConditionStatus { return c.Status }, Equal(status)),
		WithTransform(func(c *metav1.Condition) string { return c.Reason }, Equal(reason)))
}

// operatorNamespace is the manager's own namespace in the suite, where it runs the pods that
// need the nodes' hosts (nodetask.Namespace).
const operatorNamespace = "beeburst-system"

// taskKey is where the operator keeps the child called name (as it would be called beside
// its burst buffer) of a burst buffer in namespace ns: in its own namespace, the name behind
// ns's tag (nodetask.TaskName).
func taskKey(ns, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: operatorNamespace, Name: nodetask.NamespaceTag(ns) + "-" + name}
}

// podKey is where the pod called name of a burst buffer in ns is: in the operator's namespace
// (taskKey) if it is there, else beside the burst buffer (copies, the workload's pods).
func podKey(ctx context.Context, ns, name string) client.ObjectKey {
	if k := taskKey(ns, name); k8s.Get(ctx, k, &corev1.Pod{}) == nil {
		return k
	}
	return client.ObjectKey{Namespace: ns, Name: name}
}

// finishPod plays the kubelet: the task pod ends with the given phase and termination message.
func finishPod(ctx context.Context, ns, name string, phase corev1.PodPhase, message string) {
	pod := &corev1.Pod{}
	Eventually(func() error { return k8s.Get(ctx, podKey(ctx, ns, name), pod) }, timeout).Should(Succeed())
	exit := int32(0)
	if phase == corev1.PodFailed {
		exit = 1
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exit, Message: message, StartedAt: nowMeta(), FinishedAt: nowMeta(),
		}},
	}}
	Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

// gone says whether an object no longer exists.
func gone(ctx context.Context, obj client.Object) func() bool {
	return func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
	}
}

// quickPrepared creates a local burst buffer of two nodes with the quick profile and plays
// the kubelet for its prepare pods: its validation starts.
func quickPrepared(ctx context.Context, ns, name string) *v1alpha1.BurstBuffer {
	bb := localBB(ns, name, 2)
	bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
	Expect(k8s.Create(ctx, bb)).To(Succeed())
	finishPod(ctx, ns, name+"-prep-0", corev1.PodSucceeded, "")
	finishPod(ctx, ns, name+"-prep-1", corev1.PodSucceeded, "")
	return bb
}

// createReady creates a local burst buffer, plays the kubelet for its prepare pods (one per
// node) and waits until it is Ready.
func createReady(ctx context.Context, bb *v1alpha1.BurstBuffer) {
	Expect(k8s.Create(ctx, bb)).To(Succeed())
	for i := range int(bb.Spec.Nodes.Count) {
		finishPod(ctx, bb.Namespace, fmt.Sprintf("%s-prep-%d", bb.Name, i), corev1.PodSucceeded, "")
	}
	Eventually(phase(ctx, bb), timeout).Should(Equal(v1alpha1.PhaseReady))
}

// deleteAndWait deletes a burst buffer and waits until it is gone: for one that never had
// nodes, the finalizer goes without any pod.
func deleteAndWait(ctx context.Context, bb client.Object) {
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, bb))).To(Succeed())
	Eventually(gone(ctx, bb), timeout).Should(BeTrue())
}

// unstructuredBB is a BurstBuffer written as YAML (specYAML: the spec's fields, unindented),
// for objects the typed client could not express: bad values, missing defaults.
func unstructuredBB(ns, name, specYAML string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	Expect(yaml.Unmarshal([]byte("apiVersion: beeburst.io/v1alpha1\nkind: BurstBuffer\nmetadata: {name: "+name+"}\nspec:\n"+indent(specYAML)), &obj.Object)).To(Succeed())
	obj.SetNamespace(ns)
	return obj
}

// podsOf lists the names of the pods the operator made for a burst buffer.
func podsOf(ctx context.Context, ns, name string) []string {
	var names []string
	for _, p := range podsOfBB(ctx, ns, name) {
		// As it would be called beside its burst buffer.
		names = append(names, strings.TrimPrefix(p.Name, nodetask.NamespaceTag(ns)+"-"))
	}
	return names
}

// podsOfBB lists the pods the operator made for a burst buffer, wherever they run.
func podsOfBB(ctx context.Context, ns, name string) []corev1.Pod {
	var out []corev1.Pod
	for _, in := range []string{ns, operatorNamespace} {
		var pods corev1.PodList
		Expect(k8s.List(ctx, &pods, client.InNamespace(in), client.MatchingLabels{
			v1alpha1.LabelBurstBuffer: name, nodetask.LabelBurstBufferNamespace: ns})).To(Succeed())
		out = append(out, pods.Items...)
	}
	return out
}

// warningEvents are the messages of the Warning events with the given reason about an object.
func warningEvents(ctx context.Context, ns, name, reason string) func() []string {
	return func() []string {
		var evs eventsv1.EventList
		Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		var msgs []string
		for _, e := range evs.Items {
			if e.Regarding.Name == name && e.Reason == reason && e.Type == corev1.EventTypeWarning {
				msgs = append(msgs, e.Note)
			}
		}
		return msgs
	}
}

func resourceMust(s string) resource.Quantity { return resource.MustParse(s) }

// loosenCRD replaces the BurstBuffer CRD's spec schema with one that takes anything - no
// types, no rules, no defaults, as an older CRD might have had - and returns the function that
// puts the current one back (also registered by the caller with DeferCleanup). Both wait until
// the API server serves the change.
func loosenCRD(ctx context.Context) func() {
	key := client.ObjectKey{Name: "burstbuffers.beeburst.io"}
	getCRD := func() *unstructured.Unstructured {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		Expect(k8s.Get(ctx, key, crd)).To(Succeed())
		return crd
	}
	// A spec that only a loose schema takes.
	probe := func() error {
		return k8s.Create(ctx, unstructuredBB("default", "loose-probe", "nodes: {count: two}"), client.DryRunAll)
	}
	crd := getCRD()
	original, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	Expect(err).NotTo(HaveOccurred())
	loose, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	Expect(unstructured.SetNestedField(loose[0].(map[string]any),
		map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
		"schema", "openAPIV3Schema", "properties", "spec")).To(Succeed())
	Expect(unstructured.SetNestedSlice(crd.Object, loose, "spec", "versions")).To(Succeed())
	Expect(k8s.Update(ctx, crd)).To(Succeed())
	Eventually(probe, timeout).Should(Succeed())

	restored := false
	return func() {
		if restored {
			return
		}
		restored = true
		Eventually(func() error {
			cur := getCRD()
			Expect(unstructured.SetNestedSlice(cur.Object, original, "spec", "versions")).To(Succeed())
			return k8s.Update(ctx, cur)
		}, timeout).Should(Succeed())
		Eventually(func() bool { return apierrors.IsInvalid(probe()) }, timeout).Should(BeTrue())
	}
}

// cachedEntry is node's entry in the per-node figure cache.
func cachedEntry(ctx context.Context, node string) nodecache.Figures {
	var cm corev1.ConfigMap
	ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: nodecache.Name(node)}, &cm)).To(Succeed())
	f, err := nodecache.Read(&cm)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return f
}

// forgetFiguresOf deletes the nodes' figure caches after the spec, so that the next spec on
// nodes of the same names measures afresh.
func forgetFiguresOf(ctx context.Context, nodes []string) {
	DeferCleanup(func() {
		for _, n := range nodes {
			_ = k8s.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: nodecache.Name(n)}})
		}
	})
}

// budgetRanOut moves bb's validation start ago into the past: the clock of
// validation.timeBudget, without waiting for it.
func budgetRanOut(ctx context.Context, bb *v1alpha1.BurstBuffer, ago time.Duration) {
	Eventually(func() error {
		cur := get(ctx, bb)
		past := metav1.NewTime(time.Now().Add(-ago))
		cur.Status.ValidationStartTime = &past
		return k8s.Status().Update(ctx, cur)
	}, timeout).Should(Succeed())
}

// whileManagerDown runs fn with the operator stopped (what happens while it is down is what
// its first visit after the restart finds), then starts it again - also when fn fails.
func whileManagerDown(fn func()) {
	stopManager()
	restarted := false
	DeferCleanup(func() {
		if !restarted {
			startManager()
		}
	})
	fn()
	startManager()
	restarted = true
}
