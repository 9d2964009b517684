package limits

import (
	"fmt"
	"math"
	"strings"
)

// Component names a term of the limit; the smallest known term is the bottleneck.
type Component string

// Components.
const (
	ComponentClients Component = "clients"
	ComponentServers Component = "servers"
	ComponentNetwork Component = "network"
	ComponentDevices Component = "devices"
	// ComponentUnknown is the bottleneck when no term is known (private scratch with
	// devices nobody documented).
	ComponentUnknown Component = "unknown"
)

// Mode is which set of formulas applies.
type Mode string

// Modes.
const (
	// ModeShared: clients and servers are different nodes (the paper's setting).
	ModeShared Mode = "shared"
	// ModeColocated: clients and servers are the same nodes (a burst buffer).
	ModeColocated Mode = "colocated"
	// ModeLocal: private node-local scratch, no network term.
	ModeLocal Mode = "local"
)

// Mode says which formulas Compute uses for h.
func (h Hardware) Mode() Mode {
	switch {
	case h.Local:
		return ModeLocal
	case h.Colocated:
		return ModeColocated
	}
	return ModeShared
}

// OperationLimit is the stage-1 (or stage-2, from measured figures) limit of one operation
// with its terms. JSON field names are the estimate command's contract.
type OperationLimit struct {
	Operation Operation `json:"-"`
	// Clients is Bc (1), Servers Bs (2), Network Bnet (3) after service traffic, Devices Bd
	// (4). Unknown or not applicable terms are null in JSON.
	Clients Figure `json:"clientsBytesPerSecond"`
	Servers Figure `json:"serversBytesPerSecond"`
	Network Figure `json:"networkBytesPerSecond"`
	Devices Figure `json:"devicesBytesPerSecond"`
	// Limit is the smallest known term; unknown only when no term is known.
	Limit Figure `json:"limitBytesPerSecond"`
	// Bottleneck names the smallest term.
	Bottleneck Component `json:"bottleneck"`
	// Formula is the formula used, in words and numbers.
	Formula string `json:"formula"`
	// PerProcess is C = client link / processes per node.
	PerProcess Figure `json:"perProcessBytesPerSecond"`
	// ParallelismLimit is P = min(Bs, Bnet, Bd) / C (6), in processes, rounded up; nil when
	// it does not apply (no network term). Co-located, a process's channel is C x Ns/(Ns-1),
	// as in Bc, so that P never exceeds the processes that exist when the links limit.
	ParallelismLimit *int64 `json:"parallelismLimit"`
}

// Limits is the result of Compute: both operations and what the reader must know.
type Limits struct {
	Mode     Mode           `json:"mode"`
	Write    OperationLimit `json:"write"`
	Read     OperationLimit `json:"read"`
	Warnings []Warning      `json:"warnings"`
}

// For returns the limit of op.
func (l Limits) For(op Operation) OperationLimit {
	if op == Read {
		return l.Read
	}
	return l.Write
}

// Compute applies formulas (1)-(4) and (6) of METHOD.md to h, separately for writes and reads.
func Compute(h Hardware) (Limits, error) {
	if err := h.Validate(); err != nil {
		return Limits{}, err
	}
	out := Limits{Mode: h.Mode(), Warnings: []Warning{}}
	for _, op := range Operations {
		ol, err := computeOp(h, op)
		if err != nil {
			return Limits{}, err
		}
		if op == Write {
			out.Write = ol
		} else {
			out.Read = ol
		}
		if !ol.Devices.Known() {
			msg := fmt.Sprintf("device %s bandwidth is not given: the devices are not a known limit, so the %s limit may be too high",
				op, op)
			if !ol.Limit.Known() {
				msg = fmt.Sprintf("device %s bandwidth is not given: with no network term it is the only limit, so the %s limit is unknown",
					op, op)
			}
			out.Warnings = append(out.Warnings, Warning{Reason: WarningUnknownLimit, Operation: op,
				Component: string(ComponentDevices), Message: msg})
		}
	}
	return out, nil
}

// devicesTerm is Bd (4) = sum over server nodes of devices x one device's bandwidth, unknown
// when any node's figure is unknown (a sum with a hole in it is no limit).
func devicesTerm(h Hardware, op Operation) (Figure, string) {
	sum := 0.0
	uniform := true
	for i, s := range h.Servers {
		f := s.DeviceWrite
		if op == Read {
			f = s.DeviceRead
		}
		if !f.Known() {
			what := "not given"
			if len(h.Servers) > 1 && s.Name != "" {
				what = "not known for node " + s.Name
			}
			return Unknown, fmt.Sprintf("Bd unknown: device %s bandwidth %s, so the devices are not a known limit", op, what)
		}
		sum += float64(s.Devices) * f.v
		if i > 0 {
			p := h.Servers[0]
			pf := p.DeviceWrite
			if op == Read {
				pf = p.DeviceRead
			}
			uniform = uniform && s.Devices == p.Devices && f.v == pf.v
		}
	}
	if uniform {
		s := h.Servers[0]
		f := s.DeviceWrite
		if op == Read {
			f = s.DeviceRead
		}
		return Bytes(sum), fmt.Sprintf("Bd = nodes x devices per node x device %s = %d x %d x %s = %s",
			op, len(h.Servers), s.Devices, FormatBytesPerSecond(f.v), FormatBytesPerSecond(sum))
	}
	return Bytes(sum), fmt.Sprintf("Bd = sum over %d nodes of devices x device %s = %s", len(h.Servers), op,
		FormatBytesPerSecond(sum))
}

