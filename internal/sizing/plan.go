package sizing

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/beeburst/beeburst/internal/limits"
)

// Mode says who chose the node count. The strings are the API's (v1alpha1.TargetMode).
type Mode string

// Modes.
const (
	// ModeChoose: no count was given; Plan chooses it.
	ModeChoose Mode = "Choose"
	// ModeCheck: the count was given; Plan checks the target against those nodes.
	ModeCheck Mode = "Check"
)

// State is where a target stands. The strings are the API's (v1alpha1.TargetState).
type State string

// States.
const (
	StatePredicted   State = "Predicted"
	StateMet         State = "Met"
	StateNotMet      State = "NotMet"
	StateUnreachable State = "Unreachable"
	StateUnknown     State = "Unknown"
)

// Causes of a shortfall. The strings are the API's (v1alpha1.Cause*).
const (
	CauseNetworkCaps     = "NetworkCaps"
	CauseTooFewNodes     = "TooFewNodes"
	CauseNodeCapacity    = "NodeCapacity"
	CauseUnknownFigures  = "UnknownFigures"
	CauseEfficiency      = "Efficiency"
	CauseMetadataServers = "MetadataServers"
)

// MaxBurstBufferNodes is the API's largest nodes.count: no choice or extrapolation goes
// beyond it.
const MaxBurstBufferNodes = 1024

// MaxMetadataServers is the API's largest layout.metadataServers.
const MaxMetadataServers = 64

// maxSteps bounds Decision.Steps: the counts shown around the choice.
const maxSteps = 10

// Target is what the job needs; zero means not asked.
type Target struct {
	// Write and Read are aggregate bandwidths in bytes per second.
	Write float64 `json:"writeBytesPerSecond,omitempty"`
	Read  float64 `json:"readBytesPerSecond,omitempty"`
	// Capacity is the space over all nodes, in bytes.
	Capacity float64 `json:"capacityBytes,omitempty"`
	// MetadataOps is file creates per second over all processes.
	MetadataOps float64 `json:"metadataOperationsPerSecond,omitempty"`
	// Margin is how far the predicted bandwidth must exceed the target: 0.1 = 10%.
	Margin float64 `json:"margin"`
}

// Bandwidth is the target of op, 0 when not asked.
func (t Target) Bandwidth(op limits.Operation) float64 {
	if op == limits.Read {
		return t.Read
	}
	return t.Write
}

// operations are the bandwidth operations asked for, in report order.
func (t Target) operations() []limits.Operation {
	var ops []limits.Operation
	for _, op := range limits.Operations {
		if t.Bandwidth(op) > 0 {
			ops = append(ops, op)
		}
	}
	return ops
}

// Validate checks the target: at least one figure, each finite and within the bounds of
// internal/limits, a margin from 0 to 1.
func (t Target) Validate() error {
	var errs []error
	if t.Write == 0 && t.Read == 0 && t.Capacity == 0 && t.MetadataOps == 0 {
		errs = append(errs, errors.New("target: name at least one figure (write, read, capacity or metadata operations)"))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"write", t.Write}, {"read", t.Read}} {
		if err := limits.CheckBytesPerSecond(f.v, limits.MaxBytesPerSecond); err != nil {
			errs = append(errs, fmt.Errorf("target %s: %w", f.name, err))
		}
	}
	if math.IsNaN(t.Capacity) || math.IsInf(t.Capacity, 0) || t.Capacity < 0 || t.Capacity > 1<<60*1.0000001 {
		errs = append(errs, fmt.Errorf("target capacity must be from 0 to 1 EiB, not %g bytes", t.Capacity))
	}
	if err := limits.CheckOpsPerSecond(t.MetadataOps); err != nil {
		errs = append(errs, fmt.Errorf("target metadata operations: %w", err))
	}
	if math.IsNaN(t.Margin) || t.Margin < 0 || t.Margin > 1 {
		errs = append(errs, fmt.Errorf("target margin must be from 0 to 1 (100%%), not %g", t.Margin))
	}
	return errors.Join(errs...)
}

