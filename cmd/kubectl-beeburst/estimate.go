package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/limits"
)

// maxInputBytes bounds the files the command reads: manifests and sweeps are small.
const maxInputBytes = 16 << 20

type estimateOptions struct {
	file                 string
	sweep                string
	monitoring           string
	plot                 string
	output               *outputFlags
	minEfficiencyPercent int32
	stragglerPercent     int32
	sizing               sizingOptions
}

func newEstimateCommand(stdin io.Reader) *cobra.Command {
	o := &estimateOptions{output: newOutputFlags()}
	cmd := &cobra.Command{
		Use:   "estimate -f FILE [--target WRITE[,READ]] [--sweep CSV [--plot FILE.png|svg]] [--monitoring CSV] [-o wide|json|yaml|...]",
		Short: "Preview a burst buffer's performance limits from its hardware, offline",
		Long: `estimate computes stage 1 of the staged limit method (METHOD.md) from the documented
hardware: the client side Bc, the server side Bs, the fabric Bnet (after service traffic) and the
devices Bd, for writes and for reads; the smallest is the limit and names the bottleneck.

FILE is a BurstBuffer manifest or a file holding only its spec.hardware block ("-" reads standard
input). Quantities are Kubernetes quantities: "100G" is 100e9, "512Ki" 524288; link rates are in
bits per second before encoding, device figures in bytes per second; output figures are in
decimal bytes per second (1 GB = 1e9 B).

With --sweep, a CSV of measured points (header ` + limits.SweepCSVHeader + `) is analysed as
stage 3: best point, efficiency, plateau, parallelism limit, and measurements above a limit are
flagged (caching suspected); --plot draws it (PNG or SVG), and -o wide adds its grid. With --monitoring, a CSV of per-node figures (header
` + limits.MonitoringCSVHeader + `) is checked for stragglers (stage 4).

With --target (or --capacity, or a manifest with spec.target) it sizes instead: the smallest
node count whose stage-1 limit meets the target with --margin-percent to spare, each node's
contribution, the margin, and the counts below it - or why no count can meet it (the network
caps it, too few nodes, their capacity). Without a count in the file (spec.nodes.count,
hardware.servers.nodes) the count is chosen among --max-nodes identical nodes of the file's
hardware; with one, the target is checked against it. Clients that are other nodes
(hardware.clients.nodes, not co-located) stay fixed and the count sizes the servers. With
--sweep as well, the sweep (measured on the file's nodes) is judged against the target: met
or not, and what would meet it.

Exit codes: 0 success, 2 invalid input, 1 other failures.`,
		Example: `  kubectl beeburst estimate -f testdata/limits/omnipath-example.yaml
  kubectl beeburst estimate -f testdata/limits/omnipath-example.yaml --sweep testdata/limits/omnipath-sweep.csv -o json
  kubectl beeburst estimate -f testdata/limits/omnipath-example.yaml --sweep testdata/limits/omnipath-sweep.csv --plot sweep.png
  kubectl beeburst estimate -f testdata/sizing/testbed.yaml --target 250M
  kubectl beeburst estimate -f testdata/limits/omnipath-example.yaml --target 55G --sweep testdata/limits/omnipath-sweep.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd, stdin)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "BurstBuffer manifest or spec.hardware block (YAML or JSON); - for standard input")
	f.StringVar(&o.sweep, "sweep", "", "stage-3 sweep CSV: "+limits.SweepCSVHeader)
	f.StringVar(&o.monitoring, "monitoring", "", "stage-4 per-node CSV: "+limits.MonitoringCSVHeader)
	f.StringVar(&o.plot, "plot", "", plotUsage+" (needs --sweep)")
	o.output.addFlags(cmd)
	f.Int32Var(&o.minEfficiencyPercent, "min-efficiency-percent", 50,
		"efficiency below this (percent) is a BelowExpectation warning; 0 turns the check off (default: the manifest's spec.validation.minimumEfficiencyPercent, else 50)")
	f.Int32Var(&o.stragglerPercent, "straggler-percent", 20,
		"a node differing from the median by more than this (percent) is reported (default: the manifest's spec.validation.stragglerPercent, else 20)")
	o.sizing.addFlags(cmd)
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func (o *estimateOptions) run(cmd *cobra.Command, stdin io.Reader) error {
	if err := o.output.validate(); err != nil {
		return err
	}
	if err := checkPlotFile(o.plot); err != nil {
		return err
	}
	if o.plot != "" && o.sweep == "" {
		return errors.New("--plot draws a sweep: give it with --sweep CSV")
	}
	data, err := readInput(o.file, stdin)
	if err != nil {
		return err
	}
	in, err := decodeInput(data)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	if v := in.validation; v != nil {
		if !cmd.Flags().Changed("min-efficiency-percent") && v.MinimumEfficiencyPercent != 0 {
			o.minEfficiencyPercent = v.MinimumEfficiencyPercent
		}
		if !cmd.Flags().Changed("straggler-percent") && v.StragglerPercent != 0 {
			o.stragglerPercent = v.StragglerPercent
		}
	}
	if o.minEfficiencyPercent < 0 || o.minEfficiencyPercent > 100 {
		return fmt.Errorf("--min-efficiency-percent must be from 0 to 100, not %d", o.minEfficiencyPercent)
	}
	if o.stragglerPercent < 1 || o.stragglerPercent > 99 {
		return fmt.Errorf("--straggler-percent must be from 1 to 99, not %d", o.stragglerPercent)
	}

	if o.sizing.requested(cmd, in) {
		if o.monitoring != "" {
			return errors.New("--monitoring is not read when sizing (--target, --capacity or spec.target): leave one out")
		}
		return o.runSizing(cmd, in, stdin)
	}

	h, lim, err := hardwareFromInput(in)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	report := limits.Report{Title: title(in, o.file), Summary: h.Describe(), Estimated: &lim}
	report.Warnings = append(report.Warnings, lim.Warnings...)

	var points []limits.Point
	if o.sweep != "" {
		data, err := readInput(o.sweep, stdin)
		if err != nil {
			return err
		}
		points, err = limits.ParseSweepCSV(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", o.sweep, err)
		}
		sw, err := limits.AnalyzeSweep(h, lim, points, limits.SweepOptions{MinEfficiency: float64(o.minEfficiencyPercent) / 100})
		if err != nil {
			return fmt.Errorf("%s: %w", o.sweep, err)
		}
		report.Sweep = &sw
		report.Warnings = append(report.Warnings, sw.Warnings...)
	}
	if o.monitoring != "" {
		data, err := readInput(o.monitoring, stdin)
		if err != nil {
			return err
		}
		figs, err := limits.ParseMonitoringCSV(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", o.monitoring, err)
		}
		st, err := limits.FindStragglers(figs, float64(o.stragglerPercent)/100)
		if err != nil {
			return fmt.Errorf("%s: %w", o.monitoring, err)
		}
		report.Monitoring, report.Stragglers = figs, &st
		report.Warnings = append(report.Warnings, st.Warnings...)
	}

	if o.plot != "" {
		notes := []string{fmt.Sprintf("points: %s; stage 1 from %s", o.sweep, o.file)}
		if err := writePlot(o.plot, plotTitle(in, o.file), notes, report, points, cmd.ErrOrStderr()); err != nil {
			return err
		}
	}
	out := cmd.OutOrStdout()
	if !o.output.table() {
		return o.output.printDocument(out, report.Document(in.name))
	}
	return o.output.printTable(out, report, points)
}

func title(in input, file string) string {
	if in.manifest {
		name := in.name
		if name == "" {
			name = "(unnamed)"
		}
		return fmt.Sprintf("BurstBuffer %s: estimated limits (stage 1 from %s)", name, file)
	}
	return fmt.Sprintf("Hardware block %s: estimated limits (stage 1)", file)
}

func plotTitle(in input, file string) string {
	if in.manifest {
		name := in.name
		if name == "" {
			name = "(unnamed)"
		}
		return fmt.Sprintf("BurstBuffer %s: the stage-3 sweep", name)
	}
	return fmt.Sprintf("Hardware block %s: the stage-3 sweep", file)
}

// readInput reads a file, or standard input for "-". A missing or unreadable file is the
// input's fault (exit code 2).
func readInput(name string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxInputBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxInputBytes)
	}
	return data, nil
}

// hardwareFromInput is stage 1 for a decoded file: the same path the controller takes.
func hardwareFromInput(in input) (limits.Hardware, limits.Limits, error) {
	h, err := apibridge.FromSpec(in.hw, in.defaults)
	if err != nil {
		return limits.Hardware{}, limits.Limits{}, err
	}
	lim, err := limits.Compute(h)
	if err != nil {
		return limits.Hardware{}, limits.Limits{}, err
	}
	return h, lim, nil
}
