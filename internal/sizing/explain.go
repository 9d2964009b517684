package sizing

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/shorten"
)

// maxNamed bounds the nodes a message names one by one.
const maxNamed = 4

// noEvaluation fills a decision when no count could be evaluated: no candidate at all, none
// with the figures the target needs, or fewer than the layout's minimum.
func (p *planner) noEvaluation(d *Decision, all, usable []resolved, lo int) {
	switch {
	case len(all) == 0:
		d.State, d.Cause = StateUnknown, CauseUnknownFigures
		d.Message = "No candidate node: nothing to size (nodes.selector selects no Ready, schedulable node)."
	case len(usable) == 0:
		// Nothing knows the figures: take the minimum, in order of preference. Stage 2 measures
		// them; the verdict after stage 3 says how many nodes would meet the target, and the
		// figures stay in the per-node cache for the next burst buffer.
		ordered := append([]resolved(nil), all...)
		sort.SliceStable(ordered, func(i, j int) bool { return p.before(ordered[i], ordered[j]) })
		d.Count = min(lo, len(ordered))
		d.Nodes, d.Model = p.uses(ordered[:d.Count]), p.model(ordered[:d.Count])
		d.State, d.Cause = StateUnknown, CauseUnknownFigures
		d.Message = fmt.Sprintf("Cannot size: no candidate node has the figures the target needs (%s). Chose %s, the least the layout allows: stage 2 measures %s, the verdict after stage 3 says how many nodes would meet the target, and the next burst buffer on these nodes is sized from the measured figures.",
			names(d.Excluded, maxNamed), plural(d.Count, "node"), them(d.Count))
	default:
		d.Count = lo
		d.Nodes, d.Model = p.uses(usable), p.model(usable)
		d.State, d.Cause = StateUnreachable, CauseTooFewNodes
		d.Message = fmt.Sprintf("Only %s with known figures, and the layout needs at least %d (metadata servers, stripe width, sweep): add nodes or lower the layout's minimum.",
			plural(len(usable), "candidate node"), lo)
	}
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// fill sets the per-figure decisions of the chosen set.
func (p *planner) fill(d *Decision, set []resolved) {
	lim, err := limits.Compute(p.model(set))
	for _, op := range p.ops {
		t := p.t.Bandwidth(op)
		b := &Bandwidth{Operation: op, Target: t, Required: t * (1 + p.margin), Predicted: limits.Unknown}
		if err == nil {
			ol := lim.For(op)
			b.Predicted, b.Bottleneck, b.Formula = ol.Limit, ol.Bottleneck, ol.Formula
		}
		b.Meets = b.Predicted.Known() && b.Predicted.Value() >= b.Required*(1-1e-12)
		b.MeetsBare = b.Predicted.Known() && b.Predicted.Value() >= t*(1-1e-12)
		switch {
		case !b.Predicted.Known():
			why := "a figure is unknown"
			if err != nil {
				why = shorten.FirstLine(err.Error(), 0)
			} else if b.Bottleneck == limits.ComponentUnknown {
				why = "no term of the limit is known"
			}
			b.Message = fmt.Sprintf("%s: no prediction for %s (%s)", op, limits.FormatBytesPerSecond(t), why)
		default:
			b.Message = fmt.Sprintf("%s: %s predicted (%s), %s against %s asked", op, b.Predicted, b.Bottleneck,
				percent(b.MarginRatio()), limits.FormatBytesPerSecond(t))
			if b.MeetsBare && !b.Meets {
				b.Message += fmt.Sprintf(", under the %.0f%% margin", p.margin*100)
			}
		}
		if op == limits.Write {
			d.Write = b
		} else {
			d.Read = b
		}
	}
	if p.t.Capacity > 0 {
		c := &Capacity{Target: p.t.Capacity, Predicted: capacityOf(set)}
		c.Meets = c.Predicted >= c.Target
		if c.Predicted > 0 {
			c.Message = fmt.Sprintf("capacity: %s over %s, %s against %s asked", limits.FormatCapacity(c.Predicted), plural(len(set), "node"),
				percent(c.Predicted/c.Target), limits.FormatCapacity(c.Target))
		} else {
			c.Message = fmt.Sprintf("capacity: unknown for %s asked (a node's free space is known nowhere)", limits.FormatCapacity(c.Target))
		}
		d.Capacity = c
	}
}

// shortfall says why the chosen set falls short and what would meet the target: more nodes
// like the median chosen node, added to the chosen (closest) set in the same model - a
// candidate left out did not help, e.g. a slow node that would bound an evenly striped file
// system - or nothing, because the network caps it. pool is every node that could be taken
// (to name those whose figures are missing), steps the counts evaluated.
func (p *planner) shortfall(d *Decision, set, pool []resolved, steps []Step) {
	// A prediction that is unknown cannot be extrapolated.
	var unknown []string
	for _, op := range p.ops {
		if b := d.For(op); b != nil && !b.Predicted.Known() {
			unknown = append(unknown, string(op))
		}
	}
	if p.t.Capacity > 0 && d.Capacity != nil && d.Capacity.Predicted == 0 {
		unknown = append(unknown, "capacity")
	}
	if len(unknown) > 0 {
		d.Cause = CauseUnknownFigures
		var missing []string
		for _, r := range set {
			if p.needsLinks() && len(set) > 1 && !r.link.Known() {
				missing = append(missing, r.name+" (link)")
			}
		}
		what := strings.Join(unknown, ", ")
		if len(missing) > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("no %s prediction: the link of %s is known nowhere (label hardware.beeburst.io/link-rate-bits-per-second, spec.hardware, or a stage-2 measurement gives it)",
				what, names(missing, maxNamed)))
		} else {
			d.Notes = append(d.Notes, fmt.Sprintf("no %s prediction: a figure is known nowhere", what))
		}
		return
	}

	base := set
	typical := median(base, p.needsLinks())
	d.MoreLike = typical.name
	like := typical
	ext := append([]resolved(nil), base...)
	all := append([]Step(nil), steps...)
	lastGain, bestScore := 0, -1.0
	for k := 1; len(base)+k <= MaxBurstBufferNodes; k++ {
		c := like
		c.name = fmt.Sprintf("%s-like-%d", typical.name, k)
		ext = append(ext, c)
		st := p.eval(ext)
		if p.unknownIn(st) {
			d.Cause = CauseUnknownFigures
			var missing []string
			for _, r := range pool {
				if !r.link.Known() {
					missing = append(missing, r.name)
				}
			}
			d.Notes = append(d.Notes, fmt.Sprintf("more nodes cannot be predicted: the link of %s is known nowhere (label hardware.beeburst.io/link-rate-bits-per-second, spec.hardware, or a stage-2 measurement gives it)",
				names(missing, maxNamed)))
			return
		}
		if st.Meets {
			d.MoreNodes = len(ext) - d.Count
			d.Cause = CauseTooFewNodes
			if p.bandwidthMet(set) {
				d.Cause = CauseNodeCapacity
			}
			d.Notes = append(d.Notes, fmt.Sprintf("extrapolated with the same model: the added nodes are like %s, the median candidate", typical.name))
			return
		}
		all = append(all, st)
		if sc := p.score(st); sc > bestScore*(1+1e-9) {
			bestScore, lastGain = sc, k
		}
		if k-lastGain > 64 {
			break // 64 more nodes without gain: adding nodes does not help
		}
	}
	// No count up to the API's maximum meets it. The network caps it when, from the closest
	// count on, more nodes leave a figure bound by the network (a fabric's bisection, or fixed
	// clients' links): the limit stops growing with nodes there.
	best := 0
	for i, st := range all {
		if p.score(st) > p.score(all[best])*(1+1e-9) {
			best = i
		}
	}
	for _, st := range all[best:] {
		for _, op := range p.ops {
			f, bn := st.Write, st.WriteBottleneck
			if op == limits.Read {
				f, bn = st.Read, st.ReadBottleneck
			}
			if f.Value() >= p.t.Bandwidth(op)*(1+p.margin) {
				continue
			}
			if bn == limits.ComponentNetwork || (bn == limits.ComponentClients && p.req.FixedClients != nil) {
				d.Cause = CauseNetworkCaps
				return
			}
		}
	}
	if p.t.Capacity > 0 && p.bandwidthMet(set) {
		d.Cause = CauseNodeCapacity
		return
	}
	d.Cause = CauseTooFewNodes
}

