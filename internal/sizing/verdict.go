package sizing

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/beeburst/beeburst/internal/limits"
)

// scalingDrop is how far the efficiency may fall from the sweep's smallest node count to its
// largest before the sweep no longer supports an extrapolation with the measured efficiency:
// a file system that lost a quarter of its efficiency on the way to n nodes cannot be trusted
// to hold it beyond n.
const scalingDrop = 0.75

// AssessInput is what the verdict after stage 3 stands on.
type AssessInput struct {
	Target Target
	// Hardware is the stage-1 input of the burst buffer's nodes with the stage-2 measured
	// figures where there are (what status.limits.components was computed from), else stage
	// 1's. Its limit is what the sweep is measured against, and the model an extrapolation
	// adds nodes to.
	Hardware limits.Hardware
	// Points are the stage-3 sweep.
	Points []limits.Point
	// Tolerance is the share by which a point may exceed its limit (0.05 for a measured,
	// stage-2 limit; see limits.SweepOptions).
	Tolerance float64
	// CutShort is true when the time budget stopped the sweep.
	CutShort bool
	// Capacity is the burst buffer's measured space (status.capacity), bytes; 0 unknown.
	Capacity float64
	// MetadataOps is the metadata benchmark's creates per second; 0 not measured.
	MetadataOps float64
	// MetadataServers is the number of metadata servers it ran against.
	MetadataServers int
	// MaxNodes bounds an extrapolation (the most nodes the burst buffer could have); 0 is
	// MaxBurstBufferNodes.
	MaxNodes int
}

// OpVerdict is the verdict on one bandwidth target.
type OpVerdict struct {
	Operation limits.Operation `json:"operation"`
	Target    float64          `json:"targetBytesPerSecond"`
	// Measured is stage 3's best, at Best.
	Measured limits.Figure     `json:"measuredBytesPerSecond"`
	Best     limits.SweepPoint `json:"best"`
	// Limit and Bottleneck are the limit the sweep is measured against.
	Limit      limits.Figure    `json:"limitBytesPerSecond"`
	Bottleneck limits.Component `json:"bottleneck,omitempty"`
	// Efficiency is Measured / Limit; nil when the limit is unknown.
	Efficiency *limits.Ratio `json:"efficiency"`
	// Valid: a measurement exists and is valid (not above its limit).
	Valid bool `json:"valid"`
	Met   bool `json:"met"`
	// MoreNodes, Cause and Basis say what would meet an unmet target and what that stands on.
	MoreNodes int    `json:"moreNodes,omitempty"`
	Cause     string `json:"cause,omitempty"`
	Basis     string `json:"basis,omitempty"`
	Message   string `json:"message"`
}

// MarginRatio is Measured / Target, NaN when not measured.
func (v *OpVerdict) MarginRatio() float64 {
	if v == nil || !v.Measured.Known() || v.Target <= 0 {
		return math.NaN()
	}
	return v.Measured.Value() / v.Target
}

// CapacityVerdict is the verdict on the capacity target.
type CapacityVerdict struct {
	Target    float64 `json:"targetBytes"`
	Measured  float64 `json:"measuredBytes"`
	Met       bool    `json:"met"`
	MoreNodes int     `json:"moreNodes,omitempty"`
	Message   string  `json:"message"`
}

// MetadataVerdict is the verdict on the metadata target.
type MetadataVerdict struct {
	Target   float64 `json:"targetOperationsPerSecond"`
	Measured float64 `json:"measuredOperationsPerSecond"`
	Met      bool    `json:"met"`
	// Servers is how many metadata servers would meet it, if they scale linearly.
	Servers int    `json:"servers,omitempty"`
	Message string `json:"message"`
}

// Verdict is Assess's answer.
type Verdict struct {
	State     State            `json:"state"`
	Write     *OpVerdict       `json:"write,omitempty"`
	Read      *OpVerdict       `json:"read,omitempty"`
	Capacity  *CapacityVerdict `json:"capacity,omitempty"`
	Metadata  *MetadataVerdict `json:"metadata,omitempty"`
	Cause     string           `json:"cause,omitempty"`
	MoreNodes int              `json:"moreNodes,omitempty"`
	Message   string           `json:"message"`
}

// For is the verdict of op, nil when not asked.
func (v Verdict) For(op limits.Operation) *OpVerdict {
	if op == limits.Read {
		return v.Read
	}
	return v.Write
}

