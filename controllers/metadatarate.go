package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/engine/beegfs"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/parallel"
)

// keepMetadataRate keeps what a beegfs burst buffer's metadata benchmark measured, per
// metadata server, in the per-node cache entry of every node that ran a metadata server, for
// the next burst buffer with spec.target.metadataOperationsPerSecond to size its metadata
// servers from (target.go). pods and reports are the benchmark's, one per node in s.nodes'
// order. As with the device figures, only a figure taken alone is kept (benchmarkConditions).
func (r *BurstBufferReconciler) keepMetadataRate(ctx context.Context, s *scope, pods []*corev1.Pod, reports []bench.Report) error {
	bb := s.bb
	if bb.Spec.Engine != v1alpha1.EngineBeeGFS || len(pods) != len(s.nodes) || len(reports) != len(s.nodes) {
		return nil // the local engine has no metadata servers
	}
	meta := beegfs.PlacementFor(bb, s.nodes).Meta
	perServer, measured, ok := nodecache.MetadataFromReports(reports, len(meta))
	if !ok {
		return nil
	}
	for i, pod := range pods {
		end := reports[i].EndTime
		if end.IsZero() {
			_, end, _ = ranBetween(pod, r.Now())
		}
		measured = later(measured, end)
	}
	cond, err := r.benchmarkConditions(ctx, s, pods)
	if err != nil {
		return err
	}
	fig := nodecache.MetadataFigure{CreatesPerSecondPerServer: perServer, Servers: len(meta), StoragePath: bb.Spec.Storage.Path,
		MeasuredTime: measured, MeasuredBy: bb.Namespace + "/" + bb.Name, Conditions: cond}
	if !fig.Conditions.Alone() {
		logf.FromContext(ctx).Info("metadata rate not kept for reuse: the benchmark did not have its nodes to itself",
			"exclusive", fig.Conditions != nil && fig.Conditions.Exclusive, "otherPods", otherPodsOf(fig.Conditions))
		return nil
	}
	return parallel.Do(len(meta), func(i int) error {
		if cur, ok := r.nodeCache().Get(ctx, meta[i]); ok && sameMetadataFigure(cur.Metadata, &fig) {
			return nil // kept on an earlier visit
		}
		uid := ""
		if obj := s.nodeObj(meta[i]); obj != nil {
			uid = string(obj.UID)
		}
		return r.nodeCache().Update(ctx, meta[i], func(f *nodecache.Figures) {
			if uid != "" && f.NodeUID != "" && f.NodeUID != uid {
				*f = nodecache.Figures{} // another machine's under this name: this node's starts here
			}
			if uid != "" {
				f.NodeUID = uid
			}
			f.Metadata = &fig
		})
	})
}

func sameMetadataFigure(a, b *nodecache.MetadataFigure) bool {
	return a != nil && b != nil && a.MeasuredBy == b.MeasuredBy && a.MeasuredTime.Equal(b.MeasuredTime) &&
		a.CreatesPerSecondPerServer == b.CreatesPerSecondPerServer && a.Servers == b.Servers && a.StoragePath == b.StoragePath
}

func otherPodsOf(c *nodecache.Conditions) []string {
	if c == nil {
		return nil
	}
	return c.OtherPods
}

// benchmarkConditions are the conditions of a benchmark that ran one pod per node of s (in
// s.nodes' order, one node after another): exclusive when every pod was created under the
// nodes' locks, and any other burst buffer's pod on any of the nodes at any time from the
// first pod's start to the last one's end counts - each node's clients load the metadata
// servers on other nodes, so a neighbour of a server slows every node's part. Decided once
// and recorded on the last pod, as runConditions does for one pod.
func (r *BurstBufferReconciler) benchmarkConditions(ctx context.Context, s *scope, pods []*corev1.Pod) (*nodecache.Conditions, error) {
	last := pods[len(pods)-1]
	if last == nil {
		return nil, nil
	}
	if c := recordedConditions(last); c != nil {
		return c, nil
	}
	var from, to time.Time
	for _, pod := range pods {
		if pod == nil {
			return nil, nil // a part not seen: nothing to vouch for
		}
		if start, end, ran := ranBetween(pod, r.Now()); ran {
			if from.IsZero() || start.Before(from) {
				from = start
			}
			to = later(to, end)
		}
	}
	parts := make([]*nodecache.Conditions, len(pods))
	for i, node := range s.nodes {
		others, err := r.otherPodsOn(ctx, s.bb, node, from, to, true)
		if err != nil {
			return nil, err
		}
		parts[i] = podConditions(pods[i], node, from, others)
	}
	return r.recordConditions(ctx, last, nodecache.Together(parts))
}
