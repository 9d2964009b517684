package limits

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Warning reasons; the same strings as the API's (v1alpha1.Warning*).
const (
	// WarningExceedsLimit: a measurement above its limit - the test was not valid (caching
	// suspected) and the figure must not be published as a limit.
	WarningExceedsLimit = "ExceedsLimit"
	// WarningBelowExpectation: efficiency under the minimum asked for.
	WarningBelowExpectation = "BelowExpectation"
	// WarningStragglers: a node's stage-4 figure far from the median.
	WarningStragglers = "Stragglers"
	// WarningUnknownLimit: a term (the devices) is not known, so the limit may be too high.
	WarningUnknownLimit = "UnknownLimit"
)

// Warning is one finding for the reader. Its shape is the API's v1alpha1.Warning.
type Warning struct {
	Reason    string    `json:"reason"`
	Operation Operation `json:"operation"`
	Node      string    `json:"node,omitempty"`
	Component string    `json:"component,omitempty"`
	Message   string    `json:"message"`
	// Above is, for an ExceedsLimit warning, the first of its points above their own limit
	// (the message lists up to five): a point's limit can be lower than the system's (fewer
	// nodes), and what is in doubt is the figure against that one.
	Above *PointAbove `json:"-"`
}

// PointAbove is a sweep point measured above its own limit.
type PointAbove struct {
	Point          SweepPoint
	BytesPerSecond float64
	// Limit is the point's limit, Why what sets it ("devices of 1 nodes") and Bottleneck the
	// component whose figures those are.
	Limit      Figure
	Why        string
	Bottleneck Component
}

// Point is one measured point of a stage-3 sweep: M nodes x N processes per node doing one
// operation, B bytes per second in aggregate.
type Point struct {
	Nodes            int
	ProcessesPerNode int
	Operation        Operation
	BytesPerSecond   float64
}

// Processes is M x N.
func (p Point) Processes() int64 { return int64(p.Nodes) * int64(p.ProcessesPerNode) }

func (p Point) validate() error {
	switch {
	case p.Nodes < 1 || p.Nodes > MaxNodes:
		return fmt.Errorf("nodes must be from 1 to %d, not %d", MaxNodes, p.Nodes)
	case p.ProcessesPerNode < 1 || p.ProcessesPerNode > MaxProcessesPerNode:
		return fmt.Errorf("processesPerNode must be from 1 to %d, not %d", MaxProcessesPerNode, p.ProcessesPerNode)
	case p.Operation != Write && p.Operation != Read:
		return fmt.Errorf("operation must be write or read, not %q", p.Operation)
	case !finiteNonNegative(p.BytesPerSecond):
		return fmt.Errorf("bytesPerSecond must be a non-negative number, not %g", p.BytesPerSecond)
	}
	if err := CheckBytesPerSecond(p.BytesPerSecond, MaxBytesPerSecond); err != nil {
		return fmt.Errorf("bytesPerSecond: %w", err)
	}
	return nil
}

// SweepPoint is where in the grid: M nodes x N processes per node.
type SweepPoint struct {
	Nodes            int `json:"nodes"`
	ProcessesPerNode int `json:"processesPerNode"`
}

func (s SweepPoint) String() string {
	return plural(s.Nodes, "node") + " x " + plural(s.ProcessesPerNode, "process")
}

// plural is "1 node", "2 nodes", "1 process", "4 processes".
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// SweepResult is the analysis of one operation's sweep (stage 3).
type SweepResult struct {
	Operation Operation `json:"-"`
	// BestBytesPerSecond is B, the best aggregate, measured at Best.
	BestBytesPerSecond Figure     `json:"bestBytesPerSecond"`
	Best               SweepPoint `json:"best"`
	// Plateau is the point with the fewest processes (ties: fewest nodes) that reaches
	// PlateauShare of B; PlateauBytesPerSecond is what it measured.
	Plateau               SweepPoint `json:"plateau"`
	PlateauBytesPerSecond Figure     `json:"plateauBytesPerSecond"`
	// Efficiency is eta = B / limit (5); nil when the limit is unknown.
	Efficiency *Ratio `json:"efficiency"`
	// Limit is the limit eta was computed against.
	Limit Figure `json:"limitBytesPerSecond"`
	// ParallelismLimit is P = min(Bs, Bnet, Bd) / C (6) with C = client link / the plateau's
	// processes per node (x Ns/(Ns-1) co-located, as in Bc), to compare with the plateau's
	// M x N; nil without a network term.
	ParallelismLimit *int64 `json:"parallelismLimit"`
	// Points is the number of measured points of this operation.
	Points int `json:"points"`
	// ExceedsLimit is true when any point measured more than its limit: the sweep is not
	// valid (caching suspected) and B must not be published as a limit.
	ExceedsLimit bool `json:"exceedsLimit"`
}