// Assess is the verdict after stage 3: each figure of the target against what was measured;
// for one that falls short, the bottleneck and what would meet it. More nodes are predicted
// as the model's limit with more nodes like the median node, times the efficiency the sweep
// measured - when the sweep supports it: its efficiency must not have fallen by more than a
// quarter from its smallest to its largest node count (else the file system does not scale as
// the model does, and no number is given); with one node count measured, the scaling is the
// model's alone, and the basis says so.
func Assess(in AssessInput) (Verdict, error) {
	if err := in.Target.Validate(); err != nil {
		return Verdict{}, err
	}
	if in.Target.Write > 0 || in.Target.Read > 0 {
		if err := in.Hardware.Validate(); err != nil {
			return Verdict{}, fmt.Errorf("hardware: %w", err)
		}
	}
	maxNodes := in.MaxNodes
	if maxNodes <= 0 || maxNodes > MaxBurstBufferNodes {
		maxNodes = MaxBurstBufferNodes
	}
	v := Verdict{}
	var lim limits.Limits
	var sw limits.Sweep
	var sweepErr error
	if len(in.Target.operations()) > 0 {
		var err error
		if lim, err = limits.Compute(in.Hardware); err != nil {
			return Verdict{}, err
		}
		if len(in.Points) > 0 {
			sw, sweepErr = limits.AnalyzeSweep(in.Hardware, lim, in.Points, limits.SweepOptions{Tolerance: in.Tolerance})
			if sweepErr != nil {
				return Verdict{}, sweepErr
			}
		}
	}
	for _, op := range in.Target.operations() {
		ov := assessOp(in, lim.For(op), sw.For(op), op, maxNodes)
		if op == limits.Write {
			v.Write = ov
		} else {
			v.Read = ov
		}
	}
	if in.Target.Capacity > 0 {
		v.Capacity = assessCapacity(in, maxNodes)
	}
	if in.Target.MetadataOps > 0 {
		v.Metadata = assessMetadata(in)
	}

	// The state: any figure measured short is NotMet; every figure measured and met is Met;
	// otherwise Unknown (something was not measured, or not validly).
	var parts []string
	met, unknown := true, false
	causes := []string{}
	more := 0
	moreKnown := true
	for _, op := range in.Target.operations() {
		ov := v.For(op)
		parts = append(parts, ov.Message)
		switch {
		case !ov.Valid:
			unknown = true
		case !ov.Met:
			met = false
			causes = append(causes, ov.Cause)
			more, moreKnown = max(more, ov.MoreNodes), moreKnown && ov.MoreNodes > 0
		}
	}
	if c := v.Capacity; c != nil {
		parts = append(parts, c.Message)
		switch {
		case c.Measured == 0:
			unknown = true
		case !c.Met:
			met = false
			causes = append(causes, CauseNodeCapacity)
			more, moreKnown = max(more, c.MoreNodes), moreKnown && c.MoreNodes > 0
		}
	}
	if m := v.Metadata; m != nil {
		parts = append(parts, m.Message)
		switch {
		case m.Measured == 0:
			unknown = true
		case !m.Met:
			met = false
			causes = append(causes, CauseMetadataServers)
		}
	}
	switch {
	case !met:
		v.State = StateNotMet
		v.Cause = worstCause(causes)
		if moreKnown && more > 0 && (v.Cause == CauseTooFewNodes || v.Cause == CauseNodeCapacity) {
			v.MoreNodes = more
		}
	case unknown:
		v.State = StateUnknown
	default:
		v.State = StateMet
	}
	head := map[State]string{StateMet: "Target met", StateNotMet: "Target not met", StateUnknown: "Target not (yet) measured in full"}[v.State]
	v.Message = head + ": " + strings.Join(parts, "; ") + "."
	if in.CutShort && v.State != StateMet {
		v.Message += " The time budget cut the sweep short: a longer validation.timeBudget may measure more."
	}
	return v, nil
}

// worstCause is the cause that decides what to do: the network or the file system's
// efficiency before unknown figures, before more nodes.
func worstCause(causes []string) string {
	order := []string{CauseNetworkCaps, CauseEfficiency, CauseUnknownFigures, CauseMetadataServers, CauseTooFewNodes, CauseNodeCapacity}
	for _, c := range order {
		for _, got := range causes {
			if got == c {
				return c
			}
		}
	}
	if len(causes) > 0 {
		return causes[0]
	}
	return ""
}

