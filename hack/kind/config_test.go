// Package kind keeps hack/kind/config.yaml correct where kind itself cannot run (no Docker):
// the file is decoded strictly into kind's own v1alpha4 types.
package kind

import (
	"os"
	"regexp"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"
)

func TestConfigDecodesStrictlyAsKindV1alpha4(t *testing.T) {
	b, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := decode(t, "hack/kind/config.yaml", b)
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

// create.sh appends config-netns.yaml to config.yaml on hack/docker.sh's engine.
func TestConfigWithNetnsEngineFieldsDecodesStrictly(t *testing.T) {
	base, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra, err := os.ReadFile("config-netns.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := decode(t, "config.yaml + config-netns.yaml", append(base, extra...))
	if len(c.Nodes) != 3 {
		t.Errorf("nodes: %d, want config.yaml's 3", len(c.Nodes))
	}
	if !c.Networking.DisableDefaultCNI || c.Networking.APIServerAddress == "" || c.Networking.APIServerPort == 0 {
		t.Errorf("networking: %+v", c.Networking)
	}
	// The API server is published at hack/docker.sh's address inside its network namespace.
	sh, err := os.ReadFile("../docker.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`NS_IP=(\S+)`).FindSubmatch(sh)
	if m == nil || string(m[1]) != c.Networking.APIServerAddress {
		t.Errorf("apiServerAddress %q is not hack/docker.sh's NS_IP (%q)", c.Networking.APIServerAddress, m)
	}
	if len(c.ContainerdConfigPatches) == 0 || len(c.KubeadmConfigPatches) == 0 {
		t.Errorf("containerd and kubeadm patches missing")
	}
}

func decode(t *testing.T, what string, b []byte) v1alpha4.Cluster {
	t.Helper()
	var c v1alpha4.Cluster
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		t.Fatalf("%s is not a valid kind v1alpha4 Cluster: %v", what, err)
	}
	return c
}
