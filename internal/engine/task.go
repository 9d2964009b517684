package engine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// RunTask creates a one-shot node-task pod unless it exists and reports its state. Pods are
// immutable, so an existing pod is read, not re-applied; a finished pod is kept (its
// termination message is the result) until its owner goes.
func RunTask(ctx context.Context, c client.Client, pod *corev1.Pod) (nodetask.State, string, error) {
	var cur corev1.Pod
	err := c.Get(ctx, client.ObjectKeyFromObject(pod), &cur)
	if apierrors.IsNotFound(err) {
		if err := c.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return nodetask.Running, "", err
		}
		return nodetask.Running, "", nil
	}
	if err != nil {
		return nodetask.Running, "", err
	}
	st, msg := nodetask.StateOf(&cur)
	return st, msg, nil
}

// RunTasks runs n node-task pods (pod(i)), several at a time (parallel.Do), and returns each
// one's state and message as RunTask does.
func RunTasks(ctx context.Context, c client.Client, n int, pod func(i int) *corev1.Pod) ([]nodetask.State, []string, error) {
	states, msgs := make([]nodetask.State, n), make([]string, n)
	err := parallel.Do(n, func(i int) (err error) {
		states[i], msgs[i], err = RunTask(ctx, c, pod(i))
		return err
	})
	return states, msgs, err
}

// RemoveNodeData runs one clean pod per node (cleans[i] on nodes[i]) and is done when all
// succeeded. A node whose status.nodes entry has a removal (nothing to remove there, the node
// is gone, or spec.teardown.hurry gave it up - the controller decides that) needs none. A
// failed clean pod keeps the teardown from being done - data must not be left behind
// silently, nor the finalizer removed while it is there - and stays: the controller shows its
// failure in the status and deletes it for a fresh one when it decides to retry, wherever it
// runs (it looks in fallbackNamespace too: MovedKey).
//
// In a namespace that is being deleted (`kubectl delete namespace` with a burst buffer in it,
// the commonest way to clean up) no pod can be created, yet the namespace waits for the burst
// buffer's finalizer, which waits for these pods. So a clean pod the namespace refuses runs in
// fallbackNamespace (the operator's own) instead: the same task, without an owner reference
// (owners cannot cross namespaces), deleted here once every node is clean.
func RemoveNodeData(ctx context.Context, c client.Client, bb *v1alpha1.BurstBuffer, nodes []string, cleans []*corev1.Pod, fallbackNamespace string) (bool, error) {
	settled := map[string]bool{}
	for _, n := range bb.Status.Nodes {
		settled[n.Name] = n.Removal != ""
	}
	// Each node's clean pod is looked at (and created) on its own, several at a time: a
	// visit to a burst buffer of many nodes waits for the API server once per batch.
	type look struct {
		pod   *corev1.Pod
		state nodetask.State
	}
	looks := make([]look, len(cleans))
	err := parallel.Do(len(cleans), func(i int) error {
		pod := cleans[i]
		if fallbackNamespace != "" && fallbackNamespace != pod.Namespace {
			alt := elsewhere(pod, fallbackNamespace)
			var cur corev1.Pod
			err := c.Get(ctx, client.ObjectKeyFromObject(alt), &cur)
			if err == nil {
				pod = alt
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		if settled[nodes[i]] {
			looks[i] = look{pod: pod, state: nodetask.Succeeded}
			return nil
		}
		st, _, err := RunTask(ctx, c, pod)
		if err != nil && fallbackNamespace != "" && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			pod = elsewhere(pod, fallbackNamespace)
			st, _, err = RunTask(ctx, c, pod)
		}
		looks[i] = look{pod: pod, state: st}
		return err
	})
	if err != nil {
		return false, err
	}
	done := 0
	var moved []*corev1.Pod
	for _, l := range looks {
		if l.pod.Namespace == fallbackNamespace {
			moved = append(moved, l.pod)
		}
		if l.state == nodetask.Succeeded {
			done++
		}
	}
	if done < len(cleans) {
		return false, nil
	}
	for _, p := range moved {
		if err := c.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return false, err
		}
	}
	return true, nil
}

// MovedKey is where the pod namespace/name runs when it had to move to namespace ns: named
// after its own namespace too (unique in ns).
func MovedKey(namespace, name, ns string) client.ObjectKey {
	moved := namespace + "-" + name
	if len(moved) > 253 {
		moved = moved[:253]
	}
	return client.ObjectKey{Namespace: ns, Name: moved}
}

// elsewhere is pod as it runs in namespace ns (MovedKey), labelled with its own namespace,
// without owner references.
func elsewhere(pod *corev1.Pod, ns string) *corev1.Pod {
	p := pod.DeepCopy()
	key := MovedKey(pod.Namespace, pod.Name, ns)
	p.Namespace, p.Name = key.Namespace, key.Name
	p.OwnerReferences = nil
	p.ResourceVersion = ""
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[nodetask.LabelBurstBufferNamespace] = pod.Namespace
	return p
}
