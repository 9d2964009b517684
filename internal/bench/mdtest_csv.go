package bench

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// mdtest's CSV files (hpc/ior src/mdtest.c):
//   - --saveRankPerformanceDetails=FILE: md_validate_tests_rank0 writes the header "rank,items"
//     and a "rate-<test>,time-<test>" pair per test (mdtest_test_name, in enum order); after
//     each task count StoreRankInformation appends an "all,<items per task>" row with every
//     test's aggregate (items of all ranks / slowest rank's time, %.10e; ",," for a test that
//     did not run), then one row per rank and iteration ("<rank>," then the tests before "Tree
//     creation": that rank's rate and time before the closing barrier).
//   - --savePerOpDataCSV=PREFIX: one file per rank and phase, "time,runtime,tp" per operation.
const (
	mdtestRankCSVPrefix = "rank,items,"
	mdtestOpCSVHeader   = "time,runtime,tp"
	mdtestTreeCreation  = "Tree creation"
)

// parseMdtestRankCSV parses the CSV of --saveRankPerformanceDetails. Its "all" row holds the
// same aggregate as the "SUMMARY rate" table when the run had one iteration (items of all
// ranks over the slowest rank's time); the tasks are the rank rows that follow it. With more
// iterations the "all" row holds the first iteration only (StoreRankInformation is handed
// the first iteration's aggregate), which is not what mdtest reports, so such a file is
// refused. Several runs' files concatenated (each starts with the header) merge as phased
// runs do in the text output.
func parseMdtestRankCSV(out []byte) (*Parsed, error) {
	out = bytes.TrimPrefix(out, []byte("\ufeff"))
	if !bytes.HasSuffix(out, []byte("\n")) {
		// mdtest ends every row with a newline; a cut row may still parse ("1.56e+0").
		return nil, perr(ToolMdtest, "per-rank CSV (--saveRankPerformanceDetails) is truncated: its last row has no newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var segs []*mdtestSegment
	var cur *mdtestSegment
	var tests []string // the header's test names, in order
	rankTests := 0     // tests in a rank row
	run := 0
	ranks := map[int]bool{}
	endBlock := func() error {
		if cur == nil {
			return nil
		}
		if len(ranks) == 0 {
			return perr(ToolMdtest, "per-rank CSV: the \"all\" row of %s has no rank rows after it (the file is truncated)", cur.where())
		}
		cur.tasks = len(ranks)
		return nil
	}
	for i, l := range lines {
		line := i + 1
		l = strings.TrimSuffix(l, "\r")
		f := strings.Split(l, ",")
		switch {
		case strings.HasPrefix(l, mdtestRankCSVPrefix):
			if err := endBlock(); err != nil {
				return nil, err
			}
			var err error
			if tests, err = mdtestCSVHeader(f); err != nil {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: %v", line, err)
			}
			rankTests = len(tests)
			for k, t := range tests {
				if t == mdtestTreeCreation {
					rankTests = k
				}
			}
			run++
			cur = nil
		case tests == nil:
			return nil, perr(ToolMdtest, "per-rank CSV line %d: data before the header", line)
		case f[0] == "all":
			if err := endBlock(); err != nil {
				return nil, err
			}
			if len(f) != 2+2*len(tests) {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: the \"all\" row has %d fields, the header %d", line, len(f), 2+2*len(tests))
			}
			cur = &mdtestSegment{run: run, rates: map[Operation]float64{}, times: map[Operation]float64{}, hasRate: true, hasTime: true}
			segs = append(segs, cur)
			ranks = map[int]bool{}
			for k, t := range tests {
				op, ok := mdtestOps[t]
				if !ok {
					continue
				}
				rs, ts := f[2+2*k], f[3+2*k]
				if rs == "" && ts == "" {
					continue // did not run
				}
				rate, err1 := strconv.ParseFloat(rs, 64)
				sec, err2 := strconv.ParseFloat(ts, 64)
				if err1 != nil || err2 != nil {
					return nil, perr(ToolMdtest, "per-rank CSV line %d: %s: %q, %q are not numbers", line, t, rs, ts)
				}
				cur.rates[op], cur.times[op] = rate, sec
				cur.order = append(cur.order, op)
			}
		default:
			rank, err := strconv.Atoi(f[0])
			if err != nil || rank < 0 {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: %q is neither a rank nor \"all\"", line, f[0])
			}
			if cur == nil {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: a rank row before any \"all\" row", line)
			}
			if len(f) != 2+2*rankTests {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: a rank row has %d fields, not %d", line, len(f), 2+2*rankTests)
			}
			if ranks[rank] {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: rank %d again: the run had several iterations (-i), and the \"all\" row holds the first one only; pass mdtest's standard output, whose SUMMARY table averages them", line, rank)
			}
			if rank >= maxProcesses {
				return nil, perr(ToolMdtest, "per-rank CSV line %d: rank %d is more than %d processes", line, rank, maxProcesses)
			}
			ranks[rank] = true
		}
	}
	if err := endBlock(); err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		return nil, perr(ToolMdtest, "per-rank CSV (--saveRankPerformanceDetails) has no \"all\" row: mdtest wrote the header but no results (it failed before the end of its first run)")
	}
	return mdtestMerge(segs)
}

// mdtestCSVHeader checks the header "rank,items,rate-<test>,time-<test>,..." and returns the
// tests.
func mdtestCSVHeader(f []string) ([]string, error) {
	if len(f) < 4 || len(f)%2 != 0 || f[0] != "rank" || f[1] != "items" {
		return nil, fmt.Errorf("not the header of --saveRankPerformanceDetails (rank,items,rate-<test>,time-<test>,...)")
	}
	var tests []string
	for k := 2; k < len(f); k += 2 {
		name, ok1 := strings.CutPrefix(f[k], "rate-")
		tname, ok2 := strings.CutPrefix(f[k+1], "time-")
		if !ok1 || !ok2 || name != tname || name == "" {
			return nil, fmt.Errorf("header columns %q, %q are not a rate-<test>,time-<test> pair", f[k], f[k+1])
		}
		tests = append(tests, name)
	}
	return tests, nil
}
