package bench

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

var (
	mdtestRow      = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z ]*?)\s*:?\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$`)
	mdtestTasks    = regexp.MustCompile(`^(\d+) tasks, (\d+) (files|directories|files/directories)`)
	mdtestLaunched = regexp.MustCompile(`^(mdtest-\S+) was launched with (\d+) total task\(s\) on (\d+) node\(s\)`)
)

// mdtestOps maps mdtest's row names to operations; other rows (directories, tree) are
// not reported.
var mdtestOps = map[string]Operation{
	"File creation": OpCreate,
	"File stat":     OpStat,
	"File read":     OpReadFile,
	"File removal":  OpDelete,
}

// ParseMdtest parses mdtest's text output (it has no JSON mode): the "SUMMARY rate" table in
// operations per second (the Mean column), with the "SUMMARY time" table - which, despite its
// "ms/op" header, holds phase seconds - as runtime. Rows of phases that did not run (a mean of
// zero) are left out. An output without its "-- finished at" line is truncated and refused.
func ParseMdtest(out []byte) (*Parsed, error) {
	p := &Parsed{Tool: ToolMdtest}
	rates := map[Operation]float64{}
	times := map[Operation]float64{}
	var order []Operation
	table := "" // "rate", "time" or ""
	sawRate, finished := false, false
	tasks, nodes := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimSpace(t)
		switch {
		case strings.HasPrefix(trimmed, "SUMMARY rate"):
			table, sawRate = "rate", true
			continue
		case strings.HasPrefix(trimmed, "SUMMARY time"):
			table = "time"
			continue
		case strings.HasPrefix(trimmed, "SUMMARY"):
			table = ""
			continue
		case strings.HasPrefix(trimmed, "-- finished at"):
			finished = true
			table = ""
			continue
		case trimmed == "":
			table = ""
			continue
		}
		if m := mdtestLaunched.FindStringSubmatch(trimmed); m != nil {
			p.Version = m[1]
			tasks, _ = strconv.Atoi(m[2])
			nodes, _ = strconv.Atoi(m[3])
			continue
		}
		if m := mdtestTasks.FindStringSubmatch(trimmed); m != nil && tasks == 0 {
			tasks, _ = strconv.Atoi(m[1])
			continue
		}
		if table == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "Operation") || strings.HasPrefix(trimmed, "---") {
			continue
		}
		m := mdtestRow.FindStringSubmatch(t)
		if m == nil {
			return nil, perr(ToolMdtest, "line %d of the SUMMARY %s table cannot be read: %q", line, table, trimmed)
		}
		var vals [4]float64
		for i := range vals {
			v, err := strconv.ParseFloat(m[2+i], 64)
			if err != nil && i != 3 { // the standard deviation may be nan
				return nil, perr(ToolMdtest, "line %d of the SUMMARY %s table: %q is not a number", line, table, m[2+i])
			}
			vals[i] = v
		}
		op, ok := mdtestOps[m[1]]
		if !ok {
			continue
		}
		mean := vals[2]
		if table == "rate" {
			if _, dup := rates[op]; dup {
				return nil, perr(ToolMdtest, "two %q rows in the SUMMARY rate table", m[1])
			}
			rates[op] = mean
			order = append(order, op)
		} else {
			times[op] = mean
		}
	}
	if err := sc.Err(); err != nil {
		return nil, perr(ToolMdtest, "output cannot be read: %v", err)
	}
	if !sawRate {
		if len(bytes.TrimSpace(out)) == 0 {
			return nil, perr(ToolMdtest, "output is empty")
		}
		return nil, perr(ToolMdtest, "no \"SUMMARY rate\" table in output (mdtest failed or the output is truncated)")
	}
	if !finished {
		return nil, perr(ToolMdtest, "output is truncated (no \"-- finished at\" line)")
	}
	for _, op := range order {
		rate := rates[op]
		if rate == 0 {
			continue // phase did not run
		}
		if !finitePositive(rate) {
			return nil, perr(ToolMdtest, "%s rate %v is not a positive number", op, rate)
		}
		r := Result{Operation: op, OpsPerSecond: rate, Processes: tasks, Nodes: nodes}
		if finitePositive(times[op]) {
			r.RuntimeSeconds = times[op]
		}
		p.Results = append(p.Results, r)
	}
	if len(p.Results) == 0 {
		return nil, perr(ToolMdtest, "the SUMMARY rate table has no file operations with a rate")
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}
