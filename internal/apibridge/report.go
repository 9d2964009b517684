package apibridge

import (
	"fmt"
	"strings"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/sizing"
)

// ReportFromStatus turns a live BurstBuffer's status back into the limits engine's Report,
// so `kubectl beeburst limits NAME` prints the same table as `estimate`, stage beside stage.
// A term absent from the status is shown as unknown; its formula says whether it did not
// apply.
func ReportFromStatus(bb *v1alpha1.BurstBuffer) limits.Report {
	r := limits.Report{Title: fmt.Sprintf("BurstBuffer %s/%s: %s, phase %s", bb.Namespace, bb.Name, bb.Spec.Engine, orDash(string(bb.Status.Phase)))}
	for _, n := range bb.Status.Nodes {
		line := fmt.Sprintf("node %s: %v", n.Name, n.Roles)
		if d := DescribeNode(n.Hardware); d != "" {
			line += "; " + d
		}
		r.Summary = append(r.Summary, line)
	}
	if bb.Status.NodeSelection != "" {
		r.Summary = append(r.Summary, bb.Status.NodeSelection)
	}
	if t := bb.Status.Target; t != nil && t.State != v1alpha1.TargetPredicted {
		// After stage 3 (or when out of reach) the verdict, which the node choice above predates.
		r.Summary = append(r.Summary, fmt.Sprintf("target %s: %s", t.State, t.Message))
	}
	r.Summary = append(r.Summary, ChunkSizeLines(bb.Status.ChunkSize)...)
	r.Summary = append(r.Summary, ComparisonLines(bb.Status.Comparison)...)
	l := bb.Status.Limits
	if l == nil {
		r.Summary = append(r.Summary, "no limits published yet")
		return r
	}
	local := bb.Spec.Engine == v1alpha1.EngineLocal
	if e := l.Estimated; e != nil {
		r.Estimated = &limits.Limits{Write: operationFromAPI(e.Write, limits.Write, local), Read: operationFromAPI(e.Read, limits.Read, local)}
		for _, s := range e.Sources {
			r.Summary = append(r.Summary, fmt.Sprintf("%s: %s %s", s.Figure, s.Source, s.Value))
		}
	}
	if c := l.Components; c != nil && c.Write != nil && c.Read != nil {
		r.Components = &limits.Limits{Write: operationFromAPI(*c.Write, limits.Write, local), Read: operationFromAPI(*c.Read, limits.Read, local)}
		for _, n := range c.Nodes {
			r.ComponentNodes = append(r.ComponentNodes, limits.NodeComponents{
				Node: n.Name, Network: componentFromAPI(n.Network), DeviceWrite: componentFromAPI(n.DeviceWrite), DeviceRead: componentFromAPI(n.DeviceRead),
			})
		}
	}
	r.Summary = append(r.Summary, RoundsLines(l)...)
	if s := l.Sweep; s != nil {
		// Efficiency was computed against the stage-2 limit when there is one.
		ref := r.Estimated
		if r.Components != nil {
			ref = r.Components
		}
		r.Sweep = &limits.Sweep{Write: sweepFromAPI(s.Write, limits.Write, ref), Read: sweepFromAPI(s.Read, limits.Read, ref)}
	}
	if m := l.Monitoring; m != nil {
		for _, n := range m.Nodes {
			r.Monitoring = append(r.Monitoring, limits.NodeFigure{Node: n.Name, Operation: limits.Write, BytesPerSecond: figure(n.WriteBytesPerSecond)})
		}
	}
	for _, w := range bb.Status.Warnings {
		r.Warnings = append(r.Warnings, limits.Warning{Reason: w.Reason, Operation: limits.Operation(w.Operation), Node: w.Node, Component: w.Component, Message: w.Message})
	}
	return r
}

// operationFromAPI: with the local engine the link terms do not apply (n/a), otherwise an
// absent term is unknown.
func operationFromAPI(o v1alpha1.OperationLimit, op limits.Operation, local bool) limits.OperationLimit {
	absent := limits.Unknown
	if local {
		absent = limits.NotApplicable
	}
	term := func(v *int64) limits.Figure {
		if v == nil || *v <= 0 {
			return absent
		}
		return limits.Bytes(float64(*v))
	}
	return limits.OperationLimit{
		Operation: op, Clients: term(o.ClientsBytesPerSecond), Servers: term(o.ServersBytesPerSecond),
		Network: term(o.NetworkBytesPerSecond), Devices: figure(o.DevicesBytesPerSecond),
		Limit: figure(&o.LimitBytesPerSecond), Bottleneck: limits.Component(o.Bottleneck), Formula: o.Formula,
		ParallelismLimit: copyInt64(o.ParallelismLimitProcesses),
	}
}

func sweepFromAPI(s *v1alpha1.SweepResult, op limits.Operation, ref *limits.Limits) *limits.SweepResult {
	if s == nil {
		return nil
	}
	eta := limits.Ratio(float64(s.EfficiencyPerMille) / 1000)
	lim := limits.Unknown
	if ref != nil {
		lim = ref.For(op).Limit
	}
	return &limits.SweepResult{
		Limit:     lim,
		Operation: op, BestBytesPerSecond: figure(&s.BestBytesPerSecond),
		Best:       limits.SweepPoint{Nodes: int(s.Best.Nodes), ProcessesPerNode: int(s.Best.ProcessesPerNode)},
		Plateau:    limits.SweepPoint{Nodes: int(s.Plateau.Nodes), ProcessesPerNode: int(s.Plateau.ProcessesPerNode)},
		Efficiency: &eta, ParallelismLimit: copyInt64(s.ParallelismLimitProcesses),
	}
}

