package apibridge

import (
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/nodecache"
	"github.com/beeburst/beeburst/internal/shorten"
	"github.com/beeburst/beeburst/internal/sizing"
)

// This file is internal/sizing's bridge to the API: spec.target into sizing.Target, a node's
// labels, discovered hardware and cached stage-2 figures into a sizing.Candidate, and the
// decision, the verdict, the chunk-size choice and the comparison back into status types.

// Lengths of the status's messages (the CRD's MaxLength).
const (
	maxTargetMessage = 4096
	maxFieldMessage  = 1024
	maxShortMessage  = 512
)

// TargetFromSpec is spec.target for internal/sizing; the zero Target when t is nil.
func TargetFromSpec(t *v1alpha1.TargetSpec) sizing.Target {
	if t == nil {
		return sizing.Target{}
	}
	out := sizing.Target{Margin: float64(t.MarginPercent) / 100}
	if q := t.WriteBytesPerSecond; q != nil {
		out.Write = quantityFloat(*q)
	}
	if q := t.ReadBytesPerSecond; q != nil {
		out.Read = quantityFloat(*q)
	}
	if q := t.Capacity; q != nil {
		out.Capacity = quantityFloat(*q)
	}
	if t.MetadataOperationsPerSecond != nil {
		out.MetadataOps = float64(*t.MetadataOperationsPerSecond)
	}
	return out
}

// MinNodes is the smallest node count a spec's layout allows, which a chosen count must
// respect where the CRD's rules cannot check it (they compare with nodes.count, which a
// target may leave out): a metadata server per node, the stripe width over the targets per
// node, the sweep's largest node count. Layout counts only for the beegfs engine.
func MinNodes(spec *v1alpha1.BurstBufferSpec) int {
	n := 1
	if spec == nil {
		return n
	}
	if spec.Engine != v1alpha1.EngineLocal {
		l := spec.Layout
		n = max(n, int(l.MetadataServers))
		if l.StripeWidth != nil {
			per := max(int(l.StorageTargetsPerNode), 1)
			n = max(n, (int(*l.StripeWidth)+per-1)/per)
		}
	}
	if s := spec.Validation.Sweep; s != nil {
		for _, m := range s.Nodes {
			n = max(n, int(m))
		}
	}
	return n
}

// CandidateInput is everything known of one node before it is chosen.
type CandidateInput struct {
	Name string
	// Tier and Workload: see sizing.Candidate (0 the workload's pods run there, 1 they could,
	// 2 any other node).
	Tier     int
	Workload bool
	// Spec is spec.hardware (documents every node alike).
	Spec *v1alpha1.HardwareSpec
	// Labels are the node's labels (hardware.beeburst.io/*).
	Labels map[string]string
	// Discovered is what an earlier device probe of this burst buffer read on the node, if
	// anything (status.nodes[].hardware).
	Discovered *v1alpha1.NodeHardware
	// Cached are the node's stage-2 figures from the per-node cache, if any.
	Cached *nodecache.Figures
	// StoragePath is spec.storage.path: device figures and free space measured on another
	// path do not count.
	StoragePath string
}

