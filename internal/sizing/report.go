package sizing

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/beeburst/beeburst/internal/limits"
)

// maxNodeRows bounds the node table: runs of nodes with the same figures share a row, and
// past this many rows the rest is counted.
const maxNodeRows = 12

// WriteDecision prints a decision for people: the target, the decision in sentences, each
// chosen node's contribution (nodes with the same figures share a row), the counts around
// the choice, and the notes. now ages measured figures.
func WriteDecision(w io.Writer, title string, d Decision, now time.Time) error {
	ew := limits.NewReportWriter(w)
	if title != "" {
		ew.Printf("%s\n", title)
	}
	ew.Printf("  target: %s\n", targetText(d.Target))
	what := fmt.Sprintf("%s (chosen among %s)", plural(d.Count, "node"), plural(d.Candidates, "candidate"))
	if d.Mode == ModeCheck {
		what = fmt.Sprintf("%s (given: checked, not chosen)", plural(d.Count, "node"))
	}
	if d.MetadataServers > 0 {
		what += fmt.Sprintf(", %s", plural(d.MetadataServers, "metadata server"))
	}
	ew.Printf("  decision: %s - %s\n\n", what, stateText(d))
	ew.Printf("%s\n", wrap(d.Message, 100, ""))

	if len(d.Nodes) > 0 {
		ew.Printf("\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		cols := []string{"NODE"}
		type col struct {
			get   func(NodeUse) *Evidence
			bytes bool
		}
		var cs []col
		add := func(name string, get func(NodeUse) *Evidence, bytes bool) {
			for _, n := range d.Nodes {
				if get(n) != nil {
					cols = append(cols, name)
					cs = append(cs, col{get, bytes})
					return
				}
			}
		}
		add("DEVICE WRITE", func(n NodeUse) *Evidence { return n.Write }, false)
		add("DEVICE READ", func(n NodeUse) *Evidence { return n.Read }, false)
		add("LINK", func(n NodeUse) *Evidence { return n.Link }, false)
		add("CAPACITY", func(n NodeUse) *Evidence { return n.Capacity }, true)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		row := func(n NodeUse) []string {
			var cells []string
			for _, c := range cs {
				e := c.get(n)
				if e == nil {
					cells = append(cells, "-")
					continue
				}
				cells = append(cells, e.describe(now, c.bytes))
			}
			return cells
		}
		rows := 0
		for i := 0; i < len(d.Nodes); {
			j := i + 1
			cells := row(d.Nodes[i])
			for j < len(d.Nodes) && strings.Join(row(d.Nodes[j]), "\t") == strings.Join(cells, "\t") && d.Nodes[j].Workload == d.Nodes[i].Workload {
				j++
			}
			if rows == maxNodeRows {
				fmt.Fprintf(tw, "... and %s more\n", plural(len(d.Nodes)-i, "node"))
				break
			}
			name := d.Nodes[i].Name
			if j-i > 1 {
				name = fmt.Sprintf("%s .. %s (%d)", d.Nodes[i].Name, d.Nodes[j-1].Name, j-i)
			}
			if d.Nodes[i].Workload {
				name += " *"
			}
			fmt.Fprintln(tw, name+"\t"+strings.Join(cells, "\t"))
			rows++
			i = j
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, n := range d.Nodes {
			if n.Workload {
				ew.Printf("  * a node of the workload\n")
				break
			}
		}
	}

	if len(d.Steps) > 0 && len(d.Target.operations())+boolInt(d.Target.Capacity > 0) > 0 {
		ew.Printf("\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		head := []string{"NODES"}
		for _, op := range d.Target.operations() {
			head = append(head, strings.ToUpper(string(op))+" LIMIT")
		}
		if d.Target.Capacity > 0 {
			head = append(head, "CAPACITY")
		}
		head = append(head, "MEETS THE TARGET")
		fmt.Fprintln(tw, strings.Join(head, "\t"))
		prev := 0
		for _, st := range d.Steps {
			if prev > 0 && st.Nodes > prev+1 {
				fmt.Fprintln(tw, "...")
			}
			prev = st.Nodes
			cells := []string{fmt.Sprint(st.Nodes)}
			for _, op := range d.Target.operations() {
				f, b := st.Write, st.WriteBottleneck
				if op == limits.Read {
					f, b = st.Read, st.ReadBottleneck
				}
				c := f.String()
				if f.Known() {
					c += " (" + string(b) + ")"
				}
				cells = append(cells, c)
			}
			if d.Target.Capacity > 0 {
				c := "unknown"
				if st.Capacity > 0 {
					c = limits.FormatCapacity(st.Capacity)
				}
				cells = append(cells, c)
			}
			meets := "no"
			switch {
			case st.Meets:
				meets = fmt.Sprintf("yes, with the %.0f%% margin", d.Target.Margin*100)
			case st.MeetsBare:
				meets = "only without the margin"
			}
			if st.Nodes == d.Count {
				meets += "  <- chosen"
				if d.Mode == ModeCheck {
					meets = strings.Replace(meets, "chosen", "given", 1)
				}
			}
			cells = append(cells, meets)
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(d.Notes) > 0 {
		ew.Printf("\nNOTES\n")
		for _, n := range d.Notes {
			ew.Printf("%s\n", wrap(n, 100, "  "))
		}
	}
	return ew.Err()
}

// WriteVerdict prints a verdict after stage 3 for people.
func WriteVerdict(w io.Writer, v Verdict) error {
	ew := limits.NewReportWriter(w)
	ew.Printf("\nVERDICT (stage 3): %s\n", v.State)
	var parts []string
	for _, op := range limits.Operations {
		if ov := v.For(op); ov != nil {
			parts = append(parts, ov.Message)
		}
	}
	if v.Capacity != nil {
		parts = append(parts, v.Capacity.Message)
	}
	if v.Metadata != nil {
		parts = append(parts, v.Metadata.Message)
	}
	for _, p := range parts {
		ew.Printf("%s\n", wrap(p, 100, "  "))
	}
	return ew.Err()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// targetText is "write 250 MB/s, read 500 MB/s, capacity 1 TiB; margin 10%".
func targetText(t Target) string {
	var parts []string
	for _, op := range t.operations() {
		parts = append(parts, fmt.Sprintf("%s %s", op, limits.FormatBytesPerSecond(t.Bandwidth(op))))
	}
	if t.Capacity > 0 {
		parts = append(parts, "capacity "+limits.FormatCapacity(t.Capacity))
	}
	if t.MetadataOps > 0 {
		parts = append(parts, "metadata "+formatCount(t.MetadataOps)+" creates/s")
	}
	return fmt.Sprintf("%s; margin %.0f%%", strings.Join(parts, ", "), t.Margin*100)
}

func stateText(d Decision) string {
	switch {
	case d.State == StatePredicted && d.ThinMargin:
		return "predicted to meet the target, under the margin"
	case d.State == StatePredicted:
		return "predicted to meet the target"
	case d.State == StateUnreachable:
		return "cannot meet the target (" + d.Cause + ")"
	}
	return "unknown (" + d.Cause + ")"
}

// wrap breaks s into lines of at most width characters at spaces, each prefixed.
func wrap(s string, width int, prefix string) string {
	var lines []string
	line := prefix
	for _, word := range strings.Fields(s) {
		if len(line) > len(prefix) && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = prefix + "  "
		}
		if len(line) > len(prefix) && !strings.HasSuffix(line, "  ") {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}
