package sizing

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const (
	ki = int64(1) << 10
	mi = int64(1) << 20
)

func TestPlanChunkSizes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       ChunkPlanInput
		sizes    []int64
		measures []Measure
		skipped  bool
		reason   string
	}{
		{
			name:  "large sequential: larger chunks than the transfer, budget for all",
			in:    ChunkPlanInput{Baseline: 512 * ki, Budget: 150 * time.Second, PerRun: 30 * time.Second},
			sizes: []int64{512 * ki, 4 * mi, 1 * mi, 16 * mi}, measures: []Measure{MeasureWrite, MeasureRead},
			reason: "4Mi, 1Mi, 16Mi for large sequential I/O against layout.chunkSize 512Ki: 4 runs of 30s each, 2m of the 2m30s budget",
		},
		{
			name:   "the budget cuts the list: 2 runs",
			in:     ChunkPlanInput{Pattern: PatternLargeSequential, Baseline: 512 * ki, Budget: 70 * time.Second, PerRun: 30 * time.Second},
			sizes:  []int64{512 * ki, 4 * mi},
			reason: "4Mi for large sequential I/O against layout.chunkSize 512Ki: 2 runs of 30s each, 1m of the 1m10s budget; the budget leaves out 1Mi, 16Mi",
		},
		{
			name:  "no room to compare: skipped, the baseline stays",
			in:    ChunkPlanInput{Baseline: 512 * ki, Budget: 50 * time.Second, PerRun: 30 * time.Second},
			sizes: []int64{512 * ki}, skipped: true,
			reason: "the budget of 50s allows 1 run of 30s, and one size cannot be compared: layout.chunkSize 512Ki stays",
		},
		{
			name:  "shared file: the block size first, the baseline not repeated",
			in:    ChunkPlanInput{Pattern: PatternSharedFile, Baseline: 1 * mi, BlockSize: 1 * mi, Budget: time.Hour, PerRun: time.Minute},
			sizes: []int64{1 * mi, 4 * mi, 256 * ki},
		},
		{
			name:  "small random: small chunks, measured in operations",
			in:    ChunkPlanInput{Pattern: PatternSmallRandom, Baseline: 512 * ki, Budget: time.Hour, PerRun: time.Minute},
			sizes: []int64{512 * ki, 64 * ki, 1 * mi, 256 * ki}, measures: []Measure{MeasureRandWrite, MeasureRandRead},
		},
		{
			name:  "sizes stay within 64Ki..512Mi",
			in:    ChunkPlanInput{Baseline: 512 * ki, BlockSize: 256 * mi, Budget: time.Hour, PerRun: time.Minute},
			sizes: []int64{512 * ki, 512 * mi, 256 * mi},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := PlanChunkSizes(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(p.Sizes, tc.sizes) || p.Skipped != tc.skipped || (tc.measures != nil && !equalM(p.Measures, tc.measures)) {
				t.Errorf("plan %+v, want sizes %v skipped %v measures %v", p, tc.sizes, tc.skipped, tc.measures)
			}
			if tc.reason != "" && p.Reason != tc.reason {
				t.Errorf("reason %q\nwant   %q", p.Reason, tc.reason)
			}
			if !p.Skipped && p.Estimated > tc.in.Budget {
				t.Errorf("estimated %s over the budget %s", p.Estimated, tc.in.Budget)
			}
			for _, s := range p.Sizes {
				if !ValidChunkSize(s) {
					t.Errorf("size %d is not a chunk size", s)
				}
			}
		})
	}
	for _, bad := range []ChunkPlanInput{
		{Baseline: 100 * ki, Budget: time.Hour, PerRun: time.Minute},
		{Baseline: 512 * ki, Budget: time.Hour},
		{Pattern: "Striped", Baseline: 512 * ki, Budget: time.Hour, PerRun: time.Minute},
	} {
		if _, err := PlanChunkSizes(bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalM(a, b []Measure) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func wr(size int64, w, r float64) ChunkResult {
	return ChunkResult{Size: size, Figures: map[Measure]float64{MeasureWrite: w, MeasureRead: r}}
}

func TestChooseChunkSize(t *testing.T) {
	plan := ChunkPlan{Pattern: PatternLargeSequential, Sizes: []int64{512 * ki, 4 * mi, 1 * mi, 16 * mi},
		Measures: []Measure{MeasureWrite, MeasureRead}}
	for _, tc := range []struct {
		name    string
		results []ChunkResult
		limits  map[Measure]float64
		want    int64
		msg     string
	}{
		{
			name:    "a clear winner",
			results: []ChunkResult{wr(512*ki, 1e9, 2e9), wr(4*mi, 1.3e9, 2.2e9), wr(1*mi, 1.1e9, 2.1e9), wr(16*mi, 1.2e9, 2e9)},
			want:    4 * mi, msg: "4Mi chosen for large sequential I/O: write +30%, read +10% over layout.chunkSize 512Ki (score 1.20",
		},
		{
			name:    "within the noise: the baseline stays",
			results: []ChunkResult{wr(512*ki, 1e9, 2e9), wr(4*mi, 1.03e9, 2.04e9), wr(1*mi, 0.99e9, 2e9), wr(16*mi, 1.04e9, 1.98e9)},
			want:    512 * ki, msg: "layout.chunkSize 512Ki stays: no other size beat it by more than 5% for large sequential I/O",
		},
		{
			name:    "faster writes but slower reads do not win",
			results: []ChunkResult{wr(512*ki, 1e9, 2e9), wr(4*mi, 1.5e9, 1.8e9), wr(1*mi, 1e9, 2e9), wr(16*mi, 1e9, 2e9)},
			want:    512 * ki, msg: "4Mi score 1.16, but loses more than 5% on read (-10%)",
		},
		{
			name:    "a failed run and a figure above its limit are not ranked",
			results: []ChunkResult{wr(512*ki, 1e9, 2e9), {Size: 4 * mi, Failed: "pod evicted"}, wr(1*mi, 1.2e9, 2.3e9), wr(16*mi, 5e9, 2.5e9)},
			limits:  map[Measure]float64{MeasureWrite: 2e9, MeasureRead: 3e9},
			want:    1 * mi, msg: "4Mi not ranked: run failed: pod evicted, 16Mi not ranked: write 5 GB/s above its limit 2 GB/s (caching suspected)",
		},
		{
			name:    "no baseline figures: nothing to compare, the baseline stays",
			results: []ChunkResult{{Size: 512 * ki, Failed: "timeout"}, wr(4*mi, 1.5e9, 2.5e9)},
			want:    512 * ki, msg: "its own run gave nothing to compare with (run failed: timeout)",
		},
		{
			name:    "equal scores: the size nearer the baseline",
			results: []ChunkResult{wr(512*ki, 1e9, 2e9), wr(4*mi, 1.2e9, 2.4e9), wr(1*mi, 1.2e9, 2.4e9), wr(16*mi, 1e9, 2e9)},
			want:    1 * mi,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ChooseChunkSize(plan, tc.results, tc.limits)
			if c.Size != tc.want || !strings.Contains(c.Message, tc.msg) {
				t.Errorf("chose %s: %s\nwant %s with %q", FormatChunk(c.Size), c.Message, FormatChunk(tc.want), tc.msg)
			}
			chosen := 0
			for _, s := range c.Scores {
				if s.Chosen {
					chosen++
					if s.Size != c.Size {
						t.Errorf("marked %d chosen, size %d", s.Size, c.Size)
					}
				}
			}
			if chosen != 1 || len(c.Scores) != len(plan.Sizes) {
				t.Errorf("%d chosen among %d scores", chosen, len(c.Scores))
			}
			if _, err := json.Marshal(c); err != nil {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

func TestChooseChunkSizeSmallRandom(t *testing.T) {
	plan := ChunkPlan{Pattern: PatternSmallRandom, Sizes: []int64{512 * ki, 64 * ki}, Measures: PatternSmallRandom.Measures()}
	c := ChooseChunkSize(plan, []ChunkResult{
		{Size: 512 * ki, Figures: map[Measure]float64{MeasureRandWrite: 10000, MeasureRandRead: 20000}},
		{Size: 64 * ki, Figures: map[Measure]float64{MeasureRandWrite: 13000, MeasureRandRead: 21000}},
	}, nil)
	if c.Size != 64*ki || !strings.Contains(c.Message, "64Ki chosen for small random I/O: randwrite +30%, randread +5%") ||
		c.Scores[1].ScorePerMille() != 1168 {
		t.Errorf("%s %d: %s", FormatChunk(c.Size), c.Scores[1].ScorePerMille(), c.Message)
	}
}
