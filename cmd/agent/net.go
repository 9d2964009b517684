package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/agentapi"
	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/monitor"
)

func newNetServer(g *globals, stdout io.Writer) *cobra.Command {
	var bind string
	var port, pairs int
	var oneOff bool
	c := &cobra.Command{
		Use:   agentapi.CmdNetServer,
		Short: "stage 2: iperf3 server(s) for the network probe (one per process pair, ports PORT..PORT+pairs-1)",
		Long: `Starts --pairs iperf3 servers on ports --port, --port+1, ... and waits until each has served
one test (--one-off, the default) or until the deadline (--timeout) or a signal stops them.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdNetServer, func(ctx context.Context, r *bench.Report) error {
				r.Tool = bench.ToolIperf3
				servers, err := startIperf3Servers(ctx, bind, port, pairs, oneOff)
				if err != nil {
					return err
				}
				defer stopAll(servers)
				logf("%d iperf3 server(s) listening from port %d", pairs, port)
				for _, s := range servers {
					select {
					case err := <-s.done:
						s.done <- err
						if err != nil && ctx.Err() == nil {
							return fmt.Errorf("iperf3 server: %v: %s", err, strings.TrimSpace(s.tail.String()))
						}
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				r.Message = fmt.Sprintf("served %d test(s)", pairs)
				return nil
			})
		},
	}
	c.Flags().StringVar(&bind, "bind", "", "address to listen on (default: all)")
	c.Flags().IntVar(&port, agentapi.FlagPort, 5201, "first port")
	c.Flags().IntVar(&pairs, "pairs", 1, "number of servers (process pairs)")
	c.Flags().BoolVar(&oneOff, agentapi.FlagOneOff, true, "each server exits after one test")
	return c
}

func startIperf3Servers(ctx context.Context, bind string, port, pairs int, oneOff bool) ([]*background, error) {
	if pairs < 1 {
		return nil, fmt.Errorf("--pairs must be at least 1")
	}
	var servers []*background
	for i := 0; i < pairs; i++ {
		s, err := startBackground(ctx, "iperf3", bench.Iperf3ServerArgs(bind, port+i, oneOff)...)
		if err != nil {
			stopAll(servers)
			return nil, err
		}
		servers = append(servers, s)
	}
	for i, s := range servers {
		if err := waitListening(ctx, s, port+i, 10*time.Second); err != nil {
			stopAll(servers)
			return nil, err
		}
	}
	return servers, nil
}

func stopAll(bs []*background) {
	for _, b := range bs {
		b.stop()
	}
}

type netFlags struct {
	host           string
	port           int
	streams, pairs int
	duration       time.Duration
	connectTimeout time.Duration
}

func newNetClient(g *globals, stdout io.Writer) *cobra.Command {
	f := &netFlags{}
	c := &cobra.Command{
		Use:   agentapi.CmdNetClient + " --host HOST",
		Short: "stage 2: iperf3 client(s) to a net-server; the result is the received rate of all pairs",
		Long: `Runs --pairs iperf3 clients at once (ports --port, --port+1, ...), each with --streams TCP
streams, for --time. iperf3 3.12 drives all streams of one process from one thread; several
pairs fill links one thread cannot. The result is one "transfer": the sum of the received bits
per second / 8 of all pairs. A server that is not up yet is retried for --connect-timeout.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, agentapi.CmdNetClient, func(ctx context.Context, r *bench.Report) error {
				r.Tool = bench.ToolIperf3
				res, err := netClient(ctx, f)
				if res != nil {
					r.Results = []bench.Result{*res}
				}
				return err
			})
		},
	}
	c.Flags().StringVar(&f.host, agentapi.FlagHost, "", "server host or address")
	c.Flags().IntVar(&f.port, agentapi.FlagPort, 5201, "first server port")
	c.Flags().IntVar(&f.streams, agentapi.FlagStreams, 4, "TCP streams per pair (iperf3 -P)")
	c.Flags().IntVar(&f.pairs, "pairs", 1, "iperf3 process pairs (one server port each)")
	c.Flags().DurationVar(&f.duration, agentapi.FlagTime, 5*time.Second, "test duration (whole seconds)")
	c.Flags().DurationVar(&f.connectTimeout, agentapi.FlagConnectTimeout, 30*time.Second, "retry a refused connection this long")
	_ = c.MarkFlagRequired(agentapi.FlagHost)
	return c
}