// Candidate is a node the burst buffer may use, with everything known of it.
type Candidate struct {
	Name string `json:"name"`
	// Tier orders the preference, lower first: the controller passes 0 for nodes where the
	// workload's pods run, 1 for nodes where its unscheduled pods could run, 2 for any other.
	// Within a tier the node that contributes more comes first, then the order given.
	Tier int `json:"tier"`
	// Workload marks a node of the workload (for the reader).
	Workload bool `json:"workload,omitempty"`
	// Link is the node's link data rate (after encoding), bytes per second.
	Link []Evidence `json:"link,omitempty"`
	// DeviceWrite and DeviceRead are the node's storage bandwidth as a whole (all its
	// devices), bytes per second.
	DeviceWrite []Evidence `json:"deviceWrite,omitempty"`
	DeviceRead  []Evidence `json:"deviceRead,omitempty"`
	// Capacity is the space the node can give at the storage path, bytes (free space).
	Capacity []Evidence `json:"capacity,omitempty"`
}

// Request is what Plan decides on.
type Request struct {
	Target     Target
	Candidates []Candidate
	// Count is 0 to choose the count; more than 0 to check the first Count candidates, in
	// the order given (the nodes already chosen).
	Count int
	// MinNodes is the smallest count the layout allows (metadata servers, stripe width over
	// targets per node, the sweep's node counts); 0 is 1.
	MinNodes int
	// MaxNodes bounds the choice; 0: every candidate, at most MaxBurstBufferNodes.
	MaxNodes int
	// Local is private node-local scratch (the local engine): no network term.
	Local bool
	// FixedClients, when set, is a client side that does not grow with the chosen nodes (a
	// hardware block whose clients are other nodes): the chosen nodes are storage servers
	// only. Nil for a burst buffer, whose nodes are its clients (co-located).
	FixedClients *limits.Clients
	// ProcessesPerNode is the client processes per node (C = link / N); 0 is 1.
	ProcessesPerNode int
	// Fabric is the network between the nodes (bisection, service traffic).
	Fabric limits.Fabric
	// CapacityPerNode caps each node's capacity (spec.storage.capacityPerNode); 0: no cap.
	CapacityPerNode float64
	// MetadataServers is layout.metadataServers: at least this many; 0 is 1.
	MetadataServers int
	// MetadataOpsPerServer is a per-metadata-server file-create rate, if one is known
	// (measured by an earlier metadata benchmark).
	MetadataOpsPerServer Evidence
	// Now and FreshFor classify measurements (validation.reuseComponentResultsFor).
	Now      time.Time
	FreshFor time.Duration
}

// NodeUse is one chosen node and the figures it contributes. Figures the target does not
// need are left out.
type NodeUse struct {
	Name     string    `json:"name"`
	Workload bool      `json:"workload,omitempty"`
	Write    *Evidence `json:"deviceWrite,omitempty"`
	Read     *Evidence `json:"deviceRead,omitempty"`
	Link     *Evidence `json:"link,omitempty"`
	Capacity *Evidence `json:"capacity,omitempty"`
}

// Bandwidth is the decision for one bandwidth target.
type Bandwidth struct {
	Operation limits.Operation `json:"operation"`
	Target    float64          `json:"targetBytesPerSecond"`
	// Required is Target x (1 + margin).
	Required float64 `json:"requiredBytesPerSecond"`
	// Predicted is the stage-1 limit of the chosen nodes; unknown when a figure is.
	Predicted  limits.Figure    `json:"predictedBytesPerSecond"`
	Bottleneck limits.Component `json:"bottleneck,omitempty"`
	Formula    string           `json:"formula,omitempty"`
	// Meets: Predicted >= Required. MeetsBare: Predicted >= Target.
	Meets     bool   `json:"meets"`
	MeetsBare bool   `json:"meetsWithoutMargin"`
	Message   string `json:"message"`
}

// MarginRatio is Predicted / Target, NaN when unknown.
func (b *Bandwidth) MarginRatio() float64 {
	if b == nil || !b.Predicted.Known() || b.Target <= 0 {
		return math.NaN()
	}
	return b.Predicted.Value() / b.Target
}

// Capacity is the decision for the capacity target.
type Capacity struct {
	Target float64 `json:"targetBytes"`
	// Predicted is the space of the chosen nodes; 0 when a node's is unknown.
	Predicted float64 `json:"predictedBytes"`
	Meets     bool    `json:"meets"`
	Message   string  `json:"message"`
}

// Metadata is the decision on metadata servers for a metadata target.
type Metadata struct {
	Target float64 `json:"targetOperationsPerSecond"`
	// PerServer is the per-server figure the choice used; unknown when none was known.
	PerServer Evidence `json:"perServer"`
	Servers   int      `json:"servers"`
	Message   string   `json:"message"`
}

