package limits

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Operation is what the processes do: write or read.
type Operation string

// Operations.
const (
	Write Operation = "write"
	Read  Operation = "read"
)

// Operations lists the operations in the order they are reported.
var Operations = []Operation{Write, Read}

// ParseOperation accepts "write" or "read" (any case).
func ParseOperation(s string) (Operation, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case string(Write):
		return Write, nil
	case string(Read):
		return Read, nil
	}
	return "", fmt.Errorf("unknown operation %q: use write or read", s)
}

// Encoding is a link's line code.
type Encoding string

// Encodings. The names are those of the API (v1alpha1.LinkEncoding).
const (
	Encoding8b10b    Encoding = "8b/10b"
	Encoding64b66b   Encoding = "64b/66b"
	Encoding128b130b Encoding = "128b/130b"
	Encoding256b257b Encoding = "256b/257b"
	EncodingNone     Encoding = "none"
)

// encodings maps each encoding to its efficiency as data bits over line bits.
var encodings = map[Encoding][2]float64{
	Encoding8b10b:    {8, 10},
	Encoding64b66b:   {64, 66},
	Encoding128b130b: {128, 130},
	Encoding256b257b: {256, 257},
	EncodingNone:     {1, 1},
}

// EncodingNames lists the known encodings for messages.
const EncodingNames = "8b/10b, 64b/66b, 128b/130b, 256b/257b, none"

// ParseEncoding accepts exactly the names the API accepts (case matters, as in the CRD's
// enum), so that a file the CLI accepts is one the API server accepts too.
func ParseEncoding(s string) (Encoding, error) {
	e := Encoding(s)
	if _, ok := encodings[e]; ok {
		return e, nil
	}
	return "", fmt.Errorf("unknown link encoding %q: use one of %s", s, EncodingNames)
}

// Efficiency is data bits over line bits: 64b/66b -> 64/66 = 0.9697.
func (e Encoding) Efficiency() (float64, error) {
	r, ok := encodings[e]
	if !ok {
		return 0, fmt.Errorf("unknown link encoding %q: use one of %s", string(e), EncodingNames)
	}
	return r[0] / r[1], nil
}

// fraction is "64/66" for formulas.
func (e Encoding) fraction() string {
	r := encodings[e]
	return fmt.Sprintf("%g/%g", r[0], r[1])
}

// Link is a network link as documented: a signalling rate in bits per second and a line code.
type Link struct {
	RateBitsPerSecond float64
	Encoding          Encoding
}

// DataBytesPerSecond is the usable data rate: signalling rate x encoding efficiency / 8.
func (l Link) DataBytesPerSecond() (float64, error) {
	eff, err := l.Encoding.Efficiency()
	if err != nil {
		return 0, err
	}
	if err := CheckLinkBitsPerSecond(l.RateBitsPerSecond); err != nil {
		return 0, err
	}
	return l.RateBitsPerSecond * eff / 8, nil
}

// describe is "100 Gbit/s x 64/66 (64b/66b) / 8 = 12.121 GB/s".
func (l Link) describe() string {
	d, err := l.DataBytesPerSecond()
	if err != nil {
		return err.Error()
	}
	if l.Encoding == EncodingNone {
		return fmt.Sprintf("%s (no encoding) / 8 = %s", FormatBitsPerSecond(l.RateBitsPerSecond), FormatBytesPerSecond(d))
	}
	return fmt.Sprintf("%s x %s (%s) / 8 = %s", FormatBitsPerSecond(l.RateBitsPerSecond), l.Encoding.fraction(),
		l.Encoding, FormatBytesPerSecond(d))
}

// Hardware is the input of the limit formulas, per node on the server side so that
// heterogeneous, measured nodes (stage 2) use the same formulas as documented ones (stage 1).
type Hardware struct {
	// Clients are the nodes running the job's processes.
	Clients Clients
	// Servers are the storage server nodes (Ns = len(Servers)). With Local, the nodes whose
	// private scratch the processes use.
	Servers []ServerNode
	// Fabric is the network between clients and servers.
	Fabric Fabric
	// Colocated says clients and servers are the same nodes (a burst buffer): data striped
	// evenly over Ns nodes keeps 1/Ns of each client's data on its own node.
	Colocated bool
	// Local is private node-local scratch (the local engine): every process reads and writes
	// only its own node's devices; no data crosses the network.
	Local bool
	// Notes are lines prepended to every formula: where figures came from, what was
	// inferred (e.g. the link's encoding arithmetic).
	Notes []string
}

