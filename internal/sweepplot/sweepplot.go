// Package sweepplot draws a stage-3 sweep as a picture: aggregate bandwidth against the
// number of client processes, one line per node count, the limit of every stage drawn
// across it, and the plateau marked. The kubectl plugin uses it for `limits NAME --plot` and
// `estimate --sweep CSV --plot`.
//
// It is split in two on purpose: New turns the figures into a Chart, a plain description of
// what is drawn (series, horizontal lines, the best point, the plateau), which tests check
// against the data; Chart.Write renders it with gonum.org/v1/plot as PNG or SVG. Figures are
// formatted by internal/limits (FormatBytesPerSecond), the same as in every table.
package sweepplot

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/beeburst/beeburst/internal/limits"
)

// Format is an output format of the picture.
type Format string

// The formats New can render.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// FormatOf is the format a file name asks for by its extension (.png or .svg, any case).
func FormatOf(file string) (Format, error) {
	if file == "" {
		return "", errors.New("the plot needs a file name ending in .png or .svg")
	}
	switch ext := strings.ToLower(filepath.Ext(file)); ext {
	case ".png":
		return PNG, nil
	case ".svg":
		return SVG, nil
	case "":
		return "", fmt.Errorf("%s: the plot's file name must end in .png or .svg", file)
	default:
		return "", fmt.Errorf("%s: cannot draw %s; the plot's file name must end in .png or .svg", file, ext)
	}
}

// StageLimit is one stage's limit for one operation, drawn as a horizontal line.
type StageLimit struct {
	// Stage is 1 (estimated from documented figures) or 2 (recomputed from the measured
	// components). Stage 3's line is the sweep's own best B, found from the points.
	Stage int
	// Limit is the figure; an unknown figure draws no line but is named in the caption.
	Limit limits.Figure
	// Bottleneck names the smallest term ("servers", "devices"); may be empty.
	Bottleneck string
}

// Input is what a picture is drawn from.
type Input struct {
	// Title is the first line above the picture, e.g. "BurstBuffer default/scratch".
	Title string
	// Points are the measured sweep points of any operation; each operation with points
	// gets its own panel, write above read.
	Points []limits.Point
	// Limits are the stage-1 and stage-2 limits per operation, in stage order.
	Limits map[limits.Operation][]StageLimit
	// NotValid marks an operation whose analysis found a point above its limit (caching
	// suspected): its panel says so, since its B is not a limit.
	NotValid map[limits.Operation]bool
	// Notes are extra lines under the title (e.g. "cut short by the time budget").
	Notes []string
	// PlateauShare is the share of B that counts as the plateau; 0 means
	// limits.DefaultPlateauShare.
	PlateauShare float64
}

// Chart is what is drawn: one panel per measured operation.
type Chart struct {
	Title  string
	Notes  []string
	Panels []Panel
}

// Panel is one operation's picture.
type Panel struct {
	Operation limits.Operation
	// Series are the sweep's lines, one per node count, by node count.
	Series []Series
	// Lines are the horizontal lines: the stage limits that are known, then stage 3's B.
	Lines []Line
	// Missing names stage limits that are not known (no line drawn), e.g. "stage 1 limit
	// unknown (devices not given)".
	Missing []string
	// Best is where B was measured; Plateau the first point reaching Share x B.
	Best, Plateau limits.Point
	Share         float64
	// NotValid: points above their limit; B is not a limit.
	NotValid bool
}

// Series is the line of one node count M: bandwidth against M x N processes, by N.
type Series struct {
	Nodes  int
	Points []XY
}

// XY is one point of a series: X processes (M x N), Y bytes per second.
type XY struct {
	Processes      int64
	BytesPerSecond float64
}

// Line is a horizontal line across the panel.
type Line struct {
	// Stage is 1, 2 or 3.
	Stage          int
	BytesPerSecond float64
	// Label is drawn above the line's left end, e.g. "stage 1 limit 60.606 GB/s (servers)".
	Label string
}

// New checks the input and describes the picture. Every point must be valid (as
// limits.ParseSweepCSV leaves them), no point may be given twice, and at least one point
// must be given.
func New(in Input) (*Chart, error) {
	if len(in.Points) == 0 {
		return nil, errors.New("the sweep has no measured points: nothing to plot")
	}
	share := in.PlateauShare
	if share == 0 {
		share = limits.DefaultPlateauShare
	}
	if !(share > 0 && share <= 1) {
		return nil, fmt.Errorf("plateau share must be in (0, 1], not %g", share)
	}
	byOp := map[limits.Operation][]limits.Point{}
	seen := map[limits.Point]bool{}
	for i, p := range in.Points {
		if err := checkPoint(p); err != nil {
			return nil, fmt.Errorf("sweep point %d: %w", i+1, err)
		}
		key := limits.Point{Nodes: p.Nodes, ProcessesPerNode: p.ProcessesPerNode, Operation: p.Operation}
		if seen[key] {
			return nil, fmt.Errorf("sweep point %d: %s at %s is given twice", i+1, p.Operation,
				limits.SweepPoint{Nodes: p.Nodes, ProcessesPerNode: p.ProcessesPerNode})
		}
		seen[key] = true
		byOp[p.Operation] = append(byOp[p.Operation], p)
	}
	c := &Chart{Title: in.Title, Notes: in.Notes}
	for _, op := range limits.Operations {
		pts := byOp[op]
		if len(pts) == 0 {
			continue
		}
		panel, err := newPanel(op, pts, in.Limits[op], share, in.NotValid[op])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		c.Panels = append(c.Panels, panel)
	}
	return c, nil
}