func assessOp(in AssessInput, ol limits.OperationLimit, res *limits.SweepResult, op limits.Operation, maxNodes int) *OpVerdict {
	t := in.Target.Bandwidth(op)
	ov := &OpVerdict{Operation: op, Target: t, Limit: ol.Limit, Bottleneck: ol.Bottleneck, Measured: limits.Unknown}
	switch {
	case res == nil:
		ov.Message = fmt.Sprintf("%s not measured (no stage-3 sweep: validation.profile none, or the time budget ran out first)", op)
		return ov
	case res.ExceedsLimit:
		ov.Message = fmt.Sprintf("%s not validly measured: the sweep measured above its limit (caching suspected), so it cannot tell", op)
		return ov
	}
	ov.Valid = true
	ov.Measured, ov.Best, ov.Efficiency = res.BestBytesPerSecond, res.Best, res.Efficiency
	ov.Met = ov.Measured.Value() >= t*(1-1e-12)
	measured := fmt.Sprintf("%s %s measured (%s), %s against %s asked", op, ov.Measured, ov.Best, percent(ov.MarginRatio()),
		limits.FormatBytesPerSecond(t))
	if ov.Met {
		ov.Message = measured
		return ov
	}
	if !ol.Limit.Known() || ov.Efficiency == nil || *ov.Efficiency <= 0 {
		ov.Cause = CauseUnknownFigures
		ov.Message = measured + "; the limit is unknown, so what would meet it cannot be told"
		return ov
	}
	eta := float64(*ov.Efficiency)
	limitText := fmt.Sprintf("the limit is %s (%s) and the file system reached %.0f%% of it", ol.Limit, ol.Bottleneck, eta*100)

	// Does the sweep support holding the efficiency beyond its node counts?
	basis, ok := scalingBasis(in, ol, op)
	ov.Basis = basis
	if !ok {
		ov.Cause = CauseEfficiency
		ov.Message = fmt.Sprintf("%s; %s; %s, so how many nodes would meet it cannot be told - measure with more nodes", measured, limitText, basis)
		return ov
	}

	h := in.Hardware
	typ := typicalServer(h, op)
	required := t * (1 + in.Target.Margin)
	bestPred, lastGain := 0.0, 0
	var bestLim limits.OperationLimit
	for k := 1; len(h.Servers)+k <= maxNodes; k++ {
		h = withNode(h, typ, k)
		l, err := limits.Compute(h)
		if err != nil {
			break
		}
		pred := l.For(op).Limit.Value() * eta
		if pred >= required*(1-1e-12) {
			ov.MoreNodes, ov.Cause = k, CauseTooFewNodes
			ov.Message = fmt.Sprintf("%s; %s; %s like %s would meet it: %s predicted at %d nodes (the model's %s x the measured efficiency %.2f; %s)",
				measured, limitText, plural(k, "more node"), nameOf(typ), limits.FormatBytesPerSecond(pred), len(h.Servers), l.For(op).Limit, eta, basis)
			return ov
		}
		if pred > bestPred*(1+1e-9) {
			bestPred, lastGain, bestLim = pred, k, l.For(op)
		}
		if k-lastGain > 64 {
			break
		}
	}
	switch {
	case bestLim.Bottleneck == limits.ComponentNetwork || ol.Bottleneck == limits.ComponentNetwork && bestPred <= ol.Limit.Value()*eta*(1+1e-9):
		ov.Cause = CauseNetworkCaps
		ov.Message = fmt.Sprintf("%s; %s; the network caps it: more nodes do not raise the limit enough (at most %s predicted with more nodes)",
			measured, limitText, limits.FormatBytesPerSecond(math.Max(bestPred, ol.Limit.Value()*eta)))
	case ol.Limit.Value() >= required:
		ov.Cause = CauseEfficiency
		ov.Message = fmt.Sprintf("%s; %s: the hardware allows the target, the loss is in the file system (compare stage 2 and stage 4), and up to %d nodes would not make it up",
			measured, limitText, maxNodes)
	default:
		ov.Cause = CauseTooFewNodes
		ov.Message = fmt.Sprintf("%s; %s; not even %d nodes like %s would meet it", measured, limitText, maxNodes, nameOf(typ))
	}
	return ov
}

// scalingBasis says what an extrapolation stands on, and whether the sweep supports one.
func scalingBasis(in AssessInput, ol limits.OperationLimit, op limits.Operation) (string, bool) {
	best := map[int]float64{}
	for _, p := range in.Points {
		if p.Operation == op && p.BytesPerSecond > best[p.Nodes] {
			best[p.Nodes] = p.BytesPerSecond
		}
	}
	ms := make([]int, 0, len(best))
	for m := range best {
		ms = append(ms, m)
	}
	sort.Ints(ms)
	if len(ms) < 2 {
		return fmt.Sprintf("the sweep measured one node count (%d), so the scaling with nodes is the model's and the efficiency is assumed to hold - an assumption, not a measurement", ms[0]), true
	}
	eta := func(m int) float64 {
		l := limits.PointLimit(in.Hardware, ol, m)
		if !l.Known() || l.Value() <= 0 {
			return math.NaN()
		}
		return best[m] / l.Value()
	}
	first, last := ms[0], ms[len(ms)-1]
	e0, e1 := eta(first), eta(last)
	if math.IsNaN(e0) || math.IsNaN(e1) {
		return "the sweep's efficiency per node count is unknown", false
	}
	if e1 < scalingDrop*e0 {
		return fmt.Sprintf("the efficiency fell from %.2f at %s to %.2f at %s as the sweep added client nodes: the file system does not scale as the model does",
			e0, plural(first, "node"), e1, plural(last, "node")), false
	}
	return fmt.Sprintf("the efficiency held from %.2f at %s to %.2f at %s in the sweep", e0, plural(first, "node"), e1, plural(last, "node")), true
}

