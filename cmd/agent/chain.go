package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/beeburst/beeburst/internal/agentapi"
)

// The chain of a node's runs (agentapi.Chain): the pods of a validation's runs start together,
// and each run measures once the runs before it on its node have ended. The markers are empty
// files in a node-local directory: <name>.started when a run's agent starts, <name>.done when
// its report is written, whatever its outcome - the node is free either way, and the operator
// ends the validation (deleting the runs still waiting) when a run failed.

// chainPoll is how often a waiting run looks for its markers: a run starts at most this late.
const chainPoll = 20 * time.Millisecond

// startWithLimit bounds the wait for the other runs' pods to start: a pod that cannot start
// (an image pull, a full node) must not hold the chain; its own start-up then disturbs a run.
const startWithLimit = 30 * time.Second

type chain struct{ agentapi.Chain }

func (c chain) on() bool { return c.Dir != "" && c.Name != "" }

func (c chain) marker(name, kind string) string { return filepath.Join(c.Dir, name+"."+kind) }

func (c chain) mark(kind string) error {
	var err error
	// A shared chain's directory, or the one above it, can vanish while it is made: the last
	// run of another point removes them once they are empty (clear).
	for range 5 {
		if err = os.MkdirAll(c.Dir, 0o755); err == nil {
			var f *os.File
			if f, err = os.Create(c.marker(c.Name, kind)); err == nil {
				return f.Close()
			}
		}
		if !os.IsNotExist(err) {
			break
		}
	}
	return fmt.Errorf("chain: %w", err)
}

// begin marks the run started and waits for its turn: the pods of StartWith started (bounded
// by startWithLimit), then the runs of After ended (bounded by ctx, the run's deadline).
func (c chain) begin(ctx context.Context) error {
	if !c.on() {
		return nil
	}
	if err := c.mark("started"); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, startWithLimit)
	defer cancel()
	if missing := c.await(sctx, c.StartWith, "started"); len(missing) > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logf("chain: the pods of %v did not start within %v; running anyway", missing, startWithLimit)
	}
	if missing := c.await(ctx, c.After, "done"); len(missing) > 0 {
		return chainWaitError{fmt.Errorf("chain: %v did not end before the run's deadline", missing)}
	}
	if len(c.After) > 0 {
		logf("chain: %v ended; %s runs", c.After, c.Name)
	}
	return nil
}

// await polls until every name has its marker of kind or ctx ends; it returns the names still
// missing.
func (c chain) await(ctx context.Context, names []string, kind string) []string {
	t := time.NewTicker(chainPoll)
	defer t.Stop()
	for {
		var missing []string
		for _, n := range names {
			if _, err := os.Stat(c.marker(n, kind)); err != nil {
				missing = append(missing, n)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return missing
		case <-t.C:
		}
	}
}

// chainWaitError: the run's turn did not come before its deadline (a predecessor that never
// ended); the report names the runs it waited for.
type chainWaitError struct{ error }

// holdLimit bounds how long a run that ended holds its exit for the runs after it: a quick
// run after it takes 2-5 s. It also bounds how long the operator, which reads this run's
// result, stays blind to a failure further on: a peer whose iperf3 server failed leaves this
// node's client retrying for a minute, which this run does not wait out.
const holdLimit = 10 * time.Second

// end marks the run done (its report is written), then, if it succeeded, holds its exit until
// the runs of HoldFor ended (at most holdLimit, or a signal): its container's exit and its
// pod's teardown then do not lie beside the next run - beside the links, CPU-bound on the
// testbed, they cost 5-20% of their figure. A failed run exits at once, so that the operator
// learns of it and ends the validation.
func (c chain) end(ctx context.Context, succeeded bool) {
	if !c.on() {
		return
	}
	if c.Shared {
		c.clear()
		return
	}
	if err := c.mark("done"); err != nil {
		logf("%v", err)
		return
	}
	if !succeeded || len(c.HoldFor) == 0 {
		return
	}
	hctx, cancel := context.WithTimeout(ctx, holdLimit)
	defer cancel()
	if missing := c.await(hctx, c.HoldFor, "done"); len(missing) > 0 {
		logf("chain: exiting without the end of %v", missing)
	}
}

// clear removes a shared chain's marker of this run, then its directory and the two above it
// (the burst buffer's, .beeburst-start) once they are empty (the last run of the point to
// end): they lie on the file system the job sees. Runs of the point that have not started by
// then wait for this one at most startWithLimit, and this one waited as long for them.
func (c chain) clear() {
	if err := os.Remove(c.marker(c.Name, "started")); err != nil && !os.IsNotExist(err) {
		logf("chain: %v", err)
	}
	for dir, i := c.Dir, 0; i < 3; dir, i = filepath.Dir(dir), i+1 {
		if os.Remove(dir) != nil {
			return
		}
	}
}