// EfficiencyPerMille is eta in thousandths for the API, 0 when unknown.
func (r *SweepResult) EfficiencyPerMille() int32 {
	if r == nil || r.Efficiency == nil {
		return 0
	}
	return EfficiencyPerMille(float64(*r.Efficiency))
}

// SweepOptions tune the verdicts.
type SweepOptions struct {
	// MinEfficiency is the lowest acceptable eta (0.5 = 50%); below it a BelowExpectation
	// warning. 0: no check.
	MinEfficiency float64
	// PlateauShare is the share of B that counts as the plateau; 0 means 0.95.
	PlateauShare float64
	// Tolerance is the share by which a point may exceed its limit before it counts as
	// ExceedsLimit. 0 for documented (stage-1) limits, which no honest measurement passes.
	// A limit that was itself measured (stage 2) carries that measurement's noise: a sweep
	// point 0.1% above it is noise, not caching, so the operator passes 0.05 there.
	Tolerance float64
}

// Sweep is the analysis of a whole sweep.
type Sweep struct {
	Write    *SweepResult
	Read     *SweepResult
	Warnings []Warning
}

// For returns the result of op, nil when op was not measured.
func (s Sweep) For(op Operation) *SweepResult {
	if op == Read {
		return s.Read
	}
	return s.Write
}

// AnalyzeSweep finds, for each measured operation, the best point, the efficiency against
// lim, the plateau and the parallelism limit, and warns about measurements above their limit
// and efficiency below opt.MinEfficiency. h is the hardware lim was computed from; it gives
// the client link for C and for the limit of points with fewer client nodes.
func AnalyzeSweep(h Hardware, lim Limits, points []Point, opt SweepOptions) (Sweep, error) {
	if len(points) == 0 {
		return Sweep{}, errors.New("sweep: no measured points")
	}
	share := opt.PlateauShare
	if share == 0 {
		share = DefaultPlateauShare
	}
	if !(share > 0 && share <= 1) {
		return Sweep{}, fmt.Errorf("sweep: plateau share must be in (0, 1], not %g", share)
	}
	if !(finiteNonNegative(opt.Tolerance)) || opt.Tolerance >= 1 {
		return Sweep{}, fmt.Errorf("sweep: tolerance must be in [0, 1), not %g", opt.Tolerance)
	}
	if !(finiteNonNegative(opt.MinEfficiency)) {
		return Sweep{}, fmt.Errorf("sweep: minimum efficiency must not be negative, not %g", opt.MinEfficiency)
	}
	byOp := map[Operation][]Point{}
	seen := map[Point]bool{}
	for i, p := range points {
		if err := p.validate(); err != nil {
			return Sweep{}, fmt.Errorf("sweep point %d: %w", i+1, err)
		}
		key := Point{Nodes: p.Nodes, ProcessesPerNode: p.ProcessesPerNode, Operation: p.Operation}
		if seen[key] {
			return Sweep{}, fmt.Errorf("sweep point %d: %s at %d nodes x %d processes is measured twice; average repeated runs first",
				i+1, p.Operation, p.Nodes, p.ProcessesPerNode)
		}
		seen[key] = true
		byOp[p.Operation] = append(byOp[p.Operation], p)
	}
	out := Sweep{Warnings: []Warning{}}
	for _, op := range Operations {
		pts := byOp[op]
		if len(pts) == 0 {
			continue
		}
		res, ws := analyzeOp(h, lim.For(op), op, pts, share, opt.MinEfficiency, opt.Tolerance)
		if op == Write {
			out.Write = res
		} else {
			out.Read = res
		}
		out.Warnings = append(out.Warnings, ws...)
	}
	return out, nil
}

