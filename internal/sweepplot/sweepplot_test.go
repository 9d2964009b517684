package sweepplot

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/beeburst/beeburst/internal/limits"
)

// omnipath is METHOD.md's worked example: the paper's 7x7 write sweep and its stage-1 limit.
func omnipath(t *testing.T) Input {
	t.Helper()
	f, err := os.Open("../../testdata/limits/omnipath-sweep.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pts, err := limits.ParseSweepCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Title: "BurstBuffer omnipath-example", Points: pts, Limits: map[limits.Operation][]StageLimit{
		limits.Write: {{Stage: 1, Limit: limits.Bytes(60606060606), Bottleneck: "servers"}},
	}}
}

// testbed is a small two-operation sweep with stage limits close together, as on the testbed.
func testbed() Input {
	p := func(m, n int, op limits.Operation, b float64) limits.Point {
		return limits.Point{Nodes: m, ProcessesPerNode: n, Operation: op, BytesPerSecond: b}
	}
	return Input{Title: "BurstBuffer default/scratch", Notes: []string{"cut short by the time budget"},
		Points: []limits.Point{
			p(1, 1, limits.Write, 149e6), p(1, 4, limits.Write, 151e6), p(2, 1, limits.Write, 290e6), p(2, 4, limits.Write, 301.583e6),
			p(1, 1, limits.Read, 280e6), p(1, 4, limits.Read, 300e6), p(2, 1, limits.Read, 560e6), p(2, 4, limits.Read, 598e6),
		},
		Limits: map[limits.Operation][]StageLimit{
			limits.Write: {{Stage: 1, Limit: limits.Bytes(300e6), Bottleneck: "devices"}, {Stage: 2, Limit: limits.Bytes(303.376e6), Bottleneck: "devices"}},
			limits.Read:  {{Stage: 1, Limit: limits.Unknown}, {Stage: 2, Limit: limits.Bytes(600.38e6), Bottleneck: "devices"}},
		},
	}
}

// The chart's model is the data: one series per node count, the stage lines at the limits,
// the best point and the plateau where the limits engine puts them.
func TestChartModel(t *testing.T) {
	in := omnipath(t)
	c, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Panels) != 1 || c.Panels[0].Operation != limits.Write {
		t.Fatalf("panels %+v, want write only", c.Panels)
	}
	p := c.Panels[0]
	var nodes []int
	for _, s := range p.Series {
		nodes = append(nodes, s.Nodes)
		if len(s.Points) != 7 {
			t.Errorf("%d nodes: %d points, want 7", s.Nodes, len(s.Points))
		}
		for i, pt := range s.Points {
			if want := int64(s.Nodes) << i; pt.Processes != want {
				t.Errorf("%d nodes: point %d at %d processes, want %d", s.Nodes, i, pt.Processes, want)
			}
		}
	}
	if fmt.Sprint(nodes) != "[1 2 4 8 16 32 64]" {
		t.Errorf("series %v", nodes)
	}
	if s := p.Series[4]; s.Nodes != 16 || s.Points[3].Processes != 128 || s.Points[3].BytesPerSecond != 50011.2e6 {
		t.Errorf("16 nodes x 8 processes: %+v", s.Points[3])
	}
	want := []Line{
		{Stage: 1, BytesPerSecond: 60606060606, Label: "stage 1 limit 60.606 GB/s (servers)"},
		{Stage: 3, BytesPerSecond: 50943.2e6, Label: "stage 3 measured B 50.943 GB/s (32 nodes x 32 processes)"},
	}
	if fmt.Sprint(p.Lines) != fmt.Sprint(want) {
		t.Errorf("lines\n got %+v\nwant %+v", p.Lines, want)
	}
	if p.Best.Nodes != 32 || p.Best.ProcessesPerNode != 32 || p.Plateau.Nodes != 16 || p.Plateau.ProcessesPerNode != 8 ||
		p.Plateau.BytesPerSecond != 50011.2e6 || p.Share != 0.95 {
		t.Errorf("best %+v plateau %+v share %g", p.Best, p.Plateau, p.Share)
	}
	// The same best and plateau as the analysis the table prints.
	h := limits.Hardware{} // only the points matter for best and plateau
	sw, err := limits.AnalyzeSweep(h, limits.Limits{}, in.Points, limits.SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sw.Write.Best != (limits.SweepPoint{Nodes: 32, ProcessesPerNode: 32}) || sw.Write.Plateau != (limits.SweepPoint{Nodes: 16, ProcessesPerNode: 8}) {
		t.Errorf("analysis disagrees: %+v", sw.Write)
	}
	if eta, stage, ok := p.Efficiency(); !ok || stage != 1 || math.Abs(eta-0.8406) > 5e-5 {
		t.Errorf("efficiency %g against stage %d (%v), want 0.8406 against stage 1", eta, stage, ok)
	}

	tb, err := New(testbed())
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Panels) != 2 || tb.Panels[0].Operation != limits.Write || tb.Panels[1].Operation != limits.Read {
		t.Fatalf("panels %+v, want write then read", tb.Panels)
	}
	r := tb.Panels[1]
	if len(r.Lines) != 2 || r.Lines[0].Stage != 2 || len(r.Missing) != 1 || r.Missing[0] != "stage 1 limit unknown" {
		t.Errorf("read: lines %+v missing %v", r.Lines, r.Missing)
	}
	if eta, stage, _ := tb.Panels[0].Efficiency(); stage != 2 || math.Abs(eta-301.583/303.376) > 1e-9 {
		t.Errorf("write efficiency %g against stage %d, want against stage 2", eta, stage)
	}
	if w := tb.Panels[0]; w.Plateau.Nodes != 2 || w.Plateau.ProcessesPerNode != 1 {
		t.Errorf("write plateau %+v, want 2 x 1 (290 MB/s >= 95%% of 301.583)", w.Plateau)
	}
}