// Candidate gathers every figure known of a node, each with its source, for sizing.Best to
// choose from: the link (spec.hardware, the node's labels, the interface speed a probe
// discovered, the iperf3 figure of a cached stage 2), the device bandwidths (spec.hardware x
// devices per node, the labels, the cached fio figures of the same storage path) and the free
// space (the cached probe's, else the file system's size a probe discovered - an upper bound,
// and said so).
func Candidate(in CandidateInput) sizing.Candidate {
	c := sizing.Candidate{Name: in.Name, Tier: in.Tier, Workload: in.Workload}
	if l := SpecLink(in.Spec); l != nil {
		if v, err := LinkDataRate(l); err == nil {
			c.Link = append(c.Link, sizing.Evidence{Value: v, Source: sizing.SourceSpec, Detail: linkDetail(l)})
		}
	}
	if l, src := NodeLink(nil, in.Labels, nil); src == v1alpha1.SourceLabel {
		if v, err := LinkDataRate(l); err == nil {
			c.Link = append(c.Link, sizing.Evidence{Value: v, Source: sizing.SourceLabel, Detail: linkDetail(l)})
		}
	}
	discoveredMbps := int64(0)
	if nh := in.Discovered; nh != nil && nh.InterfaceBitsPerSecond != nil && nh.InterfaceBitsPerSecond.Sign() > 0 {
		discoveredMbps = nh.InterfaceBitsPerSecond.Value() / 1_000_000
	} else if f := in.Cached; f != nil && f.Hardware != nil && f.Hardware.LinkMbps > 0 {
		discoveredMbps = f.Hardware.LinkMbps
	}
	if discoveredMbps > 0 {
		c.Link = append(c.Link, sizing.Evidence{Value: float64(discoveredMbps) * 1e6 / 8, Source: sizing.SourceDiscovered,
			Detail: fmt.Sprintf("interface %d Mb/s", discoveredMbps)})
	}
	if f := in.Cached; f != nil && f.NetworkBytesPerSecond > 0 {
		c.Link = append(c.Link, sizing.Evidence{Value: float64(f.NetworkBytesPerSecond), Source: sizing.SourceMeasured,
			MeasuredTime: f.MeasuredTime, Detail: "iperf3"})
	}

	for _, dev := range []struct {
		out   *[]sizing.Evidence
		write bool
	}{{&c.DeviceWrite, true}, {&c.DeviceRead, false}} {
		if d := in.Spec; d != nil && d.Devices != nil {
			q, per := d.Devices.ReadBytesPerSecond, max(int(d.Devices.PerNode), 1)
			if dev.write {
				q = d.Devices.WriteBytesPerSecond
			}
			if q != nil && q.Sign() > 0 {
				*dev.out = append(*dev.out, sizing.Evidence{Value: quantityFloat(*q) * float64(per), Source: sizing.SourceSpec,
					Detail: fmt.Sprintf("%d x %s", per, q.String())})
			}
		}
		key := v1alpha1.LabelDiskReadBytesPerSecond
		if dev.write {
			key = v1alpha1.LabelDiskWriteBytesPerSecond
		}
		if q, err := resource.ParseQuantity(in.Labels[key]); err == nil && q.Sign() > 0 {
			*dev.out = append(*dev.out, sizing.Evidence{Value: quantityFloat(q), Source: sizing.SourceLabel, Detail: q.String()})
		}
		if f := in.Cached; f != nil && f.StoragePath == in.StoragePath {
			v := f.DeviceReadBytesPerSecond
			if dev.write {
				v = f.DeviceWriteBytesPerSecond
			}
			if v > 0 {
				*dev.out = append(*dev.out, sizing.Evidence{Value: float64(v), Source: sizing.SourceMeasured, MeasuredTime: f.MeasuredTime, Detail: "fio"})
			}
		}
	}

	if f := in.Cached; f != nil && f.StoragePath == in.StoragePath && f.FreeBytes > 0 {
		c.Capacity = append(c.Capacity, sizing.Evidence{Value: float64(f.FreeBytes), Source: sizing.SourceMeasured, MeasuredTime: f.MeasuredTime,
			Detail: "free space"})
	}
	if nh := in.Discovered; nh != nil && nh.Capacity != nil && nh.Capacity.Sign() > 0 {
		c.Capacity = append(c.Capacity, sizing.Evidence{Value: quantityFloat(*nh.Capacity), Source: sizing.SourceDiscovered,
			Detail: "file system size (free space not known: an upper bound)"})
	}
	return c
}

func linkDetail(l *v1alpha1.LinkHardware) string {
	s := l.RateBitsPerSecond.String()
	if l.Encoding != "" && l.Encoding != v1alpha1.EncodingNone {
		s += " " + string(l.Encoding)
	}
	return s
}

