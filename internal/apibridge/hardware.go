// Package apibridge converts between the API's types and the pure models internal/limits and
// internal/sizing: spec.hardware (resource.Quantity figures), spec.target and the published
// figures into their inputs (hardware.go, input.go, sizing.go), their results back into
// status types (status.go, sizing.go), and a status into the kubectl plugin's report
// (report.go). The controller and the kubectl plugin both go through it, so they agree.
package apibridge

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

// Defaults are what the hardware block leaves to its BurstBuffer.
type Defaults struct {
	// Nodes is the burst buffer's node count (spec.nodes.count): the client and server node
	// count where the block gives none. 0: no default (a bare hardware block).
	Nodes int32
	// Engine is spec.engine; local means private node-local scratch, with no network term.
	Engine v1alpha1.EngineType
}

// DefaultsFor reads the defaults from a BurstBuffer, applying the CRD's own defaults
// (engine beegfs) when the object was not defaulted by an API server (a file). The node count
// is spec.nodes.count; without one - a spec.target chose the count, or a file left it out -
// the nodes the burst buffer has (status.nodes), else 1.
func DefaultsFor(bb *v1alpha1.BurstBuffer) Defaults {
	d := Defaults{Nodes: bb.Spec.Nodes.Count, Engine: bb.Spec.Engine}
	if d.Nodes == 0 {
		d.Nodes = int32(max(len(bb.Status.Nodes), 1))
	}
	if d.Engine == "" {
		d.Engine = v1alpha1.EngineBeeGFS
	}
	return d
}

// FromSpec turns the hardware block into the limits engine's per-node input. hw may be nil
// (nothing documented). Errors name the offending field below "hardware.".
func FromSpec(hw *v1alpha1.HardwareSpec, d Defaults) (limits.Hardware, error) {
	u, err := UniformFromSpec(hw, d)
	if err != nil {
		return limits.Hardware{}, err
	}
	h, err := u.Expand()
	if err != nil {
		return limits.Hardware{}, fmt.Errorf("hardware: %w", err)
	}
	return h, nil
}

