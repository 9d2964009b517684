package sweepcache

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func measured() *v1alpha1.BurstBuffer {
	bb := &v1alpha1.BurstBuffer{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"}}
	bb.Spec.Engine = v1alpha1.EngineLocal
	bb.Spec.Storage.Path = "/mnt/nvme"
	bb.Spec.Validation.Profile = v1alpha1.ProfileQuick
	capacity := resource.MustParse("7Gi")
	bb.Status = v1alpha1.BurstBufferStatus{
		Nodes:    []v1alpha1.NodeStatus{{Name: "n2", Hardware: &v1alpha1.NodeHardware{}}, {Name: "n1"}},
		Capacity: &capacity,
		Limits: &v1alpha1.LimitsStatus{
			Components: &v1alpha1.ComponentLimits{Write: &v1alpha1.OperationLimit{LimitBytesPerSecond: 300e6}},
			Sweep: &v1alpha1.SweepLimits{ConfigMapName: "a-sweep",
				Write: &v1alpha1.SweepResult{BestBytesPerSecond: 299e6}, Read: &v1alpha1.SweepResult{BestBytesPerSecond: 598e6}},
		},
		Warnings: []v1alpha1.Warning{{Reason: v1alpha1.WarningBelowDocumented, Message: "slow"}},
	}
	return bb
}

func TestKeyIsTheConfiguration(t *testing.T) {
	a := measured()
	b := measured()
	b.Namespace, b.Name = "other", "b"
	b.Spec.Target = &v1alpha1.TargetSpec{}
	if Key(a, []string{"n1", "n2"}) != Key(b, []string{"n2", "n1"}) {
		t.Error("the same nodes (in any order, local engine) and configuration must have the same key, whatever the name or target")
	}
	g := measured()
	g.Spec.Engine = v1alpha1.EngineBeeGFS
	if Key(g, []string{"n1", "n2"}) == Key(g, []string{"n2", "n1"}) {
		t.Error("beegfs: the nodes' order places the services; another order must have another key")
	}
	for name, change := range map[string]func(*v1alpha1.BurstBuffer){
		"storage path": func(bb *v1alpha1.BurstBuffer) { bb.Spec.Storage.Path = "/scratch" },
		"engine":       func(bb *v1alpha1.BurstBuffer) { bb.Spec.Engine = v1alpha1.EngineBeeGFS },
		"layout":       func(bb *v1alpha1.BurstBuffer) { bb.Spec.Layout.StorageTargetsPerNode = 2 },
		"grid": func(bb *v1alpha1.BurstBuffer) {
			bb.Spec.Validation.Sweep = &v1alpha1.SweepSpec{ProcessesPerNode: []int32{8}}
		},
		"hardware": func(bb *v1alpha1.BurstBuffer) { bb.Spec.Hardware = &v1alpha1.HardwareSpec{} },
		"BeeGFS release": func(bb *v1alpha1.BurstBuffer) {
			bb.Spec.BeeGFS = &v1alpha1.BeeGFSSpec{Images: &v1alpha1.BeeGFSImages{Storage: "beegfs/beegfs-storage:8.0.0"}}
		},
		"efficiency threshold": func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.MinimumEfficiencyPercent = 95 },
		"straggler threshold":  func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.StragglerPercent = 5 },
	} {
		c := measured()
		change(c)
		if Key(a, []string{"n1", "n2"}) == Key(c, []string{"n1", "n2"}) {
			t.Errorf("a different %s must have another key", name)
		}
	}
	if Key(a, []string{"n1", "n2"}) == Key(a, []string{"n1", "n3"}) {
		t.Error("other nodes must have another key")
	}
}