// Step is the prediction for one node count, to show why not fewer.
type Step struct {
	Nodes           int              `json:"nodes"`
	Write           limits.Figure    `json:"writeBytesPerSecond"`
	WriteBottleneck limits.Component `json:"writeBottleneck,omitempty"`
	Read            limits.Figure    `json:"readBytesPerSecond"`
	ReadBottleneck  limits.Component `json:"readBottleneck,omitempty"`
	Capacity        float64          `json:"capacityBytes,omitempty"`
	Meets           bool             `json:"meets"`
	MeetsBare       bool             `json:"meetsWithoutMargin"`
}

// Decision is Plan's answer: the count, why, and, when the target cannot be met, why not.
type Decision struct {
	Mode  Mode  `json:"mode"`
	State State `json:"state"`
	// Count is the chosen (or given) node count; MetadataServers the chosen metadata servers
	// (0 for the local engine).
	Count           int `json:"nodes"`
	MetadataServers int `json:"metadataServers"`
	// Candidates is the number of candidate nodes; Excluded says which could not be counted
	// and why.
	Candidates int        `json:"candidates"`
	Excluded   []string   `json:"excluded,omitempty"`
	Nodes      []NodeUse  `json:"chosen"`
	Target     Target     `json:"target"`
	Write      *Bandwidth `json:"write,omitempty"`
	Read       *Bandwidth `json:"read,omitempty"`
	Capacity   *Capacity  `json:"capacity,omitempty"`
	Metadata   *Metadata  `json:"metadata,omitempty"`
	// ThinMargin: the target is met only without the full margin.
	ThinMargin bool `json:"thinMargin,omitempty"`
	// Cause and MoreNodes say why the target is not met and what would meet it.
	Cause     string `json:"cause,omitempty"`
	MoreNodes int    `json:"moreNodes,omitempty"`
	// MoreLike names the node more nodes are modelled on.
	MoreLike string `json:"moreLike,omitempty"`
	// Steps are the predictions for the counts around the choice.
	Steps []Step `json:"steps,omitempty"`
	// Notes say which figures are not fresh measurements and what was assumed.
	Notes []string `json:"notes,omitempty"`
	// Message is the decision in sentences.
	Message string `json:"message"`
	// Model is the stage-1 input of the chosen nodes (for formulas and Assess).
	Model limits.Hardware `json:"-"`
}

// For is the bandwidth decision of op, nil when not asked.
func (d Decision) For(op limits.Operation) *Bandwidth {
	if op == limits.Read {
		return d.Read
	}
	return d.Write
}

// resolved is a candidate with its best figures.
type resolved struct {
	name                        string
	tier, index                 int
	workload                    bool
	link, write, read, capacity Evidence
	key                         float64
	missing                     []string
}

type planner struct {
	req    Request
	t      Target
	ops    []limits.Operation
	margin float64
}