// typicalServer is the median server node by its own figure for op (its devices, at most its
// link where the network counts): more nodes are modelled like it.
func typicalServer(h limits.Hardware, op limits.Operation) limits.ServerNode {
	s := append([]limits.ServerNode(nil), h.Servers...)
	own := func(n limits.ServerNode) float64 {
		f := n.DeviceWrite
		if op == limits.Read {
			f = n.DeviceRead
		}
		v := float64(n.Devices) * f.Value()
		if !h.Local && n.Link.Known() {
			v = math.Min(v, n.Link.Value())
		}
		return v
	}
	sort.SliceStable(s, func(i, j int) bool { return own(s[i]) < own(s[j]) })
	return s[(len(s)-1)/2]
}

// withNode adds the k-th copy of typ to h: a server, and a client too where clients and
// servers are the same nodes.
func withNode(h limits.Hardware, typ limits.ServerNode, k int) limits.Hardware {
	c := typ
	c.Name = fmt.Sprintf("%s-like-%d", nameOf(typ), k)
	h.Servers = append(h.Servers[:len(h.Servers):len(h.Servers)], c)
	if h.Colocated || h.Local {
		h.Clients.Nodes++
		if h.Colocated && typ.Link.Known() && (!h.Clients.Link.Known() || typ.Link.Value() < h.Clients.Link.Value()) {
			h.Clients.Link = typ.Link
		}
	}
	return h
}

func nameOf(s limits.ServerNode) string {
	if s.Name == "" {
		return "these"
	}
	return s.Name
}

func assessCapacity(in AssessInput, maxNodes int) *CapacityVerdict {
	t := in.Target.Capacity
	c := &CapacityVerdict{Target: t, Measured: in.Capacity}
	switch {
	case in.Capacity <= 0:
		c.Message = fmt.Sprintf("capacity not measured yet (%s asked)", limits.FormatCapacity(t))
	case in.Capacity >= t:
		c.Met = true
		c.Message = fmt.Sprintf("capacity %s, %s against %s asked", limits.FormatCapacity(in.Capacity), percent(in.Capacity/t), limits.FormatCapacity(t))
	default:
		n := max(len(in.Hardware.Servers), 1)
		per := in.Capacity / float64(n)
		k := int(math.Ceil((t - in.Capacity) / per * (1 - 1e-12)))
		c.Message = fmt.Sprintf("capacity %s, %s against %s asked", limits.FormatCapacity(in.Capacity), percent(in.Capacity/t), limits.FormatCapacity(t))
		if n+k <= maxNodes {
			c.MoreNodes = k
			c.Message += fmt.Sprintf("; %s of %s each would meet it", plural(k, "more node"), limits.FormatCapacity(per))
		} else {
			c.Message += fmt.Sprintf("; not even %d nodes of %s each would meet it", maxNodes, limits.FormatCapacity(per))
		}
	}
	return c
}

func assessMetadata(in AssessInput) *MetadataVerdict {
	t := in.Target.MetadataOps
	m := &MetadataVerdict{Target: t, Measured: in.MetadataOps}
	switch {
	case in.MetadataOps <= 0:
		m.Message = fmt.Sprintf("metadata not measured (%s creates/s asked; the metadata benchmark runs with validation.profile standard)", formatCount(t))
	case in.MetadataOps >= t:
		m.Met = true
		m.Message = fmt.Sprintf("metadata %s creates/s, %s against %s asked", formatCount(in.MetadataOps), percent(in.MetadataOps/t), formatCount(t))
	default:
		m.Message = fmt.Sprintf("metadata %s creates/s, %s against %s asked", formatCount(in.MetadataOps), percent(in.MetadataOps/t), formatCount(t))
		if in.MetadataServers > 0 {
			per := in.MetadataOps / float64(in.MetadataServers)
			need := int(math.Ceil(t * (1 + in.Target.Margin) / per * (1 - 1e-12)))
			m.Servers = need
			if need <= MaxMetadataServers {
				m.Message += fmt.Sprintf("; about %d metadata servers would meet it, if they scale linearly from the measured %s per server", need, formatCount(per))
			} else {
				m.Message += fmt.Sprintf("; more than the %d metadata servers allowed would be needed at the measured %s per server", MaxMetadataServers, formatCount(per))
			}
		}
	}
	return m
}
