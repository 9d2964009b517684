// Command chartcheck compares the objects `helm template --include-crds` renders from
// charts/beeburst with their sources in config/, field by field where they must agree: the
// CRD, RBAC rules, and the manager's security settings, ports and probes. It exits non-zero
// and names the difference when the chart drifted.
//
//	helm template beeburst charts/beeburst --include-crds | go run ./hack/chartcheck config
//
// With -monitoring the chart must have been rendered with metrics.serviceMonitor and
// metrics.grafanaDashboard enabled: the ServiceMonitor is compared with
// config/prometheus/monitor.yaml and the dashboard's JSON must parse. Without it they must be
// absent (both are off by default).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"
)

type obj = map[string]any

func main() {
	monitoring := flag.Bool("monitoring", false, "the chart was rendered with the ServiceMonitor and the Grafana dashboard enabled")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: helm template ... | chartcheck [-monitoring] CONFIG_DIR")
		os.Exit(2)
	}
	rendered, err := io.ReadAll(os.Stdin)
	must(err)
	chart := index(split(rendered))
	var source []obj
	for _, dir := range []string{"crd/bases", "rbac", "manager", "prometheus", "storageclass"} {
		files, _ := filepath.Glob(filepath.Join(flag.Arg(0), dir, "*.yaml"))
		for _, f := range files {
			if strings.HasSuffix(f, "kustomization.yaml") {
				continue
			}
			b, err := os.ReadFile(f)
			must(err)
			source = append(source, split(b)...)
		}
	}
	cfg := index(source)

	var problems []string
	check := func(key string, paths ...string) {
		c, s := chart[key], cfg[key]
		if c == nil || s == nil {
			problems = append(problems, fmt.Sprintf("%s: in chart=%v, in config=%v", key, c != nil, s != nil))
			return
		}
		for _, p := range paths {
			if a, b := dig(c, p), dig(s, p); !reflect.DeepEqual(a, b) {
				problems = append(problems, fmt.Sprintf("%s %s differs:\n  chart:  %v\n  config: %v", key, p, a, b))
			}
		}
	}
	check("CustomResourceDefinition/burstbuffers.beeburst.io", "spec")
	check("ClusterRole/beeburst-manager", "rules")
	check("Role/beeburst-manager", "rules")
	check("RoleBinding/beeburst-manager", "roleRef", "subjects.0.name")
	check("ServiceAccount/beeburst-manager", "metadata.name")
	check("ClusterRoleBinding/beeburst-manager", "roleRef")
	check("Deployment/beeburst-manager",
		"spec.selector", "spec.template.spec.securityContext", "spec.template.spec.serviceAccountName",
		"spec.template.spec.containers.0.securityContext", "spec.template.spec.containers.0.ports",
		"spec.template.spec.containers.0.livenessProbe", "spec.template.spec.containers.0.readinessProbe",
		"spec.template.spec.containers.0.args", "spec.template.spec.containers.0.image", "spec.template.spec.containers.0.env")
	check("StorageClass/beeburst", "provisioner", "reclaimPolicy", "volumeBindingMode")
	check("ClusterRole/beeburst-edit", "rules", "metadata.labels.rbac\\.authorization\\.k8s\\.io/aggregate-to-edit")
	check("ClusterRole/beeburst-view", "rules", "metadata.labels.rbac\\.authorization\\.k8s\\.io/aggregate-to-view")
	check("Service/beeburst-manager-metrics", "spec", "metadata.labels.app\\.kubernetes\\.io/component")
	const monitor, dashboard = "ServiceMonitor/beeburst-manager", "ConfigMap/beeburst-grafana-dashboard"
	if *monitoring {
		check(monitor, "spec", "metadata.labels.app\\.kubernetes\\.io/component")
		if cm := chart[dashboard]; cm == nil {
			problems = append(problems, dashboard+": not rendered")
		} else if d, _ := dig(cm, "data.beeburst\\.json").(string); !json.Valid([]byte(d)) || len(d) < 100 {
			problems = append(problems, dashboard+": data beeburst.json is not a dashboard's JSON")
		} else if dig(cm, "metadata.labels.grafana_dashboard") != "1" {
			problems = append(problems, dashboard+": no label grafana_dashboard=1 (kube-prometheus-stack's sidecar looks for it)")
		}
	} else {
		for _, k := range []string{monitor, dashboard} {
			if chart[k] != nil {
				problems = append(problems, k+": rendered with the default values, but it is off by default")
			}
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(os.Stderr, "chartcheck: charts/beeburst drifted from config/:")
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, " -", p)
		}
		os.Exit(1)
	}
	fmt.Printf("chartcheck: chart agrees with config/ (%d objects compared)\n", len(chart))
}

func split(b []byte) []obj {
	var out []obj
	for _, doc := range bytes.Split(b, []byte("\n---")) {
		var o obj
		if err := yaml.Unmarshal(doc, &o); err == nil && o != nil && o["kind"] != nil {
			out = append(out, o)
		}
	}
	return out
}

func index(objs []obj) map[string]obj {
	m := map[string]obj{}
	for _, o := range objs {
		m[fmt.Sprintf("%v/%v", o["kind"], dig(o, "metadata.name"))] = o
	}
	return m
}

// dig walks a dotted path; numeric parts index lists; "\\." is a dot inside a key.
func dig(o any, path string) any {
	parts := strings.Split(strings.ReplaceAll(path, `\.`, "\x00"), ".")
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "\x00", ".")
	}
	for _, p := range parts {
		switch v := o.(type) {
		case map[string]any:
			o = v[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i >= len(v) {
				return nil
			}
			o = v[i]
		default:
			return nil
		}
	}
	return o
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "chartcheck:", err)
		os.Exit(2)
	}
}