// bandwidthMet says whether the bandwidth figures of the chosen set meet the target with
// the margin (so that only capacity falls short).
func (p *planner) bandwidthMet(set []resolved) bool {
	st := p.eval(set)
	for _, op := range p.ops {
		f := st.Write
		if op == limits.Read {
			f = st.Read
		}
		if !f.Known() || f.Value() < p.t.Bandwidth(op)*(1+p.margin)*(1-1e-12) {
			return false
		}
	}
	return true
}

// unknownIn says whether a bandwidth figure asked is unknown in st.
func (p *planner) unknownIn(st Step) bool {
	for _, op := range p.ops {
		f := st.Write
		if op == limits.Read {
			f = st.Read
		}
		if !f.Known() {
			return true
		}
	}
	return false
}

// median is the candidate in the middle by contribution - among those whose link is known,
// where the network counts and there are any: the node "more nodes like these" are modelled on.
func median(base []resolved, needLinks bool) resolved {
	var s []resolved
	for _, r := range base {
		if !needLinks || r.link.Known() {
			s = append(s, r)
		}
	}
	if len(s) == 0 {
		s = append(s, base...)
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].key < s[j].key })
	return s[(len(s)-1)/2]
}

// message is the decision in sentences.
func (p *planner) message(d Decision, steps []Step, chosen, candidates int) string {
	var parts []string
	for _, op := range p.ops {
		parts = append(parts, d.For(op).Message)
	}
	if d.Capacity != nil {
		parts = append(parts, d.Capacity.Message)
	}
	figures := strings.Join(parts, "; ")
	onlyMetadata := figures == ""
	if onlyMetadata {
		// Only a metadata rate asked: stage 1 says nothing, the metadata sentence that follows
		// says why this many.
		figures = "no bandwidth or capacity asked"
	}
	marginText := fmt.Sprintf("with the %.0f%% margin", p.margin*100)
	if p.margin == 0 {
		marginText = "(no margin asked)"
	}
	var b strings.Builder
	switch {
	case d.Mode == ModeCheck && d.State == StatePredicted && !d.ThinMargin:
		fmt.Fprintf(&b, "The %s given meet the target %s: %s.", plural(d.Count, "node"), marginText, figures)
	case d.Mode == ModeCheck && d.State == StatePredicted:
		fmt.Fprintf(&b, "The %s given meet the target only without the %.0f%% margin: %s.", plural(d.Count, "node"), p.margin*100, figures)
	case d.Mode == ModeCheck:
		fmt.Fprintf(&b, "The %s given fall short: %s.", plural(d.Count, "node"), figures)
	case onlyMetadata && d.State == StatePredicted:
		fmt.Fprintf(&b, "Chose %d of %s: no bandwidth or capacity asked, so the layout's minimum, at least one node per metadata server.",
			d.Count, plural(d.Candidates, "candidate node"))
	case d.State == StatePredicted && !d.ThinMargin:
		fmt.Fprintf(&b, "Chose %d of %s, the fewest whose stage-1 limit meets the target %s: %s.", d.Count,
			plural(d.Candidates, "candidate node"), marginText, figures)
		if chosen > 0 {
			prev := steps[chosen-1]
			fmt.Fprintf(&b, " %s would give %s.", strings.ToUpper(plural(prev.Nodes, "node")[:1])+plural(prev.Nodes, "node")[1:], p.stepText(prev))
		}
	case d.State == StatePredicted:
		fmt.Fprintf(&b, "Chose %d of %s: no count meets the target with the %.0f%% margin, and %d is the fewest that meets it without: %s.",
			d.Count, plural(d.Candidates, "candidate node"), p.margin*100, d.Count, figures)
	default:
		fmt.Fprintf(&b, "No count of the %s meets the target; the closest is %s: %s.", plural(candidates, "usable candidate node"),
			plural(d.Count, "node"), figures)
	}
	if d.State == StateUnreachable || d.State == StateUnknown {
		if s := p.shortfallText(d); s != "" {
			b.WriteString(" " + s)
		}
	}
	if len(d.Excluded) > 0 {
		fmt.Fprintf(&b, " Not counted: %s.", names(d.Excluded, maxNamed))
	}
	return b.String()
}

