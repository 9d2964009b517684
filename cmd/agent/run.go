package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/bench"
	"github.com/beeburst/beeburst/internal/limits"
)

// profile is what `agent run` measures.
type profile struct {
	deviceJobs     int
	deviceRuntime  time.Duration
	netTime        time.Duration
	netStreams     int
	sweepProcs     []int
	sweepRuntime   time.Duration
	sizePerProcCap int64
}

var profiles = map[string]profile{
	// quick: about 30 s on a laptop, under 2 minutes anywhere.
	"quick": {deviceJobs: 4, deviceRuntime: 3 * time.Second, netTime: 3 * time.Second, netStreams: 2,
		sweepProcs: []int{1, 2, 4}, sweepRuntime: 2 * time.Second, sizePerProcCap: 256 << 20},
	// smoke: the tests' profile - seconds, tiny files.
	"smoke": {deviceJobs: 2, deviceRuntime: time.Second, netTime: time.Second, netStreams: 1,
		sweepProcs: []int{1, 2}, sweepRuntime: time.Second, sizePerProcCap: 16 << 20},
	"standard": {deviceJobs: 4, deviceRuntime: 10 * time.Second, netTime: 10 * time.Second, netStreams: 4,
		sweepProcs: []int{1, 2, 4, 8, 16}, sweepRuntime: 10 * time.Second, sizePerProcCap: 1 << 30},
}

