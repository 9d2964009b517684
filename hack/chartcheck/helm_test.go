package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// helmBin is the helm of `make helm-lint` (hack/check-chart.sh sets HELM); without it the
// tests that render the chart skip.
func helmBin(t *testing.T) string {
	t.Helper()
	h := os.Getenv("HELM")
	if h == "" {
		t.Skip("HELM is not set: `make helm-lint` runs these tests with the pinned helm")
	}
	if _, err := exec.LookPath(h); err != nil {
		t.Fatalf("HELM=%s: %v", h, err)
	}
	return h
}

func helmTemplate(t *testing.T, release string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBin(t), append([]string{"template", release, "../../charts/beeburst", "--namespace", "hpc-system"}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Every refusal of a value says what is allowed, in helm's own words: no bare "'not' failed",
// "'oneOf' failed" or regular expression.
func TestSchemaRefusalsSayWhatIsAllowed(t *testing.T) {
	for _, c := range []struct {
		set  string
		want string
	}{
		{"storage.allowedRoots={/etc}", "never a system directory"},
		{"storage.allowedRoots={/var}", "nor /var or /var/lib"},
		{"storage.allowedRoots={/mnt/../etc}", `without "." or ".." segments`},
		{"storage.allowedRoots={mnt}", "an absolute path"},
		{"replicas=2,leaderElect=false", "more than one replica needs leader election"},
		{"replicas=9", "maximum"},
		{"image.pullPolicy=Sometimes", "'Always', 'IfNotPresent', 'Never'"},
		{"image.repository=Foo/Bar", "an image repository without tag or digest"},
		{"image.tag=-x", "an image tag"},
		{"agentImage=Foo:bar", "an image reference"},
		{"resources.limits.memory=lots", "a Kubernetes quantity"},
		{"resources.requests.c p u=1", "a resource name"},
		{"imagePullSecrets={regcred}", "--set imagePullSecrets[0].name=regcred"},
		{"imagePullSecrets[0].name=Reg_Cred", "the name of a Secret"},
		{"nameOverride=Big", "a DNS label"},
		{"fullnameOverride=a_b", "a DNS label"},
		{"priorityClassName=High", "the name of a PriorityClass"},
		{"podAnnotations.a/b/c=x", "a key of the form [prefix/]name"},
		{"nodeSelector.a/b/c=x", "a key of the form [prefix/]name"},
		{"affinity.nodeAfinity.x=y", "additional properties 'nodeAfinity' not allowed"},
		{"tolerations[0].operator=Is", "'Equal', 'Exists'"},
		{"metrics.serviceMonitor.interval=30x", "a duration of whole units"},
		{"metrics.serviceMonitor.labels.release=a b", "a label value"},
		{"metrics.grafanaDashboard.namespace=Mon", "a namespace name"},
		{"imagePullSecret[0].name=x", "additional properties 'imagePullSecret' not allowed"},
		{"storageClass.name=Fast_SSD", "the name of a StorageClass"},
		{"extraArgs={slow-visit-log=1s}", "a flag of the manager"},
	} {
		out, err := helmTemplate(t, "beeburst", "--set", c.set)
		if err == nil {
			t.Errorf("--set %s: accepted", c.set)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("--set %s: the refusal does not say %q:\n%s", c.set, c.want, out)
		}
		for _, bare := range []string{"'not' failed", "'oneOf' failed", "'allOf' failed", "'anyOf' failed", "does not match pattern"} {
			if strings.Contains(out, bare) {
				t.Errorf("--set %s: the refusal says %s, not what is allowed:\n%s", c.set, bare, out)
			}
		}
	}
}

// The values for the operator's pod land in its Deployment; the name overrides rename every
// object (the cluster-scoped ones too) and keep the references between them.
func TestChartValuesReachTheManagerPod(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte(`
fullnameOverride: hpc-bb
image: {repository: registry.example.com/hpc/beeburst-manager, tag: v9.9.9}
imagePullSecrets: [{name: regcred}]
podAnnotations: {example.com/owner: hpc-team}
priorityClassName: system-cluster-critical
extraArgs: [--slow-visit-log=500ms]
nodeSelector: {node-role.kubernetes.io/control-plane: ""}
tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/component: manager}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := helmTemplate(t, "anything", "-f", values, "--set", "metrics.grafanaDashboard.enabled=true")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	objs := index(split([]byte(out)))
	for _, k := range []string{"ServiceAccount/hpc-bb-manager", "ClusterRole/hpc-bb-manager", "ClusterRoleBinding/hpc-bb-manager",
		"Role/hpc-bb-manager", "RoleBinding/hpc-bb-manager", "Deployment/hpc-bb-manager", "Service/hpc-bb-manager-metrics",
		"ConfigMap/hpc-bb-grafana-dashboard"} {
		if objs[k] == nil {
			t.Errorf("%s: not rendered (have %v)", k, keys(objs))
		}
	}
	for _, b := range []string{"ClusterRoleBinding/hpc-bb-manager", "RoleBinding/hpc-bb-manager"} {
		if o := objs[b]; o != nil && (dig(o, "roleRef.name") != "hpc-bb-manager" || dig(o, "subjects.0.name") != "hpc-bb-manager") {
			t.Errorf("%s binds %v to %v", b, dig(o, "roleRef.name"), dig(o, "subjects.0.name"))
		}
	}
	d := objs["Deployment/hpc-bb-manager"]
	if d == nil {
		return
	}
	pod := "spec.template.spec."
	for path, want := range map[string]any{
		pod + "imagePullSecrets.0.name":                                "regcred",
		pod + "priorityClassName":                                      "system-cluster-critical",
		pod + "serviceAccountName":                                     "hpc-bb-manager",
		pod + "nodeSelector.node-role\\.kubernetes\\.io/control-plane": "",
		pod + "tolerations.0.operator":                                 "Exists",
		pod + "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.0.weight": float64(100),
		"spec.template.metadata.annotations.example\\.com/owner":                                  "hpc-team",
		pod + "containers.0.image": "registry.example.com/hpc/beeburst-manager:v9.9.9",
		// The agent of the same release: agentImage empty, the operator's tag.
		pod + "containers.0.args.1": "--agent-image=ghcr.io/beeburst/agent:v9.9.9",
		// extraArgs after the chart's own.
		pod + "containers.0.args.4": "--slow-visit-log=500ms",
	} {
		if got := dig(d, path); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", path, got, want)
		}
	}
	svc := objs["Service/hpc-bb-manager-metrics"]
	if svc != nil && !reflect.DeepEqual(dig(svc, "spec.selector"), dig(d, "spec.selector.matchLabels")) {
		t.Errorf("the metrics Service selects %v, the manager's pods are %v", dig(svc, "spec.selector"), dig(d, "spec.selector.matchLabels"))
	}
}

// Without tags the images are the chart's appVersion: a packaged release runs its own images.
func TestChartImagesDefaultToAppVersion(t *testing.T) {
	out, err := helmTemplate(t, "beeburst")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	chart, err := os.ReadFile("../../charts/beeburst/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var app string
	for _, line := range strings.Split(string(chart), "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			app = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	d := index(split([]byte(out)))["Deployment/beeburst-manager"]
	if d == nil {
		t.Fatalf("no Deployment/beeburst-manager in:\n%s", out)
	}
	if got, want := dig(d, "spec.template.spec.containers.0.image"), "ghcr.io/beeburst/manager:"+app; got != want {
		t.Errorf("image %v, want %s", got, want)
	}
	if got, want := dig(d, "spec.template.spec.containers.0.args.1"), "--agent-image=ghcr.io/beeburst/agent:"+app; got != want {
		t.Errorf("agent %v, want %s", got, want)
	}
}

func keys(m map[string]obj) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// NOTES.txt, which helm template does not render, rendered through a copy of the chart that
// carries it in a ConfigMap: it names the objects of this release and warns about what cannot
// work.
func TestNotesNameTheReleaseAndWarn(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "beeburst")
	if out, err := exec.Command("cp", "-r", "../../charts/beeburst", chart).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	notes, err := os.ReadFile(filepath.Join(chart, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chart, "notes.txt"), notes, 0o600); err != nil {
		t.Fatal(err)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: |\n{{ tpl (.Files.Get \"notes.txt\") . | indent 4 }}\n"
	if err := os.WriteFile(filepath.Join(chart, "templates", "notes-cm.yaml"), []byte(cm), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(helmBin(t), "template", "hpc", chart, "-n", "hpc-system", "--show-only", "templates/notes-cm.yaml",
		"--set", "fullnameOverride=hpc-bb", "--set", "storage.allowedRoots=null", "--set", "image.tag=v9.9.9").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"rollout status deployment/hpc-bb-manager",
		"operator image ghcr.io/beeburst/manager:v9.9.9, agent ghcr.io/beeburst/agent:v9.9.9",
		"WARNING: storage.allowedRoots is empty",
		"kubectl wait bb/scratch --for=condition=Ready",
		"helm uninstall hpc -n hpc-system",
		"beeburst-crds.yaml",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("NOTES.txt does not say %q:\n%s", want, out)
		}
	}
}
