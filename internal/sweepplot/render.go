package sweepplot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/beeburst/beeburst/internal/limits"
)

// Sizes of the picture. A panel is wide enough for a 13-step log axis (1..4096 processes)
// with every tick labelled; PNGs are drawn at dpi so that the README's copy is sharp.
const (
	width       = 10 * vg.Inch
	panelHeight = 5.6 * vg.Inch
	dpi         = 120
)

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
	grey     = color.RGBA{R: 90, G: 90, B: 90, A: 255}
	// Stage colours: stage 1 (theory) red, stage 2 (components) orange, stage 3 (the best
	// measured B) black; the plateau band is a light grey between share x B and B.
	stageColors = map[int]color.Color{
		1: color.RGBA{R: 200, G: 30, B: 45, A: 255},
		2: color.RGBA{R: 225, G: 120, B: 0, A: 255},
		3: color.RGBA{A: 255},
	}
	stageDashes = map[int][]vg.Length{
		1: {vg.Points(7), vg.Points(3)},
		2: {vg.Points(2), vg.Points(2)},
		3: nil,
	}
	bandColor = color.NRGBA{R: 0, G: 0, B: 0, A: 28}
)

func style(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: font.From(f, size), Handler: plot.DefaultTextHandler}
}

func render(c *Chart, w io.Writer, f Format) error {
	headerLines := []string{}
	if c.Title != "" {
		headerLines = append(headerLines, c.Title)
	}
	headerLines = append(headerLines, c.Notes...)
	header := vg.Points(8)
	titleStyle := style(sansBold, 14, color.Black)
	noteStyle := style(sans, 11, grey)
	for i, l := range headerLines {
		if i == 0 {
			header += titleStyle.Height(l) + vg.Points(3)
		} else {
			header += noteStyle.Height(l) + vg.Points(2)
		}
	}
	height := header + panelHeight*vg.Length(len(c.Panels))

	var canvas vg.CanvasWriterTo
	switch f {
	case PNG:
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))}
	case SVG:
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("cannot draw format %q: png or svg", f)
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	y := dc.Max.Y - vg.Points(6)
	for i, l := range headerLines {
		sty := noteStyle
		if i == 0 {
			sty = titleStyle
		}
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
		dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Points(12), Y: y}, l)
		y -= sty.Height(l) + vg.Points(2)
	}

	body := dc
	body.Max.Y -= header
	plots := make([][]*plot.Plot, len(c.Panels))
	sides := make([]side, len(c.Panels))
	for i, p := range c.Panels {
		pl, sd, err := newPlot(p)
		if err != nil {
			return err
		}
		plots[i], sides[i] = []*plot.Plot{pl}, sd
	}
	// Each panel: the plot on the left, its legend and figures in a column on the right, so
	// that neither hides a line.
	tiles := draw.Tiles{Rows: len(c.Panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(6),
		PadLeft: vg.Points(6), PadRight: sideWidth, PadY: vg.Points(18)}
	for i, row := range plot.Align(plots, tiles, body) {
		plots[i][0].Draw(row[0])
		col := row[0]
		col.Min.X, col.Max.X = col.Max.X+vg.Points(12), dc.Max.X-vg.Points(6)
		col.Max.Y -= plots[i][0].Title.TextStyle.Height(plots[i][0].Title.Text) + plots[i][0].Title.Padding
		sides[i].draw(col)
	}
	_, err := canvas.WriteTo(w)
	return err
}

// sideWidth is the column right of each plot with the legend and the stage-3 figures.
const sideWidth = 2.45 * vg.Inch

// side is what the column right of a plot shows: the legend, then lines of text.
type side struct {
	legend plot.Legend
	facts  []string
}

func (s side) draw(c draw.Canvas) {
	s.legend.Top, s.legend.Left = true, true
	s.legend.Draw(c)
	_, lh := legendSize(&s.legend)
	sty := style(sans, 10, color.Black)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	y := c.Max.Y - lh - vg.Points(14)
	for _, f := range s.facts {
		c.FillText(sty, vg.Point{X: c.Min.X, Y: y}, f)
		y -= sty.Height(f) + vg.Points(3)
	}
}