// Clients is the client side: Nodes x ProcessesPerNode processes, each node with one link.
type Clients struct {
	// Nodes is M.
	Nodes int
	// ProcessesPerNode is N; each process gets C = link / N.
	ProcessesPerNode int
	// Link is each client node's link data rate (after encoding). Unknown is allowed only
	// where the network does not count (Local, or a co-located single node).
	Link Figure
}

// ServerNode is one storage server node.
type ServerNode struct {
	// Name of the node; may be empty for documented, uniform hardware.
	Name string
	// Link is the node's link data rate (after encoding).
	Link Figure
	// Devices is the number of storage devices on the node.
	Devices int
	// DeviceWrite and DeviceRead are one device's sequential bandwidth; unknown is allowed
	// (then the devices are not a known limit, and the output says so).
	DeviceWrite Figure
	DeviceRead  Figure
}

// Fabric is the network between clients and servers.
type Fabric struct {
	// Bisection is the fabric's bandwidth between clients and servers as a data rate, bytes/s.
	// Unknown: non-blocking, Bnet = min(Bc, Bs).
	Bisection Figure
	// ServiceTrafficBytesPerSecond shares the transport network (metadata, locks,
	// monitoring) and is subtracted from it.
	ServiceTrafficBytesPerSecond float64
}

// MaxNodes bounds node counts so that a typo ("servers: 5000000000") is an error, not an
// allocation of billions of nodes.
const MaxNodes = 1 << 16

// MaxProcessesPerNode bounds processes per node for the same reason.
const MaxProcessesPerNode = 1 << 20

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// LinksMissing says whether a link the limit needs is unknown (a shared file system whose
// client or server links nothing documents): stage 1 has no limit then, and stage 2's link
// measurement gives it one. Validate refuses such an input.
func (h Hardware) LinksMissing() bool {
	if !h.needsLinks() {
		return false
	}
	if !h.Clients.Link.Known() {
		return true
	}
	for _, s := range h.Servers {
		if !s.Link.Known() {
			return true
		}
	}
	return false
}

// needsLinks: data crosses the network, so the links are a term of the limit - unless every
// process uses only its own node's devices (Local) or all data stays on one co-located node.
func (h Hardware) needsLinks() bool {
	return !h.Local && !(h.Colocated && len(h.Servers) == 1)
}