func newRun(g *globals, stdout io.Writer) *cobra.Command {
	var dir, prof string
	var direct bool
	c := &cobra.Command{
		Use:   "run --dir DIR --profile quick",
		Short: "local mode: device probe, loopback network probe and the ideal-workload sweep (N = 1, 2, 4) on this machine",
		Long: `Checks one machine the way beeburst checks a burst buffer's node: stage 2 (fio device probe
on --dir, iperf3 over loopback 127.0.0.1) and stage 3 (the ideal workload, N = 1, 2, 4
processes writing then reading their own new files), analysed by the limits engine against
the measured device figures. Files are sized from free space (at most 10% of it) and removed.
The summary goes to stderr, the Report (JSON) to stdout. Profiles: quick (under 2 minutes),
standard (N up to 16, 10 s per phase), smoke (seconds, 16 MiB files: for tests).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p, ok := profiles[prof]
			if !ok {
				return fmt.Errorf("unknown --profile %q (quick, standard, smoke)", prof)
			}
			return runReport(g, stdout, "run", func(ctx context.Context, r *bench.Report) error {
				return localRun(ctx, r, dir, p, direct)
			})
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "directory to test (files go to a new subdirectory, removed afterwards)")
	c.Flags().StringVar(&prof, "profile", "quick", "quick or standard")
	c.Flags().BoolVar(&direct, "direct", true, "direct I/O (O_DIRECT)")
	_ = c.MarkFlagRequired("dir")
	return c
}

func localRun(ctx context.Context, r *bench.Report, dir string, p profile, direct bool) error {
	r.Tool = bench.ToolFio
	// Stage 2: the device.
	logf("stage 2: device probe on %s (%d jobs, %v per phase)", dir, p.deviceJobs, p.deviceRuntime)
	dev, err := localData(ctx, dir, "probe", p.deviceJobs, p.deviceRuntime, p.sizePerProcCap, direct)
	for i := range dev {
		dev[i].Label = "device"
	}
	r.Results = append(r.Results, dev...)
	if err != nil {
		return fmt.Errorf("device probe: %w", err)
	}
	// Stage 2: the network, over loopback only.
	logf("stage 2: network probe over loopback (iperf3, %d streams, %v)", p.netStreams, p.netTime)
	nr, err := loopbackNet(ctx, p)
	if err != nil {
		return fmt.Errorf("network probe: %w", err)
	}
	nr.Label = "loopback"
	r.Results = append(r.Results, *nr)
	// Stage 3: the ideal workload.
	var points []limits.Point
	for _, n := range p.sweepProcs {
		logf("stage 3: ideal workload, N = %d", n)
		res, err := localData(ctx, dir, "ideal", n, p.sweepRuntime, p.sizePerProcCap, direct)
		for i := range res {
			res[i].Nodes, res[i].Label = 1, fmt.Sprintf("ideal M=1 N=%d", n)
			op := limits.Write
			if res[i].Operation == bench.OpRead {
				op = limits.Read
			}
			points = append(points, limits.Point{Nodes: 1, ProcessesPerNode: n, Operation: op, BytesPerSecond: res[i].BytesPerSecond})
		}
		r.Sweep = append(r.Sweep, bench.SweepPoint{Nodes: 1, ProcessesPerNode: n, Results: res})
		if err != nil {
			return fmt.Errorf("ideal workload N=%d: %w", n, err)
		}
	}
	summary, analysis := analyse(r.Node, dev, points)
	r.Analysis = analysis
	r.Message = summary
	fmt.Fprint(logOutOrDiscard(), summaryText(r, summary))
	return nil
}

func logOutOrDiscard() io.Writer {
	if logOut == nil {
		return io.Discard
	}
	return logOut
}

// localData is a write-then-read in a new subdirectory of dir, sized from free space.
func localData(ctx context.Context, dir, name string, procs int, runtime time.Duration, sizeCap int64, direct bool) ([]bench.Result, error) {
	wd, cleanup, err := workDir(dir, name)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	free, err := freeBytes(wd)
	if err != nil {
		return nil, err
	}
	size, err := bench.DeviceSize(free, procs, 1<<20, sizeCap, autoFraction)
	if err != nil {
		return nil, err
	}
	o := bench.SeqOptions{Name: name, Dir: wd, Procs: procs, BlockSize: 1 << 20, Size: size, Runtime: runtime, Direct: direct}
	return writeThenRead(ctx, wd, o, nil, true)
}

// loopbackNet runs an iperf3 server and client on 127.0.0.1 (never another address).
func loopbackNet(ctx context.Context, p profile) (*bench.Result, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	servers, err := startIperf3Servers(ctx, "127.0.0.1", port, 1, true)
	if err != nil {
		return nil, err
	}
	defer stopAll(servers)
	return netClient(ctx, &netFlags{host: "127.0.0.1", port: port, streams: p.netStreams, pairs: 1, duration: p.netTime, connectTimeout: 5 * time.Second})
}

// freePort asks the kernel for a free loopback port (a race with other programs is possible
// and only makes the server fail to start).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// analyse runs the limits engine: this node as the only server of a local (private scratch)
// burst buffer whose device figures are the probe's measurements, and the sweep against them.
func analyse(node string, dev []bench.Result, points []limits.Point) (string, json.RawMessage) {
	w, rd := bench.Find(dev, bench.OpWrite), bench.Find(dev, bench.OpRead)
	if w == nil || rd == nil || len(points) == 0 {
		return "no analysis: device or sweep figures missing", nil
	}
	maxN := 0
	for _, pt := range points {
		maxN = max(maxN, pt.ProcessesPerNode)
	}
	h := limits.Hardware{
		Local:   true,
		Clients: limits.Clients{Nodes: 1, ProcessesPerNode: maxN, Link: limits.Unknown},
		Servers: []limits.ServerNode{{Name: node, Devices: 1, DeviceWrite: limits.Bytes(w.BytesPerSecond), DeviceRead: limits.Bytes(rd.BytesPerSecond)}},
		Notes:   []string{"device figures measured by the agent's device probe (stage 2)"},
	}
	lim, err := limits.Compute(h)
	if err != nil {
		return "no analysis: limits: " + err.Error(), nil
	}
	sw, err := limits.AnalyzeSweep(h, lim, points, limits.SweepOptions{})
	if err != nil {
		return "no analysis: sweep: " + err.Error(), nil
	}
	var parts []string
	for _, op := range limits.Operations {
		res := sw.For(op)
		if res == nil {
			continue
		}
		s := fmt.Sprintf("%s: best %s at N=%d (plateau from N=%d)", op, limits.FormatBytesPerSecondFixed(res.BestBytesPerSecond.Value(), 2), res.Best.ProcessesPerNode, res.Plateau.ProcessesPerNode)
		if res.Efficiency != nil {
			s += fmt.Sprintf(", limit %s (%s), efficiency %.2f", limits.FormatBytesPerSecondFixed(res.Limit.Value(), 2), lim.For(op).Bottleneck, float64(*res.Efficiency))
		}
		if res.ExceedsLimit {
			s += " - ABOVE the device limit: caching suspected, not a valid limit"
		}
		parts = append(parts, s)
	}
	b, err := json.Marshal(struct {
		Limits limits.Limits `json:"limits"`
		Sweep  limits.Sweep  `json:"sweep"`
	}{lim, sw})
	if err != nil {
		return strings.Join(parts, "; "), nil
	}
	return strings.Join(parts, "; "), b
}

func summaryText(r *bench.Report, analysis string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n== beeburst agent run on %s ==\n", r.Node)
	fmt.Fprintf(&b, "stage 2 - components:\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "  %-9s %-9s %12s  (%d processes, %.1f s)\n", x.Label, x.Operation, limits.FormatBytesPerSecondFixed(x.BytesPerSecond, 2), x.Processes, x.RuntimeSeconds)
		if x.Operation == bench.OpTransfer {
			fmt.Fprintf(&b, "  %-9s %-9s %12.2f Gbit/s\n", "", "", x.BytesPerSecond*8/1e9)
		}
	}
	fmt.Fprintf(&b, "stage 3 - ideal workload (1 node):\n  %-4s %14s %14s\n", "N", "write", "read")
	for _, p := range r.Sweep {
		var w, rd string
		if x := bench.Find(p.Results, bench.OpWrite); x != nil {
			w = limits.FormatBytesPerSecondFixed(x.BytesPerSecond, 2)
		}
		if x := bench.Find(p.Results, bench.OpRead); x != nil {
			rd = limits.FormatBytesPerSecondFixed(x.BytesPerSecond, 2)
		}
		fmt.Fprintf(&b, "  %-4d %14s %14s\n", p.ProcessesPerNode, w, rd)
	}
	fmt.Fprintf(&b, "limits engine: %s\n\n", analysis)
	return b.String()
}
