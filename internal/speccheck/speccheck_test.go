package speccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/beeburst/beeburst/api/v1alpha1"
)

func TestHostPathAndSystemDirs(t *testing.T) {
	for _, tc := range []struct {
		path   string
		ok     bool
		system bool
	}{
		{"/mnt/nvme", true, false},
		{"/var/lib/beeburst", true, false},
		{"/scratch/a-b_c.d+e@f", true, false},
		{"/", false, false},
		{"", false, false},
		{"mnt/nvme", false, false},
		{"/mnt/nvme/", false, false},
		{"/mnt//nvme", false, false},
		{"/mnt/./nvme", false, false},
		{"/mnt/../etc", false, false},
		{"/mnt/..", false, false},
		{"/mnt/nv me", false, false},
		{"/mnt/nvme\n", false, false},
		{"/mnt/$(reboot)", false, false},
		{"/mnt/..x", true, false}, // a name that starts with dots is a name
		{"/etc", true, true},
		{"/etc/beeburst", true, true},
		{"/etcetera", true, false},
		{"/home/alice", true, true},
		{"/var", true, true},
		{"/var/lib", true, true},
		{"/var/lib/kubelet/pods", true, true},
		{"/var/libx", true, false},
		{"/run/beeburst", true, true},
		{"/lib64", true, true},
	} {
		err := HostPath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("HostPath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if got := IsSystemPath(tc.path); got != tc.system {
			t.Errorf("IsSystemPath(%q) = %v, want %v", tc.path, got, tc.system)
		}
	}
}

func TestRoots(t *testing.T) {
	roots, err := ParseRoots(DefaultRoots)
	if err != nil || roots.String() != DefaultRoots {
		t.Fatalf("%v %v", roots, err)
	}
	for p, want := range map[string]bool{
		"/mnt": true, "/mnt/nvme": true, "/mnt/disks/ssd0": true, "/var/lib/beeburst/x": true, "/scratch": true,
		"/mntx": false, "/tmp/x": false, "/opt/nvme": false, "/var/lib": false, "/data": false,
	} {
		if got := roots.Allow(p); got != want {
			t.Errorf("Allow(%q) = %v, want %v", p, got, want)
		}
	}
	if r, err := ParseRoots(" /data , /mnt/fast ,"); err != nil || r.String() != "/data,/mnt/fast" || !r.Allow("/data/x") || r.Allow("/mnt/other") {
		t.Errorf("%v %v", r, err)
	}
	if r, err := ParseRoots(""); err != nil || len(r) != 0 || r.Allow("/mnt") {
		t.Errorf("an empty list allows nothing: %v %v", r, err)
	}
	for _, bad := range []string{"/etc", "/mnt,/", "relative", "/home/x", "/mnt/", "/var"} {
		if _, err := ParseRoots(bad); err == nil {
			t.Errorf("ParseRoots(%q) accepted", bad)
		}
	}
}