// Plan chooses the node count (ModeChoose, req.Count 0) or checks the given one (ModeCheck)
// for req.Target. See the package documentation and docs/sizing.md for the rules. An error
// means the request itself is invalid (no figure asked, a figure out of bounds, more nodes to
// check than candidates); a target that cannot be met is a Decision with state Unreachable.
func Plan(req Request) (Decision, error) {
	if err := req.Target.Validate(); err != nil {
		return Decision{}, err
	}
	if req.Count < 0 || req.Count > MaxBurstBufferNodes {
		return Decision{}, fmt.Errorf("count must be from 0 (choose) to %d, not %d", MaxBurstBufferNodes, req.Count)
	}
	if req.Count > len(req.Candidates) {
		return Decision{}, fmt.Errorf("count %d: only %d nodes given to check", req.Count, len(req.Candidates))
	}
	if req.MinNodes < 0 || req.MaxNodes < 0 || req.ProcessesPerNode < 0 || req.MetadataServers < 0 {
		return Decision{}, errors.New("minNodes, maxNodes, processesPerNode and metadataServers must not be negative")
	}
	if !(req.CapacityPerNode >= 0) {
		return Decision{}, fmt.Errorf("capacity per node must not be negative, not %g", req.CapacityPerNode)
	}
	if req.FixedClients != nil && req.Local {
		return Decision{}, errors.New("a fixed client side has no meaning for private scratch (local)")
	}
	p := &planner{req: req, t: req.Target, ops: req.Target.operations(), margin: req.Target.Margin}
	d := Decision{Mode: ModeChoose, Candidates: len(req.Candidates), Target: req.Target}
	if req.Count > 0 {
		d.Mode = ModeCheck
	}

	all := make([]resolved, len(req.Candidates))
	for i, c := range req.Candidates {
		all[i] = p.resolve(c, i)
	}

	lo := max(1, req.MinNodes)
	mds, mdsMsg, mdsShort := p.metadataServers()
	if !req.Local && !mdsShort {
		lo = max(lo, mds)
	}

	var nodes []resolved // the nodes in the order they are taken
	var base []resolved  // every node that could be taken
	if d.Mode == ModeCheck {
		nodes = all[:req.Count]
		base = nodes
	} else {
		var usable []resolved
		for _, r := range all {
			if len(r.missing) > 0 {
				d.Excluded = append(d.Excluded, fmt.Sprintf("%s (no %s figure: neither measured, documented nor discovered)",
					r.name, strings.Join(r.missing, ", ")))
				continue
			}
			usable = append(usable, r)
		}
		sort.SliceStable(usable, func(i, j int) bool { return p.before(usable[i], usable[j]) })
		hi := len(usable)
		if req.MaxNodes > 0 {
			hi = min(hi, req.MaxNodes)
		}
		hi = min(hi, MaxBurstBufferNodes)
		nodes = usable[:hi]
		base = nodes
	}

	// Evaluate the counts.
	var steps []Step
	chosen := -1
	switch {
	case d.Mode == ModeCheck:
		steps = append(steps, p.eval(nodes))
		chosen = 0
	case len(nodes) >= lo:
		for n := lo; n <= len(nodes); n++ {
			steps = append(steps, p.eval(nodes[:n]))
			if steps[len(steps)-1].Meets {
				break
			}
		}
		chosen = p.pick(steps)
	}

	if chosen < 0 {
		// Nothing to evaluate: no candidate, none with the figures the target needs, or fewer
		// than the layout's minimum.
		p.noEvaluation(&d, all, nodes, lo)
	} else {
		st := steps[chosen]
		d.Count = st.Nodes
		set := nodes[:d.Count]
		d.Nodes, d.Model = p.uses(set), p.model(set)
		p.fill(&d, set)
		d.Steps = trimSteps(steps, chosen)
		switch {
		case st.Meets:
			d.State = StatePredicted
		case st.MeetsBare:
			d.State, d.ThinMargin = StatePredicted, true
		default:
			d.State = StateUnreachable
			// More nodes are added to the closest set: a candidate that did not help (a slow
			// node bounding an evenly striped file system) is not in it.
			p.shortfall(&d, set, base, steps)
			if d.Cause == CauseUnknownFigures {
				d.State = StateUnknown
			}
		}
		d.Message = p.message(d, steps, chosen, len(base))
	}
	if d.Mode == ModeCheck && !req.Local && p.t.MetadataOps > 0 && mds > d.Count {
		mdsShort = true
		mdsMsg += fmt.Sprintf(" That is more metadata servers than the %s given (one per node).", plural(d.Count, "node"))
	}
	if !req.Local {
		if mdsShort {
			mds = max(req.MetadataServers, 1)
		}
		d.MetadataServers = min(mds, max(d.Count, 1))
	}
	if p.t.MetadataOps > 0 {
		d.Metadata = &Metadata{Target: p.t.MetadataOps, PerServer: req.MetadataOpsPerServer, Servers: d.MetadataServers, Message: mdsMsg}
		if !req.MetadataOpsPerServer.Known() {
			d.Metadata.PerServer = unknownEvidence
		}
		if mdsShort && d.State != StateUnknown {
			d.State = StateUnreachable
			if d.Cause == "" {
				d.Cause = CauseMetadataServers
			}
		}
		d.Message += " " + mdsMsg
	}
	d.Notes = append(d.Notes, p.notes(d.Nodes)...)
	return d, nil
}

