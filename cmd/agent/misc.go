package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/bench"
)

func newMonitor(g *globals, stdout io.Writer) *cobra.Command {
	var interval, duration time.Duration
	c := &cobra.Command{
		Use:   "monitor --interval 1s --duration 30s",
		Short: "stage 4: sample this node's /proc/net/dev and /proc/diskstats; report per-interface and per-device peak and mean",
		Long: `Samples for --duration (or until a signal) and reports each interface's and device's peak
and mean throughput (both directions summed; in/out separately). To monitor a benchmark, give
--monitor-interval to its subcommand instead. A SIGTERM ends the sampling early and still
reports what was sampled.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			g.monitorInterval = interval
			return runReport(g, stdout, "monitor", func(ctx context.Context, r *bench.Report) error {
				select {
				case <-ctx.Done():
					if ctx.Err() == context.DeadlineExceeded {
						return nil
					}
					return ctx.Err()
				case <-time.After(duration):
					return nil
				}
			})
		},
	}
	c.Flags().DurationVar(&interval, "interval", time.Second, "sampling interval")
	c.Flags().DurationVar(&duration, "duration", 10*time.Second, "how long to sample")
	return c
}

func newParse(stdout io.Writer) *cobra.Command {
	var tool string
	c := &cobra.Command{
		Use:   "parse --tool fio|iperf3|ior|mdtest FILE",
		Short: "print what beeburst understands of a tool's output (- reads stdin)",
		Long: `Parses one output of fio (JSON, plain or client mode), iperf3 (-J), IOR (its JSON summary)
or mdtest (its text, one run or several phased runs concatenated, or the CSV of
--saveRankPerformanceDetails) and prints {"tool", "version", "results": [{"operation", "bytesPerSecond",
"opsPerSecond", ...}]} with aggregate figures only. Operations: write, read, randwrite,
randread, create, stat, readfile, delete, transfer. Output it cannot trust (truncated,
garbled, a failed run) is an error naming the tool, with a non-zero exit.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var out []byte
			var err error
			if args[0] == "-" {
				out, err = io.ReadAll(os.Stdin)
			} else {
				out, err = os.ReadFile(args[0])
			}
			if err != nil {
				return err
			}
			p, err := bench.Parse(tool, out)
			if err != nil {
				logf("%v", err)
				return exitError{exitFailed}
			}
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", b)
			return err
		},
	}
	c.Flags().StringVar(&tool, "tool", "", "fio, iperf3, ior or mdtest")
	_ = c.MarkFlagRequired("tool")
	return c
}

func newTools(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "tools",
		Short: "say which benchmark tools this image has, with versions (\"\" = missing)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			t := detectTools(context.Background())
			b, _ := json.MarshalIndent(t, "", "  ")
			fmt.Fprintf(stdout, "%s\n", b)
			var missing []string
			if t.Fio == "" {
				missing = append(missing, "fio")
			}
			if t.Iperf3 == "" {
				missing = append(missing, "iperf3")
			}
			if len(missing) > 0 {
				logf("missing: %s (needed for probes and the ideal workload)", strings.Join(missing, ", "))
				return exitError{exitFailed}
			}
			return nil
		},
	}
}