// MetadataPerServer is the per-metadata-server create rate to size metadata servers from:
// the best of the candidate nodes' cached metadata figures by sizing.Best's rule (fresh before
// stale, the newest first), of the same storage path and measured alone, and only a fresh
// one - a stale rate is no better than the layout's count, whose metadata benchmark checks the
// target anyway. Without one the evidence is unknown; its Note says when only stale rates
// exist. The detail names the node, the burst buffer and the time, for the decision to cite.
func MetadataPerServer(cached []nodecache.Figures, storagePath string, now time.Time, freshFor time.Duration) sizing.Evidence {
	var evs []sizing.Evidence
	for _, f := range cached {
		m := f.Metadata
		if !m.Usable(storagePath) {
			continue
		}
		by := m.MeasuredBy
		if by == "" {
			by = "an unnamed burst buffer"
		}
		evs = append(evs, sizing.Evidence{Value: float64(m.CreatesPerSecondPerServer), Source: sizing.SourceMeasured, MeasuredTime: m.MeasuredTime,
			Detail: fmt.Sprintf("on %s by %s at %s, %d metadata server(s)", f.Node, by, m.MeasuredTime.UTC().Format(time.RFC3339), m.Servers)})
	}
	best := sizing.Best(evs, now, freshFor)
	if best.Source != sizing.SourceMeasured {
		note := ""
		if best.Known() {
			note = fmt.Sprintf("the per-server rate measured %s is %s old, older than validation.reuseComponentResultsFor (%s)",
				best.Detail, now.Sub(best.MeasuredTime).Round(time.Second), freshFor)
		}
		return sizing.Evidence{Source: sizing.SourceUnknown, Note: note}
	}
	return best
}

// OfflineRequest is the sizing request of a BurstBuffer manifest (spec; nil for a bare
// hardware block) for planning before anything exists: identical candidate nodes named
// node-1, node-2, ... with the figures its hardware block documents. The count is checked
// when the file gives one (hardware.servers.nodes, else spec.nodes.count), else chosen among
// maxNodes candidates. Clients that are other nodes than the servers (hardware.clients.nodes
// differing from the servers, colocated not true) stay fixed, and the count sizes the
// servers.
func OfflineRequest(hw *v1alpha1.HardwareSpec, spec *v1alpha1.BurstBufferSpec, target sizing.Target, maxNodes int) (sizing.Request, error) {
	if maxNodes < 1 || maxNodes > sizing.MaxBurstBufferNodes {
		return sizing.Request{}, fmt.Errorf("the most nodes to consider must be from 1 to %d, not %d", sizing.MaxBurstBufferNodes, maxNodes)
	}
	engine := v1alpha1.EngineBeeGFS
	count := 0
	if spec != nil {
		if spec.Engine != "" {
			engine = spec.Engine
		}
		count = int(spec.Nodes.Count)
	}
	if hw != nil {
		switch {
		case hw.Servers != nil && hw.Servers.Nodes != nil:
			count = int(*hw.Servers.Nodes)
		case hw.Colocated != nil && *hw.Colocated && hw.Clients != nil && hw.Clients.Nodes != nil:
			count = int(*hw.Clients.Nodes)
		}
	}
	// The uniform block with the servers' count as given (or one, to read the figures).
	u, err := UniformFromSpec(hw, Defaults{Nodes: int32(max(count, 1)), Engine: engine})
	if err != nil {
		return sizing.Request{}, err
	}
	req := sizing.Request{Target: target, Count: count, Local: u.Local, ProcessesPerNode: u.ProcessesPerNode,
		MinNodes: MinNodes(spec), CapacityPerNode: 0, Now: time.Now()}
	if spec != nil {
		req.MetadataServers = int(spec.Layout.MetadataServers)
		if q := spec.Storage.CapacityPerNode; q != nil {
			req.CapacityPerNode = quantityFloat(*q)
		}
	}
	if u.BisectionBitsPerSecond != nil {
		req.Fabric.Bisection = limits.Bytes(*u.BisectionBitsPerSecond / 8)
	}
	req.Fabric.ServiceTrafficBytesPerSecond = u.ServiceTrafficBitsPerSecond / 8
	clientsFixed := !u.Local && !u.Colocated && hw != nil && hw.Clients != nil && hw.Clients.Nodes != nil
	if clientsFixed {
		cl := limits.Clients{Nodes: u.ClientNodes, ProcessesPerNode: u.ProcessesPerNode}
		if u.ClientLink != nil {
			v, err := u.ClientLink.DataBytesPerSecond()
			if err != nil {
				return sizing.Request{}, fmt.Errorf("hardware.clients.link: %w", err)
			}
			cl.Link = limits.Bytes(v)
		}
		req.FixedClients = &cl
	}

	n := maxNodes
	if count > 0 {
		n = count
	}
	node := sizing.Candidate{}
	if l := u.ServerLink; l != nil {
		v, err := l.DataBytesPerSecond()
		if err != nil {
			return sizing.Request{}, fmt.Errorf("hardware.servers.link: %w", err)
		}
		node.Link = []sizing.Evidence{{Value: v, Source: sizing.SourceSpec, Detail: fmt.Sprintf("%s %s", limits.FormatBitsPerSecond(l.RateBitsPerSecond), l.Encoding)}}
	}
	per := max(u.DevicesPerNode, 1)
	if v := u.DeviceWriteBytesPerSecond; v != nil {
		node.DeviceWrite = []sizing.Evidence{{Value: *v * float64(per), Source: sizing.SourceSpec, Detail: fmt.Sprintf("%d x %s", per, limits.FormatBytesPerSecond(*v))}}
	}
	if v := u.DeviceReadBytesPerSecond; v != nil {
		node.DeviceRead = []sizing.Evidence{{Value: *v * float64(per), Source: sizing.SourceSpec, Detail: fmt.Sprintf("%d x %s", per, limits.FormatBytesPerSecond(*v))}}
	}
	req.Candidates = make([]sizing.Candidate, n)
	for i := range req.Candidates {
		c := node
		c.Name = fmt.Sprintf("node-%d", i+1)
		req.Candidates[i] = c
	}
	return req, nil
}