// resolve picks a candidate's best figures and its sort key.
func (p *planner) resolve(c Candidate, i int) resolved {
	now, fresh := p.req.Now, p.req.FreshFor
	r := resolved{name: c.Name, tier: c.Tier, index: i, workload: c.Workload,
		link: Best(c.Link, now, fresh), write: Best(c.DeviceWrite, now, fresh), read: Best(c.DeviceRead, now, fresh),
		capacity: Best(c.Capacity, now, fresh)}
	if p.req.CapacityPerNode > 0 {
		switch {
		case !r.capacity.Known():
			// Without the free space, the cap is what the node is asked to give; the device
			// probe checks it (InsufficientCapacity).
			r.capacity = Evidence{Value: p.req.CapacityPerNode, Source: SourceSpec, Note: "free space not known: storage.capacityPerNode assumed (the device probe checks it)"}
		case r.capacity.Value > p.req.CapacityPerNode:
			r.capacity = Evidence{Value: p.req.CapacityPerNode, Source: SourceSpec, Detail: "storage.capacityPerNode",
				MeasuredTime: r.capacity.MeasuredTime}
		}
	}
	// Private scratch has no other term than the devices: without them a node adds nothing
	// known. Where data crosses the network, an unknown device is not a known limit - as in
	// stage 1, the other terms bound the prediction, and a note says it may be too high.
	if p.req.Local && p.t.Write > 0 && !r.write.Known() {
		r.missing = append(r.missing, "device write")
	}
	if p.req.Local && p.t.Read > 0 && !r.read.Known() {
		r.missing = append(r.missing, "device read")
	}
	if p.t.Capacity > 0 && !r.capacity.Known() {
		r.missing = append(r.missing, "capacity")
	}
	r.key = p.contribution(r)
	return r
}

// contribution is how much of the target one node covers by itself: for each figure asked,
// its own figure over the target (a node's bandwidth counts at most its link's where data
// crosses the network), the smallest of them. Nodes that cover more are taken first.
func (p *planner) contribution(r resolved) float64 {
	key := math.Inf(1)
	for _, op := range p.ops {
		dev := r.write
		if op == limits.Read {
			dev = r.read
		}
		own := math.Inf(1) // an unknown device is no known limit (see resolve)
		if dev.Known() {
			own = dev.Value
		}
		if !p.req.Local {
			link := 0.0
			if r.link.Known() {
				link = r.link.Value
			}
			own = math.Min(own, link)
		}
		if math.IsInf(own, 1) {
			own = 0
		}
		key = math.Min(key, own/p.t.Bandwidth(op))
	}
	if p.t.Capacity > 0 {
		c := 0.0
		if r.capacity.Known() {
			c = r.capacity.Value
		}
		key = math.Min(key, c/p.t.Capacity)
	}
	if math.IsInf(key, 1) {
		return 0
	}
	return key
}

// before orders usable candidates: nodes whose link is known first where the network counts
// (a set with an unknown link has no limit), then by tier, then by contribution, then as
// given.
func (p *planner) before(a, b resolved) bool {
	if p.needsLinks() {
		if ak, bk := a.link.Known(), b.link.Known(); ak != bk {
			return ak
		}
	}
	if a.tier != b.tier {
		return a.tier < b.tier
	}
	if a.key != b.key {
		return a.key > b.key
	}
	return a.index < b.index
}

func (p *planner) needsLinks() bool { return !p.req.Local }

// model is the stage-1 input for a set of nodes. Private scratch (local): each node its own
// figures, summed - every process uses only its own node. A shared file system (beegfs, or
// servers with clients elsewhere) stripes data evenly over its nodes, so the slowest node
// bounds every node's share, as stage 1 models it: each node counts with the set's slowest
// device and link figures. The clients are the same nodes (co-located) unless a fixed client
// side is given.
func (p *planner) model(set []resolved) limits.Hardware {
	ppn := max(p.req.ProcessesPerNode, 1)
	h := limits.Hardware{Fabric: p.req.Fabric, Local: p.req.Local}
	write, read, link := slowest(set, func(r resolved) Evidence { return r.write }), slowest(set, func(r resolved) Evidence { return r.read }),
		slowest(set, func(r resolved) Evidence { return r.link })
	for _, r := range set {
		s := limits.ServerNode{Name: r.name, Devices: 1, DeviceWrite: figure(r.write), DeviceRead: figure(r.read)}
		if !p.req.Local {
			s.DeviceWrite, s.DeviceRead, s.Link = write, read, link
		}
		h.Servers = append(h.Servers, s)
	}
	switch {
	case p.req.FixedClients != nil:
		h.Clients = *p.req.FixedClients
		if h.Clients.ProcessesPerNode == 0 {
			h.Clients.ProcessesPerNode = ppn
		}
	case p.req.Local:
		h.Clients = limits.Clients{Nodes: len(set), ProcessesPerNode: ppn}
	default:
		h.Colocated = true
		h.Clients = limits.Clients{Nodes: len(set), ProcessesPerNode: ppn, Link: link}
	}
	if !p.req.Local && len(set) > 1 {
		h.Notes = append(h.Notes, "data striped evenly: every node counts with the slowest chosen node's figures")
	}
	return h
}

