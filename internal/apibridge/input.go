package apibridge

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
	"github.com/beeburst/beeburst/internal/limits"
)

// Input is what one stage's limit formulas start from. Stages 1, 2 and 3 all build it with
// LimitInput, so that the sweep is judged against exactly the limit stage 2 published.
type Input struct {
	// Documented is spec.hardware completed from the nodes (Documented).
	Documented *v1alpha1.HardwareSpec
	// Sources says where each documented figure came from.
	Sources []v1alpha1.FigureSource
	// Hardware is the limits engine's input: the documented figures, with the measured
	// overlay when Measured.
	Hardware limits.Hardware
	// Measured says the stage-2 figures replaced the documented ones, node by node.
	Measured bool
}

// stage2Note is the note the formulas carry once the measured figures replace the documented.
const stage2Note = "stage 2: device figures measured per node (fio, direct I/O), links by iperf3 between the nodes"

// LimitInput builds the limit input of a burst buffer on nodes: the documented hardware
// (Documented), and, when measured is given, what stage 2 measured on each node laid over it
// ("from here on the measured figure is the limit"). measured is stage 2's
// status.limits.components: stage 2 passes what it is about to publish, stage 3 what was
// published, so both compute the same limit. Per node, a measured device figure replaces
// the documented one (the probe measured the node's storage as a whole: one device per
// node), and so does a measured link except with the local engine (no network term). The
// overlay applies only when measured names one node per server node; else the documented
// input stands and Measured is false. Errors are those of FromSpec.
func LimitInput(bb *v1alpha1.BurstBuffer, nodes []corev1.Node, measured *v1alpha1.ComponentLimits) (Input, error) {
	hw, sources := Documented(bb, nodes)
	in := Input{Documented: hw, Sources: sources}
	h, err := FromSpec(hw, DefaultsFor(bb))
	if err != nil {
		return in, err
	}
	if measured != nil && len(h.Servers) == len(measured.Nodes) {
		for i, nc := range measured.Nodes {
			s := &h.Servers[i]
			s.Name, s.Devices = nc.Name, 1
			if v, ok := measuredFigure(nc.DeviceWrite); ok {
				s.DeviceWrite = limits.Bytes(v)
			}
			if v, ok := measuredFigure(nc.DeviceRead); ok {
				s.DeviceRead = limits.Bytes(v)
			}
			if v, ok := measuredFigure(nc.Network); ok && !h.Local {
				s.Link = limits.Bytes(v)
			}
		}
		if h.Colocated && !h.Clients.Link.Known() {
			// The clients are these nodes. With no documented link, their measured links are
			// the clients' too; the slowest counts, as in stage 1.
			h.Clients.Link = slowestServerLink(h.Servers)
		}
		h.Notes = append(h.Notes, stage2Note)
		in.Measured = true
	}
	in.Hardware = h
	return in, nil
}

// slowestServerLink is the slowest of the servers' links, unknown unless every one is known.
func slowestServerLink(servers []limits.ServerNode) limits.Figure {
	slowest := limits.Unknown
	for _, s := range servers {
		if !s.Link.Known() {
			return limits.Unknown
		}
		if !slowest.Known() || s.Link.Value() < slowest.Value() {
			slowest = s.Link
		}
	}
	return slowest
}

func measuredFigure(c *v1alpha1.ComponentFigure) (float64, bool) {
	if c == nil || c.MeasuredBytesPerSecond == nil || *c.MeasuredBytesPerSecond <= 0 {
		return 0, false
	}
	return float64(*c.MeasuredBytesPerSecond), true
}