// DecisionToAPI is status.target for a decision made at decided.
func DecisionToAPI(d sizing.Decision, decided time.Time) *v1alpha1.TargetStatus {
	ts := &v1alpha1.TargetStatus{
		State: v1alpha1.TargetState(d.State), Mode: v1alpha1.TargetMode(d.Mode),
		NodeCount: clampInt32(d.Count), MetadataServers: clampInt32(d.MetadataServers), CandidateNodes: clampInt32(d.Candidates),
		Cause: d.Cause, Message: shorten.Cut(decisionMessage(d), maxTargetMessage),
	}
	if d.MoreNodes > 0 {
		ts.MoreNodes = ptr.To(clampInt32(d.MoreNodes))
	}
	if !decided.IsZero() {
		t := metav1.NewTime(decided)
		ts.DecidedTime = &t
	}
	for _, n := range d.Nodes {
		tn := v1alpha1.TargetNode{Name: n.Name, Workload: n.Workload}
		var latest time.Time
		set := func(e *sizing.Evidence, v **int64, src *string) {
			if e == nil {
				return
			}
			*src = string(e.Source)
			if e.Known() {
				x := int64(math.Round(e.Value))
				*v = &x
			}
			if (e.Source == sizing.SourceMeasured || e.Source == sizing.SourceMeasuredStale) && e.MeasuredTime.After(latest) {
				latest = e.MeasuredTime
			}
		}
		set(n.Write, &tn.WriteBytesPerSecond, &tn.WriteSource)
		set(n.Read, &tn.ReadBytesPerSecond, &tn.ReadSource)
		set(n.Link, &tn.NetworkBytesPerSecond, &tn.NetworkSource)
		if e := n.Capacity; e != nil {
			tn.CapacitySource = string(e.Source)
			if e.Known() {
				tn.Capacity = resource.NewQuantity(int64(e.Value)&^(1<<20-1), resource.BinarySI)
			}
			if (e.Source == sizing.SourceMeasured || e.Source == sizing.SourceMeasuredStale) && e.MeasuredTime.After(latest) {
				latest = e.MeasuredTime
			}
		}
		if !latest.IsZero() {
			t := metav1.NewTime(latest)
			tn.MeasuredTime = &t
		}
		ts.Nodes = append(ts.Nodes, tn)
	}
	for _, op := range limits.Operations {
		b := d.For(op)
		if b == nil {
			continue
		}
		tb := &v1alpha1.TargetBandwidth{TargetBytesPerSecond: int64(math.Round(b.Target)), Message: shorten.Cut(b.Message, maxFieldMessage)}
		if b.Predicted.Known() {
			tb.PredictedBytesPerSecond = b.Predicted.Int64Ptr()
			tb.PredictedBottleneck = string(b.Bottleneck)
			tb.PredictedMarginPercent = marginPercent(b.MarginRatio())
		}
		if op == limits.Write {
			ts.Write = tb
		} else {
			ts.Read = tb
		}
	}
	if c := d.Capacity; c != nil {
		tc := &v1alpha1.TargetCapacity{Target: *resource.NewQuantity(int64(c.Target), resource.BinarySI)}
		if c.Predicted > 0 {
			tc.Predicted = resource.NewQuantity(int64(c.Predicted)&^(1<<20-1), resource.BinarySI)
			tc.PredictedMarginPercent = marginPercent(c.Predicted / c.Target)
		}
		ts.Capacity = tc
	}
	if m := d.Metadata; m != nil {
		tm := &v1alpha1.TargetMetadata{TargetOperationsPerSecond: int64(m.Target), Message: shorten.Cut(m.Message, maxFieldMessage)}
		if m.PerServer.Known() {
			v := int64(math.Round(m.PerServer.Value))
			tm.PerServerOperationsPerSecond = &v
		}
		ts.Metadata = tm
	}
	return ts
}