// newPlot builds one panel's plot: the plateau band, the stage lines, the series, the
// plateau and best markers, then the labels and the legend where they hide the least data.
func newPlot(p Panel) (*plot.Plot, side, error) {
	pl := plot.New()
	pl.Title.Text = fmt.Sprintf("%s: aggregate bandwidth against client processes, one line per node count",
		strings.ToUpper(string(p.Operation[:1]))+string(p.Operation[1:]))
	pl.Title.TextStyle = style(sansBold, 12, color.Black)
	pl.Title.TextStyle.XAlign, pl.Title.TextStyle.YAlign = draw.XCenter, draw.YTop
	pl.Title.Padding = vg.Points(8)

	xmin, xmax := int64(math.MaxInt64), int64(0)
	ymax := 0.0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			xmin, xmax = min(xmin, pt.Processes), max(xmax, pt.Processes)
			ymax = math.Max(ymax, pt.BytesPerSecond)
		}
	}
	for _, l := range p.Lines {
		ymax = math.Max(ymax, l.BytesPerSecond)
	}
	if ymax <= 0 {
		ymax = 1 // all points measured 0: still a readable empty axis
	}
	lo, hi := pow2Floor(xmin), pow2Ceil(xmax)
	if lo == hi {
		lo, hi = max(1, lo/2), hi*2
	}
	// The x axis is log2(processes) on a linear scale, labelled in processes (gonum's
	// LogScale misplaces a centred axis label's glyph box, which shrinks the plot).
	pl.X.Min, pl.X.Max = lg(lo)-0.2, lg(hi)+0.2
	pl.X.Tick.Marker = pow2Ticks{}
	pl.X.Label.Text = "client processes (nodes x processes per node), log scale"
	// Room above the highest line for its label, and for stacked labels of close lines.
	pl.Y.Min, pl.Y.Max = 0, ymax*(1.1+0.05*float64(len(p.Lines)))
	pl.Y.Tick.Marker = bandwidthTicks{}
	pl.Y.Label.Text = "aggregate " + string(p.Operation) + " bandwidth"
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.RGBA{R: 225, G: 225, B: 225, A: 255}
	grid.Horizontal.Color = grid.Vertical.Color
	pl.Add(grid)

	// The plateau: the band from share x B up to B, and the first point that reaches it.
	band, err := plotter.NewPolygon(plotter.XYs{{X: pl.X.Min, Y: p.Share * p.Best.BytesPerSecond},
		{X: pl.X.Max, Y: p.Share * p.Best.BytesPerSecond}, {X: pl.X.Max, Y: p.Best.BytesPerSecond},
		{X: pl.X.Min, Y: p.Best.BytesPerSecond}})
	if err != nil {
		return nil, side{}, err
	}
	band.Color, band.LineStyle.Width = bandColor, 0
	pl.Add(band)

	for _, l := range p.Lines {
		hl, err := plotter.NewLine(plotter.XYs{{X: pl.X.Min, Y: l.BytesPerSecond}, {X: pl.X.Max, Y: l.BytesPerSecond}})
		if err != nil {
			return nil, side{}, err
		}
		hl.Color, hl.Dashes, hl.Width = stageColors[l.Stage], stageDashes[l.Stage], vg.Points(1.6)
		if l.Stage == 3 {
			hl.Width = vg.Points(1)
		}
		pl.Add(hl)
	}

	leg := plot.NewLegend()
	leg.TextStyle = style(sans, 10, color.Black)
	leg.ThumbnailWidth = vg.Points(26)
	leg.Padding = vg.Points(3)
	for i, s := range p.Series {
		xys := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xys[j] = plotter.XY{X: lg(pt.Processes), Y: pt.BytesPerSecond}
		}
		ln, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, side{}, err
		}
		col := seriesColor(i, len(p.Series))
		ln.Color, ln.Width = col, vg.Points(1.8)
		sc.Color, sc.Shape, sc.Radius = col, shape(i), vg.Points(3.2)
		pl.Add(ln, sc)
		name := strconv.Itoa(s.Nodes) + " nodes"
		if s.Nodes == 1 {
			name = "1 node"
		}
		leg.Add(name, ln, sc)
	}
	plat, err := plotter.NewScatter(plotter.XYs{{X: lg(p.Plateau.Processes()), Y: p.Plateau.BytesPerSecond}})
	if err != nil {
		return nil, side{}, err
	}
	plat.Shape, plat.Radius, plat.Color = thickRing{}, vg.Points(8), color.Black
	best, err := plotter.NewScatter(plotter.XYs{{X: lg(p.Best.Processes()), Y: p.Best.BytesPerSecond}})
	if err != nil {
		return nil, side{}, err
	}
	best.Shape, best.Radius, best.Color = thickPlus{}, vg.Points(9), color.Black
	pl.Add(plat, best)
	// The legend's samples are smaller than the markers, so that entries do not overlap.
	platThumb, bestThumb := *plat, *best
	platThumb.Radius, bestThumb.Radius = vg.Points(5), vg.Points(5)
	leg.Add(fmt.Sprintf("plateau (%.0f%% of B)", p.Share*100), bandThumb{}, &platThumb)
	leg.Add("best B", &bestThumb)
	facts := []string{
		"best B: " + limits.FormatBytesPerSecond(p.Best.BytesPerSecond),
		"  at " + limits.SweepPoint{Nodes: p.Best.Nodes, ProcessesPerNode: p.Best.ProcessesPerNode}.String(),
		fmt.Sprintf("plateau: %s (%.0f%% of B)", limits.FormatBytesPerSecond(p.Plateau.BytesPerSecond),
			100*p.Plateau.BytesPerSecond/nonZero(p.Best.BytesPerSecond)),
		"  from " + limits.SweepPoint{Nodes: p.Plateau.Nodes, ProcessesPerNode: p.Plateau.ProcessesPerNode}.String(),
		fmt.Sprintf("  = %d processes", p.Plateau.Processes()),
	}
	if eff, stage, ok := p.Efficiency(); ok {
		facts = append(facts, fmt.Sprintf("efficiency B / stage %d limit: %.2f", stage, eff))
	}
	if p.NotValid {
		facts = append(facts, "NOT VALID: points above their", "  limit (caching suspected)")
	}
	for _, m := range p.Missing {
		facts = append(facts, m)
	}
	pl.Add(&annotations{panel: p})
	return pl, side{legend: leg, facts: facts}, nil
}

