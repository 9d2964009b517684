package engine

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/beeburst/beeburst/internal/nodetask"
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
