package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/engine"
	"github.com/beeburst/beeburst/internal/nodetask"
)

// A pod that cannot start is reported within seconds of the kubelet (or the scheduler) saying
// so, not at its deadline: a storage path missing on a node, an image no node can pull, a pod
// the scheduler can never place or the kubelet refused. Container states and pod conditions
// come with the pod (a watch event); a volume that does not mount is said in the kubelet's
// events only, which are not watched. So a pod that waits on its node is looked at again a
// few seconds apart, with the kubelet's warnings about the pods of its namespace, listed at
// most once per startRecheck however many pods wait there and however often their burst
// buffers are visited.

const (
	// startGrace: a pod younger than this is starting, not stuck; its events are not read
	// (a quick profile starts ten pods at once, most of them in about a second).
	startGrace = 2 * time.Second
	// startRecheck is how often the events of a pod that has not started are read again.
	startRecheck = 3 * time.Second
	// siblingGrace: once a pod of a measuring step cannot start, the kubelets of the step's
	// other waiting pods have this long to say the same before the verdict, so that it names
	// every node where it is so. Kubelets report seconds apart, and their events are read per
	// pod; a verdict on the first word would name one node of several.
	siblingGrace = 2 * time.Second
)

// engineComponents are the pods of the engines' Provision (the file system itself).
var engineComponents = []string{nodetask.ComponentPrepare, nodetask.ComponentModuleCheck, nodetask.ComponentMgmtd,
	nodetask.ComponentMeta, nodetask.ComponentStorage, nodetask.ComponentReady, nodetask.ComponentStripe, nodetask.ComponentClient}

// podEvents remembers, per namespace, the warnings about its pods (the kubelet's and the
// scheduler's: a volume that does not mount, an image that cannot be pulled) for startRecheck.
// One list of a namespace serves all its waiting pods: a chain of 32 nodes starts 160 pods at
// once, and a list per pod, in a row, would hold a visit for seconds while the API server is
// busy.
type podEvents struct {
	mu   sync.Mutex
	read map[string]*namespaceEvents
	// blocked is when each pod was first seen unable to start (siblingGrace runs from it).
	blocked map[types.UID]time.Time
}

// namespaceEvents are the warnings about a namespace's pods, by pod UID, as read at at.
type namespaceEvents struct {
	// listing is held while the namespace is listed: a visit that finds the list stale while
	// another visit lists it waits for that list instead of sending its own.
	listing sync.Mutex
	at      time.Time
	byPod   map[types.UID][]corev1.Event
	// made is when the entry was made: one not read yet is as new as that, so that another
	// namespace's visit does not drop it before its first list.
	made time.Time
}

// entry is ns's events, created empty (never read) the first time.
func (c *podEvents) entry(ns string, now time.Time) *namespaceEvents {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read == nil {
		c.read = map[string]*namespaceEvents{}
	}
	for k, e := range c.read {
		if k != ns && e.listing.TryLock() {
			if now.Sub(e.at) > time.Minute && now.Sub(e.made) > time.Minute {
				delete(c.read, k) // no pod waits there any more
			}
			e.listing.Unlock()
		}
	}
	e := c.read[ns]
	if e == nil {
		e = &namespaceEvents{made: now}
		c.read[ns] = e
	}
	return e
}

// of are the warnings about pod p and when they were read: from the namespace's list when it
// is younger than startRecheck, otherwise listed again now (list).
func (c *podEvents) of(ctx context.Context, p *corev1.Pod, now time.Time, list func(ctx context.Context, ns string) ([]corev1.Event, error)) ([]corev1.Event, time.Time, error) {
	e := c.entry(p.Namespace, now)
	e.listing.Lock()
	defer e.listing.Unlock()
	if e.at.IsZero() || now.Sub(e.at) >= startRecheck {
		events, err := list(ctx, p.Namespace)
		if err != nil {
			return nil, time.Time{}, err
		}
		e.byPod = map[types.UID][]corev1.Event{}
		for _, ev := range events {
			e.byPod[ev.InvolvedObject.UID] = append(e.byPod[ev.InvolvedObject.UID], ev)
		}
		e.at = now
	}
	return e.byPod[p.UID], e.at, nil
}

