// Package engine defines what a file-system engine does for a burst buffer. The controller
// drives engines through this interface only; each engine owns its children.
package engine

import (
	"context"
	"time"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

// Result is what an engine reports after a visit.
type Result struct {
	// Ready is true when the file system is usable on every node.
	Ready bool
	// Reason and Message go into the Provisioned condition. The reason is one of
	// api/v1alpha1's; its kind there says whether the burst buffer is Failed (a terminal
	// reason such as ClientModuleMissing or PortShiftExhausted) or still in progress.
	Reason  string
	Message string
	// Prepared lists the nodes whose part is done.
	Prepared map[string]bool
	// Mount says how workload pods reach the file system, when Ready.
	Mount *v1alpha1.MountStatus
	// FreeBytes is the space free on spec.storage.path of each prepared node when the engine
	// prepared it, where the engine reads it (the local engine's prepare pods); a node
	// without an entry: unknown.
	FreeBytes map[string]int64
	// RequeueAfter asks for another visit after this long when no watched object will bring
	// one (e.g. waiting for a user's Secret, which the operator does not cache). Zero: none.
	RequeueAfter time.Duration
}

// Engine provisions and tears down one kind of file system. Both calls are idempotent and
// must not block: they create children and report progress; watches bring the next visit.
type Engine interface {
	// Provision creates what the file system needs on nodes and reports whether it is ready.
	Provision(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (Result, error)
	// Teardown removes the file system and the data on the nodes; done is true when nothing
	// is left. The controller calls it only after stage-out finished (or hurry).
	Teardown(ctx context.Context, bb *v1alpha1.BurstBuffer, nodes []string) (done bool, err error)
}
