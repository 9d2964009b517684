package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	mdtestTasks    = regexp.MustCompile(`^(\d+) tasks, (\d+ (?:files|directories|files/directories)|1 file)$`)
	mdtestLaunched = regexp.MustCompile(`^(mdtest-\S+) was launched with (\d+) total task\(s\) on (\d+) node\(s\)`)
	mdtestStarted  = regexp.MustCompile(`^-- started at (.*?) --$`)
)

// mdtestOps maps mdtest's row names (mdtest_test_name in mdtest.c) to operations; other rows
// (directories, tree) are not reported.
var mdtestOps = map[string]Operation{
	"File creation": OpCreate,
	"File stat":     OpStat,
	"File read":     OpReadFile,
	"File removal":  OpDelete,
}

// mdtestOpOrder is the order of mdtest's own tables, in which results are reported.
var mdtestOpOrder = map[Operation]int{OpCreate: 0, OpStat: 1, OpReadFile: 2, OpDelete: 3}

// mdtestRowName is the name of op's row, for messages.
func mdtestRowName(op Operation) string {
	for name, o := range mdtestOps {
		if o == op {
			return name
		}
	}
	return string(op)
}

// mdtestSegment is what one SUMMARY of one mdtest run says: the tables printed for one task
// count of one invocation (mdtest prints one per task count of -f/-l/-s).
type mdtestSegment struct {
	run     int    // 1-based invocation in the output
	started string // its "-- started at" time, for messages ("" when the output has none)
	version string
	tasks   int
	nodes   int
	rates   map[Operation]float64
	times   map[Operation]float64
	order   []Operation
	hasRate bool
	hasTime bool
}

func (s *mdtestSegment) where() string {
	if s.started == "" {
		return fmt.Sprintf("run %d", s.run)
	}
	return fmt.Sprintf("run %d (started at %s)", s.run, s.started)
}

