package apibridge

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func TestRoundsLines(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC))
	l := &v1alpha1.LimitsStatus{
		Components: &v1alpha1.ComponentLimits{ReusedFrom: &v1alpha1.ReusedFrom{BurstBuffer: "team/a", MeasuredTime: at}, DeviceProbeRound: 2},
		Sweep: &v1alpha1.SweepLimits{Remeasured: []v1alpha1.RemeasuredPoint{{
			Point: v1alpha1.SweepPoint{Nodes: 2, ProcessesPerNode: 4}, Reason: v1alpha1.RemeasureFarBelowLimit,
			Rounds: []v1alpha1.PointRound{{WriteBytesPerSecond: 233554000, ReadBytesPerSecond: 590e6, DisturbedBy: []string{"x"}}, {WriteBytesPerSecond: 299e6, ReadBytesPerSecond: 598e6}},
		}}},
	}
	got := strings.Join(RoundsLines(l), "\n")
	for _, want := range []string{
		"stage 2 reused from team/a (validated 2026-11-26 17:00:00 UTC)",
		"devices measured twice",
		"stage 3 point 2 x 4 measured 2 times (FarBelowLimit): round 1 write 233.554 MB/s read 590 MB/s (disturbed); round 2 write 299 MB/s read 598 MB/s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lines\n%s\nlack %q", got, want)
		}
	}
	if len(RoundsLines(&v1alpha1.LimitsStatus{})) != 0 {
		t.Error("nothing to say about figures measured once")
	}
}