// decisionMessage is the decision's sentences, then its notes: "... Notes: a; b."
func decisionMessage(d sizing.Decision) string {
	if len(d.Notes) == 0 {
		return d.Message
	}
	return strings.TrimSpace(d.Message) + " Notes: " + strings.Join(d.Notes, "; ") + "."
}

// ApplyVerdict adds the verdict after stage 3 to status.target. A verdict that cannot tell
// (Unknown: not measured, or not validly) keeps the decision's state.
func ApplyVerdict(ts *v1alpha1.TargetStatus, v sizing.Verdict) {
	if ts == nil {
		return
	}
	if v.State == sizing.StateMet || v.State == sizing.StateNotMet {
		ts.State = v1alpha1.TargetState(v.State)
		ts.Cause, ts.MoreNodes = v.Cause, nil
		if v.MoreNodes > 0 {
			ts.MoreNodes = ptr.To(clampInt32(v.MoreNodes))
		}
	}
	for _, op := range limits.Operations {
		ov := v.For(op)
		tb := ts.Write
		if op == limits.Read {
			tb = ts.Read
		}
		if ov == nil || tb == nil {
			continue
		}
		tb.Bottleneck = string(ov.Bottleneck)
		tb.Message = shorten.Cut(ov.Message, maxFieldMessage)
		tb.MoreNodes = nil
		if !ov.Valid {
			tb.MeasuredBytesPerSecond, tb.MeasuredMarginPercent, tb.Met = nil, nil, nil
			continue
		}
		tb.MeasuredBytesPerSecond = ov.Measured.Int64Ptr()
		tb.MeasuredMarginPercent = marginPercent(ov.MarginRatio())
		met := ov.Met
		tb.Met = &met
		if ov.MoreNodes > 0 {
			tb.MoreNodes = ptr.To(clampInt32(ov.MoreNodes))
		}
	}
	if c := v.Capacity; c != nil && ts.Capacity != nil && c.Measured > 0 {
		ts.Capacity.Measured = resource.NewQuantity(int64(c.Measured)&^(1<<20-1), resource.BinarySI)
		met := c.Met
		ts.Capacity.Met = &met
	}
	if m := v.Metadata; m != nil && ts.Metadata != nil {
		ts.Metadata.Message = shorten.Cut(m.Message, maxFieldMessage)
		if m.Measured > 0 {
			x := int64(math.Round(m.Measured))
			ts.Metadata.MeasuredOperationsPerSecond = &x
			met := m.Met
			ts.Metadata.Met = &met
		}
	}
	ts.Message = shorten.Cut(v.Message, maxTargetMessage)
}

