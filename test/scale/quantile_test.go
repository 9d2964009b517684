package main

import (
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

// classic is a histogram of classic buckets: bounds and the cumulative counts at each.
func classic(bounds []float64, counts []uint64) *dto.Histogram {
	h := &dto.Histogram{SampleCount: proto.Uint64(counts[len(counts)-1])}
	for i, b := range bounds {
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(counts[i])})
	}
	return h
}

// quantile and shareWithin read a histogram the same way, one the inverse of the other.
func TestQuantileAndShareWithin(t *testing.T) {
	// 50 visits up to 100 ms, 40 more up to 250 ms, the last 10 up to 1 s.
	h := classic([]float64{0.1, 0.25, 1, math.Inf(1)}, []uint64{50, 90, 100, 100})
	for _, c := range []struct{ q, want float64 }{{0.5, 0.1}, {0.9, 0.25}, {0.95, 0.625}} {
		if got := quantile(h, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	for _, c := range []struct{ x, want float64 }{{0.25, 0.9}, {0.1, 0.5}, {0.625, 0.95}, {5, 1}} {
		if got := shareWithin(h, c.x); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("shareWithin(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if !math.IsNaN(shareWithin(&dto.Histogram{}, 0.25)) {
		t.Error("an empty histogram has no share")
	}
}
