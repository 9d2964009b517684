// Package parallel runs the independent API writes of one visit a bounded number at a time.
// A visit that writes one object per node (pods created or deleted, each node's lock given
// back, each node's cached figures) would otherwise wait for the API server once per node:
// on a 32-node burst buffer that is the whole of a slow visit, and the other burst buffers
// wait in the queue behind it.
package parallel

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// AtOnce bounds the writes Do has in flight. The API server and etcd batch concurrent
// writes, so a batch costs about one write's latency; the bound keeps one visit from
// crowding out the others' (MaxConcurrentReconciles visits run at once).
const AtOnce = 16

// Do runs do(0) ... do(n-1), AtOnce at a time, and returns their errors joined (nil when
// all succeed). Every call runs even when one fails: the writes are independent, and a
// partial batch is what the next visit would redo anyway. do must be safe to run
// concurrently: write results to its own index of a slice, never to a shared map.
//
// A call that panics fails with an error that says so, with its stack: controller-runtime
// recovers a visit's panic, but not one in a goroutine the visit started, which would end
// the manager and every other visit with it.
func Do(n int, do func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, AtOnce)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic in write %d of %d: %v\n%s", i+1, n, p, debug.Stack())
				}
				<-sem
			}()
			errs[i] = do(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
