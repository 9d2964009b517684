package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	testbedFile = "../../testdata/sizing/testbed.yaml"
	fabricFile  = "../../testdata/sizing/fabric-capped.yaml"
)

func TestEstimateTarget(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{
			name: "the testbed's 250 MB/s takes both nodes",
			args: []string{"-f", testbedFile, "--target", "250M", "--max-nodes", "2"},
			want: []string{"BurstBuffer scratch (local engine): sizing from the stage-1 model of ../../testdata/sizing/testbed.yaml",
				"decision: 2 nodes (chosen among 2 candidates) - predicted to meet the target",
				"write: 300 MB/s predicted (devices), +20% against 250 MB/s asked", "node-1 .. node-2 (2)  150 MB/s (spec)",
				"2      300 MB/s (devices)  yes, with the 10% margin  <- chosen"},
		},
		{
			name: "1 GB/s cannot be had from two nodes",
			args: []string{"-f", testbedFile, "--target", "1G", "--max-nodes", "2"},
			want: []string{"cannot meet the target (TooFewNodes)", "6 more like node-1 (8 in all)"},
		},
		{
			name: "read only, with a margin of 0",
			args: []string{"-f", testbedFile, "--target", ",600M", "--margin-percent", "0"},
			want: []string{"decision: 2 nodes (chosen among 1024 candidates)", "read: 600 MB/s predicted (devices), 0% against 600 MB/s asked"},
		},
		{
			name: "the manifest's own target",
			args: []string{"-f", fabricFile},
			want: []string{"BurstBuffer fabric-capped (beegfs engine)", "decision: 4 nodes (chosen among 1024 candidates), 1 metadata server",
				"3 nodes would give 9 GB/s write"},
		},
		{
			name: "the fabric caps it",
			args: []string{"-f", fabricFile, "--target", "20G,40G"},
			want: []string{"cannot meet the target (NetworkCaps)", "The network caps it: the fabric's bisection of 12.5 GB/s"},
		},
		{
			name: "the paper's sweep against 55 GB/s",
			args: []string{"-f", example, "--target", "55G", "--sweep", sweep},
			want: []string{"5 nodes (given: checked, not chosen)", "The 5 nodes given meet the target with the 10% margin",
				"VERDICT (stage 3): NotMet", "1 more node like these would meet it: 61.132 GB/s predicted at 6 nodes"},
		},
		{
			name: "capacity with no figure for it",
			args: []string{"-f", testbedFile, "--capacity", "1Ti", "--max-nodes", "3"},
			want: []string{"unknown (UnknownFigures)", "Cannot size: no candidate node has the figures the target needs (node-1 (no capacity figure"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"estimate"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			// Sentences wrap at 100 columns and tables pad: compare with whitespace collapsed.
			flat := strings.Join(strings.Fields(out), " ")
			for _, w := range tc.want {
				if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestEstimateTargetJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "", "estimate", "-f", testbedFile, "--target", "1G", "--max-nodes", "2", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Name   string
		Sizing struct {
			Mode, State, Cause string
			Nodes, MoreNodes   int
			Chosen             []struct {
				Name        string
				DeviceWrite struct {
					Value  int64
					Source string
				}
			}
			Write struct{ PredictedBytesPerSecond, TargetBytesPerSecond int64 }
		}
		Verdict *json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := doc.Sizing
	if doc.Name != "scratch" || s.Mode != "Choose" || s.State != "Unreachable" || s.Cause != "TooFewNodes" || s.Nodes != 2 || s.MoreNodes != 6 ||
		len(s.Chosen) != 2 || s.Chosen[1].DeviceWrite.Value != 150000000 || s.Chosen[1].DeviceWrite.Source != "spec" ||
		s.Write.PredictedBytesPerSecond != 300000000 || s.Write.TargetBytesPerSecond != 1e9 || doc.Verdict != nil {
		t.Errorf("document %+v", doc)
	}

	code, out, _ = runCLI(t, "", "estimate", "-f", fabricFile, "-o", "jsonpath={.sizing.nodes} {.sizing.state}")
	if code != 0 || out != "4 Predicted" {
		t.Errorf("jsonpath: exit %d %q", code, out)
	}
}

func TestEstimateTargetInvalid(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "fast"}, `--target: "fast" is not a positive quantity`},
		{[]string{"--target", "1G,2G,3G"}, "--target must be WRITE[,READ]"},
		{[]string{"--target", ","}, "--target names no bandwidth"},
		{[]string{"--target", "-1G"}, "not a positive quantity"},
		{[]string{"--target", "5P"}, "faster than any real hardware"},
		{[]string{"--target", "1G", "--margin-percent", "200"}, "--margin-percent must be from 0 to 100"},
		{[]string{"--capacity", "lots"}, `--capacity: "lots" is not a positive quantity`},
		{[]string{"--target", "1G", "--max-nodes", "0"}, "must be from 1 to 1024"},
		{[]string{"--target", "1G", "--sweep", "../../testdata/limits/omnipath-sweep.csv"}, "the file must give their count"},
		{[]string{"--target", "1G", "--monitoring", "x.csv"}, "--monitoring is not read when sizing"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"estimate", "-f", testbedFile}, tc.args...)...)
		if code != exitInvalid || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want 2 with %q", tc.args, code, errOut, tc.want)
		}
	}
}
