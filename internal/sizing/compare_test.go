package sizing

import (
	"strings"
	"testing"

	"github.com/beeburst/beeburst/internal/limits"
)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     CompareInput
		msg    string
		ratios []int32 // per mille, -1 for none
	}{
		{
			name: "faster for writes, about as fast for reads",
			in: CompareInput{With: "claim results", BurstBuffer: map[limits.Operation]float64{limits.Write: 3.4e9, limits.Read: 2e9},
				Other: map[limits.Operation]float64{limits.Write: 1e9, limits.Read: 1.95e9}},
			msg: "the burst buffer is 3.4x faster than claim results for large sequential writes (3.4 GB/s against 1 GB/s); " +
				"the burst buffer is about as fast as claim results for large sequential reads (2 GB/s against 1.95 GB/s, within 10%)",
			ratios: []int32{3400, 1026},
		},
		{
			name: "slower, and twelve times",
			in: CompareInput{With: "the node-local disk /scratch", Pattern: PatternSharedFile,
				BurstBuffer: map[limits.Operation]float64{limits.Write: 1e9, limits.Read: 12e9},
				Other:       map[limits.Operation]float64{limits.Write: 2.1e9, limits.Read: 1e9}},
			msg: "the burst buffer is 2.1x slower than the node-local disk /scratch for shared-file writes (1 GB/s against 2.1 GB/s); " +
				"the burst buffer is 12x faster than the node-local disk /scratch for shared-file reads",
			ratios: []int32{476, 12000},
		},
		{
			name: "not measured on one side",
			in: CompareInput{With: "claim x", BurstBuffer: map[limits.Operation]float64{limits.Write: 1e9},
				Other: map[limits.Operation]float64{limits.Read: 1e9}},
			msg:    "large sequential writes: not measured on claim x; large sequential reads: not measured on the burst buffer",
			ratios: []int32{-1, -1},
		},
		{name: "nothing", in: CompareInput{With: "claim x"}, msg: "nothing measured to compare with claim x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.in)
			if !strings.Contains(c.Message, tc.msg) {
				t.Errorf("message %q\nlacks   %q", c.Message, tc.msg)
			}
			if len(c.Operations) != len(tc.ratios) {
				t.Fatalf("operations %+v", c.Operations)
			}
			for i, want := range tc.ratios {
				got := c.Operations[i].RatioPerMille()
				if (want < 0) != (got == nil) || (got != nil && *got != want) {
					t.Errorf("operation %d ratio %v, want %d", i, got, want)
				}
			}
		})
	}
}
