package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/nodetask"
	"github.com/beeburst/beeburst/internal/parallel"
)

// The quick profile chains its runs on each node (agentapi.Chain): every pod of stage 2's
// device probes and links and of stage 3's sweep is created at once, and each run measures as
// soon as the runs before it on its node wrote their end into a node-local directory. The
// operator only reads results: no pod start and no kubelet report of a container's end (the
// kubelet looks once a second) lies between two runs - about 1.3 s per hand-off on the testbed,
// three hand-offs, where the quick profile measures 14 s in all. The first run on a node waits
// until the node's other pods started: no start-up lies beside a measurement. Every run that
// succeeded holds its exit until the runs after it ended, so that its end (a container's exit,
// its sandbox's teardown) lies beside the run after the next: beside the links, CPU-bound on
// the testbed, it cost them 5-20%; beside a sweep point, nothing measurable
// (docs/architecture.md, "The quick profile's runs"). The operator reads a run's
// result one run late, and a failed run, which exits at once, releases the runs before it.
//
// The standard profile is not chained: its runs take 10 s, a hand-off is a small share of it,
// and a long chain would hold a dozen idle pods per node for minutes. Nor is beegfs's sweep:
// StorageBench (and the chunk-size runs) come between the links and the sweep, driven by the
// operator; nor a sweep with points on fewer than all nodes (validation.sweep.nodes).

// chained is one pod of the chain with its place: the runs on its node it follows, for a
// node's first run the runs whose pods it waits to start, and the runs after it, whose end it
// waits for before it exits.
type chained struct {
	pod                       *corev1.Pod
	after, startWith, holdFor []string
}

// chainOf is the chain of bb's runs (nil when they are not chained), planned once per visit.
func (r *BurstBufferReconciler) chainOf(ctx context.Context, s *scope) []chained {
	if !s.chainPlanned {
		s.chain, s.chainPlanned = r.chainedPods(ctx, s), true
	}
	return s.chain
}

// inChain puts pod, about to be created, in its place in the chain, if it has one: a pod of
// the chain created again (deleted by hand) still waits for the runs before it.
func (r *BurstBufferReconciler) inChain(ctx context.Context, s *scope, pod *corev1.Pod) {
	for _, c := range r.chainOf(ctx, s) {
		if c.pod.Name == pod.Name {
			nodetask.InChain(s.bb, pod, agentapi.Chain{After: c.after, StartWith: c.startWith, HoldFor: c.holdFor})
			return
		}
	}
}

// chainedPods are the pods of the chain, each node's in the order its runs measure: the device
// probe (unless its figures are reused), the node's end of the links (the pair it serves and
// the pair it sends in, at once), then the sweep's points it takes part in. Nil for a burst
// buffer whose runs are not chained.
func (r *BurstBufferReconciler) chainedPods(ctx context.Context, s *scope) []chained {
	bb := s.bb
	if bb.Spec.Validation.Profile != v1alpha1.ProfileQuick || deviceProbeRound(bb) > 1 || len(s.nodes) == 0 {
		return nil
	}
	n := len(s.nodes)
	// levels[i] are node i's runs, level by level.
	levels := make([][][]*corev1.Pod, n)
	for i, node := range s.nodes {
		if _, reused := r.reusableFigures(ctx, s, node); !reused {
			levels[i] = append(levels[i], []*corev1.Pod{
				nodetask.DeviceProbePod(bb, r.AgentImage, i, node, linkDiscoveryAddress(bb, s.nodeObj(node)), 1)})
		}
		if n > 1 {
			// Node i serves pair i and sends in pair i-1 (probeLinks: pair k is a server on
			// node k and its client on node k+1). The client's address is the server node's
			// InternalIP; without one nothing is chained.
			k := (i + n - 1) % n
			addr := nodeAddress(s.nodeObj(s.nodes[k]))
			if addr == "" {
				return nil // the client's address is the server pod's, once it started
			}
			levels[i] = append(levels[i], []*corev1.Pod{
				nodetask.NetServerPod(bb, r.AgentImage, i, node), nodetask.NetClientPod(bb, r.AgentImage, k, node, addr)})
		}
	}
	if points, seconds := planSweep(bb, n); bb.Spec.Engine == v1alpha1.EngineLocal && allNodes(points, n) {
		for k, p := range points {
			for i := 0; i < p.m; i++ {
				levels[i] = append(levels[i], []*corev1.Pod{nodetask.SweepPod(bb, r.AgentImage, k, i, s.nodes[i], p.n, seconds)})
			}
		}
	}
	var out []chained
	for i := range levels {
		var all []string
		for _, l := range levels[i] {
			for _, p := range l {
				all = append(all, p.Name)
			}
		}
		var prev []string
		for j, l := range levels[i] {
			var names, next []string
			if j+1 < len(levels[i]) {
				for _, p := range levels[i][j+1] {
					next = append(next, p.Name)
				}
			}
			for _, p := range l {
				c := chained{pod: p, after: prev, holdFor: next}
				if j == 0 {
					c.startWith = all
				}
				out = append(out, c)
				names = append(names, p.Name)
			}
			prev = names
		}
	}
	return out
}

// allNodes: every point of the sweep runs on all n nodes. A point on fewer would let the
// nodes outside it go on to the next point alone, and a point's nodes must measure together.
func allNodes(points []sweepPoint, n int) bool {
	for _, p := range points {
		if p.m != n {
			return false
		}
	}
	return true
}

// startChain creates the chain's pods on stage 2's first visit with the locks: all at once,
// before the first run measures. Once one exists the chain has started: a pod stopped since
// (stopMeasuringPods) is not created again here; a step that needs it creates it.
func (r *BurstBufferReconciler) startChain(ctx context.Context, s *scope) error {
	chain := r.chainOf(ctx, s)
	for _, c := range chain {
		err := r.Get(ctx, client.ObjectKeyFromObject(c.pod), &corev1.Pod{})
		if err == nil || !apierrors.IsNotFound(err) {
			return client.IgnoreNotFound(err)
		}
	}
	if len(chain) == 0 {
		return nil
	}
	// The first one takes the node locks; with them held, the others are created a few at
	// a time: one by one, a chain of 32 nodes (160 pods) would hold its visit for seconds.
	if _, _, _, err := r.runMeasuring(ctx, s, chain[0].pod); err != nil || !s.locks.held {
		return err
	}
	// Each creates a copy: the client writes the API server's answer into the object it is
	// given, and the plan's pods are read by every other creation meanwhile (inChain).
	return parallel.Do(len(chain)-1, func(i int) error { return r.createMeasuring(ctx, s, chain[i+1].pod.DeepCopy()) })
}