func componentFromAPI(c *v1alpha1.ComponentFigure) limits.ComponentFigure {
	if c == nil {
		return limits.ComponentFigure{}
	}
	return limits.ComponentFigure{Documented: figure(c.DocumentedBytesPerSecond), Measured: figure(c.MeasuredBytesPerSecond)}
}

func figure(v *int64) limits.Figure {
	if v == nil || *v <= 0 {
		return limits.Unknown
	}
	return limits.Bytes(float64(*v))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RoundsLines say where figures came from when they were not measured once for this burst
// buffer: reused from another one's validation, or measured a second time.
func RoundsLines(l *v1alpha1.LimitsStatus) []string {
	var out []string
	if c := l.Components; c != nil {
		if c.ReusedFrom != nil {
			out = append(out, fmt.Sprintf("stage 2 reused from %s (validated %s)", c.ReusedFrom.BurstBuffer, c.ReusedFrom.MeasuredTime.UTC().Format("2006-01-02 15:04:05 UTC")))
		}
		if c.DeviceProbeRound > 1 {
			out = append(out, "stage 2 devices measured twice, the higher round kept")
		}
		if c.NetworkProbeRound > 1 {
			out = append(out, "stage 2 links measured twice, the higher round kept")
		}
	}
	if s := l.Sweep; s != nil {
		if s.ReusedFrom != nil {
			out = append(out, fmt.Sprintf("stage 3 reused from %s (validated %s)", s.ReusedFrom.BurstBuffer, s.ReusedFrom.MeasuredTime.UTC().Format("2006-01-02 15:04:05 UTC")))
		}
		for _, p := range s.Remeasured {
			line := fmt.Sprintf("stage 3 point %d x %d measured %d times (%s):", p.Point.Nodes, p.Point.ProcessesPerNode, len(p.Rounds), p.Reason)
			for i, rd := range p.Rounds {
				line += fmt.Sprintf(" round %d write %s read %s", i+1, limits.FormatBytesPerSecond(float64(rd.WriteBytesPerSecond)), limits.FormatBytesPerSecond(float64(rd.ReadBytesPerSecond)))
				if len(rd.DisturbedBy) > 0 {
					line += " (disturbed)"
				}
				if i+1 < len(p.Rounds) {
					line += ";"
				}
			}
			out = append(out, line)
		}
	}
	return out
}

// ChunkSizeLines are status.chunkSize for `kubectl beeburst limits`: the size in use and
// why, then each candidate's figures and score.
func ChunkSizeLines(cs *v1alpha1.ChunkSizeStatus) []string {
	if cs == nil {
		return nil
	}
	head := fmt.Sprintf("chunk size %s (%s", sizing.FormatChunk(cs.Size.Value()), cs.Policy)
	if cs.Pattern != "" {
		head += ", " + string(cs.Pattern)
	}
	head += ")"
	if cs.Message != "" {
		head += ": " + cs.Message
	}
	lines := []string{head}
	for _, c := range cs.Candidates {
		var parts []string
		add := func(name string, v *int64, ops bool) {
			if v == nil {
				return
			}
			if ops {
				parts = append(parts, fmt.Sprintf("%s %d IOPS", name, *v))
			} else {
				parts = append(parts, fmt.Sprintf("%s %s", name, limits.FormatBytesPerSecond(float64(*v))))
			}
		}
		add("write", c.WriteBytesPerSecond, false)
		add("read", c.ReadBytesPerSecond, false)
		add("randwrite", c.WriteOpsPerSecond, true)
		add("randread", c.ReadOpsPerSecond, true)
		if c.ScorePerMille != nil {
			parts = append(parts, fmt.Sprintf("score %.2f", float64(*c.ScorePerMille)/1000))
		}
		if c.Chosen {
			parts = append(parts, "chosen")
		}
		if c.Message != "" {
			parts = append(parts, c.Message)
		}
		if len(parts) == 0 {
			parts = append(parts, "not measured yet")
		}
		lines = append(lines, fmt.Sprintf("  chunk size %s: %s", sizing.FormatChunk(c.Size.Value()), strings.Join(parts, ", ")))
	}
	return lines
}

// ComparisonLines are status.comparison for `kubectl beeburst limits`: what ran, then each
// operation on the burst buffer beside the other storage.
func ComparisonLines(c *v1alpha1.ComparisonStatus) []string {
	if c == nil {
		return nil
	}
	head := "compared with " + c.With
	if c.Workload != "" {
		head += " (" + c.Workload + ")"
	}
	lines := []string{head}
	fig := func(v *int64) string {
		if v == nil {
			return "not measured"
		}
		return limits.FormatBytesPerSecond(float64(*v))
	}
	for _, o := range c.Operations {
		line := fmt.Sprintf("  %s: burst buffer %s, %s %s", o.Operation, fig(o.BurstBufferBytesPerSecond), c.With, fig(o.OtherBytesPerSecond))
		if o.RatioPerMille != nil {
			line += fmt.Sprintf(" (x%.2f)", float64(*o.RatioPerMille)/1000)
		}
		lines = append(lines, line)
	}
	if c.Message != "" {
		lines = append(lines, "  "+c.Message)
	}
	return lines
}
