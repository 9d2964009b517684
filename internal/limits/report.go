package limits

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Report is everything known about a burst buffer's limits, stage by stage. Every stage but
// the first is optional: the estimate command fills stages 1, 3 and 4 from files; the limits
// command of the plugin fills all four from a live object's status.
type Report struct {
	// Title is the first line, e.g. "BurstBuffer omnipath-example".
	Title string
	// Summary lines describe the input (nodes, links, mode).
	Summary []string
	// Estimated is stage 1, from documented figures.
	Estimated *Limits
	// Components is stage 2: the limits recomputed from measured component figures.
	Components *Limits
	// ComponentNodes are stage 2's per-node figures, documented beside measured.
	ComponentNodes []NodeComponents
	// Sweep is stage 3.
	Sweep *Sweep
	// Monitoring is stage 4's per-node figures; Stragglers their verdict.
	Monitoring []NodeFigure
	Stragglers *Stragglers
	// Warnings are all findings, in order.
	Warnings []Warning
	// SweepPoints, when set, are printed as stage 3's grid (WriteSweepGrid) before the
	// warnings: the plugin's -o wide.
	SweepPoints []Point
}

// NodeComponents is one node's stage-2 figures.
type NodeComponents struct {
	Node        string
	Network     ComponentFigure
	DeviceWrite ComponentFigure
	DeviceRead  ComponentFigure
}

// ComponentFigure is a documented figure beside its measurement.
type ComponentFigure struct {
	Documented Figure
	Measured   Figure
}

func (c ComponentFigure) String() string {
	if !c.Documented.Known() && !c.Measured.Known() {
		return "-"
	}
	s := c.Documented.String() + " -> " + c.Measured.String()
	if c.Documented.Known() && c.Measured.Known() && c.Documented.v > 0 {
		s += fmt.Sprintf(" (%+.0f%%)", (c.Measured.v/c.Documented.v-1)*100)
	}
	return s
}

// Document is the JSON form of a report: the estimate command's -o json contract.
type Document struct {
	Name       string              `json:"name,omitempty"`
	Mode       Mode                `json:"mode"`
	Write      OperationDocument   `json:"write"`
	Read       OperationDocument   `json:"read"`
	Components *Limits             `json:"components,omitempty"`
	Monitoring *MonitoringDocument `json:"monitoring,omitempty"`
	Warnings   []Warning           `json:"warnings"`
}

// OperationDocument is one operation's stage-1 limit with its stage-3 measurement.
type OperationDocument struct {
	OperationLimit
	Measured *SweepResult `json:"measured,omitempty"`
}

// MonitoringDocument is stage 4 in JSON.
type MonitoringDocument struct {
	Nodes      []NodeFigure `json:"nodes"`
	Stragglers []string     `json:"stragglers"`
}

// Document builds the JSON form; name goes to "name".
func (r Report) Document(name string) Document {
	d := Document{Name: name, Components: r.Components, Warnings: r.Warnings}
	if d.Warnings == nil {
		d.Warnings = []Warning{}
	}
	if r.Estimated != nil {
		d.Mode = r.Estimated.Mode
		d.Write.OperationLimit = r.Estimated.Write
		d.Read.OperationLimit = r.Estimated.Read
	}
	if r.Sweep != nil {
		d.Write.Measured = r.Sweep.Write
		d.Read.Measured = r.Sweep.Read
	}
	if len(r.Monitoring) > 0 {
		m := &MonitoringDocument{Nodes: r.Monitoring, Stragglers: []string{}}
		if r.Stragglers != nil && r.Stragglers.Nodes != nil {
			m.Stragglers = r.Stragglers.Nodes
		}
		d.Monitoring = m
	}
	return d
}