// readAt is when ns's warnings were last read (zero: never, or long ago).
func (c *podEvents) readAt(ns string) time.Time {
	c.mu.Lock()
	e := c.read[ns]
	c.mu.Unlock()
	if e == nil {
		return time.Time{}
	}
	e.listing.Lock()
	defer e.listing.Unlock()
	return e.at
}

// forget drops ns's warnings: they are read on the next ask.
func (c *podEvents) forget(ns string) {
	c.mu.Lock()
	e := c.read[ns]
	c.mu.Unlock()
	if e != nil {
		e.listing.Lock()
		e.at = time.Time{}
		e.listing.Unlock()
	}
}

// firstBlocked is when pod uid was first seen unable to start, now if this is the first time.
func (c *podEvents) firstBlocked(uid types.UID, now time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked == nil {
		c.blocked = map[types.UID]time.Time{}
	}
	for k, t := range c.blocked {
		if now.Sub(t) > time.Minute {
			delete(c.blocked, k) // its verdict is long given
		}
	}
	t, ok := c.blocked[uid]
	if !ok {
		t = now
		c.blocked[uid] = t
	}
	return t
}

// whyNotStarted says whether a pod that never ran cannot start (nil: it may yet, or it ran),
// what it waits for when the kubelet said something, and when to look again (0: a watch
// event brings the next visit).
func (r *BurstBufferReconciler) whyNotStarted(ctx context.Context, p *corev1.Pod) (*nodetask.Blocked, string, time.Duration, error) {
	if p == nil || p.UID == "" || !p.DeletionTimestamp.IsZero() || !nodetask.NeverRan(p) {
		return nil, "", 0, nil
	}
	var events []corev1.Event
	var recheck time.Duration
	// Events matter on the node: a volume's mount, an image's pull. A pod that ended before it
	// started (its deadline) keeps its events: read once more, no recheck.
	if p.Spec.NodeName != "" && (nodetask.Starting(p) || p.Status.Phase == corev1.PodFailed) {
		now := r.Now()
		age := now.Sub(p.CreationTimestamp.Time)
		if age < startGrace && nodetask.Starting(p) {
			recheck = startGrace - age
		} else {
			evs, at, err := r.podEvents.of(ctx, p, now, r.listPodWarnings)
			if err != nil {
				return nil, "", 0, err
			}
			events, recheck = evs, startRecheck-max(0, now.Sub(at))
		}
		if !nodetask.Starting(p) {
			recheck = 0
		}
	}
	b, waiting := nodetask.Blocker(p, events)
	if b != nil {
		recheck = 0
	}
	return b, waiting, recheck, nil
}

// listPodWarnings reads the warnings about the pods of namespace ns from the API server
// (events are not watched).
func (r *BurstBufferReconciler) listPodWarnings(ctx context.Context, ns string) ([]corev1.Event, error) {
	var list corev1.EventList
	err := r.APIReader.List(ctx, &list, client.InNamespace(ns),
		client.MatchingFields{"involvedObject.kind": "Pod", "type": corev1.EventTypeWarning})
	return list.Items, err
}