func analyzeOp(h Hardware, ol OperationLimit, op Operation, pts []Point, share, minEff, tolerance float64) (*SweepResult, []Warning) {
	var ws []Warning
	best, plateau := BestAndPlateau(pts, share)
	res := &SweepResult{
		Operation:             op,
		BestBytesPerSecond:    Bytes(best.BytesPerSecond),
		Best:                  SweepPoint{best.Nodes, best.ProcessesPerNode},
		Plateau:               SweepPoint{plateau.Nodes, plateau.ProcessesPerNode},
		PlateauBytesPerSecond: Bytes(plateau.BytesPerSecond),
		Limit:                 ol.Limit,
		Points:                len(pts),
	}
	if ol.Limit.Known() && ol.Limit.v > 0 {
		eta := Ratio(best.BytesPerSecond / ol.Limit.v)
		res.Efficiency = &eta
	}
	// (6) with the plateau's N, so that P reads in the same units as the plateau's M x N.
	if ol.PerProcess.Known() {
		sat := minFigure(ol.Servers, ol.Network, ol.Devices)
		if sat.Known() {
			c := h.Clients.Link.v / float64(plateau.ProcessesPerNode) * networkShare(h)
			p := ceilCount(sat.v / c)
			res.ParallelismLimit = &p
		}
	}

	// A point above its limit means the test was not valid (page cache, client cache,
	// read-ahead). A point's limit is the system's limit, lowered to what its M client nodes
	// can move (fewer clients than the system was computed for).
	var over []string
	var first *PointAbove
	for _, p := range pts {
		pl, why, bottleneck := pointLimit(h, ol, p.Nodes)
		if pl.Known() && p.BytesPerSecond > pl.v*(1+tolerance+1e-9) {
			res.ExceedsLimit = true
			if first == nil {
				first = &PointAbove{Point: SweepPoint{p.Nodes, p.ProcessesPerNode}, BytesPerSecond: p.BytesPerSecond, Limit: pl, Why: why, Bottleneck: bottleneck}
			}
			over = append(over, fmt.Sprintf("%d x %d: %s > %s (%s)", p.Nodes, p.ProcessesPerNode,
				FormatBytesPerSecond(p.BytesPerSecond), pl, why))
		}
	}
	if len(over) > 0 {
		shown := over
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(over)-5))
		}
		ws = append(ws, Warning{Reason: WarningExceedsLimit, Operation: op, Message: fmt.Sprintf(
			"%d of %d %s measurements are above their limit, so the test was not valid (caching suspected: page cache, client cache, read-ahead) and the figures must not be published as a limit: %s",
			len(over), len(pts), op, strings.Join(shown, "; ")), Above: first})
	}
	if res.Efficiency != nil && minEff > 0 && float64(*res.Efficiency) < minEff {
		ws = append(ws, Warning{Reason: WarningBelowExpectation, Operation: op, Message: fmt.Sprintf(
			"%s efficiency %.2f (best %s at %s / limit %s) is below the minimum %.2f; compare stage 2 (components) and stage 4 (stragglers) to see where it is lost",
			op, float64(*res.Efficiency), res.BestBytesPerSecond, res.Best, ol.Limit, minEff)})
	}
	return res, ws
}

// DefaultPlateauShare is the share of the best B that counts as the plateau.
const DefaultPlateauShare = 0.95

// BestAndPlateau finds, among the points of one operation, the best (the highest B; ties go
// to fewer processes, then fewer nodes) and the plateau (the fewest processes, ties: fewest
// nodes, reaching share x B). AnalyzeSweep and the sweep's plot both use it, so that a
// picture marks the same points the status names. pts must not be empty.
func BestAndPlateau(pts []Point, share float64) (best, plateau Point) {
	best = pts[0]
	for _, p := range pts[1:] {
		if p.BytesPerSecond > best.BytesPerSecond ||
			(p.BytesPerSecond == best.BytesPerSecond && smaller(p, best)) {
			best = p
		}
	}
	plateau = best
	for _, p := range pts {
		if p.BytesPerSecond >= share*best.BytesPerSecond && smaller(p, plateau) {
			plateau = p
		}
	}
	return best, plateau
}

// smaller orders points by processes, then nodes.
func smaller(a, b Point) bool {
	if a.Processes() != b.Processes() {
		return a.Processes() < b.Processes()
	}
	return a.Nodes < b.Nodes
}

// PointLimit is the limit of a sweep point with m client nodes: ol's limit, or what m client
// nodes can move if that is less (see pointLimit). Unknown when ol's limit is.
func PointLimit(h Hardware, ol OperationLimit, m int) Figure {
	f, _, _ := pointLimit(h, ol, m)
	return f
}