func netClient(ctx context.Context, f *netFlags) (*bench.Result, error) {
	if f.pairs < 1 || f.streams < 1 {
		return nil, fmt.Errorf("--pairs and --streams must be at least 1")
	}
	type out struct {
		r   *bench.Result
		err error
	}
	outs := make([]out, f.pairs)
	// What the interface moved beside the probe's own bytes tells whether other work shared
	// the link (limits.ForeignLinkTraffic): counted from the start of each pair's attempt that
	// connected, not while it waited for its server.
	meter := newLinkMeter(f.host)
	starts := make([]monitor.Counters, f.pairs)
	started := make([]bool, f.pairs)
	var wg sync.WaitGroup
	for i := 0; i < f.pairs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			attempt := func() { starts[i], started[i] = meter.read() }
			outs[i].r, outs[i].err = iperf3Client(ctx, f.host, f.port+i, f.streams, f.duration, f.connectTimeout, attempt)
		}(i)
	}
	wg.Wait()
	agg := bench.Result{Operation: bench.OpTransfer, Label: "network"}
	for i, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		agg.BytesPerSecond += o.r.BytesPerSecond
		agg.Bytes += o.r.Bytes
		agg.Processes += o.r.Processes
		agg.Retransmits += o.r.Retransmits
		agg.RuntimeSeconds = max(agg.RuntimeSeconds, o.r.RuntimeSeconds)
		agg.Clients = append(agg.Clients, bench.ClientResult{Host: net.JoinHostPort(f.host, fmt.Sprint(f.port+i)),
			BytesPerSecond: o.r.BytesPerSecond, Processes: o.r.Processes, RuntimeSeconds: o.r.RuntimeSeconds})
	}
	if f.pairs == 1 {
		agg.Clients = nil
	}
	if !slices.Contains(started, false) {
		// The earliest start: every counter only grows. One interface's counters serve all
		// pairs, so with several a later pair's wait for its server is in the window too.
		first := slices.MinFunc(starts, func(a, b monitor.Counters) int { return cmp.Or(cmp.Compare(a.Out, b.Out), cmp.Compare(a.In, b.In)) })
		meter.record(&agg, first)
	}
	return &agg, nil
}

// iperf3Client runs one client; a refused connection (server not up yet) is retried every
// 100 ms: the pair's server pod starts at the same time as the client's, and every wait
// between attempts holds up the whole link probe. attempt is called before each attempt.
func iperf3Client(ctx context.Context, host string, port, streams int, d, connectTimeout time.Duration, attempt func()) (*bench.Result, error) {
	deadline := time.Now().Add(connectTimeout)
	for {
		attempt()
		out, err := runTool(ctx, "iperf3", bench.Iperf3ClientArgs(host, port, streams, d)...)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		// iperf3 -J exits 0 on some errors and non-zero on others; the JSON says which.
		p, perr := bench.ParseIperf3(out)
		if perr == nil {
			return &p.Results[0], nil
		}
		if strings.Contains(perr.Error(), "unable to connect") && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond):
				continue
			}
		}
		if err != nil && len(out) == 0 {
			return nil, err
		}
		return nil, perr
	}
}

func newFioServer(g *globals, stdout io.Writer) *cobra.Command {
	var bind string
	var port int
	c := &cobra.Command{
		Use:   "fio-server",
		Short: "fio --server on this node, for multi-node runs driven by 'ideal --clients' elsewhere",
		Long: `Runs fio in server mode until the deadline (--timeout) or a signal. Files the clients' jobs
create are the jobs' own (the ideal workload's read-back unlinks them).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runReport(g, stdout, "fio-server", func(ctx context.Context, r *bench.Report) error {
				r.Tool = bench.ToolFio
				arg := fmt.Sprintf("--server=%d", port)
				if bind != "" {
					arg = fmt.Sprintf("--server=ip:%s,%d", bind, port)
				}
				s, err := startBackground(ctx, "fio", arg)
				if err != nil {
					return err
				}
				defer s.stop()
				if err := waitListening(ctx, s, port, 10*time.Second); err != nil {
					return err
				}
				logf("fio server listening on port %d", port)
				select {
				case err := <-s.done:
					s.done <- err
					return fmt.Errorf("fio server exited: %v: %s", err, strings.TrimSpace(s.tail.String()))
				case <-ctx.Done():
					if ctx.Err() == context.DeadlineExceeded {
						r.Message = "served until the deadline"
						return nil
					}
					return ctx.Err()
				}
			})
		},
	}
	c.Flags().StringVar(&bind, "bind", "", "address to listen on (default: all)")
	c.Flags().IntVar(&port, "port", 8765, "port")
	return c
}
