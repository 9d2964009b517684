package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/monitor"
)

// Exit codes.
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitCancelled = 3
)

// globals are the flags every subcommand has.
type globals struct {
	terminationLog  string
	output          string
	monitorInterval time.Duration
	procRoot        string
	timeout         time.Duration
	quiet           bool
	chain           chain
}

var logOut io.Writer = os.Stderr

func logf(format string, args ...any) {
	if logOut != nil {
		fmt.Fprintf(logOut, "agent: "+format+"\n", args...)
	}
}

const rootHelp = `The beeburst agent runs the probes and benchmarks of the staged limit method (METHOD.md,
stages 2-4) on a burst buffer's nodes, and on one machine ('agent run').

Every benchmark subcommand prints one JSON Report on stdout:
  {"command", "tool", "phase": succeeded|failed|cancelled, "message", "node" ($NODE_NAME),
   "results": [{"operation", "bytesPerSecond", "opsPerSecond", "processes", "runtimeSeconds", ...}],
   "monitor": {"interfaces": [...], "devices": [...]}, "tools": {"fio", "iperf3", "ior", "mdtest"}}
With --termination-log PATH it also writes the Report, compacted below 4096 bytes (detail
dropped first), to PATH (Kubernetes: /dev/termination-log); with --output FILE the full Report.
Progress goes to stderr. Exit code: 0 succeeded, 1 failed, 2 usage, 3 cancelled (SIGTERM or
SIGINT: the tool is stopped and its files removed).`

func newRoot(stdout io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "agent",
		Version:       version,
		Short:         "beeburst benchmark agent: probes, ideal workload, workload benchmarks, monitoring, parsers",
		Long:          rootHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	pf := root.PersistentFlags()
	pf.StringVar(&g.terminationLog, agentapi.FlagTerminationLog, "", "also write the compact Report (< 4096 bytes) to this file, e.g. /dev/termination-log")
	pf.StringVar(&g.output, "output", "", "also write the full Report (with per-client and per-interval detail) to this file")
	pf.DurationVar(&g.monitorInterval, agentapi.FlagMonitorInterval, 0, "sample /proc/net/dev and /proc/diskstats at this interval while the benchmark runs (0: off)")
	pf.StringVar(&g.procRoot, "proc", "/proc", "where the node's /proc is mounted (for monitoring)")
	pf.DurationVar(&g.timeout, agentapi.FlagTimeout, 10*time.Minute, "deadline of the whole run; past it the tool is stopped and the run fails")
	pf.BoolVarP(&g.quiet, "quiet", "q", false, "no progress on stderr")
	pf.StringVar(&g.chain.Dir, agentapi.FlagChainDir, "", "node-local directory of the chain's markers (<name>.started, <name>.done); with --chain-name the run waits for its turn")
	pf.StringVar(&g.chain.Name, agentapi.FlagChainName, "", "this run's name in the chain")
	pf.StringSliceVar(&g.chain.After, agentapi.FlagChainAfter, nil, "runs of the chain that must have ended before this one measures")
	pf.StringSliceVar(&g.chain.StartWith, agentapi.FlagChainStartWith, nil, "runs of the chain whose pods must have started before this one measures (at most 30s)")
	pf.StringSliceVar(&g.chain.HoldFor, agentapi.FlagChainHoldFor, nil, "runs of the chain this one, having succeeded, waits to end before it exits (at most 10s)")
	pf.BoolVar(&g.chain.Shared, agentapi.FlagChainShared, false, "--chain-dir is on a file system every node sees and --chain-start-with names the runs on the other nodes: they start at once; the run removes its marker when it ends")
	root.PersistentPreRun = func(*cobra.Command, []string) {
		procDir = g.procRoot
		if g.quiet {
			logOut = nil
		}
	}
	root.AddCommand(
		newProbeDevice(g, stdout),
		newNetServer(g, stdout),
		newNetClient(g, stdout),
		newFioServer(g, stdout),
		newIdeal(g, stdout),
		newWorkload(g, stdout),
		newMonitor(g, stdout),
		newParse(stdout),
		newRun(g, stdout),
		newTools(stdout),
		newDir(g, stdout),
		newCheckModule(g, stdout),
		newStage(g, stdout),
	)
	return root
}

