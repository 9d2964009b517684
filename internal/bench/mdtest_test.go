package bench

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// mdtestRuns splits a concatenated mdtest output into its runs (each from "-- started at").
func mdtestRuns(t *testing.T, out []byte) []string {
	t.Helper()
	parts := strings.SplitAfter(string(out), "--\n\n")
	var runs []string
	cur := ""
	for _, p := range parts {
		cur += p
		if strings.Contains(p, "-- finished at") {
			runs = append(runs, cur)
			cur = ""
		}
	}
	if cur != "" || len(runs) == 0 {
		t.Fatalf("cannot split into runs: %d runs, rest %q", len(runs), cur)
	}
	return runs
}

func mustParseMdtest(t *testing.T, out string) *Parsed {
	t.Helper()
	p, err := ParseMdtest([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mdtestOpsOf(p *Parsed) string {
	var s []string
	for _, r := range p.Results {
		s = append(s, string(r.Operation)+"/"+r.Label)
	}
	return strings.Join(s, " ")
}

func TestMdtestPhasedRuns(t *testing.T) {
	runs := mdtestRuns(t, readTool(t, "mdtest-phased.stdout"))
	if len(runs) != 4 {
		t.Fatalf("%d runs", len(runs))
	}
	want := mustParseMdtest(t, strings.Join(runs, ""))

	// IO500's hard order (write, read, stat, delete): the same results in mdtest's order.
	p := mustParseMdtest(t, runs[0]+runs[2]+runs[1]+runs[3])
	if len(p.Results) != 4 {
		t.Fatalf("%+v", p.Results)
	}
	for i := range p.Results {
		if !reflect.DeepEqual(p.Results[i], want.Results[i]) {
			t.Errorf("[%d] %+v, want %+v", i, p.Results[i], want.Results[i])
		}
	}
	// A run of only zeros after the figures changes nothing.
	zeros := strings.NewReplacer("109687.517", "0.000", "1.874", "0.000").Replace(runs[1])
	p = mustParseMdtest(t, strings.Join(runs, "")+zeros)
	if len(p.Results) != 4 || p.Results[1].OpsPerSecond != 109687.517 || p.Results[1].RuntimeSeconds != 1.874 {
		t.Errorf("zeros replaced a figure: %+v", p.Results)
	}
	// One phase alone is one result.
	p = mustParseMdtest(t, runs[1])
	if mdtestOpsOf(p) != "stat/" {
		t.Errorf("stat run: %s", mdtestOpsOf(p))
	}
}

func TestMdtestTaskCounts(t *testing.T) {
	// One run stepping the task count (-f 2 -l 4 -s 2): a SUMMARY per count, after its
	// "<n> tasks" line.
	easy := string(readTool(t, "mdtest-easy.stdout"))
	head, rest, _ := strings.Cut(easy, "4 tasks, 8000 files\n")
	tables, tail, _ := strings.Cut(rest, "-- finished at")
	half := strings.NewReplacer("15624.881", "9001.500", "374132.328", "200000.000").Replace(tables)
	p := mustParseMdtest(t, head+"2 tasks, 4000 files\n"+half+"4 tasks, 8000 files\n"+tables+"-- finished at"+tail)
	if got := mdtestOpsOf(p); got != "create/2 tasks stat/2 tasks readfile/2 tasks delete/2 tasks create/4 tasks stat/4 tasks readfile/4 tasks delete/4 tasks" {
		t.Fatalf("results %s", got)
	}
	if p.Results[0].Processes != 2 || p.Results[0].OpsPerSecond != 9001.5 || p.Results[4].Processes != 4 || p.Results[4].OpsPerSecond != 15624.881 {
		t.Errorf("%+v", p.Results)
	}
}

func TestMdtestShowRankStatistics(t *testing.T) {
	// --showRankStatistics: three per-rank columns before the per-iteration ones; the Mean is
	// the per-iteration one.
	out := "-- started at 11/21/2026 18:43:15 --\n\n4 tasks, 8000 files\n\nSUMMARY rate (in ops/sec): (of 2 iterations)\n" +
		"   Operation     per Rank: Max            Min           Mean      per Iteration: Max            Min           Mean        Std Dev\n" +
		"   ---------               ---            ---           ----                  ---            ---           ----        -------\n" +
		"   File creation           4100.000       3800.000       3950.000         15800.000      15400.000      15600.000        282.843\n" +
		"   Tree creation             6765.006       6765.006       6765.006       6765.006       6765.006       6765.006          0.000\n" +
		"-- finished at 11/21/2026 18:43:16 --\n"
	p := mustParseMdtest(t, out)
	if len(p.Results) != 1 || p.Results[0].OpsPerSecond != 15600 || p.Results[0].Processes != 4 {
		t.Fatalf("%+v", p.Results)
	}
}

func TestMdtestRankCSV(t *testing.T) {
	csv := string(readTool(t, "mdtest-easy-rank.csv"))
	header, body, _ := strings.Cut(csv, "\n")
	allRow, rankRows, _ := strings.Cut(body, "\n")
	f := strings.Split(allRow, ",")
	// phase keeps only test k's pair (file tests are pairs 5..8) of the "all" row.
	phase := func(k int) string {
		g := append([]string(nil), f...)
		for e := 0; e < 11; e++ {
			if e != k {
				g[2+2*e], g[3+2*e] = "", ""
			}
		}
		return header + "\n" + strings.Join(g, ",") + "\n" + rankRows
	}
	// Phased runs' CSVs concatenated merge like the text output.
	p := mustParseMdtest(t, phase(8)+phase(5)+phase(6))
	if got := mdtestOpsOf(p); got != "create/ stat/ delete/" {
		t.Fatalf("phased CSVs: %s", got)
	}
	if p.Results[0].OpsPerSecond != 15624.881 || p.Results[0].Processes != 4 {
		t.Errorf("%+v", p.Results[0])
	}
	// A byte-order mark and CRLF line ends (a spreadsheet saved it) are fine.
	if _, err := ParseMdtest([]byte("\ufeff" + strings.ReplaceAll(csv, "\n", "\r\n"))); err != nil {
		t.Errorf("BOM, CRLF: %v", err)
	}
}

func TestMdtestErrors(t *testing.T) {
	phased := string(readTool(t, "mdtest-phased.stdout"))
	runs := mdtestRuns(t, []byte(phased))
	easy := string(readTool(t, "mdtest-easy.stdout"))
	csv := string(readTool(t, "mdtest-easy-rank.csv"))
	header, _, _ := strings.Cut(csv, "\n")
	lines := strings.Split(strings.TrimSuffix(csv, "\n"), "\n")
	for _, c := range []struct {
		name, out, msg string
	}{
		{"phase twice", phased + runs[0],
			`mdtest: File creation ran twice with 4 tasks: 33597.722 ops/s in run 1 (started at 11/21/2026 19:05:41) and 33597.722 ops/s in run 5 (started at 11/21/2026 19:05:41); no one figure stands for both. Pass the runs of one workload`},
		{"all phases, then a phased run", easy + runs[1], `File stat ran twice with 4 tasks: 374132.328 ops/s in run 1`},
		{"cut run before the next", strings.Split(runs[0], "-- finished")[0] + runs[1],
			`run 1 (started at 11/21/2026 19:05:41) has no "-- finished at" line before the next run starts`},
		{"last run cut", strings.Split(phased, "-- finished at 11/21/2026 19:06:11")[0],
			`output is truncated (run 4, started at 11/21/2026 19:06:05, has no "-- finished at" line)`},
		{"times only (-Z)", strings.Split(easy, "SUMMARY rate")[0] + "SUMMARY time" + strings.SplitN(easy, "SUMMARY time", 2)[1],
			`only a "SUMMARY time" table in output (mdtest -Z`},
		{"data verification", strings.Replace(easy, "-- finished", "\nERROR: verifying the data on read (3 errors)! Take the performance values with care!\n\n-- finished", 1),
			"mdtest: run 1: verifying the data on read (3 errors)!"},
		{"two rows in one table", strings.Replace(easy, "   File stat ", "   File creation  ", 1), `two "File creation" rows in one SUMMARY rate table`},
		{"absurd rate", strings.ReplaceAll(easy, "15624.881", "1"+strings.Repeat("0", 300)+".000"), "create: operation rate 1e+300 operations/s is more than 1e+15"},
		{"negative rate", strings.ReplaceAll(easy, "  15624.881", " -15624.881"), "File creation rate -15624.881 is not a positive number"},
		{"per-op CSV", "time,runtime,tp\n1.0000000e-01,2.5000000e-05,4.000000e+04\n",
			`this is one rank's per-operation timing CSV (mdtest --savePerOpDataCSV, header "time,runtime,tp"), not a summary: pass mdtest's standard output`},
		{"CSV iterations", csv + lines[2] + "\n", "rank 0 again: the run had several iterations (-i)"},
		{"CSV cut in a row", csv[:len(csv)-20], "truncated: its last row has no newline"},
		{"CSV cut after all", header + "\n" + lines[1] + "\n", `the "all" row of run 1 has no rank rows after it`},
		{"CSV header only", header + "\n", `has no "all" row`},
		{"CSV short all row", header + "\nall,2000,1,2\n0,\n", `the "all" row has 4 fields, the header 24`},
		{"CSV bad header", "rank,items,rate-File creation,time-File stat\n", `are not a rate-<test>,time-<test> pair`},
		{"CSV garbled number", strings.Replace(csv, "1.5624881000e+04", "1.56x4881000e+04", 1), `File creation: "1.56x4881000e+04"`},
		{"CSV twice", csv + csv, "File creation ran twice with 4 tasks: 15624.881 ops/s in run 1 and 15624.881 ops/s in run 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseMdtest([]byte(c.out))
			if err == nil {
				t.Fatalf("no error; parsed %+v", p.Results)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Tool != ToolMdtest || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q, want it to contain %q", err, c.msg)
			}
		})
	}
}