// ParseMdtest parses mdtest's text output (it has no JSON mode): the "SUMMARY rate" table in
// operations per second (the Mean column), with the "SUMMARY time" table - which, despite its
// "ms/op" header, holds phase seconds - as runtime. An output without its "-- finished at"
// line is truncated and refused.
//
// The output may hold several runs, one after another: IO500 and scripts run mdtest once per
// phase (-C, then -T, -E, -r, sharing the files through -x), and each run prints a whole
// SUMMARY table with zeros for the phases it skipped. A phase's figure comes from the run that
// ran it; zeros never replace a figure. A phase with figures from two runs at the same task
// count is refused: the two runs measured different things (other files, other options, a
// neighbour) or the same thing twice, and any one figure made of them - the first, the last,
// their mean - would be one no run measured; repeating a phase is mdtest's -i, which
// averages the iterations itself. Task counts of one run's -f/-l/-s, or of separate runs, are
// separate results labelled "<n> tasks".
//
// The per-rank CSV of --saveRankPerformanceDetails is recognised by its header and parsed
// too (parseMdtestRankCSV); the per-operation CSVs of --savePerOpDataCSV are refused with what
// to pass instead.
func ParseMdtest(out []byte) (*Parsed, error) {
	switch head := firstLine(out); {
	case strings.HasPrefix(head, mdtestRankCSVPrefix):
		return parseMdtestRankCSV(out)
	case head == mdtestOpCSVHeader:
		return nil, perr(ToolMdtest, "this is one rank's per-operation timing CSV (mdtest --savePerOpDataCSV, header %q), not a summary: pass mdtest's standard output (the text with the \"SUMMARY rate\" table) or the CSV of --saveRankPerformanceDetails", mdtestOpCSVHeader)
	}
	var segs []*mdtestSegment
	var cur *mdtestSegment
	table := "" // "rate", "time" or ""
	run, started, finished := 0, "", false
	version, tasks, nodes := "", 0, 0
	sawTime := false
	newSegment := func() {
		cur = &mdtestSegment{run: max(run, 1), started: started, version: version, tasks: tasks, nodes: nodes,
			rates: map[Operation]float64{}, times: map[Operation]float64{}}
		segs = append(segs, cur)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), " \t\r")
		trimmed := strings.TrimSpace(t)
		if m := mdtestStarted.FindStringSubmatch(trimmed); m != nil {
			if run > 0 && !finished {
				return nil, perr(ToolMdtest, "run %d (started at %s) has no \"-- finished at\" line before the next run starts: it failed or its output was cut", run, started)
			}
			run, started, finished = run+1, m[1], false
			version, tasks, nodes = "", 0, 0
			cur, table = nil, ""
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "SUMMARY rate"):
			if cur == nil || cur.hasRate {
				newSegment()
			}
			cur.hasRate, table = true, "rate"
			continue
		case strings.HasPrefix(trimmed, "SUMMARY time"):
			if cur == nil || cur.hasTime {
				newSegment()
			}
			cur.hasTime, table, sawTime = true, "time", true
			continue
		case strings.HasPrefix(trimmed, "SUMMARY"):
			table = ""
			continue
		case strings.HasPrefix(trimmed, "-- finished at"):
			finished, table = true, ""
			continue
		case trimmed == "":
			table = ""
			continue
		case strings.HasPrefix(trimmed, "ERROR: verifying the data on read"):
			// mdtest -X found files whose content is not what was written: the file system
			// returns wrong data, and no rate of it is worth publishing.
			return nil, perr(ToolMdtest, "run %d: %s", max(run, 1), strings.TrimPrefix(trimmed, "ERROR: "))
		}
		if m := mdtestLaunched.FindStringSubmatch(trimmed); m != nil {
			version = m[1]
			tasks, _ = strconv.Atoi(m[2])
			nodes, _ = strconv.Atoi(m[3])
			continue
		}
		if m := mdtestTasks.FindStringSubmatch(trimmed); m != nil {
			// The tables that follow are this task count's (each -f/-l/-s step prints one).
			tasks, _ = strconv.Atoi(m[1])
			cur, table = nil, ""
			continue
		}
		if table == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "Operation") || strings.HasPrefix(trimmed, "---") {
			continue
		}
		name, mean, err := mdtestRow(trimmed)
		if err != nil {
			return nil, perr(ToolMdtest, "line %d of the SUMMARY %s table %v", line, table, err)
		}
		op, ok := mdtestOps[name]
		if !ok {
			continue
		}
		if table == "rate" {
			if _, dup := cur.rates[op]; dup {
				return nil, perr(ToolMdtest, "line %d: two %q rows in one SUMMARY rate table", line, name)
			}
			cur.rates[op] = mean
			cur.order = append(cur.order, op)
		} else {
			cur.times[op] = mean
		}
	}
	if err := sc.Err(); err != nil {
		return nil, perr(ToolMdtest, "output cannot be read: %v", err)
	}
	hasRate := false
	for _, s := range segs {
		hasRate = hasRate || s.hasRate
	}
	if !hasRate {
		switch {
		case len(bytes.TrimSpace(out)) == 0:
			return nil, perr(ToolMdtest, "output is empty")
		case sawTime:
			return nil, perr(ToolMdtest, "only a \"SUMMARY time\" table in output (mdtest -Z prints times instead of rates): run mdtest without -Z, or with -P for both")
		}
		return nil, perr(ToolMdtest, "no \"SUMMARY rate\" table in output (mdtest failed or the output is truncated)")
	}
	if !finished {
		if run > 1 {
			return nil, perr(ToolMdtest, "output is truncated (run %d, started at %s, has no \"-- finished at\" line)", run, started)
		}
		return nil, perr(ToolMdtest, "output is truncated (no \"-- finished at\" line)")
	}
	return mdtestMerge(segs)
}

