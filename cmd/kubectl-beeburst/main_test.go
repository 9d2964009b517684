package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	example = "../../testdata/limits/omnipath-example.yaml"
	sweep   = "../../testdata/limits/omnipath-sweep.csv"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The acceptance test: METHOD.md's worked example and the paper's 7x7 table.
func TestEstimateWorkedExampleJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "", "estimate", "-f", example, "--sweep", sweep, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Name  string
		Write struct {
			ClientsBytesPerSecond int64
			ServersBytesPerSecond int64
			NetworkBytesPerSecond int64
			DevicesBytesPerSecond *int64
			LimitBytesPerSecond   int64
			Bottleneck            string
			Formula               string
			Measured              *struct {
				BestBytesPerSecond int64
				Best, Plateau      struct{ Nodes, ProcessesPerNode int }
				Efficiency         float64
				ParallelismLimit   int64
			}
		}
		Read struct {
			LimitBytesPerSecond int64
			Measured            *json.RawMessage
		}
		Warnings []struct{ Reason, Operation, Message string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	w := doc.Write
	if doc.Name != "omnipath-example" || w.LimitBytesPerSecond != 60606060606 || w.Bottleneck != "servers" ||
		w.ServersBytesPerSecond != 60606060606 || w.NetworkBytesPerSecond != 60606060606 ||
		w.ClientsBytesPerSecond != 775757575758 || w.DevicesBytesPerSecond != nil || !strings.Contains(w.Formula, "Bs = Ns x S") {
		t.Errorf("write limit %+v", w)
	}
	m := w.Measured
	if m == nil {
		t.Fatalf("no measured block:\n%s", out)
	}
	if m.BestBytesPerSecond != 50943200000 || m.Best.Nodes != 32 || m.Best.ProcessesPerNode != 32 ||
		m.Plateau.Nodes != 16 || m.Plateau.ProcessesPerNode != 8 || m.Efficiency != 0.8406 || m.ParallelismLimit != 40 {
		t.Errorf("measured %+v", *m)
	}
	if doc.Read.LimitBytesPerSecond != 60606060606 || doc.Read.Measured != nil {
		t.Errorf("read %+v", doc.Read)
	}
	for _, wn := range doc.Warnings {
		if wn.Reason != "UnknownLimit" {
			t.Errorf("unexpected warning %+v", wn)
		}
	}
	if !strings.Contains(out, `"devicesBytesPerSecond": null`) {
		t.Error("devicesBytesPerSecond is not null")
	}
}

