package limits

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseSweepCSV(t *testing.T) {
	ok := []struct {
		name string
		in   string
		want []Point
	}{
		{"plain", "nodes,processesPerNode,operation,bytesPerSecond\n1,2,write,905600000\n2,1,read,1.5e9\n",
			[]Point{{1, 2, Write, 905600000}, {2, 1, Read, 1.5e9}}},
		{"reordered, spaced, commented, BOM, CRLF, case",
			"\ufeff# a comment\r\noperation, bytesPerSecond, Nodes, processesPerNode\r\n\r\nWRITE, 10, 4, 8\r\n",
			[]Point{{4, 8, Write, 10}}},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSweepCSV(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("point %d = %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
	const hdr = "nodes,processesPerNode,operation,bytesPerSecond\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "empty file"},
		{"header only", hdr, "no measured points"},
		{"wrong header", "nodes,ppn,op,bw\n1,1,write,1\n", "header must be"},
		{"missing column", "nodes,processesPerNode,operation\n1,1,write\n", "header must be"},
		{"duplicate column", "nodes,nodes,operation,bytesPerSecond\n", "header must be"},
		{"short row", hdr + "1,1,write\n", "wrong number of fields"},
		{"long row", hdr + "1,1,write,1,2\n", "wrong number of fields"},
		{"zero nodes", hdr + "0,1,write,1\n", "line 2: nodes"},
		{"fractional nodes", hdr + "1.5,1,write,1\n", "not a whole number"},
		{"zero processes", hdr + "1,0,write,1\n", "processesPerNode"},
		{"operation", hdr + "1,1,append,1\n", "unknown operation"},
		{"units", hdr + "1,1,write,50G\n", "no units"},
		{"negative", hdr + "1,1,write,-1\n", "non-negative"},
		{"NaN", hdr + "1,1,write,NaN\n", "plain number"},
		{"Inf", hdr + "1,1,write,1e999\n", "out of range"},
		{"absurd", hdr + "1,1,write,1e300\n", "line 2: bytesPerSecond: 1e+300 bytes/s is more than 100 PB/s (1e+17 bytes/s)"},
		{"hex", hdr + "1,1,write,0x10\n", "plain number"},
		{"empty value", hdr + "1,1,write,\n", "empty"},
		{"bare quote", hdr + "1,1,wr\"ite,1\n", "bare \""},
		{"line number", hdr + "1,1,write,1\n# c\n2,1,write,x\n", "line 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSweepCSV(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseMonitoringCSV(t *testing.T) {
	got, err := ParseMonitoringCSV(strings.NewReader("node,operation,bytesPerSecond\nio-1,write,10400000000\nio-2,read,1e9\n"))
	if err != nil || len(got) != 2 || got[0].Node != "io-1" || got[0].BytesPerSecond.Value() != 10.4e9 || got[1].Operation != Read {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, in := range []string{"", "node,operation\n", "node,operation,bytesPerSecond\n", "node,operation,bytesPerSecond\n,write,1\n",
		"node,operation,bytesPerSecond\na,write,x\n", "node,operation,bytesPerSecond\na,write,1e29\n", "node,operation,bytesPerSecond\na\x1b[2J,write,1\n"} {
		if _, err := ParseMonitoringCSV(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

// The parsers take files from users: whatever the bytes, they return points that pass
// validation or an error, and never panic.
func FuzzParseEncoding(f *testing.F) {
	for _, s := range []string{"8b/10b", "64b/66b", "128b/130b", "256b/257b", "none", "", "64B/66B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEncoding(s)
		if err != nil {
			return
		}
		eff, err := e.Efficiency()
		if err != nil || !(eff > 0 && eff <= 1) || string(e) != s {
			t.Errorf("ParseEncoding(%q) = %q with efficiency %g, %v", s, e, eff, err)
		}
	})
}

func TestReport(t *testing.T) {
	h, lim := mustCompute(t, omnipath())
	// Stage 2: the servers' links measured 10% under their datasheet.
	h2 := h
	h2.Servers = append([]ServerNode(nil), h.Servers...)
	for i := range h2.Servers {
		h2.Servers[i].Link = Bytes(h.Servers[i].Link.Value() * 0.9)
	}
	lim2, err := Compute(h2)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := AnalyzeSweep(h, lim2, []Point{{16, 8, Write, 50e9}, {32, 32, Write, 51e9}}, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := FindStragglers([]NodeFigure{{"io-1", Write, Bytes(10e9)}, {"io-2", Write, Bytes(10e9)}, {"io-3", Write, Bytes(7e9)}}, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	r := Report{
		Title: "BurstBuffer test", Summary: h.Describe(), Estimated: &lim, Components: &lim2, Sweep: &sw,
		ComponentNodes: []NodeComponents{{Node: "io-1", Network: ComponentFigure{Bytes(12.121e9), Bytes(10.909e9)}}},
		Monitoring:     []NodeFigure{{"io-1", Write, Bytes(10e9)}, {"io-2", Write, Bytes(10e9)}, {"io-3", Write, Bytes(7e9)}},
		Stragglers:     &st,
		Warnings:       append(append([]Warning{}, lim.Warnings...), st.Warnings...),
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"WRITE", "STAGE 1 ESTIMATED", "STAGE 2 COMPONENTS", "STAGE 3 SWEEP",
		"servers Bs          60.606 GB/s        54.545 GB/s",
		"51 GB/s at 32 nodes x 32 processes", "0.9350 of 54.545 GB/s",
		"stage 2 formula:", "stage 3: no read points measured",
		"12.121 GB/s -> 10.909 GB/s (-10%)",
		"STAGE 4 MONITORING", "io-3", "-30%", "straggler",
		"Stragglers: node io-3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b, err := json.Marshal(r.Document("test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"limitBytesPerSecond":60606060606`, `"devicesBytesPerSecond":null`, `"efficiency":0.935`,
		`"stragglers":["io-3"]`, `"components":{"mode":"shared"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}
