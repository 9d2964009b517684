package limits

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// SweepCSVHeader is the header of a sweep file; columns may come in any order.
const SweepCSVHeader = "nodes,processesPerNode,operation,bytesPerSecond"

// MonitoringCSVHeader is the header of a stage-4 per-node file.
const MonitoringCSVHeader = "node,operation,bytesPerSecond"

// maxCSVRows bounds a file so that a wrong file (a log, a binary) fails fast.
const maxCSVRows = 1 << 16

// ParseSweepCSV reads stage-3 points from CSV with the header SweepCSVHeader. Blank lines and
// lines starting with # are skipped. bytesPerSecond is a plain decimal number (e.g.
// 50943200000 or 5.09432e10), in bytes per second.
func ParseSweepCSV(r io.Reader) ([]Point, error) {
	cols := []string{"nodes", "processesPerNode", "operation", "bytesPerSecond"}
	var points []Point
	err := readCSV(r, cols, SweepCSVHeader, func(line int, f map[string]string) error {
		var p Point
		var err error
		if p.Nodes, err = parseCount(f["nodes"], MaxNodes); err != nil {
			return fmt.Errorf("line %d: nodes: %w", line, err)
		}
		if p.ProcessesPerNode, err = parseCount(f["processesPerNode"], MaxProcessesPerNode); err != nil {
			return fmt.Errorf("line %d: processesPerNode: %w", line, err)
		}
		if p.Operation, err = ParseOperation(f["operation"]); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if p.BytesPerSecond, err = parseBandwidth(f["bytesPerSecond"]); err != nil {
			return fmt.Errorf("line %d: bytesPerSecond: %w", line, err)
		}
		points = append(points, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sweep CSV: %w", err)
	}
	if len(points) == 0 {
		return nil, fmt.Errorf("sweep CSV: no measured points after the header %q", SweepCSVHeader)
	}
	return points, nil
}

// ParseMonitoringCSV reads stage-4 per-node figures from CSV with the header
// MonitoringCSVHeader.
func ParseMonitoringCSV(r io.Reader) ([]NodeFigure, error) {
	cols := []string{"node", "operation", "bytesPerSecond"}
	var figs []NodeFigure
	err := readCSV(r, cols, MonitoringCSVHeader, func(line int, f map[string]string) error {
		var nf NodeFigure
		nf.Node = strings.TrimSpace(f["node"])
		if nf.Node == "" {
			return fmt.Errorf("line %d: node: empty", line)
		}
		// Node names end up in messages and terminals: no control characters.
		if i := strings.IndexFunc(nf.Node, unicode.IsControl); i >= 0 {
			return fmt.Errorf("line %d: node: %q has a control character", line, nf.Node)
		}
		// A Kubernetes node name starts with a letter or digit; a name that starts with '#'
		// (quoted here) would read as a comment once written back unquoted, as encoding/csv does.
		if r := rune(nf.Node[0]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return fmt.Errorf("line %d: node: %q does not start with a letter or digit", line, nf.Node)
		}
		var err error
		if nf.Operation, err = ParseOperation(f["operation"]); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		b, err := parseBandwidth(f["bytesPerSecond"])
		if err != nil {
			return fmt.Errorf("line %d: bytesPerSecond: %w", line, err)
		}
		nf.BytesPerSecond = Bytes(b)
		figs = append(figs, nf)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("monitoring CSV: %w", err)
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("monitoring CSV: no node figures after the header %q", MonitoringCSVHeader)
	}
	return figs, nil
}

// readCSV checks the header (exactly the columns cols, any order, names case-insensitive)
// and calls row for every record with the fields by column name.
func readCSV(r io.Reader, cols []string, header string, row func(line int, fields map[string]string) error) error {
	// A byte-order mark from spreadsheets would hide a leading comment or the header.
	br := bufio.NewReader(r)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("empty file: the first line must be the header %q", header)
	}
	if err != nil {
		return err
	}
	index := make([]string, len(rec)) // column position -> canonical name
	found := map[string]bool{}
	for i, name := range rec {
		name = strings.TrimSpace(name)
		for _, c := range cols {
			if strings.EqualFold(name, c) {
				index[i] = c
			}
		}
		if index[i] == "" || found[index[i]] {
			return fmt.Errorf("line 1: header must be %q, not %q", header, strings.Join(rec, ","))
		}
		found[index[i]] = true
	}
	if len(found) != len(cols) {
		return fmt.Errorf("line 1: header must be %q, not %q", header, strings.Join(rec, ","))
	}
	fields := make(map[string]string, len(cols))
	for rows := 0; ; rows++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			// csv.ParseError carries the line and says what is wrong (e.g. wrong number of fields).
			return err
		}
		if rows >= maxCSVRows {
			return fmt.Errorf("more than %d rows", maxCSVRows)
		}
		line, _ := cr.FieldPos(0)
		for i, v := range rec {
			fields[index[i]] = strings.TrimSpace(v)
		}
		if err := row(line, fields); err != nil {
			return err
		}
	}
}

func parseCount(s string, max int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if n < 1 || n > max {
		return 0, fmt.Errorf("must be from 1 to %d, not %d", max, n)
	}
	return n, nil
}

// parseBandwidth accepts a plain non-negative decimal number: digits, one point, an
// exponent. No hex, no Inf or NaN, no unit suffix (bytes per second are implied).
func parseBandwidth(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("empty")
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, fmt.Errorf("%q is not a plain number of bytes per second (no units: write 5e10, not 50G)", s)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if !finiteNonNegative(v) {
		return 0, fmt.Errorf("must be a finite, non-negative number, not %s", s)
	}
	if err := CheckBytesPerSecond(v, MaxBytesPerSecond); err != nil {
		return 0, err
	}
	return v, nil
}