func TestInterface(t *testing.T) {
	for name, ok := range map[string]bool{
		"eth0": true, "ib0": true, "enp0s31f6": true, "eth0.100": true, "br-1a2b3c4d5e6f": true, "flannel.1": true,
		"": false, ".": false, "..": false, "eth/0": false, "eth0:1": false, "eth0,eth1": false, "eth0#": false,
		"ib0 eth0": false, "eth0\n": false, "sixteen-chars-xx": false, "fifteen-chars-x": true, "ethé": false,
	} {
		if err := Interface(name); (err == nil) != ok {
			t.Errorf("Interface(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

func TestSpec(t *testing.T) {
	good := func() *v1alpha1.BurstBuffer {
		return &v1alpha1.BurstBuffer{Spec: v1alpha1.BurstBufferSpec{
			Storage:    v1alpha1.StorageSpec{Path: "/mnt/nvme"},
			Workload:   v1alpha1.WorkloadSpec{MountPath: "/mnt/beeburst"},
			Validation: v1alpha1.ValidationSpec{TimeBudget: "10m", ReuseComponentResultsFor: "0s"},
			Teardown:   v1alpha1.TeardownSpec{TTL: "1h30m"},
			StageIn: []v1alpha1.StageSpec{{Path: "in", PersistentVolumeClaim: v1alpha1.PVCSource{ClaimName: "data", Path: "run-1"}},
				{Path: ".", S3: &v1alpha1.S3Source{URL: "s3://bucket/x y", Endpoint: "https://minio:9000", Region: "eu-1", CredentialsSecret: "keys"}}},
			BeeGFS: &v1alpha1.BeeGFSSpec{Interfaces: []string{"ib0", "eth0"},
				Images: &v1alpha1.BeeGFSImages{Metadata: "ghcr.io/thinkparq/beegfs-meta:8.2", Client: v1alpha1.ImageReference("localhost:5000/tools@sha256:" + strings.Repeat("a", 64))}},
		}}
	}
	if errs := Spec(good()); len(errs) > 0 {
		t.Fatalf("a good spec refused: %v", errs.ToAggregate())
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1alpha1.BurstBuffer)
		field  string
	}{
		{"time budget forever", func(b *v1alpha1.BurstBuffer) { b.Spec.Validation.TimeBudget = "forever" }, "spec.validation.timeBudget"},
		{"time budget of two days", func(b *v1alpha1.BurstBuffer) { b.Spec.Validation.TimeBudget = "48h" }, "spec.validation.timeBudget"},
		{"reuse yesterday", func(b *v1alpha1.BurstBuffer) { b.Spec.Validation.ReuseComponentResultsFor = "yesterday" }, "spec.validation.reuseComponentResultsFor"},
		{"negative ttl", func(b *v1alpha1.BurstBuffer) { b.Spec.Teardown.TTL = "-5m" }, "spec.teardown.ttl"},
		{"zero ttl", func(b *v1alpha1.BurstBuffer) { b.Spec.Teardown.TTL = "0s" }, "spec.teardown.ttl"},
		{"ttl with a sign", func(b *v1alpha1.BurstBuffer) { b.Spec.Teardown.TTL = "+5m" }, "spec.teardown.ttl"},
		{"system storage path", func(b *v1alpha1.BurstBuffer) { b.Spec.Storage.Path = "/etc" }, "spec.storage.path"},
		{"storage path with a newline", func(b *v1alpha1.BurstBuffer) { b.Spec.Storage.Path = "/mnt/x\ny" }, "spec.storage.path"},
		{"mount path with ..", func(b *v1alpha1.BurstBuffer) { b.Spec.Workload.MountPath = "/mnt/../proc" }, "spec.workload.mountPath"},
		{"node selector with a bad operator", func(b *v1alpha1.BurstBuffer) {
			b.Spec.Nodes.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}, "spec.nodes.selector"},
		{"workload selector with a bad value", func(b *v1alpha1.BurstBuffer) {
			b.Spec.Workload.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a b"}}
		}, "spec.workload.selector"},
		{"stage path with a newline", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[0].Path = "in\nx" }, "spec.stageIn[0].path"},
		{"claim name", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[0].PersistentVolumeClaim.ClaimName = "Data_1" }, "spec.stageIn[0].persistentVolumeClaim.claimName"},
		{"claim path that climbs", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[0].PersistentVolumeClaim.Path = "../x" }, "spec.stageIn[0].persistentVolumeClaim.path"},
		{"s3 url with a query", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[1].S3.URL = "s3://bucket/x?endpoint=evil" }, "spec.stageIn[1].s3.url"},
		{"s3 endpoint with credentials", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[1].S3.Endpoint = "http://key:secret@minio" }, "spec.stageIn[1].s3.endpoint"},
		{"s3 region", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[1].S3.Region = "eu central" }, "spec.stageIn[1].s3.region"},
		{"secret name", func(b *v1alpha1.BurstBuffer) { b.Spec.StageIn[1].S3.CredentialsSecret = "Keys" }, "spec.stageIn[1].s3.credentialsSecret"},
		{"interface injecting a config line", func(b *v1alpha1.BurstBuffer) { b.Spec.BeeGFS.Interfaces[1] = "eth0\nconnAuthFile=/dev/null" }, "spec.beegfs.interfaces[1]"},
		{"licence Secret name", func(b *v1alpha1.BurstBuffer) { b.Spec.BeeGFS.LicenseSecret = "../lic" }, "spec.beegfs.licenseSecret"},
		{"image with a shell", func(b *v1alpha1.BurstBuffer) { b.Spec.BeeGFS.Images.Storage = "x; rm -rf /" }, "spec.beegfs.images.storage"},
	} {
		b := good()
		tc.mutate(b)
		errs := Spec(b)
		if len(errs) != 1 || errs[0].Field != tc.field {
			t.Errorf("%s: %v, want one error on %s", tc.name, errs.ToAggregate(), tc.field)
		}
	}
}

// TestRulesMatchTheCRD keeps the Go rules and the CRD's CEL rules the same: every pattern and
// system directory here must appear in the generated CRD.
func TestRulesMatchTheCRD(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "beeburst.io_burstbuffers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	var rules []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["rule"].(string); ok {
				rules = append(rules, r)
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(crd)
	all := strings.Join(rules, "\n")
	for _, p := range []string{HostPathPattern, DotSegmentPattern, DurationPattern, ImagePattern, InterfacePattern, InterfaceForbidden} {
		if !strings.Contains(all, "'"+p+"'") {
			t.Errorf("pattern %s is in no CEL rule of the CRD", p)
		}
	}
	for _, f := range durationFields(&v1alpha1.BurstBuffer{}) {
		if bound := fmt.Sprintf("duration('%gh')", f.max.Hours()); !strings.Contains(all, bound) {
			t.Errorf("%s: the bound %s is in no CEL rule of the CRD", f.path, bound)
		}
	}
	var storageRule string
	for _, r := range rules {
		if strings.Contains(r, "'/etc'") {
			storageRule = r
		}
	}
	for _, d := range append(append([]string{}, SystemDirs...), SystemParents...) {
		if !strings.Contains(storageRule, "'"+d+"'") {
			t.Errorf("system directory %s is not in the CRD's storage.path rule %q", d, storageRule)
		}
	}
}
