package controllers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// staleRecheck is when a skipped visit comes back if no watch event came first.
const staleRecheck = time.Second

// staleGuard keeps a visit from working on a burst buffer older than one this manager already
// wrote. The manager reads burst buffers from its cache, which learns of a status patch only
// when the watch delivers it; a visit that starts in between (a pod's event right after the
// patch) sees the status from before it and decides again: a verdict reached twice, a pod the
// last visit deleted created anew - seen in envtest, where the comparison's unschedulable pod
// came back after the claim had been reported not mountable. So each visit that changed the
// object remembers the resourceVersions it read and went through, and a visit that reads one
// of them skips: the last patch's own watch event brings the next visit, with the new status.
//
// It also remembers the burst buffers whose teardown this manager finished (finalizer
// removed), by UID: a visit that reads one afterwards, from a cache that has not yet learnt
// of the removal, does nothing. Such a visit would run the teardown again from a status that
// never recorded the nodes as settled, and start clean pods that nothing deletes once the
// object is gone (the pods' cache may learn of their deletion before the burst buffers'
// cache learns of the finalizer's removal).
type staleGuard struct {
	mu sync.Mutex
	// passed are, per burst buffer, the resourceVersions its last changing visit read or
	// went through (the finalizer's patch, then the status patch).
	passed map[types.NamespacedName][]string
	// finished are the burst buffers whose finalizer this manager removed, with when.
	finished map[types.UID]time.Time
}

// finishedKept is how long a finished teardown is remembered: far longer than a cache takes
// to learn of a deletion; a UID is never reused.
const finishedKept = 10 * time.Minute

// finish records that uid's teardown is over (its finalizer removed) at now.
func (g *staleGuard) finish(uid types.UID, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.finished == nil {
		g.finished = map[types.UID]time.Time{}
	}
	for u, at := range g.finished {
		if now.Sub(at) > finishedKept {
			delete(g.finished, u)
		}
	}
	g.finished[uid] = now
}

// isFinished says whether this manager finished uid's teardown.
func (g *staleGuard) isFinished(uid types.UID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.finished[uid]
	return ok
}

// stale says whether rv, read from the cache for key, is older than what this manager wrote.
// A newer version clears the record: the cache has caught up.
func (g *staleGuard) stale(key types.NamespacedName, rv string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	passed, ok := g.passed[key]
	if !ok {
		return false
	}
	for _, p := range passed {
		if p == rv {
			return true
		}
	}
	delete(g.passed, key)
	return false
}

// wrote records that a visit left the object at version to, having read or gone through the
// versions passed on the way.
func (g *staleGuard) wrote(key types.NamespacedName, to string, passed ...string) {
	var older []string
	for _, p := range passed {
		if p != "" && p != to {
			older = append(older, p)
		}
	}
	if len(older) == 0 {
		return // nothing written
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.passed == nil {
		g.passed = map[types.NamespacedName][]string{}
	}
	g.passed[key] = older
}

// forget drops a burst buffer that is gone.
func (g *staleGuard) forget(key types.NamespacedName) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.passed, key)
}