// UniformFromSpec is the first half of FromSpec: the block with its defaults applied,
// before expansion into nodes. The rules:
//   - clients.nodes and servers.nodes default to d.Nodes; with colocated true a missing one
//     equals the other.
//   - colocated, when not given, is inferred: true when clients and servers count the same
//     nodes (the burst buffer's own nodes), false when they differ (they cannot be the same
//     nodes). The inference is stated in the formula.
//   - co-located nodes have one link: a missing clients.link or servers.link is the other,
//     and two different ones are an error.
//   - processesPerNode defaults to 1, devices.perNode to 1, encoding to none.
//   - engine local: no network term; the nodes are the servers (each uses its own devices).
func UniformFromSpec(hw *v1alpha1.HardwareSpec, d Defaults) (limits.Uniform, error) {
	if hw == nil {
		hw = &v1alpha1.HardwareSpec{}
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	u := limits.Uniform{Local: d.Engine == v1alpha1.EngineLocal}

	var clientNodes, serverNodes, ppn *int32
	var clientLink, serverLink *v1alpha1.LinkHardware
	if c := hw.Clients; c != nil {
		clientNodes, ppn, clientLink = c.Nodes, c.ProcessesPerNode, c.Link
	}
	if s := hw.Servers; s != nil {
		serverNodes, serverLink = s.Nodes, s.Link
	}
	explicitColocated := hw.Colocated != nil && *hw.Colocated
	if explicitColocated {
		if clientNodes == nil {
			clientNodes = serverNodes
		}
		if serverNodes == nil {
			serverNodes = clientNodes
		}
	}
	count := func(p *int32, field string) int {
		switch {
		case p != nil && *p < 1:
			bad("hardware.%s must be at least 1, not %d", field, *p)
			return 0
		case p != nil:
			return int(*p)
		case d.Nodes > 0:
			return int(d.Nodes)
		}
		bad("hardware.%s is not given (and there is no burst buffer node count to default to)", field)
		return 0
	}
	if u.Local {
		// Private scratch: every node is its own client and server.
		n := serverNodes
		if n == nil {
			n = clientNodes
		}
		if clientNodes != nil && serverNodes != nil && *clientNodes != *serverNodes {
			bad("hardware: the local engine uses each node's own devices, so clients.nodes (%d) and servers.nodes (%d) must agree",
				*clientNodes, *serverNodes)
		}
		u.ServerNodes = count(n, "servers.nodes")
		u.ClientNodes = u.ServerNodes
	} else {
		u.ClientNodes = count(clientNodes, "clients.nodes")
		u.ServerNodes = count(serverNodes, "servers.nodes")
	}
	u.ProcessesPerNode = 1
	if ppn != nil {
		if *ppn < 1 {
			bad("hardware.clients.processesPerNode must be at least 1, not %d", *ppn)
		}
		u.ProcessesPerNode = int(*ppn)
	} else if !u.Local {
		u.Notes = append(u.Notes, "clients.processesPerNode not given: 1 assumed (it changes C and P, not the limit)")
	}

	switch {
	case u.Local:
	case hw.Colocated != nil:
		u.Colocated = *hw.Colocated
		if u.Colocated && u.ClientNodes != u.ServerNodes && len(errs) == 0 {
			bad("hardware.colocated means clients and servers are the same nodes: clients.nodes (%d) and servers.nodes (%d) must be equal",
				u.ClientNodes, u.ServerNodes)
		}
	case len(errs) == 0 && u.ClientNodes == u.ServerNodes:
		u.Colocated = true
		u.Notes = append(u.Notes, fmt.Sprintf(
			"co-located inferred (hardware.colocated not given): clients and servers are the same %d nodes, as in a burst buffer; set colocated: false if they are not",
			u.ClientNodes))
	case len(errs) == 0:
		u.Notes = append(u.Notes, fmt.Sprintf(
			"not co-located (hardware.colocated not given): %d client nodes and %d server nodes cannot be the same nodes",
			u.ClientNodes, u.ServerNodes))
	}

	cl, err := link(clientLink, "clients.link")
	if err != nil {
		errs = append(errs, err)
	}
	sl, err := link(serverLink, "servers.link")
	if err != nil {
		errs = append(errs, err)
	}
	if u.Colocated {
		switch {
		case cl == nil:
			cl = sl
		case sl == nil:
			sl = cl
		case *cl != *sl:
			bad("hardware: co-located clients and servers are the same nodes with the same link, but clients.link and servers.link differ; give one")
		}
	}
	u.ClientLink, u.ServerLink = cl, sl

	if f := hw.Fabric; f != nil {
		if f.BisectionBitsPerSecond != nil {
			v := quantityFloat(*f.BisectionBitsPerSecond)
			if !(v > 0) {
				bad("hardware.fabric.bisectionBitsPerSecond must be greater than zero, not %s", f.BisectionBitsPerSecond)
			}
			u.BisectionBitsPerSecond = &v
		}
		if f.ServiceTrafficBitsPerSecond != nil {
			v := quantityFloat(*f.ServiceTrafficBitsPerSecond)
			if v < 0 {
				bad("hardware.fabric.serviceTrafficBitsPerSecond must not be negative, not %s", f.ServiceTrafficBitsPerSecond)
			}
			u.ServiceTrafficBitsPerSecond = v
		}
	}
	u.DevicesPerNode = 1
	if dv := hw.Devices; dv != nil {
		if dv.PerNode < 0 {
			bad("hardware.devices.perNode must be at least 1, not %d", dv.PerNode)
		} else if dv.PerNode > 0 {
			u.DevicesPerNode = int(dv.PerNode)
		}
		u.DeviceWriteBytesPerSecond = positiveQuantity(dv.WriteBytesPerSecond, "devices.writeBytesPerSecond", bad)
		u.DeviceReadBytesPerSecond = positiveQuantity(dv.ReadBytesPerSecond, "devices.readBytesPerSecond", bad)
	}
	if err := errors.Join(errs...); err != nil {
		return limits.Uniform{}, err
	}
	return u, nil
}

func link(l *v1alpha1.LinkHardware, field string) (*limits.Link, error) {
	if l == nil {
		return nil, nil
	}
	enc := limits.EncodingNone // the CRD's default
	if l.Encoding != "" {
		e, err := limits.ParseEncoding(string(l.Encoding))
		if err != nil {
			return nil, fmt.Errorf("hardware.%s.encoding: %w", field, err)
		}
		enc = e
	}
	rate := quantityFloat(l.RateBitsPerSecond)
	if !(rate > 0) {
		return nil, fmt.Errorf("hardware.%s.rateBitsPerSecond must be greater than zero, e.g. 100G, not %s",
			field, l.RateBitsPerSecond.String())
	}
	return &limits.Link{RateBitsPerSecond: rate, Encoding: enc}, nil
}

func positiveQuantity(q *resource.Quantity, field string, bad func(string, ...any)) *float64 {
	if q == nil {
		return nil
	}
	v := quantityFloat(*q)
	if !(v > 0) {
		bad("hardware.%s must be greater than zero, not %s", field, q.String())
		return nil
	}
	return &v
}

// quantityFloat is the quantity's exact decimal value rounded once to float64 ("100G" is
// 1e11 exactly; "512Ki" 524288).
func quantityFloat(q resource.Quantity) float64 {
	c := q.DeepCopy()
	v, err := strconv.ParseFloat(c.AsDec().String(), 64)
	if err != nil || math.IsInf(v, 0) {
		return c.AsApproximateFloat64()
	}
	return v
}

// LinkDataRate is a link's usable data rate in bytes per second: the signalling rate times
// the encoding's efficiency, over 8.
func LinkDataRate(l *v1alpha1.LinkHardware) (float64, error) {
	ll, err := link(l, "link")
	if err != nil {
		return 0, err
	}
	if ll == nil {
		return 0, errors.New("no link")
	}
	return ll.DataBytesPerSecond()
}
