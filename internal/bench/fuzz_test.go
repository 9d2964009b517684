package bench

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/beeburst/beeburst/internal/limits"
)

// fuzzParser checks that a parser never panics and either refuses the input with an error
// naming the tool or returns results that hold the parsers' promises, checked here on their
// own rather than through Check: every figure finite, positive where present and within the
// physical bounds of internal/limits, counts non-negative, and the JSON of `agent parse`
// reads back to the same results.
func fuzzParser(f *testing.F, tool string, seeds ...string) {
	for _, s := range seeds {
		b := readTool(f, s)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte("{}"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, out []byte) {
		p, err := Parse(tool, out)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tool+": ") {
				t.Fatalf("error %q does not name %s", err, tool)
			}
			return
		}
		if p.Tool != tool || len(p.Results) == 0 {
			t.Fatalf("tool %q, %d results", p.Tool, len(p.Results))
		}
		if !utf8.ValidString(p.Version) || strings.IndexFunc(p.Version, unicode.IsControl) >= 0 {
			t.Fatalf("version %q", p.Version)
		}
		for _, r := range p.Results {
			if r.BytesPerSecond == 0 && r.OpsPerSecond == 0 {
				t.Fatalf("%s: no figure", r.Operation)
			}
			checkFigure(t, r.Operation, "bytesPerSecond", r.BytesPerSecond, limits.MaxBytesPerSecond)
			checkFigure(t, r.Operation, "stonewallBytesPerSecond", r.StonewallBytesPerSecond, limits.MaxBytesPerSecond)
			checkFigure(t, r.Operation, "opsPerSecond", r.OpsPerSecond, limits.MaxOpsPerSecond)
			checkFigure(t, r.Operation, "runtimeSeconds", r.RuntimeSeconds, limits.MaxRuntimeSeconds)
			if r.Processes < 0 || r.Nodes < 0 || r.Nodes > limits.MaxNodes || r.Bytes < 0 || r.Ops < 0 || r.BlockSize < 0 ||
				r.Retransmits < 0 || r.MinBytesPerProcess < 0 {
				t.Fatalf("negative or absurd count in %+v", r)
			}
			for _, c := range r.Clients {
				checkFigure(t, r.Operation, "client bytesPerSecond", c.BytesPerSecond, limits.MaxBytesPerSecond)
				checkFigure(t, r.Operation, "client opsPerSecond", c.OpsPerSecond, limits.MaxOpsPerSecond)
				checkFigure(t, r.Operation, "client runtimeSeconds", c.RuntimeSeconds, limits.MaxRuntimeSeconds)
			}
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var again Parsed
		if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(*p, again) {
			t.Fatalf("JSON round trip: %v\n%+v\n%+v", err, *p, again)
		}
	})
}

// checkFigure: absent (0) or positive, finite and at most max.
func checkFigure(t *testing.T, op Operation, what string, v, max float64) {
	t.Helper()
	if v != 0 && (!(v > 0) || math.IsInf(v, 0) || v > max) {
		t.Fatalf("%s: %s %v accepted (bound %g)", op, what, v, max)
	}
}

func FuzzParseFio(f *testing.F) {
	fuzzParser(f, ToolFio, "client-hl.stdout", "filecreate.json", "fio-write.json", "fio-randread.json", "fio-client-nogroup.stdout")
}

func FuzzParseIperf3(f *testing.F) {
	fuzzParser(f, ToolIperf3, "iperf3-P4.json", "iperf3-P1.json", "iperf3-error.json")
}

func FuzzParseIOR(f *testing.F) {
	fuzzParser(f, ToolIOR, "ior-nn.json", "ior-n1-write.json")
}

func FuzzParseMdtest(f *testing.F) {
	fuzzParser(f, ToolMdtest, "mdtest-easy.stdout", "mdtest-phased.stdout", "mdtest-easy-rank.csv")
}