// stepText is "150 MB/s write, 300 MB/s read" for the figures asked.
func (p *planner) stepText(st Step) string {
	var parts []string
	for _, op := range p.ops {
		f := st.Write
		if op == limits.Read {
			f = st.Read
		}
		parts = append(parts, fmt.Sprintf("%s %s", f, op))
	}
	if p.t.Capacity > 0 {
		parts = append(parts, limits.FormatCapacity(st.Capacity))
	}
	return strings.Join(parts, ", ")
}

// shortfallText says what would meet the target.
func (p *planner) shortfallText(d Decision) string {
	switch d.Cause {
	case CauseTooFewNodes, CauseNodeCapacity:
		if d.MoreNodes == 0 {
			return fmt.Sprintf("Not even %d nodes like these would meet it.", MaxBurstBufferNodes)
		}
		what := "nodes"
		if d.Cause == CauseNodeCapacity {
			what = "nodes' space"
			if p.req.CapacityPerNode > 0 {
				what += fmt.Sprintf(" (at most storage.capacityPerNode %s each: raising it may do instead)", limits.FormatCapacity(p.req.CapacityPerNode))
			}
		}
		return fmt.Sprintf("Too few %s: %d more like %s (%d in all) would meet it, by the same model.", what, d.MoreNodes, d.MoreLike, d.Count+d.MoreNodes)
	case CauseNetworkCaps:
		return "The network caps it: " + p.networkText() + "; no node count meets the target."
	case CauseUnknownFigures:
		return "Which count would meet it cannot be told until the unknown figures are known (stage 2 measures them)."
	}
	return ""
}

