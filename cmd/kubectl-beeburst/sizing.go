package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/apibridge"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/sizing"
)

// sizingOptions are estimate's flags for sizing from a target.
type sizingOptions struct {
	target        string
	capacity      string
	marginPercent int32
	maxNodes      int
}

func (s *sizingOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.target, "target", "", "size for this bandwidth: WRITE[,READ] in bytes per second (quantities: 250M, 2G; ,4G for read only)")
	f.StringVar(&s.capacity, "capacity", "", "size for this capacity over all nodes (a quantity: 10Ti)")
	f.Int32Var(&s.marginPercent, "margin-percent", 10,
		"how far the predicted limit must exceed the target, percent (default: the manifest's spec.target.marginPercent, else 10)")
	f.IntVar(&s.maxNodes, "max-nodes", sizing.MaxBurstBufferNodes, "the most nodes to choose among when the file gives no count")
}

// requested says whether estimate sizes: a target on the command line or in the manifest.
func (s *sizingOptions) requested(cmd *cobra.Command, in input) bool {
	return cmd.Flags().Changed("target") || cmd.Flags().Changed("capacity") || (in.spec != nil && in.spec.Target != nil)
}

// targetFrom is the target: the manifest's spec.target, with what the flags give instead.
func (s *sizingOptions) targetFrom(cmd *cobra.Command, in input) (sizing.Target, error) {
	t := sizing.Target{Margin: 0.1}
	if in.spec != nil && in.spec.Target != nil {
		t = apibridge.TargetFromSpec(in.spec.Target)
		if in.spec.Target.MarginPercent == 0 && !cmd.Flags().Changed("margin-percent") {
			t.Margin = 0.1 // a file is not defaulted by an API server: the CRD's default
		}
	}
	if cmd.Flags().Changed("target") {
		parts := strings.Split(s.target, ",")
		if len(parts) > 2 || strings.TrimSpace(s.target) == "" {
			return t, fmt.Errorf("--target must be WRITE[,READ] in bytes per second, e.g. 250M or 2G,4G, not %q", s.target)
		}
		t.Write, t.Read = 0, 0
		for i, p := range parts {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			q, err := resource.ParseQuantity(p)
			if err != nil || q.Sign() <= 0 {
				return t, fmt.Errorf("--target: %q is not a positive quantity of bytes per second (e.g. 250M, 2G)", p)
			}
			v := q.AsApproximateFloat64()
			if err := limits.CheckBytesPerSecond(v, 1e15); err != nil {
				return t, fmt.Errorf("--target: %s: %w", p, err)
			}
			if i == 0 {
				t.Write = v
			} else {
				t.Read = v
			}
		}
		if t.Write == 0 && t.Read == 0 {
			return t, errors.New("--target names no bandwidth: give WRITE, WRITE,READ or ,READ")
		}
	}
	if cmd.Flags().Changed("capacity") {
		q, err := resource.ParseQuantity(strings.TrimSpace(s.capacity))
		if err != nil || q.Sign() <= 0 {
			return t, fmt.Errorf("--capacity: %q is not a positive quantity of bytes (e.g. 10Ti)", s.capacity)
		}
		t.Capacity = q.AsApproximateFloat64()
	}
	if cmd.Flags().Changed("margin-percent") {
		if s.marginPercent < 0 || s.marginPercent > 100 {
			return t, fmt.Errorf("--margin-percent must be from 0 to 100, not %d", s.marginPercent)
		}
		t.Margin = float64(s.marginPercent) / 100
	}
	return t, t.Validate()
}

// sizingDocument is -o json's form of a sizing run.
type sizingDocument struct {
	Name    string          `json:"name"`
	Sizing  sizing.Decision `json:"sizing"`
	Verdict *sizing.Verdict `json:"verdict,omitempty"`
}

// runSizing is estimate with a target: Plan on the file's hardware, and with --sweep the
// verdict on the sweep.
func (o *estimateOptions) runSizing(cmd *cobra.Command, in input, stdin io.Reader) error {
	t, err := o.sizing.targetFrom(cmd, in)
	if err != nil {
		return err
	}
	req, err := apibridge.OfflineRequest(in.hw, in.spec, t, o.sizing.maxNodes)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	if o.sweep != "" && req.Count == 0 {
		return errors.New("--sweep with a target judges a sweep measured on the file's nodes: the file must give their count (spec.nodes.count or hardware.servers.nodes)")
	}
	d, err := sizing.Plan(req)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	doc := sizingDocument{Name: in.name, Sizing: d}

	var points []limits.Point
	if o.sweep != "" {
		data, err := readInput(o.sweep, stdin)
		if err != nil {
			return err
		}
		if points, err = limits.ParseSweepCSV(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("%s: %w", o.sweep, err)
		}
		h, _, err := hardwareFromInput(in)
		if err != nil {
			return fmt.Errorf("%s: %w", o.file, err)
		}
		v, err := sizing.Assess(sizing.AssessInput{Target: t, Hardware: h, Points: points, MetadataServers: d.MetadataServers})
		if err != nil {
			return fmt.Errorf("%s: %w", o.sweep, err)
		}
		doc.Verdict = &v
	}
	if o.plot != "" {
		_, lim, err := hardwareFromInput(in)
		if err != nil {
			return fmt.Errorf("%s: %w", o.file, err)
		}
		report := limits.Report{Estimated: &lim}
		notes := []string{fmt.Sprintf("points: %s; stage 1 from %s", o.sweep, o.file)}
		if err := writePlot(o.plot, plotTitle(in, o.file), notes, report, points, cmd.ErrOrStderr()); err != nil {
			return err
		}
	}

	out := cmd.OutOrStdout()
	if !o.output.table() {
		return o.output.printDocument(out, doc)
	}
	if err := sizing.WriteDecision(out, sizingTitle(in, o.file), d, time.Now()); err != nil {
		return runtimeError{fmt.Errorf("writing the output: %w", err)}
	}
	if doc.Verdict != nil {
		if err := sizing.WriteVerdict(out, *doc.Verdict); err != nil {
			return runtimeError{fmt.Errorf("writing the output: %w", err)}
		}
	}
	return nil
}

func sizingTitle(in input, file string) string {
	engine := v1alpha1.EngineBeeGFS
	if in.spec != nil && in.spec.Engine != "" {
		engine = in.spec.Engine
	}
	if in.manifest {
		name := in.name
		if name == "" {
			name = "(unnamed)"
		}
		return fmt.Sprintf("BurstBuffer %s (%s engine): sizing from the stage-1 model of %s", name, engine, file)
	}
	return fmt.Sprintf("Hardware block %s: sizing from the stage-1 model", file)
}