// mdtestRow reads a SUMMARY table row: the operation's name, then Max, Min, Mean and Std Dev,
// or with --showRankStatistics three per-rank columns (Max, Min, Mean) before those. mean is
// the Mean over iterations. The standard deviation may be nan.
func mdtestRow(row string) (name string, mean float64, err error) {
	f := strings.Fields(row)
	i := 0
	for i < len(f) && !startsNumber(f[i]) {
		i++
	}
	name = strings.TrimSuffix(strings.Join(f[:i], " "), " :")
	name = strings.TrimSuffix(name, ":")
	nums := f[i:]
	if name == "" || (len(nums) != 4 && len(nums) != 7) {
		return "", 0, fmt.Errorf("cannot be read: %q", row)
	}
	vals := make([]float64, len(nums))
	for k, s := range nums {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && k != len(nums)-1 {
			return "", 0, fmt.Errorf("(%s): %q is not a number", name, s)
		}
		vals[k] = v
	}
	return name, vals[len(vals)-2], nil
}

// startsNumber says whether a field of a table row is a number (as %14.3f prints it,
// including nan and inf) rather than a word of the operation's name.
func startsNumber(s string) bool {
	c := s[0]
	if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' {
		return true
	}
	l := strings.ToLower(s)
	return l == "nan" || l == "inf"
}

// mdtestMerge turns the segments into results: per task count and operation, the figure of
// the one run that ran the phase (see ParseMdtest).
func mdtestMerge(segs []*mdtestSegment) (*Parsed, error) {
	type key struct {
		tasks int
		op    Operation
	}
	from := map[key]*mdtestSegment{}
	p := &Parsed{Tool: ToolMdtest}
	taskCounts := map[int]bool{}
	for _, s := range segs {
		if p.Version == "" {
			p.Version = s.version
		}
		for _, op := range s.order {
			rate := s.rates[op]
			if rate == 0 {
				continue // the phase did not run in this run (mdtest prints 0.000)
			}
			if !finitePositive(rate) {
				return nil, perr(ToolMdtest, "%s: %s rate %v is not a positive number", s.where(), mdtestRowName(op), rate)
			}
			k := key{s.tasks, op}
			if prev := from[k]; prev != nil {
				return nil, perr(ToolMdtest, "%s ran twice with %d tasks: %.3f ops/s in %s and %.3f ops/s in %s; no one figure stands for both. Pass the runs of one workload (IO500's mdtest-easy and mdtest-hard apart), each phase in one run (-C, -T, -E, -r); to repeat a phase use mdtest -i, which averages the iterations",
					mdtestRowName(op), s.tasks, prev.rates[op], prev.where(), rate, s.where())
			}
			from[k] = s
			taskCounts[s.tasks] = true
			r := Result{Operation: op, OpsPerSecond: rate, Processes: s.tasks, Nodes: s.nodes}
			if finitePositive(s.times[op]) {
				r.RuntimeSeconds = s.times[op]
			}
			p.Results = append(p.Results, r)
		}
	}
	if len(p.Results) == 0 {
		return nil, perr(ToolMdtest, "the SUMMARY rate table has no file operations with a rate")
	}
	sortMdtestResults(p.Results, len(taskCounts) > 1)
	return p.finish()
}

// sortMdtestResults puts results in mdtest's table order per task count, whatever order the
// phased runs came in; with several task counts each result is labelled with its count.
func sortMdtestResults(rs []Result, label bool) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Processes != rs[j].Processes {
			return rs[i].Processes < rs[j].Processes
		}
		return mdtestOpOrder[rs[i].Operation] < mdtestOpOrder[rs[j].Operation]
	})
	if label {
		for i := range rs {
			rs[i].Label = fmt.Sprintf("%d tasks", rs[i].Processes)
		}
	}
}

// firstLine is out's first line without surrounding space (a byte-order mark dropped).
func firstLine(out []byte) string {
	l, _, _ := bytes.Cut(bytes.TrimPrefix(out, []byte("\ufeff")), []byte("\n"))
	return strings.TrimSpace(string(l))
}