// WriteTable renders the report for humans: for each operation a table with one column per
// stage, so that each stage's figure stands beside the previous one, then the formulas, the
// per-node figures and the warnings.
func WriteTable(w io.Writer, r Report) error {
	ew := &errWriter{w: w}
	if r.Title != "" {
		ew.printf("%s\n", r.Title)
	}
	for _, s := range r.Summary {
		ew.printf("  %s\n", s)
	}
	for _, op := range Operations {
		ew.printf("\n")
		writeOperation(ew, r, op)
	}
	if len(r.ComponentNodes) > 0 {
		ew.printf("\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STAGE 2 COMPONENTS\tNETWORK (DOCUMENTED -> MEASURED)\tDEVICE WRITE\tDEVICE READ")
		for _, n := range r.ComponentNodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Node, n.Network, n.DeviceWrite, n.DeviceRead)
		}
		_ = tw.Flush()
	}
	if len(r.Monitoring) > 0 {
		ew.printf("\n")
		writeMonitoring(ew, r)
	}
	if len(r.SweepPoints) > 0 {
		if err := WriteSweepGrid(ew, r.SweepPoints, 0); err != nil && ew.err == nil {
			return err
		}
	}
	ew.printf("\nWARNINGS\n")
	if len(r.Warnings) == 0 {
		ew.printf("  none\n")
	}
	for _, wn := range r.Warnings {
		ew.printf("  %s: %s\n", wn.Reason, wn.Message)
	}
	return ew.err
}