// othersHeard holds a measuring step's verdict on its pods that cannot start (blocked) until
// the kubelets of its other waiting pods had siblingGrace to say the same. It returns false
// while the grace runs (a visit is asked for when it ends); then the waiting pods whose
// events were not read since are read again, and those that cannot start either are
// returned, recorded in s.blocked.
func (r *BurstBufferReconciler) othersHeard(ctx context.Context, s *scope, blocked, waiting []*corev1.Pod) ([]*corev1.Pod, bool, error) {
	now := r.Now()
	first := now
	for _, p := range blocked {
		if t := r.podEvents.firstBlocked(p.UID, now); t.Before(first) {
			first = t
		}
	}
	if left := siblingGrace - now.Sub(first); left > 0 {
		s.recheckPods(left)
		return nil, false, nil
	}
	var more []*corev1.Pod
	for _, p := range waiting {
		if slices.Contains(blocked, p) {
			continue
		}
		if r.podEvents.readAt(p.Namespace).Before(first.Add(siblingGrace)) {
			r.podEvents.forget(p.Namespace)
		}
		b, _, _, err := r.whyNotStarted(ctx, p)
		if err != nil {
			return nil, false, err
		}
		if b != nil {
			if s.blocked == nil {
				s.blocked = map[string]*nodetask.Blocked{}
			}
			s.blocked[p.Name] = b
			more = append(more, p)
		}
	}
	return more, true, nil
}

// recheckPods asks for a visit after d (the earliest of a visit's asks wins).
func (s *scope) recheckPods(d time.Duration) {
	if d > 0 {
		s.podRecheck = minPositive(s.podRecheck, max(d, 200*time.Millisecond))
	}
}

// blockedText says in a sentence why pod cannot start on its node and what fixes it.
func (r *BurstBufferReconciler) blockedText(bb *v1alpha1.BurstBuffer, p *corev1.Pod, b *nodetask.Blocked) string {
	what, fix := blockedWhat(bb, b), r.blockedFix(bb, b)
	return fmt.Sprintf("%s, pod %s (%s): %s", what, p.Name, b.Detail, fix)
}

// blockedWhat names what is missing or refused, and where: "spec.storage.path /x does not
// exist on node n1".
func blockedWhat(bb *v1alpha1.BurstBuffer, b *nodetask.Blocked) string {
	node := b.Node
	if node == "" {
		node = "(not scheduled)"
	}
	switch b.Cause {
	case nodetask.HostPathMissing:
		return fmt.Sprintf("%s does not exist on node %s", hostPathMeaning(bb, b), node)
	case nodetask.ImageUnpullable:
		return fmt.Sprintf("node %s cannot pull image %s", node, b.Image)
	case nodetask.Unschedulable:
		return fmt.Sprintf("the scheduler cannot place a pod on node %s", node)
	}
	return fmt.Sprintf("the kubelet on node %s refused a pod", node)
}

// hostPathMeaning names a host path by the field it comes from.
func hostPathMeaning(bb *v1alpha1.BurstBuffer, b *nodetask.Blocked) string {
	switch {
	case b.Path == bb.Spec.Storage.Path:
		return "spec.storage.path " + b.Path
	case bb.Spec.Validation.CompareWith != nil && bb.Spec.Validation.CompareWith.NodeLocal != nil && b.Path == bb.Spec.Validation.CompareWith.NodeLocal.Path:
		return "validation.compareWith.nodeLocal.path " + b.Path
	case bb.Status.Mount != nil && b.Path == bb.Status.Mount.HostPath:
		return "the file system's mount point " + b.Path
	}
	return fmt.Sprintf("host path %s (volume %s)", b.Path, b.Volume)
}

func (r *BurstBufferReconciler) blockedFix(bb *v1alpha1.BurstBuffer, b *nodetask.Blocked) string {
	switch b.Cause {
	case nodetask.HostPathMissing:
		switch {
		case b.Path == bb.Spec.Storage.Path:
			return "create the directory on the node, or recreate the burst buffer with a spec.storage.path that exists on its nodes; nothing was written there"
		case bb.Spec.Validation.CompareWith != nil && bb.Spec.Validation.CompareWith.NodeLocal != nil && b.Path == bb.Spec.Validation.CompareWith.NodeLocal.Path:
			return "the operator never creates it: create it on the node, or name a directory that exists there in a new BurstBuffer"
		}
		return "the directory must exist on the node"
	case nodetask.ImageUnpullable:
		where := "the image in spec.beegfs.images (or the operator's default for it)"
		if b.Image == r.AgentImage {
			where = "the operator's agent image (Helm value agentImage, flag --agent-image)"
		}
		return fmt.Sprintf("correct %s, or let the node reach its registry (and its credentials); the kubelet keeps trying, and the burst buffer goes on if the pull succeeds", where)
	case nodetask.Unschedulable:
		return "it can never be scheduled there as it is"
	}
	return "free what the kubelet names on the node (a host port, memory), or recreate the burst buffer on other nodes"
}