// pointLimit is the limit of a point with m client nodes: the system's limit, or what m
// clients can move if that is less (m client links; for private scratch, the m nodes with
// the fastest devices), with what sets it and the component whose figures those are.
func pointLimit(h Hardware, ol OperationLimit, m int) (Figure, string, Component) {
	limit, why := ol.Limit, string(ol.Bottleneck)
	if !limit.Known() {
		return Unknown, "", ""
	}
	switch {
	case h.Local:
		if m >= len(h.Servers) {
			return limit, why, ol.Bottleneck
		}
		figs := make([]float64, 0, len(h.Servers))
		for _, s := range h.Servers {
			f := s.DeviceWrite
			if ol.Operation == Read {
				f = s.DeviceRead
			}
			figs = append(figs, float64(s.Devices)*f.v)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(figs)))
		sum := 0.0
		for _, f := range figs[:m] {
			sum += f
		}
		if less(sum, limit.v) {
			return Bytes(sum), fmt.Sprintf("devices of %d nodes", m), ComponentDevices
		}
	case h.Clients.Link.Known() && !(h.Colocated && len(h.Servers) == 1):
		clientCap := float64(m) * h.Clients.Link.v
		if h.Colocated {
			clientCap *= float64(len(h.Servers)) / float64(len(h.Servers)-1)
		}
		if less(clientCap, limit.v) {
			return Bytes(clientCap), fmt.Sprintf("links of %d client nodes", m), ComponentClients
		}
	}
	return limit, why, ol.Bottleneck
}

// NodeFigure is one node's stage-4 figure: what the node achieved (or its busiest
// interface or device carried) while the sweep ran.
type NodeFigure struct {
	Node           string    `json:"node"`
	Operation      Operation `json:"operation"`
	BytesPerSecond Figure    `json:"bytesPerSecond"`
}

// Stragglers is the result of FindStragglers.
type Stragglers struct {
	// Nodes are the nodes more than the share below the median of their operation, sorted.
	Nodes []string
	// Medians per operation.
	Medians map[Operation]float64
	// Warnings: one Stragglers warning per node that differs by more than the share from the
	// median, below (a straggler) or above (uneven load or caching).
	Warnings []Warning
}

// FindStragglers compares each node's figure with the median of its operation; a node that
// differs by more than share (0.2 = 20%) is reported. At least two nodes per operation are
// needed for a median to mean anything; with fewer the operation is skipped.
func FindStragglers(figs []NodeFigure, share float64) (Stragglers, error) {
	out := Stragglers{Medians: map[Operation]float64{}, Warnings: []Warning{}}
	if !(share > 0 && share < 1) {
		return out, fmt.Errorf("stragglers: share must be between 0 and 1, not %g", share)
	}
	byOp := map[Operation][]NodeFigure{}
	seen := map[string]bool{}
	for i, f := range figs {
		if f.Node == "" {
			return out, fmt.Errorf("node figure %d: node name is empty", i+1)
		}
		if f.Operation != Write && f.Operation != Read {
			return out, fmt.Errorf("node figure %d: operation must be write or read, not %q", i+1, f.Operation)
		}
		if !f.BytesPerSecond.Known() || !finiteNonNegative(f.BytesPerSecond.v) {
			return out, fmt.Errorf("node figure %d: bytesPerSecond must be a non-negative number", i+1)
		}
		if err := CheckBytesPerSecond(f.BytesPerSecond.v, MaxBytesPerSecond); err != nil {
			return out, fmt.Errorf("node figure %d: bytesPerSecond: %w", i+1, err)
		}
		key := string(f.Operation) + "\x00" + f.Node
		if seen[key] {
			return out, fmt.Errorf("node figure %d: node %s has two %s figures", i+1, f.Node, f.Operation)
		}
		seen[key] = true
		byOp[f.Operation] = append(byOp[f.Operation], f)
	}
	slow := map[string]bool{}
	for _, op := range Operations {
		fs := byOp[op]
		if len(fs) < 2 {
			continue
		}
		vals := make([]float64, len(fs))
		for i, f := range fs {
			vals[i] = f.BytesPerSecond.v
		}
		sort.Float64s(vals)
		med := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
		}
		out.Medians[op] = med
		if med <= 0 {
			continue
		}
		for _, f := range fs {
			dev := (f.BytesPerSecond.v - med) / med
			if math.Abs(dev) <= share {
				continue
			}
			side, what := "below", "a straggler (does it host other services, or have a slow link or device?)"
			if dev > 0 {
				side, what = "above", "uneven load, or caching on that node?"
			} else {
				slow[f.Node] = true
			}
			out.Warnings = append(out.Warnings, Warning{Reason: WarningStragglers, Operation: op, Node: f.Node,
				Message: fmt.Sprintf("node %s: %s %s is %.0f%% %s the median %s of %d nodes (tolerance %.0f%%): %s",
					f.Node, op, f.BytesPerSecond, math.Abs(dev)*100, side, FormatBytesPerSecond(med), len(fs), share*100, what)})
		}
	}
	for n := range slow {
		out.Nodes = append(out.Nodes, n)
	}
	sort.Strings(out.Nodes)
	return out, nil
}
