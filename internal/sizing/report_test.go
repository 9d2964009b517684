package sizing

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/beeburst/beeburst/internal/golden"
	"github.com/beeburst/beeburst/internal/limits"
)

// The printed decisions, as `kubectl beeburst estimate --target` shows them.
func TestWriteDecision(t *testing.T) {
	mixed := []Candidate{
		{Name: "worker-1", Tier: 0, Workload: true, DeviceWrite: []Evidence{{Value: 150e6, Source: SourceLabel}, measured(151e6, 20*time.Minute)}},
		{Name: "worker-2", Tier: 0, Workload: true, DeviceWrite: []Evidence{{Value: 150e6, Source: SourceLabel}, measured(140e6, 30*time.Hour)}},
		{Name: "worker-3", Tier: 2, DeviceWrite: ev(150e6, SourceLabel)},
		{Name: "worker-4", Tier: 2, DeviceWrite: ev(150e6, SourceLabel)},
	}
	for _, tc := range []struct {
		file string
		req  Request
		v    *AssessInput
	}{
		{"decision-met.txt", Request{Target: Target{Write: 400e6, Margin: 0.1}, Candidates: mixed, Local: true, FreshFor: time.Hour}, nil},
		{"decision-unreachable.txt", Request{Target: Target{Write: 1e9, Margin: 0.1}, Candidates: testbed(2), Local: true}, nil},
		{"decision-network.txt", Request{Target: Target{Write: 20e9, Read: 40e9, Margin: 0.1}, Fabric: limits.Fabric{Bisection: limits.Bytes(12.5e9)},
			Candidates: func() []Candidate {
				var cs []Candidate
				for i := range 40 {
					cs = append(cs, node("n"+string(rune('a'+i%26))+string(rune('a'+i/26)), 3e9, 6e9, 3.125e9))
				}
				return cs
			}()}, nil},
		{"decision-verdict.txt", Request{Target: Target{Write: 1e9, Margin: 0.1}, Candidates: testbed(2), Count: 2, Local: true},
			&AssessInput{Target: Target{Write: 1e9, Margin: 0.1}, Hardware: scratchHW(), Points: scratchSweep(), Tolerance: 0.05}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tc.req.Now = now
			d, err := Plan(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteDecision(&b, "BurstBuffer test: sizing", d, now); err != nil {
				t.Fatal(err)
			}
			if tc.v != nil {
				v, err := Assess(*tc.v)
				if err != nil {
					t.Fatal(err)
				}
				if err := WriteVerdict(&b, v); err != nil {
					t.Fatal(err)
				}
			}
			for _, line := range strings.Split(b.String(), "\n") {
				if len(line) > 110 {
					t.Errorf("line longer than 110 characters: %q", line)
				}
			}
			golden.Assert(t, tc.file, b.Bytes())
		})
	}
}
