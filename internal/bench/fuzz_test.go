package bench

import (
	"errors"
	"strings"
	"testing"
)

// fuzzParser checks that a parser never panics and either refuses the input with an error
// naming the tool or returns results that pass Check (no zero, NaN or negative figures).
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
		if p.Tool != tool {
			t.Fatalf("tool %q", p.Tool)
		}
		if err := p.Check(); err != nil {
			t.Fatalf("parsed output fails its own check: %v", err)
		}
	})
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
	fuzzParser(f, ToolMdtest, "mdtest-easy.stdout")
}