func nonZero(v float64) float64 {
	if v == 0 {
		return 1
	}
	return v
}

// annotations draws the stage lines' labels last, each on a white box, at the place among
// a few candidates that covers the fewest data points and no other label.
type annotations struct {
	panel Panel
}

func (a *annotations) Plot(c draw.Canvas, pl *plot.Plot) {
	tx, ty := pl.Transforms(&c)
	// Obstacles: the series' lines, sampled, in canvas space; the plateau and best markers
	// count many times over, since a label must never hide them.
	var obstacles []vg.Point
	for _, s := range a.panel.Series {
		for j, pt := range s.Points {
			cur := vg.Point{X: tx(lg(pt.Processes)), Y: ty(pt.BytesPerSecond)}
			obstacles = append(obstacles, cur)
			if j > 0 {
				prev := s.Points[j-1]
				p0 := vg.Point{X: tx(lg(prev.Processes)), Y: ty(prev.BytesPerSecond)}
				for k := 1; k < 16; k++ {
					f := vg.Length(k) / 16
					obstacles = append(obstacles, vg.Point{X: p0.X + (cur.X-p0.X)*f, Y: p0.Y + (cur.Y-p0.Y)*f})
				}
			}
		}
	}
	for _, m := range []limits.Point{a.panel.Plateau, a.panel.Best} {
		ctr := vg.Point{X: tx(lg(m.Processes())), Y: ty(m.BytesPerSecond)}
		for _, d := range []vg.Point{{}, {X: -9}, {X: 9}, {Y: -9}, {Y: 9}} {
			for range 50 {
				obstacles = append(obstacles, vg.Point{X: ctr.X + d.X, Y: ctr.Y + d.Y})
			}
		}
	}
	pad, gap := vg.Points(3), vg.Points(2)
	type label struct {
		r  vg.Rectangle
		yl vg.Length
	}
	var placed []label
	// cost: overlapping another label or leaving the plot, then hidden obstacles, then
	// labels in another order than their lines, then the distance from the label's line.
	cost := func(r vg.Rectangle, yl vg.Length) float64 {
		v := 0.0
		for _, o := range obstacles {
			if o.X >= r.Min.X && o.X <= r.Max.X && o.Y >= r.Min.Y && o.Y <= r.Max.Y {
				v += 1000
			}
		}
		for _, q := range placed {
			if r.Min.X < q.r.Max.X && q.r.Min.X < r.Max.X && r.Min.Y < q.r.Max.Y && q.r.Min.Y < r.Max.Y {
				v += 1e7
			}
			if q.yl < yl && r.Min.Y < q.r.Min.Y {
				v += 1e5
			}
		}
		if r.Min.Y < c.Min.Y || r.Max.Y > c.Max.Y {
			v += 1e7
		}
		return v + math.Abs(float64((r.Min.Y+r.Max.Y)/2-yl))
	}

	// Stage-line labels, from the lowest line up: at the line's left or right end, just
	// above or below it, or stacked on the labels of lines close below it, so that labels
	// keep the order of their lines; the colour ties a label to its line.
	lines := append([]Line(nil), a.panel.Lines...)
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].BytesPerSecond < lines[j].BytesPerSecond })
	for _, l := range lines {
		sty := style(sans, 9.5, stageColors[l.Stage])
		if l.Stage == 3 {
			sty = style(sans, 9.5, grey)
		}
		wd, ht := sty.Width(l.Label)+2*pad, sty.Height(l.Label)+2*pad
		yl := ty(l.BytesPerSecond)
		ys := []vg.Length{yl + gap, yl - gap - ht}
		for _, q := range placed {
			ys = append(ys, q.r.Max.Y+gap, q.r.Min.Y-gap-ht)
		}
		var best vg.Rectangle
		bestCost := math.Inf(1)
		for _, y0 := range ys {
			for _, x0 := range []vg.Length{c.Min.X + vg.Points(4), c.Max.X - vg.Points(4) - wd} {
				r := vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x0 + wd, Y: y0 + ht}}
				if k := cost(r, yl); k < bestCost {
					best, bestCost = r, k
				}
			}
		}
		placed = append(placed, label{r: best, yl: yl})
		box(c, best)
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
		c.FillText(sty, vg.Point{X: best.Min.X + pad, Y: best.Min.Y + pad + sty.FontExtents().Descent}, l.Label)
	}
}