// blockedReason is the Provisioned reason of an engine pod that cannot start.
func blockedReason(bb *v1alpha1.BurstBuffer, b *nodetask.Blocked) string {
	switch {
	case b.Cause == nodetask.HostPathMissing && b.Path == bb.Spec.Storage.Path:
		return v1alpha1.ReasonStoragePathMissing
	case b.Cause == nodetask.ImageUnpullable:
		return v1alpha1.ReasonImagePullFailed
	}
	return v1alpha1.ReasonPodCannotStart
}

// engineBlocked overrides the engine's progress with the first reason its pods cannot start
// for, naming every node and what fixes it; waiting pods the kubelet said something about
// are added to the message. A pod that cannot start outweighs any other verdict: the engine
// would otherwise wait for it, or report its deadline.
func (r *BurstBufferReconciler) engineBlocked(ctx context.Context, s *scope, res *engine.Result) error {
	pods, err := r.taskPods(ctx, s.bb)
	if err != nil {
		return err
	}
	type group struct {
		reason, what, fix, detail string
		nodes, pods               []string
	}
	var groups []*group
	var waiting []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if !slices.Contains(engineComponents, p.Labels[nodetask.LabelComponent]) {
			continue
		}
		b, w, recheck, err := r.whyNotStarted(ctx, p)
		if err != nil {
			return err
		}
		s.recheckPods(recheck)
		if b == nil {
			if w != "" {
				waiting = append(waiting, fmt.Sprintf("%s on %s: %s", p.Name, nodeOf(p), w))
			}
			continue
		}
		g := &group{reason: blockedReason(s.bb, b), fix: r.blockedFix(s.bb, b), detail: "the kubelet: " + b.Detail}
		switch b.Cause {
		case nodetask.HostPathMissing:
			g.what = hostPathMeaning(s.bb, b) + " does not exist on node(s) "
		case nodetask.ImageUnpullable:
			g.what = fmt.Sprintf("image %s cannot be pulled on node(s) ", b.Image)
		case nodetask.Unschedulable:
			g.what, g.detail = "the scheduler cannot place pods on node(s) ", "the scheduler: "+b.Detail
		default:
			g.what = "the kubelet refused pods on node(s) "
		}
		k := slices.IndexFunc(groups, func(o *group) bool { return o.reason == g.reason && o.what == g.what })
		if k < 0 {
			groups = append(groups, g)
		} else {
			g = groups[k]
		}
		if b.Node != "" && !slices.Contains(g.nodes, b.Node) {
			g.nodes = append(g.nodes, b.Node)
		}
		g.pods = append(g.pods, p.Name)
	}
	if len(groups) == 0 {
		if len(waiting) > 0 && !res.Ready {
			sort.Strings(waiting)
			res.Message += "; " + strings.Join(limit(waiting, 4), "; ")
		}
		return nil
	}
	var parts []string
	for _, g := range groups {
		sort.Strings(g.nodes)
		sort.Strings(g.pods)
		msg := g.what + strings.Join(g.nodes, ", ")
		msg += " (" + g.detail + ")"
		msg += fmt.Sprintf(", pod(s) %s: %s", strings.Join(limit(g.pods, 4), ", "), g.fix)
		parts = append(parts, msg)
	}
	res.Ready = false
	res.Reason = groups[0].reason
	res.Message = strings.Join(parts, "; ")
	res.RequeueAfter = 0
	return nil
}