// Validate checks the input; Compute calls it.
func (h Hardware) Validate() error {
	var errs []error
	ns := len(h.Servers)
	if ns == 0 {
		errs = append(errs, errors.New("servers: at least one server node is needed"))
	}
	if ns > MaxNodes {
		errs = append(errs, fmt.Errorf("servers: %d nodes is more than %d", ns, MaxNodes))
	}
	if !h.Local {
		if h.Clients.Nodes < 1 || h.Clients.Nodes > MaxNodes {
			errs = append(errs, fmt.Errorf("clients.nodes must be from 1 to %d, not %d", MaxNodes, h.Clients.Nodes))
		}
		if h.Clients.ProcessesPerNode < 1 || h.Clients.ProcessesPerNode > MaxProcessesPerNode {
			errs = append(errs, fmt.Errorf("clients.processesPerNode must be from 1 to %d, not %d",
				MaxProcessesPerNode, h.Clients.ProcessesPerNode))
		}
		if h.Colocated && h.Clients.Nodes != ns {
			errs = append(errs, fmt.Errorf("colocated: clients and servers are the same nodes, but clients.nodes is %d and servers are %d",
				h.Clients.Nodes, ns))
		}
	}
	needLinks := h.needsLinks()
	if needLinks && !h.Clients.Link.Known() {
		errs = append(errs, errors.New("clients.link: the client nodes' link is needed (it is a term of the limit)"))
	}
	if h.Clients.Link.Known() {
		if err := checkLinkData(h.Clients.Link.v); err != nil {
			errs = append(errs, fmt.Errorf("clients.link: %w", err))
		} else if err := checkSum("clients: the client links", float64(h.Clients.Nodes)*h.Clients.Link.v); err != nil && !h.Local {
			errs = append(errs, err)
		}
	}
	var linkSum, writeSum, readSum float64
	for i, s := range h.Servers {
		name := serverName(s, i)
		if needLinks && !s.Link.Known() {
			errs = append(errs, fmt.Errorf("%s: the node's link is needed (it is a term of the limit)", name))
		}
		if s.Link.Known() {
			if err := checkLinkData(s.Link.v); err != nil {
				errs = append(errs, fmt.Errorf("%s: link: %w", name, err))
			}
			linkSum += s.Link.v
		}
		if s.Devices < 1 || s.Devices > MaxDevicesPerNode {
			errs = append(errs, fmt.Errorf("%s: devices per node must be from 1 to %d, not %d", name, MaxDevicesPerNode, s.Devices))
		}
		for _, d := range []struct {
			op  Operation
			f   Figure
			sum *float64
		}{{Write, s.DeviceWrite, &writeSum}, {Read, s.DeviceRead, &readSum}} {
			if !d.f.Known() {
				continue
			}
			if !positive(d.f.v) {
				errs = append(errs, fmt.Errorf("%s: device %s bandwidth must be positive, not %g", name, d.op, d.f.v))
			} else if err := CheckBytesPerSecond(d.f.v, MaxDeviceBytesPerSecond); err != nil {
				errs = append(errs, fmt.Errorf("%s: device %s bandwidth: %w", name, d.op, err))
			}
			*d.sum += float64(s.Devices) * d.f.v
		}
		if len(errs) > 8 {
			errs = append(errs, errors.New("(more errors left out)"))
			break
		}
	}
	// The terms are sums over nodes: each must stay a figure too (published as whole bytes
	// per second), not only its parts.
	for _, err := range []error{checkSum("servers: the server links", linkSum), checkSum("devices: the write bandwidths", writeSum),
		checkSum("devices: the read bandwidths", readSum)} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if h.Fabric.Bisection.Known() {
		if !positive(h.Fabric.Bisection.v) {
			errs = append(errs, fmt.Errorf("fabric.bisection must be positive, not %g", h.Fabric.Bisection.v))
		} else if err := CheckBytesPerSecond(h.Fabric.Bisection.v, MaxBytesPerSecond); err != nil {
			errs = append(errs, fmt.Errorf("fabric.bisection: %w", err))
		}
	}
	if !finiteNonNegative(h.Fabric.ServiceTrafficBytesPerSecond) {
		errs = append(errs, fmt.Errorf("fabric.serviceTraffic must not be negative, not %g", h.Fabric.ServiceTrafficBytesPerSecond))
	} else if err := CheckBytesPerSecond(h.Fabric.ServiceTrafficBytesPerSecond, MaxBytesPerSecond); err != nil {
		errs = append(errs, fmt.Errorf("fabric.serviceTraffic: %w", err))
	}
	return errors.Join(errs...)
}

// checkLinkData checks a link's data rate in bytes per second (after encoding) against
// MaxLinkBitsPerSecond.
func checkLinkData(v float64) error {
	if !positive(v) {
		return fmt.Errorf("must be a positive data rate, not %g", v)
	}
	return CheckBytesPerSecond(v, MaxLinkBitsPerSecond/8)
}

// checkSum checks a term that adds figures over nodes against MaxBytesPerSecond; nil when it
// is within.
func checkSum(what string, v float64) error {
	if v <= MaxBytesPerSecond {
		return nil
	}
	return fmt.Errorf("%s add up to %g bytes/s, more than %s: more than any real system moves, so a figure or a node count is wrong",
		what, v, FormatBytesPerSecond(MaxBytesPerSecond))
}

func serverName(s ServerNode, i int) string {
	if s.Name != "" {
		return "server " + s.Name
	}
	return fmt.Sprintf("server node %d", i)
}

// Uniform is the documented hardware block of a spec: equal nodes on each side. Expand turns
// it into Hardware.
type Uniform struct {
	ClientNodes      int
	ProcessesPerNode int
	// ClientLink and ServerLink are the nodes' links; nil is unknown.
	ClientLink  *Link
	ServerNodes int
	ServerLink  *Link
	// BisectionBitsPerSecond is the fabric's bandwidth as a data rate in bits per second; nil
	// is non-blocking.
	BisectionBitsPerSecond      *float64
	ServiceTrafficBitsPerSecond float64
	// DevicesPerNode defaults to 1 when 0.
	DevicesPerNode int
	// DeviceWriteBytesPerSecond and DeviceReadBytesPerSecond are per device; nil is unknown.
	DeviceWriteBytesPerSecond *float64
	DeviceReadBytesPerSecond  *float64
	Colocated                 bool
	Local                     bool
	// Notes are copied to Hardware.Notes after the link arithmetic.
	Notes []string
}