// box is a white, thinly outlined rectangle under a label or the legend.
func box(c draw.Canvas, r vg.Rectangle) {
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 230})
	c.Fill(r.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.RGBA{R: 190, G: 190, B: 190, A: 255}, Width: vg.Points(0.5)})
	c.Stroke(r.Path())
}

func legendSize(l *plot.Legend) (w, h vg.Length) {
	// plot.Legend keeps its entries private; its Rectangle gives the size.
	r := l.Rectangle(draw.Canvas{})
	return r.Max.X - r.Min.X, r.Max.Y - r.Min.Y
}

// pow2Ticks are the powers of two on the log2 axis, labelled in processes: 1, 2, 4, ...;
// every other one is labelled when there are more than 14.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for k := math.Max(0, math.Ceil(lo)); k <= hi; k++ {
		ts = append(ts, plot.Tick{Value: k, Label: strconv.FormatInt(int64(1)<<int(k), 10)})
	}
	if len(ts) > 14 {
		for i := range ts {
			if i%2 == 1 {
				ts[i].Label = ""
			}
		}
	}
	return ts
}

// lg is the x coordinate of n processes.
func lg(n int64) float64 { return math.Log2(float64(n)) }

// bandwidthTicks are 4 to 10 labelled ticks at round figures (1, 2, 2.5 or 5 times a power
// of ten), labelled by the plugin's formatter, with an unlabelled tick between each.
type bandwidthTicks struct{}

func (bandwidthTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for i := math.Ceil(lo / step * 2); i*step/2 <= hi*(1+1e-9); i++ {
		v := i * step / 2
		t := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			t.Label = limits.FormatBytesPerSecond(v)
		}
		ts = append(ts, t)
	}
	return ts
}

func pow2Floor(v int64) int64 {
	p := int64(1)
	for p*2 <= v {
		p *= 2
	}
	return p
}

func pow2Ceil(v int64) int64 {
	p := int64(1)
	for p < v {
		p *= 2
	}
	return p
}

// viridis, without its light yellow-green end (too faint on white and on the plateau band): ordered colours for ordered
// node counts, readable with colour-vision deficiencies.
var viridis = []color.RGBA{
	{0x44, 0x01, 0x54, 255}, {0x48, 0x28, 0x78, 255}, {0x3e, 0x49, 0x89, 255}, {0x31, 0x68, 0x8e, 255},
	{0x26, 0x82, 0x8e, 255}, {0x1f, 0x9e, 0x89, 255}, {0x35, 0xb7, 0x79, 255}, {0x6e, 0xce, 0x58, 255},
}

func seriesColor(i, n int) color.Color {
	if n <= 1 {
		return viridis[3]
	}
	t := float64(i) / float64(n-1) * float64(len(viridis)-1)
	k := int(t)
	if k >= len(viridis)-1 {
		return viridis[len(viridis)-1]
	}
	f := t - float64(k)
	a, b := viridis[k], viridis[k+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + (float64(y)-float64(x))*f)) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}

// shapes: filled first, since a hollow marker on a thin line reads as a gap.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{},
	draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}}

func shape(i int) draw.GlyphDrawer { return shapes[i%len(shapes)] }

// thickRing is the plateau's marker: a ring drawn with a thick line around the point.
type thickRing struct{}

func (thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// thickPlus is the best point's marker: a plus drawn with a thick line.
type thickPlus struct{}

func (thickPlus) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls, r := draw.LineStyle{Color: sty.Color, Width: vg.Points(2)}, sty.Radius
	c.StrokeLine2(ls, pt.X-r, pt.Y, pt.X+r, pt.Y)
	c.StrokeLine2(ls, pt.X, pt.Y-r, pt.X, pt.Y+r)
}

// bandThumb is the legend's sample of the plateau band.
type bandThumb struct{}

func (bandThumb) Thumbnail(c *draw.Canvas) {
	c.SetColor(bandColor)
	c.Fill(c.Rectangle.Path())
}
