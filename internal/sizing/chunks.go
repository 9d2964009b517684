package sizing

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"

	"github.com/beeburst/beeburst/internal/limits"
)

// Pattern is how the job's processes do their I/O. The strings are the API's
// (v1alpha1.WorkloadPattern); empty is LargeSequential.
type Pattern string

// Patterns.
const (
	PatternLargeSequential Pattern = "LargeSequential"
	PatternSharedFile      Pattern = "SharedFile"
	PatternSmallRandom     Pattern = "SmallRandom"
)

// Measure is a figure a chunk-size run measures.
type Measure string

// Measures: bandwidths in bytes per second, random operations per second.
const (
	MeasureWrite     Measure = "write"
	MeasureRead      Measure = "read"
	MeasureRandWrite Measure = "randwrite"
	MeasureRandRead  Measure = "randread"
)

// Chunk sizes BeeGFS accepts, as the API does (layout.chunkSize): powers of two from 64 KiB
// to 512 MiB.
const (
	MinChunkSize = 64 << 10
	MaxChunkSize = 512 << 20
)

// ChunkTie is the share a chunk size must beat the baseline by, and may lose on no figure by
// more: about the noise of a short run. Inside it the baseline (layout.chunkSize) stays.
const ChunkTie = 0.05

// MaxChunkSizes is the most sizes a plan measures, the baseline included.
const MaxChunkSizes = 4

func (p Pattern) orDefault() Pattern {
	if p == "" {
		return PatternLargeSequential
	}
	return p
}

// Measures are what a run of the pattern measures: bandwidths for the sequential patterns,
// operations per second for small random I/O.
func (p Pattern) Measures() []Measure {
	if p.orDefault() == PatternSmallRandom {
		return []Measure{MeasureRandWrite, MeasureRandRead}
	}
	return []Measure{MeasureWrite, MeasureRead}
}

// describe is "large sequential" etc., for sentences.
func (p Pattern) describe() string {
	switch p.orDefault() {
	case PatternSharedFile:
		return "shared-file"
	case PatternSmallRandom:
		return "small random"
	}
	return "large sequential"
}

// ChunkPlanInput is what a chunk-size plan depends on.
type ChunkPlanInput struct {
	Pattern Pattern
	// Baseline is layout.chunkSize, measured first and kept on a tie.
	Baseline int64
	// BlockSize is the runs' transfer size for the sequential patterns (the sweep's
	// blockSize); 0 is 1 MiB.
	BlockSize int64
	// Budget is the time the tuning may take; PerRun how long one size's run takes, all its
	// measures and the pods' start included.
	Budget time.Duration
	PerRun time.Duration
}

// ChunkPlan is which chunk sizes to measure, in order.
type ChunkPlan struct {
	Pattern  Pattern   `json:"pattern"`
	Sizes    []int64   `json:"sizes"`
	Measures []Measure `json:"measures"`
	// Estimated is len(Sizes) x PerRun.
	Estimated time.Duration `json:"estimated"`
	// Skipped: the budget allows fewer than two runs, so there is nothing to compare; the
	// baseline stays.
	Skipped bool   `json:"skipped,omitempty"`
	Reason  string `json:"reason"`
}

// candidates are the sizes a pattern favours, most promising first, before the budget cuts
// them:
//   - large sequential (N-N): at least the transfer size, so that a request touches as few
//     chunks (and requests to storage servers) as possible: 4x, 1x and 16x the block size;
//   - shared file (N-1): the block size itself first (each transfer is one chunk on one
//     target, and no two processes write one chunk), then 4x (fewer chunk switches), then a
//     quarter (each transfer spread over several targets);
//   - small random: small chunks, 64 KiB first (random requests spread over the stripe at a
//     fine grain, little read-modify-write), then 1 MiB and 256 KiB.
func candidates(p Pattern, block int64) []int64 {
	switch p.orDefault() {
	case PatternSharedFile:
		return []int64{block, 4 * block, block / 4}
	case PatternSmallRandom:
		return []int64{64 << 10, 1 << 20, 256 << 10}
	}
	return []int64{4 * block, block, 16 * block}
}