// Expand turns the uniform block into per-node Hardware, with the link arithmetic as notes.
func (u Uniform) Expand() (Hardware, error) {
	var errs []error
	if u.ServerNodes < 1 || u.ServerNodes > MaxNodes {
		errs = append(errs, fmt.Errorf("servers.nodes must be from 1 to %d, not %d", MaxNodes, u.ServerNodes))
	}
	h := Hardware{
		Clients:   Clients{Nodes: u.ClientNodes, ProcessesPerNode: u.ProcessesPerNode},
		Colocated: u.Colocated,
		Local:     u.Local,
	}
	var clientLink, serverLink Figure
	if u.ClientLink != nil {
		d, err := u.ClientLink.DataBytesPerSecond()
		if err != nil {
			errs = append(errs, fmt.Errorf("clients.link: %w", err))
		} else {
			clientLink = Bytes(d)
		}
	}
	if u.ServerLink != nil {
		d, err := u.ServerLink.DataBytesPerSecond()
		if err != nil {
			errs = append(errs, fmt.Errorf("servers.link: %w", err))
		} else {
			serverLink = Bytes(d)
		}
	}
	if !u.Local {
		switch {
		case u.ClientLink != nil && u.ServerLink != nil && *u.ClientLink == *u.ServerLink:
			h.Notes = append(h.Notes, "link data rate (every node): "+u.ClientLink.describe())
		default:
			if u.ClientLink != nil {
				h.Notes = append(h.Notes, "client link data rate: "+u.ClientLink.describe())
			}
			if u.ServerLink != nil {
				h.Notes = append(h.Notes, "server link data rate: "+u.ServerLink.describe())
			}
		}
	}
	h.Clients.Link = clientLink
	if u.BisectionBitsPerSecond != nil {
		if !positive(*u.BisectionBitsPerSecond) {
			errs = append(errs, fmt.Errorf("fabric.bisectionBitsPerSecond must be positive, not %g", *u.BisectionBitsPerSecond))
		} else if err := CheckBytesPerSecond(*u.BisectionBitsPerSecond/8, MaxBytesPerSecond); err != nil {
			errs = append(errs, fmt.Errorf("fabric.bisectionBitsPerSecond: as a data rate, %w", err))
		}
		h.Fabric.Bisection = Bytes(*u.BisectionBitsPerSecond / 8)
	}
	if !finiteNonNegative(u.ServiceTrafficBitsPerSecond) {
		errs = append(errs, fmt.Errorf("fabric.serviceTrafficBitsPerSecond must not be negative, not %g", u.ServiceTrafficBitsPerSecond))
	} else if err := CheckBytesPerSecond(u.ServiceTrafficBitsPerSecond/8, MaxBytesPerSecond); err != nil {
		errs = append(errs, fmt.Errorf("fabric.serviceTrafficBitsPerSecond: as a data rate, %w", err))
	}
	h.Fabric.ServiceTrafficBytesPerSecond = u.ServiceTrafficBitsPerSecond / 8
	devices := u.DevicesPerNode
	if devices == 0 {
		devices = 1
	}
	if devices < 0 || devices > MaxDevicesPerNode {
		errs = append(errs, fmt.Errorf("devices.perNode must be from 1 to %d, not %d", MaxDevicesPerNode, devices))
	}
	var dw, dr Figure
	// Device figures are checked, bounds included, by Validate.
	if u.DeviceWriteBytesPerSecond != nil {
		dw = Bytes(*u.DeviceWriteBytesPerSecond)
	}
	if u.DeviceReadBytesPerSecond != nil {
		dr = Bytes(*u.DeviceReadBytesPerSecond)
	}
	if err := errors.Join(errs...); err != nil {
		return Hardware{}, err
	}
	h.Servers = make([]ServerNode, u.ServerNodes)
	for i := range h.Servers {
		h.Servers[i] = ServerNode{Link: serverLink, Devices: devices, DeviceWrite: dw, DeviceRead: dr}
	}
	h.Notes = append(h.Notes, u.Notes...)
	return h, nil
}