var svgPath = regexp.MustCompile(`<path d="([^"]*)" style="([^"]*)"`)

type svgShape struct {
	style string
	pts   [][2]float64
}

// paths reads the SVG's paths: their style and the points of their M, L and A commands.
func paths(t *testing.T, svg string) []svgShape {
	t.Helper()
	var out []svgShape
	for _, m := range svgPath.FindAllStringSubmatch(svg, -1) {
		s := svgShape{style: m[2]}
		for _, cmd := range regexp.MustCompile(`[MLAZ][^MLAZ]*`).FindAllString(m[1], -1) {
			if cmd[0] == 'Z' {
				continue
			}
			fields := strings.Fields(strings.ReplaceAll(cmd[1:], ",", " "))
			if len(fields) < 2 {
				continue
			}
			x, _ := strconv.ParseFloat(fields[len(fields)-2], 64)
			y, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
			s.pts = append(s.pts, [2]float64{x, y})
		}
		out = append(out, s)
	}
	return out
}

func picture(t *testing.T, c *Chart, f Format) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := c.Write(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The rendered SVG puts every line where the data says: the y scale comes from the plateau
// band (share x B to B), and the stage-1 line, the series' points and the plateau's ring
// must sit at their figures on it.
func TestSVGGeometry(t *testing.T) {
	c, err := New(omnipath(t))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(picture(t, c, SVG))
	shapes := paths(t, svg)
	find := func(what string, ok func(svgShape) bool) svgShape {
		t.Helper()
		for _, s := range shapes {
			if ok(s) {
				return s
			}
		}
		t.Fatalf("no %s in the SVG", what)
		return svgShape{}
	}
	band := find("plateau band", func(s svgShape) bool { return strings.Contains(s.style, "fill-opacity:0.1098") })
	yLow, yB := band.pts[0][1], band.pts[2][1]
	const B, share = 50943.2e6, 0.95
	perByte := (yB - yLow) / (B * (1 - share))
	yAt := func(v float64) float64 { return yB + (v-B)*perByte }
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 0.5 {
			t.Errorf("%s at y=%.2f, want %.2f", what, got, want)
		}
	}

	stage1 := find("stage-1 line", func(s svgShape) bool { return strings.Contains(s.style, "stroke:#C81E2D;stroke-width:1.6") })
	near("stage-1 line", stage1.pts[0][1], yAt(60606060606))
	if stage1.pts[0][1] != stage1.pts[1][1] {
		t.Errorf("stage-1 line is not horizontal: %v", stage1.pts)
	}
	stage3 := find("stage-3 line", func(s svgShape) bool { return s.style == "fill:none;stroke:#000000" && len(s.pts) == 2 })
	near("stage-3 line", stage3.pts[0][1], yAt(B))

	// The 1-node series: 905.6 MB/s at 1 process ... 6974.4 MB/s at 64, equally spaced in log2.
	one := find("1-node series", func(s svgShape) bool {
		return strings.Contains(s.style, "stroke:#440154;stroke-width:1.8") && len(s.pts) == 7
	})
	for i, v := range []float64{905.6e6, 1878.4e6, 3831.2e6, 6731.8e6, 6900.8e6, 6944.8e6, 6974.4e6} {
		near(fmt.Sprintf("1 node x %d processes", 1<<i), one.pts[i][1], yAt(v))
	}
	dx := one.pts[1][0] - one.pts[0][0]
	xAt := func(processes float64) float64 { return one.pts[0][0] + math.Log2(processes)*dx }

	// The plateau's ring (radius 8) is centred on 16 x 8 = 128 processes, 50.011 GB/s.
	ring := find("plateau ring", func(s svgShape) bool {
		return strings.Contains(s.style, "stroke-width:2") && len(s.pts) == 3 && s.pts[0][0]-s.pts[1][0] == 16
	})
	near("plateau ring centre (x)", ring.pts[0][0]-8, xAt(128))
	near("plateau ring centre (y)", ring.pts[0][1], yAt(50011.2e6))

	for _, text := range []string{
		"BurstBuffer omnipath-example", "Write: aggregate bandwidth against client processes, one line per node count",
		"stage 1 limit 60.606 GB/s (servers)", "stage 3 measured B 50.943 GB/s (32 nodes x 32 processes)",
		">1 node<", ">64 nodes<", "plateau (95% of B)", "from 16 nodes x 8 processes", "= 128 processes",
		"plateau: 50.011 GB/s (98% of B)", "efficiency B / stage 1 limit: 0.84", ">60 GB/s<", ">4096<",
		"client processes (nodes x processes per node), log scale",
	} {
		if !strings.Contains(svg, text) {
			t.Errorf("SVG lacks %q", text)
		}
	}
	if strings.Contains(svg, "Read:") {
		t.Error("a read panel without read points")
	}
}