func TestEligibleAndKeepable(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name   string
		change func(*v1alpha1.BurstBuffer)
		maxAge time.Duration
		want   string
	}{
		{"quick", func(*v1alpha1.BurstBuffer) {}, time.Hour, ""},
		{"switched off", func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.ReuseSweep = &off }, time.Hour, "reuseSweep is false"},
		{"no window", func(*v1alpha1.BurstBuffer) {}, 0, "0s"},
		{"standard", func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.Profile = v1alpha1.ProfileStandard }, time.Hour, "quick profile"},
		{"chunk tuning", func(bb *v1alpha1.BurstBuffer) { bb.Spec.Layout.ChunkSizePolicy = v1alpha1.ChunkSizeAuto }, time.Hour, "Auto"},
		{"comparison", func(bb *v1alpha1.BurstBuffer) { bb.Spec.Validation.CompareWith = &v1alpha1.CompareWithSpec{} }, time.Hour, "compareWith"},
	} {
		bb := measured()
		tc.change(bb)
		if got := Eligible(bb, tc.maxAge); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Eligible = %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*v1alpha1.BurstBuffer)
		want   string
	}{
		{"clean", func(*v1alpha1.BurstBuffer) {}, ""},
		{"cut short", func(bb *v1alpha1.BurstBuffer) { bb.Status.Limits.Sweep.CutShort = true }, "cut the sweep short"},
		{"busy", func(bb *v1alpha1.BurstBuffer) {
			bb.Status.Warnings = append(bb.Status.Warnings, v1alpha1.Warning{Reason: v1alpha1.WarningNodeBusy})
		}, "NodeBusy"},
		{"above a limit", func(bb *v1alpha1.BurstBuffer) {
			bb.Status.Warnings = append(bb.Status.Warnings, v1alpha1.Warning{Reason: v1alpha1.WarningExceedsLimit})
		}, "ExceedsLimit"},
		{"no read limit", func(bb *v1alpha1.BurstBuffer) { bb.Status.Limits.Sweep.Read = nil }, "no valid limit"},
		{"reused itself", func(bb *v1alpha1.BurstBuffer) { bb.Status.Limits.Sweep.ReusedFrom = &v1alpha1.ReusedFrom{} }, "reused"},
	} {
		bb := measured()
		tc.change(bb)
		if got := Keepable(bb); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Keepable = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRecordRoundTripAndFreshness(t *testing.T) {
	bb := measured()
	now := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	rec := New(bb, []string{"n1", "n2"}, "nodes,processesPerNode,operation,bytesPerSecond\n2,1,write,299000000\n", now)
	if rec.Sweep.ConfigMapName != "" || bb.Status.Limits.Sweep.ConfigMapName != "a-sweep" {
		t.Error("the record names no ConfigMap of its source, and leaves the source's status alone")
	}
	if rec.MeasuredBy != "team/a" || rec.Hardware["n2"] == nil || rec.Capacity.String() != "7Gi" || len(rec.Warnings) != 1 {
		t.Errorf("record %+v", rec)
	}
	cm, err := ConfigMap("beeburst-system", rec)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != Name(rec.Key) || cm.Namespace != "beeburst-system" || cm.Labels["app.kubernetes.io/component"] != Component {
		t.Errorf("ConfigMap %s/%s %v", cm.Namespace, cm.Name, cm.Labels)
	}
	back, err := FromConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	if back.Sweep.Write.BestBytesPerSecond != 299e6 || back.SweepCSV != rec.SweepCSV {
		t.Errorf("round trip lost figures: %+v", back)
	}
	key := Key(bb, []string{"n1", "n2"})
	for _, tc := range []struct {
		at   time.Time
		key  string
		want bool
	}{
		{now.Add(59 * time.Minute), key, true},
		{now.Add(61 * time.Minute), key, false},
		{now.Add(time.Minute), "other", false},
		{now.Add(-2 * time.Minute), key, false}, // from the future: a clock gone wrong
	} {
		if got := back.Fresh(tc.key, time.Hour, tc.at); got != tc.want {
			t.Errorf("Fresh(%s, %s) = %v", tc.key, tc.at.Sub(now), got)
		}
	}
	// A node's component figures older than the validation (reused from the per-node cache)
	// count with their own age.
	older := metav1.NewTime(now.Add(-50 * time.Minute))
	back.Components.Nodes = []v1alpha1.NodeComponents{{Name: "n1", MeasuredTime: &older, Reused: true}}
	if back.Fresh(key, time.Hour, now.Add(9*time.Minute)) != true || back.Fresh(key, time.Hour, now.Add(11*time.Minute)) != false {
		t.Error("a record whose node figures are older than the window must not stand, one within it must")
	}
	if _, err := FromConfigMap(cm.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	cm.Data = nil
	if _, err := FromConfigMap(cm); err == nil {
		t.Error("a ConfigMap without the record must not read")
	}
	if s := back.Describe(now.Add(90 * time.Second)); !strings.Contains(s, "team/a") || !strings.Contains(s, "1m30s ago") {
		t.Errorf("Describe: %s", s)
	}
}

// A record goes once no burst buffer may reuse it: older than the longest reuse window the
// API admits; an unreadable one once its object is that old.
func TestExpired(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(age time.Duration) *corev1.ConfigMap {
		cm, err := ConfigMap("ops", New(measured(), []string{"n1", "n2"}, "", now.Add(-age)))
		if err != nil {
			t.Fatal(err)
		}
		return cm
	}
	if Expired(at(MaxAge-time.Minute), now) {
		t.Error("a record that a 168h window may still reuse expired")
	}
	if !Expired(at(MaxAge+time.Minute), now) {
		t.Error("a record older than 168h kept")
	}
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Data: map[string]string{dataKey: "{not json"}}
	if Expired(bad, now) {
		t.Error("an unreadable record of an hour ago expired: a newer release may read it")
	}
	bad.CreationTimestamp = metav1.NewTime(now.Add(-MaxAge - time.Hour))
	if !Expired(bad, now) {
		t.Error("an unreadable record older than 168h kept")
	}
}