// slowest is the smallest of a figure over a set, unknown when a node's is.
func slowest(set []resolved, get func(resolved) Evidence) limits.Figure {
	out := limits.Unknown
	for _, r := range set {
		e := get(r)
		if !e.Known() {
			return limits.Unknown
		}
		if !out.Known() || e.Value < out.Value() {
			out = limits.Bytes(e.Value)
		}
	}
	return out
}

func figure(e Evidence) limits.Figure {
	if !e.Known() {
		return limits.Unknown
	}
	return limits.Bytes(e.Value)
}

// eval predicts one set of nodes.
func (p *planner) eval(set []resolved) Step {
	st := Step{Nodes: len(set), Write: limits.Unknown, Read: limits.Unknown}
	lim, err := limits.Compute(p.model(set))
	if err == nil {
		st.Write, st.WriteBottleneck = lim.Write.Limit, lim.Write.Bottleneck
		st.Read, st.ReadBottleneck = lim.Read.Limit, lim.Read.Bottleneck
	}
	st.Capacity = capacityOf(set)
	st.Meets, st.MeetsBare = true, true
	for _, op := range p.ops {
		f := st.Write
		if op == limits.Read {
			f = st.Read
		}
		t := p.t.Bandwidth(op)
		if !f.Known() || f.Value() < t*(1+p.margin)*(1-1e-12) {
			st.Meets = false
		}
		if !f.Known() || f.Value() < t*(1-1e-12) {
			st.MeetsBare = false
		}
	}
	if p.t.Capacity > 0 && !(st.Capacity >= p.t.Capacity) {
		st.Meets, st.MeetsBare = false, false
	}
	return st
}

// capacityOf is the space of a set of nodes; 0 when a node's is unknown.
func capacityOf(set []resolved) float64 {
	sum := 0.0
	for _, r := range set {
		if !r.capacity.Known() {
			return 0
		}
		sum += r.capacity.Value
	}
	return sum
}

// score is how close a step comes to the target: the smallest predicted / target over the
// figures asked (unknown counts 0).
func (p *planner) score(st Step) float64 {
	s := math.Inf(1)
	for _, op := range p.ops {
		f := st.Write
		if op == limits.Read {
			f = st.Read
		}
		s = math.Min(s, f.Value()/p.t.Bandwidth(op))
	}
	if p.t.Capacity > 0 {
		s = math.Min(s, st.Capacity/p.t.Capacity)
	}
	if math.IsInf(s, 1) {
		return 1 // only a metadata target: every count "meets" the bandwidth side
	}
	return s
}

// pick chooses among evaluated steps (in increasing count): the first that meets the target
// with the margin; else the first that meets it without; else the count closest to it (ties:
// the fewest nodes - more nodes that do not help are not taken). -1 when there is none.
func (p *planner) pick(steps []Step) int {
	if len(steps) == 0 {
		return -1
	}
	for i, st := range steps {
		if st.Meets {
			return i
		}
	}
	for i, st := range steps {
		if st.MeetsBare {
			return i
		}
	}
	best := 0
	for i, st := range steps {
		if p.score(st) > p.score(steps[best])*(1+1e-9) {
			best = i
		}
	}
	return best
}

// uses are the chosen nodes with the figures the target needs.
func (p *planner) uses(set []resolved) []NodeUse {
	out := make([]NodeUse, 0, len(set))
	for _, r := range set {
		u := NodeUse{Name: r.name, Workload: r.workload}
		if p.t.Write > 0 {
			u.Write = ptr.To(r.write)
		}
		if p.t.Read > 0 {
			u.Read = ptr.To(r.read)
		}
		if len(p.ops) > 0 && !p.req.Local && (len(set) > 1 || p.req.FixedClients != nil) {
			u.Link = ptr.To(r.link)
		}
		if p.t.Capacity > 0 {
			u.Capacity = ptr.To(r.capacity)
		}
		out = append(out, u)
	}
	return out
}