func checkPoint(p limits.Point) error {
	switch {
	case p.Nodes < 1 || p.Nodes > limits.MaxNodes:
		return fmt.Errorf("nodes must be from 1 to %d, not %d", limits.MaxNodes, p.Nodes)
	case p.ProcessesPerNode < 1 || p.ProcessesPerNode > limits.MaxProcessesPerNode:
		return fmt.Errorf("processesPerNode must be from 1 to %d, not %d", limits.MaxProcessesPerNode, p.ProcessesPerNode)
	case p.Operation != limits.Write && p.Operation != limits.Read:
		return fmt.Errorf("operation must be write or read, not %q", p.Operation)
	case math.IsNaN(p.BytesPerSecond) || math.IsInf(p.BytesPerSecond, 0) || p.BytesPerSecond < 0:
		return fmt.Errorf("bytesPerSecond must be a non-negative number, not %g", p.BytesPerSecond)
	}
	return limits.CheckBytesPerSecond(p.BytesPerSecond, limits.MaxBytesPerSecond)
}

func newPanel(op limits.Operation, pts []limits.Point, stages []StageLimit, share float64, notValid bool) (Panel, error) {
	best, plateau := limits.BestAndPlateau(pts, share)
	p := Panel{Operation: op, Best: best, Plateau: plateau, Share: share, NotValid: notValid}
	byNodes := map[int][]XY{}
	for _, pt := range pts {
		byNodes[pt.Nodes] = append(byNodes[pt.Nodes], XY{Processes: pt.Processes(), BytesPerSecond: pt.BytesPerSecond})
	}
	for m, xys := range byNodes {
		sort.Slice(xys, func(i, j int) bool { return xys[i].Processes < xys[j].Processes })
		p.Series = append(p.Series, Series{Nodes: m, Points: xys})
	}
	sort.Slice(p.Series, func(i, j int) bool { return p.Series[i].Nodes < p.Series[j].Nodes })

	for _, s := range stages {
		if s.Stage != 1 && s.Stage != 2 {
			return Panel{}, fmt.Errorf("stage limits are stage 1 or 2, not %d", s.Stage)
		}
		if !s.Limit.Known() {
			p.Missing = append(p.Missing, fmt.Sprintf("stage %d limit %s", s.Stage, s.Limit))
			continue
		}
		v := s.Limit.Value()
		if err := limits.CheckBytesPerSecond(v, limits.MaxBytesPerSecond); err != nil {
			return Panel{}, fmt.Errorf("stage %d limit: %w", s.Stage, err)
		}
		label := fmt.Sprintf("stage %d limit %s", s.Stage, s.Limit)
		if s.Bottleneck != "" {
			label += " (" + s.Bottleneck + ")"
		}
		p.Lines = append(p.Lines, Line{Stage: s.Stage, BytesPerSecond: v, Label: label})
	}
	b := fmt.Sprintf("stage 3 measured B %s (%d nodes x %d processes)", limits.FormatBytesPerSecond(best.BytesPerSecond), best.Nodes, best.ProcessesPerNode)
	if notValid {
		b += " - NOT VALID (above a limit)"
	}
	p.Lines = append(p.Lines, Line{Stage: 3, BytesPerSecond: best.BytesPerSecond, Label: b})
	return p, nil
}

// Efficiency is B against the last known stage limit (stage 2 when measured, else stage
// 1), as the limits table computes it; ok is false when no limit is known.
func (p Panel) Efficiency() (eta float64, stage int, ok bool) {
	for _, l := range p.Lines {
		if l.Stage < 3 && l.BytesPerSecond > 0 {
			eta, stage, ok = p.Best.BytesPerSecond/l.BytesPerSecond, l.Stage, true
		}
	}
	return eta, stage, ok
}

// Write renders the chart as PNG or SVG.
func (c *Chart) Write(w io.Writer, f Format) error {
	if len(c.Panels) == 0 {
		return errors.New("the chart has no panels")
	}
	return render(c, w, f)
}
