// Package kind keeps hack/kind/config.yaml correct where kind itself cannot run (no Docker):
// the file is decoded strictly into kind's own v1alpha4 types.
package kind

import (
	"os"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

func TestConfigDecodesStrictlyAsKindV1alpha4(t *testing.T) {
	b, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c v1alpha4.Cluster
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		t.Fatalf("hack/kind/config.yaml is not a valid kind v1alpha4 Cluster: %v", err)
	}
	if c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
		t.Fatalf("kind/apiVersion: %s %s", c.Kind, c.APIVersion)
	}
	workers := 0
	for _, n := range c.Nodes {
		if n.Role != v1alpha4.WorkerRole {
			continue
		}
		workers++
		found := false
		for _, m := range n.ExtraMounts {
			found = found || m.ContainerPath == "/mnt/nvme"
		}
		if !found {
			t.Errorf("worker %d has no extra mount at /mnt/nvme (the default spec.storage.path)", workers)
		}
	}
	if workers < 2 {
		t.Errorf("want at least 2 workers for multi-node burst buffers, got %d", workers)
	}
}