// networkText names what bounds the network.
func (p *planner) networkText() string {
	f := p.req.Fabric
	switch {
	case p.req.FixedClients != nil && !f.Bisection.Known():
		return fmt.Sprintf("the %s' links bound what reaches the servers", plural(p.req.FixedClients.Nodes, "client node"))
	case f.Bisection.Known() && f.ServiceTrafficBytesPerSecond > 0:
		return fmt.Sprintf("the fabric's bisection of %s (%s), less %s of service traffic, bounds the data that crosses it", f.Bisection,
			limits.FormatBitsPerSecond(f.Bisection.Value()*8), limits.FormatBytesPerSecond(f.ServiceTrafficBytesPerSecond))
	case f.Bisection.Known():
		return fmt.Sprintf("the fabric's bisection of %s (%s) bounds the data that crosses it", f.Bisection,
			limits.FormatBitsPerSecond(f.Bisection.Value()*8))
	}
	return "the links bound the data that crosses the network"
}

// metadataServers chooses the metadata servers for a metadata target: from a per-server
// figure when one is known, else layout.metadataServers. short is true when more than the
// API allows would be needed.
func (p *planner) metadataServers() (servers int, msg string, short bool) {
	servers = max(p.req.MetadataServers, 1)
	t := p.t.MetadataOps
	if t == 0 {
		return servers, "", false
	}
	if p.req.Local {
		return 0, fmt.Sprintf("Metadata: the local engine has no metadata servers (each node's own file system serves its processes); the %s creates/s are checked against the metadata benchmark (validation.profile standard).",
			formatCount(t)), false
	}
	per := p.req.MetadataOpsPerServer
	if !per.Known() {
		stale := ""
		if per.Note != "" {
			stale = " (" + per.Note + ")"
		}
		return servers, fmt.Sprintf("Metadata: stage 1 has no metadata term and no fresh per-server figure is known%s, so layout.metadataServers (%d) stays; the %s creates/s are checked against the metadata benchmark (validation.profile standard).",
			stale, servers, formatCount(t)), false
	}
	need := int(math.Ceil(t * (1 + p.margin) / per.Value * (1 - 1e-12)))
	if need > MaxMetadataServers {
		return MaxMetadataServers, fmt.Sprintf("Metadata: %s creates/s at %s per server (%s) would need %d metadata servers, more than the %d allowed.",
			formatCount(t), formatCount(per.Value), per.origin(), need, MaxMetadataServers), true
	}
	servers = max(servers, need)
	return servers, fmt.Sprintf("Metadata: %d metadata server(s) for %s creates/s at %s per server (%s), assuming they scale linearly; checked against the metadata benchmark.",
		servers, formatCount(t), formatCount(per.Value), per.origin()), false
}

