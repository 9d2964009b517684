package nodecache

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestStore(t *testing.T) {
	ctx := context.Background()
	garbage := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: Name("bad")},
		Data: map[string]string{Key: "{"}}
	s := Store{Client: fake.NewClientBuilder().WithObjects(garbage).Build(), Namespace: "ns"}
	if _, ok := s.Get(ctx, "n1"); ok {
		t.Fatal("an absent entry was found")
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if err := s.Update(ctx, "n1", func(f *Figures) { f.StoragePath = "/mnt/nvme"; f.MeasuredTime = now; f.DeviceWriteBytesPerSecond = 5 }); err != nil {
		t.Fatal(err)
	}
	// A second writer keeps what the first wrote.
	if err := s.Update(ctx, "n1", func(f *Figures) { f.Metadata = &MetadataFigure{CreatesPerSecondPerServer: 7, Servers: 1} }); err != nil {
		t.Fatal(err)
	}
	f, ok := s.Get(ctx, "n1")
	if !ok || f.Node != "n1" || f.DeviceWriteBytesPerSecond != 5 || f.Metadata == nil || f.Metadata.CreatesPerSecondPerServer != 7 {
		t.Fatalf("got %+v %v", f, ok)
	}
	// An entry that cannot be read is not found, and replaced on the next write.
	if _, ok := s.Get(ctx, "bad"); ok {
		t.Fatal("an unreadable entry was found")
	}
	if err := s.Update(ctx, "bad", func(f *Figures) { f.NetworkBytesPerSecond = 3 }); err != nil {
		t.Fatal(err)
	}
	if f, ok := s.Get(ctx, "bad"); !ok || f.NetworkBytesPerSecond != 3 || f.Node != "bad" {
		t.Fatalf("replaced entry %+v %v", f, ok)
	}
	var cm corev1.ConfigMap
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: "ns", Name: Name("n1")}, &cm); err != nil {
		t.Fatal(err)
	}
}