type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func execute(args []string, stdout, stderr io.Writer) int {
	logOut = stderr
	root := newRoot(stdout)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	}
	fmt.Fprintf(stderr, "agent: %v\n", err)
	return exitUsage
}

// body is what a benchmark subcommand does; it fills r.Results (and r.Tool). Cleanup of its
// files is its own (deferred), so that it also happens on cancellation.
type body func(ctx context.Context, r *bench.Report) error

// runReport runs a benchmark body under the deadline and signal handling, with monitoring
// when asked, and reports the outcome in every requested place.
func runReport(g *globals, stdout io.Writer, command string, fn body) error {
	sigCtx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	ctx, cancel := context.WithTimeout(sigCtx, g.timeout)
	defer cancel()

	r := &bench.Report{Command: command, Node: nodeName(), StartTime: time.Now().UTC().Truncate(time.Millisecond)}
	r.Tools = detectTools(ctx)
	// The chain's wait comes after the tools' detection (off the measurement) and before the
	// monitor and the start time, which are the measurement's.
	if err := g.chain.begin(ctx); err != nil {
		fn = func(context.Context, *bench.Report) error { return err }
	}
	r.StartTime = time.Now().UTC().Truncate(time.Millisecond)

	var sampler *monitor.Sampler
	if g.monitorInterval > 0 {
		sampler = &monitor.Sampler{ProcRoot: g.procRoot, Interval: g.monitorInterval, KeepIntervals: true}
		if err := sampler.Start(ctx); err != nil {
			logf("monitoring is off: %v", err)
			sampler = nil
		}
	}
	err := fn(ctx, r)
	if sampler != nil {
		if m, merr := sampler.Stop(); merr == nil {
			r.Monitor = m
		} else {
			logf("monitoring failed: %v", merr)
		}
	}
	r.EndTime = time.Now().UTC().Truncate(time.Millisecond)
	code := exitOK
	var wait chainWaitError
	switch {
	case sigCtx.Err() != nil:
		r.Phase, r.Message, code = bench.PhaseCancelled, "cancelled by signal; the tool was stopped and its files removed", exitCancelled
	case errors.As(err, &wait):
		r.Phase, r.Message, code = bench.PhaseFailed, err.Error(), exitFailed
	case errors.Is(err, context.DeadlineExceeded) || (err != nil && ctx.Err() != nil):
		r.Phase, r.Message, code = bench.PhaseFailed, fmt.Sprintf("deadline of %v exceeded; the tool was stopped and its files removed", g.timeout), exitFailed
	case err != nil:
		r.Phase, r.Message, code = bench.PhaseFailed, err.Error(), exitFailed
	default:
		r.Phase = bench.PhaseSucceeded
	}
	if werr := writeReport(g, stdout, r); werr != nil {
		logf("%v", werr)
		if code == exitOK {
			code = exitFailed
		}
	}
	g.chain.end(sigCtx, code == exitOK)
	if code != exitOK {
		logf("%s %s: %s", command, r.Phase, r.Message)
		return exitError{code}
	}
	return nil
}

func writeReport(g *globals, stdout io.Writer, r *bench.Report) error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if g.output != "" {
		r.Output = g.output
		full, err := json.MarshalIndent(r, "", "  ")
		keep(err)
		if err == nil {
			keep(os.WriteFile(g.output, append(full, '\n'), 0o644))
		}
	}
	if g.terminationLog != "" {
		c, err := r.Compact(bench.TerminationMessageLimit)
		keep(err)
		if err == nil {
			keep(os.WriteFile(g.terminationLog, c, 0o644))
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	keep(err)
	return firstErr
}

func nodeName() string {
	if n := os.Getenv("NODE_NAME"); n != "" {
		return n
	}
	h, _ := os.Hostname()
	return h
}