func writeOperation(ew *errWriter, r Report, op Operation) {
	type column struct {
		title string
		cell  func(row string) string
	}
	var cols []column
	if r.Estimated != nil {
		ol := r.Estimated.For(op)
		cols = append(cols, column{"STAGE 1 ESTIMATED", func(row string) string { return limitCell(ol, row) }})
	}
	if r.Components != nil {
		ol := r.Components.For(op)
		cols = append(cols, column{"STAGE 2 COMPONENTS", func(row string) string { return limitCell(ol, row) }})
	}
	var sr *SweepResult
	if r.Sweep != nil {
		sr = r.Sweep.For(op)
	}
	if sr != nil {
		cols = append(cols, column{"STAGE 3 SWEEP", func(row string) string { return sweepCell(sr, row) }})
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	header := []string{strings.ToUpper(string(op))}
	for _, c := range cols {
		header = append(header, c.title)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	rows := []struct{ key, label string }{
		{"clients", "clients Bc"}, {"servers", "servers Bs"}, {"network", "network Bnet"},
		{"devices", "devices Bd"}, {"limit", "limit"}, {"bottleneck", "bottleneck"},
		{"best", "measured B"}, {"efficiency", "efficiency B/limit"}, {"plateau", "plateau (95% of B)"},
		{"parallelism", "parallelism P"},
	}
	for _, row := range rows {
		cells := []string{row.label}
		empty := true
		for _, c := range cols {
			v := c.cell(row.key)
			if v != "" {
				empty = false
			} else {
				v = "-"
			}
			cells = append(cells, v)
		}
		if !empty {
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
	}
	_ = tw.Flush()
	if r.Estimated != nil {
		writeFormula(ew, "stage 1 formula", r.Estimated.For(op).Formula)
	}
	if r.Components != nil {
		writeFormula(ew, "stage 2 formula", r.Components.For(op).Formula)
	}
	if sr == nil && r.Sweep != nil {
		ew.printf("  stage 3: no %s points measured\n", op)
	}
}

func writeFormula(ew *errWriter, title, formula string) {
	if formula == "" {
		return
	}
	ew.printf("  %s:\n", title)
	for _, part := range strings.Split(formula, "; ") {
		ew.printf("    %s\n", part)
	}
}

func limitCell(ol OperationLimit, row string) string {
	switch row {
	case "clients":
		return ol.Clients.String()
	case "servers":
		return ol.Servers.String()
	case "network":
		return ol.Network.String()
	case "devices":
		return ol.Devices.String()
	case "limit":
		return ol.Limit.String()
	case "bottleneck":
		return string(ol.Bottleneck)
	case "parallelism":
		if ol.ParallelismLimit == nil {
			return ""
		}
		// C = link / N, so P / N is the number of client nodes it takes.
		return fmt.Sprintf("%d processes", *ol.ParallelismLimit)
	}
	return ""
}

func sweepCell(sr *SweepResult, row string) string {
	switch row {
	case "best":
		s := fmt.Sprintf("%s at %s", sr.BestBytesPerSecond, sr.Best)
		if sr.ExceedsLimit {
			s += " (NOT VALID: above a limit)"
		}
		return s
	case "efficiency":
		if sr.Efficiency == nil {
			return "unknown (no known limit)"
		}
		return fmt.Sprintf("%.4f of %s", float64(*sr.Efficiency), sr.Limit)
	case "plateau":
		s := fmt.Sprintf("%s = %d processes", sr.Plateau, int64(sr.Plateau.Nodes)*int64(sr.Plateau.ProcessesPerNode))
		// A report rebuilt from a status knows the plateau's point but not always its figure
		// (the status does not carry it): no figure then, rather than "unknown".
		if sr.PlateauBytesPerSecond.Known() {
			s += ", " + sr.PlateauBytesPerSecond.String()
		}
		return s
	case "parallelism":
		if sr.ParallelismLimit == nil {
			return ""
		}
		return fmt.Sprintf("%d processes at the plateau's %d per node", *sr.ParallelismLimit, sr.Plateau.ProcessesPerNode)
	}
	return ""
}

func writeMonitoring(ew *errWriter, r Report) {
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE 4 MONITORING\tOPERATION\tBYTES/S\tVS MEDIAN\t")
	figs := append([]NodeFigure(nil), r.Monitoring...)
	sort.SliceStable(figs, func(i, j int) bool {
		if figs[i].Operation != figs[j].Operation {
			return figs[i].Operation == Write
		}
		return figs[i].Node < figs[j].Node
	})
	flagged := map[string]bool{} // operation + node with a Stragglers warning
	if r.Stragglers != nil {
		for _, wn := range r.Stragglers.Warnings {
			flagged[string(wn.Operation)+"\x00"+wn.Node] = true
		}
	}
	for _, f := range figs {
		vs, mark := "-", ""
		if r.Stragglers != nil {
			if med, ok := r.Stragglers.Medians[f.Operation]; ok && med > 0 {
				vs = fmt.Sprintf("%+.0f%%", (f.BytesPerSecond.Value()/med-1)*100)
				if flagged[string(f.Operation)+"\x00"+f.Node] {
					mark = "straggler"
					if f.BytesPerSecond.Value() > med {
						mark = "above median"
					}
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Node, f.Operation, f.BytesPerSecond, vs, mark)
	}
	_ = tw.Flush()
}

// errWriter keeps the first write error so the renderer can write without checking each line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) {
	fmt.Fprintf(e, format, args...)
}

// ReportWriter is an errWriter for other packages' renderers (internal/sizing): Printf
// without checking each line, Err at the end.
type ReportWriter struct{ ew errWriter }

// NewReportWriter writes to w.
func NewReportWriter(w io.Writer) *ReportWriter { return &ReportWriter{ew: errWriter{w: w}} }

func (r *ReportWriter) Write(p []byte) (int, error) { return r.ew.Write(p) }

// Printf writes unless an earlier write failed.
func (r *ReportWriter) Printf(format string, args ...any) { r.ew.printf(format, args...) }

// Err is the first write error.
func (r *ReportWriter) Err() error { return r.ew.err }

// Describe summarises the input for the report's header: one line per side.
func (h Hardware) Describe() []string {
	var out []string
	ns := len(h.Servers)
	switch h.Mode() {
	case ModeLocal:
		out = append(out, fmt.Sprintf("mode: local - private node-local scratch on %d nodes, no data crosses the network", ns))
	case ModeColocated:
		out = append(out, fmt.Sprintf("mode: co-located - clients and servers are the same %d nodes (a burst buffer)", ns))
	default:
		out = append(out, "mode: shared - clients and servers are different nodes")
	}
	if !h.Local {
		out = append(out, fmt.Sprintf("clients: %d nodes x %d processes, link %s per node", h.Clients.Nodes,
			h.Clients.ProcessesPerNode, h.Clients.Link))
	}
	if ns > 0 {
		sum, text := serversLinks(h)
		links := ""
		if !h.Local && h.Servers[0].Link.Known() {
			links = fmt.Sprintf(", links %s = %s", text, FormatBytesPerSecond(sum))
		}
		role := "servers"
		if h.Local {
			role = "nodes"
		}
		s0 := h.Servers[0]
		devices := fmt.Sprintf("%d devices per node, write %s, read %s per device", s0.Devices, s0.DeviceWrite, s0.DeviceRead)
		if !s0.DeviceWrite.Known() && !s0.DeviceRead.Known() {
			devices = "devices not given (not a known limit)"
		}
		out = append(out, fmt.Sprintf("%s: %d nodes%s; %s", role, ns, links, devices))
	}
	if !h.Local {
		fabric := "fabric: non-blocking"
		if h.Fabric.Bisection.Known() {
			fabric = "fabric: bisection " + h.Fabric.Bisection.String()
		}
		if h.Fabric.ServiceTrafficBytesPerSecond > 0 {
			fabric += ", service traffic " + FormatBytesPerSecond(h.Fabric.ServiceTrafficBytesPerSecond)
		}
		out = append(out, fabric)
	}
	return out
}

// WriteSweepGrid renders measured sweep points as one grid per operation, M nodes down and
// N processes per node across (METHOD.md's table), marking the best point with * and the
// plateau (the first point reaching share x B; 0 means DefaultPlateauShare) with +.
// Points are checked as AnalyzeSweep checks them.
func WriteSweepGrid(w io.Writer, points []Point, share float64) error {
	if share == 0 {
		share = DefaultPlateauShare
	}
	byOp := map[Operation][]Point{}
	for i, p := range points {
		if err := p.validate(); err != nil {
			return fmt.Errorf("sweep point %d: %w", i+1, err)
		}
		byOp[p.Operation] = append(byOp[p.Operation], p)
	}
	ew := &errWriter{w: w}
	for _, op := range Operations {
		pts := byOp[op]
		if len(pts) == 0 {
			continue
		}
		best, plateau := BestAndPlateau(pts, share)
		var ms, ns []int
		cell := map[[2]int]string{}
		for _, p := range pts {
			if _, ok := cell[[2]int{p.Nodes, 0}]; !ok {
				cell[[2]int{p.Nodes, 0}] = ""
				ms = append(ms, p.Nodes)
			}
			if _, ok := cell[[2]int{0, p.ProcessesPerNode}]; !ok {
				cell[[2]int{0, p.ProcessesPerNode}] = ""
				ns = append(ns, p.ProcessesPerNode)
			}
			mark := ""
			if p == best {
				mark += "*"
			}
			if p == plateau {
				mark += "+"
			}
			cell[[2]int{p.Nodes, p.ProcessesPerNode}] = FormatBytesPerSecond(p.BytesPerSecond) + mark
		}
		sort.Ints(ms)
		sort.Ints(ns)
		ew.printf("\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		header := []string{"STAGE 3 SWEEP " + strings.ToUpper(string(op))}
		for _, n := range ns {
			header = append(header, fmt.Sprintf("N=%d", n))
		}
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, m := range ms {
			row := []string{fmt.Sprintf("M=%d", m)}
			for _, n := range ns {
				c, ok := cell[[2]int{m, n}]
				if !ok {
					c = "-"
				}
				row = append(row, c)
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		_ = tw.Flush()
		ew.printf("  M nodes x N processes per node; * best B, + plateau (the first point reaching %.0f%% of B)\n", share*100)
	}
	return ew.err
}
