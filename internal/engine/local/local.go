// Package local is the local engine: private node-local scratch, one directory per node
// below spec.storage.path, made and removed by one-shot agent pods on each node.
package local

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// Engine is the local engine.
type Engine struct {
	Client     client.Client
	AgentImage string
	// TaskNamespace runs the directory removal when the burst buffer's namespace is being
	// deleted (engine.RemoveNodeData); the operator's namespace. Empty: never elsewhere.
	TaskNamespace string
}

var _ engine.Engine = &Engine{}

// PreparePod makes the burst buffer's directory on one node.
func PreparePod(bb *v1alpha1.BurstBuffer, image string, index int, node string) *corev1.Pod {
	return nodetask.Pod(bb, nodetask.Spec{
		Component: nodetask.ComponentPrepare, Index: index, Node: node, Image: image,
		Args:            agentapi.DirCreate{Path: nodetask.InHost(bb, nodetask.DataDir(bb))}.Args(),
		DeadlineSeconds: 120, MountStorage: true,
	})
}

// CleanPod removes the burst buffer's directory on one node.
func CleanPod(bb *v1alpha1.BurstBuffer, image string, index int, node string) *corev1.Pod {
	return nodetask.Pod(bb, nodetask.Spec{
		Component: nodetask.ComponentClean, Index: index, Node: node, Image: image,
		Args:            agentapi.DirRemove{Path: nodetask.InHost(bb, nodetask.DataDir(bb))}.Args(),
		DeadlineSeconds: 600, MountStorage: true,
	})
}

// Provision runs one prepare pod per node and is ready when all succeeded. The pods are
// created several at a time: a visit to a burst buffer of many nodes waits for the API
// server once per batch, not once per node.
func (e *Engine) Provision(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (engine.Result, error) {
	res := engine.Result{Prepared: map[string]bool{}, FreeBytes: map[string]int64{}}
	states, msgs, err := engine.RunTasks(ctx, e.Client, len(nodes), func(i int) *corev1.Pod {
		return PreparePod(bb, e.AgentImage, i, nodes[i])
	})
	if err != nil {
		return res, err
	}
	var failed []string
	for i, n := range nodes {
		switch states[i] {
		case nodetask.Succeeded:
			res.Prepared[n] = true
			// The space free after the directory was made (an agent that does not report it:
			// unknown; 0 is a full file system).
			if rep, err := bench.DecodeReport([]byte(msgs[i])); err == nil && rep.FreeBytes != nil {
				res.FreeBytes[n] = *rep.FreeBytes
			}
		case nodetask.Failed:
			failed = append(failed, fmt.Sprintf("%s: %s", n, msgs[i]))
		}
	}
	switch {
	case len(failed) > 0:
		sort.Strings(failed)
		res.Reason = v1alpha1.ReasonPrepareFailed
		res.Message = fmt.Sprintf("could not create %s on %d node(s) (does spec.storage.path %s exist there?): %s",
			nodetask.DataDir(bb), len(failed), bb.Spec.Storage.Path, strings.Join(failed, "; "))
	case len(res.Prepared) == len(nodes):
		res.Ready = true
		res.Reason = v1alpha1.ReasonProvisioned
		res.Message = fmt.Sprintf("%s exists on %d node(s)", nodetask.DataDir(bb), len(nodes))
		res.Mount = &v1alpha1.MountStatus{Path: bb.Spec.Workload.MountPath, HostPath: nodetask.DataDir(bb)}
	default:
		res.Reason = v1alpha1.ReasonProvisioning
		res.Message = fmt.Sprintf("preparing %s: %d of %d node(s) done", nodetask.DataDir(bb), len(res.Prepared), len(nodes))
	}
	return res, nil
}

// Teardown removes the burst buffer's directory on every node.
func (e *Engine) Teardown(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (bool, error) {
	cleans := make([]*corev1.Pod, len(nodes))
	for i, n := range nodes {
		cleans[i] = CleanPod(bb, e.AgentImage, i, n)
	}
	return engine.RemoveNodeData(ctx, e.Client, bb, nodes, cleans, e.TaskNamespace)
}