// serversLinks is the sum of the server nodes' link data rates and its text.
func serversLinks(h Hardware) (float64, string) {
	sum := 0.0
	uniform := true
	for _, s := range h.Servers {
		sum += s.Link.v
		uniform = uniform && s.Link.v == h.Servers[0].Link.v
	}
	if uniform {
		return sum, fmt.Sprintf("%d x %s", len(h.Servers), FormatBytesPerSecond(h.Servers[0].Link.v))
	}
	return sum, fmt.Sprintf("sum of %d server links", len(h.Servers))
}

func computeOp(h Hardware, op Operation) (OperationLimit, error) {
	ns := len(h.Servers)
	bd, bdText := devicesTerm(h, op)
	ol := OperationLimit{Operation: op, Devices: bd, PerProcess: NotApplicable}
	var terms []string // the formula's parts after the limit line

	if !h.needsLinks() {
		// No data crosses the network: with private scratch every process uses only its own
		// node's devices; a co-located burst buffer on one node keeps all data at home.
		// Neither the links nor the fabric limit, and Bc, Bs, Bnet do not apply.
		ol.Clients, ol.Servers, ol.Network = NotApplicable, NotApplicable, NotApplicable
		ol.Limit = bd
		head := "local (private node-local scratch): every process uses only its own node's devices and no data crosses the network, so the links and the fabric do not limit"
		if !h.Local {
			head = "co-located on a single node (Ns = 1): all data stays on the node, so there is no network term"
		}
		if bd.Known() {
			ol.Bottleneck = ComponentDevices
			terms = append(terms, fmt.Sprintf("limit = Bd = %s (devices)", bd), bdText)
		} else {
			ol.Bottleneck = ComponentUnknown
			terms = append(terms, "limit = Bd, unknown", bdText)
		}
		ol.Formula = join(head, terms, h.Notes)
		return ol, nil
	}

	m, n := h.Clients.Nodes, h.Clients.ProcessesPerNode
	lc := h.Clients.Link.v
	c := lc / float64(n)
	ol.PerProcess = Bytes(c)
	bcRaw := float64(m) * lc
	bsRaw, bsText := serversLinks(h)

	// Co-located: data striped evenly over Ns nodes keeps 1/Ns of each client's data on its
	// own devices; (Ns-1)/Ns crosses the network. A node sending aggregate T/Ns of client data
	// puts (Ns-1)/Ns of it on its link outbound and receives as much from the others
	// inbound; links are full duplex, so each direction only has to carry (Ns-1)/Ns of the
	// client traffic, and every network-borne term allows Ns/(Ns-1) times its raw rate.
	share := networkShare(h)
	shareText := ""
	head := ""
	if h.Colocated {
		shareText = fmt.Sprintf(" x %d/%d", ns, ns-1)
		head = fmt.Sprintf("co-located: clients and servers are the same Ns = %d nodes; with data striped evenly, (Ns-1)/Ns = %d/%d of each node's client data crosses the network and 1/%d stays on its own devices; links are full duplex, so each link carries %d/%d of its node's client traffic in each direction and the network terms are multiplied by Ns/(Ns-1) = %d/%d",
			ns, ns-1, ns, ns, ns-1, ns, ns, ns-1)
	}

	// (1) Bc = M x N x C with C = link / N, i.e. M links.
	ol.Clients = Bytes(bcRaw * share)
	if h.Colocated {
		terms = append(terms, fmt.Sprintf("Bc = M x N x C x Ns/(Ns-1) = %d x %d x %s%s = %s, with C = client link / N = %s / %d",
			m, n, FormatBytesPerSecond(c), shareText, ol.Clients, FormatBytesPerSecond(lc), n))
	} else {
		terms = append(terms, fmt.Sprintf("Bc = M x N x C = %d x %d x %s = %s, with C = client link / N = %s / %d",
			m, n, FormatBytesPerSecond(c), ol.Clients, FormatBytesPerSecond(lc), n))
	}
	// (2) Bs = sum of the server links.
	ol.Servers = Bytes(bsRaw * share)
	bsFormula := "Bs = Ns x S"
	if !strings.Contains(bsText, " x ") {
		bsFormula = "Bs = sum of the server links"
	}
	if h.Colocated {
		terms = append(terms, fmt.Sprintf("%s x Ns/(Ns-1) = %s%s = %s", bsFormula, bsText, shareText, ol.Servers))
	} else {
		terms = append(terms, fmt.Sprintf("%s = %s = %s", bsFormula, bsText, ol.Servers))
	}
	// (3) Bnet: the fabric (bisection, or min(Bc, Bs) when non-blocking) minus the service
	// traffic that shares it. Co-located, only (Ns-1)/Ns of the data crosses it.
	fabric, fabricText := math.Min(bcRaw, bsRaw), "min(M x client link, Ns x S)"
	fabricKind := "non-blocking fabric"
	if !h.Colocated {
		fabricText = "min(Bc, Bs)"
	}
	if h.Fabric.Bisection.Known() {
		fabric, fabricText, fabricKind = h.Fabric.Bisection.v, "bisection", "fabric bisection "+h.Fabric.Bisection.String()
	}
	service := h.Fabric.ServiceTrafficBytesPerSecond
	net := fabric - service
	if !(net > 0) {
		return OperationLimit{}, fmt.Errorf("fabric: the service traffic (%s) leaves nothing of the fabric (%s, %s) for data",
			FormatBytesPerSecond(service), FormatBytesPerSecond(fabric), fabricKind)
	}
	ol.Network = Bytes(net * share)
	netExpr := fabricText
	if service > 0 {
		netExpr = fmt.Sprintf("(%s - service traffic)", fabricText)
		fabricKind += fmt.Sprintf(", service traffic %s subtracted", FormatBytesPerSecond(service))
	}
	if h.Colocated {
		terms = append(terms, fmt.Sprintf("Bnet = %s x Ns/(Ns-1) = %s (%s)", netExpr, ol.Network, fabricKind))
	} else {
		terms = append(terms, fmt.Sprintf("Bnet = %s = %s (%s)", netExpr, ol.Network, fabricKind))
	}
	terms = append(terms, bdText)

	// The bottleneck is the smallest known term. Ties go to the first in order: physical
	// parts before the network in the shared case (non-blocking Bnet equals min(Bc, Bs) by
	// definition, and the paper names the servers), the links first when co-located (there
	// the clients' and servers' links are the same links, i.e. the network).
	type term struct {
		name Component
		sym  string
		f    Figure
	}
	order := []term{{ComponentClients, "Bc", ol.Clients}, {ComponentServers, "Bs", ol.Servers},
		{ComponentDevices, "Bd", ol.Devices}, {ComponentNetwork, "Bnet", ol.Network}}
	if h.Colocated {
		order = []term{{ComponentNetwork, "Bnet", ol.Network}, {ComponentDevices, "Bd", ol.Devices},
			{ComponentClients, "Bc", ol.Clients}, {ComponentServers, "Bs", ol.Servers}}
	}
	var best *term
	for i := range order {
		t := &order[i]
		if t.f.Known() && (best == nil || less(t.f.v, best.f.v)) {
			best = t
		}
	}
	ol.Limit, ol.Bottleneck = best.f, best.name
	syms := "Bc, Bs, Bnet, Bd"
	if !bd.Known() {
		syms = "Bc, Bs, Bnet"
	}
	limitLine := fmt.Sprintf("limit = min(%s) = %s = %s (%s)", syms, best.sym, ol.Limit, ol.Bottleneck)

	// (6) P = min(Bs, Bnet, Bd) / C: processes it takes to saturate the system. Co-located,
	// a process moves C x Ns/(Ns-1) of client data for C on its link, as in Bc.
	sat := minFigure(ol.Servers, ol.Network, ol.Devices)
	p := ceilCount(sat.v / (c * share))
	ol.ParallelismLimit = &p
	pSyms := "Bs, Bnet, Bd"
	if !bd.Known() {
		pSyms = "Bs, Bnet"
	}
	if h.Colocated {
		terms = append(terms, fmt.Sprintf("P = min(%s) / (C x Ns/(Ns-1)) = %s / (%s%s) = %d processes (%s client nodes at %d per node)",
			pSyms, sat, FormatBytesPerSecond(c), shareText, p, formatCount(sat.v/(lc*share)), n))
	} else {
		terms = append(terms, fmt.Sprintf("P = min(%s) / C = %s / %s = %d processes (%s client nodes at %d per node)",
			pSyms, sat, FormatBytesPerSecond(c), p, formatCount(sat.v/lc), n))
	}

	ol.Formula = join(head, append([]string{limitLine}, terms...), h.Notes)
	return ol, nil
}

// networkShare is the client data per byte on a link: Ns/(Ns-1) co-located on Ns > 1 nodes
// (1/Ns of each client's data stays on its own node, and links are full duplex), else 1.
func networkShare(h Hardware) float64 {
	if ns := len(h.Servers); h.Colocated && ns > 1 {
		return float64(ns) / float64(ns-1)
	}
	return 1
}

// less is a < b beyond rounding noise, so that equal terms computed two ways tie.
func less(a, b float64) bool { return a < b*(1-1e-12) }

// ceilCount rounds a process count up, ignoring rounding noise (160.0000000001 is 160).
func ceilCount(v float64) int64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if v > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(math.Ceil(v * (1 - 1e-12)))
}

func join(head string, terms, notes []string) string {
	parts := make([]string, 0, len(terms)+len(notes)+1)
	if head != "" {
		parts = append(parts, head)
	}
	parts = append(parts, terms...)
	parts = append(parts, notes...)
	return strings.Join(parts, "; ")
}
