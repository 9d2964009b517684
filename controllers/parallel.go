package controllers

import (
	"errors"
	"sync"
)

// writesAtOnce bounds the API writes one visit sends at once (inParallel).
const writesAtOnce = 8

// inParallel runs do(0) ... do(n-1), writesAtOnce at a time, and returns their errors
// joined. A visit that creates or deletes many pods (a chain of runs, a tidy) waits for the
// API server once per batch instead of once per pod.
func inParallel(n int, do func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, writesAtOnce)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = do(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