// Documented is spec.hardware completed from the nodes, with the source of each figure.
// Stage 1 models identical nodes, and the slowest one bounds an evenly striped file system, so:
//   - a link the spec does not give is each node's label, else its discovered speed
//     (NodeLink), and the slowest node's counts; it stays unknown if one node has
//     neither, and the source is the slowest node's;
//   - device figures count from labels only when every node carries them, the smallest.
//
// Stage 2 measures each node on its own.
func Documented(bb *v1alpha1.BurstBuffer, nodes []corev1.Node) (*v1alpha1.HardwareSpec, []v1alpha1.FigureSource) {
	hw := &v1alpha1.HardwareSpec{}
	if bb.Spec.Hardware != nil {
		hw = bb.Spec.Hardware.DeepCopy()
	}
	sources := Sources(bb.Spec.Hardware)
	fromNodes := func(figure, source string, q resource.Quantity, extra string) {
		for i := range sources {
			if sources[i].Figure == figure {
				sources[i].Source = source
				sources[i].Value = strings.TrimSpace(q.String() + " " + extra)
			}
		}
	}
	fromLabel := func(figure string, q resource.Quantity, extra string) {
		fromNodes(figure, v1alpha1.SourceLabel, q, extra)
	}

	clientLinkGiven := hw.Clients != nil && hw.Clients.Link != nil
	serverLinkGiven := hw.Servers != nil && hw.Servers.Link != nil
	if !clientLinkGiven && !serverLinkGiven && len(nodes) > 0 {
		links := make([]*v1alpha1.LinkHardware, len(nodes))
		srcs, names := make([]string, len(nodes)), make([]string, len(nodes))
		for i, n := range nodes {
			links[i], srcs[i] = NodeLink(nil, n.Labels, Discovered(bb, n.Name))
			names[i] = n.Name
		}
		if link, src, node, ok := SlowestLink(links, srcs, names); ok {
			if hw.Clients == nil {
				hw.Clients = &v1alpha1.ClientsHardware{}
			}
			if hw.Servers == nil {
				hw.Servers = &v1alpha1.ServersHardware{}
			}
			hw.Clients.Link, hw.Servers.Link = link, link.DeepCopy()
			extra := string(link.Encoding)
			if src == v1alpha1.SourceDiscovered {
				extra += " (" + node + ")"
			}
			fromNodes("clients.link", src, link.RateBitsPerSecond, extra)
			fromNodes("servers.link", src, link.RateBitsPerSecond, extra)
		}
	}
	if hw.Devices == nil || hw.Devices.WriteBytesPerSecond == nil {
		if q, ok := minLabel(nodes, v1alpha1.LabelDiskWriteBytesPerSecond); ok {
			if hw.Devices == nil {
				hw.Devices = &v1alpha1.DevicesHardware{PerNode: 1}
			}
			hw.Devices.WriteBytesPerSecond = &q
			fromLabel("devices.write", q, "")
		}
	}
	if hw.Devices == nil || hw.Devices.ReadBytesPerSecond == nil {
		if q, ok := minLabel(nodes, v1alpha1.LabelDiskReadBytesPerSecond); ok {
			if hw.Devices == nil {
				hw.Devices = &v1alpha1.DevicesHardware{PerNode: 1}
			}
			hw.Devices.ReadBytesPerSecond = &q
			fromLabel("devices.read", q, "")
		}
	}
	if hw.Devices != nil && hw.Devices.PerNode == 0 {
		hw.Devices.PerNode = 1
	}
	return hw, sources
}

// minLabel is the smallest positive quantity of a label over all nodes; false when a node
// lacks it or its value is not a positive quantity.
func minLabel(nodes []corev1.Node, key string) (resource.Quantity, bool) {
	var min resource.Quantity
	if len(nodes) == 0 {
		return min, false
	}
	for i, n := range nodes {
		q, err := resource.ParseQuantity(n.Labels[key])
		if err != nil || q.Sign() <= 0 {
			return min, false
		}
		if i == 0 || q.Cmp(min) < 0 {
			min = q
		}
	}
	return min, true
}

// Discovered is what the device probe discovered on a node of bb, if anything.
func Discovered(bb *v1alpha1.BurstBuffer, node string) *v1alpha1.NodeHardware {
	for i := range bb.Status.Nodes {
		if bb.Status.Nodes[i].Name == node {
			return bb.Status.Nodes[i].Hardware
		}
	}
	return nil
}

// DocumentedDevice is one node's documented device bandwidth for stage 2's comparison:
// spec.hardware.devices (x perNode) first, else the node's label.
func DocumentedDevice(bb *v1alpha1.BurstBuffer, node *corev1.Node, write bool) (*int64, string) {
	if d := bb.Spec.Hardware; d != nil && d.Devices != nil {
		q := d.Devices.ReadBytesPerSecond
		if write {
			q = d.Devices.WriteBytesPerSecond
		}
		if q != nil {
			per := int64(d.Devices.PerNode)
			if per < 1 {
				per = 1
			}
			v := q.Value() * per
			return &v, v1alpha1.SourceSpec
		}
	}
	key := v1alpha1.LabelDiskReadBytesPerSecond
	if write {
		key = v1alpha1.LabelDiskWriteBytesPerSecond
	}
	if node != nil {
		if q, err := resource.ParseQuantity(node.Labels[key]); err == nil && q.Sign() > 0 {
			v := q.Value()
			return &v, v1alpha1.SourceLabel
		}
	}
	return nil, v1alpha1.SourceUnknown
}

// DocumentedLink is a node's documented link data rate (bytes/s, after encoding) for stage
// 2's comparison, and its source: the spec's servers (else clients) link, else the node's
// labels, else the speed the device probe discovered (NodeLink).
func DocumentedLink(bb *v1alpha1.BurstBuffer, node *corev1.Node, name string) (*int64, string) {
	var lbls map[string]string
	if node != nil {
		lbls = node.Labels
	}
	link, src := NodeLink(bb.Spec.Hardware, lbls, Discovered(bb, name))
	if link == nil {
		return nil, v1alpha1.SourceUnknown
	}
	rate, err := LinkDataRate(link)
	if err != nil || rate <= 0 {
		return nil, v1alpha1.SourceUnknown
	}
	v := int64(rate)
	return &v, src
}