// origin is the source with its detail, so that a reader can find the measurement: "measured
// on worker-1 by hpc/first at 2026-11-23T16:32:51Z", "spec".
func (e Evidence) origin() string {
	if e.Detail == "" {
		return string(e.Source)
	}
	return string(e.Source) + " " + e.Detail
}

// formatCount is an operation rate for humans: "12000", "1.5M".
func formatCount(v float64) string {
	s := limits.FormatBytesPerSecond(v)
	return strings.TrimSuffix(strings.ReplaceAll(s, " ", ""), "B/s")
}

// notes say which chosen figures are not fresh measurements, one line per kind of figure
// with the count of each source, and the first few nodes' reasons.
func (p *planner) notes(nodes []NodeUse) []string {
	type kind struct {
		name string
		get  func(NodeUse) *Evidence
	}
	kinds := []kind{
		{"device write", func(u NodeUse) *Evidence { return u.Write }},
		{"device read", func(u NodeUse) *Evidence { return u.Read }},
		{"link", func(u NodeUse) *Evidence { return u.Link }},
		{"capacity", func(u NodeUse) *Evidence { return u.Capacity }},
	}
	var out, detail []string
	var summary []string
	anyMeasured := false
	for _, k := range kinds {
		counts := map[Source]int{}
		any := false
		for _, u := range nodes {
			e := k.get(u)
			if e == nil {
				continue
			}
			any = true
			counts[e.Source]++
			anyMeasured = anyMeasured || e.Source == SourceMeasured
			if e.Note != "" && len(detail) < maxNamed {
				detail = append(detail, fmt.Sprintf("%s: %s: %s", u.Name, k.name, e.Note))
			} else if e.Note != "" {
				detail = append(detail, "")
			}
		}
		if !any {
			continue
		}
		var parts []string
		for _, s := range []Source{SourceMeasured, SourceSpec, SourceLabel, SourceDiscovered, SourceMeasuredStale, SourceUnknown} {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		summary = append(summary, k.name+": "+strings.Join(parts, ", "))
	}
	switch {
	case len(summary) == 0:
	case !anyMeasured:
		out = append(out, "no fresh measurement of these nodes: the prediction stands on documented or discovered figures ("+
			strings.Join(summary, "; ")+")")
	default:
		out = append(out, "figures used: "+strings.Join(summary, "; "))
	}
	for _, k := range kinds[:2] {
		var unknown []string
		for _, u := range nodes {
			if e := k.get(u); e != nil && !e.Known() {
				unknown = append(unknown, u.Name)
			}
		}
		if len(unknown) > 0 && !p.req.Local {
			out = append(out, fmt.Sprintf("the %s bandwidth of %s is known nowhere: as in stage 1 the devices are then no known limit, so the prediction may be too high",
				k.name, names(unknown, maxNamed)))
		}
	}
	hidden := 0
	for _, d := range detail {
		if d == "" {
			hidden++
			continue
		}
		out = append(out, d)
	}
	if hidden > 0 {
		out = append(out, fmt.Sprintf("and %d more figures likewise", hidden))
	}
	return out
}

// trimSteps keeps at most maxSteps steps around the chosen one: the first, and those just
// before and after it.
func trimSteps(steps []Step, chosen int) []Step {
	if len(steps) <= maxSteps {
		return steps
	}
	from := max(chosen-(maxSteps-3), 1)
	to := min(chosen+2, len(steps))
	out := []Step{steps[0]}
	return append(out, steps[from:to]...)
}

// plural is "1 node", "2 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// names lists up to n items, "a, b and 3 more".
func names(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
