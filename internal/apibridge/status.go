package apibridge

import (
	"math"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

// OperationLimitToAPI is one operation's limit in the status's shape. A term that does not
// apply (private scratch, a single co-located node) or is unknown is absent, and the formula
// says why.
func OperationLimitToAPI(ol limits.OperationLimit) v1alpha1.OperationLimit {
	lim, _ := ol.Limit.Int64()
	return v1alpha1.OperationLimit{
		ClientsBytesPerSecond:     ol.Clients.Int64Ptr(),
		ServersBytesPerSecond:     ol.Servers.Int64Ptr(),
		NetworkBytesPerSecond:     ol.Network.Int64Ptr(),
		DevicesBytesPerSecond:     ol.Devices.Int64Ptr(),
		LimitBytesPerSecond:       lim,
		Bottleneck:                string(ol.Bottleneck),
		Formula:                   ol.Formula,
		ParallelismLimitProcesses: copyInt64(ol.ParallelismLimit),
	}
}

// EstimatedToAPI is stage 1 for status.limits.estimated, with the figures' sources.
func EstimatedToAPI(l limits.Limits, hw *v1alpha1.HardwareSpec) *v1alpha1.EstimatedLimits {
	return &v1alpha1.EstimatedLimits{
		Write:   OperationLimitToAPI(l.Write),
		Read:    OperationLimitToAPI(l.Read),
		Sources: Sources(hw),
	}
}

// SweepResultToAPI is one operation's stage-3 analysis for status.limits.sweep. It returns
// nil when r is nil or when a measurement exceeded its limit: such a sweep was not valid
// (caching suspected) and its figures must not be published as limits; the ExceedsLimit
// warning tells the user why.
func SweepResultToAPI(r *limits.SweepResult) *v1alpha1.SweepResult {
	if r == nil || r.ExceedsLimit {
		return nil
	}
	best, _ := r.BestBytesPerSecond.Int64()
	return &v1alpha1.SweepResult{
		BestBytesPerSecond:        best,
		Best:                      sweepPoint(r.Best),
		Plateau:                   sweepPoint(r.Plateau),
		EfficiencyPerMille:        r.EfficiencyPerMille(),
		ParallelismLimitProcesses: copyInt64(r.ParallelismLimit),
	}
}

// SweepToAPI is the whole stage-3 analysis for status.limits.sweep (without the ConfigMap
// name and cut-short flag, which the controller knows).
func SweepToAPI(s limits.Sweep) *v1alpha1.SweepLimits {
	out := &v1alpha1.SweepLimits{Write: SweepResultToAPI(s.Write), Read: SweepResultToAPI(s.Read)}
	for _, r := range []*limits.SweepResult{s.Write, s.Read} {
		if r != nil {
			out.Points += clampInt32(r.Points)
		}
	}
	return out
}

// WarningsToAPI converts warnings for status.warnings.
func WarningsToAPI(ws []limits.Warning) []v1alpha1.Warning {
	out := make([]v1alpha1.Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, v1alpha1.Warning{Reason: w.Reason, Operation: string(w.Operation), Node: w.Node,
			Component: w.Component, Message: w.Message})
	}
	return out
}

// Sources says which stage-1 figures came from the spec and which are unknown; the
// controller adds label and discovered sources where it fills figures in.
func Sources(hw *v1alpha1.HardwareSpec) []v1alpha1.FigureSource {
	if hw == nil {
		hw = &v1alpha1.HardwareSpec{}
	}
	var out []v1alpha1.FigureSource
	add := func(figure string, value string, given bool) {
		fs := v1alpha1.FigureSource{Figure: figure, Source: v1alpha1.SourceUnknown}
		if given {
			fs.Source, fs.Value = v1alpha1.SourceSpec, value
		}
		out = append(out, fs)
	}
	linkValue := func(l *v1alpha1.LinkHardware) (string, bool) {
		if l == nil {
			return "", false
		}
		enc := string(l.Encoding)
		if enc == "" {
			enc = string(v1alpha1.EncodingNone)
		}
		return l.RateBitsPerSecond.String() + " " + enc, true
	}
	var cl, sl *v1alpha1.LinkHardware
	if hw.Clients != nil {
		cl = hw.Clients.Link
	}
	if hw.Servers != nil {
		sl = hw.Servers.Link
	}
	v, ok := linkValue(cl)
	add("clients.link", v, ok)
	v, ok = linkValue(sl)
	add("servers.link", v, ok)
	var dw, dr string
	var dwOK, drOK bool
	if hw.Devices != nil {
		if hw.Devices.WriteBytesPerSecond != nil {
			dw, dwOK = hw.Devices.WriteBytesPerSecond.String(), true
		}
		if hw.Devices.ReadBytesPerSecond != nil {
			dr, drOK = hw.Devices.ReadBytesPerSecond.String(), true
		}
	}
	add("devices.write", dw, dwOK)
	add("devices.read", dr, drOK)
	return out
}

func sweepPoint(p limits.SweepPoint) v1alpha1.SweepPoint {
	return v1alpha1.SweepPoint{Nodes: clampInt32(p.Nodes), ProcessesPerNode: clampInt32(p.ProcessesPerNode)}
}

func clampInt32(v int) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(v)
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