// ValidChunkSize says whether s is a chunk size BeeGFS takes.
func ValidChunkSize(s int64) bool {
	return s >= MinChunkSize && s <= MaxChunkSize && bits.OnesCount64(uint64(s)) == 1
}

// clampChunk rounds s down to a power of two within the allowed sizes.
func clampChunk(s int64) int64 {
	switch {
	case s < MinChunkSize:
		return MinChunkSize
	case s > MaxChunkSize:
		return MaxChunkSize
	}
	return int64(1) << (63 - bits.LeadingZeros64(uint64(s)))
}

// PlanChunkSizes chooses which chunk sizes to measure for the pattern: the baseline first,
// then the sizes the pattern favours, as many as the budget allows (at most MaxChunkSizes in
// all). With room for fewer than two runs the plan is skipped: one size cannot be compared.
func PlanChunkSizes(in ChunkPlanInput) (ChunkPlan, error) {
	switch in.Pattern {
	case "", PatternLargeSequential, PatternSharedFile, PatternSmallRandom:
	default:
		return ChunkPlan{}, fmt.Errorf("unknown workload pattern %q: LargeSequential, SharedFile or SmallRandom", in.Pattern)
	}
	if !ValidChunkSize(in.Baseline) {
		return ChunkPlan{}, fmt.Errorf("baseline chunk size %d is not a power of two from 64Ki to 512Mi", in.Baseline)
	}
	if in.PerRun <= 0 || in.Budget < 0 {
		return ChunkPlan{}, errors.New("a run's duration must be positive and the budget not negative")
	}
	block := in.BlockSize
	if block <= 0 {
		block = 1 << 20
	}
	plan := ChunkPlan{Pattern: in.Pattern.orDefault(), Measures: in.Pattern.Measures(), Sizes: []int64{in.Baseline}}
	runs := int(min(int64(in.Budget/in.PerRun), MaxChunkSizes))
	if runs < 2 {
		plan.Skipped = true
		plan.Estimated = 0
		plan.Reason = fmt.Sprintf("the budget of %s allows %s of %s, and one size cannot be compared: layout.chunkSize %s stays",
			formatDuration(in.Budget), plural(runs, "run"), formatDuration(in.PerRun), FormatChunk(in.Baseline))
		return plan, nil
	}
	// Every size the pattern favours, then as many as the budget allows: the ones it leaves
	// out are named, so that a user knows what a larger budget would have measured.
	all := []int64{in.Baseline}
	for _, c := range candidates(in.Pattern, block) {
		if c = clampChunk(c); !contains(all, c) {
			all = append(all, c)
		}
	}
	plan.Sizes = all[:min(runs, len(all))]
	plan.Estimated = time.Duration(len(plan.Sizes)) * in.PerRun
	var sizes, left []string
	for _, s := range plan.Sizes[1:] {
		sizes = append(sizes, FormatChunk(s))
	}
	for _, s := range all[len(plan.Sizes):] {
		left = append(left, FormatChunk(s))
	}
	plan.Reason = fmt.Sprintf("%s for %s I/O against layout.chunkSize %s: %s of %s each, %s of the %s budget",
		strings.Join(sizes, ", "), plan.Pattern.describe(), FormatChunk(in.Baseline), plural(len(plan.Sizes), "run"),
		formatDuration(in.PerRun), formatDuration(plan.Estimated), formatDuration(in.Budget))
	if len(left) > 0 {
		plan.Reason += fmt.Sprintf("; the budget leaves out %s", strings.Join(left, ", "))
	}
	return plan, nil
}