// TargetCondition is the TargetMet condition for status.target: Unknown while predicted or
// unknown, True once met, False when not met or unreachable.
func TargetCondition(ts *v1alpha1.TargetStatus) (metav1.ConditionStatus, string, string) {
	msg := shorten.Cut(ts.Message, 32768)
	switch ts.State {
	case v1alpha1.TargetMetState:
		return metav1.ConditionTrue, v1alpha1.ReasonTargetMet, msg
	case v1alpha1.TargetNotMet:
		return metav1.ConditionFalse, v1alpha1.ReasonTargetNotMet, msg
	case v1alpha1.TargetUnreachable:
		return metav1.ConditionFalse, v1alpha1.ReasonTargetUnreachable, msg
	case v1alpha1.TargetPredicted:
		return metav1.ConditionUnknown, v1alpha1.ReasonTargetPredicted, msg
	}
	return metav1.ConditionUnknown, v1alpha1.ReasonTargetUnknown, msg
}

// ChunkChoiceToAPI is status.chunkSize for a chunk-size choice (policy Auto).
func ChunkChoiceToAPI(c sizing.ChunkChoice) *v1alpha1.ChunkSizeStatus {
	cs := &v1alpha1.ChunkSizeStatus{Size: *resource.NewQuantity(c.Size, resource.BinarySI), Policy: v1alpha1.ChunkSizeAuto,
		Pattern: v1alpha1.WorkloadPattern(c.Pattern), Message: shorten.Cut(c.Message, maxFieldMessage)}
	for i, s := range c.Scores {
		if i == 4 {
			break
		}
		cc := v1alpha1.ChunkSizeCandidate{Size: *resource.NewQuantity(s.Size, resource.BinarySI), Chosen: s.Chosen,
			Message: shorten.Cut(s.Note, maxShortMessage)}
		get := func(m sizing.Measure) *int64 {
			v, ok := s.Figures[m]
			if !ok || !(v > 0) {
				return nil
			}
			x := int64(math.Round(v))
			return &x
		}
		cc.WriteBytesPerSecond, cc.ReadBytesPerSecond = get(sizing.MeasureWrite), get(sizing.MeasureRead)
		cc.WriteOpsPerSecond, cc.ReadOpsPerSecond = get(sizing.MeasureRandWrite), get(sizing.MeasureRandRead)
		if pm := s.ScorePerMille(); pm > 0 {
			cc.ScorePerMille = &pm
		}
		cs.Candidates = append(cs.Candidates, cc)
	}
	return cs
}

// ComparisonToAPI is status.comparison.
func ComparisonToAPI(c sizing.Comparison) *v1alpha1.ComparisonStatus {
	cs := &v1alpha1.ComparisonStatus{With: c.With, Workload: c.Workload, Message: shorten.Cut(c.Message, maxFieldMessage)}
	for _, o := range c.Operations {
		cs.Operations = append(cs.Operations, v1alpha1.ComparedOperation{
			Operation: string(o.Operation), BurstBufferBytesPerSecond: o.BurstBuffer.Int64Ptr(), OtherBytesPerSecond: o.Other.Int64Ptr(),
			RatioPerMille: o.RatioPerMille(), Verdict: shorten.Cut(o.Verdict, maxShortMessage),
		})
	}
	return cs
}

// marginPercent is ratio - 1 in whole percent, nil when unknown.
func marginPercent(ratio float64) *int32 {
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		return nil
	}
	p := math.Round((ratio - 1) * 100)
	p = math.Max(math.Min(p, math.MaxInt32), math.MinInt32)
	v := int32(p)
	return &v
}
