package nodecache

import (
	"reflect"
	"testing"
	"time"
)

func TestRoundTripAndFreshness(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	alone := &Conditions{StartTime: now.Add(-11 * time.Minute), Exclusive: true, Lock: "beeburst-measure-worker-1"}
	f := Figures{Node: "worker-1", StoragePath: "/mnt/nvme", MeasuredTime: now.Add(-10 * time.Minute),
		DeviceWriteBytesPerSecond: 300e6, DeviceReadBytesPerSecond: 400e6, Conditions: alone}
	cm, err := ConfigMap("beeburst-system", f)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "beeburst-node-worker-1" || cm.Namespace != "beeburst-system" {
		t.Fatalf("name %s/%s", cm.Namespace, cm.Name)
	}
	got, err := Read(cm)
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, tc := range []struct {
		name   string
		path   string
		maxAge time.Duration
		f      Figures
		want   bool
	}{
		{"young, same path", "/mnt/nvme", time.Hour, f, true},
		{"too old", "/mnt/nvme", 5 * time.Minute, f, false},
		{"other drive", "/mnt/other", time.Hour, f, false},
		{"reuse off", "/mnt/nvme", 0, f, false},
		{"incomplete", "/mnt/nvme", time.Hour, Figures{StoragePath: "/mnt/nvme", MeasuredTime: now, DeviceWriteBytesPerSecond: 1, Conditions: alone}, false},
		{"from the future", "/mnt/nvme", time.Hour, Figures{StoragePath: "/mnt/nvme", MeasuredTime: now.Add(time.Hour), DeviceWriteBytesPerSecond: 1, DeviceReadBytesPerSecond: 1, Conditions: alone}, false},
		{"no conditions recorded (an older operator's entry)", "/mnt/nvme", time.Hour, withConditions(f, nil), false},
		{"without the node's lock", "/mnt/nvme", time.Hour, withConditions(f, &Conditions{Exclusive: false}), false},
		{"beside another burst buffer's pods", "/mnt/nvme", time.Hour, withConditions(f, &Conditions{Exclusive: true, OtherPods: []string{"hpc/other-clean-0"}}), false},
	} {
		if got := tc.f.Fresh(tc.path, tc.maxAge, now); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
	delete(cm.Data, Key)
	if _, err := Read(cm); err == nil {
		t.Error("a ConfigMap without figures must be an error")
	}
}

func withConditions(f Figures, c *Conditions) Figures {
	f.Conditions = c
	return f
}