func contains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// FormatChunk is a chunk size as the API writes it: "512Ki", "4Mi".
func FormatChunk(s int64) string {
	switch {
	case s >= 1<<30 && s%(1<<30) == 0:
		return fmt.Sprintf("%dGi", s>>30)
	case s >= 1<<20 && s%(1<<20) == 0:
		return fmt.Sprintf("%dMi", s>>20)
	case s >= 1<<10 && s%(1<<10) == 0:
		return fmt.Sprintf("%dKi", s>>10)
	}
	return fmt.Sprintf("%d", s)
}

// ChunkResult is one chunk size's run.
type ChunkResult struct {
	Size int64 `json:"size"`
	// Figures by measure; a missing measure was not measured.
	Figures map[Measure]float64 `json:"figures"`
	// Failed says why the run gave no figures.
	Failed string `json:"failed,omitempty"`
}

// ChunkScore is one size as ranked.
type ChunkScore struct {
	Size    int64               `json:"size"`
	Figures map[Measure]float64 `json:"figures,omitempty"`
	// Score is the geometric mean of the figures over the baseline's; NaN (null) when the
	// size was not ranked.
	Score  float64 `json:"-"`
	Chosen bool    `json:"chosen,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// ScorePerMille is Score in thousandths for the API, 0 when not ranked.
func (s ChunkScore) ScorePerMille() int32 {
	if math.IsNaN(s.Score) || s.Score <= 0 {
		return 0
	}
	return int32(math.Min(math.Round(s.Score*1000), math.MaxInt32))
}

// ChunkChoice is the chunk size kept and the figures that chose it.
type ChunkChoice struct {
	Size    int64        `json:"size"`
	Pattern Pattern      `json:"pattern"`
	Scores  []ChunkScore `json:"scores"`
	Message string       `json:"message"`
}

// ChooseChunkSize keeps the best measured chunk size for the plan's pattern. Each size is
// scored against the baseline (layout.chunkSize): the geometric mean of its figures over the
// baseline's, so that write and read count alike. A size replaces the baseline only when it
// scores more than ChunkTie above it and loses more than ChunkTie on no figure; among those
// the highest score wins (ties: the size nearer the baseline, then the smaller). A size whose
// run failed, misses a figure, or measured above limits (a limit per measure, optional:
// caching suspected) is not ranked. Without the baseline's figures nothing can be compared
// and the baseline stays.
func ChooseChunkSize(plan ChunkPlan, results []ChunkResult, limits map[Measure]float64) ChunkChoice {
	base := plan.Sizes[0]
	choice := ChunkChoice{Size: base, Pattern: plan.Pattern}
	byS := map[int64]ChunkResult{}
	for _, r := range results {
		byS[r.Size] = r
	}
	usable := func(r ChunkResult, ok bool) string {
		switch {
		case !ok:
			return "not measured"
		case r.Failed != "":
			return "run failed: " + r.Failed
		}
		for _, m := range plan.Measures {
			v, has := r.Figures[m]
			if !has || !(v > 0) || math.IsInf(v, 0) {
				return "no " + string(m) + " figure"
			}
			if l, has := limits[m]; has && l > 0 && v > l*(1+ChunkTie) {
				return fmt.Sprintf("%s %s above its limit %s (caching suspected)", m, formatMeasure(m, v), formatMeasure(m, l))
			}
		}
		return ""
	}
	br, ok := byS[base]
	baseNote := usable(br, ok)
	for _, s := range plan.Sizes {
		r, ok := byS[s]
		cs := ChunkScore{Size: s, Figures: r.Figures, Score: math.NaN(), Note: usable(r, ok)}
		if cs.Note == "" && baseNote == "" {
			cs.Score = 1
			for _, m := range plan.Measures {
				cs.Score *= r.Figures[m] / br.Figures[m]
			}
			cs.Score = math.Pow(cs.Score, 1/float64(len(plan.Measures)))
		}
		choice.Scores = append(choice.Scores, cs)
	}
	if baseNote != "" {
		choice.Scores[0].Chosen = true
		choice.Message = fmt.Sprintf("layout.chunkSize %s stays: its own run gave nothing to compare with (%s)", FormatChunk(base), baseNote)
		return choice
	}
	best := -1
	for i, cs := range choice.Scores[1:] {
		i++
		if math.IsNaN(cs.Score) || cs.Score < 1+ChunkTie {
			continue
		}
		if worst := worstRatio(plan, cs, br); worst < 1-ChunkTie {
			choice.Scores[i].Note = fmt.Sprintf("score %.2f, but loses more than %.0f%% on %s", cs.Score, ChunkTie*100, worst2(plan, cs, br))
			continue
		}
		if best < 0 || cs.Score > choice.Scores[best].Score*(1+1e-9) ||
			(math.Abs(cs.Score-choice.Scores[best].Score) <= choice.Scores[best].Score*1e-9 && nearer(cs.Size, choice.Scores[best].Size, base)) {
			best = i
		}
	}
	if best < 0 {
		choice.Scores[0].Chosen = true
		choice.Message = fmt.Sprintf("layout.chunkSize %s stays: no other size beat it by more than %.0f%% for %s I/O without losing more than %.0f%% on a figure (%s)",
			FormatChunk(base), ChunkTie*100, plan.Pattern.describe(), ChunkTie*100, scoresText(choice.Scores[1:]))
		return choice
	}
	choice.Scores[best].Chosen = true
	w := choice.Scores[best]
	choice.Size = w.Size
	var per []string
	for _, m := range plan.Measures {
		per = append(per, fmt.Sprintf("%s %s", m, percent(w.Figures[m]/br.Figures[m])))
	}
	choice.Message = fmt.Sprintf("%s chosen for %s I/O: %s over layout.chunkSize %s (score %.2f; others: %s)", FormatChunk(w.Size),
		plan.Pattern.describe(), strings.Join(per, ", "), FormatChunk(base), w.Score, scoresText(others(choice.Scores, best)))
	return choice
}

func worstRatio(plan ChunkPlan, cs ChunkScore, br ChunkResult) float64 {
	w := math.Inf(1)
	for _, m := range plan.Measures {
		w = math.Min(w, cs.Figures[m]/br.Figures[m])
	}
	return w
}

func worst2(plan ChunkPlan, cs ChunkScore, br ChunkResult) string {
	var parts []string
	for _, m := range plan.Measures {
		if r := cs.Figures[m] / br.Figures[m]; r < 1-ChunkTie {
			parts = append(parts, fmt.Sprintf("%s (%s)", m, percent(r)))
		}
	}
	return strings.Join(parts, ", ")
}

// nearer says whether a is nearer the baseline than b (in powers of two), or as near and
// smaller.
func nearer(a, b, base int64) bool {
	da := math.Abs(math.Log2(float64(a) / float64(base)))
	db := math.Abs(math.Log2(float64(b) / float64(base)))
	if da != db {
		return da < db
	}
	return a < b
}

func others(s []ChunkScore, skip int) []ChunkScore {
	var out []ChunkScore
	for i, c := range s {
		if i != skip {
			out = append(out, c)
		}
	}
	return out
}

func scoresText(s []ChunkScore) string {
	var parts []string
	for _, c := range s {
		switch {
		case !math.IsNaN(c.Score) && c.Note == "":
			parts = append(parts, fmt.Sprintf("%s %.2f", FormatChunk(c.Size), c.Score))
		case !math.IsNaN(c.Score):
			parts = append(parts, fmt.Sprintf("%s %s", FormatChunk(c.Size), c.Note))
		default:
			parts = append(parts, fmt.Sprintf("%s not ranked: %s", FormatChunk(c.Size), c.Note))
		}
	}
	return strings.Join(parts, ", ")
}

func formatMeasure(m Measure, v float64) string {
	if m == MeasureRandWrite || m == MeasureRandRead {
		return formatCount(v) + " IOPS"
	}
	return limits.FormatBytesPerSecond(v)
}
