package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/beeburst/beeburst/internal/limits"
	"github.com/beeburst/beeburst/internal/sweepplot"
)

// plotUsage is the --plot flag's help, the same for both commands.
const plotUsage = "draw the stage-3 sweep into FILE (.png or .svg): bandwidth against processes, one line per node count, " +
	"each stage's limit across it, the plateau marked; write and read in one picture"

// checkPlotFile checks --plot's file name before anything is read or fetched.
func checkPlotFile(file string) error {
	if file == "" {
		return nil
	}
	_, err := sweepplot.FormatOf(file)
	return err
}

// writePlot draws the report's sweep points with its stage-1 and stage-2 limits into file,
// and says so on stderr (stdout stays the report, so -o json can be piped).
func writePlot(file, title string, notes []string, r limits.Report, points []limits.Point, stderr io.Writer) error {
	f, err := sweepplot.FormatOf(file)
	if err != nil {
		return err
	}
	in := sweepplot.Input{Title: title, Notes: notes, Points: points,
		Limits: map[limits.Operation][]sweepplot.StageLimit{}, NotValid: map[limits.Operation]bool{}}
	for _, op := range limits.Operations {
		if r.Estimated != nil {
			ol := r.Estimated.For(op)
			in.Limits[op] = append(in.Limits[op], sweepplot.StageLimit{Stage: 1, Limit: ol.Limit, Bottleneck: string(ol.Bottleneck)})
		}
		if r.Components != nil {
			ol := r.Components.For(op)
			in.Limits[op] = append(in.Limits[op], sweepplot.StageLimit{Stage: 2, Limit: ol.Limit, Bottleneck: string(ol.Bottleneck)})
		}
	}
	if r.Sweep != nil {
		for _, op := range limits.Operations {
			if sr := r.Sweep.For(op); sr != nil && sr.ExceedsLimit {
				in.NotValid[op] = true
			}
		}
	}
	for _, w := range r.Warnings {
		if w.Reason == limits.WarningExceedsLimit {
			in.NotValid[w.Operation] = true
		}
	}
	chart, err := sweepplot.New(in)
	if err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	var b bytes.Buffer
	if err := chart.Write(&b, f); err != nil {
		return runtimeError{fmt.Errorf("--plot: drawing %s: %w", file, err)}
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return runtimeError{fmt.Errorf("--plot: %w", err)}
	}
	fmt.Fprintf(stderr, "plot: %s (%d points)\n", file, len(points))
	return nil
}