func TestEstimateTable(t *testing.T) {
	code, out, errOut := runCLI(t, "", "estimate", "-f", example, "--sweep", sweep)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"BurstBuffer omnipath-example", "STAGE 1 ESTIMATED  STAGE 3 SWEEP",
		"limit               60.606 GB/s        -", "50.943 GB/s at 32 nodes x 32 processes", "0.8406 of 60.606 GB/s",
		"16 nodes x 8 processes = 128 processes", "UnknownLimit"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// -o takes kubectl's printers for the JSON document, and wide adds the sweep's grid.
func TestEstimateOutputFormats(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-o", "yaml"}, []string{"name: omnipath-example\n", "  limitBytesPerSecond: 60606060606\n", "    plateauBytesPerSecond: 50011200000\n"}},
		{[]string{"-o", "jsonpath={.write.measured.plateau.nodes}x{.write.measured.plateau.processesPerNode}"}, []string{"16x8"}},
		{[]string{"-o", "jsonpath={.write.limitBytesPerSecond}"}, []string{"60606060606"}},
		{[]string{"-o", "go-template={{.write.measured.bestBytesPerSecond}} {{.write.measured.efficiency}}"}, []string{"50943200000 0.8406"}},
		{[]string{"-o", "wide"}, []string{"plateau (95% of B)  -                  16 nodes x 8 processes = 128 processes, 50.011 GB/s",
			"STAGE 3 SWEEP WRITE  N=1          N=2          N=4          N=8           N=16         N=32          N=64\n",
			"M=16                 14.063 GB/s  31.775 GB/s  45.634 GB/s  50.011 GB/s+  50.19 GB/s   50.108 GB/s   49.491 GB/s\n",
			"M=32                 23.556 GB/s  47.838 GB/s  50.4 GB/s    49.6 GB/s     50.16 GB/s   50.943 GB/s*  48.21 GB/s\n",
			"* best B, + plateau (the first point reaching 95% of B)\n\nWARNINGS\n"}},
	} {
		code, out, errOut := runCLI(t, "", append([]string{"estimate", "-f", example, "--sweep", sweep}, tc.args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
	// Without a sweep, wide is the table.
	_, table, _ := runCLI(t, "", "estimate", "-f", example)
	_, wide, _ := runCLI(t, "", "estimate", "-f", example, "-o", "wide")
	if table != wide || !strings.Contains(table, "STAGE 1 ESTIMATED") {
		t.Errorf("wide without a sweep differs from the table:\n%s\n%s", table, wide)
	}
}

// --plot draws the README's sample sweep; the file is a PNG or an SVG by its name.
func TestEstimatePlot(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"sweep.png", "sweep.SVG"} {
		file := filepath.Join(dir, name)
		code, out, errOut := runCLI(t, "", "estimate", "-f", example, "--sweep", sweep, "--plot", file, "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if errOut != "plot: "+file+" (49 points)\n" || !json.Valid([]byte(out)) {
			t.Errorf("stderr %q; stdout is not the JSON document:\n%s", errOut, out)
		}
		data := mustRead(t, file)
		if strings.HasSuffix(name, ".png") {
			if _, err := png.Decode(strings.NewReader(data)); err != nil {
				t.Errorf("not a PNG: %v", err)
			}
			continue
		}
		for _, want := range []string{"BurstBuffer omnipath-example: the stage-3 sweep",
			"points: ../../testdata/limits/omnipath-sweep.csv; stage 1 from ../../testdata/limits/omnipath-example.yaml",
			"stage 1 limit 60.606 GB/s (servers)", "stage 3 measured B 50.943 GB/s (32 nodes x 32 processes)", ">64 nodes<",
			"from 16 nodes x 8 processes"} {
			if !strings.Contains(data, want) {
				t.Errorf("SVG lacks %q", want)
			}
		}
	}
}

func TestEstimateInputs(t *testing.T) {
	bare := `clients:
  nodes: 64
  processesPerNode: 32
  link: {rateBitsPerSecond: 100G, encoding: 64b/66b}
servers:
  nodes: 5
  link: {rateBitsPerSecond: 100G, encoding: 64b/66b}
`
	wrapped := "hardware:\n" + indent(bare)
	multi := "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n" + mustRead(t, example)
	colocated := `apiVersion: beeburst.io/v1alpha1
kind: BurstBuffer
metadata: {name: bb}
spec:
  nodes: {count: 4}
  validation: {minimumEfficiencyPercent: 90}
  hardware:
    servers: {link: {rateBitsPerSecond: 25G}}
    devices: {perNode: 1, writeBytesPerSecond: 2G, readBytesPerSecond: 3G}
`
	local := "apiVersion: beeburst.io/v1alpha1\nkind: BurstBuffer\nmetadata: {name: l}\nspec:\n  engine: local\n  nodes: {count: 2}\n"
	for _, tc := range []struct {
		name, content string
		args          []string
		want          []string
	}{
		{"bare hardware block", bare, nil, []string{"Hardware block", "60.606 GB/s (servers)"}},
		{"hardware: key only", wrapped, nil, []string{"60.606 GB/s (servers)"}},
		{"multi-document file", multi, nil, []string{"omnipath-example", "60.606 GB/s (servers)"}},
		{"co-located burst buffer", colocated, nil, []string{"co-located", "limit = min(Bc, Bs, Bnet, Bd) = Bd = 8 GB/s (devices)",
			"x Ns/(Ns-1)"}},
		{"co-located minimum efficiency from the manifest", colocated,
			[]string{"--sweep", writeFile(t, "s.csv", "nodes,processesPerNode,operation,bytesPerSecond\n4,8,write,6e9\n")},
			[]string{"BelowExpectation: write efficiency 0.75", "below the minimum 0.90"}},
		{"local engine without devices", local, nil, []string{"mode: local", "limit = Bd, unknown", "limit         unknown"}},
		{"stragglers", mustRead(t, example), []string{"--monitoring", writeFile(t, "m.csv",
			"node,operation,bytesPerSecond\nio-1,write,10.4e9\nio-2,write,10.2e9\nio-3,write,7.1e9\nio-4,write,10.3e9\nio-5,write,7.3e9\n")},
			[]string{"STAGE 4 MONITORING", "Stragglers: node io-3", "Stragglers: node io-5", "straggler"}},
		{"exceeds limit", mustRead(t, example), []string{"--sweep", writeFile(t, "x.csv",
			"nodes,processesPerNode,operation,bytesPerSecond\n64,64,write,70e9\n8,8,read,40e9\n")},
			[]string{"ExceedsLimit: 1 of 1 write measurements", "NOT VALID"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeFile(t, "in.yaml", tc.content)
			code, out, errOut := runCLI(t, "", append([]string{"estimate", "-f", f}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
	// Standard input.
	code, out, errOut := runCLI(t, bare, "estimate", "-f", "-", "-o", "json")
	if code != 0 || !strings.Contains(out, `"limitBytesPerSecond": 60606060606`) {
		t.Errorf("stdin: exit %d %s %s", code, errOut, out)
	}
}

func TestEstimateInvalid(t *testing.T) {
	good := mustRead(t, example)
	for _, tc := range []struct {
		name    string
		content string // the -f file; "" means the example
		args    []string
		want    string
	}{
		{"unknown encoding", strings.Replace(good, "encoding: 64b/66b}\n    servers", "encoding: 64b/65b}\n    servers", 1), nil,
			`unknown link encoding "64b/65b"`},
		{"zero nodes", strings.Replace(good, "nodes: 64", "nodes: 0", 1), nil, "clients.nodes must be at least 1"},
		{"bad quantity", strings.Replace(good, `"100G"`, `"100 Gbit"`, 1), nil, `spec.hardware.clients.link.rateBitsPerSecond: "100 Gbit" is not a quantity`},
		{"unknown field", strings.Replace(good, "rateBitsPerSecond", "rateBitPerSecond", 1), nil, `unknown field`},
		{"other kind", "apiVersion: v1\nkind: Pod\n", nil, "kind is Pod"},
		{"other version", strings.Replace(good, "v1alpha1", "v1", 1), nil, "apiVersion is beeburst.io/v1"},
		{"empty file", "# nothing\n", nil, "empty"},
		{"not a mapping", "- a\n- b\n", nil, "YAML mapping"},
		{"malformed YAML", "clients: [\n", nil, "YAML"},
		{"malformed CSV", good, []string{"--sweep", "CSV:nodes,processesPerNode,operation,bytesPerSecond\n1,1,write\n"}, "wrong number of fields"},
		{"CSV header", good, []string{"--sweep", "CSV:m,n,op,bw\n"}, "header must be"},
		{"missing sweep file", good, []string{"--sweep", "/nonexistent/sweep.csv"}, "no such file"},
		{"bad output", good, []string{"-o", "xml"}, `--output must be one of table, wide, json, yaml`},
		{"bad jsonpath", good, []string{"-o", "jsonpath={.write"}, "--output jsonpath={.write: error parsing jsonpath {.write, unclosed action"},
		{"plot without sweep", good, []string{"--plot", "x.png"}, "--plot draws a sweep: give it with --sweep CSV"},
		{"plot format", good, []string{"--sweep", sweep, "--plot", "x.pdf"}, "x.pdf: cannot draw .pdf; the plot's file name must end in .png or .svg"},
		{"plot of a bad sweep", good, []string{"--sweep", "CSV:nodes,processesPerNode,operation,bytesPerSecond\n1,1,write,1e30\n", "--plot", "x.svg"},
			"faster than any real hardware"},
		{"unknown flag", good, []string{"--nope"}, "unknown flag"},
		{"bad percent", good, []string{"--straggler-percent", "0"}, "--straggler-percent"},
		{"positional argument", good, []string{"extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := writeFile(t, "in.yaml", tc.content)
			args := []string{"estimate", "-f", f}
			for _, a := range tc.args {
				if csv, ok := strings.CutPrefix(a, "CSV:"); ok {
					a = writeFile(t, "s.csv", csv)
				}
				args = append(args, a)
			}
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stdout %s", code, out)
			}
			if !strings.Contains(errOut, tc.want) || !strings.HasPrefix(errOut, "error: ") {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.want)
			}
		})
	}
	if code, _, errOut := runCLI(t, "", "estimate"); code != 2 || !strings.Contains(errOut, `"filename" not set`) {
		t.Errorf("no -f: exit %d %q", code, errOut)
	}
	if code, _, _ := runCLI(t, "", "bogus"); code != 2 {
		t.Errorf("unknown command: exit %d", code)
	}
	if code, _, _ := runCLI(t, "", "estimate", "-f", "/nonexistent.yaml"); code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
}

// decodeInput reads files from users: any bytes give an input or an error, never a panic.
func FuzzDecodeInput(f *testing.F) {
	data, err := os.ReadFile(example)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(data),
		"clients: {nodes: 2, link: {rateBitsPerSecond: 1G}}\nservers: {nodes: 1, link: {rateBitsPerSecond: 1G, encoding: 8b/10b}}\n",
		"hardware:\n  colocated: true\n  servers: {nodes: 3}\n",
		"apiVersion: beeburst.io/v1alpha1\nkind: BurstBuffer\nspec: {engine: local, nodes: {count: 2}}\n",
		"---\n---\nkind: BurstBuffer\n",
		"a: &a [*a]\n",
		"{\"clients\": {\"nodes\": 1e99}}",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := decodeInput(data)
		if err != nil {
			return
		}
		// Whatever decoded must go through the engine without panicking, too.
		_, _, _ = hardwareFromInput(in)
	})
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