func TestRenderPNGAndSVG(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     Input
		panels int
		texts  []string
	}{
		{"omnipath", omnipath(t), 1, nil},
		{"testbed", testbed(), 2, []string{"Read: aggregate", "cut short by the time budget", "stage 1 limit unknown",
			"stage 2 limit 600.38 MB/s (devices)", "from 2 nodes x 1 process<", "efficiency B / stage 2 limit: 0.99"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(picture(t, c, PNG)))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != 1200 || b.Dy() < 560*tc.panels || b.Dy() > 760*tc.panels {
				t.Errorf("PNG is %dx%d for %d panels", b.Dx(), b.Dy(), tc.panels)
			}
			svg := string(picture(t, c, SVG))
			if !strings.HasPrefix(svg, "<?xml") || !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") {
				t.Errorf("not an SVG document: %.80s...", svg)
			}
			for _, text := range tc.texts {
				if !strings.Contains(svg, text) {
					t.Errorf("SVG lacks %q", text)
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	good := testbed()
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"no points", func(in *Input) { in.Points = nil }, "no measured points"},
		{"zero nodes", func(in *Input) { in.Points[0].Nodes = 0 }, "sweep point 1: nodes must be from 1"},
		{"NaN", func(in *Input) { in.Points[2].BytesPerSecond = math.NaN() }, "sweep point 3: bytesPerSecond must be a non-negative number"},
		{"negative", func(in *Input) { in.Points[2].BytesPerSecond = -1 }, "non-negative"},
		{"absurd", func(in *Input) { in.Points[2].BytesPerSecond = 1e30 }, "faster than any real hardware"},
		{"operation", func(in *Input) { in.Points[1].Operation = "append" }, `operation must be write or read, not "append"`},
		{"twice", func(in *Input) { in.Points = append(in.Points, in.Points[0]) }, "sweep point 9: write at 1 node x 1 process is given twice"},
		{"stage", func(in *Input) { in.Limits[limits.Write] = []StageLimit{{Stage: 3, Limit: limits.Bytes(1)}} }, "stage 1 or 2, not 3"},
		{"limit", func(in *Input) {
			in.Limits[limits.Write] = []StageLimit{{Stage: 1, Limit: limits.Bytes(math.Inf(1))}}
		}, "stage 1 limit: +Inf is not a finite number"},
		{"share", func(in *Input) { in.PlateauShare = 1.5 }, "plateau share"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testbed()
			in.Points = append([]limits.Point(nil), good.Points...)
			tc.edit(&in)
			_, err := New(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	for name, want := range map[string]string{
		"sweep.png": "", "SWEEP.SVG": "", "a/b.svg": "", "sweep.jpg": "cannot draw .jpg", "sweep": "must end in .png or .svg",
		"": "needs a file name",
	} {
		f, err := FormatOf(name)
		if want == "" {
			if err != nil || (f != PNG && f != SVG) {
				t.Errorf("FormatOf(%q) = %q, %v", name, f, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FormatOf(%q): error %v, want %q", name, err, want)
		}
	}
	c, err := New(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(&bytes.Buffer{}, "gif"); err == nil || !strings.Contains(err.Error(), `"gif"`) {
		t.Errorf("gif: %v", err)
	}
}
